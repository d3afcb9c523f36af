package protobuf

import (
	"sort"
	"strconv"
	"strings"

	"sharq/schema/internal/javaorder"
)

// change is Confluent's protobuf diff Difference.Type.
type change string

const (
	packageChanged                 change = "PACKAGE_CHANGED"
	messageAdded                   change = "MESSAGE_ADDED"
	messageRemoved                 change = "MESSAGE_REMOVED"
	messageMoved                   change = "MESSAGE_MOVED"
	enumAdded                      change = "ENUM_ADDED"
	enumRemoved                    change = "ENUM_REMOVED"
	enumConstAdded                 change = "ENUM_CONST_ADDED"
	enumConstChanged               change = "ENUM_CONST_CHANGED"
	enumConstRemoved               change = "ENUM_CONST_REMOVED"
	fieldAdded                     change = "FIELD_ADDED"
	fieldRemoved                   change = "FIELD_REMOVED"
	fieldNameChanged               change = "FIELD_NAME_CHANGED"
	fieldKindChanged               change = "FIELD_KIND_CHANGED"
	fieldScalarKindChanged         change = "FIELD_SCALAR_KIND_CHANGED"
	fieldNamedTypeChanged          change = "FIELD_NAMED_TYPE_CHANGED"
	fieldNumericLabelChanged       change = "FIELD_NUMERIC_LABEL_CHANGED"
	fieldStringOrBytesLabelChanged change = "FIELD_STRING_OR_BYTES_LABEL_CHANGED"
	requiredFieldAdded             change = "REQUIRED_FIELD_ADDED"
	requiredFieldRemoved           change = "REQUIRED_FIELD_REMOVED"
	oneofAdded                     change = "ONEOF_ADDED"
	oneofRemoved                   change = "ONEOF_REMOVED"
	oneofFieldAdded                change = "ONEOF_FIELD_ADDED"
	oneofFieldRemoved              change = "ONEOF_FIELD_REMOVED"
	oneofFieldMovedToTopLevel      change = "ONEOF_FIELD_MOVED_TO_TOP_LEVEL"
	multipleFieldsMovedToOneof     change = "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
	fieldMovedToExistingOneof      change = "FIELD_MOVED_TO_EXISTING_ONEOF"
)

// compatibleChanges is SchemaDiff.COMPATIBLE_CHANGES: the changes a reader
// of the new schema survives (Confluent uses one set for every level; the
// levels differ only in which way round the schemas are compared).
var compatibleChanges = map[change]bool{
	messageAdded: true, messageMoved: true, enumAdded: true, enumRemoved: true,
	enumConstAdded: true, enumConstChanged: true, enumConstRemoved: true,
	fieldAdded: true, fieldRemoved: true, fieldNameChanged: true,
	fieldStringOrBytesLabelChanged: true, oneofAdded: true, oneofRemoved: true,
	oneofFieldAdded: true, oneofFieldMovedToTopLevel: true,
}

type difference struct {
	typ  change
	path string
}

// message is Confluent's protobuf Difference.toString(), the roles left as
// %s for the registry to fill.
func (d difference) message() string {
	p := strings.ReplaceAll(d.path, "%", "%%")
	var m string
	switch d.typ {
	case packageChanged:
		m = "The package at '" + p + "' in the %s schema does not match the package in the %s schema"
	case messageRemoved:
		m = "The %s schema is missing a MESSAGE type at path '" + p + "' in the %s schema"
	case fieldKindChanged:
		m = "The type of a field at path '" + p + "' in the %s schema does not match the %s schema"
	case fieldScalarKindChanged:
		m = "The kind of a SCALAR field at path '" + p + "' in the %s schema does not match its kind in the %s schema"
	case fieldNamedTypeChanged:
		m = "The type of a MESSAGE field at path '" + p + "' in the %s schema does not match its type in the %s schema"
	case fieldNumericLabelChanged:
		m = "The label for a NUMERIC field at path '" + p + "' in the %s schema does not match its label in the %s schema"
	case requiredFieldAdded:
		m = "A required field  at path '" + p + "' in the %s schema is missing in the %s schema"
	case requiredFieldRemoved:
		m = "The %s schema is missing a required field at path: '" + p + "' in the %s schema"
	case oneofFieldRemoved:
		m = "The %s schema is missing a oneof field at path '" + p + "' in the %s schema"
	case oneofFieldMovedToTopLevel:
		m = "The oneof field at path '" + p + "' in the %s schema was moved out of its oneof to a top-level field in the %s schema"
	case multipleFieldsMovedToOneof:
		m = "Multiple fields in the oneof at path '" + p + "' in the %s schema are outside a oneof in the %s schema"
	case fieldMovedToExistingOneof:
		m = "A field in the oneof at path '" + p + "' in the %s schema is outside an existing oneof in the %s schema"
	}
	return `{errorType:"` + string(d.typ) + `", description:"` + m + `"}`
}

