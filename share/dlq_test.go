package share

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"sharq/log/clock"
)

// fakeDLQ is a DLQ whose appends fail while fail > 0 and can be held.
type fakeDLQ struct {
	mu       sync.Mutex
	exists   bool
	enabled  bool
	fail     int
	hold     chan struct{} // non-nil: each Append waits for a value
	appended []DLQRecord
	calls    int
}

func (f *fakeDLQ) Topic(string) (int32, bool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 2, f.enabled, f.exists
}
func (f *fakeDLQ) CreateTopic(string) error  { return errors.New("no auto-create here") }
func (f *fakeDLQ) TopicName([16]byte) string { return "src" }
func (f *fakeDLQ) SourceRecords([16]byte, int32, int64, int64) (map[int64]SourceRecord, error) {
	return nil, errors.New("copy not enabled in these tests")
}
func (f *fakeDLQ) Append(topic string, partition int32, recs []DLQRecord) error {
	if f.hold != nil {
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail > 0 {
		f.fail--
		return errors.New("not leader")
	}
	f.appended = append(f.appended, recs...)
	return nil
}

func (f *fakeDLQ) offsets() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.appended {
		var off, msg string
		for _, h := range r.Headers {
			switch h.Key {
			case HeaderDLQOffset:
				off = string(h.Value)
			case HeaderDLQMessage:
				msg = string(h.Value)
			}
		}
		out = append(out, off+":"+msg)
	}
	return strings.Join(out, ",")
}

type dlqEvent struct {
	r       ArchivingRange
	settled bool
}

func newDLQManager(t *testing.T, p Persister, d *fakeDLQ, clock *clock.Fake, lg *memLog) (*Manager, chan dlqEvent) {
	t.Helper()
	m, err := NewManager(Options{
		Persister: p, Logs: memLogs{lg}, Clock: clock, DLQ: d,
		Settings: func(string) Settings {
			return Settings{LockDuration: time.Second, DeliveryLimit: 2, AutoOffsetReset: "earliest", RenewEnabled: true,
				MaxSessions: 10, FetchMaxBytes: 1 << 20, DLQEnabled: true, DLQTopic: "dlq.src", DLQPrefix: "dlq."}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan dlqEvent, 16)
	m.dlqDone = func(r ArchivingRange, settled bool) { events <- dlqEvent{r, settled} }
	return m, events
}

// A failing dead-letter write is retried after 1 s, 2 s, 4 s, 8 s on the
// Manager's clock: 5 attempts; SPSO stays at the Archiving record until it
// settles, and after the fifth failure it is archived regardless and
// counted as a failure.
func TestDLQRetriesThenArchives(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     int
		records  string
		failures int64
	}{
		{"succeeds on the third attempt", 2, "0:Offset rejected by client.", 0},
		{"fails five times", 5, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lg := &memLog{}
			lg.append(2)
			clock := clock.NewFake(time.Unix(1000, 0))
			d := &fakeDLQ{exists: true, enabled: true, fail: tc.fail}
			m, events := newDLQManager(t, NewMemPersister(), d, clock, lg)
			defer m.Close()
			var sc Scratch
			fetchOnce(t, m, &sc, "a", 0)
			r := fetchOnce(t, m, &sc, "a", 1, AckBatch{0, 0, []AckType{AckReject}}, AckBatch{1, 1, []AckType{AckAccept}})
			if r.AckCode != 0 {
				t.Fatalf("ack: code %d", r.AckCode)
			}
			key := Key{Group: "g", TopicID: [16]byte{1}}
			for attempt := 1; ; attempt++ {
				ev := <-events
				if ev.settled {
					if want := min(tc.fail+1, dlqMaxAttempts); attempt != want {
						t.Fatalf("settled after %d attempts, want %d", attempt, want)
					}
					break
				}
				if spso, _, _ := m.Offsets(key); spso != 0 {
					t.Fatalf("SPSO %d passed an Archiving record", spso)
				}
				clock.Advance(time.Second << (attempt - 1))
			}
			if got := d.offsets(); got != tc.records {
				t.Errorf("DLQ records %q, want %q", got, tc.records)
			}
			if spso, _, _ := m.Offsets(key); spso != 2 {
				t.Errorf("SPSO %d after the write settled, want 2", spso)
			}
			st := m.DLQStats()
			if len(st) != 1 || st[0].Failures != tc.failures || st[0].Records != 1-tc.failures {
				t.Errorf("DLQ stats %+v", st)
			}
		})
	}
}

