package avro

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"sharq/schema/internal/jsontree"
)

// parser reads schema documents into one name space, as Avro's
// Schema.Parser does when Confluent feeds it each reference and then the
// schema: a named type defined by an earlier document is known to the
// later ones.
type parser struct {
	// strict is Confluent's validateAsNew: Avro's STRICT_VALIDATOR on names
	// and default values checked. Otherwise names are not validated while
	// parsing (Confluent checks the main schema's afterwards) and defaults
	// are taken as written.
	strict bool
	types  map[string]*node
}

func newParser(strict bool) *parser {
	return &parser{strict: strict, types: make(map[string]*node)}
}

var reservedSchema = map[string]bool{
	"doc": true, "fields": true, "items": true, "name": true, "namespace": true,
	"size": true, "symbols": true, "values": true, "type": true, "aliases": true,
}

var reservedEnum = map[string]bool{
	"doc": true, "fields": true, "items": true, "name": true, "namespace": true,
	"size": true, "symbols": true, "values": true, "type": true, "aliases": true, "default": true,
}

var reservedField = map[string]bool{
	"default": true, "doc": true, "name": true, "order": true, "type": true, "aliases": true,
}

// document parses one schema text and resolves its forward references.
func (p *parser) document(text string) (*node, error) {
	v, err := jsontree.Parse(text, jsontree.Options{Comments: true})
	if err != nil {
		return nil, err
	}
	n, err := p.parse(v, "")
	if err != nil {
		return nil, err
	}
	r := resolver{types: p.types, seen: make(map[*node]bool)}
	n, err = r.fix(n)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func js(v *jsontree.Value) string { return jsontree.Compact(v, jsontree.Doubles) }

func (p *parser) parse(v *jsontree.Value, space string) (*node, error) {
	switch v.Kind {
	case jsontree.String:
		return p.find(v.Str, space), nil
	case jsontree.Object:
		typ, ok := v.Get("type").Text()
		if !ok {
			return nil, fmt.Errorf("No type: %s", js(v))
		}
		if t, ok := primitives[typ]; ok {
			n := &node{typ: t}
			p.props(v, n, reservedSchema)
			return n, nil
		}
		switch typ {
		case "record", "error":
			return p.record(v, space, typ == "error")
		case "enum":
			return p.enum(v, space)
		case "array", "map":
			key, t, what := "items", Array, "Array has no items type"
			if typ == "map" {
				key, t, what = "values", Map, "Map has no values type"
			}
			sub := v.Get(key)
			if sub == nil {
				return nil, fmt.Errorf("%s: %s", what, js(v))
			}
			items, err := p.parse(sub, space)
			if err != nil {
				return nil, err
			}
			n := &node{typ: t, items: items}
			p.props(v, n, reservedSchema)
			return n, nil
		case "fixed":
			return p.fixed(v, space)
		}
		// A type name in an object, as unions with self references write it.
		return p.find(typ, space), nil
	case jsontree.Array:
		n := &node{typ: Union, branches: make([]*node, 0, len(v.Items))}
		for _, it := range v.Items {
			b, err := p.parse(it, space)
			if err != nil {
				return nil, err
			}
			if b.typ == Union {
				return nil, fmt.Errorf("Nested union: %s", js(v))
			}
			n.branches = append(n.branches, b)
		}
		return n, nil
	}
	return nil, fmt.Errorf("Schema not yet supported: %s", js(v))
}

// find is ParseContext.find: a primitive, a known named type by its name
// qualified with the enclosing namespace or as written, or a forward
// reference resolved when the document ends.
func (p *parser) find(name, space string) *node {
	if t, ok := primitives[name]; ok {
		return &node{typ: t}
	}
	full := name
	if space != "" && !strings.Contains(name, ".") {
		full = space + "." + name
	}
	if n := p.types[full]; n != nil {
		return n
	}
	if n := p.types[name]; n != nil {
		return n
	}
	return &node{typ: Record, placeholder: true, unresolved: full}
}

// names parses a named type's name and namespace (Java's Name).
func (p *parser) names(v *jsontree.Value, space string) (name, ns string, err error) {
	if s, ok := v.Get("namespace").Text(); ok {
		space = s
	}
	name, ok := v.Get("name").Text()
	if !ok {
		return "", "", fmt.Errorf("No name in schema: %s", js(v))
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		space, name = name[:i], name[i+1:]
	}
	if err := p.validName(name); err != nil {
		return "", "", err
	}
	full := name
	if space != "" {
		full = space + "." + name
	}
	if _, ok := primitives[full]; ok {
		return "", "", fmt.Errorf("Schemas may not be named after primitives: %s", full)
	}
	return name, space, nil
}

func optText(v *jsontree.Value, key string) *string {
	if s, ok := v.Get(key).Text(); ok {
		return &s
	}
	return nil
}

func (p *parser) record(v *jsontree.Value, space string, isError bool) (*node, error) {
	name, ns, err := p.names(v, space)
	if err != nil {
		return nil, err
	}
	n := &node{typ: Record, name: name, space: ns, doc: optText(v, "doc"), isError: isError}
	fv := v.Get("fields")
	if fv == nil || fv.Kind != jsontree.Array {
		return nil, fmt.Errorf("Record has no fields: %s", js(v))
	}
	n.fields = make([]*field, 0, len(fv.Items))
	for _, fj := range fv.Items {
		f, err := p.field(fj, ns)
		if err != nil {
			return nil, err
		}
		for _, g := range n.fields {
			if g.name == f.name {
				return nil, fmt.Errorf("Duplicate field %s in record %s: %s type:%s pos:%d and %s type:%s pos:%d.",
					f.name, n.fullName(), f.name, f.typ.typ.upper(), len(n.fields), g.name, g.typ.typ.upper(), g.pos)
			}
		}
		f.pos = len(n.fields)
		n.fields = append(n.fields, f)
	}
	p.props(v, n, reservedSchema)
	if err := p.aliases(v, n); err != nil {
		return nil, err
	}
	return n, p.put(n)
}

func (p *parser) field(v *jsontree.Value, space string) (*field, error) {
	name, ok := v.Get("name").Text()
	if !ok {
		return nil, fmt.Errorf("No field name: %s", js(v))
	}
	tv := v.Get("type")
	if tv == nil {
		return nil, fmt.Errorf("No field type: %s", js(v))
	}
	typ, err := p.parse(tv, space)
	if err != nil {
		return nil, err
	}
	f := &field{name: name, typ: typ, doc: optText(v, "doc")}
	if ov := v.Get("order"); ov != nil {
		s, ok := ov.Text()
		if !ok {
			return nil, fmt.Errorf("Invalid field order: %s", js(ov))
		}
		switch strings.ToUpper(s) {
		case "ASCENDING":
		case "DESCENDING":
			f.order = descending
		case "IGNORE":
			f.order = ignore
		default:
			return nil, fmt.Errorf("No enum constant org.apache.avro.Schema.Field.Order.%s", strings.ToUpper(s))
		}
	}
	f.def = v.Get("default")
	if f.def != nil && (typ.typ == Float || typ.typ == Double) && f.def.Kind == jsontree.String {
		d, err := javaParseDouble(f.def.Str)
		if err != nil {
			return nil, err
		}
		f.def = jsontree.NewNumber(d)
	}
	if err := p.validName(name); err != nil {
		return nil, err
	}
	if p.strict && f.def != nil && !validDefault(typ, f.def) {
		return nil, fmt.Errorf("Invalid default for field %s: %s not a %s", name, js(f.def), toJSON(typ, nil, false))
	}
	for _, m := range v.Members {
		if !reservedField[m.Key] {
			f.props = append(f.props, prop{m.Key, m.Value})
		}
	}
	if av := v.Get("aliases"); av != nil {
		names, err := aliasList(v, av)
		if err != nil {
			return nil, err
		}
		f.aliases = names
	}
	return f, nil
}

// javaParseDouble is Double.parseDouble for the forms it takes: decimal
// with an optional f/d suffix, NaN and Infinity, surrounding whitespace.
// It returns the literal the parsed double prints as.
func javaParseDouble(s string) (string, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	switch strings.TrimLeft(t, "+-") {
	case "NaN":
		return "NaN", nil
	case "Infinity":
		if strings.HasPrefix(t, "-") {
			return "-Infinity", nil
		}
		return "Infinity", nil
	}
	u := strings.TrimRight(t, "fFdD")
	if len(t)-len(u) > 1 || u == "" || strings.ContainsAny(strings.ToLower(u), "_in") {
		return "", fmt.Errorf("For input string: \"%s\"", s)
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return "", fmt.Errorf("For input string: \"%s\"", s)
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return "Infinity", nil
		}
		return "-Infinity", nil
	}
	return jsontree.JavaDouble(f), nil
}

