package protobuf

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Options interpreted as protoc interprets them: each name resolved to a
// field of the options message descriptor.proto defines (or, in
// parentheses, to an extension of it), the value checked against the
// field's type and encoded into the options message.

// msgValue is a message being built: its fields in the order set.
type msgValue struct {
	typ     *lmessage
	entries []*msgEntry
}

type msgEntry struct {
	field *lfield
	raw   []byte    // a scalar's encoding, without its tag
	sub   *msgValue // a message's (or group's) value
}

const descriptorFile = "google/protobuf/descriptor.proto"

// optionsType is descriptor.proto's options message of that name.
func (l *linker) optionsType(name string) (*lmessage, error) {
	if _, err := l.load(descriptorFile, nil, nil); err != nil {
		return nil, err
	}
	s := l.syms["google.protobuf."+name]
	if s == nil || s.msg == nil {
		return nil, l.errorf(nil, pos{}, "google.protobuf.%s is not defined", name)
	}
	return s.msg, nil
}

func (l *linker) interpretOptions(lf *lfile) error {
	if lf.path == descriptorFile {
		return nil // its own options are not needed
	}
	var err error
	do := func(opts []*option, typ, scope string, out **msgValue) {
		if err != nil || len(opts) == 0 {
			return
		}
		var v *msgValue
		v, err = l.interpret(lf, opts, typ, scope)
		*out = v
	}
	do(lf.f.options, "FileOptions", lf.f.pkg, &lf.optsVal)
	var field func(f *lfield)
	field = func(f *lfield) { do(f.opts, "FieldOptions", f.scope, &f.optsVal) }
	var msg func(m *lmessage)
	msg = func(m *lmessage) {
		do(m.opts, "MessageOptions", m.full, &m.optsVal)
		for _, f := range m.fields {
			field(f)
		}
		for _, f := range m.exts {
			field(f)
		}
		for _, o := range m.oneofs {
			do(o.opts, "OneofOptions", m.full, &o.optsVal)
		}
		for i := range m.extRanges {
			do(m.extRanges[i].opts, "ExtensionRangeOptions", m.full, &m.extRanges[i].optsVal)
		}
		for _, n := range m.nested {
			msg(n)
		}
		for _, e := range m.enums {
			l.enumOptions(lf, e, do)
		}
	}
	for _, m := range lf.msgs {
		msg(m)
	}
	for _, e := range lf.enums {
		l.enumOptions(lf, e, do)
	}
	for _, f := range lf.exts {
		field(f)
	}
	for _, s := range lf.services {
		do(s.opts, "ServiceOptions", s.full, &s.optsVal)
		for _, m := range s.methods {
			do(m.opts, "MethodOptions", s.full, &m.optsVal)
		}
	}
	return err
}

func (l *linker) enumOptions(lf *lfile, e *lenum, do func([]*option, string, string, **msgValue)) {
	do(e.opts, "EnumOptions", e.full, &e.optsVal)
	for _, v := range e.values {
		do(v.opts, "EnumValueOptions", e.full, &v.optsVal)
	}
}

func (l *linker) interpret(lf *lfile, opts []*option, typ, scope string) (*msgValue, error) {
	t, err := l.optionsType(typ)
	if err != nil {
		return nil, err
	}
	root := &msgValue{typ: t}
	for _, o := range opts {
		if err := l.setOption(lf, root, o, scope); err != nil {
			return nil, err
		}
	}
	return root, nil
}

// optionPath is an option's name as parts, and its value.
func optionPath(o *option) ([]namePart, optionValue) {
	var parts []namePart
	if o.parenthesized {
		parts = append(parts, namePart{o.name, true})
	} else {
		for _, n := range strings.Split(o.name, ".") {
			parts = append(parts, namePart{n, false})
		}
	}
	for o.kind == kindOption && o.nested != nil {
		o = o.nested
		if strings.HasPrefix(o.name, "(") {
			parts = append(parts, namePart{strings.Trim(o.name, "()"), true})
		} else {
			parts = append(parts, namePart{o.name, false})
		}
	}
	return parts, optionValue{kind: o.kind, text: o.text, entries: o.entries, list: o.list}
}

