package protobuf

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"sharq/schema/internal/compattest"
)

// diffCase is one line of testdata/diff.jsonl: Confluent's Protobuf diff
// examples (protobuf-provider's diff-schema-examples.json test resource),
// restated one per line: both schemas, their references' texts, every
// change Confluent's SchemaDiff reports and whether the update is
// compatible.
type diffCase struct {
	Source       string   `json:"source"`
	Case         string   `json:"case"`
	Original     string   `json:"original"`
	Update       string   `json:"update"`
	Changes      []string `json:"changes"`
	Compatible   bool     `json:"compatible"`
	OriginalRefs []ref    `json:"original_refs"`
	UpdateRefs   []ref    `json:"update_refs"`
}

type ref struct {
	Name   string `json:"name"`
	Schema string `json:"schema"`
}

func loadDiffCases(t testing.TB) []diffCase {
	f, err := os.Open("testdata/diff.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []diffCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c diffCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// elements reads a schema as Confluent's diff test does: wire's parser
// alone, without linking (some examples name types they do not define).
func elements(t testing.TB, text string, rs []ref) (*protoFile, []dependency) {
	t.Helper()
	n, err := parseProto(mainName, text)
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	var deps []dependency
	for _, r := range rs {
		rn, err := parseProto(r.Name, r.Schema)
		if err != nil {
			t.Fatalf("parse %s: %v", r.Name, err)
		}
		deps = append(deps, dependency{file: rn, from: r.Schema})
	}
	return n, append(deps, knownDependencies()...)
}

func TestConfluentDiffExamples(t *testing.T) {
	cases := loadDiffCases(t)
	if len(cases) < 50 {
		t.Fatalf("only %d cases", len(cases))
	}
	inOrder := 0
	for i, c := range cases {
		of, od := elements(t, c.Original, c.OriginalRefs)
		uf, ud := elements(t, c.Update, c.UpdateRefs)
		ctx := newContext()
		ctx.collect(od, of, original)
		ctx.collect(ud, uf, update)
		compareFiles(ctx, of, uf)
		var got []string
		compatible := true
		for _, d := range ctx.diffs {
			got = append(got, string(d.typ)+" "+d.path)
			compatible = compatible && compatibleChanges[d.typ]
		}
		where := c.Source + ": " + c.Case
		if !compattest.SameMultiset(got, c.Changes) {
			t.Errorf("case %d %s:\n got %v\nwant %v", i+1, where, got, c.Changes)
			continue
		}
		if strings.Join(got, "|") == strings.Join(c.Changes, "|") {
			inOrder++
		} else {
			t.Logf("case %d %s: order\n got %v\nwant %v", i+1, where, got, c.Changes)
		}
		if compatible != c.Compatible {
			t.Errorf("case %d %s: compatible=%v, want %v", i+1, where, compatible, c.Compatible)
		}
	}
	t.Logf("%d cases, %d in Confluent's order", len(cases), inOrder)
}