// compareFiles is SchemaDiff.compare(original, update) over files whose
// types the context has collected.
func compareFiles(c *context, o, u *protoFile) {
	if o.pkg != u.pkg {
		c.add(packageChanged)
	}
	compareTypeElements(c, o.types, u.types)
}

func splitTypes(types []typeElem) (names []string, msgs map[string]*message, index map[string]int, enumNames []string, enums map[string]*enum) {
	msgs, index, enums = map[string]*message{}, map[string]int{}, map[string]*enum{}
	i := 0
	for _, t := range types {
		switch t := t.(type) {
		case *message:
			if _, dup := msgs[t.name]; !dup {
				names = append(names, t.name)
			}
			msgs[t.name] = t
			index[t.name] = i
			i++
		case *enum:
			if _, dup := enums[t.name]; !dup {
				enumNames = append(enumNames, t.name)
			}
			enums[t.name] = t
		}
	}
	return
}

// hashKeys is the key order of a HashMap<String, ...> filled in order.
func hashKeys(keys []string) []string {
	s := javaorder.NewSet(javaorder.StringHash)
	s.AddAll(keys)
	return s.Keys()
}

func compareTypeElements(c *context, o, u []typeElem) {
	on, om, oi, oen, oe := splitTypes(o)
	un, um, ui, uen, ue := splitTypes(u)
	for _, name := range javaorder.Strings(hashKeys(on), hashKeys(un)) {
		c.enterName(name)
		om, um := om[name], um[name]
		switch {
		case um == nil:
			if t := c.getType(name, original); t != nil && !t.isMap {
				c.add(messageRemoved)
			}
		case om == nil:
			if t := c.getType(name, update); t != nil && !t.isMap {
				c.add(messageAdded)
			}
		default:
			compareMessages(c, om, um)
			if oi[name] != ui[name] {
				// Message indexes are per schema id, so moving is compatible.
				c.add(messageMoved)
			}
		}
		c.leaveName()
	}
	for _, name := range javaorder.Strings(hashKeys(oen), hashKeys(uen)) {
		c.enterName(name)
		oe, ue := oe[name], ue[name]
		switch {
		case ue == nil:
			c.add(enumRemoved)
		case oe == nil:
			c.add(enumAdded)
		default:
			compareEnums(c, oe, ue)
		}
		c.leaveName()
	}
}

func compareEnums(c *context, o, u *enum) {
	ob, ub := map[int64]*enumConst{}, map[int64]*enumConst{}
	var ok, uk []int32
	for _, k := range o.constants {
		if _, dup := ob[k.tag]; !dup {
			ok = append(ok, int32(k.tag))
		}
		ob[k.tag] = k
	}
	for _, k := range u.constants {
		if _, dup := ub[k.tag]; !dup {
			uk = append(uk, int32(k.tag))
		}
		ub[k.tag] = k
	}
	first := javaorder.NewSet(javaorder.IntHash)
	first.AddAll(ok)
	second := javaorder.NewSet(javaorder.IntHash)
	second.AddAll(uk)
	all := javaorder.NewSetFrom(javaorder.IntHash, first.Keys())
	all.AddAll(second.Keys())
	for _, tag := range all.Keys() {
		c.enterPath(strconv.Itoa(int(tag)))
		oc, uc := ob[int64(tag)], ub[int64(tag)]
		switch {
		case uc == nil:
			c.add(enumConstRemoved)
		case oc == nil:
			c.add(enumConstAdded)
		case oc.name != uc.name:
			c.add(enumConstChanged)
		}
		c.leavePath()
	}
}

type fieldsByTag struct {
	byTag   map[int64]*field
	oneofOf map[int64]string
	oneofs  map[string]*oneof
}

func collectFields(m *message) fieldsByTag {
	f := fieldsByTag{byTag: map[int64]*field{}, oneofOf: map[int64]string{}, oneofs: map[string]*oneof{}}
	for _, x := range m.fields {
		f.byTag[x.tag] = x
	}
	for _, o := range m.oneofs {
		f.oneofs[o.name] = o
		for _, x := range o.fields {
			f.byTag[x.tag] = x
			f.oneofOf[x.tag] = o.name
		}
	}
	return f
}

