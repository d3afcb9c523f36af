package share

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkAcquireFullWindow: one acquisition on a share-partition whose
// 2000-offset window holds 1000 keys (round-robin, batches of 100), 900 of
// them acquired by another member, everything else Available. Unordered,
// it takes the 500 Available records at the window's end in whole batches
// (then they are released again, outside the timer); key-ordered, the
// records left are all behind a held or queued key except keys 900-999, so
// each acquisition scans the window's 2000 keys. The difference is the CPU
// the key-ordered scan costs per ShareFetch at its worst.
func BenchmarkAcquireFullWindow(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		b.Run(fmt.Sprintf("keyed=%v", keyed), func(b *testing.B) {
			p := New(Config{MaxRecordLocks: 2000, RecordLockDuration: time.Hour, KeyOrdered: keyed})
			p.Initialise(0, 0)
			src := MemSource{KeyOf: map[int64]string{}}
			for i := 0; i < 20; i++ {
				base := src.Append(100)
				for o := base; o < base+100; o++ {
					src.KeyOf[o] = fmt.Sprint("key-", o%1000)
				}
			}
			var res AcquireResult
			now := time.Unix(1000, 0)
			if _, err := p.Acquire("holder", now, AcquireRequest{MaxRecords: 900, Mode: RecordLimit}, &src, &res); err != nil || res.Count != 900 {
				b.Fatalf("holder acquired %d: %v", res.Count, err)
			}
			// Everything else enters the window (Available).
			p.Acquire("filler", now, AcquireRequest{MaxRecords: 2000}, &src, &res)
			p.ReleaseMember("filler", now, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := p.Acquire("m", now, AcquireRequest{MaxRecords: 100}, &src, &res); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				p.ReleaseMember("m", now, nil)
				b.StartTimer()
			}
		})
	}
}
