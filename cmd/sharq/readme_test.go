package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"sharq/config"
)

var update = flag.Bool("update", false, "rewrite the README's generated sections")

const (
	refBegin = "<!-- config-reference:begin -->\n"
	refEnd   = "<!-- config-reference:end -->"
)

// TestReadmeConfigReference keeps the README's configuration table equal to
// what `sharq config markdown` prints (go test ./cmd/sharq -update rewrites
// it).
func TestReadmeConfigReference(t *testing.T) {
	const path = "../../README.md"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i, j := strings.Index(s, refBegin), strings.Index(s, refEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q ... %q markers", strings.TrimSpace(refBegin), refEnd)
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
	t.Fatal("README.md's configuration reference is out of date: run go test ./cmd/sharq -run ReadmeConfig -update")
}
