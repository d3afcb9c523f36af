package protobuf

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"sharq/schema/internal/javaorder"
)

// printer is Confluent's ProtobufSchemaUtils.toString with its
// FormatContext: the canonical text (neither flag), the normalized text
// (types resolved to full names, everything sorted) and the
// ignore_extensions format (custom options and extensions left out).
type printer struct {
	ignoreExtensions bool
	normalize        bool
	ctx              *context // the schema's types, for normalize
	err              error    // a name normalize could not resolve
}

func (p *printer) file(f *protoFile) string {
	var sb strings.Builder
	if f.syntax != "" && (!p.normalize || f.syntax == "proto3") {
		sb.WriteString("syntax = \"" + f.syntax + "\";\n")
	}
	if f.edition != "" && !p.normalize {
		sb.WriteString("edition = \"" + f.edition + "\";\n")
	}
	if f.hasPkg {
		sb.WriteString("package " + f.pkg + ";\n")
	}
	if len(f.imports) > 0 || len(f.publicImports) > 0 {
		sb.WriteByte('\n')
		imports, public := f.imports, f.publicImports
		if p.normalize {
			imports, public = javaorder.SortedSet(imports), javaorder.SortedSet(public)
		}
		for _, i := range imports {
			sb.WriteString("import \"" + i + "\";\n")
		}
		for _, i := range public {
			sb.WriteString("import public \"" + i + "\";\n")
		}
	}
	if opts := p.filterOptions(f.options); len(opts) > 0 {
		sb.WriteByte('\n')
		for _, o := range opts {
			sb.WriteString(p.optionStatement(o))
		}
	}
	if types := p.filterTypes(f.types); len(types) > 0 {
		sb.WriteByte('\n')
		// Messages keep their order: clients send message indexes against
		// the schema as registered.
		for _, t := range types {
			if m, ok := t.(*message); ok {
				p.ctx.enterName(m.name)
				sb.WriteString(p.message(m))
				p.ctx.leaveName()
			}
		}
		for _, t := range types {
			if e, ok := t.(*enum); ok {
				p.ctx.enterName(e.name)
				sb.WriteString(p.enum(e))
				p.ctx.leaveName()
			}
		}
	}
	if exts := p.extends(f.extends); !p.ignoreExtensions && len(exts) > 0 {
		sb.WriteByte('\n')
		for _, e := range exts {
			sb.WriteString(p.extend(e))
		}
	}
	if len(f.services) > 0 {
		sb.WriteByte('\n')
		for _, s := range f.services {
			sb.WriteString(p.service(s))
		}
	}
	return sb.String()
}

