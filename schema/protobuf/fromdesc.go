package protobuf

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// A FileDescriptorProto read by hand with protowire (which, unlike the
// descriptor types and protodesc, has no package init to speak of).

// wmsg is a decoded message: its fields in wire order.
type wmsg []wfield

type wfield struct {
	num  protowire.Number
	v    uint64 // varint and fixed values
	b    []byte // length-delimited
	wire protowire.Type
}

func decodeMsg(b []byte) (wmsg, error) {
	var out wmsg
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		f := wfield{num: num, wire: typ}
		switch typ {
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.v = uint64(v)
		case protowire.Fixed64Type:
			f.v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.StartGroupType:
			var v []byte
			v, n = protowire.ConsumeGroup(num, b)
			f.b = v
		default:
			return nil, fmt.Errorf("invalid wire type %d", typ)
		}
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}

// str is the last value of a string field, set reports whether present.
func (m wmsg) str(num protowire.Number) (string, bool) {
	s, ok := "", false
	for _, f := range m {
		if f.num == num && f.wire == protowire.BytesType {
			s, ok = string(f.b), true
		}
	}
	return s, ok
}

func (m wmsg) strs(num protowire.Number) []string {
	var out []string
	for _, f := range m {
		if f.num == num && f.wire == protowire.BytesType {
			out = append(out, string(f.b))
		}
	}
	return out
}

func (m wmsg) varint(num protowire.Number) (uint64, bool) {
	v, ok := uint64(0), false
	for _, f := range m {
		if f.num == num && f.wire == protowire.VarintType {
			v, ok = f.v, true
		}
	}
	return v, ok
}

// varints reads a repeated integer field, packed or not.
func (m wmsg) varints(num protowire.Number) []uint64 {
	var out []uint64
	for _, f := range m {
		if f.num != num {
			continue
		}
		switch f.wire {
		case protowire.VarintType:
			out = append(out, f.v)
		case protowire.BytesType:
			b := f.b
			for len(b) > 0 {
				v, n := protowire.ConsumeVarint(b)
				if n < 0 {
					break
				}
				out = append(out, v)
				b = b[n:]
			}
		}
	}
	return out
}

func (m wmsg) boolean(num protowire.Number) *bool {
	v, ok := m.varint(num)
	if !ok {
		return nil
	}
	b := v != 0
	return &b
}

// msgs decodes every value of a message field.
func (m wmsg) msgs(num protowire.Number) ([]wmsg, error) {
	var out []wmsg
	for _, f := range m {
		if f.num == num && f.wire == protowire.BytesType {
			sub, err := decodeMsg(f.b)
			if err != nil {
				return nil, err
			}
			out = append(out, sub)
		}
	}
	return out, nil
}

// msg is a singular message field (the values merged, as proto does:
// their fields concatenated), nil if absent.
func (m wmsg) msg(num protowire.Number) (wmsg, error) {
	all, err := m.msgs(num)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	var out wmsg
	for _, a := range all {
		out = append(out, a...)
	}
	return out, nil
}

// Field numbers of descriptor.proto, as the descriptor is read and written.
const (
	fdName, fdPackage, fdDependency, fdMessageType, fdEnumType, fdService, fdExtension, fdOptions = 1, 2, 3, 4, 5, 6, 7, 8
	fdPublicDependency, fdWeakDependency, fdSyntax, fdEdition                                     = 10, 11, 12, 14

	dpName, dpField, dpNestedType, dpEnumType, dpExtensionRange, dpExtension, dpOptions, dpOneofDecl, dpReservedRange, dpReservedName = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10

	fldName, fldExtendee, fldNumber, fldLabel, fldType, fldTypeName, fldDefault, fldOptions, fldOneofIndex, fldJSONName, fldProto3Optional = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17

	edName, edValue, edOptions, edReservedRange, edReservedName                = 1, 2, 3, 4, 5
	evName, evNumber, evOptions                                                = 1, 2, 3
	sdName, sdMethod, sdOptions                                                = 1, 2, 3
	mdName, mdInput, mdOutput, mdOptions, mdClientStreaming, mdServerStreaming = 1, 2, 3, 4, 5, 6
)

