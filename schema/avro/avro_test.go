package avro

import (
	"strings"
	"testing"

	"sharq/schema"
)

// Canonical and normalized forms. Sources: Confluent's AvroSchemaTest
// (testNormalization, testNormalizationPreservesMetadataForPrimitiveTypes),
// Avro's Schema.toString layout (type, name, namespace, doc, fields, props,
// aliases; fields name, type, doc, default, order, aliases, props).
func TestCanonicalAndNormalized(t *testing.T) {
	cases := []struct {
		name, in, canonical, normalized string
	}{
		{
			name:      "Confluent testNormalization",
			in:        `{"type":"record","name":"myrecord","doc":"hi\"there","fields":[{"type":"string","name":"f1","doc":"bye\"now"}]}`,
			canonical: `{"type":"record","name":"myrecord","doc":"hi\"there","fields":[{"name":"f1","type":"string","doc":"bye\"now"}]}`,
		},
		{
			name: "Confluent testNormalizationPreservesMetadataForPrimitiveTypes",
			in: `{"connect.name": "some.scope.Envelope","fields": [{"default": null,"name": "before","type": ["null",
				{"connect.name": "some.scope.Value","fields": [{"name": "created_at","type": {"connect.name": "io.debezium.time.Timestamp","connect.version": 1,"type": "long"}},
				{"name":"normal_long","type":"long"}],"name": "Value","type": "record"}]},
				{"default": null,"name": "after","type": ["null","Value"]}],"name": "Envelope","namespace": "some.scope","type": "record"}`,
			canonical: `{"type":"record","name":"Envelope","namespace":"some.scope","fields":[{"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"created_at","type":{"type":"long","connect.name":"io.debezium.time.Timestamp","connect.version":1}},{"name":"normal_long","type":"long"}],"connect.name":"some.scope.Value"}],"default":null},{"name":"after","type":["null","Value"],"default":null}],"connect.name":"some.scope.Envelope"}`,
		},
		{
			name:      "primitive in an object prints as its name",
			in:        `{"type":"string"}`,
			canonical: `"string"`,
		},
		{
			name:      "primitive with a property keeps the object",
			in:        `{"type":"string","logicalType":"uuid"}`,
			canonical: `{"type":"string","logicalType":"uuid"}`,
		},
		{
			name:      "nested namespaces are written where they change, an empty one inside a namespace as \"\"",
			in:        `{"type":"record","name":"a.b.R","fields":[{"name":"x","type":{"type":"record","name":"S","fields":[]}},{"name":"y","type":{"type":"record","name":"T","namespace":"c","fields":[]}},{"name":"z","type":{"type":"record","name":"U","namespace":"","fields":[]}},{"name":"w","type":"a.b.S"}]}`,
			canonical: `{"type":"record","name":"R","namespace":"a.b","fields":[{"name":"x","type":{"type":"record","name":"S","fields":[]}},{"name":"y","type":{"type":"record","name":"T","namespace":"c","fields":[]}},{"name":"z","type":{"type":"record","name":"U","namespace":"","fields":[]}},{"name":"w","type":"S"}]}`,
			// Confluent's normalized text names U by its full name "U",
			// which the parser then puts in the enclosing namespace: the
			// normalized schema's U is a.b.U, as in Confluent's.
			normalized: `{"type":"record","name":"R","namespace":"a.b","fields":[{"name":"x","type":{"type":"record","name":"S","fields":[]}},{"name":"y","type":{"type":"record","name":"T","namespace":"c","fields":[]}},{"name":"z","type":{"type":"record","name":"U","fields":[]}},{"name":"w","type":"S"}]}`,
		},
		{
			name:       "properties keep their order, normalize sorts them",
			in:         `{"type":"record","name":"R","zeta":1,"fields":[{"name":"f","type":"int","b":2,"a":{"y":1,"x":2}}],"alpha":[3]}`,
			canonical:  `{"type":"record","name":"R","fields":[{"name":"f","type":"int","b":2,"a":{"y":1,"x":2}}],"zeta":1,"alpha":[3]}`,
			normalized: `{"type":"record","name":"R","fields":[{"name":"f","type":"int","a":{"x":2,"y":1},"b":2}],"alpha":[3],"zeta":1}`,
		},
		{
			name:       "normalize sorts aliases, qualifies names, drops an empty doc",
			in:         `{"type":"record","name":"R","namespace":"n","doc":"","aliases":["Z","a.B"],"fields":[{"name":"f","type":"int","aliases":["y","x"],"doc":""}]}`,
			canonical:  `{"type":"record","name":"R","namespace":"n","doc":"","fields":[{"name":"f","type":"int","doc":"","aliases":["y","x"]}],"aliases":["Z","a.B"]}`,
			normalized: `{"type":"record","name":"R","namespace":"n","fields":[{"name":"f","type":"int","doc":"","aliases":["x","y"]}],"aliases":["a.B","Z"]}`,
		},
		{
			name:       "normalize converts defaults to the field's type",
			in:         `{"type":"record","name":"R","fields":[{"name":"d","type":"double","default":1},{"name":"f","type":"float","default":0.1},{"name":"l","type":"long","default":5},{"name":"u","type":["null","int"],"default":null},{"name":"s","type":"double","default":"2.5"}]}`,
			canonical:  `{"type":"record","name":"R","fields":[{"name":"d","type":"double","default":1},{"name":"f","type":"float","default":0.1},{"name":"l","type":"long","default":5},{"name":"u","type":["null","int"],"default":null},{"name":"s","type":"double","default":2.5}]}`,
			normalized: `{"type":"record","name":"R","fields":[{"name":"d","type":"double","default":1.0},{"name":"f","type":"float","default":0.1},{"name":"l","type":"long","default":5},{"name":"u","type":["null","int"],"default":null},{"name":"s","type":"double","default":2.5}]}`,
		},
		{
			name:       "error records, field order and enum defaults",
			in:         `{"type":"error","name":"E","fields":[{"name":"k","type":{"type":"enum","name":"K","symbols":["A","B"],"default":"B"},"order":"descending"}]}`,
			canonical:  `{"type":"error","name":"E","fields":[{"name":"k","type":{"type":"enum","name":"K","symbols":["A","B"],"default":"B"},"order":"descending"}]}`,
			normalized: `{"type":"record","name":"E","fields":[{"name":"k","type":{"type":"enum","name":"K","symbols":["A","B"],"default":"B"},"order":"descending"}]}`,
		},
		{
			name:      "fixed, map and union",
			in:        `{"type":"map","values":[{"type":"fixed","name":"F","size":16,"logicalType":"uuid"},"null"]}`,
			canonical: `{"type":"map","values":[{"type":"fixed","name":"F","size":16,"logicalType":"uuid"},"null"]}`,
		},
		{
			name:       "a valid decimal's logical properties come first after normalizing",
			in:         `{"type":"bytes","scale":2,"connect.name":"x","precision":5,"logicalType":"decimal"}`,
			canonical:  `{"type":"bytes","scale":2,"connect.name":"x","precision":5,"logicalType":"decimal"}`,
			normalized: `{"type":"bytes","logicalType":"decimal","precision":5,"scale":2,"connect.name":"x"}`,
		},
		{
			name:      "Jackson's escapes and comments",
			in:        "/* c */ {\"type\":\"record\",\"name\":\"R\",\"doc\":\"a/b <\\u00e9>\\u0001\",\"fields\":[]} // end",
			canonical: `{"type":"record","name":"R","doc":"a/b <é>\u0001","fields":[]}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Format.Parse(c.in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Canonical(); got != c.canonical {
				t.Errorf("canonical\n got %s\nwant %s", got, c.canonical)
			}
			want := c.normalized
			if want == "" {
				want = c.canonical
			}
			n := p.Normalized()
			if got := n.Canonical(); got != want {
				t.Errorf("normalized\n got %s\nwant %s", got, want)
			}
			// Normalizing is idempotent and the canonical form parses to itself.
			if again := n.Normalized().Canonical(); again != want {
				t.Errorf("normalizing twice gives %s", again)
			}
			q, err := Format.Parse(p.Canonical(), nil)
			if err != nil || q.Canonical() != p.Canonical() {
				t.Errorf("canonical does not parse to itself: %v %v", err, q)
			}
		})
	}
}

// Errors. Sources: Avro 1.12 Schema.parse and ParseContext messages;
// Confluent AvroSchemaValidateNamesTest (strict names for new schemas, UTF
// names but lax namespaces for stored ones), AvroSchemaTest
// testNonAsciiUtf8NamesAccepted, AvroCompatibilityTest.testBadDefaultNull.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, in    string
		strictErr   string // "" accepted by Parse
		storedErr   string // "" accepted by ParseStored
		stored      bool   // check ParseStored
		storedFails bool
	}{
		{name: "not JSON", in: `{"type":`, strictErr: "invalid JSON", storedErr: "invalid JSON"},
		{name: "trailing content", in: `"int" "long"`, strictErr: "invalid JSON", storedErr: "invalid JSON"},
		{name: "no type", in: `{"name":"x"}`, strictErr: `No type: {"name":"x"}`, storedErr: "No type"},
		{name: "type not a string", in: `{"type":{"type":"int"}}`, strictErr: "No type", storedErr: "No type"},
		{name: "a number", in: `5`, strictErr: "Schema not yet supported: 5", storedErr: "Schema not yet supported"},
		{name: "undefined name", in: `{"type":"record","name":"R","fields":[{"name":"f","type":"Missing"}]}`, strictErr: "Undefined schema: Missing", storedErr: "Undefined schema: Missing"},
		{name: "undefined name in namespace", in: `{"type":"record","name":"a.R","fields":[{"name":"f","type":"Missing"}]}`, strictErr: "Undefined schema: a.Missing", storedErr: "Undefined schema"},
		{name: "record without fields", in: `{"type":"record","name":"R"}`, strictErr: "Record has no fields", storedErr: "Record has no fields"},
		{name: "duplicate field", in: `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"long"}]}`, strictErr: "Duplicate field a in record R: a type:LONG pos:1 and a type:INT pos:0.", storedErr: "Duplicate field"},
		{name: "redefined name", in: `["null",{"type":"record","name":"R","fields":[]},{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}]`, strictErr: "Can't redefine: R", storedErr: "Can't redefine"},
		{name: "identical redefinition then duplicate in union", in: `[{"type":"record","name":"R","fields":[]},{"type":"record","name":"R","fields":[]}]`, strictErr: "Duplicate in union:R", storedErr: "Duplicate in union"},
		{name: "nested union", in: `["null",["int"]]`, strictErr: "Nested union", storedErr: "Nested union"},
		{name: "duplicate primitive in union", in: `["int","int"]`, strictErr: "Duplicate in union:int", storedErr: "Duplicate in union"},
		{name: "named after a primitive", in: `{"type":"fixed","name":"int","size":1}`, strictErr: "Schemas may not be named after primitives: int", storedErr: "named after primitives"},
		{name: "enum default not a symbol", in: `{"type":"enum","name":"E","symbols":["A"],"default":"B"}`, strictErr: "The Enum Default: B is not in the enum symbol set: [A]", storedErr: "Enum Default"},
		{name: "duplicate enum symbol", in: `{"type":"enum","name":"E","symbols":["A","A"]}`, strictErr: "Duplicate enum symbol: A", storedErr: "Duplicate enum symbol"},
		{name: "fixed without a size", in: `{"type":"fixed","name":"F","size":"4"}`, strictErr: "Invalid or no size", storedErr: "Invalid or no size"},
		{name: "negative fixed size", in: `{"type":"fixed","name":"F","size":-1}`, strictErr: "Length is negative", storedErr: "Length is negative"},
		{name: "bad field order", in: `{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"up"}]}`, strictErr: "No enum constant org.apache.avro.Schema.Field.Order.UP", storedErr: "No enum constant"},
		{name: "aliases not an array", in: `{"type":"record","name":"R","aliases":"x","fields":[]}`, strictErr: "aliases not an array", storedErr: "aliases not an array"},
		{name: "invalid default is rejected only for a new schema", in: `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}`, strictErr: `Invalid default for field a: "x" not a "int"`},
		{name: "Confluent testBadDefaultNull: a string default in a null-first union is valid in Avro 1.12", in: `{"type":"record","name":"myrecord","fields":[{"type":["null","string"],"name":"f1","default":"null"}]}`},
		{name: "union default may match a later branch", in: `{"type":"record","name":"R","fields":[{"name":"a","type":["null","int"],"default":3}]}`},
		{name: "record default missing a field without default", in: `{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]},"default":{}}]}`, strictErr: "Invalid default for field a"},
		{name: "long default out of range", in: `{"type":"record","name":"R","fields":[{"name":"a","type":"long","default":9223372036854775808}]}`, strictErr: "Invalid default for field a"},
		{name: "textual double default that is not a number", in: `{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":"abc"}]}`, strictErr: `For input string: "abc"`, storedErr: "For input string"},
		{name: "lax namespace only for stored schemas", in: `{"type":"record","name":"MyRec","namespace":"foo-bar.x","fields":[{"name":"f","type":"string"}]}`, strictErr: `Namespace part "foo-bar" is invalid: Illegal character in: foo-bar`},
		{name: "lax namespace in the full name", in: `{"type":"record","name":"foo-bar.x.MyRec","fields":[{"name":"f","type":"string"}]}`, strictErr: "Illegal character in: foo-bar"},
		{name: "bad record name", in: `{"type":"record","name":"bad-name","fields":[{"name":"f","type":"string"}]}`, strictErr: "Illegal character in: bad-name", storedErr: "Illegal character in: bad-name"},
		{name: "bad field name", in: `{"type":"record","name":"MyRec","fields":[{"name":"bad-field","type":"string"}]}`, strictErr: "Illegal character in: bad-field", storedErr: "Illegal character in: bad-field"},
		{name: "bad enum symbol", in: `{"type":"record","name":"MyRec","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["OK","BAD-ONE"]}}]}`, strictErr: "Illegal character in: BAD-ONE", storedErr: "Illegal character in: BAD-ONE"},
		{name: "bad nested record name", in: `{"type":"record","name":"Outer","fields":[{"name":"inner","type":{"type":"record","name":"bad-inner","fields":[{"name":"x","type":"int"}]}}]}`, strictErr: "Illegal character in: bad-inner", storedErr: "Illegal character in: bad-inner"},
		{name: "bad fixed name", in: `{"type":"record","name":"MyRec","fields":[{"name":"f","type":{"type":"fixed","name":"bad-fixed","size":4}}]}`, strictErr: "Illegal character in: bad-fixed", storedErr: "bad-fixed"},
		{name: "name starting with a digit", in: `{"type":"record","name":"1R","fields":[]}`, strictErr: "Illegal initial character: 1R", storedErr: "Illegal initial character: 1R"},
		{name: "non-ASCII names only for stored schemas", in: `{"type":"record","name":"Café","namespace":"a.b","fields":[{"name":"naïve","type":"string"},{"name":"e","type":{"type":"enum","name":"Σ","symbols":["Α","Β"]}}]}`, strictErr: "Illegal character in: Café"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(what string, p schema.Parsed, err error, want string) {
				switch {
				case want == "" && err != nil:
					t.Errorf("%s rejected: %v", what, err)
				case want != "" && err == nil:
					t.Errorf("%s accepted: %s", what, p.Canonical())
				case want != "" && !strings.Contains(err.Error(), want):
					t.Errorf("%s error %q, want it to contain %q", what, err, want)
				}
			}
			p, err := Format.Parse(c.in, nil)
			check("Parse", p, err, c.strictErr)
			p, err = Format.(schema.StoredParser).ParseStored(c.in, nil)
			check("ParseStored", p, err, c.storedErr)
		})
	}
}