// indent is appendIndented: every line of value, two spaces in (Java's
// split drops the trailing empty lines).
func indent(sb *strings.Builder, value string) {
	lines := strings.Split(value, "\n")
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	for _, l := range lines {
		sb.WriteString("  ")
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
}

func (p *printer) service(s *service) string {
	var sb strings.Builder
	sb.WriteString("service " + s.name + " {")
	if opts := p.filterOptions(s.options); len(opts) > 0 {
		sb.WriteByte('\n')
		for _, o := range opts {
			indent(&sb, p.optionStatement(o))
		}
	}
	if len(s.rpcs) > 0 {
		sb.WriteByte('\n')
		for _, r := range s.rpcs {
			indent(&sb, p.rpc(r))
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

func (p *printer) rpc(r *rpc) string {
	var sb strings.Builder
	sb.WriteString("rpc " + r.name + " (")
	if r.requestStream {
		sb.WriteString("stream ")
	}
	sb.WriteString(p.resolved(r.requestType))
	sb.WriteString(") returns (")
	if r.responseStream {
		sb.WriteString("stream ")
	}
	sb.WriteString(p.resolved(r.responseType))
	sb.WriteString(")")
	if opts := p.filterOptions(r.options); len(opts) > 0 {
		sb.WriteString(" {\n")
		for _, o := range opts {
			indent(&sb, p.optionStatement(o))
		}
		sb.WriteByte('}')
	}
	sb.WriteString(";\n")
	return sb.String()
}

// resolved is a type name, fully qualified with a leading dot when
// normalizing.
func (p *printer) resolved(name string) string {
	if !p.normalize {
		return name
	}
	full := p.ctx.resolveType(name, original)
	if full == "" {
		if p.err == nil {
			p.err = &unresolvedError{name}
		}
		return name
	}
	return "." + full
}

type unresolvedError struct{ name string }

func (e *unresolvedError) Error() string { return "Could not resolve type: " + e.name }

func (p *printer) reservedLines(rs []*reserved) []*reserved {
	if !p.normalize {
		return rs
	}
	var out []*reserved
	for _, r := range rs {
		for _, v := range r.values {
			out = append(out, &reserved{values: []rangeValue{v}})
		}
	}
	key := func(v rangeValue) int64 {
		if v.isName {
			return 1 << 40
		}
		return v.start
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].values[0], out[j].values[0]
		if key(a) != key(b) {
			return key(a) < key(b)
		}
		return javaorder.Less(rangeString(a, false), rangeString(b, false))
	})
	return out
}

func rangeString(v rangeValue, normalize bool) string {
	switch {
	case v.isName:
		return "\"" + v.name + "\""
	case !v.isRange || normalize && v.start == v.end:
		return strconv.FormatInt(v.start, 10)
	case v.end < maxTag:
		return strconv.FormatInt(v.start, 10) + " to " + strconv.FormatInt(v.end, 10)
	}
	return strconv.FormatInt(v.start, 10) + " to max"
}

func (p *printer) reserved(r *reserved) string {
	parts := make([]string, len(r.values))
	for i, v := range r.values {
		parts[i] = rangeString(v, p.normalize)
	}
	return "reserved " + strings.Join(parts, ", ") + ";\n"
}

func (p *printer) enum(e *enum) string {
	var sb strings.Builder
	sb.WriteString("enum " + e.name + " {")
	if len(e.reserveds) > 0 {
		sb.WriteByte('\n')
		for _, r := range p.reservedLines(e.reserveds) {
			indent(&sb, p.reserved(r))
		}
	}
	if len(e.reserveds) == 0 && (len(e.options) > 0 || len(e.constants) > 0) {
		sb.WriteByte('\n')
	}
	for _, o := range p.filterOptions(e.options) {
		indent(&sb, p.optionStatement(o))
	}
	constants := e.constants
	if p.normalize {
		constants = append([]*enumConst(nil), constants...)
		sort.SliceStable(constants, func(i, j int) bool {
			if constants[i].tag != constants[j].tag {
				return constants[i].tag < constants[j].tag
			}
			return javaorder.Less(constants[i].name, constants[j].name)
		})
	}
	for _, k := range constants {
		var c strings.Builder
		c.WriteString(k.name + " = " + strconv.FormatInt(k.tag, 10))
		if opts := p.filterOptions(k.options); len(opts) > 0 {
			c.WriteByte(' ')
			p.appendOptions(&c, optionValues(opts))
		}
		c.WriteString(";\n")
		indent(&sb, c.String())
	}
	sb.WriteString("}\n")
	return sb.String()
}

func (p *printer) message(m *message) string {
	var sb strings.Builder
	sb.WriteString("message " + m.name + " {")
	if len(m.reserveds) > 0 {
		sb.WriteByte('\n')
		for _, r := range p.reservedLines(m.reserveds) {
			indent(&sb, p.reserved(r))
		}
	}
	if opts := p.filterOptions(m.options); len(opts) > 0 {
		sb.WriteByte('\n')
		for _, o := range opts {
			indent(&sb, p.optionStatement(o))
		}
	}
	if len(m.fields) > 0 {
		sb.WriteByte('\n')
		for _, f := range p.sortFields(m.fields) {
			indent(&sb, p.field(f))
		}
	}
	if len(m.oneofs) > 0 {
		sb.WriteByte('\n')
		oneofs := m.oneofs
		if p.normalize {
			oneofs = nil
			for _, o := range m.oneofs {
				if len(o.fields) > 0 {
					c := *o
					c.fields = p.sortFields(o.fields)
					oneofs = append(oneofs, &c)
				}
			}
			sort.SliceStable(oneofs, func(i, j int) bool { return oneofs[i].fields[0].tag < oneofs[j].fields[0].tag })
		}
		for _, o := range oneofs {
			indent(&sb, p.oneof(o))
		}
	}
	if len(m.groups) > 0 {
		sb.WriteByte('\n')
		for _, g := range p.sortGroups(m.groups) {
			indent(&sb, p.group(g))
		}
	}
	if !p.ignoreExtensions && len(m.extensions) > 0 {
		sb.WriteByte('\n')
		exts := m.extensions
		if p.normalize {
			exts = nil
			for _, e := range m.extensions {
				for _, v := range e.values {
					exts = append(exts, &extensions{values: []rangeValue{v}, options: e.options})
				}
			}
			sort.SliceStable(exts, func(i, j int) bool { return exts[i].values[0].start < exts[j].values[0].start })
		}
		for _, e := range exts {
			parts := make([]string, len(e.values))
			for i, v := range e.values {
				parts[i] = rangeString(v, p.normalize)
			}
			var s strings.Builder
			s.WriteString("extensions " + strings.Join(parts, ", "))
			if opts := p.filterOptions(e.options); len(opts) > 0 {
				s.WriteByte(' ')
				p.appendOptions(&s, optionValues(opts))
			}
			s.WriteString(";\n")
			indent(&sb, s.String())
		}
	}
	if exts := p.extends(m.extends); !p.ignoreExtensions && len(exts) > 0 {
		sb.WriteByte('\n')
		for _, e := range exts {
			indent(&sb, p.extend(e))
		}
	}
	if types := p.filterTypes(m.nested); len(types) > 0 {
		sb.WriteByte('\n')
		for _, t := range types {
			if n, ok := t.(*message); ok {
				p.ctx.enterName(n.name)
				indent(&sb, p.message(n))
				p.ctx.leaveName()
			}
		}
		for _, t := range types {
			if e, ok := t.(*enum); ok {
				p.ctx.enterName(e.name)
				indent(&sb, p.enum(e))
				p.ctx.leaveName()
			}
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

func (p *printer) sortFields(fs []*field) []*field {
	if !p.normalize {
		return fs
	}
	out := append([]*field(nil), fs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].tag < out[j].tag })
	return out
}

func (p *printer) sortGroups(gs []*group) []*group {
	if !p.normalize {
		return gs
	}
	out := append([]*group(nil), gs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].tag < out[j].tag })
	return out
}

// extends groups extensions by their resolved extendee when normalizing.
func (p *printer) extends(es []*extendElem) []*extendElem {
	// wire's model holds an extend's fields, not its groups: a block of
	// groups alone would print empty, which does not parse.
	var kept []*extendElem
	for _, e := range es {
		if len(e.fields) > 0 {
			kept = append(kept, e)
		}
	}
	es = kept
	if !p.normalize {
		return es
	}
	var out []*extendElem
	for _, e := range es {
		name := p.resolved(e.name)
		var g *extendElem
		for _, x := range out {
			if x.name == name {
				g = x
			}
		}
		if g == nil {
			g = &extendElem{name: name}
			out = append(out, g)
		}
		g.fields = append(g.fields, e.fields...)
	}
	return out
}

func (p *printer) extend(e *extendElem) string {
	var sb strings.Builder
	sb.WriteString("extend " + e.name + " {")
	if len(e.fields) > 0 {
		sb.WriteByte('\n')
		for _, f := range p.sortFields(e.fields) {
			indent(&sb, p.field(f))
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

func (p *printer) oneof(o *oneof) string {
	var sb strings.Builder
	sb.WriteString("oneof " + o.name + " {")
	if opts := p.filterOptions(o.options); len(opts) > 0 {
		sb.WriteByte('\n')
		for _, x := range opts {
			indent(&sb, p.optionStatement(x))
		}
	}
	if len(o.fields) > 0 {
		sb.WriteByte('\n')
		for _, f := range o.fields {
			indent(&sb, p.field(f))
		}
	}
	if len(o.groups) > 0 {
		sb.WriteByte('\n')
		for _, g := range p.sortGroups(o.groups) {
			indent(&sb, p.group(g))
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

func (p *printer) group(g *group) string {
	var sb strings.Builder
	if g.label != "" {
		sb.WriteString(g.label + " ")
	}
	sb.WriteString("group " + g.name + " = " + strconv.FormatInt(g.tag, 10) + " {")
	if len(g.fields) > 0 {
		sb.WriteByte('\n')
		for _, f := range p.sortFields(g.fields) {
			indent(&sb, p.field(f))
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

func (p *printer) field(f *field) string {
	var sb strings.Builder
	label, typ := f.label, f.typ
	pt := parseType(typ)
	if p.normalize {
		if !pt.isScalar() && !pt.isMap() {
			typ = p.resolved(typ)
			if ti := p.ctx.typeForFullName(typ, original); ti != nil && ti.isMap {
				pt = parseType(ti.mapType())
			} else {
				pt = parseType(typ)
			}
		}
		if pt.isMap() {
			if v := p.ctx.resolveType(pt.value.name, original); v != "" {
				pt = parseType("map<" + pt.key.name + ", ." + v + ">")
			}
			label = ""
		}
		typ = pt.name
	}
	if label != "" {
		sb.WriteString(label + " ")
	}
	sb.WriteString(typ + " " + f.name + " = " + strconv.FormatInt(f.tag, 10))
	opts := append([]*option(nil), f.options...)
	if f.defaultValue != nil {
		opts = append(opts, &option{name: "default", kind: defaultKind(p, pt), text: *f.defaultValue})
	}
	if f.jsonName != nil {
		opts = append(opts, &option{name: "json_name", kind: kindString, text: *f.jsonName})
	}
	if opts = p.filterOptions(opts); len(opts) > 0 {
		sb.WriteByte(' ')
		p.appendOptions(&sb, optionValues(opts))
	}
	sb.WriteString(";\n")
	return sb.String()
}

// defaultKind is the kind a field's default prints as (Confluent's toKind
// of the field type). Bytes print quoted: Confluent prints them bare, which
// does not parse again.
func defaultKind(p *printer, t *protoType) optionKind {
	switch t.name {
	case "bool":
		return kindBoolean
	case "string", "bytes":
		return kindString
	case "double", "float", "fixed32", "fixed64", "int32", "int64", "sfixed32", "sfixed64", "sint32", "sint64", "uint32", "uint64":
		return kindNumber
	}
	return kindEnum
}

func (p *printer) filterTypes(types []typeElem) []typeElem {
	if !p.normalize {
		return types
	}
	var out []typeElem
	for _, t := range types {
		if m, ok := t.(*message); ok {
			p.ctx.enterName(m.name)
			ti := p.ctx.getType(m.name, original)
			p.ctx.leaveName()
			if ti != nil && ti.isMap {
				continue // a synthetic map entry prints as the map field
			}
		}
		out = append(out, t)
	}
	return out
}

// filterOptions drops custom options for ignore_extensions and, when
// normalizing, qualifies extension names, sorts by name and merges the
// repeated statements of a message-typed extension.
func (p *printer) filterOptions(opts []*option) []*option {
	if len(opts) == 0 {
		return opts
	}
	if p.ignoreExtensions {
		var kept []*option
		for _, o := range opts {
			if !o.parenthesized || strings.HasPrefix(o.name, "confluent.") {
				kept = append(kept, o)
			}
		}
		opts = kept
	}
	if !p.normalize {
		return opts
	}
	var named []*option
	for _, o := range opts {
		if o.parenthesized {
			if r := p.ctx.resolveExtend(o.name, original); r != "" {
				c := transform(&option{name: r, kind: o.kind, text: o.text, nested: o.nested, entries: o.entries, list: o.list, parenthesized: true})
				named = append(named, c)
				continue
			}
		}
		named = append(named, o)
	}
	sort.SliceStable(named, func(i, j int) bool { return javaorder.Less(named[i].name, named[j].name) })
	var out []*option
	for i := 0; i < len(named); {
		j := i
		for j < len(named) && named[j].name == named[i].name {
			j++
		}
		group := named[i:j]
		if info := p.ctx.extendForFullName(named[i].name, original); info != nil && !info.repeated {
			merged := group[0]
			for _, o := range group[1:] {
				merged = mergeOption(merged, o)
			}
			out = append(out, merged)
		} else {
			out = append(out, group...)
		}
		i = j
	}
	return out
}

// transform turns "(ext).a.b = v" into "(ext) = { a: { b: v } }", the form
// normalized options merge in.
func transform(o *option) *option {
	if o.kind != kindOption || o.nested == nil {
		return o
	}
	return &option{name: o.name, kind: kindMap, entries: []mapEntry{{o.nested.name, toValue(transform(o.nested))}}, parenthesized: o.parenthesized}
}

func toValue(o *option) optionValue {
	switch o.kind {
	case kindMap:
		return optionValue{kind: kindMap, entries: o.entries}
	case kindList:
		return optionValue{kind: kindList, list: o.list}
	}
	return optionValue{kind: o.kind, text: o.text}
}

func mergeOption(a, b *option) *option {
	b = transform(b)
	if a.kind != kindMap || b.kind != kindMap {
		return b
	}
	return &option{name: b.name, kind: kindMap, entries: mergeEntries(a.entries, b.entries), parenthesized: b.parenthesized}
}

func mergeEntries(a, b []mapEntry) []mapEntry {
	out := append([]mapEntry(nil), a...)
	for _, e := range b {
		found := false
		for i := range out {
			if out[i].key != e.key {
				continue
			}
			found = true
			v1, v2 := out[i].value, e.value
			switch {
			case v1.kind == kindMap && v2.kind == kindMap:
				out[i].value = optionValue{kind: kindMap, entries: mergeEntries(v1.entries, v2.entries)}
			default:
				out[i].value = v2
			}
		}
		if !found {
			out = append(out, e)
		}
	}
	return out
}

// optionValues wraps options as the list values appendOptions prints.
func optionValues(opts []*option) []any {
	out := make([]any, len(opts))
	for i, o := range opts {
		out[i] = o
	}
	return out
}

func (p *printer) optionStatement(o *option) string {
	return "option " + p.option(o) + ";\n"
}

func (p *printer) option(o *option) string {
	var sb strings.Builder
	if o.parenthesized {
		sb.WriteString("(" + o.name + ")")
	} else {
		sb.WriteString(o.name)
	}
	switch o.kind {
	case kindString:
		sb.WriteString(" = \"" + escapeChars(o.text) + "\"")
	case kindBoolean, kindEnum:
		sb.WriteString(" = " + o.text)
	case kindNumber:
		sb.WriteString(" = " + p.number(o.text))
	case kindOption:
		sb.WriteByte('.')
		if o.nested != nil {
			n := *o.nested
			n.parenthesized = false
			sb.WriteString(p.option(&n))
		}
	case kindMap:
		sb.WriteString(" = {\n")
		p.optionMap(&sb, o.entries)
		sb.WriteByte('}')
	case kindList:
		sb.WriteString(" = ")
		vals := make([]any, len(o.list))
		for i := range o.list {
			vals[i] = o.list[i]
		}
		p.appendOptions(&sb, vals)
	}
	return sb.String()
}

func (p *printer) optionMap(sb *strings.Builder, entries []mapEntry) {
	if p.normalize {
		var kept []mapEntry
		for _, e := range entries {
			if e.value.kind == kindList && len(e.value.list) == 0 {
				continue
			}
			if strings.HasPrefix(e.key, "[") && strings.HasSuffix(e.key, "]") {
				if r := p.ctx.resolveExtend(e.key[1:len(e.key)-1], original); r != "" {
					e.key = "[" + r + "]"
				}
			}
			dup := false
			for _, k := range kept {
				dup = dup || k.key == e.key
			}
			if !dup {
				kept = append(kept, e)
			}
		}
		sort.SliceStable(kept, func(i, j int) bool { return javaorder.Less(kept[i].key, kept[j].key) })
		entries = kept
	}
	for i, e := range entries {
		end := ","
		if i == len(entries)-1 {
			end = ""
		}
		indent(sb, e.key+": "+p.value(e.value)+end)
	}
}

func (p *printer) value(v optionValue) string {
	switch v.kind {
	case kindString:
		return "\"" + escapeChars(v.text) + "\""
	case kindMap:
		var sb strings.Builder
		sb.WriteString("{\n")
		p.optionMap(&sb, v.entries)
		sb.WriteByte('}')
		return sb.String()
	case kindList:
		if p.normalize && len(v.list) == 1 {
			return p.value(v.list[0])
		}
		var sb strings.Builder
		sb.WriteString("[\n")
		for i, x := range v.list {
			end := ","
			if i == len(v.list)-1 {
				end = ""
			}
			indent(&sb, p.value(x)+end)
		}
		sb.WriteString("]")
		return sb.String()
	case kindNumber:
		return p.number(v.text)
	}
	return v.text
}

// appendOptions prints a list of options or values: inline when there is
// one, one per line otherwise.
func (p *printer) appendOptions(sb *strings.Builder, vals []any) {
	str := func(x any) string {
		if o, ok := x.(*option); ok {
			return p.option(o)
		}
		return p.value(x.(optionValue))
	}
	if len(vals) == 1 {
		sb.WriteString("[" + str(vals[0]) + "]")
		return
	}
	sb.WriteString("[\n")
	for i, x := range vals {
		end := ","
		if i == len(vals)-1 {
			end = ""
		}
		indent(sb, str(x)+end)
	}
	sb.WriteByte(']')
}

// number prints a number as written, or normalized as Java's DecimalFormat
// with no grouping prints it (at most three fraction digits, half even).
func (p *printer) number(text string) string {
	if !p.normalize {
		return text
	}
	r, ok := parseNumber(text)
	if !ok {
		return text
	}
	neg := r.Sign() < 0
	r.Abs(r)
	// Round half even to three fraction digits.
	scaled := new(big.Rat).Mul(r, big.NewRat(1000, 1))
	q, m := new(big.Int).QuoRem(scaled.Num(), scaled.Denom(), new(big.Int))
	twice := new(big.Int).Mul(m, big.NewInt(2))
	switch twice.Cmp(scaled.Denom()) {
	case 1:
		q.Add(q, big.NewInt(1))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
	}
	s := q.String()
	for len(s) < 4 {
		s = "0" + s
	}
	intPart, frac := s[:len(s)-3], strings.TrimRight(s[len(s)-3:], "0")
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out
}

// parseNumber reads a proto number literal (decimal, hex, octal, float).
func parseNumber(text string) (*big.Rat, bool) {
	t := strings.TrimPrefix(text, "-")
	neg := len(t) != len(text)
	var r *big.Rat
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		n, ok := new(big.Int).SetString(t[2:], 16)
		if !ok {
			return nil, false
		}
		r = new(big.Rat).SetInt(n)
	} else if len(t) > 1 && t[0] == '0' && !strings.ContainsAny(t, ".eE") {
		n, ok := new(big.Int).SetString(t[1:], 8)
		if !ok {
			return nil, false
		}
		r = new(big.Rat).SetInt(n)
	} else {
		var ok bool
		if r, ok = new(big.Rat).SetString(t); !ok {
			return nil, false
		}
	}
	if neg {
		r.Neg(r)
	}
	return r, true
}

// escapeChars is Confluent's escapeChars for option strings. Bytes that
// are not UTF-8 and other control characters are written as octal escapes
// (Confluent writes them raw, which loses bytes that are not UTF-8).
func escapeChars(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 7:
			sb.WriteString(`\a`)
		case r == '\b':
			sb.WriteString(`\b`)
		case r == '\f':
			sb.WriteString(`\f`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\v':
			sb.WriteString(`\v`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\'':
			sb.WriteString(`\'`)
		case r == '"':
			sb.WriteString(`\"`)
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			sb.WriteString(fmt.Sprintf("\\%03o", s[i]))
		default:
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	return sb.String()
}
