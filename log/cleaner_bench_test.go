package log

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// BenchmarkClean measures a cleaning pass over a dirty log on the real
// file system: 32 MiB of 100-byte or 1 KiB values in producer-sized
// uncompressed batches (16 KiB), keys drawn so that 10 % of the records
// are the live (latest) ones. MB/s is of the log cleaned (bytes before).
func BenchmarkClean(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("value=%dB", size), func(b *testing.B) {
			const total = 32 << 20
			perBatch := max(16<<10/(size+30), 1)
			records := total / (size + 30)
			keys := records / 10
			value := make([]byte, size)
			cfg := Config{SegmentBytes: benchSegmentBytes, RetentionMs: -1, CleanupCompact: true, IndexIntervalBytes: 4096}
			var st CleanStats
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				dir, fsys := b.TempDir(), FS(OSFS{})
				if memBench {
					dir, fsys = "/data", NewMemFS()
				}
				m, err := NewManager(dir, Options{FS: fsys, Logger: testLogger(b), Cleaner: CleanerOptions{Disable: true}})
				if err != nil {
					b.Fatal(err)
				}
				l, err := m.Open("bench", 0, cfg)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				recs := make([]kv, perBatch)
				var logBytes int64
				for n := 0; n < records; n += perBatch {
					for j := range recs {
						// every key once in the last tenth: 10 % live
						k := rng.IntN(keys)
						if n+j >= records-keys {
							k = n + j - (records - keys)
						}
						recs[j] = kv{[]byte(fmt.Sprintf("key-%09d", k)), value}
					}
					batch := keyedBatch(recs, 1000, 0, -1, -1, -1, false)
					logBytes += int64(len(batch))
					if _, err := l.Append(batch, 0); err != nil {
						b.Fatal(err)
					}
				}
				// a last segment to hold the active one, so all of the data is sealed
				l.SetConfig(Config{SegmentBytes: 1, RetentionMs: -1, CleanupCompact: true})
				if _, err := l.Append(keyedBatch([]kv{{[]byte("end"), value}}, 1000, 0, -1, -1, -1, false), 0); err != nil {
					b.Fatal(err)
				}
				if err := l.Flush(); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(logBytes)
				b.StartTimer()
				st, err = l.Clean(time.Now(), CleanerOptions{}, true)
				if err != nil || !st.Cleaned {
					b.Fatalf("clean: %+v %v", st, err)
				}
				b.StopTimer()
				m.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(st.BytesWritten)/float64(st.BytesRead/2+1), "kept-ratio")
		})
	}
}

// memBench runs BenchmarkClean on the in-memory file system (the cleaner's
// CPU cost alone), with SHARQ_CLEAN_BENCH_MEM=1.
var memBench = os.Getenv("SHARQ_CLEAN_BENCH_MEM") == "1"

// benchSegmentBytes is segment.bytes of BenchmarkClean's log (1 MiB, the
// smallest Kafka allows, as in the side-by-side bench; more segments means
// more groups to swap).
var benchSegmentBytes = int64(1 << 20)
