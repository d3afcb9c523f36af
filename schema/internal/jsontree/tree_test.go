package jsontree

import (
	"math"
	"strings"
	"testing"
)

func TestCompactRoundTrip(t *testing.T) {
	cases := []struct {
		in, doubles, decimals string
	}{
		{`{"b":1, "a":[true,false,null]}`, `{"b":1,"a":[true,false,null]}`, ``},
		// A repeated key keeps its first position and takes the last value.
		{`{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`, ``},
		// Jackson's escapes: short forms, \u00XX, '/' and '<' left alone.
		{`"a\"b\\c\/d\b\f\n\r\t\u0001<&>\u00e9"`, `"a\"b\\c/d\b\f\n\r\t\u0001<&>é"`, ``},
		{`"\ud83d\ude00"`, `"😀"`, ``},
		{`"\ud83d"`, "\"\uFFFD\"", ``},
		{`-0`, `0`, `0`},
		{`12345678901234567890123`, `12345678901234567890123`, ``},
		{`1.0`, `1.0`, `1.0`},
		{`1.50`, `1.5`, `1.50`},
		{`1e3`, `1000.0`, `1E+3`},
		{`1.5e-7`, `1.5E-7`, `1.5E-7`},
		{`0.001`, `0.001`, `0.001`},
		{`0.0001`, `1.0E-4`, `0.0001`},
		{`0.0000001`, `1.0E-7`, `1E-7`},
		{`12345678.9`, `1.23456789E7`, `12345678.9`},
		{`-0.0`, `-0.0`, `0.0`},
		{`1e400`, `"Infinity"`, `1E+400`},
		{`0.1`, `0.1`, `0.1`},
	}
	for _, c := range cases {
		v, err := Parse(c.in, Options{})
		if err != nil {
			t.Fatalf("Parse(%s): %v", c.in, err)
		}
		if got := Compact(v, Doubles); got != c.doubles {
			t.Errorf("Compact(%s, Doubles) = %s, want %s", c.in, got, c.doubles)
		}
		if c.decimals != "" {
			if got := Compact(v, Decimals); got != c.decimals {
				t.Errorf("Compact(%s, Decimals) = %s, want %s", c.in, got, c.decimals)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a"}`, `{"a":}`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nulls`,
		`"abc`, "\"a\x01\"", `"\x"`, `"\u12"`, `{} {}`, `/* c */ 1`, `NaN`, `Infinity`, `'a'`,
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
		"1" + strings.Repeat("0", maxNumberLen),
	} {
		if _, err := Parse(in, Options{}); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestComments(t *testing.T) {
	v, err := Parse("// lead\n{/* a */\"a\" : 1 // b\n}/**/", Options{Comments: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := Compact(v, Doubles); got != `{"a":1}` {
		t.Fatalf("got %s", got)
	}
	if _, err := Parse("{/* open", Options{Comments: true}); err == nil {
		t.Fatal("unterminated comment accepted")
	}
}

func TestJavaFloat(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {100, "100.0"}, {1e7, "1.0E7"}, {9999999, "9999999.0"}, {1.0e-3, "0.001"},
		{1.5e300, "1.5E300"}, {-2.5, "-2.5"}, {math.MaxFloat64, "1.7976931348623157E308"},
		{123456.789, "123456.789"},
	}
	for _, c := range cases {
		if got := JavaDouble(c.f); got != c.want {
			t.Errorf("JavaDouble(%v) = %s, want %s", c.f, got, c.want)
		}
	}
	if got := JavaFloat(0.1); got != "0.1" {
		t.Errorf("JavaFloat(0.1) = %s", got)
	}
	if got := JavaFloat(1e10); got != "1.0E10" {
		t.Errorf("JavaFloat(1e10) = %s", got)
	}
}

func TestSortedAndEqual(t *testing.T) {
	v, _ := Parse(`{"b":{"d":1,"c":[{"z":1,"y":2}]},"a":2.0}`, Options{})
	if got := Compact(Sorted(v), Doubles); got != `{"a":2.0,"b":{"c":[{"y":2,"z":1}],"d":1}}` {
		t.Fatalf("Sorted: %s", got)
	}
	w, _ := Parse(`{"a":2.00,"b":{"c":[{"y":2,"z":1}],"d":1}}`, Options{})
	if !Equal(v, w) {
		t.Fatal("Equal: reordered keys and 2.0 vs 2.00 differ")
	}
	x, _ := Parse(`{"a":2,"b":{"c":[{"y":2,"z":1}],"d":1}}`, Options{})
	if Equal(v, x) {
		t.Fatal("Equal: integer 2 equals float 2.0 (Jackson's nodes differ)")
	}
	// U+1F600 is the surrogate pair D83D DE00, below U+FFFF in UTF-16 order.
	if got := Compact(Sorted(NewObject(Member{"\uffff", NewNull()}, Member{"\U0001F600", NewNull()})), Doubles); got != "{\"\U0001F600\":null,\"\uffff\":null}" {
		t.Fatalf("keys must sort by UTF-16 code units: %s", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9"],"b":null}`, `[]`, `"\ud83d\ude00"`, `/**/1`, `-0.0e-0`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, opt := range []Options{{}, {Comments: true}} {
			v, err := Parse(s, opt)
			if err != nil {
				continue
			}
			// What we print parses again to the same tree.
			out := Compact(v, Decimals)
			w, err := Parse(out, Options{})
			if err != nil {
				t.Fatalf("reparse of %q: %v", out, err)
			}
			if again := Compact(w, Decimals); again != out {
				t.Fatalf("not stable: %q then %q", out, again)
			}
			_ = Compact(v, Doubles)
		}
	})
}