// A crash in the Archiving window (the Reject is durable, the dead-letter
// write has not happened) loses no DLQ record: the next Manager on the same
// persisted state re-drives it when the share-partition loads, with Kafka's
// resume cause (count below the limit: rejected).
func TestDLQRedrivenAfterCrash(t *testing.T) {
	lg := &memLog{}
	lg.append(3)
	clock := clock.NewFake(time.Unix(1000, 0))
	persisted := NewMemPersister()
	held := &fakeDLQ{exists: true, enabled: true, hold: make(chan struct{})}
	m1, _ := newDLQManager(t, persisted, held, clock, lg)
	var sc Scratch
	fetchOnce(t, m1, &sc, "a", 0)
	fetchOnce(t, m1, &sc, "a", 1, AckBatch{0, 2, []AckType{AckAccept, AckReject, AckAccept}})
	// m1 "crashes": its write never happens and nothing is closed or
	// flushed (the held Append is released only at the end, into a
	// DLQ nobody reads).
	defer close(held.hold)
	// What metrics and /ui read shows the range Archiving meanwhile.
	views := m1.Partitions(10)
	if len(views) != 1 || views[0].Summary.Archiving != 1 || fmt.Sprint(views[0].Window[0].State) != "Archiving" {
		t.Fatalf("view while the write is held: %+v", views)
	}

	d := &fakeDLQ{exists: true, enabled: true}
	m2, events := newDLQManager(t, persisted, d, clock, lg)
	defer m2.Close()
	var sc2 Scratch
	fetchOnce(t, m2, &sc2, "b", 0) // loads the share-partition
	if ev := <-events; !ev.settled || ev.r.FirstOffset != 1 || ev.r.LastOffset != 1 {
		t.Fatalf("re-driven %+v", ev)
	}
	if got, want := d.offsets(), "1:Offset rejected by client."; got != want {
		t.Errorf("re-driven DLQ records %q, want %q", got, want)
	}
	if spso, _, _ := m2.Offsets(Key{Group: "g", TopicID: [16]byte{1}}); spso != 3 {
		t.Errorf("SPSO %d after the re-driven write, want 3", spso)
	}
}

// A release on the last permitted delivery goes Archiving with "exceeded";
// below share.version 2 (DLQEnabled false) nothing is written.
func TestDLQReleaseAtLimitAndOff(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprint("enabled=", enabled), func(t *testing.T) {
			lg := &memLog{}
			lg.append(1)
			clock := clock.NewFake(time.Unix(1000, 0))
			d := &fakeDLQ{exists: true, enabled: true}
			m, events := newDLQManager(t, NewMemPersister(), d, clock, lg)
			defer m.Close()
			base := m.settings
			m.settings = func(g string) Settings { s := base(g); s.DLQEnabled = enabled; return s }
			var sc Scratch
			fetchOnce(t, m, &sc, "a", 0)
			fetchOnce(t, m, &sc, "a", 1, AckBatch{0, 0, []AckType{AckRelease}})
			r := fetchOnce(t, m, &sc, "a", 2, AckBatch{0, 0, []AckType{AckRelease}})
			if r.AckCode != 0 || len(r.Acquired) != 0 {
				t.Fatalf("second release: %+v", r)
			}
			if enabled {
				<-events
				if got, want := d.offsets(), "0:Offset delivery count exceeded the threshold."; got != want {
					t.Errorf("DLQ records %q, want %q", got, want)
				}
			} else if !m.DLQIdle() || d.calls != 0 {
				t.Errorf("share.version 1 wrote to the DLQ (%d calls)", d.calls)
			}
			if spso, _, _ := m.Offsets(Key{Group: "g", TopicID: [16]byte{1}}); spso != 1 {
				t.Errorf("SPSO %d, want 1", spso)
			}
		})
	}
}

// Kafka's validateDlqTopic: each misconfiguration archives at once, with
// no write and no retry, and is counted as a failure.
func TestDLQValidation(t *testing.T) {
	for _, tc := range []struct {
		name            string
		topic, prefix   string
		exists, enabled bool
	}{
		{"reserved name", "__dlq", "", true, true},
		{"topic without group.enable", "dlq.src", "dlq.", true, false},
		{"missing topic, auto-create off", "dlq.src", "dlq.", false, false},
		{"prefix not carried", "src-dead", "dlq.", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lg := &memLog{}
			lg.append(1)
			clock := clock.NewFake(time.Unix(1000, 0))
			d := &fakeDLQ{exists: tc.exists, enabled: tc.enabled}
			m, events := newDLQManager(t, NewMemPersister(), d, clock, lg)
			defer m.Close()
			base := m.settings
			m.settings = func(g string) Settings { s := base(g); s.DLQTopic, s.DLQPrefix = tc.topic, tc.prefix; return s }
			var sc Scratch
			fetchOnce(t, m, &sc, "a", 0)
			fetchOnce(t, m, &sc, "a", 1, AckBatch{0, 0, []AckType{AckReject}})
			if ev := <-events; !ev.settled {
				t.Fatalf("a misconfigured DLQ was retried")
			}
			if d.calls != 0 {
				t.Errorf("%d appends to a misconfigured DLQ", d.calls)
			}
			if st := m.DLQStats(); len(st) != 1 || st[0].Failures != 1 {
				t.Errorf("stats %+v, want one failure", st)
			}
		})
	}
}
