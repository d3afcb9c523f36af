package protobuf

import (
	"testing"

	"sharq/schema/internal/compattest"
)

// FuzzParse: any input parses or fails with an error, never a panic or a
// hang; what parses prints a canonical text that parses to itself, and
// normalizes, renders and reads itself without incompatibilities. Seeds
// are the tables' schemas.
func FuzzParse(f *testing.F) {
	compattest.Seeds(f, "testdata/compat.txt", "PROTOBUF")
	for _, c := range loadDiffCases(f) {
		f.Add(c.Original)
		f.Add(c.Update)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Format.Parse(text, nil)
		if err != nil {
			return
		}
		q, err := Format.Parse(p.Canonical(), nil)
		if err != nil {
			t.Fatalf("canonical %q does not parse: %v", p.Canonical(), err)
		}
		if q.Canonical() != p.Canonical() {
			t.Fatalf("canonical not stable:\n%q\n%q", p.Canonical(), q.Canonical())
		}
		if msgs := q.BackwardCompatible(p); len(msgs) != 0 {
			t.Fatalf("%q cannot read itself: %v", p.Canonical(), msgs)
		}
		n := p.Normalized()
		if _, err := Format.Parse(n.Canonical(), nil); err != nil {
			t.Fatalf("normalized %q does not parse: %v", n.Canonical(), err)
		}
		for _, f := range []string{"serialized", "ignore_extensions"} {
			if _, err := p.Formatted(f); err != nil {
				t.Fatalf("%s of %q: %v", f, p.Canonical(), err)
			}
		}
	})
}
