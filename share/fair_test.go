package share

import (
	"context"
	"math"
	"testing"
	"time"

	"sharq/log/clock"
)

func newFairManager(t *testing.T, fair bool) (*Manager, *memLog, *clock.Fake) {
	t.Helper()
	lg := &memLog{}
	clock := clock.NewFake(time.Unix(1000, 0))
	m, err := NewManager(Options{
		Persister: NewMemPersister(),
		Logs:      memLogs{lg},
		Clock:     clock,
		Settings: func(string) Settings {
			return Settings{LockDuration: time.Minute, DeliveryLimit: 5, AutoOffsetReset: "earliest",
				RenewEnabled: true, MaxSessions: 20, FetchMaxBytes: 1 << 20, FairAcquisition: fair}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, lg, clock
}

var fairKey = Key{Group: "g", TopicID: [16]byte{1}}

// parkAs marks members as waiting on the share-partition, as their parked
// ShareFetches do.
func parkAs(m *Manager, members ...string) {
	p := m.loaded(fairKey)
	p.mu.Lock()
	for _, mb := range members {
		p.fair.park(mb)
	}
	p.mu.Unlock()
}

// unparkAs ends a parked ShareFetch of member; the member still fetches
// from the share-partition.
func unparkAs(m *Manager, member string, now time.Time) {
	p := m.loaded(fairKey)
	p.mu.Lock()
	p.fair.unpark(member, now)
	p.mu.Unlock()
}

func acquiredCount(r *PartitionResult) int64 {
	var n int64
	for _, a := range r.Acquired {
		n += a.LastOffset - a.FirstOffset + 1
	}
	return n
}

// Without members waiting, fair acquisition changes nothing: the whole log
// batch goes to the member that fetches (batch_optimized), even past
// MaxRecords. With two members waiting, the next batch is split three ways
// into ranges inside it; a member holding its share gets nothing more; the
// shares follow the members' holdings; and with the group config off a
// member takes whole batches again.
func TestFairAcquisitionSplits(t *testing.T) {
	for _, tc := range []struct {
		name string
		fair bool
		want [][]AcquiredRecords // a, b, a again, c
	}{
		{"on", true, [][]AcquiredRecords{
			{{150, 199, 1}},
			{{200, 249, 1}},
			nil, // a holds its share
			{{250, 299, 1}},
		}},
		{"off", false, [][]AcquiredRecords{
			{{150, 299, 1}},
			nil,
			nil,
			nil,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, lg, _ := newFairManager(t, tc.fair)
			var a, b, c Scratch
			// Uncontended: one batch of 150 records, whole, to a.
			lg.appendRaw(rawBatches(0, []int{100}, []int{150}), 150)
			r := fetchOnce(t, m, &a, "a", 0)
			if len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 149, 1}) {
				t.Fatalf("uncontended acquisition: %+v", r.Acquired)
			}
			r = fetchOnce(t, m, &a, "a", 1, AckBatch{0, 149, []AckType{AckAccept}})
			if r.AckCode != 0 || len(r.Acquired) != 0 {
				t.Fatalf("ack: code %d, acquired %+v", r.AckCode, r.Acquired)
			}
			// b and c wait; 150 more records arrive in one batch.
			parkAs(m, "b", "c")
			lg.appendRaw(rawBatches(150, []int{100}, []int{150}), 150)
			r = fetchOnce(t, m, &a, "a", 2)
			checkAcquired(t, "a", r, tc.want[0])
			if len(r.Acquired) > 0 && len(r.Records) == 0 {
				t.Fatal("a got ranges without the batch")
			}
			// b is answered; c still waits and a holds 50: b's share of
			// the 150 records among three members.
			unparkAs(m, "b", time.Unix(1000, 0))
			checkAcquired(t, "b", fetchOnce(t, m, &b, "b", 0), tc.want[1])
			checkAcquired(t, "a again", fetchOnce(t, m, &a, "a", 3), tc.want[2])
			unparkAs(m, "c", time.Unix(1000, 0))
			parkAs(m, "a")
			checkAcquired(t, "c", fetchOnce(t, m, &c, "c", 0), tc.want[3])
		})
	}
}

func checkAcquired(t *testing.T, who string, r *PartitionResult, want []AcquiredRecords) {
	t.Helper()
	if len(r.Acquired) != len(want) {
		t.Fatalf("%s acquired %+v, want %+v", who, r.Acquired, want)
	}
	for i := range want {
		if r.Acquired[i] != want[i] {
			t.Fatalf("%s acquired %+v, want %+v", who, r.Acquired, want)
		}
	}
}

// The floor: records a member holds for less than fairQuantum in all are
// not worth a split. Acknowledgements time the acquisitions on the
// Manager's clock; fast consumers keep whole batches while others wait,
// slow ones get their share.
func TestFairAcquisitionFloor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hold     time.Duration // a holds its 50 records this long
		wantNext int64         // what a gets of the next 300 with b and c waiting
	}{
		{"fast consumer keeps whole batches", 50 * time.Microsecond, 300},
		// 300 new + 100 held by b and c, among three: 134, but never more
		// than the 100 the fetch asks for (a hard limit once batches split).
		{"slow consumer gets its share", 50 * time.Millisecond, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, lg, clock := newFairManager(t, true)
			var a, b, c Scratch
			fetchOnce(t, m, &b, "b", 0) // creates the share-partition
			fetchOnce(t, m, &c, "c", 0)
			parkAs(m, "b", "c")
			lg.appendRaw(rawBatches(0, []int{100}, []int{150}), 150)
			checkAcquired(t, "a", fetchOnce(t, m, &a, "a", 0), []AcquiredRecords{{0, 49, 1}})
			checkAcquired(t, "b", fetchOnce(t, m, &b, "b", 1), []AcquiredRecords{{50, 99, 1}})
			checkAcquired(t, "c", fetchOnce(t, m, &c, "c", 1), []AcquiredRecords{{100, 149, 1}})
			clock.Advance(tc.hold)
			fetchOnce(t, m, &a, "a", 1, AckBatch{0, 49, []AckType{AckAccept}})
			f := &m.loaded(fairKey).fair
			if got, want := time.Duration(f.perRecord), tc.hold/50; got != want {
				t.Fatalf("per-record hold %v, want %v", got, want)
			}
			lg.appendRaw(rawBatches(150, []int{100}, []int{300}), 300)
			if got := acquiredCount(fetchOnce(t, m, &a, "a", 2)); got != tc.wantNext {
				t.Fatalf("a got %d records, want %d", got, tc.wantNext)
			}
		})
	}
}