// compareMessages is MessageSchemaDiff.compare: fields by tag across the
// message, oneof membership, then the nested types.
func compareMessages(c *context, o, u *message) {
	if !c.schemas[o] {
		c.schemas[o] = true
		compareMessageBody(c, o, u)
		delete(c.schemas, o)
	}
	compareTypeElements(c, o.nested, u.nested)
}

func compareMessageBody(c *context, o, u *message) {
	of, uf := collectFields(o), collectFields(u)
	// A oneof gone with none of its members anywhere is a deletion.
	deleted := map[string]bool{}
	for name, oo := range of.oneofs {
		if _, ok := uf.oneofs[name]; ok {
			continue
		}
		survives := false
		for _, x := range oo.fields {
			if uf.byTag[x.tag] != nil {
				survives = true
			}
		}
		if !survives {
			deleted[name] = true
		}
	}
	// Fields that were independent and now share a oneof.
	for _, uo := range u.oneofs {
		c.enterPath(uo.name)
		groups := map[string]bool{}
		movedIn := 0
		for _, x := range uo.fields {
			if on, ok := of.oneofOf[x.tag]; ok {
				groups["oneof:"+on] = true
			} else if of.byTag[x.tag] != nil {
				groups["field:"+strconv.FormatInt(x.tag, 10)] = true
				movedIn++
			}
		}
		if len(groups) > 1 {
			if movedIn > 1 {
				c.add(multipleFieldsMovedToOneof)
			} else {
				c.add(fieldMovedToExistingOneof)
			}
		}
		c.leavePath()
	}
	var names []string
	for n := range of.oneofs {
		names = append(names, n)
	}
	for n := range uf.oneofs {
		if _, ok := of.oneofs[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool { return javaorder.Less(names[i], names[j]) })
	for _, n := range names {
		c.enterPath(n)
		if _, ok := uf.oneofs[n]; !ok {
			c.add(oneofRemoved)
		} else if _, ok := of.oneofs[n]; !ok {
			c.add(oneofAdded)
		}
		c.leavePath()
	}
	var tags []int64
	for t := range of.byTag {
		tags = append(tags, t)
	}
	for t := range uf.byTag {
		if of.byTag[t] == nil {
			tags = append(tags, t)
		}
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i] < tags[j] })
	for _, tag := range tags {
		ofl, ufl := of.byTag[tag], uf.byTag[tag]
		oo, oIn := of.oneofOf[tag]
		uo, uIn := uf.oneofOf[tag]
		ts := strconv.FormatInt(tag, 10)
		switch {
		case ufl == nil:
			if oIn {
				if !deleted[oo] {
					c.enterPath(oo)
					c.enterPath(ts)
					c.add(oneofFieldRemoved)
					c.leavePath()
					c.leavePath()
				}
			} else {
				c.enterPath(ts)
				if ofl.label == "required" {
					c.add(requiredFieldRemoved)
				} else {
					c.add(fieldRemoved)
				}
				c.leavePath()
			}
		case ofl == nil:
			if uIn {
				c.enterPath(uo)
				c.enterPath(ts)
				c.add(oneofFieldAdded)
				c.leavePath()
				c.leavePath()
			} else {
				c.enterPath(ts)
				if ufl.label == "required" {
					c.add(requiredFieldAdded)
				} else {
					c.add(fieldAdded)
				}
				c.leavePath()
			}
		default:
			if oIn && !uIn {
				c.enterPath(ts)
				c.add(oneofFieldMovedToTopLevel)
				c.leavePath()
			}
			if uIn {
				c.enterPath(uo)
				c.enterPath(ts)
				compareFields(c, ofl, ufl)
				c.leavePath()
				c.leavePath()
			} else {
				c.enterPath(ts)
				compareFields(c, ofl, ufl)
				c.leavePath()
			}
		}
	}
}

// compareFields is FieldSchemaDiff.compare.
func compareFields(c *context, o, u *field) {
	if o.name != u.name {
		c.add(fieldNameChanged)
	}
	compareLabelsAndTypes(c, o.label, u.label, true, parseType(o.typ), parseType(u.typ))
}

// protoType is wire's ProtoType: a scalar, a map of key and value types,
// or a named type as written.
type protoType struct {
	name       string // as written, "map<K, V>" for maps
	key, value *protoType
}

var scalars = map[string]bool{
	"bool": true, "bytes": true, "double": true, "float": true, "fixed32": true, "fixed64": true,
	"int32": true, "int64": true, "sfixed32": true, "sfixed64": true, "sint32": true, "sint64": true,
	"string": true, "uint32": true, "uint64": true,
}

