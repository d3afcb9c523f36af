// Package avro is the registry's AVRO schema type, as Confluent's
// AvroSchema over Apache Avro 1.12's Java library behaves:
//
//   - Parse reads a schema with its references (each reference's named
//     types are known to the referring schema), with Avro's strict name
//     rules and default checks for a new registration (Confluent's
//     validateAsNew); ParseStored reads one already registered leniently.
//   - Canonical is Avro's Schema.toString with the references' types known:
//     the schema as Avro prints it, which is what Confluent stores and
//     compares.
//   - Normalized is Confluent's AvroSchema.normalize().
//   - BackwardCompatible is Avro's SchemaCompatibility reader/writer check
//     with every incompatibility in Confluent's wording.
//
// The parser is written here rather than taken from hamba/avro, whose
// schema model is built for encoding: it drops the order of properties,
// rewrites default values, validates names its own way and its
// compatibility checker stops at the first difference without Avro's
// types and paths, all of which the registry's answers show.
package avro

import (
	"fmt"

	"sharq/schema"
	"sharq/schema/internal/refs"
)

// Format is the AVRO schema type.
var Format schema.Format = format{}

type format struct{}

func (format) Type() string { return "AVRO" }

func (format) Parse(text string, refs []schema.ResolvedReference) (schema.Parsed, error) {
	return parse(text, refs, true)
}

// ParseStored parses a schema already in the registry (Confluent's
// validateAsNew=false): names are held only to Avro's UTF rules and
// defaults are not checked.
func (format) ParseStored(text string, refs []schema.ResolvedReference) (schema.Parsed, error) {
	return parse(text, refs, false)
}

// Parsed is a parsed Avro schema. It keeps the canonical text, not the
// tree: a registry holds every registered schema, and a tree costs about
// ten times the text, while checking compatibility (the only use of the
// tree after registering) is rare and parses in well under a millisecond.
type Parsed struct {
	canonical string
	refs      []schema.ResolvedReference
	// refTops are the full names of the references' top-level schemas,
	// which the canonical form names instead of defining.
	refTops []string
	strict  bool
}

func parse(text string, rs []schema.ResolvedReference, strict bool) (*Parsed, error) {
	root, tops, err := parseTree(text, rs, strict)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(tops))
	for _, t := range tops {
		known[t] = true
	}
	return &Parsed{canonical: toJSON(root, known, false), refs: rs, refTops: tops, strict: strict}, nil
}

// parseTree reads the references, then text, into one name space.
func parseTree(text string, rs []schema.ResolvedReference, strict bool) (*node, []string, error) {
	p := newParser(strict)
	flat := refs.Flatten(rs)
	tops := make([]string, 0, len(flat))
	for _, r := range flat {
		n, err := p.document(r.Schema)
		if err != nil {
			return nil, nil, fmt.Errorf("reference %s: %w", r.Name, err)
		}
		tops = append(tops, n.fullName())
	}
	root, err := p.document(text)
	if err != nil {
		return nil, nil, err
	}
	if !strict {
		if err := validateNames(root, make(map[*node]bool)); err != nil {
			return nil, nil, err
		}
	}
	return root, tops, nil
}

// tree parses the canonical text again; it parsed before, so it parses.
func (s *Parsed) tree() (*node, error) {
	root, _, err := parseTree(s.canonical, s.refs, s.strict)
	return root, err
}

// Canonical is the schema as Avro's Schema.toString prints it, named types
// from references named, not defined.
func (s *Parsed) Canonical() string { return s.canonical }

// Normalized is Confluent's normalize(): the normalized text parsed again.
func (s *Parsed) Normalized() schema.Parsed {
	root, err := s.tree()
	if err != nil {
		return s
	}
	n, err := parse(normalizedText(root, s.refTops), s.refs, s.strict)
	if err != nil {
		// The normalized text of a schema that parsed always parses; if it
		// does not, keep the schema as registered rather than lose it.
		return s
	}
	return n
}

// BackwardCompatible reports why s, reading, cannot read data written with
// previous.
func (s *Parsed) BackwardCompatible(previous schema.Parsed) []string {
	prev, ok := previous.(*Parsed)
	if !ok {
		return []string{"Incompatible because of different schema type"}
	}
	reader, err := s.tree()
	if err != nil {
		return []string{"Unexpected exception during compatibility check: " + err.Error()}
	}
	writer, err := prev.tree()
	if err != nil {
		return []string{"Unexpected exception during compatibility check: " + err.Error()}
	}
	list, failure := checkReaderWriter(reader, writer)
	if failure != "" {
		return []string{"Unexpected exception during compatibility check: " + failure}
	}
	out := make([]string, len(list))
	for i, in := range list {
		out[i] = in.confluent()
	}
	return out
}

// Formatted renders "" (canonical) and "resolved" (every referenced type
// defined inline, Avro's plain toString).
func (s *Parsed) Formatted(format string) (string, error) {
	switch format {
	case "":
		return s.canonical, nil
	case "resolved":
		root, err := s.tree()
		if err != nil {
			return "", err
		}
		return toJSON(root, nil, false), nil
	}
	return "", fmt.Errorf("unsupported format %q for AVRO", format)
}
