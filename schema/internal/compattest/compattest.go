// Package compattest runs a format's compatibility tables: files of cases
// under a package's testdata/, each a history of schemas, a new schema, a
// level and the expected outcome, evaluated the way the registry derives
// every level from Parsed.BackwardCompatible (as Confluent's
// CompatibilityChecker does).
//
// A table file holds cases separated by lines starting "=== " (the case's
// name). Inside a case, "key: value" lines set scalars and "key:" alone
// starts a block that runs to the next key line:
//
//	=== adding a field with a default
//	source: Confluent AvroCompatibilityTest.testBasicBackwardsCompatibility
//	level: BACKWARD FULL
//	ref other.avsc:        (a resolved reference, visible to every schema)
//	old:                   (one per earlier version, oldest first)
//	new:
//	want: compatible | incompatible
//	type: ERROR_TYPE       (each expected errorType, for the first level)
//	message: text          (each expected message, roles filled, first level)
//
// Lines starting "#" outside blocks are comments.
package compattest

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"sharq/schema"
)

// Case is one table entry.
type Case struct {
	Name, Source string
	Levels       []string
	Refs         []schema.ResolvedReference
	Old          []string
	New          string
	Compatible   bool
	Types        []string
	Messages     []string
	Line         int
}

// Load reads a table file.
func Load(path string, schemaType string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []Case
	var c *Case
	var block *strings.Builder
	var blockKey string
	flush := func() error {
		if block == nil {
			return nil
		}
		text := strings.TrimRight(block.String(), "\n")
		switch {
		case blockKey == "old":
			c.Old = append(c.Old, text)
		case blockKey == "new":
			c.New = text
		case strings.HasPrefix(blockKey, "ref "):
			c.Refs = append(c.Refs, schema.ResolvedReference{Name: strings.TrimPrefix(blockKey, "ref "), Type: schemaType, Schema: text})
		default:
			return fmt.Errorf("%s: unknown block %q in case %q", path, blockKey, c.Name)
		}
		block = nil
		return nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	keyLine := regexp.MustCompile(`^(old|new|ref [^:]+|source|level|want|type|message):(.*)$`)
	for sc.Scan() {
		line++
		l := sc.Text()
		if strings.HasPrefix(l, "=== ") {
			if err := flush(); err != nil {
				return nil, err
			}
			cases = append(cases, Case{Name: strings.TrimPrefix(l, "=== "), Line: line})
			c = &cases[len(cases)-1]
			continue
		}
		if c == nil {
			continue
		}
		if m := keyLine.FindStringSubmatch(l); m != nil {
			if err := flush(); err != nil {
				return nil, err
			}
			key, val := m[1], strings.TrimSpace(m[2])
			switch {
			case key == "old" || key == "new" || strings.HasPrefix(key, "ref "):
				if val != "" {
					return nil, fmt.Errorf("%s:%d: %s takes a block", path, line, key)
				}
				block, blockKey = &strings.Builder{}, key
			case key == "source":
				c.Source = val
			case key == "level":
				c.Levels = strings.Fields(val)
			case key == "want":
				c.Compatible = val == "compatible"
				if val != "compatible" && val != "incompatible" {
					return nil, fmt.Errorf("%s:%d: want %q", path, line, val)
				}
			case key == "type":
				c.Types = append(c.Types, val)
			case key == "message":
				c.Messages = append(c.Messages, val)
			}
			continue
		}
		if block != nil {
			block.WriteString(l)
			block.WriteByte('\n')
			continue
		}
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			return nil, fmt.Errorf("%s:%d: stray line %q", path, line, l)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return cases, sc.Err()
}

// Check evaluates level for a new schema against the history (oldest
// first), returning the messages with roles filled, as Confluent's
// SchemaValidatorBuilder produces them (less the oldSchema lines the
// registry appends).
func Check(level string, newS schema.Parsed, history []schema.Parsed) []string {
	backward := func(old schema.Parsed) []string {
		return fill(newS.BackwardCompatible(old), "new", "old")
	}
	forward := func(old schema.Parsed) []string {
		return fill(old.BackwardCompatible(newS), "old", "new")
	}
	full := func(old schema.Parsed) []string {
		return append(forward(old), backward(old)...)
	}
	var one func(schema.Parsed) []string
	transitive := strings.HasSuffix(level, "_TRANSITIVE")
	switch strings.TrimSuffix(level, "_TRANSITIVE") {
	case "NONE":
		return nil
	case "BACKWARD":
		one = backward
	case "FORWARD":
		one = forward
	case "FULL":
		one = full
	default:
		panic("unknown level " + level)
	}
	for i := len(history) - 1; i >= 0; i-- {
		if msgs := one(history[i]); len(msgs) > 0 || !transitive {
			return msgs
		}
	}
	return nil
}

func fill(msgs []string, reader, writer string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = schema.FillRoles(m, reader, writer)
	}
	return out
}

var errorType = regexp.MustCompile(`^\{errorType:['"]([A-Z_]+)['"]`)

// Run loads path and checks every case with f. Schemas parse with
// ParseStored when the format has it, except the new one.
func Run(t *testing.T, f schema.Format, path string) {
	t.Helper()
	cases, err := Load(path, f.Type())
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			where := fmt.Sprintf("%s:%d (%s)", path, c.Line, c.Source)
			if c.Source == "" {
				t.Fatalf("%s: case has no source", where)
			}
			var history []schema.Parsed
			for i, o := range c.Old {
				p, err := schema.ParseStored(f, o, c.Refs)
				if err != nil {
					t.Fatalf("%s: old schema %d: %v", where, i, err)
				}
				history = append(history, p)
			}
			n, err := f.Parse(c.New, c.Refs)
			if err != nil {
				t.Fatalf("%s: new schema: %v", where, err)
			}
			for li, level := range c.Levels {
				msgs := Check(level, n, history)
				if got := len(msgs) == 0; got != c.Compatible {
					t.Errorf("%s: %s: compatible=%v, want %v; messages:\n%s", where, level, got, c.Compatible, strings.Join(msgs, "\n"))
					continue
				}
				if li > 0 {
					continue
				}
				if len(c.Types) > 0 {
					var types []string
					for _, m := range msgs {
						if mm := errorType.FindStringSubmatch(m); mm != nil {
							types = append(types, mm[1])
						} else {
							types = append(types, m)
						}
					}
					if strings.Join(types, " ") != strings.Join(c.Types, " ") {
						t.Errorf("%s: %s: error types %v, want %v; messages:\n%s", where, level, types, c.Types, strings.Join(msgs, "\n"))
					}
				}
				if len(c.Messages) > 0 && strings.Join(msgs, "\n") != strings.Join(c.Messages, "\n") {
					t.Errorf("%s: %s: messages\n%s\nwant\n%s", where, level, strings.Join(msgs, "\n"), strings.Join(c.Messages, "\n"))
				}
			}
		})
	}
}
