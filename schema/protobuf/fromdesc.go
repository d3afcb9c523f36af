package protobuf

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/descriptorpb"
)

// fromDescriptor is Confluent's ProtobufSchema.toProtoFile(FileDescriptorProto):
// the element model of a compiled file (the well-known imports, or a
// schema registered as a base64 FileDescriptorProto). The standard options
// Confluent reads back are kept, custom ones are not. Confluent keeps a
// map field as a repeated field of its synthetic entry message; here it
// becomes the map field again, since a .proto with an explicit map_entry
// message does not compile.
func fromDescriptor(fd *descriptorpb.FileDescriptorProto) *protoFile {
	pf := &protoFile{pkg: fd.GetPackage(), hasPkg: fd.GetPackage() != ""}
	switch fd.GetSyntax() {
	case "proto2", "proto3":
		pf.syntax = fd.GetSyntax()
	}
	proto3 := fd.GetSyntax() == "proto3"
	public := map[int32]bool{}
	for _, i := range fd.GetPublicDependency() {
		public[i] = true
	}
	weak := map[int32]bool{}
	for _, i := range fd.GetWeakDependency() {
		weak[i] = true
	}
	for i, d := range fd.GetDependency() {
		switch {
		case public[int32(i)]:
			pf.publicImports = append(pf.publicImports, d)
		case !weak[int32(i)]:
			pf.imports = append(pf.imports, d)
		}
	}
	if o := fd.GetOptions(); o != nil {
		str := func(name string, set bool, v string) {
			if set {
				pf.options = append(pf.options, &option{name: name, kind: kindString, text: v})
			}
		}
		boolean := func(name string, v *bool) {
			if v != nil {
				pf.options = append(pf.options, &option{name: name, kind: kindBoolean, text: strconv.FormatBool(*v)})
			}
		}
		str("java_package", o.JavaPackage != nil, o.GetJavaPackage())
		str("java_outer_classname", o.JavaOuterClassname != nil, o.GetJavaOuterClassname())
		boolean("java_multiple_files", o.JavaMultipleFiles)
		boolean("java_generate_equals_and_hash", o.JavaGenerateEqualsAndHash)
		boolean("java_string_check_utf8", o.JavaStringCheckUtf8)
		if o.OptimizeFor != nil {
			pf.options = append(pf.options, &option{name: "optimize_for", kind: kindEnum, text: o.GetOptimizeFor().String()})
		}
		str("go_package", o.GoPackage != nil, o.GetGoPackage())
		boolean("cc_generic_services", o.CcGenericServices)
		boolean("java_generic_services", o.JavaGenericServices)
		boolean("py_generic_services", o.PyGenericServices)
		boolean("deprecated", o.Deprecated)
		boolean("cc_enable_arenas", o.CcEnableArenas)
		str("objc_class_prefix", o.ObjcClassPrefix != nil, o.GetObjcClassPrefix())
		str("csharp_namespace", o.CsharpNamespace != nil, o.GetCsharpNamespace())
		str("swift_prefix", o.SwiftPrefix != nil, o.GetSwiftPrefix())
		str("php_class_prefix", o.PhpClassPrefix != nil, o.GetPhpClassPrefix())
		str("php_namespace", o.PhpNamespace != nil, o.GetPhpNamespace())
		str("php_metadata_namespace", o.PhpMetadataNamespace != nil, o.GetPhpMetadataNamespace())
		str("ruby_package", o.RubyPackage != nil, o.GetRubyPackage())
	}
	for _, m := range fd.GetMessageType() {
		pf.types = append(pf.types, descMessage(m, proto3))
	}
	for _, e := range fd.GetEnumType() {
		pf.types = append(pf.types, descEnum(e))
	}
	for _, s := range fd.GetService() {
		pf.services = append(pf.services, descService(s))
	}
	pf.extends = descExtends(fd.GetExtension(), proto3)
	return pf
}

