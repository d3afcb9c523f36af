package avro

import (
	"math"
	"strconv"

	"sharq/schema/internal/javaorder"
	"sharq/schema/internal/jsontree"
)

// normalizedText is Confluent's AvroSchemaUtils.toNormalizedString (adapted
// from Avro's parsing canonical form, keeping what the canonical form
// drops): names fully qualified, properties and aliases sorted, defaults
// converted to their field's type, empty docs of named types dropped, the
// references' types named rather than defined. Confluent parses the result
// again; so do we (normalize).
func normalizedText(root *node, refTops []string) string {
	b := normBuilder{env: make(map[string]bool)}
	for _, t := range refTops {
		b.env[t] = true
	}
	b.build(root)
	return string(b.b)
}

type normBuilder struct {
	b   []byte
	env map[string]bool
}

func (b *normBuilder) raw(s string) { b.b = append(b.b, s...) }

// quoted appends s between quotes without escaping, as Confluent's
// builder does for names and symbols.
func (b *normBuilder) quoted(s string) {
	b.b = append(b.b, '"')
	b.b = append(b.b, s...)
	b.b = append(b.b, '"')
}

func (b *normBuilder) build(n *node) {
	switch n.typ {
	case Union:
		b.raw("[")
		for i, br := range n.branches {
			if i > 0 {
				b.raw(",")
			}
			b.build(br)
		}
		b.raw("]")
	case Array, Map:
		b.raw(`{"type":"`)
		b.raw(n.typ.String())
		if n.typ == Array {
			b.raw(`","items":`)
		} else {
			b.raw(`","values":`)
		}
		b.build(n.items)
		b.logicalProps(n)
		b.simpleProps(n.props)
		b.raw("}")
	case Record, Enum, Fixed:
		full := n.fullName()
		if b.env[full] {
			b.quoted(full)
			return
		}
		b.env[full] = true
		b.raw(`{"name":`)
		b.quoted(full)
		b.raw(`,"type":"`)
		b.raw(n.typ.String())
		b.raw(`"`)
		switch n.typ {
		case Enum:
			b.raw(`,"symbols":[`)
			for i, s := range n.symbols {
				if i > 0 {
					b.raw(",")
				}
				b.quoted(s)
			}
			b.raw("]")
		case Fixed:
			b.raw(`,"size":`)
			b.raw(strconv.Itoa(n.size))
		default:
			b.raw(`,"fields":[`)
			for i, f := range n.fields {
				if i > 0 {
					b.raw(",")
				}
				b.raw(`{"name":`)
				b.quoted(f.name)
				b.raw(`,"type":`)
				b.build(f.typ)
				b.fieldProps(f)
				b.raw("}")
			}
			b.raw("]")
		}
		b.logicalProps(n)
		b.complexProps(n)
		b.simpleProps(n.props)
		b.raw("}")
	default:
		if n.logical != "" || len(n.props) > 0 {
			b.raw(`{"type":"`)
			b.raw(n.typ.String())
			b.raw(`"`)
			b.logicalProps(n)
			b.simpleProps(n.props)
			b.raw("}")
			return
		}
		b.quoted(n.typ.String())
	}
}

func (b *normBuilder) logicalProps(n *node) {
	if n.logical == "" {
		return
	}
	b.raw(`,"logicalType":"`)
	b.raw(n.logical)
	b.raw(`"`)
	if n.logical == "decimal" {
		b.raw(`,"precision":`)
		b.raw(strconv.Itoa(n.precision))
		if n.scale != 0 {
			b.raw(`,"scale":`)
			b.raw(strconv.Itoa(n.scale))
		}
	}
}

func (b *normBuilder) simpleProps(ps []prop) {
	sorted := make([]jsontree.Member, len(ps))
	for i, p := range ps {
		sorted[i] = jsontree.Member{Key: p.key, Value: p.val}
	}
	jsontree.SortMembers(sorted)
	for _, m := range sorted {
		b.raw(`,"`)
		b.raw(m.Key)
		b.raw(`":`)
		b.b = jsontree.AppendCompact(b.b, jsontree.Sorted(m.Value), jsontree.Doubles)
	}
}

func (b *normBuilder) sortedStrings(key string, list []string) {
	s := javaorder.SortedSet(list)
	b.raw(`,"`)
	b.raw(key)
	b.raw(`":[`)
	for i, a := range s {
		if i > 0 {
			b.raw(",")
		}
		b.b = jsontree.AppendString(b.b, a)
	}
	b.raw("]")
}

