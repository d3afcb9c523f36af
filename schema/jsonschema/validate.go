package jsonschema

import (
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"strings"

	"sharq/schema/internal/jsontree"
)

// This file is what the registry needs of a JSON Schema validator: a
// schema checked against its draft's meta-schema (each keyword's value of
// the type and form the meta-schema gives it, formats as the meta-schema
// asserts them) and every $ref resolved to a schema. It is written here
// rather than linked from a validator library, whose package init compiles
// every draft's meta-schema whenever the binary starts (17 ms and 1.7 MB,
// with the registry off); these rules cost nothing until a schema is
// parsed.

// document is a schema text parsed, with the URL it is known by.
type document struct {
	url string
	doc *jsontree.Value
}

// vdraft is the draft a document is checked under: its own $schema's, or
// the root's when it has none. Unlike draftOf (Confluent's reading, which
// picks the model), "json-schema.org/schema" is the latest draft here, as
// validators read it.
func vdraft(v *jsontree.Value, def draft) (draft, error) {
	s, ok := v.Get("$schema").Text()
	if !ok {
		return def, nil
	}
	u := strings.TrimSuffix(s, "#")
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		u = rest
	} else if rest, ok := strings.CutPrefix(u, "https://"); ok {
		u = rest
	}
	switch u {
	case "json-schema.org/schema", "json-schema.org/draft/2020-12/schema":
		return draft2020, nil
	case "json-schema.org/draft/2019-09/schema":
		return draft2019, nil
	case "json-schema.org/draft-07/schema":
		return draft7, nil
	case "json-schema.org/draft-06/schema":
		return draft6, nil
	case "json-schema.org/draft-04/schema":
		return draft4, nil
	}
	return 0, fmt.Errorf("$schema %s is not a referenced schema", s)
}

// metaSchemaURL reports whether a URL (without fragment) is one of the
// drafts' meta-schemas (or a 2019-09 / 2020-12 vocabulary's), which a
// schema may refer to without providing it.
func metaSchemaURL(u string) bool {
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		u = rest
	} else if rest, ok := strings.CutPrefix(u, "https://"); ok {
		u = rest
	}
	switch u {
	case "json-schema.org/schema", "json-schema.org/draft-04/schema", "json-schema.org/draft-06/schema", "json-schema.org/draft-07/schema",
		"json-schema.org/draft/2019-09/schema", "json-schema.org/draft/2020-12/schema":
		return true
	}
	for _, p := range []string{"json-schema.org/draft/2019-09/meta/", "json-schema.org/draft/2020-12/meta/"} {
		if name, ok := strings.CutPrefix(u, p); ok {
			switch name {
			case "core", "applicator", "validation", "meta-data", "format", "content", "unevaluated", "format-annotation", "format-assertion":
				return true
			}
		}
	}
	return false
}

// validate checks the root against its draft's meta-schema and compiles
// it as a validator would: from the root through the keywords that apply
// subschemas (not definitions, which apply only when a $ref reaches them),
// every $ref resolved, and the document a $ref reaches checked against its
// meta-schema the first time.
func validate(d draft, docs []document) error {
	l := newLoader(d)
	v := &validator{l: l, checked: make(map[*jsontree.Value]bool), compiled: make(map[*jsontree.Value]bool), docOf: make(map[*jsontree.Value]*jsontree.Value)}
	seen := make(map[string]bool, len(docs))
	var root *jsontree.Value
	var rootURL *url.URL
	for _, doc := range docs {
		u, err := url.Parse(doc.url)
		if err != nil {
			return err
		}
		if seen[doc.url] {
			continue
		}
		seen[doc.url] = true
		merged := mergeDefs(doc.doc)
		if root == nil {
			root, rootURL = merged, u
		}
		l.index(merged, u)
		v.own(merged, merged)
	}
	rd, err := vdraft(root, d)
	if err != nil {
		return err
	}
	v.def = rd
	if err := v.document(root, rd); err != nil {
		return err
	}
	return v.compile(root, rd, rootURL, "")
}

type validator struct {
	l        *loader
	def      draft
	checked  map[*jsontree.Value]bool // documents checked against their meta-schema
	compiled map[*jsontree.Value]bool
	docOf    map[*jsontree.Value]*jsontree.Value
}

