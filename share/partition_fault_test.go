package share

import (
	"testing"
	"time"
)

// TestFaultExpireAndRedeliver: an injected lock expiry and a forced
// redelivery release exactly the offsets named, keep the delivery count
// (the next delivery is the second), and leave the other records as they
// were, still owned.
func TestFaultExpireAndRedeliver(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	for _, tc := range []struct {
		name    string
		inject  func(p *SharePartition) int64
		offsets []int64 // released
		expired int64   // counted as lock expiries
	}{
		{"expire some", func(p *SharePartition) int64 {
			dst, _ := p.ExpireLocksNow([]int64{1, 3}, now, nil)
			return int64(len(dst))
		}, []int64{1, 3}, 2},
		{"expire all", func(p *SharePartition) int64 {
			dst, _ := p.ExpireLocksNow(nil, now, nil)
			var n int64
			for _, r := range dst {
				n += r.LastOffset - r.FirstOffset + 1
			}
			return n
		}, []int64{0, 1, 2, 3, 4}, 5},
		{"redeliver some", func(p *SharePartition) int64 { n, _ := p.Redeliver([]int64{2, 4, 9}, now); return n }, []int64{2, 4}, 0},
		{"redeliver all", func(p *SharePartition) int64 { n, _ := p.Redeliver(nil, now); return n }, []int64{0, 1, 2, 3, 4}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Config{DeliveryCountLimit: 5})
			p.Initialise(0, 0)
			var src MemSource
			src.Append(5)
			var res AcquireResult
			mustAcquire(t, p, "a", now, &src, &res, 500)
			if n := tc.inject(p); n != int64(len(tc.offsets)) {
				t.Fatalf("released %d, want %d", n, len(tc.offsets))
			}
			if got := p.Stats().LockExpiries; got != tc.expired {
				t.Errorf("lock expiries %d, want %d", got, tc.expired)
			}
			mustAcquire(t, p, "b", now.Add(time.Millisecond), &src, &res, 500)
			var got []int64
			for _, r := range res.Acquired {
				for o := r.FirstOffset; o <= r.LastOffset; o++ {
					got = append(got, o)
					if r.DeliveryCount != 2 {
						t.Errorf("offset %d delivery count %d, want 2", o, r.DeliveryCount)
					}
				}
			}
			if len(got) != len(tc.offsets) {
				t.Fatalf("redelivered %v, want %v", got, tc.offsets)
			}
			for i := range got {
				if got[i] != tc.offsets[i] {
					t.Fatalf("redelivered %v, want %v", got, tc.offsets)
				}
			}
			// The first owner's ack of a released offset fails; of a kept
			// one it succeeds.
			if _, err := p.Acknowledge("a", now, []AckBatch{{tc.offsets[0], tc.offsets[0], []AckType{AckAccept}}}); err == nil {
				t.Error("ack of a released offset by its old owner succeeded")
			}
		})
	}
}
