package share

import (
	"fmt"
	"testing"
	"time"
)

// After a restart a record whose persisted count reached the limit is
// archived by the next acquisition, or dead-lettered (Archiving, "delivery
// count exceeded") when the group has a DLQ; without the mode it is
// delivered again, as Kafka does.
func TestPersistCountsArchiveSpent(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       Config
		acquired  string // AcquiredRecords
		spso      int64
		archiving bool
	}{
		{"persisted counts", Config{DeliveryCountLimit: 2, PersistCounts: true}, "[{1 1 1}]", 1, false},
		{"persisted counts with a DLQ", Config{DeliveryCountLimit: 2, PersistCounts: true, DLQ: true}, "[{1 1 1}]", 0, true},
		// Kafka's: the record delivered twice before the crash comes a 3rd time.
		{"Kafka's (mode off)", Config{DeliveryCountLimit: 2}, "[{0 0 3}]", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := State{StartOffset: 0, Batches: []StateBatch{{FirstOffset: 0, LastOffset: 0, State: Available, DeliveryCount: 2}}}
			p, err := Restore(tc.cfg, &st)
			if err != nil {
				t.Fatal(err)
			}
			var src MemSource
			src.Append(2)
			var res AcquireResult
			eff, err := p.Acquire("m", time.UnixMilli(0), AcquireRequest{}, &src, &res)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(res.Acquired); got != tc.acquired || eff.Archiving != tc.archiving || p.StartOffset() != tc.spso {
				t.Fatalf("acquired %s, SPSO %d, effects %+v; want %s, SPSO %d", got, p.StartOffset(), eff, tc.acquired, tc.spso)
			}
			if tc.cfg.PersistCounts && !eff.Durable {
				t.Fatalf("effects %+v: not durable", eff)
			}
			if tc.archiving {
				if a := p.Archiving(nil); len(a) != 1 || a[0].Cause != CauseDeliveryCountExceeded || a[0].DeliveryCount != 2 {
					t.Fatalf("archiving %+v", a)
				}
			}
		})
	}
}
