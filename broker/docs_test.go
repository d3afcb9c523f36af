package broker

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docRef is a reference to code in a doc: `file:line` and the code found
// on that line, in backquotes after it.
var docRef = regexp.MustCompile("([a-z0-9_/]+\\.go):([0-9]+) `([^`]+)`")

// TestDocReferences holds the file:line references of docs/locking.md to
// the code: each named line must contain the code quoted after it. With
// -update, a reference whose code moved is rewritten to the occurrence
// nearest its old line.
func TestDocReferences(t *testing.T) {
	for _, doc := range []string{"locking.md"} {
		path := filepath.Join("..", "docs", doc)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := squash(string(b)) // references may wrap
		refs := docRef.FindAllStringSubmatch(text, -1)
		if len(refs) < 20 {
			t.Fatalf("%s: only %d references found", doc, len(refs))
		}
		out := string(b)
		for _, m := range refs {
			file, want := m[1], m[3]
			line, _ := strconv.Atoi(m[2])
			lines := sourceLines(t, file)
			if line >= 1 && line <= len(lines) && strings.Contains(squash(lines[line-1]), want) {
				continue
			}
			moved := nearest(lines, want, line)
			if moved == 0 {
				t.Errorf("%s: %s:%d: %q is no longer in %s", doc, file, line, want, file)
				continue
			}
			if !*updateGolden {
				t.Errorf("%s: %s:%d: %q is now at line %d (go test -run TestDocReferences -update)", doc, file, line, want, moved)
				continue
			}
			out = strings.Replace(out, fmt.Sprintf("%s:%d", file, line), fmt.Sprintf("%s:%d", file, moved), 1)
		}
		if *updateGolden && out != string(b) {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// squash collapses runs of white space, as a reference quoting aligned
// code collapses them when it wraps.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func sourceLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatalf("a doc names %s: %v", file, err)
	}
	return strings.Split(string(b), "\n")
}

// nearest returns the 1-based line containing want closest to line, 0 if
// none does.
func nearest(lines []string, want string, line int) int {
	best := 0
	for i, l := range lines {
		if strings.Contains(squash(l), want) && (best == 0 || abs(i+1-line) < abs(best-line)) {
			best = i + 1
		}
	}
	return best
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
