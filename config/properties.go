package config

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Property is one key/value pair of a Java properties file, with the line
// its logical line starts on (1-based).
type Property struct {
	Key   string
	Value string
	Line  int
}

// ParseProperties reads the java.util.Properties text format, as Kafka reads
// server.properties:
//   - lines end at \n, \r or \r\n; blank lines and lines whose first
//     non-blank character is # or ! are comments;
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading blanks are dropped (a comment line never continues);
//   - the key ends at the first unescaped '=', ':' or blank; blanks, then one
//     '=' or ':', then blanks separate it from the value;
//   - escapes \t \n \r \f \uXXXX; a backslash before any other character
//     stands for that character.
//
// Input is taken as UTF-8 (Java's InputStream form reads ISO-8859-1; a
// server.properties in plain ASCII reads the same either way). A malformed
// \u escape is an error naming the line; nothing panics on any input.
// Duplicate keys are all returned in order; the last one wins when merged.
func ParseProperties(data []byte) ([]Property, error) {
	var out []Property
	lines := splitLines(string(data))
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := trimLeftBlank(lines[i])
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines.
		var logical strings.Builder
		for {
			if endsWithOddBackslashes(line) {
				logical.WriteString(line[:len(line)-1])
				if i+1 >= len(lines) {
					break // a trailing backslash at EOF is dropped, as Java does
				}
				i++
				line = trimLeftBlank(lines[i])
				continue
			}
			logical.WriteString(line)
			break
		}
		k, v, err := splitKeyValue(logical.String())
		if err != nil {
			return nil, fmt.Errorf("properties line %d: %w", start, err)
		}
		out = append(out, Property{Key: k, Value: v, Line: start})
	}
	return out, nil
}

func splitLines(s string) []string {
	var lines []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return lines
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\f' }

func trimLeftBlank(s string) string {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return s[i:]
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits a logical line (continuations joined, escapes still
// in place) into its unescaped key and value.
func splitKeyValue(s string) (string, string, error) {
	keyEnd, valStart := len(s), len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++ // the escaped character belongs to the key
			continue
		}
		if c != '=' && c != ':' && !isBlank(c) {
			continue
		}
		keyEnd = i
		j := i + 1
		if isBlank(c) {
			for j < len(s) && isBlank(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '=' || s[j] == ':') {
				j++
			}
		}
		for j < len(s) && isBlank(s[j]) {
			j++
		}
		valStart = j
		break
	}
	k, err := unescape(s[:keyEnd])
	if err != nil {
		return "", "", err
	}
	v, err := unescape(s[valStart:])
	if err != nil {
		return "", "", err
	}
	return k, v, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			if c != '\\' {
				b.WriteByte(c)
			}
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uxxxx encoding`)
			}
			var r rune
			for _, h := range []byte(s[i+1 : i+5]) {
				var d byte
				switch {
				case h >= '0' && h <= '9':
					d = h - '0'
				case h >= 'a' && h <= 'f':
					d = h - 'a' + 10
				case h >= 'A' && h <= 'F':
					d = h - 'A' + 10
				default:
					return "", fmt.Errorf(`malformed \uxxxx encoding`)
				}
				r = r<<4 | rune(d)
			}
			i += 4
			if !utf8.ValidRune(r) {
				r = utf8.RuneError // a lone surrogate has no UTF-8 form
			}
			b.WriteRune(r)
		default:
			// A backslash before any other byte stands for that byte; copy a
			// whole UTF-8 sequence so multi-byte characters survive.
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+size])
			i += size - 1
		}
	}
	return b.String(), nil
}

// escapeProperty writes s so ParseProperties reads it back unchanged; key
// also escapes the separators.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case (r == '=' || r == ':' || r == '#' || r == '!') && (key || i == 0):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			// Invalid UTF-8 bytes are copied through as they are.
			b.WriteString(s[i : i+1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