// References: Confluent resolves a schema's references into Avro's parser
// before the schema, so their named types are known; the canonical form
// names them (Schema.toString with the references' schemas), the
// "resolved" format defines them. Source: Confluent AvroSchema
// canonicalString and formattedString(RESOLVED); docs "Schema references".
func TestReferences(t *testing.T) {
	refs := []schema.ResolvedReference{
		{Name: "io.x.Money", Type: "AVRO", Schema: `{"type":"record","name":"Money","namespace":"io.x","fields":[{"name":"cents","type":"long"},{"name":"cur","type":"io.x.Currency"}]}`,
			References: []schema.ResolvedReference{
				{Name: "io.x.Currency", Type: "AVRO", Schema: `{"type":"enum","name":"Currency","namespace":"io.x","symbols":["EUR","USD"]}`},
			}},
	}
	in := `{"type":"record","name":"Order","namespace":"io.x","fields":[{"name":"total","type":"Money"},{"name":"fee","type":["null","io.x.Money"],"default":null},{"name":"c","type":"Currency"}]}`
	p, err := Format.Parse(in, refs)
	if err != nil {
		t.Fatal(err)
	}
	const canonical = `{"type":"record","name":"Order","namespace":"io.x","fields":[{"name":"total","type":"Money"},{"name":"fee","type":["null","Money"],"default":null},{"name":"c","type":"Currency"}]}`
	if got := p.Canonical(); got != canonical {
		t.Errorf("canonical\n got %s\nwant %s", got, canonical)
	}
	const resolved = `{"type":"record","name":"Order","namespace":"io.x","fields":[{"name":"total","type":{"type":"record","name":"Money","fields":[{"name":"cents","type":"long"},{"name":"cur","type":{"type":"enum","name":"Currency","symbols":["EUR","USD"]}}]}},{"name":"fee","type":["null","Money"],"default":null},{"name":"c","type":"Currency"}]}`
	if got, err := p.Formatted("resolved"); err != nil || got != resolved {
		t.Errorf("resolved\n got %s (%v)\nwant %s", got, err, resolved)
	}
	if got, _ := p.Formatted(""); got != canonical {
		t.Errorf("default format %s", got)
	}
	if _, err := p.Formatted("serialized"); err == nil {
		t.Error("an unknown format is not an error")
	}
	if got := p.Normalized().Canonical(); got != canonical {
		t.Errorf("normalized\n got %s\nwant %s", got, canonical)
	}
	// Without its reference the schema does not parse.
	if _, err := Format.Parse(in, nil); err == nil || !strings.Contains(err.Error(), "Undefined schema: io.x.Money") {
		t.Errorf("without references: %v", err)
	}
	// A broken reference is reported with its name.
	bad := []schema.ResolvedReference{{Name: "bad.avsc", Type: "AVRO", Schema: `{"type":"nope"}`}}
	if _, err := Format.Parse(`"int"`, bad); err == nil || !strings.Contains(err.Error(), "reference bad.avsc") {
		t.Errorf("bad reference: %v", err)
	}
	// The same schema registered with its types inline parses too, and is
	// a different canonical string (Confluent compares canonical strings).
	q, err := Format.Parse(resolved, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Canonical() == p.Canonical() {
		t.Error("inline and referenced forms share a canonical string")
	}
	if msgs := q.BackwardCompatible(p); len(msgs) != 0 {
		t.Errorf("inline form cannot read the referenced one: %v", msgs)
	}
}

func TestDifferentType(t *testing.T) {
	p, _ := Format.Parse(`"int"`, nil)
	msgs := p.BackwardCompatible(otherParsed{})
	if len(msgs) != 1 || msgs[0] != "Incompatible because of different schema type" {
		t.Fatalf("got %v", msgs)
	}
}

type otherParsed struct{ schema.Parsed }
