package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	type kv = [2]string
	tests := []struct {
		name string
		in   string
		want []kv
	}{
		{"equals", "a=b", []kv{{"a", "b"}}},
		{"colon", "a:b", []kv{{"a", "b"}}},
		{"space separator", "a b", []kv{{"a", "b"}}},
		{"blanks around separator", "  a \t = \f b c ", []kv{{"a", "b c "}}},
		{"space then colon", "a   :b", []kv{{"a", "b"}}},
		{"second separator is value", "a==b", []kv{{"a", "=b"}}},
		{"key only", "lonely", []kv{{"lonely", ""}}},
		{"empty value", "a=", []kv{{"a", ""}}},
		{"hash comment", "# x=y\na=1", []kv{{"a", "1"}}},
		{"bang comment", "  ! x=y\na=1", []kv{{"a", "1"}}},
		{"hash inside value", "a=b#c", []kv{{"a", "b#c"}}},
		{"blank lines", "\n\n  \na=1\n\n", []kv{{"a", "1"}}},
		{"crlf and cr", "a=1\r\nb=2\rc=3", []kv{{"a", "1"}, {"b", "2"}, {"c", "3"}}},
		{"continuation", "a=one,\\\n    two,\\\n\tthree", []kv{{"a", "one,two,three"}}},
		{"continuation crlf", "a=x\\\r\n  y", []kv{{"a", "xy"}}},
		{"even backslashes do not continue", "a=x\\\\\nb=y", []kv{{"a", `x\`}, {"b", "y"}}},
		{"comment does not continue", "# c \\\na=1", []kv{{"a", "1"}}},
		{"trailing backslash at eof", "a=x\\", []kv{{"a", "x"}}},
		{"continuation of key", "lo\\\n  ng=v", []kv{{"long", "v"}}},
		{"escapes", `a=t\tn\nr\rf\f`, []kv{{"a", "t\tn\nr\rf\f"}}},
		{"unicode escape", `a=\u0041\u00e9\u4e2d`, []kv{{"a", "A\u00e9\u4e2d"}}},
		{"escaped separators in key", `my\=key\:x\ y=v`, []kv{{"my=key:x y", "v"}}},
		{"escaped other char", `a=\q\\`, []kv{{"a", `q\`}}},
		{"windows path", `log.dirs=C:\\kafka\\data`, []kv{{"log.dirs", `C:\kafka\data`}}},
		{"duplicate keys kept in order", "a=1\na=2", []kv{{"a", "1"}, {"a", "2"}}},
		{"utf8 passes through", "name=sharq \u2713", []kv{{"name", "sharq \u2713"}}},
		{"listeners", "listeners=PLAINTEXT://:9092,CONTROLLER://:9093", []kv{{"listeners", "PLAINTEXT://:9092,CONTROLLER://:9093"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProperties([]byte(tc.in))
			if err != nil {
				t.Fatalf("ParseProperties: %v", err)
			}
			var pairs []kv
			for _, p := range got {
				pairs = append(pairs, kv{p.Key, p.Value})
			}
			if !reflect.DeepEqual(pairs, tc.want) {
				t.Fatalf("got %q, want %q", pairs, tc.want)
			}
		})
	}
}

func TestParsePropertiesLines(t *testing.T) {
	got, err := ParseProperties([]byte("# header\n\na=1\nb=x\\\n y\nc=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	lines := []int{got[0].Line, got[1].Line, got[2].Line}
	if !reflect.DeepEqual(lines, []int{3, 4, 6}) {
		t.Fatalf("lines = %v, want [3 4 6]", lines)
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uZZZZ`, "ok=1\nbad=\\u00g0"} {
		_, err := ParseProperties([]byte(in))
		if err == nil || !strings.Contains(err.Error(), `malformed \uxxxx`) || !strings.Contains(err.Error(), "line") {
			t.Errorf("ParseProperties(%q) error = %v, want a malformed \\u error naming the line", in, err)
		}
	}
}

// FuzzParseProperties: no input panics, and every parsed pair written back
// escaped parses to the same pair.
func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{
		"a=b", "a:b\nc d", "# c\n! d\n  k = v", "a=1\\\n  2", `k=\u0041\t\\`, "\\", "a=\\u", "=v", ":", "\r\n\r",
		"listeners=PLAINTEXT://:9092\nlog.dirs=/tmp/x\n", "k\\ e\\=y=v\\:w", "x=\xff\xfe", "\\\n\\\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := ParseProperties(data)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, p := range props {
			b.WriteString(escapeProperty(p.Key, true))
			b.WriteByte('=')
			b.WriteString(escapeProperty(p.Value, false))
			b.WriteByte('\n')
		}
		again, err := ParseProperties([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		if len(again) != len(props) {
			t.Fatalf("re-parse gave %d pairs, want %d (%q)", len(again), len(props), b.String())
		}
		for i := range props {
			if again[i].Key != props[i].Key || again[i].Value != props[i].Value {
				t.Fatalf("pair %d: got %q=%q, want %q=%q", i, again[i].Key, again[i].Value, props[i].Key, props[i].Value)
			}
		}
	})
}
