package jsontree

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Options are the Jackson read features a format turns on.
type Options struct {
	// Comments allows /* */ and // comments (Jackson's ALLOW_COMMENTS,
	// which Avro's parser enables).
	Comments bool
}

// MaxDepth bounds nesting, as Jackson's StreamReadConstraints do (1000),
// so a hostile document cannot exhaust the stack of anything that walks the
// tree recursively.
const MaxDepth = 1000

// maxNumberLen is Jackson's default maximum number length.
const maxNumberLen = 1000

// SyntaxError is a malformed document.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// ErrTrailing is returned (wrapped) for content after the first value.
var ErrTrailing = errors.New("content after the end of the JSON value")

// Parse reads exactly one JSON value from s.
func Parse(s string, opt Options) (*Value, error) {
	p := parser{s: s, opt: opt}
	if err := p.space(); err != nil {
		return nil, err
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i < len(p.s) {
		return nil, &SyntaxError{Offset: p.i, Msg: ErrTrailing.Error()}
	}
	return v, nil
}

type parser struct {
	s   string
	i   int
	opt Options
}

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) space() error {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case ' ', '\t', '\n', '\r':
			p.i++
		case '/':
			if !p.opt.Comments {
				return p.fail("unexpected character '/'")
			}
			if p.i+1 >= len(p.s) {
				return p.fail("unterminated comment")
			}
			switch p.s[p.i+1] {
			case '/':
				p.i += 2
				for p.i < len(p.s) && p.s[p.i] != '\n' && p.s[p.i] != '\r' {
					p.i++
				}
			case '*':
				end := -1
				for j := p.i + 2; j+1 < len(p.s); j++ {
					if p.s[j] == '*' && p.s[j+1] == '/' {
						end = j + 2
						break
					}
				}
				if end < 0 {
					return p.fail("unterminated comment")
				}
				p.i = end
			default:
				return p.fail("unexpected character '/'")
			}
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value(depth int) (*Value, error) {
	if depth >= MaxDepth {
		return nil, p.fail("nesting deeper than %d", MaxDepth)
	}
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.word("true", &Value{Kind: Bool, Bool: true})
	case c == 'f':
		return p.word("false", &Value{Kind: Bool})
	case c == 'n':
		return p.word("null", &Value{Kind: Null})
	default:
		return nil, p.fail("unexpected character %q", rune(c))
	}
}

func (p *parser) word(w string, v *Value) (*Value, error) {
	if len(p.s)-p.i < len(w) || p.s[p.i:p.i+len(w)] != w {
		return nil, p.fail("invalid literal")
	}
	p.i += len(w)
	if p.i < len(p.s) && isIdent(p.s[p.i]) {
		return nil, p.fail("invalid literal")
	}
	return v, nil
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *parser) object(depth int) (*Value, error) {
	p.i++ // {
	v := &Value{Kind: Object}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return v, nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("expected a string key")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		if err := p.space(); err != nil {
			return nil, err
		}
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.set(key, val)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			if err := p.space(); err != nil {
				return nil, err
			}
		case '}':
			p.i++
			return v, nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (*Value, error) {
	p.i++ // [
	v := &Value{Kind: Array}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return v, nil
	}
	for {
		it, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Items = append(v.Items, it)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			if err := p.space(); err != nil {
				return nil, err
			}
		case ']':
			p.i++
			return v, nil
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

func (p *parser) number() (*Value, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
		if p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			return nil, p.fail("leading zeros in number")
		}
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.i-start > maxNumberLen {
		return nil, p.fail("number longer than %d characters", maxNumberLen)
	}
	if p.i < len(p.s) && isIdent(p.s[p.i]) {
		return nil, p.fail("invalid number")
	}
	return &Value{Kind: Number, Str: p.s[start:p.i]}, nil
}

// str reads a quoted string at p.i. Invalid UTF-8 and lone surrogates
// become U+FFFD, as encoding/json decodes them.
func (p *parser) str() (string, error) {
	p.i++ // "
	start := p.i
	// Fast path: no escapes, valid UTF-8.
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			s := p.s[start:p.i]
			p.i++
			if utf8.ValidString(s) {
				return s, nil
			}
			return toValidUTF8(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.fail("control character in string")
		}
		p.i++
	}
	buf := []byte(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if utf8.Valid(buf) {
				return string(buf), nil
			}
			return toValidUTF8(string(buf)), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.s) {
			break
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				if p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					r2, ok := p.hex4()
					if ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							buf = utf8.AppendRune(buf, d)
							continue
						}
					}
					p.i = save
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail("invalid escape '\\%c'", e)
		}
	}
	return "", p.fail("unterminated string")
}

func (p *parser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

func toValidUTF8(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, r)
	}
	return string(out)
}