// own records the document each value is in.
func (v *validator) own(x, doc *jsontree.Value) {
	v.docOf[x] = doc
	for _, m := range x.Members {
		v.own(m.Value, doc)
	}
	for _, it := range x.Items {
		v.own(it, doc)
	}
}

func (v *validator) document(doc *jsontree.Value, d draft) error {
	v.checked[doc] = true
	if err := v.schema(doc, d, ""); err != nil {
		name := "mem://input"
		if b := v.l.bases[doc]; b != nil {
			name = stripFragment(b)
		}
		return fmt.Errorf("%q is not valid against the %s meta-schema: %w", name+"#", draftNames[d], err)
	}
	return nil
}

// compile walks a checked schema: its $refs resolved and compiled, the
// subschemas its applicator keywords hold compiled in turn.
func (v *validator) compile(s *jsontree.Value, d draft, base *url.URL, at string) error {
	if s.Kind != jsontree.Object || v.compiled[s] {
		return nil
	}
	v.compiled[s] = true
	hasRef := s.Has("$ref")
	if id, ok := s.Get(d.idKey()).Text(); ok && (d.modern() || !hasRef) {
		if u, err := url.Parse(id); err == nil && (d.modern() || !strings.HasPrefix(id, "#")) {
			base = base.ResolveReference(u)
		}
	}
	for _, key := range []string{"$ref", "$recursiveRef", "$dynamicRef"} {
		r, ok := s.Get(key).Text()
		if !ok || (key != "$ref" && !d.modern()) {
			continue
		}
		if err := v.ref(r, base, at); err != nil {
			return err
		}
	}
	if hasRef && !d.modern() {
		return nil // before 2019-09 a $ref's siblings are ignored
	}
	for _, m := range s.Members {
		f, ok := formOf(d, m.Key)
		if !ok || !applicator(m.Key) {
			continue
		}
		p := at + "/" + escapePointer(m.Key)
		var subs []*jsontree.Value
		switch {
		case f == fSchemaMap || f == fDependencies:
			for _, e := range m.Value.Members {
				subs = append(subs, e.Value)
			}
		case m.Value.Kind == jsontree.Array:
			subs = m.Value.Items
		default:
			subs = []*jsontree.Value{m.Value}
		}
		for _, sub := range subs {
			if err := v.compile(sub, d, base, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// applicator: the keywords whose subschemas a validator compiles with the
// schema holding them.
func applicator(key string) bool {
	switch key {
	case "definitions", "$defs":
		return false
	}
	f, _ := formOf(draft2020, key)
	g, _ := formOf(draft2019, key)
	h, _ := formOf(draft4, key)
	for _, x := range []form{f, g, h} {
		switch x {
		case fSchema, fSchemaOrBool, fSchemaArray, fSchemaMap, fSchemaOrArray, fDependencies:
			return true
		}
	}
	return false
}

// ref resolves and compiles what a $ref names: a meta-schema, or a value
// in one of the documents, which is checked as a schema.
func (v *validator) ref(r string, base *url.URL, at string) error {
	u, err := url.Parse(r)
	if err != nil {
		return fmt.Errorf("$ref %q at '%s': invalid URL: %v", r, at, err)
	}
	abs := base.ResolveReference(u)
	docURL := stripFragment(abs)
	var target *jsontree.Value
	if a := v.l.anchors[abs.String()]; a != nil {
		target = a
	} else {
		doc := v.l.resources[docURL]
		if doc == nil {
			if metaSchemaURL(docURL) {
				return nil
			}
			return fmt.Errorf("%s is not a referenced schema", docURL)
		}
		switch f := abs.Fragment; {
		case f == "":
			target = doc
		case strings.HasPrefix(f, "/"):
			if target = v.l.pointer(doc, f); target == nil {
				return fmt.Errorf("$ref %q at '%s': JSON pointer %q not found in %s", r, at, f, docURL)
			}
		default:
			return fmt.Errorf("$ref %q at '%s': anchor %q not found in %s", r, at, f, docURL)
		}
	}
	doc := v.docOf[target]
	d := v.def
	if doc != nil {
		dd, err := vdraft(doc, v.def)
		if err != nil {
			return err
		}
		d = dd
		if !v.checked[doc] {
			if err := v.document(doc, d); err != nil {
				return err
			}
		}
	}
	if err := v.schema(target, d, ""); err != nil {
		return fmt.Errorf("%q is not valid against the %s meta-schema: %w", abs.String(), draftNames[d], err)
	}
	tbase := v.l.bases[target]
	if tbase == nil {
		tbase = abs
	}
	return v.compile(target, d, tbase, "")
}

// form is what the meta-schema asks of a keyword's value.
type form uint8

const (
	fAny form = iota
	fSchema
	fSchemaOrBool // draft 4's additionalItems, additionalProperties
	fSchemaArray
	fSchemaMap
	fSchemaOrArray // items before 2020-12
	fDependencies
	fStringArrayMap
	fType
	fString
	fURI    // a string, an absolute URI where the draft asserts formats
	fURIRef // a string, a URI reference where the draft asserts formats
	fID     // 2019-09 and later: a URI reference without a fragment
	fAnchor
	fNumber
	fPositive
	fNonNegInt
	fBool
	fArray
	fEnum
	fStringArray
	fVocabulary
	fExclusive4 // draft 4's boolean exclusiveMaximum / exclusiveMinimum
)

// formOf is the keyword's form in a draft's meta-schema; false for a
// keyword the draft does not define (its value is not checked).
func formOf(d draft, key string) (form, bool) {
	switch key {
	case "type":
		return fType, true
	case "title", "description", "format":
		return fString, true
	case "default":
		return fAny, true
	case "multipleOf":
		return fPositive, true
	case "maximum", "minimum":
		return fNumber, true
	case "exclusiveMaximum", "exclusiveMinimum":
		if d == draft4 {
			return fExclusive4, true
		}
		return fNumber, true
	case "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties":
		return fNonNegInt, true
	case "pattern":
		// format "regex": patterns are Java's dialect, wider than Go's, so
		// any string is taken (the registry needs the schema well formed,
		// not its patterns run).
		return fString, true
	case "uniqueItems":
		return fBool, true
	case "required":
		return fStringArray, true
	case "enum":
		return fEnum, true
	case "properties", "patternProperties", "definitions":
		return fSchemaMap, true
	case "allOf", "anyOf", "oneOf":
		return fSchemaArray, true
	case "not":
		return fSchema, true
	case "additionalItems", "additionalProperties":
		if d == draft4 {
			return fSchemaOrBool, true
		}
		return fSchema, true
	case "items":
		if d == draft2020 {
			return fSchema, true
		}
		return fSchemaOrArray, true
	case "dependencies":
		return fDependencies, true
	case "$schema":
		return fURI, true
	case "$ref":
		if d == draft4 {
			return fString, true
		}
		return fURIRef, true
	case "id":
		if d == draft4 {
			return fString, true // format "uriref", which no validator knows
		}
	}
	if d == draft4 {
		return 0, false
	}
	switch key {
	case "$id":
		if d.modern() {
			return fID, true
		}
		return fURIRef, true
	case "contains", "propertyNames":
		return fSchema, true
	case "const":
		return fAny, true
	case "examples":
		return fArray, true
	}
	if d == draft6 {
		return 0, false
	}
	switch key {
	case "$comment", "contentMediaType", "contentEncoding":
		return fString, true
	case "readOnly", "writeOnly":
		return fBool, true
	case "if", "then", "else":
		return fSchema, true
	}
	if d == draft7 {
		return 0, false
	}
	switch key {
	case "$defs", "dependentSchemas":
		return fSchemaMap, true
	case "$anchor", "$dynamicAnchor":
		if key == "$dynamicAnchor" && d != draft2020 {
			return 0, false
		}
		return fAnchor, true
	case "$recursiveRef", "$dynamicRef":
		if key == "$dynamicRef" && d != draft2020 {
			return 0, false
		}
		return fURIRef, true
	case "$recursiveAnchor":
		if d == draft2020 {
			return fAnchor, true // the 2020-12 meta-schema's leftover: an anchor string
		}
		return fBool, true
	case "$vocabulary":
		return fVocabulary, true
	case "unevaluatedItems", "unevaluatedProperties", "contentSchema":
		return fSchema, true
	case "minContains", "maxContains":
		return fNonNegInt, true
	case "dependentRequired":
		return fStringArrayMap, true
	case "deprecated":
		return fBool, true
	case "prefixItems":
		if d == draft2020 {
			return fSchemaArray, true
		}
	}
	return 0, false
}

var (
	anchor2019 = lazyRegexp(`^[A-Za-z][-A-Za-z0-9.:_]*$`)
	anchor2020 = lazyRegexp(`^[A-Za-z_][-A-Za-z0-9._]*$`)
)

// lazyRegexp compiles on first use, so that no regexp is compiled at
// package init.
func lazyRegexp(s string) func() *regexp.Regexp {
	var re *regexp.Regexp
	return func() *regexp.Regexp {
		if re == nil {
			re = regexp.MustCompile(s)
		}
		return re
	}
}

// schema checks one schema: an object (or, from draft 6, a boolean) whose
// keywords have their forms.
func (v *validator) schema(s *jsontree.Value, d draft, at string) error {
	switch s.Kind {
	case jsontree.Object:
	case jsontree.Bool:
		if d != draft4 {
			return nil
		}
		fallthrough
	default:
		return typeError(at, s, d, "object")
	}
	for _, m := range s.Members {
		f, ok := formOf(d, m.Key)
		if !ok {
			continue
		}
		if err := v.keyword(f, m.Value, d, at+"/"+escapePointer(m.Key)); err != nil {
			return err
		}
		if m.Key == d.idKey() && m.Value.Kind == jsontree.String {
			if _, err := parseURL(m.Value.Str); err != nil {
				return fmt.Errorf("at '%s': error in parsing id %q: %v", at, m.Value.Str, err)
			}
		}
		if m.Key == "$schema" && at != "" {
			// A validator loads a subschema's meta-schema (and reads it
			// by its own draft only at a resource's root).
			if _, err := vdraft(s, d); err != nil {
				return err
			}
		}
	}
	if d == draft4 {
		for _, p := range [][2]string{{"exclusiveMaximum", "maximum"}, {"exclusiveMinimum", "minimum"}} {
			if s.Has(p[0]) && !s.Has(p[1]) {
				return fmt.Errorf("at '%s': %s needs %s", at, p[0], p[1])
			}
		}
	}
	return nil
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func typeError(at string, got *jsontree.Value, d draft, want string) error {
	return fmt.Errorf("at '%s': got %s, want %s", at, kindName(got), want)
}

func kindName(v *jsontree.Value) string {
	switch v.Kind {
	case jsontree.Null:
		return "null"
	case jsontree.Bool:
		return "boolean"
	case jsontree.Number:
		return "number"
	case jsontree.String:
		return "string"
	case jsontree.Array:
		return "array"
	}
	return "object"
}

func (v *validator) keyword(f form, x *jsontree.Value, d draft, at string) error {
	wantSchema := "object"
	if d != draft4 {
		wantSchema = "boolean or object"
	}
	switch f {
	case fAny:
		return nil
	case fSchema:
		return v.schema(x, d, at)
	case fSchemaOrBool:
		if x.Kind == jsontree.Bool {
			return nil
		}
		if x.Kind != jsontree.Object {
			return typeError(at, x, d, "boolean or object")
		}
		return v.schema(x, d, at)
	case fSchemaArray:
		if x.Kind != jsontree.Array {
			return typeError(at, x, d, "array")
		}
		if len(x.Items) == 0 {
			return fmt.Errorf("at '%s': minItems: got 0, want 1", at)
		}
		for i, it := range x.Items {
			if err := v.schema(it, d, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
		return nil
	case fSchemaMap:
		if x.Kind != jsontree.Object {
			return typeError(at, x, d, "object")
		}
		for _, m := range x.Members {
			if err := v.schema(m.Value, d, at+"/"+escapePointer(m.Key)); err != nil {
				return err
			}
		}
		return nil
	case fSchemaOrArray:
		if x.Kind == jsontree.Array {
			return v.keyword(fSchemaArray, x, d, at)
		}
		if x.Kind != jsontree.Object && (x.Kind != jsontree.Bool || d == draft4) {
			return typeError(at, x, d, wantSchema+" or array")
		}
		return v.schema(x, d, at)
	case fDependencies:
		if x.Kind != jsontree.Object {
			return typeError(at, x, d, "object")
		}
		for _, m := range x.Members {
			p := at + "/" + escapePointer(m.Key)
			if m.Value.Kind == jsontree.Array {
				if err := stringArray(m.Value, d, p); err != nil {
					return err
				}
				continue
			}
			if err := v.schema(m.Value, d, p); err != nil {
				return err
			}
		}
		return nil
	case fStringArrayMap:
		if x.Kind != jsontree.Object {
			return typeError(at, x, d, "object")
		}
		for _, m := range x.Members {
			if err := stringArray(m.Value, d, at+"/"+escapePointer(m.Key)); err != nil {
				return err
			}
		}
		return nil
	case fType:
		if x.Kind == jsontree.String {
			return simpleType(x, at)
		}
		if x.Kind != jsontree.Array {
			return typeError(at, x, d, "string or array")
		}
		if len(x.Items) == 0 {
			return fmt.Errorf("at '%s': minItems: got 0, want 1", at)
		}
		for i, it := range x.Items {
			if it.Kind != jsontree.String {
				return typeError(fmt.Sprintf("%s/%d", at, i), it, d, "string")
			}
			if err := simpleType(it, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
		return unique(x, at)
	case fString, fURI, fURIRef, fID, fAnchor:
		if x.Kind != jsontree.String {
			return typeError(at, x, d, "string")
		}
		return stringForm(f, x.Str, d, at)
	case fNumber, fPositive:
		if x.Kind != jsontree.Number {
			return typeError(at, x, d, "number")
		}
		if f == fPositive && new(big.Rat).Sign() >= ratOf(x.Str).Sign() {
			return fmt.Errorf("at '%s': must be > 0 but found %s", at, x.Str)
		}
		return nil
	case fNonNegInt:
		if x.Kind != jsontree.Number || !ratOf(x.Str).IsInt() {
			return typeError(at, x, d, "integer")
		}
		if ratOf(x.Str).Sign() < 0 {
			return fmt.Errorf("at '%s': must be >= 0 but found %s", at, x.Str)
		}
		return nil
	case fBool, fExclusive4:
		if x.Kind != jsontree.Bool {
			return typeError(at, x, d, "boolean")
		}
		return nil
	case fArray:
		if x.Kind != jsontree.Array {
			return typeError(at, x, d, "array")
		}
		return nil
	case fEnum:
		if x.Kind != jsontree.Array {
			return typeError(at, x, d, "array")
		}
		if d.modern() {
			return nil
		}
		if len(x.Items) == 0 {
			return fmt.Errorf("at '%s': minItems: got 0, want 1", at)
		}
		return unique(x, at)
	case fStringArray:
		return stringArray(x, d, at)
	case fVocabulary:
		if x.Kind != jsontree.Object {
			return typeError(at, x, d, "object")
		}
		for _, m := range x.Members {
			if err := stringForm(fURI, m.Key, d, at); err != nil {
				return err
			}
			if m.Value.Kind != jsontree.Bool {
				return typeError(at+"/"+escapePointer(m.Key), m.Value, d, "boolean")
			}
		}
		return nil
	}
	return nil
}

func simpleType(x *jsontree.Value, at string) error {
	switch x.Str {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return nil
	}
	return fmt.Errorf("at '%s': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'", at)
}

// stringArray: unique strings; draft 4 wants at least one.
func stringArray(x *jsontree.Value, d draft, at string) error {
	if x.Kind != jsontree.Array {
		return typeError(at, x, d, "array")
	}
	if d == draft4 && len(x.Items) == 0 {
		return fmt.Errorf("at '%s': minItems: got 0, want 1", at)
	}
	for i, it := range x.Items {
		if it.Kind != jsontree.String {
			return typeError(fmt.Sprintf("%s/%d", at, i), it, d, "string")
		}
	}
	return unique(x, at)
}

// stringForm checks the formats and patterns a draft's meta-schema gives
// a string (validators assert formats when checking a schema against its
// meta-schema).
func stringForm(f form, s string, d draft, at string) error {
	switch f {
	case fURI:
		u, err := parseURL(s)
		if err == nil && !u.IsAbs() {
			err = fmt.Errorf("relative url")
		}
		if err != nil {
			return fmt.Errorf("at '%s': %q is not valid uri: %v", at, s, err)
		}
	case fURIRef:
		if err := uriReference(s); err != nil {
			return fmt.Errorf("at '%s': %q is not valid uri-reference: %v", at, s, err)
		}
	case fID:
		if err := uriReference(s); err != nil {
			return fmt.Errorf("at '%s': %q is not valid uri-reference: %v", at, s, err)
		}
		if i := strings.IndexByte(s, '#'); i >= 0 && i != len(s)-1 {
			return fmt.Errorf("at '%s': %q does not match pattern '^[^#]*#?$'", at, s)
		}
	case fAnchor:
		re := anchor2019
		if d == draft2020 {
			re = anchor2020
		}
		if !re().MatchString(s) {
			return fmt.Errorf("at '%s': %q is not a valid anchor", at, s)
		}
	}
	return nil
}

func uriReference(s string) error {
	if strings.Contains(s, `\`) {
		return fmt.Errorf(`contains \`)
	}
	_, err := parseURL(s)
	return err
}

// parseURL is url.Parse with the check it leaves out: an IPv6 host in
// brackets.
func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if h := u.Hostname(); strings.Contains(h, ":") && (!strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]")) {
		return nil, fmt.Errorf("ipv6 address not enclosed in brackets")
	}
	return u, nil
}

// unique is uniqueItems: no two items equal as JSON values (numbers by
// value, 1 equals 1.0; objects regardless of key order).
func unique(x *jsontree.Value, at string) error {
	for i := range x.Items {
		for j := i + 1; j < len(x.Items); j++ {
			if sameValue(x.Items[i], x.Items[j]) {
				return fmt.Errorf("at '%s': items at %d and %d are equal", at, i, j)
			}
		}
	}
	return nil
}

func sameValue(a, b *jsontree.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case jsontree.Null:
		return true
	case jsontree.Bool:
		return a.Bool == b.Bool
	case jsontree.String:
		return a.Str == b.Str
	case jsontree.Number:
		return ratOf(a.Str).Cmp(ratOf(b.Str)) == 0
	case jsontree.Array:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !sameValue(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	}
	if len(a.Members) != len(b.Members) {
		return false
	}
	for _, m := range a.Members {
		o := b.Get(m.Key)
		if o == nil || !sameValue(m.Value, o) {
			return false
		}
	}
	return true
}

// ratOf is a number literal's exact value (an exponent too large for an
// exact value reads as zero's neighbour: such schemas are not the
// registry's concern beyond not panicking).
func ratOf(lit string) *big.Rat {
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		return new(big.Rat)
	}
	return r
}

// mergeDefs is Confluent's mergeDefBuckets: top-level definitions copied
// into $defs (a $defs entry of the same name wins), so "#/$defs/X" finds
// a definition written under either keyword.
func mergeDefs(v *jsontree.Value) *jsontree.Value {
	defs := v.Get("definitions")
	if defs == nil || defs.Kind != jsontree.Object || len(defs.Members) == 0 {
		return v
	}
	target := v.Get("$defs")
	if target != nil && target.Kind != jsontree.Object {
		return v
	}
	merged := &jsontree.Value{Kind: jsontree.Object}
	if target != nil {
		merged.Members = append(merged.Members, target.Members...)
	}
	for _, m := range defs.Members {
		if merged.Get(m.Key) == nil {
			merged.Members = append(merged.Members, m)
		}
	}
	out := &jsontree.Value{Kind: jsontree.Object, Members: make([]jsontree.Member, 0, len(v.Members)+1)}
	replaced := false
	for _, m := range v.Members {
		if m.Key == "$defs" {
			m.Value, replaced = merged, true
		}
		out.Members = append(out.Members, m)
	}
	if !replaced {
		out.Members = append(out.Members, jsontree.Member{Key: "$defs", Value: merged})
	}
	return out
}
