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