func (p *parser) enum(v *jsontree.Value, space string) (*node, error) {
	name, ns, err := p.names(v, space)
	if err != nil {
		return nil, err
	}
	n := &node{typ: Enum, name: name, space: ns, doc: optText(v, "doc")}
	sv := v.Get("symbols")
	if sv == nil || sv.Kind != jsontree.Array {
		return nil, fmt.Errorf("Enum has no symbols: %s", js(v))
	}
	n.symbols = make([]string, 0, len(sv.Items))
	for _, s := range sv.Items {
		sym, ok := s.Text()
		if !ok {
			return nil, errors.New("Null name")
		}
		if err := p.validName(sym); err != nil {
			return nil, err
		}
		if hasString(n.symbols, sym) {
			return nil, fmt.Errorf("Duplicate enum symbol: %s", sym)
		}
		n.symbols = append(n.symbols, sym)
	}
	n.enumDefault = optText(v, "default")
	if n.enumDefault != nil && !hasString(n.symbols, *n.enumDefault) {
		return nil, fmt.Errorf("The Enum Default: %s is not in the enum symbol set: [%s]", *n.enumDefault, strings.Join(n.symbols, ", "))
	}
	p.props(v, n, reservedEnum)
	if err := p.aliases(v, n); err != nil {
		return nil, err
	}
	return n, p.put(n)
}