func partsString(parts []namePart) string {
	var ss []string
	for _, p := range parts {
		if p.ext {
			ss = append(ss, "("+p.name+")")
		} else {
			ss = append(ss, p.name)
		}
	}
	return strings.Join(ss, ".")
}

func (l *linker) setOption(lf *lfile, root *msgValue, o *option, scope string) error {
	parts, val := optionPath(o)
	name := partsString(parts)
	if len(parts) == 1 && !parts[0].ext && parts[0].name == "uninterpreted_option" {
		return l.errorf(lf, o.pos, "Option must not use reserved name \"uninterpreted_option\".")
	}
	cur := root
	for i, p := range parts {
		f, err := l.optionField(lf, cur.typ, p, scope, name, o.pos)
		if err != nil {
			return err
		}
		if i == len(parts)-1 {
			return l.setValue(lf, cur, f, val, scope, name, o.pos, true)
		}
		if f.typ != typeMessage && f.typ != typeGroup {
			return l.errorf(lf, o.pos, "Option \"%s\" is an atomic type, not a message.", partsString(parts[:i+1]))
		}
		// A message along the path: the one already set, or a new one.
		var next *msgValue
		if f.label != labelRepeated {
			for _, e := range cur.entries {
				if e.field == f {
					next = e.sub
				}
			}
		}
		if next == nil {
			next = &msgValue{typ: f.msgType}
			cur.entries = append(cur.entries, &msgEntry{field: f, sub: next})
		}
		cur = next
	}
	return nil
}

// optionField resolves one part of an option name within a message.
func (l *linker) optionField(lf *lfile, m *lmessage, p namePart, scope, name string, at pos) (*lfield, error) {
	if !p.ext {
		for _, f := range m.fields {
			if f.name == p.name {
				return f, nil
			}
		}
		return nil, l.errorf(lf, at, "Option \"%s\" unknown.", name)
	}
	s, _, err := l.lookup(lf, scope, p.name, false)
	if err != nil {
		return nil, l.errorf(lf, at, "%s", err.Error())
	}
	if s == nil {
		return nil, l.errorf(lf, at, "Option \"(%s)\" unknown. Ensure that your proto definition file imports the proto which defines the option (i.e. via import option after syntax statement).", p.name)
	}
	if s.kind != symExtension {
		return nil, l.errorf(lf, at, "\"%s\" is not a field or extension of message \"%s\".", p.name, m.full)
	}
	if s.field.extendeeT != m {
		return nil, l.errorf(lf, at, "\"%s\" is not a field or extension of message \"%s\".", p.name, m.full)
	}
	return s.field, nil
}

// setValue sets field f of cur to v (appending if repeated).
func (l *linker) setValue(lf *lfile, cur *msgValue, f *lfield, v optionValue, scope, name string, at pos, top bool) error {
	if v.kind == kindList {
		if f.label != labelRepeated {
			return l.errorf(lf, at, "Option \"%s\": a list is only allowed for a repeated field.", name)
		}
		for _, x := range v.list {
			if err := l.setValue(lf, cur, f, x, scope, name, at, false); err != nil {
				return err
			}
		}
		return nil
	}
	if f.label != labelRepeated {
		for _, e := range cur.entries {
			if e.field == f {
				return l.errorf(lf, at, "Option \"%s\" was already set.", name)
			}
		}
	}
	if f.typ == typeMessage || f.typ == typeGroup {
		if v.kind != kindMap {
			return l.errorf(lf, at, "Option \"%s\" is a message. To set the entire message, use syntax like \"%s = { <proto text format> }\". To set fields within it, use syntax like \"%s.foo = value\".", name, name, name)
		}
		sub := &msgValue{typ: f.msgType}
		if err := l.aggregate(lf, sub, v.entries, scope, name, at); err != nil {
			return err
		}
		cur.entries = append(cur.entries, &msgEntry{field: f, sub: sub})
		return nil
	}
	raw, err := l.scalar(lf, f, v, name, at)
	if err != nil {
		return err
	}
	cur.entries = append(cur.entries, &msgEntry{field: f, raw: raw})
	return nil
}

