package protobuf

import (
	"strings"
)

// typeInfo is Confluent's Context.TypeElementInfo: a message or enum with
// the package it is in and where it comes from.
type typeInfo struct {
	pkg string
	// from identifies the file a type comes from: fromMain for the schema's
	// own, a reference's text for a reference, "" for a well-known import
	// (Confluent's SchemaReference, null for those).
	from       string
	elem       typeElem
	isMap      bool
	key, value *field
}

const fromMain = "\x00main"

func (t *typeInfo) mapType() string {
	if !t.isMap || t.key == nil || t.value == nil {
		return ""
	}
	return "map<" + t.key.typ + ", " + t.value.typ + ">"
}

type extendInfo struct {
	pkg      string
	field    *field
	repeated bool
}

// side is one schema of a comparison (Confluent's isOriginal flag).
type side int

const (
	original side = 0
	update   side = 1
)

// context is Confluent's protobuf diff Context (also the base of its
// FormatContext): the types of both schemas by full name, the package and
// scope names are resolved in, the path differences are reported at.
type context struct {
	types    [2]map[string]*typeInfo
	extends  [2]map[string]*extendInfo
	pkg      [2]string
	fullPath []string
	fullName []string
	schemas  map[*message]bool
	diffs    []difference
}

func newContext() *context {
	return &context{
		types:   [2]map[string]*typeInfo{{}, {}},
		extends: [2]map[string]*extendInfo{{}, {}},
		schemas: map[*message]bool{},
	}
}

// sub is getSubcontext: the type tables and scope shared, the differences
// its own.
func (c *context) sub() *context {
	s := &context{types: c.types, extends: c.extends, pkg: c.pkg, schemas: make(map[*message]bool, len(c.schemas))}
	for m := range c.schemas {
		s.schemas[m] = true
	}
	s.fullPath = append([]string(nil), c.fullPath...)
	s.fullName = append([]string(nil), c.fullName...)
	return s
}

// dependency is a file a schema imports, with where it comes from.
type dependency struct {
	file *protoFile
	from string
}

// collect is collectTypeInfo: the dependencies' types, then the schema's.
func (c *context) collect(deps []dependency, main *protoFile, s side) {
	for _, d := range deps {
		c.collectFile(d.file, d.from, s)
	}
	c.collectFile(main, fromMain, s)
}

func (c *context) collectFile(f *protoFile, from string, s side) {
	c.pkg[s] = f.pkg
	c.collectExtends(f.extends, s)
	c.collectTypes(f.types, from, s)
}

func (c *context) qualified(s side) string {
	name := strings.Join(c.fullPath, ".")
	if c.pkg[s] != "" {
		name = c.pkg[s] + "." + name
	}
	return name
}

func (c *context) collectTypes(types []typeElem, from string, s side) {
	for _, t := range types {
		c.enterName(t.typeName())
		info := &typeInfo{pkg: c.pkg[s], from: from, elem: t}
		if m, ok := t.(*message); ok {
			c.collectExtends(m.extends, s)
			if o := findOption("map_entry", m.options); o != nil && o.text == "true" {
				info.isMap = true
				for _, f := range m.fields {
					switch f.name {
					case "key":
						info.key = f
					case "value":
						info.value = f
					}
				}
			}
		}
		c.types[s][c.qualified(s)] = info
		c.collectTypes(t.nestedTypes(), from, s)
		c.leaveName()
	}
}

func (c *context) collectExtends(exts []*extendElem, s side) {
	for _, e := range exts {
		for _, f := range e.fields {
			c.enterName(f.name)
			c.extends[s][c.qualified(s)] = &extendInfo{pkg: c.pkg[s], field: f, repeated: f.label == "repeated"}
			c.leaveName()
		}
	}
}

func findOption(name string, opts []*option) *option {
	for _, o := range opts {
		if o.name == name {
			return o
		}
	}
	return nil
}

func (c *context) enterName(n string) {
	c.fullPath = append(c.fullPath, n)
	c.fullName = append(c.fullName, n)
}

func (c *context) leaveName() {
	c.fullPath = c.fullPath[:len(c.fullPath)-1]
	c.fullName = c.fullName[:len(c.fullName)-1]
}

func (c *context) enterPath(p string) { c.fullPath = append(c.fullPath, p) }
func (c *context) leavePath()         { c.fullPath = c.fullPath[:len(c.fullPath)-1] }

// setFullName is Context.setFullName: a subcontext starts at a type's
// local name.
func (c *context) setFullName(name string) {
	parts := strings.Split(name, ".")
	c.fullPath = append([]string(nil), parts...)
	c.fullName = append([]string(nil), parts...)
}

// resolve is Context.resolve: a leading dot names the type fully;
// otherwise the name is tried in the package and scope it is used in,
// innermost first, then as written.
func (c *context) resolve(name string, s side, has func(string) bool) string {
	if len(c.types[s]) == 0 {
		return ""
	}
	if strings.HasPrefix(name, ".") {
		if has(name[1:]) {
			return name[1:]
		}
		return ""
	}
	var prefix []string
	if c.pkg[s] != "" {
		prefix = append(prefix, strings.Split(c.pkg[s], ".")...)
	}
	prefix = append(prefix, c.fullName...)
	for len(prefix) > 0 {
		n := strings.Join(prefix, ".") + "." + name
		if has(n) {
			return n
		}
		prefix = prefix[:len(prefix)-1]
	}
	if has(name) {
		return name
	}
	return ""
}

func (c *context) resolveType(name string, s side) string {
	return c.resolve(name, s, func(n string) bool { return c.types[s][n] != nil })
}

func (c *context) resolveExtend(name string, s side) string {
	return c.resolve(name, s, func(n string) bool { return c.extends[s][n] != nil })
}

// getType is Context.getType.
func (c *context) getType(name string, s side) *typeInfo {
	full := c.resolveType(name, s)
	if full == "" {
		return nil
	}
	return c.types[s][full]
}

func (c *context) typeForFullName(name string, s side) *typeInfo {
	return c.types[s][strings.TrimPrefix(name, ".")]
}

func (c *context) extendForFullName(name string, s side) *extendInfo {
	return c.extends[s][strings.TrimPrefix(name, ".")]
}

func (c *context) add(t change) {
	c.diffs = append(c.diffs, difference{t, "#/" + strings.Join(c.fullPath, "/")})
}

func (c *context) isCompatible() bool {
	for _, d := range c.diffs {
		if !compatibleChanges[d.typ] {
			return false
		}
	}
	return true
}
