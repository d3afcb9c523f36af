package broker

import (
	"context"
	"testing"
)

// BenchmarkShareFetchModes is BenchmarkShareFetch (one ShareFetch
// accepting the previous 10 records and acquiring the next 10) with each
// of sharq's share group modes: persisted delivery counts add one durable
// journal write per acquiring request; key-ordered delivery parses the
// records' keys (null here) and scans the window. Run with -count N to
// interleave them.
func BenchmarkShareFetchModes(b *testing.B) {
	for _, m := range []struct {
		name string
		cfg  map[string]string
	}{
		{"default", nil},
		{"persist-counts", map[string]string{"sharq.share.delivery.count.persist": "true"}},
		{"key-ordered", map[string]string{"sharq.share.key.ordered.enable": "true"}},
	} {
		b.Run(m.name, func(b *testing.B) {
			const chunk = 2000
			fb := newShareFetchBench(b, chunk)
			if m.cfg != nil {
				if err := fb.s.meta.AlterGroupConfigs(context.Background(), "bench-group", m.cfg, nil); err != nil {
					b.Fatal(err)
				}
			}
			left := chunk - 1
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if left == 0 {
					b.StopTimer()
					p := fb.s.partitionFor("bench", 0)
					batch := benchBatch(10, 100)
					for j := 0; j < chunk; j++ {
						benchAppend(b, p, batch)
					}
					left = chunk
					b.StartTimer()
				}
				fb.fetch(b)
				left--
			}
		})
	}
}
