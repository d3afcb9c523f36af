package jsonschema

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"sharq/schema/internal/compattest"

	"sharq/schema/internal/jsontree"
)

// diffCase is one line of testdata/diff.jsonl: Confluent's JSON Schema
// diff examples (json-schema-provider's diff-*-examples.json test
// resources), restated one per line: the two schemas, every change
// Confluent's SchemaDiff reports ("TYPE #/path"), and whether the update is
// compatible under the STRICT and LENIENT policies.
type diffCase struct {
	source, name        string
	original, update    string
	changes             []string
	compatible          bool
	lenient, hasLenient bool
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
		v, err := jsontree.Parse(sc.Text(), jsontree.Options{})
		if err != nil {
			t.Fatalf("testdata/diff.jsonl:%d: %v", len(cases)+1, err)
		}
		c := diffCase{}
		c.source, _ = v.Get("source").Text()
		c.name, _ = v.Get("case").Text()
		c.original = jsontree.Compact(v.Get("original"), jsontree.Decimals)
		c.update = jsontree.Compact(v.Get("update"), jsontree.Decimals)
		for _, ch := range v.Get("changes").Items {
			c.changes = append(c.changes, ch.Str)
		}
		c.compatible = v.Get("compatible").Bool
		if l := v.Get("lenient"); l != nil {
			c.lenient, c.hasLenient = l.Bool, true
		}
		cases = append(cases, c)
	}
	return cases
}

func mustParse(t testing.TB, text string) *Parsed {
	t.Helper()
	p, err := Format.Parse(text, nil)
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return p.(*Parsed)
}

// TestConfluentDiffExamples checks every change Confluent's SchemaDiff
// reports for its own examples (as a multiset: Confluent's order comes
// from Java hash sets, which javaorder reproduces only for non-colliding
// keys) and both policies' verdicts.
func TestConfluentDiffExamples(t *testing.T) {
	cases := loadDiffCases(t)
	if len(cases) < 200 {
		t.Fatalf("only %d cases", len(cases))
	}
	inOrder := 0
	for i, c := range cases {
		o, u := mustParse(t, c.original), mustParse(t, c.update)
		om, err := o.model()
		if err != nil {
			t.Fatal(err)
		}
		um, err := u.model()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		strict, lenient := true, true
		diffs, ok := compareSchemas(compatibleStrict, om, um)
		if !ok {
			t.Fatalf("case %d: too complex", i+1)
		}
		for _, d := range diffs {
			got = append(got, string(d.typ)+" "+d.path)
			strict = strict && compatibleStrict[d.typ]
			lenient = lenient && compatibleLenient[d.typ]
		}
		where := c.source + ": " + c.name
		if !compattest.SameMultiset(got, c.changes) {
			t.Errorf("case %d %s:\n got %v\nwant %v", i+1, where, got, c.changes)
			continue
		}
		if strings.Join(got, "|") == strings.Join(c.changes, "|") {
			inOrder++
		}
		if strict != c.compatible {
			t.Errorf("case %d %s: compatible=%v, want %v", i+1, where, strict, c.compatible)
		}
		wantLenient := c.compatible
		if c.hasLenient {
			wantLenient = c.lenient
		}
		if lenient != wantLenient {
			t.Errorf("case %d %s: lenient compatible=%v, want %v", i+1, where, lenient, wantLenient)
		}
		// The public checks agree with the verdicts.
		if msgs := u.BackwardCompatible(o); (len(msgs) == 0) != c.compatible {
			t.Errorf("case %d %s: BackwardCompatible %v", i+1, where, msgs)
		}
		if msgs := u.BackwardCompatibleLenient(o); (len(msgs) == 0) != wantLenient {
			t.Errorf("case %d %s: BackwardCompatibleLenient %v", i+1, where, msgs)
		}
	}
	t.Logf("%d cases, %d with Confluent's exact order", len(cases), inOrder)
}

// TestComparisonIsBounded: nested anyOfs whose every branch is compared
// with every other branch stop at maxPairs with a message, not minutes of
// work.
func TestComparisonIsBounded(t *testing.T) {
	nest := func(leaf string) string {
		// Distinct branches (Confluent's diff compares a set of them).
		n := 0
		var build func(depth int) string
		build = func(depth int) string {
			if depth == 0 {
				n++
				return strings.Replace(leaf, "N", strconv.Itoa(n), 1)
			}
			parts := make([]string, 8)
			for i := range parts {
				parts[i] = build(depth - 1)
			}
			return `{"anyOf":[` + strings.Join(parts, ",") + `]}`
		}
		return build(3)
	}
	defer func(n int) { maxPairs = n }(maxPairs)
	maxPairs = 2000
	o := mustParse(t, nest(`{"type":"string","maxLength":N}`))
	u := mustParse(t, nest(`{"type":"integer","maximum":N}`))
	msgs := u.BackwardCompatible(o)
	if len(msgs) != 1 || !strings.Contains(msgs[0], "too complex") {
		t.Fatalf("got %d messages: %.200v", len(msgs), msgs)
	}
}
