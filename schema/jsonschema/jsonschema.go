// Package jsonschema is the registry's JSON schema type, as Confluent's
// JsonSchema behaves:
//
//   - Parse reads a schema (drafts 4, 6, 7, 2019-09 and 2020-12 by its
//     $schema, draft 7 without one) with its references, each reachable by
//     its reference name as a $ref URL, and checks it against its draft's
//     meta-schema's rules and that every $ref resolves (validate.go).
//   - Canonical is the JSON as Jackson writes it back (Confluent's
//     canonicalString): key order kept, no whitespace, numbers as read.
//   - Normalized is the same with every object's keys sorted.
//   - BackwardCompatible is Confluent's JSON Schema diff (SchemaDiff over
//     everit's schema model, which this package rebuilds), with the open,
//     partially open and closed content models, under Confluent's default
//     STRICT policy.
package jsonschema

import (
	"fmt"
	"net/url"

	"sharq/schema"
	"sharq/schema/internal/jsontree"
	"sharq/schema/internal/refs"
)

// Format is the JSON schema type.
var Format schema.Format = format{}

type format struct{}

func (format) Type() string { return "JSON" }

// rootURL is the base a schema without an $id has (Confluent loads the
// modern drafts under mem://input too).
const rootURL = "mem://input"

// Parsed is a parsed JSON schema. It keeps the canonical text and the
// references, not the model: the model is rebuilt for a compatibility
// check, the only thing that needs it.
type Parsed struct {
	canonical string
	refs      []schema.ResolvedReference
}

func (format) Parse(text string, rs []schema.ResolvedReference) (schema.Parsed, error) {
	root, err := jsontree.Parse(text, jsontree.Options{})
	if err != nil {
		return nil, fmt.Errorf("Invalid JSON: %w", err)
	}
	if root.Kind != jsontree.Object && root.Kind != jsontree.Bool {
		return nil, fmt.Errorf("Invalid JSON schema: expected an object or boolean at the root, found %s", nodeType(root))
	}
	docs, err := documents(root, rs)
	if err != nil {
		return nil, err
	}
	if err := validate(draftOf(root), docs); err != nil {
		return nil, fmt.Errorf("Invalid schema: %w", err)
	}
	return &Parsed{canonical: jsontree.Compact(root, jsontree.Decimals), refs: rs}, nil
}

// nodeType is Jackson's JsonNodeType name.
func nodeType(v *jsontree.Value) string {
	switch v.Kind {
	case jsontree.Null:
		return "NULL"
	case jsontree.Number:
		return "NUMBER"
	case jsontree.String:
		return "STRING"
	case jsontree.Array:
		return "ARRAY"
	}
	return "OBJECT"
}

// documents lays out the root and its references at the URLs $refs name
// them by: a reference's name resolved against the root's base ($id, or
// mem://input).
func documents(root *jsontree.Value, rs []schema.ResolvedReference) ([]document, error) {
	base, _ := url.Parse(rootURL)
	d := draftOf(root)
	if id, ok := root.Get(d.idKey()).Text(); ok {
		if u, err := url.Parse(id); err == nil {
			base = base.ResolveReference(u)
		}
	}
	docs := []document{{url: rootURL, doc: root}}
	for _, r := range refs.Flatten(rs) {
		v, err := jsontree.Parse(r.Schema, jsontree.Options{})
		if err != nil {
			return nil, fmt.Errorf("reference %s: Invalid JSON: %w", r.Name, err)
		}
		u, err := url.Parse(r.Name)
		if err != nil {
			return nil, fmt.Errorf("reference %s: invalid URL: %w", r.Name, err)
		}
		abs := base.ResolveReference(u)
		abs.Fragment, abs.RawFragment = "", ""
		docs = append(docs, document{url: abs.String(), doc: v})
	}
	return docs, nil
}

// model builds the everit model of the canonical text and its references.
func (s *Parsed) model() (*jnode, error) {
	root, err := jsontree.Parse(s.canonical, jsontree.Options{})
	if err != nil {
		return nil, err
	}
	docs, err := documents(root, s.refs)
	if err != nil {
		return nil, err
	}
	l := newLoader(draftOf(root))
	for _, d := range docs {
		u, err := url.Parse(d.url)
		if err != nil {
			return nil, err
		}
		l.index(d.doc, u)
	}
	return l.load(root), nil
}

// Canonical is the schema as Jackson writes it: key order kept, no
// whitespace.
func (s *Parsed) Canonical() string { return s.canonical }

// Normalized is the schema with every object's keys sorted (Confluent's
// normalize reads the canonical text into sorted nodes).
func (s *Parsed) Normalized() schema.Parsed {
	root, err := jsontree.Parse(s.canonical, jsontree.Options{})
	if err != nil {
		return s
	}
	return &Parsed{canonical: jsontree.Compact(jsontree.Sorted(root), jsontree.Decimals), refs: s.refs}
}

// BackwardCompatible reports why s cannot read what previous could: every
// difference Confluent's STRICT policy counts as incompatible.
func (s *Parsed) BackwardCompatible(previous schema.Parsed) []string {
	prev, ok := previous.(*Parsed)
	if !ok {
		return []string{"Incompatible because of different schema type"}
	}
	return backward(prev, s, compatibleStrict)
}

// BackwardCompatibleLenient is BackwardCompatible under Confluent's
// LENIENT compatibility policy (a subject's compatibilityPolicy), which
// also accepts the open-content-model changes STRICT rejects: adding an
// optional property to an open model, removing one from a closed model,
// narrowing or removing additionalProperties.
func (s *Parsed) BackwardCompatibleLenient(previous schema.Parsed) []string {
	prev, ok := previous.(*Parsed)
	if !ok {
		return []string{"Incompatible because of different schema type"}
	}
	return backward(prev, s, compatibleLenient)
}

func backward(original, update *Parsed, compatible map[change]bool) []string {
	o, err := original.model()
	if err != nil {
		return []string{"Unexpected exception during compatibility check: " + err.Error()}
	}
	u, err := update.model()
	if err != nil {
		return []string{"Unexpected exception during compatibility check: " + err.Error()}
	}
	diffs, ok := compareSchemas(compatible, o, u)
	if !ok {
		return []string{"Unexpected exception during compatibility check: " + errTooComplex}
	}
	var out []string
	for _, d := range diffs {
		if !compatible[d.typ] {
			out = append(out, d.message())
		}
	}
	return out
}

// Formatted renders "" (canonical); Confluent's JSON type knows no other
// format.
func (s *Parsed) Formatted(format string) (string, error) {
	if format == "" {
		return s.canonical, nil
	}
	return "", fmt.Errorf("unsupported format %q for JSON", format)
}
