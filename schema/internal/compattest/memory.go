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

// MemoryTest measures the heap n parsed schemas made by gen keep (a
// registry holds every registered schema) and fails past 64 KiB each.
func MemoryTest(t *testing.T, f schema.Format, n int, gen func(i int) string) {
	t.Helper()
	if testing.Short() {
		t.Skip("allocates many schemas")
	}
	per := RetainedBytes(t, f, n, gen)
	t.Logf("%.0f bytes retained per parsed schema (%d bytes of text), %d schemas", per, len(gen(0)), n)
	if per > 64<<10 {
		t.Errorf("a parsed schema keeps %.0f bytes", per)
	}
}

// BenchmarkParse times parsing text.
func BenchmarkParse(b *testing.B, f schema.Format, text string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := f.Parse(text, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBackwardCompatible times checking text against itself.
func BenchmarkBackwardCompatible(b *testing.B, f schema.Format, text string) {
	p, err := f.Parse(text, nil)
	if err != nil {
		b.Fatal(err)
	}
	q, _ := f.Parse(text, nil)
	b.ReportAllocs()
	for b.Loop() {
		if msgs := p.BackwardCompatible(q); len(msgs) != 0 {
			b.Fatal(msgs)
		}
	}
}

// SameMultiset reports whether a and b hold the same strings as many
// times each, in any order.
func SameMultiset(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := make(map[string]int)
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
		if count[x] < 0 {
			return false
		}
	}
	return true
}

// Seeds adds every schema of a table file to a fuzz corpus.
func Seeds(f *testing.F, path, schemaType string) {
	f.Helper()
	cases, err := Load(path, schemaType)
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.New)
		for _, o := range c.Old {
			f.Add(o)
		}
	}
}