func (b *normBuilder) complexProps(n *node) {
	if n.doc != nil && *n.doc != "" {
		b.raw(`,"doc":`)
		b.b = jsontree.AppendString(b.b, *n.doc)
	}
	if len(n.aliases) > 0 {
		b.sortedStrings("aliases", n.aliasNames())
	}
	if n.typ == Enum && n.enumDefault != nil {
		b.raw(`,"default":`)
		b.b = jsontree.AppendString(b.b, *n.enumDefault)
	}
}

func (b *normBuilder) fieldProps(f *field) {
	b.raw(`,"order":"`)
	b.raw(map[order]string{ascending: "ASCENDING", descending: "DESCENDING", ignore: "IGNORE"}[f.order])
	b.raw(`"`)
	if f.doc != nil {
		b.raw(`,"doc":`)
		b.b = jsontree.AppendString(b.b, *f.doc)
	}
	if len(f.aliases) > 0 {
		b.sortedStrings("aliases", f.aliases)
	}
	if f.def != nil {
		if d := javaDefault(f.def, f.typ); d != nil {
			b.raw(`,"default":`)
			b.b = jsontree.AppendCompact(b.b, jsontree.Sorted(d), jsontree.Doubles)
		}
	}
	b.simpleProps(f.props)
}

// javaDefault is Avro's JacksonUtils.toObject(default, schema) followed by
// Confluent's conversion back to JSON: a union's default is read as its
// first branch, numbers become the field's number type, bytes are read as
// ISO-8859-1. nil is Java's null: the default is dropped. Where Java
// throws (a record default naming no field), the key is dropped.
func javaDefault(v *jsontree.Value, n *node) *jsontree.Value {
	if n != nil && n.typ == Union {
		if len(n.branches) == 0 {
			return nil
		}
		n = n.branches[0]
	}
	var t Type
	if n != nil {
		t = n.typ
	}
	switch v.Kind {
	case jsontree.Null, jsontree.Bool:
		return v
	case jsontree.Number:
		if jsontree.Integral(v.Str) {
			i, ok := jsontree.Int64(v.Str)
			if !ok {
				return nil // BigIntegerNode: no branch of toObject takes it
			}
			switch t {
			case 0, Int, Long:
				return jsontree.NewNumber(strconv.FormatInt(i, 10))
			case Float:
				return jsontree.NewNumber(jsontree.JavaFloat(float32(float64(i))))
			case Double:
				return jsontree.NewNumber(jsontree.JavaDouble(float64(i)))
			}
			return nil
		}
		f := jsontree.Float64(v.Str)
		switch t {
		case 0, Double:
			return jsontree.NewNumber(jsontree.JavaDouble(f))
		case Float:
			f32 := float32(f)
			if math.IsInf(float64(f32), 0) || math.IsNaN(f) {
				return jsontree.NewNumber(jsontree.JavaDouble(float64(f32)))
			}
			return jsontree.NewNumber(jsontree.JavaFloat(f32))
		}
		return nil
	case jsontree.String:
		switch t {
		case 0, String, Enum:
			return v
		case Bytes, Fixed:
			rs := []rune(v.Str)
			for i, r := range rs {
				if r > 0xFF {
					rs[i] = '?'
				}
			}
			return jsontree.NewString(string(rs))
		}
		return nil
	case jsontree.Array:
		var elem *node
		if n != nil && n.typ == Array {
			elem = n.items
		}
		out := &jsontree.Value{Kind: jsontree.Array, Items: make([]*jsontree.Value, 0, len(v.Items))}
		for _, it := range v.Items {
			c := javaDefault(it, elem)
			if c == nil {
				return nil
			}
			out.Items = append(out.Items, c)
		}
		return out
	case jsontree.Object:
		out := &jsontree.Value{Kind: jsontree.Object}
		for _, m := range v.Members {
			var sub *node
			if n != nil && n.typ == Map {
				sub = n.items
			} else if n != nil && n.typ == Record {
				f := n.field(m.Key)
				if f == nil {
					continue
				}
				sub = f.typ
			}
			c := javaDefault(m.Value, sub)
			if c == nil {
				return nil
			}
			out.Members = append(out.Members, jsontree.Member{Key: m.Key, Value: c})
		}
		return out
	}
	return nil
}