// A member whose acquisition was limited wakes the members waiting, which
// take the rest: a parked ShareFetch is answered without any append.
func TestFairAcquisitionWakesWaiters(t *testing.T) {
	m, lg, _ := newFairManager(t, true)
	var a, b Scratch
	fetchOnce(t, m, &a, "a", 0)
	fetchOnce(t, m, &b, "b", 0)
	done := make(chan *PartitionResult, 1)
	go func() {
		req := b.Reset()
		req.Group, req.Member, req.Conn, req.Epoch, req.MaxRecords = "g", "b", "b", 1, 100
		req.MaxWait = time.Hour // only a wake-up can end it
		sc := &b
		sc.AddPartition([16]byte{1}, 0)
		res := m.Fetch(context.Background(), sc)
		done <- &res.Partitions[0]
	}()
	// Wait until b is parked (polling its registration, with a deadline).
	p := m.loaded(fairKey)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		parked := p.fair.members["b"].parked > 0 && len(p.waiters) > 0
		p.mu.Unlock()
		if parked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b never parked")
		}
		time.Sleep(time.Millisecond)
	}
	// Appended without waking the log's watchers: only a's limited
	// acquisition can wake b.
	lg.appendRaw(rawBatches(0, []int{100}, []int{100}), 100)
	r := fetchOnce(t, m, &a, "a", 1)
	checkAcquired(t, "a", r, []AcquiredRecords{{0, 49, 1}})
	select {
	case r := <-done:
		checkAcquired(t, "b", r, []AcquiredRecords{{50, 99, 1}})
	case <-time.After(10 * time.Second):
		t.Fatal("b was not woken by a's limited acquisition")
	}
}

