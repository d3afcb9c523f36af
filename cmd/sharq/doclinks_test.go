package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks every relative link of the README and the docs
// (README.md, docs/*.md, */README.md, */DESIGN.md): the file or directory
// it names exists, and a #fragment names a heading of the Markdown file it
// points into, by GitHub's anchor rules. Moving a section between pages
// breaks links silently otherwise; the generated bench reports are left
// out (they link only their own charts).
func TestDocLinks(t *testing.T) {
	const root = "../.."
	var pages []string
	for _, pattern := range []string{"README.md", "docs/*.md", "*/README.md", "*/DESIGN.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, m...)
	}
	if len(pages) < 5 {
		t.Fatalf("found only %d pages: %v", len(pages), pages)
	}
	anchors := map[string]map[string]bool{} // by cleaned path
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a, nil
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, l := range markdownLinks(string(b)) {
			target := l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			path := filepath.Clean(page)
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", rel, l.line, target, file)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.line, target, err)
				continue
			}
			if !a[frag] {
				t.Errorf("%s:%d: link %q: no heading with anchor #%s in %s", rel, l.line, target, frag, filepath.Base(path))
			}
		}
	}
	if links < 20 {
		t.Errorf("only %d relative links checked: is the link pattern still right?", links)
	}
}

type mdLink struct {
	target string
	line   int
}

var linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// markdownLinks returns the inline links and images of a Markdown text,
// outside fenced code blocks and inline code spans.
func markdownLinks(s string) []mdLink {
	var out []mdLink
	fenced := false
	for i, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			out = append(out, mdLink{target: m[1], line: i + 1})
		}
	}
	return out
}

// stripCodeSpans blanks `code` spans, whose brackets are not links.
func stripCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headingAnchors returns the anchors GitHub gives a Markdown text's
// headings: lower case, punctuation dropped, spaces to hyphens, a repeated
// anchor numbered -1, -2, ...
func headingAnchors(s string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if text == "" || text[0] != ' ' {
			continue
		}
		a := slug(strings.TrimSpace(text))
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// The anchor rules on headings this repository's pages use.
func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Features compared with Apache Kafka 4.4", "features-compared-with-apache-kafka-44"},
		{"Group, transaction and share state: the state journal", "group-transaction-and-share-state-the-state-journal"},
		{"Reliability: what the soak measured", "reliability-what-the-soak-measured"},
		{"`sharq ctl` and the control API", "sharq-ctl-and-the-control-api"},
		{"Share groups, slow consumers", "share-groups-slow-consumers"},
	}
	for _, tt := range tests {
		if got := slug(tt.heading); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
	a := headingAnchors("# A\n## A\n```\n# not a heading\n```\n#hashtag\n")
	if !a["a"] || !a["a-1"] || a["not-a-heading"] || len(a) != 2 {
		t.Errorf("headingAnchors: %v", a)
	}
}