func boolOption(name string, v *bool) []*option {
	if v == nil {
		return nil
	}
	return []*option{{name: name, kind: kindBoolean, text: strconv.FormatBool(*v)}}
}

func descMessage(d *descriptorpb.DescriptorProto, proto3 bool) *message {
	m := &message{name: d.GetName()}
	entries := map[string]*descriptorpb.DescriptorProto{}
	for _, n := range d.GetNestedType() {
		if n.GetOptions().GetMapEntry() {
			entries[n.GetName()] = n
		}
	}
	oneofs := make([]*oneof, len(d.GetOneofDecl()))
	for i, o := range d.GetOneofDecl() {
		oneofs[i] = &oneof{name: o.GetName()}
	}
	for _, f := range d.GetField() {
		if f.OneofIndex != nil && !f.GetProto3Optional() && int(f.GetOneofIndex()) < len(oneofs) {
			o := oneofs[f.GetOneofIndex()]
			o.fields = append(o.fields, descField(f, proto3, true))
			continue
		}
		mf := descField(f, proto3, false)
		if e := entryOf(f, entries); e != nil {
			mf.label, mf.typ = "", "map<"+descField(e.GetField()[0], proto3, true).typ+", "+descField(e.GetField()[1], proto3, true).typ+">"
		}
		m.fields = append(m.fields, mf)
	}
	for _, n := range d.GetNestedType() {
		if entries[n.GetName()] != nil {
			continue
		}
		m.nested = append(m.nested, descMessage(n, proto3))
	}
	for _, e := range d.GetEnumType() {
		m.nested = append(m.nested, descEnum(e))
	}
	for _, r := range d.GetReservedRange() {
		m.reserveds = append(m.reserveds, &reserved{values: []rangeValue{exclusiveRange(r.GetStart(), r.GetEnd())}})
	}
	for _, n := range d.GetReservedName() {
		m.reserveds = append(m.reserveds, &reserved{values: []rangeValue{{name: n, isName: true}}})
	}
	for _, r := range d.GetExtensionRange() {
		m.extensions = append(m.extensions, &extensions{values: []rangeValue{exclusiveRange(r.GetStart(), r.GetEnd())}})
	}
	if o := d.GetOptions(); o != nil {
		m.options = append(m.options, boolOption("no_standard_descriptor_accessor", o.NoStandardDescriptorAccessor)...)
		m.options = append(m.options, boolOption("deprecated", o.Deprecated)...)
		m.options = append(m.options, boolOption("map_entry", o.MapEntry)...)
	}
	for _, o := range oneofs {
		if len(o.fields) > 0 {
			m.oneofs = append(m.oneofs, o)
		}
	}
	m.extends = descExtends(d.GetExtension(), proto3)
	return m
}

// exclusiveRange reads a descriptor's [start, end) as wire's value: a
// number or an inclusive range.
func exclusiveRange(start, end int32) rangeValue {
	if start == end-1 {
		return rangeValue{start: int64(start), end: int64(start)}
	}
	return rangeValue{start: int64(start), end: int64(end) - 1, isRange: true}
}

func descField(f *descriptorpb.FieldDescriptorProto, proto3, inOneof bool) *field {
	out := &field{name: f.GetName(), tag: int64(f.GetNumber())}
	if !inOneof {
		switch {
		case f.GetProto3Optional():
			out.label = "optional"
		case f.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REPEATED:
			out.label = "repeated"
		case proto3:
		case f.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REQUIRED:
			out.label = "required"
		default:
			out.label = "optional"
		}
	}
	if f.TypeName != nil {
		out.typ = f.GetTypeName()
	} else {
		out.typ = strings.ToLower(strings.TrimPrefix(f.GetType().String(), "TYPE_"))
	}
	if f.JsonName != nil {
		j := f.GetJsonName()
		out.jsonName = &j
	}
	if f.DefaultValue != nil && !proto3 {
		d := f.GetDefaultValue()
		out.defaultValue = &d
	}
	if o := f.GetOptions(); o != nil {
		if o.Ctype != nil {
			out.options = append(out.options, &option{name: "ctype", kind: kindEnum, text: o.GetCtype().String()})
		}
		out.options = append(out.options, boolOption("packed", o.Packed)...)
		if o.Jstype != nil {
			out.options = append(out.options, &option{name: "jstype", kind: kindEnum, text: o.GetJstype().String()})
		}
		out.options = append(out.options, boolOption("deprecated", o.Deprecated)...)
		out.options = append(out.options, boolOption("debug_redact", o.DebugRedact)...)
	}
	return out
}

