package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"sharq/config"
)

var update = flag.Bool("update", false, "rewrite the generated sections of docs/configuration.md")

const (
	refBegin = "<!-- config-reference:begin -->\n"
	refEnd   = "<!-- config-reference:end -->"
)

// TestConfigReference keeps the configuration tables of docs/configuration.md
// equal to what `sharq config markdown` prints (go test ./cmd/sharq -run
// ConfigReference -update rewrites them).
func TestConfigReference(t *testing.T) {
	const path = "../../docs/configuration.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, refBegin), strings.Index(s, refEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md lacks the %q ... %q markers", strings.TrimSpace(refBegin), refEnd)
	}
	var ref bytes.Buffer
	if err := config.WriteReference(&ref, "markdown"); err != nil {
		t.Fatal(err)
	}
	want := s[:i+len(refBegin)] + ref.String() + s[j:]
	if want == s {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("docs/configuration.md's reference is out of date: run go test ./cmd/sharq -run ConfigReference -update")
}