// descriptor.proto's FieldDescriptorProto.Type and Label values.
const (
	typeDouble   = 1
	typeFloat    = 2
	typeInt64    = 3
	typeUint64   = 4
	typeInt32    = 5
	typeFixed64  = 6
	typeFixed32  = 7
	typeBool     = 8
	typeString   = 9
	typeGroup    = 10
	typeMessage  = 11
	typeBytes    = 12
	typeUint32   = 13
	typeEnum     = 14
	typeSfixed32 = 15
	typeSfixed64 = 16
	typeSint32   = 17
	typeSint64   = 18

	labelOptional = 1
	labelRequired = 2
	labelRepeated = 3
)

var scalarNames = [...]string{typeDouble: "double", typeFloat: "float", typeInt64: "int64", typeUint64: "uint64", typeInt32: "int32",
	typeFixed64: "fixed64", typeFixed32: "fixed32", typeBool: "bool", typeString: "string", typeGroup: "group", typeMessage: "message",
	typeBytes: "bytes", typeUint32: "uint32", typeEnum: "enum", typeSfixed32: "sfixed32", typeSfixed64: "sfixed64", typeSint32: "sint32", typeSint64: "sint64"}

func scalarType(name string) int {
	for i, n := range scalarNames {
		if n == name && i != typeGroup && i != typeMessage && i != typeEnum {
			return i
		}
	}
	return 0
}

// Enum value names of the standard options Confluent reads back.
var (
	optimizeModes    = map[uint64]string{1: "SPEED", 2: "CODE_SIZE", 3: "LITE_RUNTIME"}
	ctypes           = map[uint64]string{0: "STRING", 1: "CORD", 2: "STRING_PIECE"}
	jstypes          = map[uint64]string{0: "JS_NORMAL", 1: "JS_STRING", 2: "JS_NUMBER"}
	idempotencyLevel = map[uint64]string{0: "IDEMPOTENCY_UNKNOWN", 1: "NO_SIDE_EFFECTS", 2: "IDEMPOTENT"}
)

func enumName(names map[uint64]string, v uint64) string {
	if n, ok := names[v]; ok {
		return n
	}
	return strconv.FormatUint(v, 10)
}