// aggregate sets a message from a text-format literal.
func (l *linker) aggregate(lf *lfile, m *msgValue, entries []mapEntry, scope, name string, at pos) error {
	for _, e := range entries {
		var f *lfield
		key := e.key
		switch {
		case strings.HasPrefix(key, "[") && strings.Contains(key, "/"):
			// An Any's expanded form: type_url and value.
			url := strings.Trim(key, "[]")
			typeName := url[strings.LastIndexByte(url, '/')+1:]
			s := l.syms[typeName]
			if m.typ.full != "google.protobuf.Any" || s == nil || s.kind != symMessage || e.value.kind != kindMap {
				return l.errorf(lf, at, "Option \"%s\": invalid Any value %s.", name, key)
			}
			inner := &msgValue{typ: s.msg}
			if err := l.aggregate(lf, inner, e.value.entries, scope, name, at); err != nil {
				return err
			}
			m.entries = append(m.entries, &msgEntry{field: &lfield{num: 1, typ: typeString}, raw: protowire.AppendBytes(nil, []byte(url))},
				&msgEntry{field: &lfield{num: 2, typ: typeBytes}, raw: protowire.AppendBytes(nil, encodeMsg(inner))})
			continue
		case strings.HasPrefix(key, "["):
			en := strings.Trim(key, "[]")
			s := l.syms[strings.TrimPrefix(en, ".")]
			if s == nil {
				var err error
				s, _, err = l.lookup(lf, scope, en, false)
				if err != nil {
					return l.errorf(lf, at, "%s", err.Error())
				}
			}
			if s == nil || s.kind != symExtension || s.field.extendeeT != m.typ {
				return l.errorf(lf, at, "Option \"%s\": message type \"%s\" has no extension named \"%s\".", name, m.typ.full, en)
			}
			f = s.field
		default:
			for _, x := range m.typ.fields {
				if x.name == key || (x.isGroup && x.msgType.name == key) {
					f = x
				}
			}
			if f == nil {
				return l.errorf(lf, at, "Option \"%s\": message type \"%s\" has no field named \"%s\".", name, m.typ.full, key)
			}
		}
		if err := l.setValue(lf, m, f, e.value, scope, name, at, false); err != nil {
			return err
		}
	}
	return nil
}

