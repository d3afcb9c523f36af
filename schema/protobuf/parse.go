package protobuf

import (
	"strconv"
	"strings"
)

// The .proto parser: protoc's grammar for proto2, proto3 and editions
// files, read straight into the element model (the way Square's wire
// reads a file, which Confluent prints and diffs), with the positions and
// declaration order the linker needs. It makes the checks protoc's parser
// makes; the linker (link.go) makes the rest.

type parser struct {
	lex  lexer
	tok  token
	peek *token
	file *protoFile
	seq  int
}

// parseProto parses one file. name is the file's import path, used in
// errors.
func parseProto(name, text string) (*protoFile, error) {
	p := &parser{lex: lexer{src: text, line: 1, col: 1, file: name}, file: &protoFile{}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.parseFile(); err != nil {
		return nil, err
	}
	return p.file, nil
}

func (p *parser) advance() error {
	if p.peek != nil {
		p.tok, p.peek = *p.peek, nil
		return nil
	}
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) lookahead() (token, error) {
	if p.peek == nil {
		t, err := p.lex.next()
		if err != nil {
			return token{}, err
		}
		p.peek = &t
	}
	return *p.peek, nil
}

func (p *parser) errorf(at pos, format string, args ...any) error {
	return p.lex.errorf(at, format, args...)
}

func (p *parser) is(sym string) bool {
	return (p.tok.kind == tSymbol || p.tok.kind == tIdent) && p.tok.text == sym
}

func (p *parser) isSym(sym string) bool { return p.tok.kind == tSymbol && p.tok.text == sym }

func (p *parser) describe() string {
	if p.tok.kind == tEOF {
		return "end of input"
	}
	return "\"" + p.tok.text + "\""
}

func (p *parser) expect(sym string) error {
	if !p.isSym(sym) {
		return p.errorf(p.tok.pos, "Expected \"%s\", found %s.", sym, p.describe())
	}
	return p.advance()
}

func (p *parser) ident(what string) (string, pos, error) {
	if p.tok.kind != tIdent {
		return "", p.tok.pos, p.errorf(p.tok.pos, "Expected %s.", what)
	}
	t := p.tok
	return t.text, t.pos, p.advance()
}

// fullIdent reads ident { "." ident }, with a leading dot if allowed.
func (p *parser) fullIdent(what string, leadingDot bool) (string, pos, error) {
	start := p.tok.pos
	var sb strings.Builder
	if leadingDot && p.isSym(".") {
		sb.WriteByte('.')
		if err := p.advance(); err != nil {
			return "", start, err
		}
	}
	for {
		id, _, err := p.ident(what)
		if err != nil {
			return "", start, err
		}
		sb.WriteString(id)
		if !p.isSym(".") {
			return sb.String(), start, nil
		}
		sb.WriteByte('.')
		if err := p.advance(); err != nil {
			return "", start, err
		}
	}
}

// stringLit reads one or more adjacent string literals, concatenated.
func (p *parser) stringLit() (string, error) {
	if p.tok.kind != tString {
		return "", p.errorf(p.tok.pos, "Expected string.")
	}
	var sb strings.Builder
	for p.tok.kind == tString {
		sb.WriteString(p.tok.val)
		if err := p.advance(); err != nil {
			return "", err
		}
	}
	return sb.String(), nil
}

func (p *parser) endStatement() error { return p.expect(";") }

func (p *parser) parseFile() error {
	f := p.file
	if p.is("syntax") || p.is("edition") {
		kw := p.tok.text
		at := p.tok.pos
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.expect("="); err != nil {
			return err
		}
		valAt := p.tok.pos
		v, err := p.stringLit()
		if err != nil {
			return err
		}
		if kw == "syntax" {
			if v != "proto2" && v != "proto3" {
				return p.errorf(valAt, "Unrecognized syntax identifier \"%s\".  This parser only recognizes \"proto2\" and \"proto3\".", v)
			}
			f.syntax = v
		} else {
			if v != "2023" {
				return p.errorf(valAt, "Unknown edition \"%s\".", v)
			}
			f.edition = v
		}
		_ = at
		if err := p.endStatement(); err != nil {
			return err
		}
	}
	for p.tok.kind != tEOF {
		if err := p.topLevel(); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) topLevel() error {
	f := p.file
	if p.isSym(";") {
		return p.advance()
	}
	if p.tok.kind != tIdent {
		return p.errorf(p.tok.pos, "Expected top-level statement (e.g. \"message\").")
	}
	at := p.tok.pos
	switch p.tok.text {
	case "syntax", "edition":
		return p.errorf(at, "%s must be the first statement of the file.", p.tok.text)
	case "package":
		if f.hasPkg {
			return p.errorf(at, "Multiple package definitions.")
		}
		if err := p.advance(); err != nil {
			return err
		}
		name, _, err := p.fullIdent("identifier", false)
		if err != nil {
			return err
		}
		f.pkg, f.hasPkg = name, true
		return p.endStatement()
	case "import":
		if err := p.advance(); err != nil {
			return err
		}
		public, weak := false, false
		if p.is("public") {
			public = true
		} else if p.is("weak") {
			weak = true
		}
		if public || weak {
			if err := p.advance(); err != nil {
				return err
			}
		}
		path, err := p.stringLit()
		if err != nil {
			return err
		}
		f.importOrder = append(f.importOrder, path)
		if public {
			f.publicImports = append(f.publicImports, path)
		} else {
			f.imports = append(f.imports, path)
			if weak {
				if f.weak == nil {
					f.weak = map[string]bool{}
				}
				f.weak[path] = true
			}
		}
		return p.endStatement()
	case "option":
		o, err := p.optionStatement()
		if err != nil {
			return err
		}
		f.options = append(f.options, o)
		return nil
	case "message":
		m, err := p.message()
		if err != nil {
			return err
		}
		f.types = append(f.types, m)
		return nil
	case "enum":
		e, err := p.enum()
		if err != nil {
			return err
		}
		f.types = append(f.types, e)
		return nil
	case "extend":
		e, err := p.extend()
		if err != nil {
			return err
		}
		f.extends = append(f.extends, e)
		return nil
	case "service":
		s, err := p.service()
		if err != nil {
			return err
		}
		f.services = append(f.services, s)
		return nil
	}
	return p.errorf(at, "Expected top-level statement (e.g. \"message\").")
}

func (p *parser) nextSeq() int { p.seq++; return p.seq }

func (p *parser) message() (*message, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	name, _, err := p.ident("message name")
	if err != nil {
		return nil, err
	}
	m := &message{name: name, pos: at, seq: p.nextSeq()}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	if err := p.messageBody(m); err != nil {
		return nil, err
	}
	return m, nil
}

// messageBody reads declarations up to and including the closing brace.
func (p *parser) messageBody(m *message) error {
	for !p.isSym("}") {
		if p.tok.kind == tEOF {
			return p.errorf(p.tok.pos, "Reached end of input in message definition (missing '}').")
		}
		if err := p.messageElement(m); err != nil {
			return err
		}
	}
	return p.advance()
}

func (p *parser) messageElement(m *message) error {
	if p.isSym(";") {
		return p.advance()
	}
	if p.tok.kind == tIdent {
		switch p.tok.text {
		case "message":
			n, err := p.message()
			if err != nil {
				return err
			}
			m.nested = append(m.nested, n)
			return nil
		case "enum":
			e, err := p.enum()
			if err != nil {
				return err
			}
			m.nested = append(m.nested, e)
			return nil
		case "extend":
			e, err := p.extend()
			if err != nil {
				return err
			}
			m.extends = append(m.extends, e)
			return nil
		case "option":
			o, err := p.optionStatement()
			if err != nil {
				return err
			}
			m.options = append(m.options, o)
			return nil
		case "oneof":
			o, err := p.oneof()
			if err != nil {
				return err
			}
			m.oneofs = append(m.oneofs, o)
			return nil
		case "extensions":
			e, err := p.extensions()
			if err != nil {
				return err
			}
			m.extensions = append(m.extensions, e)
			return nil
		case "reserved":
			r, err := p.reserved()
			if err != nil {
				return err
			}
			m.reserveds = append(m.reserveds, r)
			return nil
		}
	}
	f, g, err := p.field(true)
	if err != nil {
		return err
	}
	if g != nil {
		m.groups = append(m.groups, g)
	} else {
		m.fields = append(m.fields, f)
	}
	return nil
}

var labels = map[string]bool{"optional": true, "required": true, "repeated": true}

// field reads a field, a map field or (with a label) a group. In a oneof
// labels are not allowed.
func (p *parser) field(labelled bool) (*field, *group, error) {
	at := p.tok.pos
	label := ""
	if p.tok.kind == tIdent && labels[p.tok.text] {
		if !labelled {
			return nil, nil, p.errorf(at, "Fields in oneofs must not have labels (required / optional / repeated).")
		}
		label = p.tok.text
		if err := p.advance(); err != nil {
			return nil, nil, err
		}
	}
	if p.is("group") {
		if next, err := p.lookahead(); err != nil {
			return nil, nil, err
		} else if next.kind == tIdent {
			g, err := p.group(label, at)
			return nil, g, err
		}
	}
	if p.is("map") {
		if next, err := p.lookahead(); err != nil {
			return nil, nil, err
		} else if next.kind == tSymbol && next.text == "<" {
			f, err := p.mapField(label, at, labelled)
			return f, nil, err
		}
	}
	typ, _, err := p.fullIdent("type name", true)
	if err != nil {
		return nil, nil, err
	}
	name, _, err := p.ident("field name")
	if err != nil {
		return nil, nil, err
	}
	f := &field{pos: at, seq: p.nextSeq(), label: label, typ: typ, name: name}
	if err := p.expect("="); err != nil {
		return nil, nil, err
	}
	if f.tag, err = p.fieldNumber(); err != nil {
		return nil, nil, err
	}
	if err := p.fieldOptions(f); err != nil {
		return nil, nil, err
	}
	if err := p.endStatement(); err != nil {
		return nil, nil, err
	}
	return f, nil, nil
}

func (p *parser) fieldNumber() (int64, error) {
	at := p.tok.pos
	if p.tok.kind != tInt {
		return 0, p.errorf(at, "Expected field number.")
	}
	n, ok := parseInt(p.tok.text)
	if !ok || n > maxTag {
		return 0, p.errorf(at, "Field number out of bounds.")
	}
	if n == 0 {
		return 0, p.errorf(at, "Field numbers must be positive integers.")
	}
	return int64(n), p.advance()
}

// parseInt reads a decimal, hex or octal literal.
func parseInt(s string) (uint64, bool) {
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil && len(s) > 1 && s[0] == '0' && s[1] != 'x' && s[1] != 'X' {
		n, err = strconv.ParseUint(s[1:], 8, 64)
	}
	return n, err == nil
}

func (p *parser) mapField(label string, at pos, labelled bool) (*field, error) {
	if err := p.advance(); err != nil { // map
		return nil, err
	}
	if err := p.expect("<"); err != nil {
		return nil, err
	}
	key, _, err := p.fullIdent("key type", true)
	if err != nil {
		return nil, err
	}
	if err := p.expect(","); err != nil {
		return nil, err
	}
	val, _, err := p.fullIdent("value type", true)
	if err != nil {
		return nil, err
	}
	if err := p.expect(">"); err != nil {
		return nil, err
	}
	if label != "" {
		return nil, p.errorf(at, "Field labels (required/optional/repeated) are not allowed on map fields.")
	}
	if !labelled {
		return nil, p.errorf(at, "Map fields are not allowed in oneofs.")
	}
	name, _, err := p.ident("field name")
	if err != nil {
		return nil, err
	}
	f := &field{pos: at, seq: p.nextSeq(), typ: "map<" + key + ", " + val + ">", mapKey: key, mapValue: val, name: name}
	if err := p.expect("="); err != nil {
		return nil, err
	}
	if f.tag, err = p.fieldNumber(); err != nil {
		return nil, err
	}
	if err := p.fieldOptions(f); err != nil {
		return nil, err
	}
	return f, p.endStatement()
}

func (p *parser) group(label string, at pos) (*group, error) {
	if err := p.advance(); err != nil { // group
		return nil, err
	}
	name, nameAt, err := p.ident("group name")
	if err != nil {
		return nil, err
	}
	if name[0] < 'A' || name[0] > 'Z' {
		return nil, p.errorf(nameAt, "Group names must start with a capital letter.")
	}
	g := &group{pos: at, seq: p.nextSeq(), label: label, name: name}
	if err := p.expect("="); err != nil {
		return nil, err
	}
	if g.tag, err = p.fieldNumber(); err != nil {
		return nil, err
	}
	if p.isSym("[") {
		holder := &field{}
		if err := p.fieldOptions(holder); err != nil {
			return nil, err
		}
		if holder.defaultValue != nil || holder.jsonName != nil {
			return nil, p.errorf(at, "Groups can't have default values or JSON names.")
		}
		g.options = holder.options
	}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	g.body = &message{name: name, pos: at, seq: g.seq}
	if err := p.messageBody(g.body); err != nil {
		return nil, err
	}
	g.fields = g.body.fields
	return g, nil
}

func (p *parser) oneof() (*oneof, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	name, _, err := p.ident("oneof name")
	if err != nil {
		return nil, err
	}
	o := &oneof{pos: at, name: name}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	for !p.isSym("}") {
		switch {
		case p.tok.kind == tEOF:
			return nil, p.errorf(p.tok.pos, "Reached end of input in oneof definition (missing '}').")
		case p.isSym(";"):
			if err := p.advance(); err != nil {
				return nil, err
			}
		case p.is("option"):
			opt, err := p.optionStatement()
			if err != nil {
				return nil, err
			}
			o.options = append(o.options, opt)
		default:
			f, g, err := p.field(false)
			if err != nil {
				return nil, err
			}
			if g != nil {
				o.groups = append(o.groups, g)
			} else {
				o.fields = append(o.fields, f)
			}
		}
	}
	if len(o.fields)+len(o.groups) == 0 {
		return nil, p.errorf(at, "Oneof must have at least one field.")
	}
	return o, p.advance()
}

// ranges reads "N", "N to M", "N to max", comma separated.
func (p *parser) ranges(enum bool) ([]rangeValue, error) {
	var out []rangeValue
	for {
		start, err := p.rangeBound(enum)
		if err != nil {
			return nil, err
		}
		v := rangeValue{start: start, end: start}
		if p.is("to") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			v.isRange = true
			if p.is("max") {
				v.end = maxTag
				if enum {
					v.end = 2147483647
				}
				if err := p.advance(); err != nil {
					return nil, err
				}
			} else if v.end, err = p.rangeBound(enum); err != nil {
				return nil, err
			}
			if v.end < v.start {
				return nil, p.errorf(p.tok.pos, "Reserved range end number must be greater than start number.")
			}
		}
		out = append(out, v)
		if !p.isSym(",") {
			return out, nil
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
}

func (p *parser) rangeBound(enum bool) (int64, error) {
	at := p.tok.pos
	neg := false
	if enum && p.isSym("-") {
		neg = true
		if err := p.advance(); err != nil {
			return 0, err
		}
	}
	if p.tok.kind != tInt {
		return 0, p.errorf(at, "Expected integer.")
	}
	n, ok := parseInt(p.tok.text)
	limit := uint64(maxTag)
	if enum {
		limit = 2147483647
		if neg {
			limit = 2147483648
		}
	}
	if !ok || n > limit {
		return 0, p.errorf(at, "Integer out of range.")
	}
	v := int64(n)
	if neg {
		v = -v
	}
	if !enum && v < 1 {
		return 0, p.errorf(at, "Field numbers must be positive integers.")
	}
	return v, p.advance()
}

func (p *parser) extensions() (*extensions, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	vs, err := p.ranges(false)
	if err != nil {
		return nil, err
	}
	e := &extensions{pos: at, values: vs}
	if p.isSym("[") {
		holder := &field{}
		if err := p.fieldOptions(holder); err != nil {
			return nil, err
		}
		if holder.defaultValue != nil || holder.jsonName != nil {
			return nil, p.errorf(at, "Extension ranges take no default or json_name.")
		}
		e.options = holder.options
	}
	return e, p.endStatement()
}

func (p *parser) reserved() (*reserved, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	r := &reserved{pos: at}
	switch {
	case p.tok.kind == tString || p.tok.kind == tIdent:
		if err := p.reservedNames(r); err != nil {
			return nil, err
		}
	default:
		vs, err := p.ranges(false)
		if err != nil {
			return nil, err
		}
		r.values = vs
	}
	return r, p.endStatement()
}

// reservedNames reads a reserved statement's names: string literals, or
// identifiers in editions.
func (p *parser) reservedNames(r *reserved) error {
	editions := p.file.edition != ""
	for {
		nameAt := p.tok.pos
		var name string
		if p.tok.kind == tIdent {
			if !editions {
				return p.errorf(nameAt, "Reserved names must be string literals. (Only editions supports identifiers.)")
			}
			name = p.tok.text
			if err := p.advance(); err != nil {
				return err
			}
		} else {
			if editions {
				return p.errorf(nameAt, "Reserved names must be identifiers in editions, not string literals.")
			}
			s, err := p.stringLit()
			if err != nil {
				return err
			}
			name = s
		}
		if !validIdent(name) {
			return p.errorf(nameAt, "Reserved name \"%s\" is not a valid identifier.", name)
		}
		r.values = append(r.values, rangeValue{name: name, isName: true})
		if !p.isSym(",") {
			return nil
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
}

func validIdent(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func (p *parser) enum() (*enum, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	name, _, err := p.ident("enum name")
	if err != nil {
		return nil, err
	}
	e := &enum{pos: at, name: name}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	for !p.isSym("}") {
		switch {
		case p.tok.kind == tEOF:
			return nil, p.errorf(p.tok.pos, "Reached end of input in enum definition (missing '}').")
		case p.isSym(";"):
			if err := p.advance(); err != nil {
				return nil, err
			}
		case p.is("option"):
			o, err := p.optionStatement()
			if err != nil {
				return nil, err
			}
			e.options = append(e.options, o)
		case p.is("reserved"):
			rat := p.tok.pos
			if next, err := p.lookahead(); err != nil {
				return nil, err
			} else if next.kind == tSymbol && next.text == "=" {
				if err := p.enumValue(e); err != nil {
					return nil, err
				}
				continue
			}
			if err := p.advance(); err != nil {
				return nil, err
			}
			r := &reserved{pos: rat}
			if p.tok.kind == tString || p.tok.kind == tIdent {
				if err := p.reservedNames(r); err != nil {
					return nil, err
				}
			} else {
				vs, err := p.ranges(true)
				if err != nil {
					return nil, err
				}
				r.values = vs
			}
			if err := p.endStatement(); err != nil {
				return nil, err
			}
			e.reserveds = append(e.reserveds, r)
		default:
			if err := p.enumValue(e); err != nil {
				return nil, err
			}
		}
	}
	return e, p.advance()
}

func (p *parser) enumValue(e *enum) error {
	at := p.tok.pos
	name, _, err := p.ident("enum constant name")
	if err != nil {
		return err
	}
	if err := p.expect("="); err != nil {
		return err
	}
	neg := false
	if p.isSym("-") {
		neg = true
		if err := p.advance(); err != nil {
			return err
		}
	}
	if p.tok.kind != tInt {
		return p.errorf(p.tok.pos, "Expected integer.")
	}
	n, ok := parseInt(p.tok.text)
	if !ok || (!neg && n > 2147483647) || (neg && n > 2147483648) {
		return p.errorf(p.tok.pos, "Integer out of range.")
	}
	v := int64(n)
	if neg {
		v = -v
	}
	if err := p.advance(); err != nil {
		return err
	}
	k := &enumConst{pos: at, name: name, tag: v}
	if p.isSym("[") {
		holder := &field{}
		if err := p.fieldOptions(holder); err != nil {
			return err
		}
		k.options = holder.options
		if holder.defaultValue != nil || holder.jsonName != nil {
			// default and json_name are no enum value options.
			return p.errorf(at, "Option \"%s\" unknown.", map[bool]string{true: "default", false: "json_name"}[holder.defaultValue != nil])
		}
	}
	e.constants = append(e.constants, k)
	return p.endStatement()
}

func (p *parser) extend() (*extendElem, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	name, _, err := p.fullIdent("type name", true)
	if err != nil {
		return nil, err
	}
	e := &extendElem{pos: at, name: name}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	for !p.isSym("}") {
		if p.tok.kind == tEOF {
			return nil, p.errorf(p.tok.pos, "Reached end of input in extend definition (missing '}').")
		}
		if p.isSym(";") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			continue
		}
		f, g, err := p.field(true)
		if err != nil {
			return nil, err
		}
		if g != nil {
			e.groups = append(e.groups, g)
			continue
		}
		if f.mapKey != "" {
			return nil, p.errorf(f.pos, "Map fields are not allowed to be extensions.")
		}
		e.fields = append(e.fields, f)
	}
	if len(e.fields)+len(e.groups) == 0 {
		return nil, p.errorf(at, "extend sections must define at least one extension.")
	}
	return e, p.advance()
}

func (p *parser) service() (*service, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	name, _, err := p.ident("service name")
	if err != nil {
		return nil, err
	}
	s := &service{pos: at, name: name}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	for !p.isSym("}") {
		switch {
		case p.tok.kind == tEOF:
			return nil, p.errorf(p.tok.pos, "Reached end of input in service definition (missing '}').")
		case p.isSym(";"):
			if err := p.advance(); err != nil {
				return nil, err
			}
		case p.is("option"):
			o, err := p.optionStatement()
			if err != nil {
				return nil, err
			}
			s.options = append(s.options, o)
		case p.is("rpc"):
			r, err := p.rpc()
			if err != nil {
				return nil, err
			}
			s.rpcs = append(s.rpcs, r)
		default:
			return nil, p.errorf(p.tok.pos, "Expected \"rpc\".")
		}
	}
	return s, p.advance()
}

func (p *parser) rpc() (*rpc, error) {
	at := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	name, _, err := p.ident("method name")
	if err != nil {
		return nil, err
	}
	r := &rpc{pos: at, name: name}
	side := func(stream *bool, typ *string) error {
		if err := p.expect("("); err != nil {
			return err
		}
		if p.is("stream") {
			// A keyword here, as protoc reads it: "(stream)" names no type.
			*stream = true
			if err := p.advance(); err != nil {
				return err
			}
		}
		t, _, err := p.fullIdent("type name", true)
		if err != nil {
			return err
		}
		*typ = t
		return p.expect(")")
	}
	if err := side(&r.requestStream, &r.requestType); err != nil {
		return nil, err
	}
	if !p.is("returns") {
		return nil, p.errorf(p.tok.pos, "Expected \"returns\".")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := side(&r.responseStream, &r.responseType); err != nil {
		return nil, err
	}
	if p.isSym("{") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		for !p.isSym("}") {
			switch {
			case p.tok.kind == tEOF:
				return nil, p.errorf(p.tok.pos, "Reached end of input in method options (missing '}').")
			case p.isSym(";"):
				if err := p.advance(); err != nil {
					return nil, err
				}
			case p.is("option"):
				o, err := p.optionStatement()
				if err != nil {
					return nil, err
				}
				r.options = append(r.options, o)
			default:
				return nil, p.errorf(p.tok.pos, "Expected \"option\".")
			}
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.isSym(";") {
			return r, p.advance()
		}
		return r, nil
	}
	return r, p.endStatement()
}

// optionName reads an option's name: parts, each an identifier or a
// parenthesized (possibly dotted, possibly leading-dot) extension name,
// joined by dots.
type namePart struct {
	name string
	ext  bool
}

func (p *parser) optionName() ([]namePart, error) {
	var parts []namePart
	for {
		if p.isSym("(") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			n, _, err := p.fullIdent("identifier", true)
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			parts = append(parts, namePart{n, true})
		} else {
			n, _, err := p.ident("identifier")
			if err != nil {
				return nil, err
			}
			parts = append(parts, namePart{n, false})
		}
		if !p.isSym(".") {
			return parts, nil
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
}

func (p *parser) optionStatement() (*option, error) {
	if err := p.advance(); err != nil { // option
		return nil, err
	}
	o, err := p.optionAssignment()
	if err != nil {
		return nil, err
	}
	return o, p.endStatement()
}

func (p *parser) optionAssignment() (*option, error) {
	at := p.tok.pos
	parts, err := p.optionName()
	if err != nil {
		return nil, err
	}
	if err := p.expect("="); err != nil {
		return nil, err
	}
	v, err := p.value(true)
	if err != nil {
		return nil, err
	}
	return buildOption(at, parts, v), nil
}

// buildOption is wire's reading of an option: "(a.b).c.d = v" is the
// extension a.b holding option c holding option d = v; a dotted name
// without parentheses is one name.
func buildOption(at pos, parts []namePart, v optionValue) *option {
	o := &option{pos: at}
	rest := parts
	if parts[0].ext {
		o.name, o.parenthesized = parts[0].name, true
		rest = parts[1:]
	} else {
		var names []string
		for len(rest) > 0 && !rest[0].ext {
			names = append(names, rest[0].name)
			rest = rest[1:]
		}
		o.name = strings.Join(names, ".")
	}
	leaf := &option{kind: v.kind, text: v.text, entries: v.entries, list: v.list}
	for i := len(rest) - 1; i >= 0; i-- {
		leaf.name = rest[i].name
		if rest[i].ext {
			leaf.name = "(" + leaf.name + ")"
		}
		leaf = &option{kind: kindOption, nested: leaf}
	}
	o.kind, o.text, o.entries, o.list, o.nested = leaf.kind, leaf.text, leaf.entries, leaf.list, leaf.nested
	return o
}

// fieldOptions reads "[a = 1, (b) = 2]" if present; default and json_name
// are kept apart, as wire does.
func (p *parser) fieldOptions(f *field) error {
	if !p.isSym("[") {
		return nil
	}
	if err := p.advance(); err != nil {
		return err
	}
	for {
		at := p.tok.pos
		parts, err := p.optionName()
		if err != nil {
			return err
		}
		if err := p.expect("="); err != nil {
			return err
		}
		v, err := p.value(true)
		if err != nil {
			return err
		}
		special := len(parts) == 1 && !parts[0].ext && (parts[0].name == "default" || parts[0].name == "json_name")
		switch {
		case special && parts[0].name == "default":
			if f.defaultValue != nil {
				return p.errorf(at, "Already set option \"default\".")
			}
			t := v.text
			f.defaultValue = &t
			f.defaultLit = v.kind
		case special:
			if f.jsonName != nil {
				return p.errorf(at, "Already set option \"json_name\".")
			}
			if v.kind != kindString {
				return p.errorf(at, "Expected string for JSON name.")
			}
			t := v.text
			f.jsonName = &t
		default:
			f.options = append(f.options, buildOption(at, parts, v))
		}
		if p.isSym("]") {
			return p.advance()
		}
		if err := p.expect(","); err != nil {
			return err
		}
	}
}

// value reads an option value: a string, a number (with a sign), an
// identifier, an aggregate in braces; in an aggregate also a list.
func (p *parser) value(top bool) (optionValue, error) {
	at := p.tok.pos
	switch {
	case p.tok.kind == tString:
		s, err := p.stringLit()
		return optionValue{kind: kindString, text: s}, err
	case p.isSym("{"):
		entries, err := p.aggregate("}")
		return optionValue{kind: kindMap, entries: entries}, err
	case !top && p.isSym("<"):
		entries, err := p.aggregate(">")
		return optionValue{kind: kindMap, entries: entries}, err
	case !top && p.isSym("["):
		if err := p.advance(); err != nil {
			return optionValue{}, err
		}
		var list []optionValue
		for !p.isSym("]") {
			v, err := p.value(false)
			if err != nil {
				return optionValue{}, err
			}
			list = append(list, v)
			if p.isSym("]") {
				break
			}
			if err := p.expect(","); err != nil {
				return optionValue{}, err
			}
		}
		return optionValue{kind: kindList, list: list}, p.advance()
	case p.isSym("-"):
		if err := p.advance(); err != nil {
			return optionValue{}, err
		}
		switch {
		case p.tok.kind == tInt || p.tok.kind == tFloat:
			t := p.tok.text
			return optionValue{kind: kindNumber, text: "-" + t}, p.advance()
		case p.tok.kind == tIdent && isSpecialFloat(p.tok.text):
			t := p.tok.text
			return optionValue{kind: kindEnum, text: "-" + t}, p.advance()
		}
		return optionValue{}, p.errorf(at, "Expected number.")
	case p.tok.kind == tInt || p.tok.kind == tFloat:
		t := p.tok.text
		return optionValue{kind: kindNumber, text: t}, p.advance()
	case p.tok.kind == tIdent:
		id, _, err := p.fullIdent("identifier", false)
		if err != nil {
			return optionValue{}, err
		}
		if id == "true" || id == "false" {
			return optionValue{kind: kindBoolean, text: id}, nil
		}
		return optionValue{kind: kindEnum, text: id}, nil
	}
	return optionValue{}, p.errorf(at, "Expected option value, found %s.", p.describe())
}

func isSpecialFloat(s string) bool {
	switch strings.ToLower(s) {
	case "inf", "infinity", "nan":
		return true
	}
	return false
}

// aggregate reads a text-format message up to its closing delimiter. A
// repeated key gathers its values into a list (wire's readMap).
func (p *parser) aggregate(closer string) ([]mapEntry, error) {
	if err := p.advance(); err != nil { // { or <
		return nil, err
	}
	var out []mapEntry
	for !p.isSym(closer) {
		if p.tok.kind == tEOF {
			return nil, p.errorf(p.tok.pos, "Expected \"%s\".", closer)
		}
		var key string
		if p.isSym("[") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			n, _, err := p.fullIdent("extension name", false)
			if err != nil {
				return nil, err
			}
			key = n
			if p.isSym("/") {
				if err := p.advance(); err != nil {
					return nil, err
				}
				t, _, err := p.fullIdent("type name", false)
				if err != nil {
					return nil, err
				}
				key = n + "/" + t
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			key = "[" + key + "]"
		} else {
			n, _, err := p.ident("field name")
			if err != nil {
				return nil, err
			}
			key = n
		}
		hasColon := false
		if p.isSym(":") {
			hasColon = true
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
		if !hasColon && !p.isSym("{") && !p.isSym("<") && !p.isSym("[") {
			return nil, p.errorf(p.tok.pos, "Expected \":\", found %s.", p.describe())
		}
		val, err := p.value(false)
		if err != nil {
			return nil, err
		}
		found := false
		for i := range out {
			if out[i].key != key {
				continue
			}
			found = true
			prev := out[i].value
			if prev.kind != kindList {
				prev = optionValue{kind: kindList, list: []optionValue{prev}}
			}
			if val.kind == kindList {
				prev.list = append(prev.list, val.list...)
			} else {
				prev.list = append(prev.list, val)
			}
			out[i].value = prev
		}
		if !found {
			out = append(out, mapEntry{key, val})
		}
		if p.isSym(",") || p.isSym(";") {
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
	}
	return out, p.advance()
}
