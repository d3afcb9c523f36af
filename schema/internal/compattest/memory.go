package compattest

import (
	"runtime"
	"testing"

	"sharq/schema"
)

// RetainedBytes parses n schemas made by gen and returns the heap they keep
// alive, per schema: what a registry holding n registrations pays.
func RetainedBytes(t testing.TB, f schema.Format, n int, gen func(i int) string) float64 {
	t.Helper()
	keep := make([]schema.Parsed, n)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = gen(i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, s := range texts {
		p, err := f.Parse(s, nil)
		if err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		_ = p.Canonical()
		keep[i] = p
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	runtime.KeepAlive(texts)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}