// fromDescriptor is Confluent's ProtobufSchema.toProtoFile(FileDescriptorProto):
// the element model of a compiled file (a schema registered as a base64
// FileDescriptorProto, or a reference given so). The standard options
// Confluent reads back are kept, custom ones are not. Confluent keeps a
// map field as a repeated field of its synthetic entry message; here it
// becomes the map field again, since a .proto with an explicit map_entry
// message does not compile.
func fromDescriptor(fd wmsg) (*protoFile, error) {
	pkg, _ := fd.str(fdPackage)
	pf := &protoFile{pkg: pkg, hasPkg: pkg != ""}
	syntax, _ := fd.str(fdSyntax)
	switch syntax {
	case "proto2", "proto3":
		pf.syntax = syntax
	}
	proto3 := syntax == "proto3"
	public := map[uint64]bool{}
	for _, i := range fd.varints(fdPublicDependency) {
		public[i] = true
	}
	weak := map[uint64]bool{}
	for _, i := range fd.varints(fdWeakDependency) {
		weak[i] = true
	}
	for i, d := range fd.strs(fdDependency) {
		switch {
		case public[uint64(i)]:
			pf.publicImports = append(pf.publicImports, d)
		case !weak[uint64(i)]:
			pf.imports = append(pf.imports, d)
		default:
			continue
		}
		pf.importOrder = append(pf.importOrder, d)
	}
	o, err := fd.msg(fdOptions)
	if err != nil {
		return nil, err
	}
	if o != nil {
		str := func(name string, num protowire.Number) {
			if v, ok := o.str(num); ok {
				pf.options = append(pf.options, &option{name: name, kind: kindString, text: v})
			}
		}
		boolean := func(name string, num protowire.Number) {
			pf.options = append(pf.options, boolOption(name, o.boolean(num))...)
		}
		str("java_package", 1)
		str("java_outer_classname", 8)
		boolean("java_multiple_files", 10)
		boolean("java_generate_equals_and_hash", 20)
		boolean("java_string_check_utf8", 27)
		if v, ok := o.varint(9); ok {
			pf.options = append(pf.options, &option{name: "optimize_for", kind: kindEnum, text: enumName(optimizeModes, v)})
		}
		str("go_package", 11)
		boolean("cc_generic_services", 16)
		boolean("java_generic_services", 17)
		boolean("py_generic_services", 18)
		boolean("deprecated", 23)
		boolean("cc_enable_arenas", 31)
		str("objc_class_prefix", 36)
		str("csharp_namespace", 37)
		str("swift_prefix", 39)
		str("php_class_prefix", 40)
		str("php_namespace", 41)
		str("php_metadata_namespace", 44)
		str("ruby_package", 45)
	}
	msgs, err := fd.msgs(fdMessageType)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		dm, err := descMessage(m, proto3)
		if err != nil {
			return nil, err
		}
		pf.types = append(pf.types, dm)
	}
	enums, err := fd.msgs(fdEnumType)
	if err != nil {
		return nil, err
	}
	for _, e := range enums {
		de, err := descEnum(e)
		if err != nil {
			return nil, err
		}
		pf.types = append(pf.types, de)
	}
	svcs, err := fd.msgs(fdService)
	if err != nil {
		return nil, err
	}
	for _, s := range svcs {
		ds, err := descService(s)
		if err != nil {
			return nil, err
		}
		pf.services = append(pf.services, ds)
	}
	exts, err := fd.msgs(fdExtension)
	if err != nil {
		return nil, err
	}
	if pf.extends, err = descExtends(exts, proto3); err != nil {
		return nil, err
	}
	return pf, nil
}

func boolOption(name string, v *bool) []*option {
	if v == nil {
		return nil
	}
	return []*option{{name: name, kind: kindBoolean, text: strconv.FormatBool(*v)}}
}

func descMessage(d wmsg, proto3 bool) (*message, error) {
	name, _ := d.str(dpName)
	m := &message{name: name}
	nested, err := d.msgs(dpNestedType)
	if err != nil {
		return nil, err
	}
	entries := map[string]wmsg{}
	for _, n := range nested {
		o, err := n.msg(dpOptions)
		if err != nil {
			return nil, err
		}
		if b := o.boolean(7); b != nil && *b {
			nn, _ := n.str(dpName)
			entries[nn] = n
		}
	}
	decls, err := d.msgs(dpOneofDecl)
	if err != nil {
		return nil, err
	}
	oneofs := make([]*oneof, len(decls))
	for i, o := range decls {
		n, _ := o.str(1)
		oneofs[i] = &oneof{name: n}
	}
	fields, err := d.msgs(dpField)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		idx, inOneof := f.varint(fldOneofIndex)
		p3opt := f.boolean(fldProto3Optional)
		if inOneof && (p3opt == nil || !*p3opt) && int(idx) < len(oneofs) {
			o := oneofs[idx]
			of, err := descField(f, proto3, true)
			if err != nil {
				return nil, err
			}
			o.fields = append(o.fields, of)
			continue
		}
		mf, err := descField(f, proto3, false)
		if err != nil {
			return nil, err
		}
		if e := entryOf(f, entries); e != nil {
			ef, _ := e.msgs(dpField)
			k, err := descField(ef[0], proto3, true)
			if err != nil {
				return nil, err
			}
			v, err := descField(ef[1], proto3, true)
			if err != nil {
				return nil, err
			}
			mf.label, mf.typ = "", "map<"+k.typ+", "+v.typ+">"
		}
		m.fields = append(m.fields, mf)
	}
	for _, n := range nested {
		nn, _ := n.str(dpName)
		if entries[nn] != nil {
			continue
		}
		dm, err := descMessage(n, proto3)
		if err != nil {
			return nil, err
		}
		m.nested = append(m.nested, dm)
	}
	enums, err := d.msgs(dpEnumType)
	if err != nil {
		return nil, err
	}
	for _, e := range enums {
		de, err := descEnum(e)
		if err != nil {
			return nil, err
		}
		m.nested = append(m.nested, de)
	}
	rr, err := d.msgs(dpReservedRange)
	if err != nil {
		return nil, err
	}
	for _, r := range rr {
		s, _ := r.varint(1)
		e, _ := r.varint(2)
		m.reserveds = append(m.reserveds, &reserved{values: []rangeValue{exclusiveRange(int32(s), int32(e))}})
	}
	for _, n := range d.strs(dpReservedName) {
		m.reserveds = append(m.reserveds, &reserved{values: []rangeValue{{name: n, isName: true}}})
	}
	er, err := d.msgs(dpExtensionRange)
	if err != nil {
		return nil, err
	}
	for _, r := range er {
		s, _ := r.varint(1)
		e, _ := r.varint(2)
		m.extensions = append(m.extensions, &extensions{values: []rangeValue{exclusiveRange(int32(s), int32(e))}})
	}
	o, err := d.msg(dpOptions)
	if err != nil {
		return nil, err
	}
	if o != nil {
		m.options = append(m.options, boolOption("no_standard_descriptor_accessor", o.boolean(2))...)
		m.options = append(m.options, boolOption("deprecated", o.boolean(3))...)
		m.options = append(m.options, boolOption("map_entry", o.boolean(7))...)
	}
	for _, o := range oneofs {
		if len(o.fields) > 0 {
			m.oneofs = append(m.oneofs, o)
		}
	}
	exts, err := d.msgs(dpExtension)
	if err != nil {
		return nil, err
	}
	if m.extends, err = descExtends(exts, proto3); err != nil {
		return nil, err
	}
	return m, nil
}

