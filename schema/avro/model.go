package avro

import (
	"strings"

	"sharq/schema/internal/jsontree"
)

// Type is an Avro schema type.
type Type uint8

const (
	Record Type = iota + 1
	Enum
	Array
	Map
	Union
	Fixed
	String
	Bytes
	Int
	Long
	Float
	Double
	Boolean
	Null
)

var typeNames = [...]string{"", "record", "enum", "array", "map", "union", "fixed", "string", "bytes", "int", "long", "float", "double", "boolean", "null"}

// String is the type's name in a schema ("record", "int").
func (t Type) String() string { return typeNames[t] }

// upper is Java's Schema.Type.toString(), which Avro's messages print.
func (t Type) upper() string { return strings.ToUpper(typeNames[t]) }

var primitives = map[string]Type{
	"string": String, "bytes": Bytes, "int": Int, "long": Long,
	"float": Float, "double": Double, "boolean": Boolean, "null": Null,
}

// isTypeName reports whether name is one of Avro's type names, which a
// named schema must qualify with its namespace (Java's shouldWriteFull).
func isTypeName(name string) bool {
	for _, n := range typeNames[1:] {
		if n == name {
			return true
		}
	}
	return false
}

// node is one schema in a parsed tree. Named types (record, enum, fixed)
// are shared by every place that names them, as in Java, so the
// compatibility checker's memo and cycle handling see the same identities
// Avro's does.
type node struct {
	typ Type

	// named types
	name, space string // space "" is Java's null namespace
	doc         *string
	aliases     []alias
	isError     bool

	fields      []*field // record
	symbols     []string // enum
	enumDefault *string  // enum
	size        int      // fixed
	items       *node    // array items, map values
	branches    []*node  // union

	props []prop
	// logical is a valid logical type's name ("" if none or invalid), with
	// decimal's precision and scale.
	logical          string
	precision, scale int

	// placeholder marks a forward reference while a document is being
	// parsed, waiting for the named type unresolved; resolution replaces
	// the node.
	placeholder bool
	unresolved  string
}

type alias struct{ name, space string }

type prop struct {
	key string
	val *jsontree.Value
}

type order uint8

const (
	ascending order = iota
	descending
	ignore
)

var orderNames = [...]string{"ascending", "descending", "ignore"}

type field struct {
	name    string
	typ     *node
	doc     *string
	def     *jsontree.Value // nil: no default
	order   order
	aliases []string
	props   []prop
	pos     int
}

func (n *node) named() bool { return n.typ == Record || n.typ == Enum || n.typ == Fixed }

// fullName is Java's getFullName(): the namespace-qualified name of a named
// type, the type name otherwise.
func (n *node) fullName() string {
	if n.named() {
		if n.space == "" {
			return n.name
		}
		return n.space + "." + n.name
	}
	return n.typ.String()
}

// shortName is Java's getName().
func (n *node) shortName() string {
	if n.named() {
		return n.name
	}
	return n.typ.String()
}

func (n *node) field(name string) *field {
	for _, f := range n.fields {
		if f.name == name {
			return f
		}
	}
	return nil
}

func (n *node) prop(key string) *jsontree.Value {
	for _, p := range n.props {
		if p.key == key {
			return p.val
		}
	}
	return nil
}

// aliasNames is Java's getAliases(): full names, or ".name" for an alias
// outside the namespace of a namespaced schema.
func (n *node) aliasNames() []string {
	out := make([]string, 0, len(n.aliases))
	for _, a := range n.aliases {
		switch {
		case a.space == "" && n.space != "":
			out = append(out, "."+a.name)
		case a.space == "":
			out = append(out, a.name)
		default:
			out = append(out, a.space+"."+a.name)
		}
	}
	return out
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