func TestFairStateFloorAndMarks(t *testing.T) {
	var f fairState
	if f.floor() != 1 {
		t.Fatalf("floor before any sample: %d", f.floor())
	}
	t0 := time.Unix(0, 0)
	f.note("a", 9, 10, t0)
	f.note("b", 19, 10, t0)
	f.acked("a", 0, 8, t0.Add(time.Second)) // does not cover a's last offset
	if f.perRecord != 0 {
		t.Fatalf("sample from an ack that does not end the acquisition: %v", f.perRecord)
	}
	f.acked("b", 0, 9, t0.Add(time.Second)) // another member's range
	if f.perRecord != 0 {
		t.Fatalf("sample from another member's ack: %v", f.perRecord)
	}
	f.acked("a", 0, 9, t0.Add(10*time.Millisecond))
	if got := time.Duration(f.perRecord); got != time.Millisecond {
		t.Fatalf("per record %v, want 1ms", got)
	}
	if got := f.floor(); got != int64(fairQuantum/time.Millisecond) {
		t.Fatalf("floor %d", got)
	}
	f.acked("a", 0, 9, t0.Add(time.Hour)) // timed once only
	if got := time.Duration(f.perRecord); got != time.Millisecond {
		t.Fatalf("per record %v after a second ack", got)
	}
	// The gap between a member's acknowledgements per record: the smaller
	// estimate wins (a fast consumer whose records waited in its buffer).
	t1 := time.Unix(50, 0)
	f.ackedRecords("c", 100, t1)
	f.ackedRecords("c", 100, t1.Add(time.Millisecond)) // 10µs per record
	if got := time.Duration(f.ackGap); got != 10*time.Microsecond {
		t.Fatalf("ack gap %v, want 10µs", got)
	}
	if got := f.floor(); got != int64(fairQuantum/(10*time.Microsecond)) {
		t.Fatalf("floor %d with a 10µs ack gap", got)
	}
}

// Who contends is judged by state: a member with a ShareFetch parked and
// one that fetched and holds nothing count however long ago they were
// answered, up to fairIdle for a member that neither fetches nor holds
// (holders: TestFairAcquisitionSplits); a member whose session closed does
// not.
func TestFairMembersByState(t *testing.T) {
	p := &part{sp: New(Config{})}
	p.sp.Initialise(0, 0)
	now := time.Unix(100, 0)
	// b's ShareFetch is parked; c and d fetched and were answered.
	p.fair.park("b")
	p.fair.served("c", now)
	p.fair.served("d", now)
	if got := p.fairLimit("a", 1, 400, now); got != 100 {
		t.Fatalf("a limit %d, want 100 (a quarter of 400 among a, b, c, d)", got)
	}
	// However slow the machine, c and d still claim their shares.
	if got := p.fairLimit("a", 1, 400, now.Add(fairIdle-1)); got != 100 {
		t.Fatalf("a limit %d with c and d answered a while ago, want 100", got)
	}
	// c and d have not fetched for fairIdle and hold nothing: forgotten;
	// b is still parked.
	if got := p.fairLimit("a", 1, 400, now.Add(fairIdle)); got != 200 {
		t.Fatalf("a limit %d with c and d gone, want 200 (among a, b)", got)
	}
	if _, ok := p.fair.members["c"]; ok {
		t.Fatal("idle member c still known")
	}
	p.fair.unpark("b", now.Add(fairIdle))
	if got := p.fairLimit("a", 1, 400, now.Add(2*fairIdle-1)); got != 200 {
		t.Fatalf("a limit %d after b was answered, want 200", got)
	}
	// b's session closed.
	p.fair.forget("b")
	if got := p.fairLimit("a", 1, 400, now.Add(2*fairIdle-1)); got != -1 {
		t.Fatalf("a alone: limit %d, want none", got)
	}
	if n := len(p.fair.members); n != 1 {
		t.Fatalf("%d members known, want a alone", n)
	}
}

