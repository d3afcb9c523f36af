package protobuf

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// encodeFile is the linked file's FileDescriptorProto, as
// protodesc.ToFileDescriptorProto makes it and a deterministic Marshal
// writes it (fields in number order), under the given name, with
// json_name only where the schema wrote one other than the default (as
// Confluent's DynamicSchema has it).
func encodeFile(lf *lfile, name string) []byte {
	var b []byte
	str := func(b []byte, num protowire.Number, s string) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, []byte(s))
	}
	sub := func(b []byte, num protowire.Number, m []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, m)
	}
	b = str(b, fdName, name)
	if lf.f.pkg != "" {
		b = str(b, fdPackage, lf.f.pkg)
	}
	for _, d := range lf.deps {
		b = str(b, fdDependency, d)
	}
	for _, m := range lf.msgs {
		b = sub(b, fdMessageType, encodeMessage(m))
	}
	for _, e := range lf.enums {
		b = sub(b, fdEnumType, encodeEnum(e))
	}
	for _, s := range lf.services {
		b = sub(b, fdService, encodeService(s))
	}
	for _, f := range lf.exts {
		b = sub(b, fdExtension, encodeField(f))
	}
	if lf.optsVal != nil {
		b = sub(b, fdOptions, encodeMsg(lf.optsVal))
	}
	for i, dep := range lf.imports {
		if lf.public[dep] {
			b = protowire.AppendTag(b, fdPublicDependency, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(i))
		}
	}
	for i, dep := range lf.imports {
		if lf.weak[dep] {
			b = protowire.AppendTag(b, fdWeakDependency, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(i))
		}
	}
	switch lf.syntax {
	case "proto3":
		b = str(b, fdSyntax, "proto3")
	case "editions":
		b = str(b, fdSyntax, "editions")
		b = protowire.AppendTag(b, fdEdition, protowire.VarintType)
		ed := uint64(1000) // EDITION_2023
		if lf.f.edition == "2024" {
			ed = 1001
		}
		b = protowire.AppendVarint(b, ed)
	}
	return b
}

func appendStr(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, []byte(s))
}

func appendSub(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func encodeMessage(m *lmessage) []byte {
	var b []byte
	b = appendStr(b, dpName, m.name)
	for _, f := range m.fields {
		b = appendSub(b, dpField, encodeField(f))
	}
	for _, n := range m.nested {
		b = appendSub(b, dpNestedType, encodeMessage(n))
	}
	for _, e := range m.enums {
		b = appendSub(b, dpEnumType, encodeEnum(e))
	}
	for _, r := range m.extRanges {
		var rb []byte
		rb = appendVarint(rb, 1, uint64(r.start))
		rb = appendVarint(rb, 2, uint64(r.end+1))
		if r.optsVal != nil {
			rb = appendSub(rb, 3, encodeMsg(r.optsVal))
		}
		b = appendSub(b, dpExtensionRange, rb)
	}
	for _, f := range m.exts {
		b = appendSub(b, dpExtension, encodeField(f))
	}
	switch {
	case m.mapEntry:
		b = appendSub(b, dpOptions, appendVarint(nil, 7, 1))
	case m.optsVal != nil:
		b = appendSub(b, dpOptions, encodeMsg(m.optsVal))
	}
	for _, o := range m.oneofs {
		ob := appendStr(nil, 1, o.name)
		if o.optsVal != nil {
			ob = appendSub(ob, 2, encodeMsg(o.optsVal))
		}
		b = appendSub(b, dpOneofDecl, ob)
	}
	for _, r := range m.resRanges {
		var rb []byte
		rb = appendVarint(rb, 1, uint64(r.start))
		rb = appendVarint(rb, 2, uint64(r.end+1))
		b = appendSub(b, dpReservedRange, rb)
	}
	for _, n := range m.resNames {
		b = appendStr(b, dpReservedName, n)
	}
	return b
}

func encodeField(f *lfield) []byte {
	var b []byte
	b = appendStr(b, fldName, f.name)
	if f.isExt {
		b = appendStr(b, fldExtendee, f.extendee)
	}
	b = appendVarint(b, fldNumber, uint64(f.num))
	b = appendVarint(b, fldLabel, uint64(f.label))
	b = appendVarint(b, fldType, uint64(f.typ))
	if f.typeName != "" {
		b = appendStr(b, fldTypeName, f.typeName)
	}
	if f.defOut != nil {
		b = appendStr(b, fldDefault, *f.defOut)
	}
	if f.optsVal != nil {
		b = appendSub(b, fldOptions, encodeMsg(f.optsVal))
	}
	if f.oneof >= 0 {
		b = appendVarint(b, fldOneofIndex, uint64(f.oneof))
	}
	if f.jsonName != nil && *f.jsonName != jsonCamel(f.name) {
		b = appendStr(b, fldJSONName, *f.jsonName)
	}
	if f.proto3Opt {
		b = appendVarint(b, fldProto3Optional, 1)
	}
	return b
}

func encodeEnum(e *lenum) []byte {
	var b []byte
	b = appendStr(b, edName, e.name)
	for _, v := range e.values {
		vb := appendStr(nil, evName, v.name)
		vb = appendVarint(vb, evNumber, uint64(v.num))
		if v.optsVal != nil {
			vb = appendSub(vb, evOptions, encodeMsg(v.optsVal))
		}
		b = appendSub(b, edValue, vb)
	}
	if e.optsVal != nil {
		b = appendSub(b, edOptions, encodeMsg(e.optsVal))
	}
	for _, r := range e.resRanges {
		var rb []byte
		rb = appendVarint(rb, 1, uint64(r.start))
		rb = appendVarint(rb, 2, uint64(r.end))
		b = appendSub(b, edReservedRange, rb)
	}
	for _, n := range e.resNames {
		b = appendStr(b, edReservedName, n)
	}
	return b
}

func encodeService(s *lservice) []byte {
	var b []byte
	b = appendStr(b, sdName, s.name)
	for _, m := range s.methods {
		mb := appendStr(nil, mdName, m.name)
		mb = appendStr(mb, mdInput, m.inT)
		mb = appendStr(mb, mdOutput, m.outT)
		if m.optsVal != nil {
			mb = appendSub(mb, mdOptions, encodeMsg(m.optsVal))
		}
		if m.clientStream {
			mb = appendVarint(mb, mdClientStreaming, 1)
		}
		if m.srvStream {
			mb = appendVarint(mb, mdServerStreaming, 1)
		}
		b = appendSub(b, sdMethod, mb)
	}
	if s.optsVal != nil {
		b = appendSub(b, sdOptions, encodeMsg(s.optsVal))
	}
	return b
}
