package protobuf

// The element model: a .proto file as Square's wire parser reads it
// (ProtoFileElement and friends), which is what Confluent's ProtobufSchema
// prints its canonical text from and diffs. Types are as written ("Foo",
// ".pkg.Foo", "map<string, Foo>"), labels as written (none for proto3
// fields without one, none in a oneof), default and json_name kept apart
// from the other options.

type protoFile struct {
	syntax        string // "proto2", "proto3", "" if not declared
	edition       string // editions files: the edition, syntax ""
	pkg           string
	hasPkg        bool
	imports       []string
	publicImports []string
	options       []*option
	types         []typeElem
	extends       []*extendElem
	services      []*service
	weak          map[string]bool // imports declared weak (also in imports)
	importOrder   []string        // every import as declared, public or not
}

// typeElem is a message or an enum.
type typeElem interface {
	typeName() string
	nestedTypes() []typeElem
}

type message struct {
	pos        pos
	seq        int // declaration order among a message's nested types and fields
	name       string
	reserveds  []*reserved
	options    []*option
	fields     []*field
	oneofs     []*oneof
	groups     []*group
	extensions []*extensions
	extends    []*extendElem
	nested     []typeElem
}

func (m *message) typeName() string        { return m.name }
func (m *message) nestedTypes() []typeElem { return m.nested }

type enum struct {
	pos       pos
	name      string
	reserveds []*reserved
	options   []*option
	constants []*enumConst
}

func (e *enum) typeName() string        { return e.name }
func (e *enum) nestedTypes() []typeElem { return nil }

type enumConst struct {
	pos     pos
	name    string
	tag     int64
	options []*option
}

type field struct {
	pos          pos
	seq          int
	mapKey       string // a map field's key and value types, as written
	mapValue     string
	label        string // optional, required, repeated, "" for none
	typ          string
	name         string
	tag          int64
	options      []*option
	defaultValue *string
	defaultLit   optionKind // the default's kind of literal
	jsonName     *string
}

type oneof struct {
	pos     pos
	name    string
	fields  []*field
	groups  []*group
	options []*option
}

type group struct {
	pos     pos
	seq     int
	label   string
	name    string
	tag     int64
	fields  []*field
	body    *message // the group's message: its fields and nested declarations
	options []*option
}

// reserved holds one reserved statement's values: names, numbers, ranges.
type reserved struct {
	pos    pos
	values []rangeValue
}

type extensions struct {
	pos     pos
	values  []rangeValue
	options []*option
}

// rangeValue is a reserved name, a number (start == end, !isRange), or a
// range start..end (inclusive; max is maxTag).
type rangeValue struct {
	name       string
	isName     bool
	start, end int64
	isRange    bool
}

const maxTag = 536870911

type extendElem struct {
	pos    pos
	name   string
	fields []*field
	groups []*group
}

type service struct {
	pos     pos
	name    string
	options []*option
	rpcs    []*rpc
}

type rpc struct {
	pos                           pos
	name                          string
	requestType, responseType     string
	requestStream, responseStream bool
	options                       []*option
}

// optionKind is wire's OptionElement.Kind.
type optionKind uint8

const (
	kindString optionKind = iota
	kindBoolean
	kindNumber
	kindEnum
	kindMap
	kindList
	kindOption
)

// option is wire's OptionElement: a name (an extension's without its
// parentheses), a kind and a value: the text of a scalar, a nested option
// for kindOption (the "(a).b.c" form), an ordered map for kindMap (an
// aggregate value), a list for kindList.
type option struct {
	pos           pos
	name          string
	kind          optionKind
	text          string
	nested        *option
	entries       []mapEntry
	list          []optionValue
	parenthesized bool
}

type mapEntry struct {
	key   string
	value optionValue
}

// optionValue is a value inside an aggregate or list: a string, a
// primitive (bool, number, enum, its text as written), a map or a list.
type optionValue struct {
	kind    optionKind // kindString, kindBoolean, kindNumber, kindEnum, kindMap, kindList
	text    string
	entries []mapEntry
	list    []optionValue
}
