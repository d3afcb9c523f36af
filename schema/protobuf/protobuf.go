// Package protobuf is the registry's PROTOBUF schema type, as Confluent's
// ProtobufSchema behaves:
//
//   - Parse reads .proto text (or a base64 FileDescriptorProto, as
//     Confluent accepts) with its imports resolved from the references by
//     import path and the google/protobuf well-known files, and compiles it
//     with bufbuild/protocompile, so a schema that does not link is an error.
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
	stdcontext "context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/ast"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

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
	f, node, err := parseFile(text)
	if err != nil {
		return nil, err
	}
	if _, err := compile(node, rs); err != nil {
		return nil, err
	}
	p := printer{ctx: newContext()}
	return &Parsed{canonical: p.file(f), refs: rs}, nil
}

// parseFile reads .proto text into its element model and AST, or a base64
// FileDescriptorProto, printed and read again as text.
func parseFile(text string) (*protoFile, *ast.FileNode, error) {
	node, perr := parseAST(mainName, text)
	if perr == nil {
		return fromAST(node), node, nil
	}
	if fd, ok := decodeDescriptor(text); ok {
		p := printer{ctx: newContext()}
		node, err := parseAST(mainName, p.file(fromDescriptor(fd)))
		if err != nil {
			return nil, nil, fmt.Errorf("Could not parse Protobuf - %w", err)
		}
		return fromAST(node), node, nil
	}
	return nil, nil, fmt.Errorf("Could not parse Protobuf - %w", perr)
}

// mainName is the file name the schema compiles as; its errors name it.
const mainName = "schema.proto"

// parseAST parses and checks a file on its own (the checks protoc makes
// before linking: tags present and in range, names, labels, syntax), so the
// AST is complete: protocompile's parser recovers from some errors with
// nodes missing and reports them only here.
func parseAST(name, text string) (*ast.FileNode, error) {
	h := reporter.NewHandler(nil)
	node, err := parser.Parse(name, strings.NewReader(text), h)
	if err != nil {
		return nil, err
	}
	if _, err := parser.ResultFromAST(node, true, h); err != nil {
		return nil, err
	}
	return node, nil
}

func decodeDescriptor(text string) (*descriptorpb.FileDescriptorProto, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	fd := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(b, fd); err != nil {
		return nil, false
	}
	return fd, true
}

// compile links the schema with its references and the well-known
// imports; protocompile's errors are the schema's.
func compile(node *ast.FileNode, rs []schema.ResolvedReference) (linker.Resolver, error) {
	byName := make(map[string]string)
	for _, r := range refs.Flatten(rs) {
		byName[r.Name] = r.Schema
	}
	resolver := protocompile.WithStandardImports(protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
		if path == mainName {
			return protocompile.SearchResult{AST: node}, nil
		}
		text, ok := byName[path]
		if !ok {
			return protocompile.SearchResult{}, fmt.Errorf("import %q is not a reference of the schema", path)
		}
		if n, err := parseAST(path, text); err == nil {
			return protocompile.SearchResult{AST: n}, nil
		}
		if fd, ok := decodeDescriptor(text); ok {
			fd.Name = proto.String(path)
			return protocompile.SearchResult{Proto: fd}, nil
		}
		return protocompile.SearchResult{Source: io.NopCloser(strings.NewReader(text))}, nil
	}))
	c := protocompile.Compiler{Resolver: resolver, MaxParallelism: 1}
	files, err := c.Compile(stdcontext.Background(), mainName)
	if err != nil {
		return nil, err
	}
	return files.AsResolver(), nil
}

// knownNames are the well-known files Confluent's type resolution always
// knows (KNOWN_DEPENDENCIES, less the google/type and confluent ones,
// which must come as references here).
var knownNames = []string{
	"google/protobuf/any.proto", "google/protobuf/api.proto", "google/protobuf/descriptor.proto",
	"google/protobuf/duration.proto", "google/protobuf/empty.proto", "google/protobuf/field_mask.proto",
	"google/protobuf/source_context.proto", "google/protobuf/struct.proto", "google/protobuf/timestamp.proto",
	"google/protobuf/type.proto", "google/protobuf/wrappers.proto",
}

var (
	knownOnce sync.Once
	known     []dependency
)

func knownDependencies() []dependency {
	knownOnce.Do(func() {
		for _, n := range knownNames {
			fd, err := protoregistry.GlobalFiles.FindFileByPath(n)
			if err != nil {
				continue
			}
			known = append(known, dependency{file: fromDescriptor(protodesc.ToFileDescriptorProto(fd))})
		}
	})
	return known
}

// model is the schema's element model with its dependencies', for type
// resolution.
func (s *Parsed) model() (*protoFile, []dependency, error) {
	f, _, err := parseFile(s.canonical)
	if err != nil {
		return nil, nil, err
	}
	var deps []dependency
	for _, r := range refs.Flatten(s.refs) {
		rf, _, err := parseFile(r.Schema)
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
		f, _, err := parseFile(s.canonical)
		if err != nil {
			return "", err
		}
		p := printer{ignoreExtensions: true, ctx: newContext()}
		return p.file(f), nil
	case "serialized":
		_, node, err := parseFile(s.canonical)
		if err != nil {
			return "", err
		}
		res, err := compile(node, s.refs)
		if err != nil {
			return "", err
		}
		d, err := res.FindFileByPath(mainName)
		if err != nil {
			return "", err
		}
		fdp := protodesc.ToFileDescriptorProto(d)
		// Confluent's DynamicSchema names the file "default" and sets a
		// json_name only where the schema wrote one; the compiler fills in
		// the derived ones.
		fdp.Name = proto.String("default")
		for _, m := range fdp.GetMessageType() {
			clearJSONNames(m)
		}
		for _, e := range fdp.GetExtension() {
			clearJSONName(e)
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
		if err != nil {
			return "", err
		}
		return base64.StdEncoding.EncodeToString(b), nil
	}
	return "", fmt.Errorf("unsupported format %q for PROTOBUF", format)
}

func clearJSONNames(m *descriptorpb.DescriptorProto) {
	for _, f := range m.GetField() {
		clearJSONName(f)
	}
	for _, f := range m.GetExtension() {
		clearJSONName(f)
	}
	for _, n := range m.GetNestedType() {
		clearJSONNames(n)
	}
}

func clearJSONName(f *descriptorpb.FieldDescriptorProto) {
	if f.GetJsonName() == jsonCamel(f.GetName()) {
		f.JsonName = nil
	}
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
