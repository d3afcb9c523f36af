package share

import (
	"context"
	"testing"
	"time"

	"sharq/log/clock"
)

func newTestManagerWith(t *testing.T, tune func(*Settings)) (*Manager, *memLog, *clock.Fake, *MemPersister) {
	t.Helper()
	lg := &memLog{}
	clock := clock.NewFake(time.Unix(1000, 0))
	per := NewMemPersister()
	m, err := NewManager(Options{
		Persister: per,
		Logs:      memLogs{lg},
		Clock:     clock,
		Settings: func(string) Settings {
			s := Settings{LockDuration: time.Second, DeliveryLimit: 5, AutoOffsetReset: "earliest",
				RenewEnabled: true, MaxSessions: 10, FetchMaxBytes: 1 << 20}
			tune(&s)
			return s
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, lg, clock, per
}

// A released record waits out its redelivery backoff on the Manager's
// clock; the share-partition's one timer fires at the backoff end and wakes
// a parked ShareFetch, which then gets it with delivery count 2.
func TestManagerRedeliveryBackoff(t *testing.T) {
	m, lg, clock, _ := newTestManagerWith(t, func(s *Settings) {
		s.Backoff = Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2}
	})
	lg.append(5)
	var a, b Scratch
	if r := fetchOnce(t, m, &a, "a", 0); len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 4, 1}) {
		t.Fatalf("first acquisition: %+v", r.Acquired)
	}
	if r := fetchOnce(t, m, &a, "a", 1, AckBatch{0, 4, []AckType{AckRelease}}); r.AckCode != 0 || len(r.Acquired) != 0 {
		t.Fatalf("release, then nothing to acquire inside the backoff: %+v", r)
	}
	lg.append(3) // records behind the waiting ones flow
	if r := fetchOnce(t, m, &b, "b", 0); len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{5, 7, 1}) {
		t.Fatalf("b got %+v, want 5-7 only", r.Acquired)
	}
	clock.Advance(99 * time.Millisecond)
	if r := fetchOnce(t, m, &b, "b", 1); len(r.Acquired) != 0 {
		t.Fatalf("acquired 1 ms before the backoff ended: %+v", r.Acquired)
	}
	done := make(chan *PartitionResult, 1)
	go func() {
		req := b.Reset()
		req.Group, req.Member, req.Conn, req.Epoch, req.MaxRecords = "g", "b", "b", 2, 100
		req.MaxWait = time.Hour // only the backoff timer can end it
		res := m.Fetch(context.Background(), &b)
		done <- &res.Partitions[0]
	}()
	clock.Advance(time.Millisecond)
	r := <-done
	if len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 4, 2}) {
		t.Fatalf("after the backoff b got %+v, want 0-4 delivery 2", r.Acquired)
	}
	var sum Summary
	for _, v := range m.Partitions(0) {
		sum = v.Summary
		if v.Stats.Backoffs != 5 {
			t.Fatalf("backoffs counted %d, want 5", v.Stats.Backoffs)
		}
	}
	if sum.Backoff != 0 || sum.Acquired != 8 {
		t.Fatalf("summary %+v", sum)
	}
}