func descEnum(d *descriptorpb.EnumDescriptorProto) *enum {
	e := &enum{name: d.GetName()}
	for _, v := range d.GetValue() {
		k := &enumConst{name: v.GetName(), tag: int64(v.GetNumber())}
		if o := v.GetOptions(); o != nil {
			k.options = append(k.options, boolOption("deprecated", o.Deprecated)...)
			k.options = append(k.options, boolOption("debug_redact", o.DebugRedact)...)
		}
		e.constants = append(e.constants, k)
	}
	for _, r := range d.GetReservedRange() {
		v := rangeValue{start: int64(r.GetStart()), end: int64(r.GetEnd()), isRange: r.GetStart() != r.GetEnd()}
		e.reserveds = append(e.reserveds, &reserved{values: []rangeValue{v}})
	}
	for _, n := range d.GetReservedName() {
		e.reserveds = append(e.reserveds, &reserved{values: []rangeValue{{name: n, isName: true}}})
	}
	if o := d.GetOptions(); o != nil {
		e.options = append(e.options, boolOption("allow_alias", o.AllowAlias)...)
		e.options = append(e.options, boolOption("deprecated", o.Deprecated)...)
	}
	return e
}

func descService(d *descriptorpb.ServiceDescriptorProto) *service {
	s := &service{name: d.GetName()}
	for _, m := range d.GetMethod() {
		r := &rpc{name: m.GetName(), requestType: m.GetInputType(), responseType: m.GetOutputType(),
			requestStream: m.GetClientStreaming(), responseStream: m.GetServerStreaming()}
		if o := m.GetOptions(); o != nil {
			r.options = append(r.options, boolOption("deprecated", o.Deprecated)...)
			if o.IdempotencyLevel != nil {
				r.options = append(r.options, &option{name: "idempotency_level", kind: kindEnum, text: o.GetIdempotencyLevel().String()})
			}
		}
		s.rpcs = append(s.rpcs, r)
	}
	if o := d.GetOptions(); o != nil {
		s.options = append(s.options, boolOption("deprecated", o.Deprecated)...)
	}
	return s
}

func descExtends(fields []*descriptorpb.FieldDescriptorProto, proto3 bool) []*extendElem {
	var out []*extendElem
	for _, f := range fields {
		var e *extendElem
		for _, x := range out {
			if x.name == f.GetExtendee() {
				e = x
			}
		}
		if e == nil {
			e = &extendElem{name: f.GetExtendee()}
			out = append(out, e)
		}
		e.fields = append(e.fields, descField(f, proto3, false))
	}
	return out
}

// entryOf is the synthetic entry message a repeated field's type names,
// nil if the field is not a map.
func entryOf(f *descriptorpb.FieldDescriptorProto, entries map[string]*descriptorpb.DescriptorProto) *descriptorpb.DescriptorProto {
	if f.GetLabel() != descriptorpb.FieldDescriptorProto_LABEL_REPEATED || f.TypeName == nil {
		return nil
	}
	name := f.GetTypeName()
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	e := entries[name]
	if e == nil || len(e.GetField()) != 2 || e.GetField()[0].GetName() != "key" || e.GetField()[1].GetName() != "value" {
		return nil
	}
	return e
}
