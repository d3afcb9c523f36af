package jsonschema

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"sharq/schema/internal/javaorder"
	"sharq/schema/internal/jsontree"
)

// draft is a JSON Schema specification version Confluent supports.
type draft uint8

const (
	draft4 draft = iota + 1
	draft6
	draft7
	draft2019
	draft2020
)

var draftNames = map[draft]string{draft4: "draft-04", draft6: "draft-06", draft7: "draft-07", draft2019: "2019-09", draft2020: "2020-12"}

// draftOf is Confluent's SpecificationVersion.getFromUrl over the root's
// $schema; draft 7 when absent or unknown.
func draftOf(root *jsontree.Value) draft {
	s, ok := root.Get("$schema").Text()
	if !ok {
		return draft7
	}
	s = strings.TrimSuffix(s, "#")
	for _, scheme := range []string{"http://", "https://"} {
		switch s {
		case scheme + "json-schema.org/draft-04/schema", scheme + "json-schema.org/schema":
			return draft4
		case scheme + "json-schema.org/draft-06/schema":
			return draft6
		case scheme + "json-schema.org/draft-07/schema":
			return draft7
		case scheme + "json-schema.org/draft/2019-09/schema":
			return draft2019
		case scheme + "json-schema.org/draft/2020-12/schema":
			return draft2020
		}
	}
	return draft7
}

func (d draft) modern() bool  { return d >= draft2019 }
func (d draft) idKey() string { return map[bool]string{true: "id", false: "$id"}[d == draft4] }

// kind is the class of everit's schema model Confluent's diff dispatches
// on (everit-json-schema for drafts 4 to 7, Confluent's translation of
// json-sKema's model into it for 2019-09 and 2020-12).
type kind uint8

const (
	kEmpty kind = iota
	kTrue
	kFalse
	kObject
	kArray
	kString
	kNumber
	kBoolean
	kNull
	kEnum
	kConst
	kCombined
	kNot
	kRef
	kConditional
)

// jnode is one schema of the model.
type jnode struct {
	kind kind
	src  *jsontree.Value // the JSON it was loaded from; nil if synthetic

	id, title, description *string
	hasDefault             bool
	def                    *jsontree.Value
	connectType            string

	// string
	minLength, maxLength *int64
	pattern              *string

	// number (literals)
	minimum, maximum, exclMin, exclMax, multipleOf *string
	requiresInteger                                bool

	// object
	props        []prop
	required     []string
	addProps     bool // permitsAdditionalProperties
	addPropsSch  *jnode
	patternProps []patternProp
	propDeps     []propDep
	schemaDeps   []prop
	minProps     *int64
	maxProps     *int64
	unevalProps  *jnode

	// array
	allItems    *jnode
	itemSchemas []*jnode
	addItems    bool // permitsAdditionalItems
	addItemsSch *jnode
	minItems    *int64
	maxItems    *int64
	uniqueItems bool
	minContains *int64
	maxContains *int64
	unevalItems *jnode

	// enum, const
	values []*jsontree.Value
	value  *jsontree.Value

	// combined
	criterion string // allOf, anyOf, oneOf
	subs      []*jnode

	not *jnode // not
	ref *jnode // the referred schema; nil if it could not be resolved
}

type prop struct {
	name   string
	schema *jnode
}

type patternProp struct {
	pattern string
	re      *regexp.Regexp // nil if Go cannot compile it: matches nothing
	schema  *jnode
}

type propDep struct {
	name  string
	needs []string
}

func (n *jnode) prop(name string) *jnode {
	for _, p := range n.props {
		if p.name == name {
			return p.schema
		}
	}
	return nil
}

func (n *jnode) requires(name string) bool {
	for _, r := range n.required {
		if r == name {
			return true
		}
	}
	return false
}

// propNames are the property names in the order everit's property map
// iterates (a HashMap copied from the loaded one).
func (n *jnode) propNames() []string {
	names := make([]string, len(n.props))
	for i, p := range n.props {
		names[i] = p.name
	}
	return javaorder.NewMapCopy(javaorder.StringHash, names).Keys()
}

func depNames[T any](list []T, name func(T) string) []string {
	names := make([]string, len(list))
	for i, x := range list {
		names[i] = name(x)
	}
	return javaorder.NewMapCopy(javaorder.StringHash, names).Keys()
}

// resource is a document or an embedded schema with its own $id.
type resource struct {
	root *jsontree.Value
}