func parseType(s string) *protoType {
	if strings.HasPrefix(s, "map<") && strings.HasSuffix(s, ">") {
		if k, v, ok := strings.Cut(s[4:len(s)-1], ","); ok {
			key, value := parseType(strings.TrimSpace(k)), parseType(strings.TrimSpace(v))
			return &protoType{name: "map<" + key.name + ", " + value.name + ">", key: key, value: value}
		}
	}
	return &protoType{name: s}
}

func (t *protoType) isScalar() bool { return scalars[t.name] }
func (t *protoType) isMap() bool    { return t.key != nil }

type fieldKind uint8

const (
	kindScalar fieldKind = iota
	kindMapKind
	kindMessage
)

func (c *context) kindOf(t *protoType, s side) fieldKind {
	switch {
	case t.isScalar():
		return kindScalar
	case t.isMap():
		return kindMapKind
	}
	if ti := c.getType(t.name, s); ti != nil {
		if _, ok := ti.elem.(*enum); ok {
			return kindScalar
		}
	}
	return kindMessage
}

// scalarKind groups the scalars whose values read as each other (the
// proto3 "updating a message type" rules).
func (c *context) scalarKind(t *protoType, s side) string {
	if ti := c.getType(t.name, s); ti != nil {
		if _, ok := ti.elem.(*enum); ok {
			return "GENERAL_NUMBER"
		}
	}
	switch t.name {
	case "int32", "int64", "uint32", "uint64", "bool":
		return "GENERAL_NUMBER"
	case "sint32", "sint64":
		return "SIGNED_NUMBER"
	case "string", "bytes":
		return "STRING_OR_BYTES"
	case "fixed32", "sfixed32":
		return "FIXED32"
	case "fixed64", "sfixed64":
		return "FIXED64"
	case "float":
		return "FLOAT"
	case "double":
		return "DOUBLE"
	}
	return "UNKNOWN:" + t.name
}

func compareLabelsAndTypes(c *context, ol, ul string, labels bool, ot, ut *protoType) {
	if ti := c.getType(ot.name, original); ti != nil && ti.isMap {
		ot = parseType(ti.mapType())
	}
	if ti := c.getType(ut.name, update); ti != nil && ti.isMap {
		ut = parseType(ti.mapType())
	}
	ok, uk := c.kindOf(ot, original), c.kindOf(ut, update)
	if ok != uk {
		c.add(fieldKindChanged)
		return
	}
	switch ok {
	case kindScalar:
		osk, usk := c.scalarKind(ot, original), c.scalarKind(ut, update)
		if osk != usk {
			c.add(fieldScalarKindChanged)
			return
		}
		if labels && ol != "" && ul != "" && ol != ul {
			if osk == "STRING_OR_BYTES" {
				c.add(fieldStringOrBytesLabelChanged)
			} else {
				c.add(fieldNumericLabelChanged)
			}
		}
	case kindMessage:
		compareMessageTypes(c, ot, ut)
	case kindMapKind:
		compareLabelsAndTypes(c, "", "", false, ot.key, ut.key)
		compareLabelsAndTypes(c, "", "", false, ot.value, ut.value)
	}
}

func localName(full, pkg string) string {
	if strings.HasPrefix(full, pkg+".") {
		return full[len(pkg)+1:]
	}
	return full
}

func compareMessageTypes(c *context, o, u *protoType) {
	of, uf := c.resolveType(o.name, original), c.resolveType(u.name, update)
	if of == "" || uf == "" {
		if o.name != u.name {
			c.add(fieldNamedTypeChanged)
		}
		return
	}
	ot, ut := c.types[original][of], c.types[update][uf]
	ol, ul := localName(of, ot.pkg), localName(uf, ut.pkg)
	if ol != ul {
		c.add(fieldNamedTypeChanged)
		return
	}
	// Types of one file version need no second comparison: the schema's own
	// are compared where they are declared.
	if ot.from != "" && ut.from != "" && ot.from == ut.from {
		return
	}
	om, ok1 := ot.elem.(*message)
	um, ok2 := ut.elem.(*message)
	if !ok1 || !ok2 {
		return
	}
	s := c.sub()
	s.pkg[original], s.pkg[update] = ot.pkg, ut.pkg
	s.setFullName(ol)
	compareMessages(s, om, um)
	c.diffs = append(c.diffs, s.diffs...)
	if !s.isCompatible() {
		c.add(fieldNamedTypeChanged)
	}
}