// exclusiveRange reads a descriptor's [start, end) as wire's value: a
// number or an inclusive range.
func exclusiveRange(start, end int32) rangeValue {
	if start == end-1 {
		return rangeValue{start: int64(start), end: int64(start)}
	}
	return rangeValue{start: int64(start), end: int64(end) - 1, isRange: true}
}

func descField(f wmsg, proto3, inOneof bool) (*field, error) {
	name, _ := f.str(fldName)
	num, _ := f.varint(fldNumber)
	out := &field{name: name, tag: int64(int32(num))}
	label, _ := f.varint(fldLabel)
	if !inOneof {
		p3 := f.boolean(fldProto3Optional)
		switch {
		case p3 != nil && *p3:
			out.label = "optional"
		case label == labelRepeated:
			out.label = "repeated"
		case proto3:
		case label == labelRequired:
			out.label = "required"
		default:
			out.label = "optional"
		}
	}
	if tn, ok := f.str(fldTypeName); ok {
		out.typ = tn
	} else {
		t, _ := f.varint(fldType)
		if t == 0 || t >= uint64(len(scalarNames)) || scalarNames[t] == "" {
			return nil, fmt.Errorf("field %s: invalid type %d", name, t)
		}
		out.typ = scalarNames[t]
	}
	if j, ok := f.str(fldJSONName); ok {
		out.jsonName = &j
	}
	if d, ok := f.str(fldDefault); ok && !proto3 {
		out.defaultValue = &d
	}
	o, err := f.msg(fldOptions)
	if err != nil {
		return nil, err
	}
	if o != nil {
		if v, ok := o.varint(1); ok {
			out.options = append(out.options, &option{name: "ctype", kind: kindEnum, text: enumName(ctypes, v)})
		}
		out.options = append(out.options, boolOption("packed", o.boolean(2))...)
		if v, ok := o.varint(6); ok {
			out.options = append(out.options, &option{name: "jstype", kind: kindEnum, text: enumName(jstypes, v)})
		}
		out.options = append(out.options, boolOption("deprecated", o.boolean(3))...)
		out.options = append(out.options, boolOption("debug_redact", o.boolean(16))...)
	}
	return out, nil
}