func (p *parser) fixed(v *jsontree.Value, space string) (*node, error) {
	name, ns, err := p.names(v, space)
	if err != nil {
		return nil, err
	}
	n := &node{typ: Fixed, name: name, space: ns, doc: optText(v, "doc")}
	sv := v.Get("size")
	var size int32
	ok := sv != nil && sv.Kind == jsontree.Number
	if ok {
		size, ok = jsontree.Int32(sv.Str)
	}
	if !ok {
		return nil, fmt.Errorf("Invalid or no size: %s", js(v))
	}
	if size < 0 {
		return nil, fmt.Errorf("Malformed data. Length is negative: %d", size)
	}
	if size > math.MaxInt32-8 {
		return nil, fmt.Errorf("Cannot read arrays longer than %d bytes", math.MaxInt32-8)
	}
	n.size = int(size)
	p.props(v, n, reservedSchema)
	if err := p.aliases(v, n); err != nil {
		return nil, err
	}
	return n, p.put(n)
}

func (p *parser) props(v *jsontree.Value, n *node, reserved map[string]bool) {
	for _, m := range v.Members {
		if !reserved[m.Key] {
			n.props = append(n.props, prop{m.Key, m.Value})
		}
	}
	n.logical, n.precision, n.scale = logicalType(n)
}

