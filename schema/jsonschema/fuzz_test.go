package jsonschema

import (
	"testing"

	"sharq/schema/internal/compattest"
)

// FuzzParse: any input parses or fails with an error, never a panic or a
// hang; what parses has a canonical form that parses to itself and a
// schema that can read itself. Seeds are the tables' schemas.
func FuzzParse(f *testing.F) {
	compattest.Seeds(f, "testdata/compat.txt", "JSON")
	for i, c := range loadDiffCases(f) {
		if i%4 == 0 {
			f.Add(c.original)
			f.Add(c.update)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Format.Parse(text, nil)
		if err != nil {
			return
		}
		q, err := Format.Parse(p.Canonical(), nil)
		if err != nil || q.Canonical() != p.Canonical() {
			t.Fatalf("canonical %s: %v", p.Canonical(), err)
		}
		n := p.Normalized()
		if msgs := q.BackwardCompatible(p); len(msgs) != 0 {
			t.Fatalf("%s cannot read itself: %v", p.Canonical(), msgs)
		}
		_ = n.BackwardCompatible(p)
		_ = p.BackwardCompatible(n)
	})
}