func descEnum(d wmsg) (*enum, error) {
	name, _ := d.str(edName)
	e := &enum{name: name}
	vals, err := d.msgs(edValue)
	if err != nil {
		return nil, err
	}
	for _, v := range vals {
		n, _ := v.str(evName)
		num, _ := v.varint(evNumber)
		k := &enumConst{name: n, tag: int64(int32(num))}
		o, err := v.msg(evOptions)
		if err != nil {
			return nil, err
		}
		if o != nil {
			k.options = append(k.options, boolOption("deprecated", o.boolean(1))...)
			k.options = append(k.options, boolOption("debug_redact", o.boolean(3))...)
		}
		e.constants = append(e.constants, k)
	}
	rr, err := d.msgs(edReservedRange)
	if err != nil {
		return nil, err
	}
	for _, r := range rr {
		s, _ := r.varint(1)
		en, _ := r.varint(2)
		v := rangeValue{start: int64(int32(s)), end: int64(int32(en)), isRange: int32(s) != int32(en)}
		e.reserveds = append(e.reserveds, &reserved{values: []rangeValue{v}})
	}
	for _, n := range d.strs(edReservedName) {
		e.reserveds = append(e.reserveds, &reserved{values: []rangeValue{{name: n, isName: true}}})
	}
	o, err := d.msg(edOptions)
	if err != nil {
		return nil, err
	}
	if o != nil {
		e.options = append(e.options, boolOption("allow_alias", o.boolean(2))...)
		e.options = append(e.options, boolOption("deprecated", o.boolean(3))...)
	}
	return e, nil
}

func descService(d wmsg) (*service, error) {
	name, _ := d.str(sdName)
	s := &service{name: name}
	methods, err := d.msgs(sdMethod)
	if err != nil {
		return nil, err
	}
	for _, m := range methods {
		r := &rpc{}
		r.name, _ = m.str(mdName)
		r.requestType, _ = m.str(mdInput)
		r.responseType, _ = m.str(mdOutput)
		if b := m.boolean(mdClientStreaming); b != nil {
			r.requestStream = *b
		}
		if b := m.boolean(mdServerStreaming); b != nil {
			r.responseStream = *b
		}
		o, err := m.msg(mdOptions)
		if err != nil {
			return nil, err
		}
		if o != nil {
			r.options = append(r.options, boolOption("deprecated", o.boolean(33))...)
			if v, ok := o.varint(34); ok {
				r.options = append(r.options, &option{name: "idempotency_level", kind: kindEnum, text: enumName(idempotencyLevel, v)})
			}
		}
		s.rpcs = append(s.rpcs, r)
	}
	o, err := d.msg(sdOptions)
	if err != nil {
		return nil, err
	}
	if o != nil {
		s.options = append(s.options, boolOption("deprecated", o.boolean(33))...)
	}
	return s, nil
}

func descExtends(fields []wmsg, proto3 bool) ([]*extendElem, error) {
	var out []*extendElem
	for _, f := range fields {
		extendee, _ := f.str(fldExtendee)
		var e *extendElem
		for _, x := range out {
			if x.name == extendee {
				e = x
			}
		}
		if e == nil {
			e = &extendElem{name: extendee}
			out = append(out, e)
		}
		df, err := descField(f, proto3, false)
		if err != nil {
			return nil, err
		}
		e.fields = append(e.fields, df)
	}
	return out, nil
}

// entryOf is the synthetic entry message a repeated field's type names,
// nil if the field is not a map.
func entryOf(f wmsg, entries map[string]wmsg) wmsg {
	label, _ := f.varint(fldLabel)
	name, ok := f.str(fldTypeName)
	if label != labelRepeated || !ok {
		return nil
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	e := entries[name]
	if e == nil {
		return nil
	}
	fs, err := e.msgs(dpField)
	if err != nil || len(fs) != 2 {
		return nil
	}
	k, _ := fs[0].str(fldName)
	v, _ := fs[1].str(fldName)
	if k != "key" || v != "value" {
		return nil
	}
	return e
}
