package share

import (
	"reflect"
	"testing"
	"time"
)

// windowFixture: five 2-record batches (offsets 0..9); member "m" acquires
// 0..7, accepts 2-3, releases 4-5 and rejects 6-7, leaving one range in
// each state and the 8-9 tail not yet fetched.
func windowFixture(t *testing.T) (*SharePartition, *MemSource, time.Time) {
	t.Helper()
	t0 := time.UnixMilli(1_000_000)
	p := New(Config{RecordLockDuration: 10 * time.Second})
	p.Initialise(0, 0)
	src := &MemSource{}
	for range 5 {
		src.Append(2)
	}
	var res AcquireResult
	mustAcquire(t, p, "m", t0, src, &res, 8)
	if res.Count != 8 {
		t.Fatalf("acquired %d records, want 8: %+v", res.Count, res.Acquired)
	}
	mustAck(t, p, "m", t0,
		AckBatch{2, 3, []AckType{AckAccept}},
		AckBatch{4, 5, []AckType{AckRelease}},
		AckBatch{6, 7, []AckType{AckReject}})
	return p, src, t0
}

func TestWindow(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	deadline := t0.Add(10 * time.Second)
	full := []InFlightRange{
		{FirstOffset: 0, LastOffset: 1, State: Acquired, DeliveryCount: 1, Owner: "m", LockDeadline: deadline},
		{FirstOffset: 2, LastOffset: 3, State: Acknowledged, DeliveryCount: 1},
		{FirstOffset: 4, LastOffset: 5, State: Available, DeliveryCount: 1},
		{FirstOffset: 6, LastOffset: 7, State: Archived, DeliveryCount: 1},
	}
	for _, tc := range []struct {
		name      string
		limit     int
		want      []InFlightRange
		wantTotal int
	}{
		{"no cap", 0, full, 4},
		{"cap above size", 10, full, 4},
		{"cap equal to size", 4, full, 4},
		{"capped", 2, full[:2], 4},
		{"cap of one", 1, full[:1], 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, _ := windowFixture(t)
			if p.StartOffset() != 0 || p.EndOffset() != 7 {
				t.Fatalf("SPSO %d SPEO %d, want 0 7", p.StartOffset(), p.EndOffset())
			}
			got, total := p.Window(nil, tc.limit)
			if total != tc.wantTotal {
				t.Errorf("total %d, want %d", total, tc.wantTotal)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("window\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}

	t.Run("appends to dst", func(t *testing.T) {
		p, _, _ := windowFixture(t)
		head := InFlightRange{FirstOffset: -5, LastOffset: -5}
		got, total := p.Window([]InFlightRange{head}, 0)
		if total != 4 || len(got) != 5 || got[0] != head || !reflect.DeepEqual(got[1:], full) {
			t.Errorf("got %+v (total %d)", got, total)
		}
	})

	t.Run("uninitialised", func(t *testing.T) {
		got, total := New(Config{}).Window(nil, 0)
		if got != nil || total != 0 {
			t.Errorf("got %+v, total %d", got, total)
		}
	})

	t.Run("initialised, nothing in flight", func(t *testing.T) {
		p := New(Config{})
		p.Initialise(42, 0)
		got, total := p.Window(nil, 0)
		if got != nil || total != 0 {
			t.Errorf("got %+v, total %d", got, total)
		}
	})

	t.Run("acquired ranges left below SPSO are not drawn", func(t *testing.T) {
		p, src, _ := windowFixture(t)
		// Retention moves the log start to 4: 0-1 stays Acquired by "m"
		// below SPSO; "n" then takes the released 4-5 with count 2.
		src.Bound.LogStart = 4
		var res AcquireResult
		mustAcquire(t, p, "n", t0.Add(time.Second), src, &res, 2)
		if p.StartOffset() != 4 || p.EndOffset() != 7 {
			t.Fatalf("SPSO %d SPEO %d, want 4 7", p.StartOffset(), p.EndOffset())
		}
		want := []InFlightRange{
			{FirstOffset: 4, LastOffset: 5, State: Acquired, DeliveryCount: 2, Owner: "n", LockDeadline: t0.Add(11 * time.Second)},
			{FirstOffset: 6, LastOffset: 7, State: Archived, DeliveryCount: 1},
		}
		got, total := p.Window(nil, 0)
		if total != 2 || !reflect.DeepEqual(got, want) {
			t.Errorf("window\n got %+v (total %d)\nwant %+v", got, total, want)
		}
		// The lock below SPSO is still tracked, just not in the window.
		if all := p.InFlight(nil); len(all) == 0 || all[0].FirstOffset != 0 || all[0].State != Acquired {
			t.Errorf("in-flight cache %+v lacks the 0-1 lock below SPSO", all)
		}
	})

	t.Run("read-only", func(t *testing.T) {
		p, _, _ := windowFixture(t)
		before := p.InFlight(nil)
		dirty, sum := p.Dirty(), p.Summary()
		p.Window(nil, 1)
		p.Window(nil, 0)
		if !reflect.DeepEqual(p.InFlight(nil), before) || p.Dirty() != dirty || p.Summary() != sum {
			t.Error("Window changed the share-partition")
		}
	})
}
