package protobuf

import (
	"strings"

	"github.com/bufbuild/protocompile/ast"
)

// fromAST builds the element model of a parsed .proto file.
func fromAST(f *ast.FileNode) *protoFile {
	c := converter{f: f}
	pf := &protoFile{}
	if f.Syntax != nil {
		pf.syntax = f.Syntax.Syntax.AsString()
	}
	if f.Edition != nil {
		pf.edition = f.Edition.Edition.AsString()
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.PackageNode:
			pf.pkg, pf.hasPkg = string(d.Name.AsIdentifier()), true
		case *ast.ImportNode:
			if d.Public != nil {
				pf.publicImports = append(pf.publicImports, d.Name.AsString())
			} else {
				pf.imports = append(pf.imports, d.Name.AsString())
			}
		case *ast.OptionNode:
			pf.options = append(pf.options, c.option(d))
		case *ast.MessageNode:
			pf.types = append(pf.types, c.message(d.Name.Val, d.Decls))
		case *ast.EnumNode:
			pf.types = append(pf.types, c.enum(d))
		case *ast.ExtendNode:
			pf.extends = append(pf.extends, c.extend(d))
		case *ast.ServiceNode:
			pf.services = append(pf.services, c.service(d))
		}
	}
	return pf
}

type converter struct{ f *ast.FileNode }

// raw is a node's source text without whitespace (a number literal as
// written, "- 5" read as "-5").
func (c converter) raw(n ast.Node) string {
	return strings.Join(strings.Fields(c.f.NodeInfo(n).RawText()), "")
}

func (c converter) message(name string, decls []ast.MessageElement) *message {
	m := &message{name: name}
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.FieldNode:
			m.fields = append(m.fields, c.field(d))
		case *ast.MapFieldNode:
			m.fields = append(m.fields, c.mapField(d))
		case *ast.GroupNode:
			m.groups = append(m.groups, c.group(d))
		case *ast.OneofNode:
			m.oneofs = append(m.oneofs, c.oneof(d))
		case *ast.OptionNode:
			m.options = append(m.options, c.option(d))
		case *ast.ExtensionRangeNode:
			e := &extensions{values: c.ranges(d.Ranges)}
			if d.Options != nil {
				for _, o := range d.Options.Options {
					e.options = append(e.options, c.option(o))
				}
			}
			m.extensions = append(m.extensions, e)
		case *ast.ReservedNode:
			m.reserveds = append(m.reserveds, c.reserved(d))
		case *ast.MessageNode:
			m.nested = append(m.nested, c.message(d.Name.Val, d.Decls))
		case *ast.EnumNode:
			m.nested = append(m.nested, c.enum(d))
		case *ast.ExtendNode:
			m.extends = append(m.extends, c.extend(d))
		}
	}
	return m
}

func label(l ast.FieldLabel) string {
	if !l.IsPresent() {
		return ""
	}
	return l.Val
}

func (c converter) field(d *ast.FieldNode) *field {
	f := &field{label: label(d.Label), typ: string(d.FldType.AsIdentifier()), name: d.Name.Val, tag: int64(d.Tag.Val)}
	c.fieldOptions(f, d.Options)
	return f
}

func (c converter) mapField(d *ast.MapFieldNode) *field {
	typ := "map<" + d.MapType.KeyType.Val + ", " + string(d.MapType.ValueType.AsIdentifier()) + ">"
	f := &field{typ: typ, name: d.Name.Val, tag: int64(d.Tag.Val)}
	c.fieldOptions(f, d.Options)
	return f
}

// fieldOptions keeps default and json_name apart, as wire does.
func (c converter) fieldOptions(f *field, opts *ast.CompactOptionsNode) {
	if opts == nil {
		return
	}
	for _, o := range opts.Options {
		if len(o.Name.Parts) == 1 && !o.Name.Parts[0].IsExtension() {
			switch string(o.Name.Parts[0].Name.AsIdentifier()) {
			case "default":
				v := c.value(o.Val)
				f.defaultValue = &v.text
				continue
			case "json_name":
				v := c.value(o.Val)
				f.jsonName = &v.text
				continue
			}
		}
		f.options = append(f.options, c.option(o))
	}
}

func (c converter) group(d *ast.GroupNode) *group {
	g := &group{label: label(d.Label), name: d.Name.Val, tag: int64(d.Tag.Val)}
	for _, e := range d.Decls {
		switch e := e.(type) {
		case *ast.FieldNode:
			g.fields = append(g.fields, c.field(e))
		case *ast.MapFieldNode:
			g.fields = append(g.fields, c.mapField(e))
		}
	}
	return g
}

func (c converter) oneof(d *ast.OneofNode) *oneof {
	o := &oneof{name: d.Name.Val}
	for _, e := range d.Decls {
		switch e := e.(type) {
		case *ast.FieldNode:
			o.fields = append(o.fields, c.field(e))
		case *ast.GroupNode:
			o.groups = append(o.groups, c.group(e))
		case *ast.OptionNode:
			o.options = append(o.options, c.option(e))
		}
	}
	return o
}

