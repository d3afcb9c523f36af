// Package jsontree is the JSON document model the schema formats share: an
// ordered tree that keeps what Confluent's registry keeps when it reads a
// schema with Jackson (key order, the literal of each number, which numbers
// are integers) and prints it back the way Jackson prints it, so canonical
// strings come out as Confluent's do.
//
// encoding/json is not enough: it loses key order and number literals, and
// escapes '<', '>' and '&' where Jackson does not.
package jsontree

// Kind is the kind of a JSON value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "unknown"
}

// Value is one JSON value. Only the fields of its Kind are set.
type Value struct {
	Kind Kind
	Bool bool
	// Str is a String's text, or a Number's literal as written (a valid
	// JSON number).
	Str     string
	Items   []*Value
	Members []Member
}

// Member is one key of an object. Keys are unique: a repeated key replaces
// the earlier value in the earlier position, as Jackson's ObjectNode does.
type Member struct {
	Key   string
	Value *Value
}

// Get returns the value of key in an object, nil if absent or v is not an
// object.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// Text is Jackson's textValue(): the text of a string, and false for any
// other kind.
func (v *Value) Text() (string, bool) {
	if v == nil || v.Kind != String {
		return "", false
	}
	return v.Str, true
}

// Has reports whether an object has key.
func (v *Value) Has(key string) bool { return v.Get(key) != nil }

// set replaces or appends key.
func (v *Value) set(key string, val *Value) {
	for i := range v.Members {
		if v.Members[i].Key == key {
			v.Members[i].Value = val
			return
		}
	}
	v.Members = append(v.Members, Member{Key: key, Value: val})
}

// NewString, NewNumber and friends build values.
func NewString(s string) *Value { return &Value{Kind: String, Str: s} }

// NewNumber takes a valid JSON number literal.
func NewNumber(lit string) *Value { return &Value{Kind: Number, Str: lit} }
func NewBool(b bool) *Value       { return &Value{Kind: Bool, Bool: b} }
func NewNull() *Value             { return &Value{Kind: Null} }

// NewObject builds an object from members in order; a repeated key
// replaces the earlier value.
func NewObject(members ...Member) *Value {
	v := &Value{Kind: Object}
	for _, m := range members {
		v.set(m.Key, m.Value)
	}
	return v
}

// Equal is structural equality as Jackson's JsonNode.equals sees it: object
// key order does not matter, numbers compare by Jackson's node types
// (an integer never equals a float) and value.
func Equal(a, b *Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Null:
		return true
	case Bool:
		return a.Bool == b.Bool
	case String:
		return a.Str == b.Str
	case Number:
		return NumberEqual(a.Str, b.Str)
	case Array:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !Equal(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	case Object:
		if len(a.Members) != len(b.Members) {
			return false
		}
		for _, m := range a.Members {
			if !Equal(m.Value, b.Get(m.Key)) {
				return false
			}
		}
		return true
	}
	return false
}

// Sorted returns a deep copy of v with every object's keys in ascending
// order (Java's TreeMap order of UTF-16 code units), as Confluent's
// SortingNodeFactory builds them.
func Sorted(v *Value) *Value {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case Array:
		c := &Value{Kind: Array, Items: make([]*Value, len(v.Items))}
		for i, it := range v.Items {
			c.Items[i] = Sorted(it)
		}
		return c
	case Object:
		c := &Value{Kind: Object, Members: make([]Member, len(v.Members))}
		for i, m := range v.Members {
			c.Members[i] = Member{Key: m.Key, Value: Sorted(m.Value)}
		}
		SortMembers(c.Members)
		return c
	}
	c := *v
	return &c
}
