package share

// A small datadriven-style runner (the format of cockroachdb/datadriven,
// which is not a direct dependency of the module): each case is a command
// line, optional input lines, "----", and the expected output up to a blank
// line. Run with -rewrite to regenerate the expected output.

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite expected output of testdata scripts")

type scriptCase struct {
	pos      string
	cmd      string
	args     map[string]string
	argOrder []string
	input    []string
	expected string
	comments []string // comment lines before the case, kept by -rewrite
}

func (c *scriptCase) has(k string) bool { _, ok := c.args[k]; return ok }

func parseScript(t *testing.T, path string) (cases []*scriptCase, raw []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		raw = append(raw, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var comments []string
	for i := 0; i < len(raw); i++ {
		line := strings.TrimSpace(raw[i])
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			comments = append(comments, raw[i])
			continue
		}
		c := &scriptCase{pos: fmt.Sprintf("%s:%d", path, i+1), args: map[string]string{}, comments: comments}
		comments = nil
		fields := strings.Fields(line)
		c.cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.args[k] = v
			c.argOrder = append(c.argOrder, k)
		}
		i++
		for ; i < len(raw) && raw[i] != "----"; i++ {
			c.input = append(c.input, raw[i])
		}
		if i == len(raw) {
			t.Fatalf("%s: missing ----", c.pos)
		}
		var exp []string
		for i++; i < len(raw) && raw[i] != ""; i++ {
			exp = append(exp, raw[i])
		}
		c.expected = strings.Join(exp, "\n")
		cases = append(cases, c)
	}
	return cases, raw
}

// runScripts runs every file in dir; run returns a case's output.
func runScripts(t *testing.T, dir string, newRun func() func(c *scriptCase) string) {
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scripts in %s", dir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cases, _ := parseScript(t, path)
			run := newRun()
			var out strings.Builder
			for _, c := range cases {
				got := strings.TrimRight(run(c), "\n")
				if *rewrite {
					writeCase(&out, c, got)
					continue
				}
				if got != c.expected {
					t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", c.pos, c.cmd, got, c.expected)
				}
			}
			if *rewrite {
				if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func writeCase(out *strings.Builder, c *scriptCase, got string) {
	if out.Len() > 0 {
		out.WriteString("\n")
	}
	for _, l := range c.comments {
		out.WriteString(l + "\n")
	}
	out.WriteString(c.cmd)
	for _, k := range c.argOrder {
		out.WriteString(" " + k)
		if v := c.args[k]; v != "" {
			out.WriteString("=" + v)
		}
	}
	out.WriteString("\n")
	for _, l := range c.input {
		out.WriteString(l + "\n")
	}
	out.WriteString("----\n")
	if got != "" {
		out.WriteString(got + "\n")
	}
}
