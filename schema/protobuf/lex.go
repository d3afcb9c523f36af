package protobuf

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The .proto tokenizer, as protoc's io::Tokenizer reads: identifiers,
// integer and float literals, string literals with C escapes, symbols;
// // and /* */ comments and whitespace skipped.

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tFloat
	tString
	tSymbol
)

type pos struct{ line, col int }

type token struct {
	kind tokKind
	text string // as written; a string's value is in val
	val  string
	pos  pos
}

type lexer struct {
	src       string
	off       int
	line, col int
	file      string
}

// posError is an error at a place in a file, printed as protoc prints
// them: file:line:column: message.
type posError struct {
	file string
	pos  pos
	msg  string
}

func (e *posError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.file, e.pos.line, e.pos.col, e.msg)
}

func (l *lexer) errorf(p pos, format string, args ...any) error {
	return &posError{l.file, p, fmt.Sprintf(format, args...)}
}

func (l *lexer) peekByte(i int) byte {
	if l.off+i < len(l.src) {
		return l.src[l.off+i]
	}
	return 0
}

func (l *lexer) advance(n int) {
	for ; n > 0 && l.off < len(l.src); n-- {
		if l.src[l.off] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.off++
	}
}

func isLetter(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

// next reads one token.
func (l *lexer) next() (token, error) {
	for {
		c := l.peekByte(0)
		switch {
		case l.off >= len(l.src):
			return token{kind: tEOF, pos: pos{l.line, l.col}}, nil
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			l.advance(1)
			continue
		case c == '/' && l.peekByte(1) == '/':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.advance(1)
			}
			continue
		case c == '/' && l.peekByte(1) == '*':
			p := pos{l.line, l.col}
			l.advance(2)
			for {
				if l.off >= len(l.src) {
					return token{}, l.errorf(p, "End-of-file inside block comment.")
				}
				if l.src[l.off] == '*' && l.peekByte(1) == '/' {
					l.advance(2)
					break
				}
				l.advance(1)
			}
			continue
		}
		break
	}
	p := pos{l.line, l.col}
	start := l.off
	c := l.src[l.off]
	switch {
	case isLetter(c):
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.advance(1)
		}
		return token{kind: tIdent, text: l.src[start:l.off], pos: p}, nil
	case isDigit(c) || (c == '.' && isDigit(l.peekByte(1))):
		return l.number(p)
	case c == '"' || c == '\'':
		return l.str(p, c)
	case c < 0x20 || c >= 0x7f:
		r, _ := utf8.DecodeRuneInString(l.src[l.off:])
		return token{}, l.errorf(p, "Invalid control characters encountered in text: %q", r)
	}
	l.advance(1)
	return token{kind: tSymbol, text: string(c), pos: p}, nil
}

func (l *lexer) number(p pos) (token, error) {
	start := l.off
	kind := tInt
	if l.src[l.off] == '0' && (l.peekByte(1) == 'x' || l.peekByte(1) == 'X') {
		l.advance(2)
		if !isHex(l.peekByte(0)) {
			return token{}, l.errorf(p, "\"0x\" must be followed by hex digits.")
		}
		for isHex(l.peekByte(0)) {
			l.advance(1)
		}
	} else {
		for isDigit(l.peekByte(0)) {
			l.advance(1)
		}
		if l.peekByte(0) == '.' {
			kind = tFloat
			l.advance(1)
			for isDigit(l.peekByte(0)) {
				l.advance(1)
			}
		}
		if c := l.peekByte(0); c == 'e' || c == 'E' {
			kind = tFloat
			l.advance(1)
			if c := l.peekByte(0); c == '+' || c == '-' {
				l.advance(1)
			}
			if !isDigit(l.peekByte(0)) {
				return token{}, l.errorf(p, "\"e\" must be followed by exponent.")
			}
			for isDigit(l.peekByte(0)) {
				l.advance(1)
			}
		}
		if c := l.peekByte(0); kind == tFloat && (c == 'f' || c == 'F') {
			l.advance(1)
		}
		text := l.src[start:l.off]
		if kind == tInt && len(text) > 1 && text[0] == '0' {
			for _, d := range text[1:] {
				if d > '7' {
					return token{}, l.errorf(p, "Numbers starting with leading zero must be in octal.")
				}
			}
		}
	}
	if c := l.peekByte(0); isLetter(c) || isDigit(c) || c == '.' {
		return token{}, l.errorf(p, "Need space between number and identifier.")
	}
	return token{kind: kind, text: l.src[start:l.off], pos: p}, nil
}

func (l *lexer) str(p pos, quote byte) (token, error) {
	start := l.off
	l.advance(1)
	var sb strings.Builder
	for {
		if l.off >= len(l.src) {
			return token{}, l.errorf(p, "Unexpected end of string.")
		}
		c := l.src[l.off]
		switch {
		case c == quote:
			l.advance(1)
			return token{kind: tString, text: l.src[start:l.off], val: sb.String(), pos: p}, nil
		case c == '\n':
			return token{}, l.errorf(pos{l.line, l.col}, "Multiline strings are not allowed. Did you miss a \"?.")
		case c == 0:
			return token{}, l.errorf(pos{l.line, l.col}, "Null character in string literal.")
		case c == '\\':
			if err := l.escape(&sb); err != nil {
				return token{}, err
			}
		default:
			sb.WriteByte(c)
			l.advance(1)
		}
	}
}

func (l *lexer) escape(sb *strings.Builder) error {
	p := pos{l.line, l.col}
	l.advance(1)
	c := l.peekByte(0)
	switch c {
	case 'a':
		sb.WriteByte('\a')
	case 'b':
		sb.WriteByte('\b')
	case 'f':
		sb.WriteByte('\f')
	case 'n':
		sb.WriteByte('\n')
	case 'r':
		sb.WriteByte('\r')
	case 't':
		sb.WriteByte('\t')
	case 'v':
		sb.WriteByte('\v')
	case '\\', '?', '\'', '"':
		sb.WriteByte(c)
	case 'x', 'X':
		l.advance(1)
		n, v := 0, 0
		for n < 2 && isHex(l.peekByte(0)) {
			v = v*16 + hexVal(l.peekByte(0))
			l.advance(1)
			n++
		}
		if n == 0 {
			return l.errorf(p, "Expected hex digits for escape sequence.")
		}
		sb.WriteByte(byte(v))
		return nil
	case 'u', 'U':
		want := 4
		if c == 'U' {
			want = 8
		}
		l.advance(1)
		v := 0
		for i := 0; i < want; i++ {
			if !isHex(l.peekByte(0)) {
				return l.errorf(p, "Expected %d hex digits for \\%c escape sequence.", want, c)
			}
			v = v*16 + hexVal(l.peekByte(0))
			l.advance(1)
		}
		if v > utf8.MaxRune || (v >= 0xd800 && v <= 0xdfff) {
			return l.errorf(p, "Invalid unicode escape.")
		}
		sb.WriteRune(rune(v))
		return nil
	default:
		if c >= '0' && c <= '7' {
			v, n := 0, 0
			for n < 3 && l.peekByte(0) >= '0' && l.peekByte(0) <= '7' {
				v = v*8 + int(l.peekByte(0)-'0')
				l.advance(1)
				n++
			}
			if v > 255 {
				return l.errorf(p, "Octal escape out of range.")
			}
			sb.WriteByte(byte(v))
			return nil
		}
		return l.errorf(p, "Invalid escape sequence in string literal.")
	}
	l.advance(1)
	return nil
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}
