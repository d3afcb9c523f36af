// Package protobuf is the registry's PROTOBUF schema type, as Confluent's
// ProtobufSchema behaves:
//
//   - Parse reads .proto text (or a base64 FileDescriptorProto, as
//     Confluent accepts) with its imports resolved from the references by
//     import path and the google/protobuf well-known files, and compiles it
//     with the linker here (parse.go, link.go), so a schema that does not
//     link is an error.
//   - Canonical is the file re-printed from wire's element model the way
//     Confluent's ProtobufSchemaUtils prints it (the text Confluent stores).
//   - Normalized is Confluent's normalize(): types fully qualified, fields,
//     constants, reserved ranges and options sorted.
//   - BackwardCompatible is Confluent's protobuf SchemaDiff with its set of
//     compatible changes.
//   - Formatted knows "serialized" (base64 FileDescriptorProto) and
//     "ignore_extensions".
package protobuf

import (
	"encoding/base64"
	"fmt"
	"strings"

	"sharq/schema"
	"sharq/schema/internal/refs"
)

// Format is the PROTOBUF schema type.
var Format schema.Format = format{}

type format struct{}

func (format) Type() string { return "PROTOBUF" }

// Parsed is a parsed Protobuf schema: its canonical text and references.
// The element models are rebuilt for a compatibility check or a format,
// which keeps a registered schema at the size of its text.
type Parsed struct {
	canonical string
	refs      []schema.ResolvedReference
}

func (format) Parse(text string, rs []schema.ResolvedReference) (schema.Parsed, error) {
	f, err := parseFile(text)
	if err != nil {
		return nil, err
	}
	if _, err := compile(f, rs); err != nil {
		return nil, err
	}
	p := printer{ctx: newContext()}
	return &Parsed{canonical: p.file(f), refs: rs}, nil
}

// parseFile reads .proto text into its element model, or a base64
// FileDescriptorProto, printed and read again as text.
func parseFile(text string) (*protoFile, error) {
	f, perr := parseProto(mainName, text)
	if perr == nil {
		return f, nil
	}
	if fd, ok := decodeDescriptor(text); ok {
		p := printer{ctx: newContext()}
		f, err := parseProto(mainName, p.file(fd))
		if err != nil {
			return nil, fmt.Errorf("Could not parse Protobuf - %w", err)
		}
		return f, nil
	}
	return nil, fmt.Errorf("Could not parse Protobuf - %w", perr)
}

// mainName is the file name the schema compiles as; its errors name it.
const mainName = "schema.proto"

// decodeDescriptor reads a base64 FileDescriptorProto into the element
// model.
func decodeDescriptor(text string) (*protoFile, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	m, err := decodeMsg(b)
	if err != nil {
		return nil, false
	}
	f, err := fromDescriptor(m)
	if err != nil {
		return nil, false
	}
	return f, true
}

// compile links the schema with its references and the well-known
// imports; the linker's errors are the schema's.
func compile(f *protoFile, rs []schema.ResolvedReference) (*lfile, error) {
	byName := make(map[string]string)
	for _, r := range refs.Flatten(rs) {
		byName[r.Name] = r.Schema
	}
	src := func(path string) (*protoFile, error) {
		text, ok := byName[path]
		if !ok {
			if wf := wktFile(path); wf != nil {
				return wf, nil
			}
			return nil, fmt.Errorf("%s: import %q is not a reference of the schema", mainName, path)
		}
		rf, err := parseProto(path, text)
		if err == nil {
			return rf, nil
		}
		if fd, ok := decodeDescriptor(text); ok {
			return fd, nil
		}
		return nil, err
	}
	lf, _, err := link(mainName, f, src)
	return lf, err
}

// model is the schema's element model with its dependencies', for type
// resolution.
func (s *Parsed) model() (*protoFile, []dependency, error) {
	f, err := parseFile(s.canonical)
	if err != nil {
		return nil, nil, err
	}
	var deps []dependency
	for _, r := range refs.Flatten(s.refs) {
		rf, err := parseFile(r.Schema)
		if err != nil {
			return nil, nil, fmt.Errorf("reference %s: %w", r.Name, err)
		}
		deps = append(deps, dependency{file: rf, from: r.Schema})
	}
	return f, append(deps, knownDependencies()...), nil
}

// Canonical is the schema as Confluent prints it from wire's model.
func (s *Parsed) Canonical() string { return s.canonical }

// Normalized is Confluent's normalize: its normalized text is the new
// schema's canonical text.
func (s *Parsed) Normalized() schema.Parsed {
	f, deps, err := s.model()
	if err != nil {
		return s
	}
	c := newContext()
	c.collect(deps, f, original)
	p := printer{normalize: true, ctx: c}
	text := p.file(f)
	if p.err != nil {
		return s
	}
	return &Parsed{canonical: text, refs: s.refs}
}

// BackwardCompatible is Confluent's SchemaDiff.compare(previous, s), the
// differences outside its compatible set.
func (s *Parsed) BackwardCompatible(previous schema.Parsed) []string {
	prev, ok := previous.(*Parsed)
	if !ok {
		return []string{"Incompatible because of different schema type"}
	}
	of, odeps, err := prev.model()
	if err != nil {
		return []string{"Unexpected exception during compatibility check: " + err.Error()}
	}
	uf, udeps, err := s.model()
	if err != nil {
		return []string{"Unexpected exception during compatibility check: " + err.Error()}
	}
	c := newContext()
	c.collect(odeps, of, original)
	c.collect(udeps, uf, update)
	compareFiles(c, of, uf)
	var out []string
	for _, d := range c.diffs {
		if !compatibleChanges[d.typ] {
			out = append(out, d.message())
		}
	}
	return out
}

// Formatted renders "" (canonical), "ignore_extensions" (without custom
// options and extensions) and "serialized" (the compiled
// FileDescriptorProto in base64).
func (s *Parsed) Formatted(format string) (string, error) {
	switch format {
	case "":
		return s.canonical, nil
	case "ignore_extensions":
		f, err := parseFile(s.canonical)
		if err != nil {
			return "", err
		}
		p := printer{ignoreExtensions: true, ctx: newContext()}
		return p.file(f), nil
	case "serialized":
		f, err := parseFile(s.canonical)
		if err != nil {
			return "", err
		}
		lf, err := compile(f, s.refs)
		if err != nil {
			return "", err
		}
		// Confluent's DynamicSchema names the file "default".
		return base64.StdEncoding.EncodeToString(encodeFile(lf, "default")), nil
	}
	return "", fmt.Errorf("unsupported format %q for PROTOBUF", format)
}

// jsonCamel is protoc's default json_name: underscores dropped, the letter
// after each capitalized.
func jsonCamel(name string) string {
	var sb strings.Builder
	upper := false
	for _, r := range name {
		if r == '_' {
			upper = true
			continue
		}
		if upper && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		upper = false
		sb.WriteRune(r)
	}
	return sb.String()
}
