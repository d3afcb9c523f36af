// Package refs orders a schema's resolved references the way Confluent's
// AbstractSchemaProvider.resolveReferences does, so each format parses
// them in the same order Confluent's does.
package refs

import "sharq/schema"

// Flatten returns the transitive closure of refs, depth first with each
// reference's own references before it, each name once (the first
// occurrence wins). A cycle ends at a name already seen.
func Flatten(refs []schema.ResolvedReference) []schema.ResolvedReference {
	var out []schema.ResolvedReference
	seen := make(map[string]bool)
	var walk func([]schema.ResolvedReference)
	walk = func(rs []schema.ResolvedReference) {
		for _, r := range rs {
			if seen[r.Name] {
				continue
			}
			seen[r.Name] = true
			walk(r.References)
			out = append(out, schema.ResolvedReference{Name: r.Name, Type: r.Type, Schema: r.Schema})
		}
	}
	walk(refs)
	return out
}
