package avro

import (
	"testing"

	"sharq/schema"
	"sharq/schema/internal/compattest"
)

// FuzzParse: any input parses or fails with an error, never a panic or a
// hang; what parses prints a canonical form that parses to itself, and
// normalizes, renders and checks against itself without incompatibilities.
// Seeds are the compatibility table's schemas.
func FuzzParse(f *testing.F) {
	compattest.Seeds(f, "testdata/compat.txt", "AVRO")
	f.Add(`{"type":"record","name":"R","fields":[{"name":"a","type":["null","R"],"default":null}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		for _, strict := range []bool{true, false} {
			p, err := parse(text, nil, strict)
			if err != nil {
				continue
			}
			q, err := parse(p.Canonical(), nil, strict)
			if err != nil {
				t.Fatalf("canonical %s does not parse: %v", p.Canonical(), err)
			}
			if q.Canonical() != p.Canonical() {
				t.Fatalf("canonical not stable:\n%s\n%s", p.Canonical(), q.Canonical())
			}
			_ = p.Normalized().Canonical()
			if _, err := p.Formatted("resolved"); err != nil {
				t.Fatal(err)
			}
			if msgs := p.BackwardCompatible(q); len(msgs) != 0 {
				t.Fatalf("%s cannot read itself: %v", p.Canonical(), msgs)
			}
		}
	})
}

// A schema registered with references fuzzed too: the reference text is
// the fuzzed input, the schema names its type.
func FuzzReferences(f *testing.F) {
	f.Add(`{"type":"record","name":"T","fields":[]}`)
	f.Add(`{"type":"enum","name":"T","symbols":["A"]}`)
	f.Fuzz(func(t *testing.T, ref string) {
		refs := []schema.ResolvedReference{{Name: "t", Type: "AVRO", Schema: ref}}
		p, err := Format.Parse(`{"type":"record","name":"Top","fields":[{"name":"t","type":"T"}]}`, refs)
		if err != nil {
			return
		}
		if q, err := Format.Parse(p.Canonical(), refs); err != nil || q.Canonical() != p.Canonical() {
			t.Fatalf("canonical %s with references: %v", p.Canonical(), err)
		}
		_ = p.Normalized()
	})
}
