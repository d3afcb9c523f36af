package log

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"sharq/log/recordbatch"
)

// benchBatch builds an uncompressed batch of about size bytes.
func benchBatch(size int) []byte {
	s := plain(size / 110)
	s.valueSize = 100
	return makeBatch(s)
}

var benchSizes = []int{1 << 10, 16 << 10}

// BenchmarkAppend measures Append on the real file system. "pagecache"
// leaves flushing to the OS (Kafka's default), "sync" is flush.messages=1
// with a single writer, so every append pays one fsync. Compare with
// BenchmarkPlainWrite, which writes the same bytes with plain sequential
// write(2) calls (and fsync for "sync").
func BenchmarkAppend(b *testing.B) {
	for _, size := range benchSizes {
		for _, mode := range []string{"pagecache", "sync"} {
			b.Run(fmt.Sprintf("%dKB/%s", size>>10, mode), func(b *testing.B) {
				cfg := Config{SegmentBytes: 256 << 20, RetentionBytes: -1, RetentionMs: -1}
				if mode == "sync" {
					cfg.FlushMessages = 1
				}
				m, err := NewManager(b.TempDir(), Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				l, err := m.Open("bench", 0, cfg)
				if err != nil {
					b.Fatal(err)
				}
				batch := benchBatch(size)
				b.SetBytes(int64(len(batch)))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := l.Append(batch, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkAppendSyncParallel is always-sync mode with concurrent
// producers: group commit shares each fsync among them.
func BenchmarkAppendSyncParallel(b *testing.B) {
	m, err := NewManager(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	l, err := m.Open("bench", 0, Config{FlushMessages: 1})
	if err != nil {
		b.Fatal(err)
	}
	proto := benchBatch(1 << 10)
	b.SetBytes(int64(len(proto)))
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		batch := append([]byte(nil), proto...)
		for pb.Next() {
			if _, err := l.Append(batch, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	syncs, _ := l.SyncStats()
	b.ReportMetric(float64(b.N)/float64(max(syncs, 1)), "appends/fsync")
}

// BenchmarkPlainWrite is the baseline: the same bytes written with
// sequential write(2) calls to one file, with an fsync after each for
// "sync".
func BenchmarkPlainWrite(b *testing.B) {
	for _, size := range benchSizes {
		for _, mode := range []string{"pagecache", "sync"} {
			b.Run(fmt.Sprintf("%dKB/%s", size>>10, mode), func(b *testing.B) {
				f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				batch := benchBatch(size)
				b.SetBytes(int64(len(batch)))
				b.ReportAllocs()
				b.ResetTimer()
				written := int64(0)
				for i := 0; i < b.N; i++ {
					if _, err := f.Write(batch); err != nil {
						b.Fatal(err)
					}
					written += int64(len(batch))
					if mode == "sync" {
						if err := f.Sync(); err != nil {
							b.Fatal(err)
						}
					}
					if written > 256<<20 { // same file size bound as the log's segments
						b.StopTimer()
						f.Truncate(0)
						f.Seek(0, 0)
						written = 0
						b.StartTimer()
					}
				}
			})
		}
	}
}

// benchLog builds a log of n 1 KB batches in 4 MB segments.
func benchLog(b *testing.B, n int) *Log {
	m, err := NewManager(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	l, err := m.Open("bench", 0, Config{SegmentBytes: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	batch := benchBatch(1 << 10)
	h := parseHeader(batch)
	span := h.MaxTimestamp - h.BaseTimestamp
	for i := 0; i < n; i++ {
		// batch i starts at timestamp 10*i
		binary.BigEndian.PutUint64(batch[offBaseTimestamp:], uint64(10*i))
		binary.BigEndian.PutUint64(batch[offMaxTimestamp:], uint64(10*i)+uint64(span))
		fixCRC(batch)
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// BenchmarkRead reads 1 MB fetches: "tail" from the active segment (the
// consumer keeping up), "sealed" from random offsets in sealed segments,
// looked up through their .index files (the OS page cache is warm; a
// truly cold read would add disk latency, which a benchmark cannot reset
// without privileges).
func BenchmarkRead(b *testing.B) {
	l := benchLog(b, 40_000)
	leo := l.LogEndOffset()
	active := l.mu.segs[len(l.mu.segs)-1].base
	dst := make([]byte, 0, 2<<20)
	b.Run("tail", func(b *testing.B) {
		b.ReportAllocs()
		var n int64
		for i := 0; i < b.N; i++ {
			off := active + int64(i)%(leo-active)
			out, err := l.Read(off, 1<<20, dst)
			if err != nil {
				b.Fatal(err)
			}
			n += int64(len(out))
		}
		b.SetBytes(n / int64(b.N))
	})
	b.Run("sealed", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		var n int64
		for i := 0; i < b.N; i++ {
			out, err := l.Read(rng.Int64N(active), 1<<20, dst)
			if err != nil {
				b.Fatal(err)
			}
			n += int64(len(out))
		}
		b.SetBytes(n / int64(b.N))
	})
}

// BenchmarkLookup finds one batch by offset (Read with a 1-byte limit) and
// an offset by timestamp, at random points of a multi-segment log.
func BenchmarkLookup(b *testing.B) {
	l := benchLog(b, 40_000)
	leo := l.LogEndOffset()
	dst := make([]byte, 0, 64<<10)
	b.Run("offset", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < b.N; i++ {
			if _, err := l.Read(rng.Int64N(leo), 1, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("time", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < b.N; i++ {
			if _, _, err := l.OffsetForTimestamp(rng.Int64N(400_000)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkValidateBatch is the CPU cost of validating a batch (CRC-32C
// plus the record walk) without any I/O.
func BenchmarkValidateBatch(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			batch := benchBatch(size)
			lim := validateLimits{maxBytes: 1 << 20}
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := validateBatch(batch, &lim); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScanRecords is the record walk alone (no CRC), per record.
func BenchmarkScanRecords(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			batch := benchBatch(size)
			h := parseHeader(batch)
			p := batch[batchHeaderSize:]
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := recordbatch.ScanRecords(p, h.RecordCount, h.BaseTimestamp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(h.RecordCount), "ns/record")
		})
	}
}

// BenchmarkAppendVsWrite compares Append (page-cache mode) with a plain
// sequential write(2) of the same bytes to a file created with the same
// flags in the same directory tree, neither fsynced. The two run in
// alternating chunks of the same b.N operations, and every other chunk
// pair starts with the write, so both see the same machine state and
// neither always runs first. It reports the throughput ratio append/write
// (the target is >= 0.8) two ways:
//
//   - append/write is the median over chunk pairs of write time / append
//     time. On a shared machine a stall of a few milliseconds (writeback,
//     another process) lands on whichever half is running and swings a
//     ratio of totals far more than the code under test does: this
//     harness with a plain pwrite in place of Append gave totals from
//     0.88 to 1.16 (0.59 to 1.74 with 256-operation chunks) but medians
//     within 1.02-1.03. Chunks are short (32 operations) so that any cost
//     recurring more often than that is in every pair.
//   - append/write-sum is the ratio of the summed times, kept to show the
//     spread.
func BenchmarkAppendVsWrite(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			dir := b.TempDir()
			m, err := NewManager(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			l, err := m.Open("bench", 0, Config{SegmentBytes: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, "plain"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			batch := benchBatch(size)
			appendN := func(n int) time.Duration {
				start := time.Now()
				for i := 0; i < n; i++ {
					if _, err := l.Append(batch, 0); err != nil {
						b.Fatal(err)
					}
				}
				return time.Since(start)
			}
			writeN := func(n int) time.Duration {
				start := time.Now()
				for i := 0; i < n; i++ {
					if _, err := f.Write(batch); err != nil {
						b.Fatal(err)
					}
				}
				return time.Since(start)
			}
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			var appendNs, writeNs time.Duration
			const chunk = 32
			ratios := make([]float64, 0, b.N/chunk+1)
			b.ResetTimer()
			for done, k := 0, 0; done < b.N; done, k = done+chunk, k+1 {
				n := min(chunk, b.N-done)
				var a, w time.Duration
				if k%2 == 0 {
					a = appendN(n)
					w = writeN(n)
				} else {
					w = writeN(n)
					a = appendN(n)
				}
				appendNs += a
				writeNs += w
				ratios = append(ratios, float64(w)/float64(a))
			}
			b.StopTimer()
			slices.Sort(ratios)
			b.ReportMetric(float64(appendNs.Nanoseconds())/float64(b.N), "append-ns/op")
			b.ReportMetric(float64(writeNs.Nanoseconds())/float64(b.N), "write-ns/op")
			b.ReportMetric(ratios[len(ratios)/2], "append/write")
			b.ReportMetric(float64(writeNs)/float64(appendNs), "append/write-sum")
		})
	}
}
