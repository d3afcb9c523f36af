package jsonschema

import (
	"strings"
	"testing"

	"sharq/schema"
)

// Canonical and normalized forms. Source: Confluent JsonSchema
// canonicalString (Jackson's writeValueAsString with exact BigDecimals) and
// normalize (the same read into sorted nodes); JsonSchemaTest
// testSchemasDifferentFieldOrder (key order makes a different schema).
func TestCanonicalAndNormalized(t *testing.T) {
	cases := []struct{ in, canonical, normalized string }{
		{
			in:         "{\n  \"title\": \"Person\",\n  \"type\": \"object\",\n  \"properties\": {\"lastName\": {\"type\": \"string\"}, \"firstName\": {\"type\": \"string\"}}\n}",
			canonical:  `{"title":"Person","type":"object","properties":{"lastName":{"type":"string"},"firstName":{"type":"string"}}}`,
			normalized: `{"properties":{"firstName":{"type":"string"},"lastName":{"type":"string"}},"title":"Person","type":"object"}`,
		},
		{
			in:         `{"type":"number","multipleOf":0.50,"maximum":1e3,"minimum":-0}`,
			canonical:  `{"type":"number","multipleOf":0.50,"maximum":1E+3,"minimum":0}`,
			normalized: `{"maximum":1E+3,"minimum":0,"multipleOf":0.50,"type":"number"}`,
		},
		{in: `true`, canonical: `true`, normalized: `true`},
		{in: `{"description":"a/b <\u00e9>"}`, canonical: `{"description":"a/b <é>"}`, normalized: `{"description":"a/b <é>"}`},
	}
	for _, c := range cases {
		p, err := Format.Parse(c.in, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := p.Canonical(); got != c.canonical {
			t.Errorf("canonical\n got %s\nwant %s", got, c.canonical)
		}
		n := p.Normalized()
		if got := n.Canonical(); got != c.normalized {
			t.Errorf("normalized\n got %s\nwant %s", got, c.normalized)
		}
		if msgs := n.BackwardCompatible(p); len(msgs) != 0 {
			t.Errorf("normalized schema cannot read the original: %v", msgs)
		}
	}
}

// Errors. Sources: Confluent JsonSchemaTest.testParseSchemaThrowException
// (malformed JSON), JsonSchema.rawSchema ("expected an object or boolean at
// the root"), everit and json-sKema rejecting schemas that break their
// draft's meta-schema; references that resolve nowhere.
func TestParseErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"Confluent invalidSchemaString", "{\"properties\": {\n  \"string\": {\"type\": \"str\"}\n  }  \"additionalProperties\": false\n}", "Invalid JSON"},
		{"a string at the root", `"string"`, "expected an object or boolean at the root, found STRING"},
		{"an array at the root", `[]`, "found ARRAY"},
		{"unknown type", `{"type":"str"}`, "Invalid schema"},
		{"type not a string", `{"type":5}`, "Invalid schema"},
		{"required not an array", `{"required":"a"}`, "Invalid schema"},
		{"minLength negative", `{"minLength":-1}`, "Invalid schema"},
		{"unresolvable $ref", `{"$ref":"missing.json"}`, "is not a referenced schema"},
		{"local file $ref", `{"$ref":"file:///etc/passwd"}`, "is not a referenced schema"},
		{"remote $ref", `{"$ref":"https://example.com/x.json"}`, "is not a referenced schema"},
		{"dangling pointer", `{"$ref":"#/definitions/nope"}`, "Invalid schema"},
		{"trailing content", `{} {}`, "Invalid JSON"},
		{"draft 4 boolean subschema", `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"a":true}}`, "Invalid schema"},
	}
	for _, c := range cases {
		_, err := Format.Parse(c.in, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	for _, ok := range []string{
		`{}`, `false`,
		// Confluent testParseSchemaDraft4
		`{"$schema":"http://json-schema.org/draft-04/schema#","title":"Test Obj","type":"object","additionalProperties":false,"properties":{"prop":{"oneOf":[{"type":"null","title":"Not included"},{"type":"string"}]}}}`,
		// Confluent testRecursiveMetaSchemaReference (draft-07 and 2020-12)
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"$ref":"http://json-schema.org/draft-07/schema#"}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"x":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}`,
		// A pattern Go's regexp cannot compile (a lookahead), valid in Java's.
		`{"type":"string","pattern":"^(?!x)"}`,
		// "#/$defs/X" finds a definition under definitions (Confluent's mergeDefBuckets).
		`{"definitions":{"X":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/X"}}}`,
	} {
		if _, err := Format.Parse(ok, nil); err != nil {
			t.Errorf("%s rejected: %v", ok, err)
		}
	}
}

// References by $ref URL across drafts. Source: Confluent JsonSchemaTest
// testEnvelopeWithReferences (a schema with $id https://acme.com/referrer.json
// refers to "ref.json#/definitions/ExternalType", the reference named
// ref.json), for drafts 7, 2019-09 and 2020-12 with and without "#" and
// https.
func TestReferences(t *testing.T) {
	for _, d := range []string{
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
		"https://json-schema.org/draft/2019-09/schema#",
		"http://json-schema.org/draft/2020-12/schema#",
	} {
		ref := `{"$schema":"` + d + `","type":"object","additionalProperties":false,"definitions":{"ExternalType":{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":false}}}`
		main := `{"$schema":"` + d + `","$id":"https://acme.com/referrer.json","type":"object","properties":{"Ref":{"$ref":"ref.json#/definitions/ExternalType"}},"additionalProperties":false}`
		refs := []schema.ResolvedReference{{Name: "ref.json", Type: "JSON", Schema: ref}}
		p, err := Format.Parse(main, refs)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if _, err := Format.Parse(main, nil); err == nil {
			t.Errorf("%s: parsed without its reference", d)
		}
		// Changing the referenced type is seen through the reference.
		ref2 := strings.Replace(ref, `"name":{"type":"string"}`, `"name":{"type":"integer"}`, 1)
		q, err := Format.Parse(main, []schema.ResolvedReference{{Name: "ref.json", Type: "JSON", Schema: ref2}})
		if err != nil {
			t.Fatal(err)
		}
		msgs := q.BackwardCompatible(p)
		if len(msgs) != 1 || !strings.Contains(msgs[0], "TYPE_CHANGED") || !strings.Contains(msgs[0], "#/properties/Ref/properties/name") {
			t.Errorf("%s: %v", d, msgs)
		}
		if got, err := p.Formatted(""); err != nil || got != p.Canonical() {
			t.Errorf("default format: %q %v", got, err)
		}
		if _, err := p.Formatted("serialized"); err == nil {
			t.Errorf("JSON has no serialized format")
		}
	}
	o, _ := Format.Parse(`{}`, nil)
	if msgs := o.BackwardCompatible(otherParsed{}); len(msgs) != 1 || msgs[0] != "Incompatible because of different schema type" {
		t.Errorf("different type: %v", msgs)
	}
}

type otherParsed struct{ schema.Parsed }

// TestMetaSchemaRules: each draft's meta-schema rules (keyword value types
// and forms, the formats and patterns it asserts) and $ref resolution, as
// a validator compiling the schema sees them. The outcomes are those of
// santhosh-tekuri/jsonschema v6 (the validator this package used before
// these rules were written here), which checks schemas against the
// drafts' published meta-schemas.
func TestMetaSchemaRules(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"$comment":5}`, false},
		{`{"$id":"#foo"}`, true},
		{`{"$id":"http://a.com/root.json","definitions":{"b":{"$id":"b.json","type":"integer"}},"properties":{"x":{"$ref":"b.json"}}}`, true},
		{`{"$id":"http://a.com/root.json","definitions":{"b":{"$id":"b.json","type":"integer"}},"properties":{"x":{"$ref":"c.json"}}}`, false},
		{`{"$ref":"#"}`, true},
		{`{"$schema":"http://example.com/custom","type":"string"}`, false},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","definitions":{"a":{"$ref":"missing"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","definitions":{"b":{}},"properties":{"x":{"$ref":"#/definitions/b"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","dependencies":{"a":[]}}`, false},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","examples":5}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","exclusiveMaximum":true,"maximum":3}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","exclusiveMaximum":true}`, false},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","minLength":1.0}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"a":{"$ref":"#/foo"}},"foo":true}`, false},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","required":[]}`, false},
		{`{"$schema":"http://json-schema.org/draft-06/schema#","$comment":5}`, true},
		{`{"$schema":"http://json-schema.org/draft-06/schema#","enum":[]}`, false},
		{`{"$schema":"http://json-schema.org/draft-06/schema#","if":5}`, true},
		{`{"$schema":"http://json-schema.org/draft-06/schema#","readOnly":"yes"}`, true},
		{`{"$schema":"http://json-schema.org/draft-06/schema#","required":[]}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema","$ref":"http://json-schema.org/draft-07/schema#/definitions/schemaArray"}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$id":"x\\y"}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/a","$id":"http://ok/x","definitions":{"a":{}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/a","$id":"http://x y","definitions":{"a":{}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/a","definitions":{"a":{"$ref":"missing"}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/a","definitions":{"a":{}},"properties":{"q":{"type":5}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/a","properties":{"q":{"$ref":"missing"}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"http://[::1/x"}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"x\\y"}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$schema":"relative"}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$id":"#foo","type":"string"}},"properties":{"x":{"$ref":"#bar"}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$id":"#foo","type":"string"}},"properties":{"x":{"$ref":"#foo"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":[],"c":5}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","if":5}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","minContains":-1}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$id":"http://z/a","$schema":"http://json-schema.org/draft-04/schema#","properties":{"b":true}}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions"}},"definitions":{"b":{"type":"string"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/b","$id":"http://other/x"}},"definitions":{"b":{}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/b/enum"}},"definitions":{"b":{"enum":[1]}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/b/enum/0"}},"definitions":{"b":{"enum":[1]}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/b/enum/0"}},"definitions":{"b":{"enum":[{"type":5}]}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/foo"}},"foo":5}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/foo"}},"foo":{"properties":{"b":{"$ref":"missing"}}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/foo"}},"foo":{"type":5}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"b":true}}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$schema":"relative"}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$anchor":"1abc"}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$anchor":"a:b"}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"a":{"$anchor":"foo","type":"string"}},"properties":{"x":{"$ref":"#foo"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$id":"http://e/x","$defs":{"a":{"$id":"inner","$anchor":"z"}},"$ref":"inner#z"}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"properties":{"x":{"$recursiveRef":"#"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$ref":"#/$defs/a","$defs":{"a":{"$schema":"http://json-schema.org/draft-04/schema#"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$vocabulary":{"not a uri":true}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$vocabulary":{"x":true}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","dependentRequired":{"a":["b","b"]}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","deprecated":"yes"}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","enum":[1,1]}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","enum":[]}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","minContains":-1}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","prefixItems":5}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"a":{"$ref":"#/$defs/b","$id":"http://other/x"}},"$defs":{"b":{}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"$ref":"#/$defs/c"}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"properties":{"z":{"$ref":"nowhere"}}}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","readOnly":"yes"}`, false},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","unevaluatedProperties":5}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$anchor":"a:b"}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"a":{"$anchor":"foo","type":"string"}},"properties":{"x":{"$ref":"#foo"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"a":{"$ref":"missing"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$dynamicAnchor":"meta","properties":{"x":{"$dynamicRef":"#meta"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"#foo"}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"http://x/a#"}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"http://x/a#frag"}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$recursiveAnchor":"x"}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$recursiveAnchor":true}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$vocabulary":{"http://x":1}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$vocabulary":{"not a uri":true}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$vocabulary":{"x":true}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","contentSchema":5}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","dependencies":{"a":["b"],"c":{"type":"string"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","items":[{"type":"string"}]}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"}],"items":false}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"$dynamicRef":"http://x y"}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"$id":"http://x/ y"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"$id":"x\\y"}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"$schema":"http://x y"}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"$schema":"relative"}}}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"x":{"$ref":"https://json-schema.org/draft/2020-12/meta/core"}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"x":{"$ref":"https://json-schema.org/draft/2020-12/meta/nope"}}}`, false},
		{`{"$schema":"https://json-schema.org/schema","prefixItems":[true]}`, true},
		{`{"$schema":"json-schema.org/draft-07/schema#"}`, false},
		{`{"definitions":{"a":{"$ref":"missing"}},"properties":{"x":{"$ref":"#/definitions/a"}}}`, false},
		{`{"definitions":{"a":{"$ref":"missing"}}}`, true},
		{`{"definitions":{"b":true},"properties":{"x":{"$ref":"#/definitions/b"}}}`, true},
		{`{"definitions":{"b":{"enum":[1,2]}},"properties":{"x":{"$ref":"#/definitions/b/enum"}}}`, false},
		{`{"definitions":{"b":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions"}}}`, true},
		{`{"dependencies":{"a":{"$ref":"missing"}}}`, false},
		{`{"enum":[{"a":1,"b":2},{"b":2,"a":1.0}]}`, false},
		{`{"examples":5}`, false},
		{`{"foo":{"$ref":"missing"}}`, true},
		{`{"minLength":1.0}`, true},
		{`{"minLength":1e2}`, true},
		{`{"multipleOf":-1}`, false},
		{`{"multipleOf":0.001}`, true},
		{`{"multipleOf":0}`, false},
		{`{"pattern":"["}`, true},
		{`{"patternProperties":{"[":{"type":"string"}}}`, true},
		{`{"properties":{"a":{"$ref":"#/definitions/x%20y"}},"definitions":{"x y":{}}}`, true},
		{`{"properties":{"a":{"$ref":"#/definitions/x~1y"}},"definitions":{"x/y":{}}}`, true},
		{`{"properties":{"a":{"$ref":"#/properties/b"},"b":{"$ref":"#/properties/a"}}}`, true},
		{`{"properties":{"x":{"$ref":"#/definitions/a"}}}`, false},
		{`{"properties":{"x":{"$ref":"#/properties/x"}}}`, true},
		{`{"properties":{"x":{"not":{"$ref":"missing"}}}}`, false},
		{`{"type":["string","string"]}`, false},
		{`{"type":[]}`, false},
	} {
		_, err := Format.Parse(c.in, nil)
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.in, err, c.ok)
		}
	}
}