// loader builds the model of a root document and its references.
type loader struct {
	draft     draft
	resources map[string]*jsontree.Value // absolute URL without fragment
	anchors   map[string]*jsontree.Value // absolute URL with #name
	bases     map[*jsontree.Value]*url.URL
	docRoots  map[*jsontree.Value]bool
	nodes     map[*jsontree.Value]*jnode
}

func newLoader(d draft) *loader {
	return &loader{
		draft:     d,
		resources: make(map[string]*jsontree.Value),
		anchors:   make(map[string]*jsontree.Value),
		bases:     make(map[*jsontree.Value]*url.URL),
		docRoots:  make(map[*jsontree.Value]bool),
		nodes:     make(map[*jsontree.Value]*jnode),
	}
}

func stripFragment(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// index records a document at base and every $id and anchor inside it.
func (l *loader) index(doc *jsontree.Value, base *url.URL) {
	l.docRoots[doc] = true
	if _, ok := l.resources[stripFragment(base)]; !ok {
		l.resources[stripFragment(base)] = doc
	}
	l.walk(doc, base)
}

func (l *loader) walk(v *jsontree.Value, base *url.URL) {
	switch v.Kind {
	case jsontree.Object:
		if id, ok := v.Get(l.draft.idKey()).Text(); ok {
			if ref, err := url.Parse(id); err == nil {
				abs := base.ResolveReference(ref)
				if strings.HasPrefix(id, "#") && !l.draft.modern() {
					l.anchors[abs.String()] = v
				} else {
					base = abs
					if _, ok := l.resources[stripFragment(abs)]; !ok {
						l.resources[stripFragment(abs)] = v
					}
				}
			}
		}
		if l.draft.modern() {
			for _, key := range []string{"$anchor", "$dynamicAnchor", "$recursiveAnchor"} {
				if a, ok := v.Get(key).Text(); ok {
					c := *base
					c.Fragment = a
					l.anchors[c.String()] = v
				}
			}
		}
		l.bases[v] = base
		for _, m := range v.Members {
			if m.Key == "enum" || m.Key == "const" || m.Key == "default" || m.Key == "examples" {
				continue
			}
			l.walk(m.Value, base)
		}
	case jsontree.Array:
		for _, it := range v.Items {
			l.walk(it, base)
		}
	}
}

// resolve finds the JSON a $ref names from the object at which it appears.
func (l *loader) resolve(at *jsontree.Value, ref string) *jsontree.Value {
	base := l.bases[at]
	if base == nil {
		return nil
	}
	r, err := url.Parse(ref)
	if err != nil {
		return nil
	}
	abs := base.ResolveReference(r)
	if a := l.anchors[abs.String()]; a != nil {
		return a
	}
	doc := l.resources[stripFragment(abs)]
	if doc == nil {
		return nil
	}
	frag := abs.Fragment
	if frag == "" {
		return doc
	}
	if !strings.HasPrefix(frag, "/") {
		return nil
	}
	return l.pointer(doc, frag)
}

// pointer evaluates a JSON pointer. At a document's top, "$defs/X" also
// finds "definitions/X": Confluent copies top-level definitions into $defs
// before loading, so either spelling of the reference resolves.
func (l *loader) pointer(doc *jsontree.Value, ptr string) *jsontree.Value {
	toks := strings.Split(ptr[1:], "/")
	v := doc
	for i, tok := range toks {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v.Kind {
		case jsontree.Object:
			next := v.Get(tok)
			if next == nil && i == 1 && toks[0] == "$defs" && l.docRoots[doc] {
				if defs := doc.Get("definitions"); defs != nil {
					next = defs.Get(tok)
				}
			}
			if next == nil && i == 0 && tok == "$defs" && l.docRoots[doc] {
				if d := doc.Get("$defs"); d == nil || d.Kind == jsontree.Object {
					next = &jsontree.Value{Kind: jsontree.Object}
					if d != nil {
						next.Members = append(next.Members, d.Members...)
					}
					if defs := doc.Get("definitions"); defs != nil {
						for _, m := range defs.Members {
							if next.Get(m.Key) == nil {
								next.Members = append(next.Members, m)
							}
						}
					}
				}
			}
			v = next
		case jsontree.Array:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(v.Items) {
				return nil
			}
			v = v.Items[n]
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}

var (
	arrayKeywords4  = []string{"items", "additionalItems", "minItems", "maxItems", "uniqueItems"}
	arrayKeywords6  = []string{"items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"}
	objectKeywords4 = []string{"properties", "required", "minProperties", "maxProperties", "dependencies", "patternProperties", "additionalProperties"}
	objectKeywords6 = []string{"properties", "required", "minProperties", "maxProperties", "dependencies", "patternProperties", "additionalProperties", "propertyNames"}
	numberKeywords  = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
	stringKeywords  = []string{"minLength", "maxLength", "pattern", "format"}
	// The keywords 2019-09 and 2020-12 add to objects and arrays.
	arrayKeywordsModern  = []string{"items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "prefixItems", "unevaluatedItems", "minContains", "maxContains"}
	objectKeywordsModern = []string{"properties", "required", "minProperties", "maxProperties", "patternProperties", "additionalProperties", "propertyNames", "dependentRequired", "dependentSchemas", "unevaluatedProperties"}
)

func (l *loader) arrayKeywords() []string {
	switch {
	case l.draft == draft4:
		return arrayKeywords4
	case l.draft.modern():
		return arrayKeywordsModern
	}
	return arrayKeywords6
}

func (l *loader) objectKeywords() []string {
	switch {
	case l.draft == draft4:
		return objectKeywords4
	case l.draft.modern():
		return objectKeywordsModern
	}
	return objectKeywords6
}

// load is everit's SchemaLoader.loadChild: one node per JSON value, so
// every $ref to one place shares the node it refers to (the identity the
// diff's memo and cycle checks rely on).
func (l *loader) load(v *jsontree.Value) *jnode {
	if v == nil {
		return nil
	}
	if n := l.nodes[v]; n != nil {
		return n
	}
	n := &jnode{src: v}
	l.nodes[v] = n
	switch v.Kind {
	case jsontree.Bool:
		n.kind = kFalse
		if v.Bool {
			n.kind = kTrue
		}
		return n
	case jsontree.Object:
	default:
		n.kind = kEmpty // the validator rejects these before they get here
		return n
	}
	consumed := make(map[string]bool)
	var built []*jnode
	if r, ok := v.Get("$ref").Text(); ok {
		ref := &jnode{kind: kRef, src: v, ref: l.load(l.resolve(v, r))}
		consumed["$ref"] = true
		if !l.draft.modern() {
			*n = *ref
			l.common(n, v)
			return n
		}
		built = append(built, ref)
	}
	if l.draft.modern() {
		for _, key := range []string{"$recursiveRef", "$dynamicRef"} {
			if r, ok := v.Get(key).Text(); ok {
				built = append(built, &jnode{kind: kRef, src: v, ref: l.load(l.resolve(v, r))})
				consumed[key] = true
			}
		}
	}
	if e := v.Get("enum"); e != nil && e.Kind == jsontree.Array {
		built = append(built, &jnode{kind: kEnum, values: e.Items})
		consumed["enum"] = true
	}
	var present []string
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if v.Has(key) {
			present = append(present, key)
		}
	}
	for _, key := range javaorder.NewSetFrom(javaorder.StringHash, present).Keys() {
		c := &jnode{kind: kCombined, criterion: key}
		for _, it := range v.Get(key).Items {
			c.subs = append(c.subs, l.load(it))
		}
		built = append(built, c)
		consumed[key] = true
	}
	if nv := v.Get("not"); nv != nil {
		built = append(built, &jnode{kind: kNot, not: l.load(nv)})
		consumed["not"] = true
	}
	if cv := v.Get("const"); cv != nil && l.draft != draft4 {
		built = append(built, &jnode{kind: kConst, value: cv})
		consumed["const"] = true
	}
	if tv := v.Get("type"); tv != nil {
		consumed["type"] = true
		switch tv.Kind {
		case jsontree.String:
			built = append(built, l.typed(v, tv.Str, consumed))
		case jsontree.Array:
			c := &jnode{kind: kCombined, criterion: "anyOf"}
			for _, t := range tv.Items {
				if s, ok := t.Text(); ok {
					c.subs = append(c.subs, l.typed(v, s, consumed))
				}
			}
			built = append(built, c)
		}
	}
	// Keywords of a type the "type" keyword did not name still make a
	// schema of that type, which accepts other types.
	remaining := func(keys []string) bool {
		for _, k := range keys {
			if !consumed[k] && l.has(v, k) {
				return true
			}
		}
		return false
	}
	if remaining(l.arrayKeywords()) {
		built = append(built, l.typed(v, "array", consumed))
	}
	if remaining(l.objectKeywords()) {
		built = append(built, l.typed(v, "object", consumed))
	}
	if remaining(numberKeywords) {
		nn := l.typed(v, "number", consumed)
		built = append(built, nn)
	}
	if remaining(stringKeywords) {
		built = append(built, l.typed(v, "string", consumed))
	}
	if (l.draft >= draft7) && remaining([]string{"if", "then", "else"}) {
		built = append(built, &jnode{kind: kConditional})
	}
	switch len(built) {
	case 0:
		n.kind = kEmpty
	case 1:
		*n = *built[0]
		n.src = v
	default:
		n.kind, n.criterion, n.subs = kCombined, "allOf", built
	}
	l.common(n, v)
	return n
}

// has reports whether v has a keyword that makes a schema. In 2019-09 and
// 2020-12 an empty "properties" or "patternProperties" makes none:
// json-sKema keeps no subschema for it, so Confluent's translation sees an
// empty schema (its own 2020-12 diff examples show it).
func (l *loader) has(v *jsontree.Value, key string) bool {
	x := v.Get(key)
	if x == nil {
		return false
	}
	if l.draft.modern() && (key == "properties" || key == "patternProperties") && x.Kind == jsontree.Object && len(x.Members) == 0 {
		return false
	}
	return true
}

// common loads the keywords every schema has (SchemaLoader's
// loadCommonSchemaProperties).
func (l *loader) common(n *jnode, v *jsontree.Value) {
	text := func(key string) *string {
		if s, ok := v.Get(key).Text(); ok {
			return &s
		}
		return nil
	}
	n.title, n.description = text("title"), text("description")
	// json-sKema takes a document's own $id as its base URI, not as a
	// keyword, so the 2020-12 examples report no ID_CHANGED at the root.
	if !l.draft.modern() || !l.docRoots[v] {
		n.id = text(l.draft.idKey())
	}
	if d := v.Get("default"); d != nil {
		n.hasDefault, n.def = true, d
	}
	if ct, ok := v.Get("connect.type").Text(); ok {
		n.connectType = ct
	}
}

func intKeyword(v *jsontree.Value, key string) *int64 {
	x := v.Get(key)
	if x == nil || x.Kind != jsontree.Number {
		return nil
	}
	if i, ok := jsontree.Int64(x.Str); ok {
		return &i
	}
	// 5.0 is an integer to the validators; keep its value.
	f := jsontree.Float64(x.Str)
	i := int64(f)
	return &i
}

func numKeyword(v *jsontree.Value, key string) *string {
	x := v.Get(key)
	if x == nil || x.Kind != jsontree.Number {
		return nil
	}
	return &x.Str
}

// typed builds the schema of one JSON type from the keywords of v, marking
// them consumed.
func (l *loader) typed(v *jsontree.Value, typ string, consumed map[string]bool) *jnode {
	switch typ {
	case "string":
		for _, k := range stringKeywords {
			consumed[k] = true
		}
		n := &jnode{kind: kString, minLength: intKeyword(v, "minLength"), maxLength: intKeyword(v, "maxLength")}
		if p, ok := v.Get("pattern").Text(); ok {
			n.pattern = &p
		}
		return n
	case "integer", "number":
		for _, k := range numberKeywords {
			consumed[k] = true
		}
		n := &jnode{kind: kNumber, requiresInteger: typ == "integer",
			minimum: numKeyword(v, "minimum"), maximum: numKeyword(v, "maximum"), multipleOf: numKeyword(v, "multipleOf")}
		if l.draft != draft4 {
			n.exclMin, n.exclMax = numKeyword(v, "exclusiveMinimum"), numKeyword(v, "exclusiveMaximum")
		}
		return n
	case "boolean":
		return &jnode{kind: kBoolean}
	case "null":
		return &jnode{kind: kNull}
	case "array":
		for _, k := range l.arrayKeywords() {
			consumed[k] = true
		}
		return l.array(v)
	case "object":
		for _, k := range l.objectKeywords() {
			consumed[k] = true
		}
		return l.object(v)
	}
	return &jnode{kind: kEmpty}
}

func (l *loader) object(v *jsontree.Value) *jnode {
	n := &jnode{kind: kObject, addProps: true, minProps: intKeyword(v, "minProperties"), maxProps: intKeyword(v, "maxProperties")}
	if ps := v.Get("properties"); ps != nil && ps.Kind == jsontree.Object {
		for _, m := range ps.Members {
			if m.Key != l.draft.idKey() || m.Value.Kind == jsontree.Object {
				n.props = append(n.props, prop{m.Key, l.load(m.Value)})
			}
		}
	}
	if ap := v.Get("additionalProperties"); ap != nil {
		switch {
		case ap.Kind == jsontree.Bool:
			n.addProps = ap.Bool
		case ap.Kind == jsontree.Object:
			n.addPropsSch = l.load(ap)
		}
	}
	if rs := v.Get("required"); rs != nil && rs.Kind == jsontree.Array {
		for _, r := range rs.Items {
			if s, ok := r.Text(); ok {
				n.required = append(n.required, s)
			}
		}
	}
	if pp := v.Get("patternProperties"); pp != nil && pp.Kind == jsontree.Object {
		for _, m := range pp.Members {
			re, _ := regexp.Compile(m.Key)
			n.patternProps = append(n.patternProps, patternProp{m.Key, re, l.load(m.Value)})
		}
	}
	addDep := func(name string, needs []*jsontree.Value) {
		d := propDep{name: name}
		for _, x := range needs {
			if s, ok := x.Text(); ok {
				d.needs = append(d.needs, s)
			}
		}
		n.propDeps = append(n.propDeps, d)
	}
	if !l.draft.modern() {
		if deps := v.Get("dependencies"); deps != nil && deps.Kind == jsontree.Object {
			for _, m := range deps.Members {
				if m.Value.Kind == jsontree.Array {
					addDep(m.Key, m.Value.Items)
				} else {
					n.schemaDeps = append(n.schemaDeps, prop{m.Key, l.load(m.Value)})
				}
			}
		}
		return n
	}
	if deps := v.Get("dependentRequired"); deps != nil && deps.Kind == jsontree.Object {
		for _, m := range deps.Members {
			if m.Value.Kind == jsontree.Array {
				addDep(m.Key, m.Value.Items)
			}
		}
	}
	if deps := v.Get("dependentSchemas"); deps != nil && deps.Kind == jsontree.Object {
		for _, m := range deps.Members {
			n.schemaDeps = append(n.schemaDeps, prop{m.Key, l.load(m.Value)})
		}
	}
	if u := v.Get("unevaluatedProperties"); u != nil {
		n.unevalProps = l.load(u)
	}
	return n
}

func (l *loader) array(v *jsontree.Value) *jnode {
	n := &jnode{kind: kArray, addItems: true, minItems: intKeyword(v, "minItems"), maxItems: intKeyword(v, "maxItems")}
	if u := v.Get("uniqueItems"); u != nil && u.Kind == jsontree.Bool {
		n.uniqueItems = u.Bool
	}
	additional := func(a *jsontree.Value) {
		switch a.Kind {
		case jsontree.Bool:
			n.addItems = a.Bool
		case jsontree.Object:
			n.addItemsSch = l.load(a)
		}
	}
	if l.draft == draft2020 {
		prefix := v.Get("prefixItems")
		if prefix != nil && prefix.Kind == jsontree.Array {
			for _, it := range prefix.Items {
				n.itemSchemas = append(n.itemSchemas, l.load(it))
			}
		}
		if it := v.Get("items"); it != nil {
			switch {
			case it.Kind == jsontree.Bool && !it.Bool:
				n.addItems = false
			case it.Kind == jsontree.Bool:
			case len(n.itemSchemas) == 0:
				n.allItems = l.load(it)
			default:
				n.addItemsSch = l.load(it)
			}
		}
	} else {
		if a := v.Get("additionalItems"); a != nil {
			additional(a)
		}
		if it := v.Get("items"); it != nil {
			switch it.Kind {
			case jsontree.Array:
				for _, x := range it.Items {
					n.itemSchemas = append(n.itemSchemas, l.load(x))
				}
			default:
				n.allItems = l.load(it)
			}
		}
	}
	if l.draft.modern() {
		if u := v.Get("unevaluatedItems"); u != nil {
			n.unevalItems = l.load(u)
		}
		if v.Has("contains") {
			// Confluent's translation always records minContains (json-sKema
			// defaults it to 1) when contains is present.
			one := int64(1)
			n.minContains = &one
			if m := intKeyword(v, "minContains"); m != nil {
				n.minContains = m
			}
			n.maxContains = intKeyword(v, "maxContains")
		}
	} else {
		// Not keywords before 2019-09: everit keeps them as unprocessed
		// numbers, which Confluent's diff still compares.
		n.minContains, n.maxContains = intKeyword(v, "minContains"), intKeyword(v, "maxContains")
	}
	return n
}
