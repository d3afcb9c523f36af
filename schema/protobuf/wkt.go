package protobuf

import (
	"embed"
	"sync"
)

// The well-known google/protobuf files, as .proto sources built in and
// parsed on first use (TestWellKnownSources writes them from the
// descriptors google.golang.org/protobuf compiles in, and checks that
// they link to the same descriptors).
//
//go:embed wkt/google/protobuf/*.proto
var wktFS embed.FS

// knownNames are the well-known files Confluent's type resolution always
// knows (KNOWN_DEPENDENCIES, less the google/type and confluent ones,
// which must come as references here).
var knownNames = []string{
	"google/protobuf/any.proto", "google/protobuf/api.proto", "google/protobuf/descriptor.proto",
	"google/protobuf/duration.proto", "google/protobuf/empty.proto", "google/protobuf/field_mask.proto",
	"google/protobuf/source_context.proto", "google/protobuf/struct.proto", "google/protobuf/timestamp.proto",
	"google/protobuf/type.proto", "google/protobuf/wrappers.proto",
}

// wktSource is a well-known file's text, false if path is not one.
func wktSource(path string) (string, bool) {
	b, err := wktFS.ReadFile("wkt/" + path)
	if err != nil {
		return "", false
	}
	return string(b), true
}

var (
	wktOnce   sync.Once
	wktParsed map[string]*protoFile
	known     []dependency
)

// wktFile is a well-known file's element model, parsed once. The models
// are shared: nothing may change them.
func wktFile(path string) *protoFile {
	wktOnce.Do(parseWKT)
	return wktParsed[path]
}

func parseWKT() {
	wktParsed = make(map[string]*protoFile, len(knownNames))
	for _, n := range knownNames {
		text, ok := wktSource(n)
		if !ok {
			continue
		}
		f, err := parseProto(n, text)
		if err != nil {
			panic("protobuf: built-in " + n + ": " + err.Error())
		}
		wktParsed[n] = f
		known = append(known, dependency{file: f})
	}
}

// knownDependencies are the well-known files, for Confluent's type
// resolution in the diff and normalize.
func knownDependencies() []dependency {
	wktOnce.Do(parseWKT)
	return known
}
