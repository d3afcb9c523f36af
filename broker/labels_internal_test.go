package broker

import (
	"testing"
	"unicode/utf8"
)

// TestLabelValue: every name becomes valid UTF-8, and distinct names stay
// distinct (a duplicate series would fail the whole scrape).
func TestLabelValue(t *testing.T) {
	cases := []struct{ in, want string }{
		{"orders", "orders"},
		{"grüße", "grüße"},
		{"", ""},
		{"g-\xff", `"g-\xff"`},
		{"g-\xfe", `"g-\xfe"`},
		{`"g-\xff"`, `"\"g-\\xff\""`}, // a valid name that looks quoted is quoted too
		{"\xc3\x28", `"\xc3("`},
	}
	seen := map[string]string{}
	for _, c := range cases {
		got := labelValue(c.in)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("labelValue(%q) = %q, want %q", c.in, got, c.want)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("labelValue(%q) = labelValue(%q) = %q", c.in, prev, got)
		}
		seen[got] = c.in
	}
	if n := testing.AllocsPerRun(100, func() { labelValue("orders") }); n != 0 {
		t.Errorf("labelValue of a valid name allocates %v times", n)
	}
}