func aliasList(v, av *jsontree.Value) ([]string, error) {
	if av.Kind != jsontree.Array {
		return nil, fmt.Errorf("aliases not an array: %s", js(v))
	}
	var out []string
	for _, a := range av.Items {
		s, ok := a.Text()
		if !ok {
			return nil, fmt.Errorf("alias not a string: %s", js(a))
		}
		if !hasString(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func (p *parser) aliases(v *jsontree.Value, n *node) error {
	av := v.Get("aliases")
	if av == nil {
		return nil
	}
	names, err := aliasList(v, av)
	if err != nil {
		return err
	}
	for _, s := range names {
		a := alias{name: s, space: n.space}
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			a = alias{name: s[i+1:], space: s[:i]}
		}
		if err := p.validName(a.name); err != nil {
			return err
		}
		dup := false
		for _, b := range n.aliases {
			dup = dup || b == a
		}
		if !dup {
			n.aliases = append(n.aliases, a)
		}
	}
	return nil
}

// put is ParseContext.put: a name is defined once, or again only
// identically.
func (p *parser) put(n *node) error {
	full := n.fullName()
	if p.strict {
		parts := strings.Split(full, ".")
		// Java's String.split drops trailing empty parts.
		for len(parts) > 1 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		for _, part := range parts[:len(parts)-1] {
			if err := strictName(part); err != nil {
				return fmt.Errorf("Namespace part \"%s\" is invalid: %s", part, err.Error())
			}
		}
		if err := strictName(parts[len(parts)-1]); err != nil {
			return fmt.Errorf("Name \"%s\" is invalid: %s", parts[len(parts)-1], err.Error())
		}
	}
	if old := p.types[full]; old != nil {
		if !equalSchema(old, n, make(map[[2]*node]bool)) {
			return fmt.Errorf("Can't redefine: %s", full)
		}
		return nil
	}
	p.types[full] = n
	return nil
}

func (p *parser) validName(name string) error {
	if p.strict {
		return strictName(name)
	}
	return nil
}

// strictName is Avro's STRICT_VALIDATOR: ASCII letters, digits and '_', not
// starting with a digit.
func strictName(name string) error {
	if name == "" {
		return errors.New("Empty name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if i == 0 && !letter {
			return fmt.Errorf("Illegal initial character: %s", name)
		}
		if !letter && !(c >= '0' && c <= '9') {
			return fmt.Errorf("Illegal character in: %s", name)
		}
	}
	return nil
}

// utfName is Avro's UTF_VALIDATOR (Java's Character.isLetter and
// isLetterOrDigit over UTF-16 units), which Confluent applies to a stored
// schema's names.
func utfName(name string) error {
	if name == "" {
		return errors.New("Empty name")
	}
	for i, r := range name {
		letter := r <= 0xFFFF && (unicode.IsLetter(r) || r == '_')
		if i == 0 && !letter {
			return fmt.Errorf("Illegal initial character: %s", name)
		}
		if !letter && !(r <= 0xFFFF && unicode.IsDigit(r)) {
			return fmt.Errorf("Illegal character in: %s", name)
		}
	}
	return nil
}

// validateNames is Confluent's AvroSchemaUtils.validateNames: the lenient
// parse still holds a stored schema's own names to the UTF rules.
func validateNames(n *node, seen map[*node]bool) error {
	if seen[n] {
		return nil
	}
	seen[n] = true
	switch n.typ {
	case Record:
		if err := utfName(n.name); err != nil {
			return err
		}
		for _, f := range n.fields {
			if err := utfName(f.name); err != nil {
				return err
			}
			if err := validateNames(f.typ, seen); err != nil {
				return err
			}
		}
	case Enum:
		if err := utfName(n.name); err != nil {
			return err
		}
		for _, s := range n.symbols {
			if err := utfName(s); err != nil {
				return err
			}
		}
	case Fixed:
		return utfName(n.name)
	case Array, Map:
		return validateNames(n.items, seen)
	case Union:
		for _, b := range n.branches {
			if err := validateNames(b, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolver replaces forward references once a document is read.
type resolver struct {
	types map[string]*node
	seen  map[*node]bool
}

func (r *resolver) fix(n *node) (*node, error) {
	if n.placeholder {
		t := r.types[n.unresolved]
		if t == nil {
			return nil, fmt.Errorf("Undefined schema: %s", n.unresolved)
		}
		return t, nil
	}
	if r.seen[n] {
		return n, nil
	}
	r.seen[n] = true
	var err error
	switch n.typ {
	case Record:
		for _, f := range n.fields {
			if f.typ, err = r.fix(f.typ); err != nil {
				return nil, err
			}
		}
	case Array, Map:
		if n.items, err = r.fix(n.items); err != nil {
			return nil, err
		}
	case Union:
		names := make(map[string]bool, len(n.branches))
		for i, b := range n.branches {
			if n.branches[i], err = r.fix(b); err != nil {
				return nil, err
			}
			name := n.branches[i].fullName()
			if names[name] {
				return nil, fmt.Errorf("Duplicate in union:%s", name)
			}
			names[name] = true
		}
	}
	return n, nil
}

// equalSchema is Java's Schema.equals: names, types, properties, fields,
// symbols and sizes, not docs or aliases.
func equalSchema(a, b *node, seen map[[2]*node]bool) bool {
	if a == b {
		return true
	}
	if a.typ != b.typ || a.placeholder != b.placeholder || a.unresolved != b.unresolved || !equalProps(a.props, b.props) {
		return false
	}
	switch a.typ {
	case Record:
		if a.fullName() != b.fullName() || len(a.fields) != len(b.fields) {
			return false
		}
		k := [2]*node{a, b}
		if seen[k] {
			return true
		}
		seen[k] = true
		for i, f := range a.fields {
			g := b.fields[i]
			if f.name != g.name || f.order != g.order || !equalProps(f.props, g.props) ||
				!equalDefault(f.def, g.def) || !equalSchema(f.typ, g.typ, seen) {
				return false
			}
		}
		return true
	case Enum:
		if a.fullName() != b.fullName() || len(a.symbols) != len(b.symbols) {
			return false
		}
		for i := range a.symbols {
			if a.symbols[i] != b.symbols[i] {
				return false
			}
		}
		return true
	case Fixed:
		return a.fullName() == b.fullName() && a.size == b.size
	case Array, Map:
		return equalSchema(a.items, b.items, seen)
	case Union:
		if len(a.branches) != len(b.branches) {
			return false
		}
		for i := range a.branches {
			if !equalSchema(a.branches[i], b.branches[i], seen) {
				return false
			}
		}
		return true
	}
	return true
}

func equalDefault(a, b *jsontree.Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return jsontree.Equal(a, b)
}

func equalProps(a, b []prop) bool {
	if len(a) != len(b) {
		return false
	}
	for _, p := range a {
		found := false
		for _, q := range b {
			if q.key == p.key {
				found = jsontree.Equal(p.val, q.val)
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
