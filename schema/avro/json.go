package avro

import (
	"strconv"

	"sharq/schema/internal/jsontree"
)

// toJSON prints n as Avro's Schema.toString(knownNames) does: the first
// occurrence of a named type not in known defines it, later ones name it,
// qualified only where the enclosing namespace differs. Confluent's
// canonical string is this with the references' types known; the
// "resolved" format is it with none known. known is updated.
func toJSON(n *node, known map[string]bool, _ bool) string {
	if known == nil {
		known = make(map[string]bool)
	}
	w := writer{known: known}
	w.schema(n, "")
	return string(w.b)
}

type writer struct {
	b     []byte
	known map[string]bool
}

func (w *writer) str(s string) { w.b = jsontree.AppendString(w.b, s) }
func (w *writer) key(k string) { w.str(k); w.b = append(w.b, ':') }
func (w *writer) comma()       { w.b = append(w.b, ',') }
func (w *writer) field(k, v string) {
	w.comma()
	w.key(k)
	w.str(v)
}

func (w *writer) value(v *jsontree.Value) {
	w.b = jsontree.AppendCompact(w.b, v, jsontree.Doubles)
}

func (w *writer) props(ps []prop) {
	for _, p := range ps {
		w.comma()
		w.key(p.key)
		w.value(p.val)
	}
}

// nameRef writes a reference to a named type already written.
func (w *writer) nameRef(n *node, space string) bool {
	full := n.fullName()
	if !w.known[full] {
		w.known[full] = true
		return false
	}
	if n.space != "" && n.space == space && !isTypeName(n.name) {
		w.str(n.name)
	} else {
		w.str(full)
	}
	return true
}

func (w *writer) name(n *node, space string) {
	w.comma()
	w.key("name")
	w.str(n.name)
	if n.space != "" {
		if n.space != space {
			w.field("namespace", n.space)
		}
	} else if space != "" {
		w.field("namespace", "")
	}
}

func (w *writer) aliases(n *node) {
	if len(n.aliases) == 0 {
		return
	}
	w.comma()
	w.key("aliases")
	w.b = append(w.b, '[')
	for i, a := range n.aliases {
		if i > 0 {
			w.comma()
		}
		// Name.getQualified(name.space)
		if a.space != "" && a.space == n.space && !isTypeName(a.name) {
			w.str(a.name)
		} else if a.space == "" {
			w.str(a.name)
		} else {
			w.str(a.space + "." + a.name)
		}
	}
	w.b = append(w.b, ']')
}

func (w *writer) open(typ string) {
	w.b = append(w.b, '{')
	w.key("type")
	w.str(typ)
}

func (w *writer) schema(n *node, space string) {
	if n.placeholder {
		// Only in messages about a document still being read.
		w.str(n.unresolved)
		return
	}
	switch n.typ {
	case Record:
		if w.nameRef(n, space) {
			return
		}
		if n.isError {
			w.open("error")
		} else {
			w.open("record")
		}
		w.name(n, space)
		if n.doc != nil {
			w.field("doc", *n.doc)
		}
		w.comma()
		w.key("fields")
		w.b = append(w.b, '[')
		for i, f := range n.fields {
			if i > 0 {
				w.comma()
			}
			w.b = append(w.b, '{')
			w.key("name")
			w.str(f.name)
			w.comma()
			w.key("type")
			w.schema(f.typ, n.space)
			if f.doc != nil {
				w.field("doc", *f.doc)
			}
			if f.def != nil {
				w.comma()
				w.key("default")
				w.value(f.def)
			}
			if f.order != ascending {
				w.field("order", orderNames[f.order])
			}
			if len(f.aliases) > 0 {
				w.comma()
				w.key("aliases")
				w.b = append(w.b, '[')
				for j, a := range f.aliases {
					if j > 0 {
						w.comma()
					}
					w.str(a)
				}
				w.b = append(w.b, ']')
			}
			w.props(f.props)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
		w.props(n.props)
		w.aliases(n)
		w.b = append(w.b, '}')
	case Enum:
		if w.nameRef(n, space) {
			return
		}
		w.open("enum")
		w.name(n, space)
		if n.doc != nil {
			w.field("doc", *n.doc)
		}
		w.comma()
		w.key("symbols")
		w.b = append(w.b, '[')
		for i, s := range n.symbols {
			if i > 0 {
				w.comma()
			}
			w.str(s)
		}
		w.b = append(w.b, ']')
		if n.enumDefault != nil {
			w.field("default", *n.enumDefault)
		}
		w.props(n.props)
		w.aliases(n)
		w.b = append(w.b, '}')
	case Fixed:
		if w.nameRef(n, space) {
			return
		}
		w.open("fixed")
		w.name(n, space)
		if n.doc != nil {
			w.field("doc", *n.doc)
		}
		w.comma()
		w.key("size")
		w.b = strconv.AppendInt(w.b, int64(n.size), 10)
		w.props(n.props)
		w.aliases(n)
		w.b = append(w.b, '}')
	case Array, Map:
		key := "items"
		if n.typ == Map {
			key = "values"
		}
		w.open(n.typ.String())
		w.comma()
		w.key(key)
		w.schema(n.items, space)
		w.props(n.props)
		w.b = append(w.b, '}')
	case Union:
		w.b = append(w.b, '[')
		for i, b := range n.branches {
			if i > 0 {
				w.comma()
			}
			w.schema(b, space)
		}
		w.b = append(w.b, ']')
	default:
		if len(n.props) == 0 {
			w.str(n.typ.String())
			return
		}
		w.open(n.typ.String())
		w.props(n.props)
		w.b = append(w.b, '}')
	}
}
