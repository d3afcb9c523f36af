package share

import (
	"testing"
	"time"
)

// statsStep is one operation of a stats scenario; ms is the clock.
type statsStep struct {
	op     string // acquire, ack, expire, releaseMember, reset, append
	member string
	ms     int64
	n      int // acquire: max records; append: records in a new batch
	mode   AcquireMode
	acks   []AckBatch
	// wantAcquired is how many offsets an acquire must hand out.
	wantAcquired int64
}

func TestStats(t *testing.T) {
	t0 := time.UnixMilli(5_000_000)
	lock := 10 * time.Second
	expiry := lock.Milliseconds()
	acq := func(member string, ms int64, want int64) statsStep {
		return statsStep{op: "acquire", member: member, ms: ms, n: 500, wantAcquired: want}
	}
	ack := func(member string, ms int64, acks ...AckBatch) statsStep {
		return statsStep{op: "ack", member: member, ms: ms, acks: acks}
	}
	expire := func(ms int64) statsStep { return statsStep{op: "expire", ms: ms} }

	cases := []struct {
		name  string
		limit int
		batch int // records in the initial batch
		steps []statsStep
		want  Stats
	}{
		{
			name: "first delivery only", batch: 10,
			steps: []statsStep{acq("a", 0, 10), ack("a", 1, AckBatch{0, 9, []AckType{AckAccept}})},
			want:  Stats{Deliveries: 10},
		},
		{
			name: "release then redeliver", batch: 10,
			steps: []statsStep{
				acq("a", 0, 10),
				ack("a", 1, AckBatch{0, 2, []AckType{AckRelease}}, AckBatch{3, 9, []AckType{AckAccept}}),
				acq("b", 2, 3),
			},
			want: Stats{Deliveries: 13, Redeliveries: 3},
		},
		{
			name: "reject counts, gap does not", batch: 5,
			steps: []statsStep{
				acq("a", 0, 5),
				ack("a", 1, AckBatch{0, 4, []AckType{AckAccept, AckReject, AckReject, AckGap, AckRelease}}),
				acq("a", 2, 1),
				ack("a", 3, AckBatch{4, 4, []AckType{AckReject}}),
			},
			want: Stats{Deliveries: 6, Redeliveries: 1, Rejected: 3},
		},
		{
			name: "expire at the limit archives", limit: 2, batch: 4,
			steps: []statsStep{
				acq("a", 0, 4),
				expire(expiry),
				acq("b", expiry+1, 4),
				expire(2*expiry + 1),
				acq("c", 2*expiry+2, 0),
			},
			want: Stats{Deliveries: 8, Redeliveries: 4, LockExpiries: 8, ArchivedByLimit: 4},
		},
		{
			name: "release at the limit archives", limit: 2, batch: 3,
			steps: []statsStep{
				acq("a", 0, 3),
				ack("a", 1, AckBatch{0, 2, []AckType{AckRelease}}),
				acq("a", 2, 3),
				ack("a", 3, AckBatch{0, 1, []AckType{AckRelease}}, AckBatch{2, 2, []AckType{AckAccept}}),
				acq("a", 4, 0),
			},
			want: Stats{Deliveries: 6, Redeliveries: 3, ArchivedByLimit: 2},
		},
		{
			name: "expiry below the limit is not an archive", limit: 5, batch: 2,
			steps: []statsStep{acq("a", 0, 2), expire(expiry), acq("b", expiry+1, 2), expire(2*expiry + 1)},
			want:  Stats{Deliveries: 4, Redeliveries: 2, LockExpiries: 4},
		},
		{
			// Session close gives the delivery back: the next acquisition
			// is a first delivery again, and nothing expires or archives.
			name: "member release decrements", limit: 1, batch: 3,
			steps: []statsStep{
				acq("a", 0, 3),
				{op: "releaseMember", member: "a", ms: 1},
				acq("b", 2, 3),
			},
			want: Stats{Deliveries: 6},
		},
		{
			// The rest of a split batch is Available with count 0: its
			// first acquisition is not a redelivery.
			name: "record limit splits a batch", batch: 10,
			steps: []statsStep{
				{op: "acquire", member: "a", ms: 0, n: 4, mode: RecordLimit, wantAcquired: 4},
				ack("a", 1, AckBatch{0, 3, []AckType{AckRelease}}),
				{op: "acquire", member: "a", ms: 2, n: 4, mode: RecordLimit, wantAcquired: 4},
				{op: "append", n: 2},
				acq("b", 3, 8),
			},
			want: Stats{Deliveries: 16, Redeliveries: 4},
		},
		{
			name: "reset keeps the counters", batch: 3,
			steps: []statsStep{
				acq("a", 0, 3),
				ack("a", 1, AckBatch{0, 2, []AckType{AckReject}}),
				{op: "reset"},
				acq("a", 2, 3),
			},
			want: Stats{Deliveries: 6, Rejected: 3},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Config{DeliveryCountLimit: tc.limit, RecordLockDuration: lock})
			p.Initialise(0, 0)
			var src MemSource
			src.Append(tc.batch)
			var res AcquireResult
			for i, st := range tc.steps {
				now := t0.Add(time.Duration(st.ms) * time.Millisecond)
				switch st.op {
				case "acquire":
					if _, err := p.Acquire(st.member, now, AcquireRequest{MaxRecords: st.n, Mode: st.mode}, &src, &res); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if res.Count != st.wantAcquired {
						t.Fatalf("step %d: acquired %d offsets %+v, want %d", i, res.Count, res.Acquired, st.wantAcquired)
					}
				case "ack":
					mustAck(t, p, st.member, now, st.acks...)
				case "expire":
					if changed, _ := p.ExpireLocks(now, nil); len(changed) == 0 {
						t.Fatalf("step %d: nothing expired", i)
					}
				case "releaseMember":
					p.ReleaseMember(st.member, now, nil)
				case "reset":
					p.Reset(0)
				case "append":
					src.Append(st.n)
				default:
					t.Fatalf("step %d: unknown op %q", i, st.op)
				}
			}
			if got := p.Stats(); got != tc.want {
				t.Fatalf("stats %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A Reject batch reaching below SPSO counts only the offsets still tracked
// (an Acquired range stranded there by a log start jump), not the hole.
func TestStatsRejectBelowStart(t *testing.T) {
	t0 := time.UnixMilli(1_000)
	p := New(Config{})
	p.Initialise(0, 0)
	var src MemSource
	src.Append(2) // 0-1
	src.Append(3) // 2-4
	var res AcquireResult
	mustAcquire(t, p, "a", t0, &src, &res, 2)
	if res.Count != 2 {
		t.Fatalf("acquired %+v", res.Acquired)
	}
	// Retention moves the log start to 4: 0-1 stay Acquired below SPSO and
	// 2-3, never tracked, leave a hole that the Reject batch spans.
	src.Bound.LogStart = 4
	mustAcquire(t, p, "a", t0, &src, &res, 500)
	if p.StartOffset() != 4 || res.Count != 1 {
		t.Fatalf("SPSO %d, acquired %+v", p.StartOffset(), res.Acquired)
	}
	mustAck(t, p, "a", t0, AckBatch{0, 4, []AckType{AckReject}})
	if got, want := p.Stats(), (Stats{Deliveries: 3, Rejected: 3}); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
}