func (c converter) enum(d *ast.EnumNode) *enum {
	e := &enum{name: d.Name.Val}
	for _, x := range d.Decls {
		switch x := x.(type) {
		case *ast.OptionNode:
			e.options = append(e.options, c.option(x))
		case *ast.ReservedNode:
			e.reserveds = append(e.reserveds, c.reserved(x))
		case *ast.EnumValueNode:
			k := &enumConst{name: x.Name.Val}
			k.tag, _ = x.Number.AsInt64()
			if x.Options != nil {
				for _, o := range x.Options.Options {
					k.options = append(k.options, c.option(o))
				}
			}
			e.constants = append(e.constants, k)
		}
	}
	return e
}

func (c converter) extend(d *ast.ExtendNode) *extendElem {
	e := &extendElem{name: string(d.Extendee.AsIdentifier())}
	for _, x := range d.Decls {
		if f, ok := x.(*ast.FieldNode); ok {
			e.fields = append(e.fields, c.field(f))
		}
	}
	return e
}

func (c converter) service(d *ast.ServiceNode) *service {
	s := &service{name: d.Name.Val}
	for _, x := range d.Decls {
		switch x := x.(type) {
		case *ast.OptionNode:
			s.options = append(s.options, c.option(x))
		case *ast.RPCNode:
			r := &rpc{name: x.Name.Val,
				requestType: string(x.Input.MessageType.AsIdentifier()), requestStream: x.Input.Stream != nil,
				responseType: string(x.Output.MessageType.AsIdentifier()), responseStream: x.Output.Stream != nil}
			for _, y := range x.Decls {
				if o, ok := y.(*ast.OptionNode); ok {
					r.options = append(r.options, c.option(o))
				}
			}
			s.rpcs = append(s.rpcs, r)
		}
	}
	return s
}

func (c converter) ranges(rs []*ast.RangeNode) []rangeValue {
	var out []rangeValue
	for _, r := range rs {
		start, _ := r.StartVal.AsInt64()
		v := rangeValue{start: start, end: start}
		if r.To != nil {
			v.isRange = true
			if r.Max != nil {
				v.end = maxTag
			} else {
				v.end, _ = r.EndVal.AsInt64()
			}
		}
		out = append(out, v)
	}
	return out
}

func (c converter) reserved(d *ast.ReservedNode) *reserved {
	r := &reserved{values: c.ranges(d.Ranges)}
	for _, n := range d.Names {
		r.values = append(r.values, rangeValue{name: n.AsString(), isName: true})
	}
	for _, n := range d.Identifiers {
		r.values = append(r.values, rangeValue{name: n.Val, isName: true})
	}
	return r
}

// option is wire's reading of an option: "(a.b).c.d = v" is the extension
// a.b holding option c holding option d = v; a dotted name without
// parentheses is one name.
func (c converter) option(d *ast.OptionNode) *option {
	parts := d.Name.Parts
	o := &option{}
	rest := parts
	if parts[0].IsExtension() {
		o.name, o.parenthesized = string(parts[0].Name.AsIdentifier()), true
		rest = parts[1:]
	} else {
		var names []string
		for len(rest) > 0 && !rest[0].IsExtension() {
			names = append(names, string(rest[0].Name.AsIdentifier()))
			rest = rest[1:]
		}
		o.name = strings.Join(names, ".")
	}
	v := c.value(d.Val)
	leaf := &option{kind: v.kind, text: v.text, entries: v.entries, list: v.list}
	for i := len(rest) - 1; i >= 0; i-- {
		p := rest[i]
		leaf.name = string(p.Name.AsIdentifier())
		if p.IsExtension() {
			leaf.name = "(" + leaf.name + ")"
		}
		leaf = &option{kind: kindOption, nested: leaf}
	}
	o.kind, o.text, o.entries, o.list, o.nested = leaf.kind, leaf.text, leaf.entries, leaf.list, leaf.nested
	return o
}

func (c converter) value(v ast.ValueNode) optionValue {
	switch v := v.(type) {
	case ast.StringValueNode:
		return optionValue{kind: kindString, text: v.AsString()}
	case ast.IdentValueNode:
		id := string(v.AsIdentifier())
		if id == "true" || id == "false" {
			return optionValue{kind: kindBoolean, text: id}
		}
		return optionValue{kind: kindEnum, text: id}
	case *ast.SpecialFloatLiteralNode:
		return optionValue{kind: kindEnum, text: c.raw(v)}
	case *ast.MessageLiteralNode:
		return optionValue{kind: kindMap, entries: c.aggregate(v)}
	case *ast.ArrayLiteralNode:
		var list []optionValue
		for _, e := range v.Elements {
			list = append(list, c.value(e))
		}
		return optionValue{kind: kindList, list: list}
	}
	return optionValue{kind: kindNumber, text: c.raw(v)}
}

// aggregate is wire's readMap: a repeated key gathers its values into a
// list.
func (c converter) aggregate(m *ast.MessageLiteralNode) []mapEntry {
	var out []mapEntry
	for _, e := range m.Elements {
		key := string(e.Name.Name.AsIdentifier())
		if e.Name.IsAnyTypeReference() {
			key = "[" + string(e.Name.URLPrefix.AsIdentifier()) + "/" + key + "]"
		} else if e.Name.IsExtension() {
			key = "[" + key + "]"
		}
		val := c.value(e.Val)
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
	}
	return out
}