// scalar encodes a scalar option value for the field's type.
func (l *linker) scalar(lf *lfile, f *lfield, v optionValue, name string, at pos) ([]byte, error) {
	bad := func(want string) ([]byte, error) {
		return nil, l.errorf(lf, at, "Value must be %s for %s option \"%s\".", want, scalarNames[f.typ], name)
	}
	switch f.typ {
	case typeBool:
		if v.kind != kindBoolean {
			return bad("identifier")
		}
		b := uint64(0)
		if v.text == "true" {
			b = 1
		}
		return protowire.AppendVarint(nil, b), nil
	case typeString, typeBytes:
		if v.kind != kindString {
			return bad("quoted string")
		}
		return protowire.AppendBytes(nil, []byte(v.text)), nil
	case typeEnum:
		if v.kind != kindEnum {
			return bad("identifier")
		}
		for _, x := range f.enumType.values {
			if x.name == v.text {
				return protowire.AppendVarint(nil, uint64(x.num)), nil
			}
		}
		return nil, l.errorf(lf, at, "Enum type \"%s\" has no value named \"%s\" for option \"%s\".", f.enumType.full, v.text, name)
	case typeFloat, typeDouble:
		var x float64
		switch v.kind {
		case kindNumber:
			n, ok := numberValue(v.text)
			if !ok {
				return bad("number")
			}
			x = n
		case kindEnum:
			switch strings.ToLower(v.text) {
			case "inf", "infinity":
				x = math.Inf(1)
			case "-inf", "-infinity":
				x = math.Inf(-1)
			case "nan", "-nan":
				x = math.NaN()
			default:
				return bad("number")
			}
		default:
			return bad("number")
		}
		if f.typ == typeFloat {
			return protowire.AppendFixed32(nil, math.Float32bits(float32(x))), nil
		}
		return protowire.AppendFixed64(nil, math.Float64bits(x)), nil
	}
	if v.kind != kindNumber {
		return bad("integer")
	}
	text, ok := intValue(v.text, f.typ)
	if !ok {
		if strings.HasPrefix(v.text, "-") && (f.typ == typeUint32 || f.typ == typeUint64 || f.typ == typeFixed32 || f.typ == typeFixed64) {
			return bad("non-negative integer")
		}
		return nil, l.errorf(lf, at, "Value out of range for %s option \"%s\".", scalarNames[f.typ], name)
	}
	var u uint64
	if strings.HasPrefix(text, "-") {
		n, _ := strconv.ParseInt(text, 10, 64)
		u = uint64(n)
	} else {
		u, _ = strconv.ParseUint(text, 10, 64)
	}
	switch f.typ {
	case typeInt32, typeInt64, typeUint32, typeUint64:
		return protowire.AppendVarint(nil, u), nil
	case typeSint32, typeSint64:
		return protowire.AppendVarint(nil, protowire.EncodeZigZag(int64(u))), nil
	case typeFixed32, typeSfixed32:
		return protowire.AppendFixed32(nil, uint32(u)), nil
	}
	return protowire.AppendFixed64(nil, u), nil
}

func wireType(t int) protowire.Type {
	switch t {
	case typeDouble, typeFixed64, typeSfixed64:
		return protowire.Fixed64Type
	case typeFloat, typeFixed32, typeSfixed32:
		return protowire.Fixed32Type
	case typeString, typeBytes, typeMessage:
		return protowire.BytesType
	case typeGroup:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// encodeMsg encodes a built message, its fields in number order (a
// repeated field's values in the order set).
func encodeMsg(m *msgValue) []byte {
	if m == nil {
		return nil
	}
	es := append([]*msgEntry(nil), m.entries...)
	// Deterministic Marshal's order (LegacyFieldOrder): extensions first,
	// then fields outside oneofs, then each oneof's, by number.
	key := func(f *lfield) (int, int, int64) {
		if f.isExt {
			return 0, 0, f.num
		}
		if f.oneof >= 0 && f.owner != nil && f.oneof < len(f.owner.oneofs) && !f.owner.oneofs[f.oneof].synthetic {
			return 2, f.oneof, f.num
		}
		return 1, 0, f.num
	}
	sort.SliceStable(es, func(i, j int) bool {
		a1, a2, a3 := key(es[i].field)
		b1, b2, b3 := key(es[j].field)
		if a1 != b1 {
			return a1 < b1
		}
		if a2 != b2 {
			return a2 < b2
		}
		return a3 < b3
	})
	var b []byte
	for _, e := range es {
		num := protowire.Number(e.field.num)
		switch {
		case e.sub != nil && e.field.typ == typeGroup:
			b = protowire.AppendTag(b, num, protowire.StartGroupType)
			b = append(b, encodeMsg(e.sub)...)
			b = protowire.AppendTag(b, num, protowire.EndGroupType)
		case e.sub != nil:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, encodeMsg(e.sub))
		default:
			b = protowire.AppendTag(b, num, wireType(e.field.typ))
			b = append(b, e.raw...)
		}
	}
	return b
}