func TestFairAcquisitionSetting(t *testing.T) {
	base := Settings{FairAcquisition: true}
	for v, want := range map[string]bool{"false": false, "FALSE": false, "true": true} {
		if got := base.WithOverrides(map[string]string{FairAcquisitionKey: v}).FairAcquisition; got != want {
			t.Errorf("%s=%s: %v", FairAcquisitionKey, v, got)
		}
	}
	if !base.WithOverrides(nil).FairAcquisition {
		t.Error("default changed by no override")
	}
}

// A member fetching from two share-partitions weighs half on each: with
// 300 records and one single-partition member waiting, it may take 100
// and the other 200 (everyone ends with the same total work).
func TestFairLimitSpread(t *testing.T) {
	p := &part{sp: New(Config{})}
	p.sp.Initialise(0, 0)
	now := time.Unix(100, 0)
	p.fair.park("b")
	p.fair.setMember("b", memberInfo{w: 1, parked: 1})
	if got := p.fairLimit("a", 0.5, 300, now); got != 100 {
		t.Fatalf("a (2 partitions) limit %d, want 100", got)
	}
	p.fair.park("a")
	if got := p.fairLimit("b", 1, 300, now); got != 200 {
		t.Fatalf("b (1 partition) limit %d, want 200", got)
	}
	// Batches of more than fairMaxSplitBytes go whole.
	p.batchBytes = fairMaxSplitBytes + 1
	if got := p.fairLimit("b", 1, 300, now); got != -1 {
		t.Fatalf("large batches: limit %d, want none", got)
	}
	p.batchBytes = 0
	// Timed at 1 ms a record, with 3000 records: at most 100 ms of work
	// (100 records) a member, and half that on each of a's two
	// share-partitions (and a floor of 50 ms, halved too).
	p.fair.perRecord = float64(time.Millisecond)
	if got := p.fairLimit("a", 0.5, 3000, now); got != 50 {
		t.Fatalf("a (weight 1/2) limit %d of 3000 at 1 ms a record, want 50", got)
	}
	if got := p.fairLimit("b", 1, 3000, now); got != 100 {
		t.Fatalf("b limit %d of 3000 at 1 ms a record, want 100", got)
	}
	if got := p.fairLimit("a", 0.5, 40, now); got != 25 {
		t.Fatalf("a (weight 1/2) limit %d of 40 at 1 ms a record, want its floor, 25", got)
	}
	// Fast consumers are never limited.
	p.fair.perRecord = float64(fairFastRecord - 1)
	if got := p.fairLimit("b", 1, 3000, now); got != -1 {
		t.Fatalf("fast consumers: limit %d, want none", got)
	}
	p.fair.perRecord = 0
	p.fair.forget("a")
	if got := p.fairLimit("b", 1, 300, now); got != -1 {
		t.Fatalf("b alone: limit %d, want none", got)
	}
}

// A member fetching from two share-partitions weighs 1/2 on each while
// their backlogs per member are alike or not known, and leans towards the
// one with more work per member.
func TestFairWeight(t *testing.T) {
	p0, p1 := &part{}, &part{}
	var sc Scratch
	sc.res.Partitions = []PartitionResult{{p: p0}, {p: p1}}
	sc.fetch = []int{0, 1}
	if w := fairWeight(p0, &sc); w != 0.5 {
		t.Fatalf("nothing known: weight %v, want 0.5", w)
	}
	p0.fair.pressure.Store(math.Float64bits(100))
	if w := fairWeight(p0, &sc); w != 0.5 {
		t.Fatalf("other not known: weight %v, want 0.5", w)
	}
	p1.fair.pressure.Store(math.Float64bits(300))
	if w0, w1 := fairWeight(p0, &sc), fairWeight(p1, &sc); w0 != 0.25 || w1 != 0.75 {
		t.Fatalf("weights %v and %v, want 0.25 and 0.75", w0, w1)
	}
	p1.fair.pressure.Store(math.Float64bits(1e9))
	if w := fairWeight(p0, &sc); w != 1.0/8 {
		t.Fatalf("weight %v on a share-partition with little work, want the least, 1/8", w)
	}
	sc.fetch = sc.fetch[:1]
	if w := fairWeight(p0, &sc); w != 1 {
		t.Fatalf("one share-partition: weight %v", w)
	}
}
