package schema

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

var (
	schemaA  = schemaWith([]string{"a"}, nil)
	schemaAB = schemaWith([]string{"a", "b"}, nil)
	// schemaABreqB requires b: it cannot read data written with schemaA.
	schemaABreqB = schemaWith([]string{"a", "b"}, []string{"b"})
)

func jsonBody(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestRegisterAndGet(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	if id := a.register("orders-value", schemaA); id != 1 {
		t.Fatalf("first id %d", id)
	}
	// The same schema again: same id and version, nothing written.
	writes := len(a.log.records())
	r := a.do("POST", "/subjects/orders-value/versions", jsonBody("schema", schemaA))
	expect(t, r, 200, 0)
	var reg struct{ ID, Version int }
	r.json(t, &reg)
	if reg.ID != 1 || reg.Version != 1 || len(a.log.records()) != writes {
		t.Fatalf("re-register: %+v, %d records (was %d)", reg, len(a.log.records()), writes)
	}
	// Another subject, same schema: same id, its own version 1.
	if id := a.register("other", schemaA); id != 1 {
		t.Fatalf("same schema under another subject: id %d", id)
	}
	// A new schema: the next id, version 2.
	if id := a.register("orders-value", schemaAB); id != 2 {
		t.Fatalf("second id %d", id)
	}
	for _, path := range []string{"/subjects/orders-value/versions/2", "/subjects/orders-value/versions/latest", "/subjects/orders-value/versions/-1"} {
		r := a.do("GET", path, "")
		expect(t, r, 200, 0)
		var got schemaJSON
		r.json(t, &got)
		if got.Subject != "orders-value" || got.Version != 2 || got.ID != 2 || got.Schema != schemaAB || got.SchemaType != "AVRO" || got.Deleted || got.TS == 0 || got.GUID == "" {
			t.Fatalf("%s: %+v", path, got)
		}
		if r.ctype != mediaV1 {
			t.Fatalf("content type %q", r.ctype)
		}
	}
	r = a.do("GET", "/subjects/orders-value/versions/1/schema", "")
	if r.status != 200 || r.body != schemaA {
		t.Fatalf("raw schema: %+v", r)
	}
	r = a.do("GET", "/subjects/orders-value/versions", "")
	if r.body != "[1,2]" {
		t.Fatalf("versions %s", r.body)
	}
	r = a.do("GET", "/subjects", "")
	if r.body != `["orders-value","other"]` {
		t.Fatalf("subjects %s", r.body)
	}
}

func TestRegisterErrors(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	cases := []struct {
		name, path, body string
		status, code     int
	}{
		{"invalid schema", "/subjects/s/versions", jsonBody("schema", "{not json"), 422, CodeInvalidSchema},
		{"empty schema, no previous", "/subjects/new/versions", jsonBody("schema", ""), 422, CodeInvalidSchema},
		{"unknown schema type", "/subjects/s/versions", jsonBody("schema", schemaA, "schemaType", "XML"), 422, CodeInvalidSchema},
		{"missing reference", "/subjects/s/versions", jsonBody("schema", `{"refs":["x"]}`, "references", []any{map[string]any{"name": "x", "subject": "nope", "version": 1}}), 422, CodeInvalidSchema},
		{"reference without version", "/subjects/s/versions", jsonBody("schema", schemaA, "references", []any{map[string]any{"name": "x", "subject": "s"}}), 422, CodeInvalidSchema},
		{"incompatible", "/subjects/s/versions", jsonBody("schema", schemaABreqB), 409, CodeIncompatibleSchema},
		{"id outside import mode", "/subjects/s/versions", jsonBody("schema", schemaAB, "id", 7), 422, CodeOperationNotPermitted},
		{"version not next", "/subjects/other/versions", jsonBody("schema", schemaA, "version", 5), 422, CodeInvalidSchema},
		{"invalid subject", "/subjects/" + url.PathEscape("bad\x01") + "/versions", jsonBody("schema", schemaA), 422, CodeInvalidSubject},
		{"reserved subject", "/subjects/__GLOBAL/versions", jsonBody("schema", schemaA), 422, CodeInvalidSubject},
		{"bad rule set", "/subjects/s/versions", jsonBody("schema", schemaAB, "ruleSet", map[string]any{"domainRules": []any{map[string]any{"name": "1bad", "type": "CEL"}}}), 422, CodeInvalidRuleSet},
		{"rule without type", "/subjects/s/versions", jsonBody("schema", schemaAB, "ruleSet", map[string]any{"domainRules": []any{map[string]any{"name": "r"}}}), 422, CodeInvalidRuleSet},
		{"migration rule mode", "/subjects/s/versions", jsonBody("schema", schemaAB, "ruleSet", map[string]any{"migrationRules": []any{map[string]any{"name": "r", "type": "JSONATA", "mode": "WRITE"}}}), 422, CodeInvalidRuleSet},
		{"unknown rule kind", "/subjects/s/versions", jsonBody("schema", schemaAB, "ruleSet", map[string]any{"domainRules": []any{map[string]any{"name": "r", "type": "CEL", "kind": "MAGIC"}}}), 400, 400},
		{"malformed JSON", "/subjects/s/versions", `{"schema":`, 400, 400},
		{"wrong JSON type", "/subjects/s/versions", `{"schema":5}`, 400, 400},
		{"no body", "/subjects/s/versions", "", 422, 422},
		{"null body", "/subjects/s/versions", "null", 422, 422},
	}
	for _, c := range cases {
		r := a.do("POST", c.path, c.body)
		t.Run(c.name, func(t *testing.T) { expect(t, r, c.status, c.code) })
	}
	r := a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaABreqB))
	if !strings.Contains(r.body, `incompatible with an earlier schema for subject \"s\", details: [{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' in the new schema has no default value and is missing in the old schema'}, {oldSchemaVersion: 1}, {oldSchema: '`) ||
		!strings.Contains(r.body, `{validateFields: 'false', compatibility: 'BACKWARD'}]`) {
		t.Fatalf("409 message: %s", r.body)
	}
}

func TestRegisterEmptySchemaReusesPrevious(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	// An empty schema with new metadata re-registers the latest schema
	// with that metadata: a new id (metadata is part of a schema's hash).
	r := a.do("POST", "/subjects/s/versions", jsonBody("schema", "", "metadata", map[string]any{"properties": map[string]string{"owner": "team-a"}}))
	expect(t, r, 200, 0)
	var got registerJSON
	r.json(t, &got)
	if got.ID != 2 || got.Version != 2 || got.Schema != schemaA || got.Metadata.Properties["owner"] != "team-a" {
		t.Fatalf("%+v", got)
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	unsorted := `{"required":[],"fields":["a"]}`
	r := a.do("POST", "/subjects/s/versions?normalize=true", jsonBody("schema", unsorted))
	expect(t, r, 200, 0)
	var got registerJSON
	r.json(t, &got)
	if got.Schema != `{"fields":["a"],"required":[]}` {
		t.Fatalf("normalized: %s", got.Schema)
	}
	// Looked up without normalize: the registry's lookup still finds it
	// (canLookup compares normalized forms).
	r = a.do("POST", "/subjects/s", jsonBody("schema", unsorted))
	expect(t, r, 200, 0)
	// A subject config with normalize=true normalizes every registration.
	expect(t, a.do("PUT", "/config/n", `{"normalize":true}`), 200, 0)
	r = a.do("POST", "/subjects/n/versions", jsonBody("schema", `{"x":1,"fields":[]}`))
	r.json(t, &got)
	if got.Schema != `{"fields":[],"x":1}` {
		t.Fatalf("config normalize: %s", got.Schema)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	a.register("s", schemaAB)
	r := a.do("POST", "/subjects/s", jsonBody("schema", schemaA))
	expect(t, r, 200, 0)
	var got schemaJSON
	r.json(t, &got)
	if got.Version != 1 || got.ID != 1 || got.Subject != "s" {
		t.Fatalf("%+v", got)
	}
	expect(t, a.do("POST", "/subjects/s", jsonBody("schema", `{"fields":["z"]}`)), 404, CodeSchemaNotFound)
	expect(t, a.do("POST", "/subjects/nope", jsonBody("schema", schemaA)), 404, CodeSubjectNotFound)
	expect(t, a.do("POST", "/subjects/s", jsonBody("schema", "{")), 422, CodeInvalidSchema)
	// Deleted versions are found only with deleted=true.
	expect(t, a.do("DELETE", "/subjects/s/versions/1", ""), 200, 0)
	expect(t, a.do("POST", "/subjects/s", jsonBody("schema", schemaA)), 404, CodeSchemaNotFound)
	expect(t, a.do("POST", "/subjects/s?deleted=true", jsonBody("schema", schemaA)), 200, 0)
	// format renders the answer.
	r = a.do("POST", "/subjects/s?format=upper", jsonBody("schema", schemaAB))
	r.json(t, &got)
	if got.Schema != strings.ToUpper(schemaAB) {
		t.Fatalf("format: %s", got.Schema)
	}
	expect(t, a.do("POST", "/subjects/s?format=nope", jsonBody("schema", schemaAB)), 400, 400)
}

func TestSoftAndPermanentDelete(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	a.register("s", schemaAB)
	a.register("t", schemaA)

	expect(t, a.do("DELETE", "/subjects/s/versions/2?permanent=true", ""), 404, CodeVersionNotSoftDeleted)
	r := a.do("DELETE", "/subjects/s/versions/2", "")
	if r.status != 200 || r.body != "2" {
		t.Fatalf("soft delete: %+v", r)
	}
	expect(t, a.do("DELETE", "/subjects/s/versions/2", ""), 404, CodeVersionSoftDeleted)
	expect(t, a.do("GET", "/subjects/s/versions/2", ""), 404, CodeVersionNotFound)
	expect(t, a.do("GET", "/subjects/s/versions/2?deleted=true", ""), 200, 0)
	// The id stays readable.
	expect(t, a.do("GET", "/schemas/ids/2", ""), 200, 0)
	for q, want := range map[string]string{"": "[1]", "?deleted=true": "[1,2]", "?deletedOnly=true": "[2]", "?deletedAsNegative=true": "[1,-2]"} {
		if r := a.do("GET", "/subjects/s/versions"+q, ""); r.body != want {
			t.Fatalf("versions%s: %s, want %s", q, r.body, want)
		}
	}
	expect(t, a.do("DELETE", "/subjects/s/versions/2?permanent=true", ""), 200, 0)
	expect(t, a.do("GET", "/subjects/s/versions/2?deleted=true", ""), 404, CodeVersionNotFound)
	expect(t, a.do("DELETE", "/subjects/s/versions/9", ""), 404, CodeVersionNotFound)
	expect(t, a.do("DELETE", "/subjects/nope/versions/1", ""), 404, CodeSubjectNotFound)
	expect(t, a.do("DELETE", "/subjects/s/versions/zero", ""), 422, CodeInvalidVersion)

	// Subject delete: soft, then permanent.
	expect(t, a.do("DELETE", "/subjects/t?permanent=true", ""), 404, CodeSubjectNotSoftDeleted)
	r = a.do("DELETE", "/subjects/t", "")
	if r.status != 200 || r.body != "[1]" {
		t.Fatalf("subject delete: %+v", r)
	}
	expect(t, a.do("DELETE", "/subjects/t", ""), 404, CodeSubjectSoftDeleted)
	expect(t, a.do("GET", "/subjects/t/versions", ""), 404, CodeSubjectNotFound)
	if r := a.do("GET", "/subjects?deleted=true", ""); r.body != `["s","t"]` {
		t.Fatalf("subjects deleted=true: %s", r.body)
	}
	if r := a.do("GET", "/subjects?deletedOnly=true", ""); r.body != `["t"]` {
		t.Fatalf("subjects deletedOnly=true: %s", r.body)
	}
	r = a.do("DELETE", "/subjects/t?permanent=true", "")
	if r.status != 200 || r.body != "[1]" {
		t.Fatalf("permanent subject delete: %+v", r)
	}
	expect(t, a.do("DELETE", "/subjects/t", ""), 404, CodeSubjectNotFound)
	if r := a.do("GET", "/subjects?deleted=true", ""); r.body != `["s"]` {
		t.Fatalf("subjects after permanent delete: %s", r.body)
	}
	// Re-registering a soft-deleted schema gives it back its id.
	a.register("u", schemaAB)
	expect(t, a.do("DELETE", "/subjects/u", ""), 200, 0)
	if id := a.register("u", schemaAB); id != 3 {
		t.Fatalf("re-registered after soft delete: id %d", id)
	}
}

func TestReferences(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	base := a.register("base", schemaA)
	refs := []any{map[string]any{"name": "base.json", "subject": "base", "version": 1}}
	user := `{"fields":["u"],"refs":["base.json"]}`
	r := a.do("POST", "/subjects/user/versions", jsonBody("schema", user, "references", refs, "schemaType", "JSON"))
	expect(t, r, 200, 0)
	var got registerJSON
	r.json(t, &got)
	// A reference across formats (JSON referring to AVRO) resolves too.
	if int(got.ID) == base || len(got.References) != 1 || got.References[0] != (Reference{"base.json", "base", 1}) {
		t.Fatalf("%+v", got)
	}
	if r := a.do("GET", "/subjects/base/versions/1/referencedby", ""); r.body != fmt.Sprintf("[%d]", got.ID) {
		t.Fatalf("referencedby %s", r.body)
	}
	expect(t, a.do("GET", "/subjects/base/versions/7/referencedby", ""), 404, CodeVersionNotFound)
	expect(t, a.do("GET", "/subjects/none/versions/1/referencedby", ""), 404, CodeSubjectNotFound)
	// Deleting what is referenced is refused, soft or permanent.
	expect(t, a.do("DELETE", "/subjects/base/versions/1", ""), 422, CodeReferenceExists)
	expect(t, a.do("DELETE", "/subjects/base", ""), 422, CodeReferenceExists)
	// Once the referrer is soft-deleted a soft delete goes through, a
	// permanent one still not.
	expect(t, a.do("DELETE", "/subjects/user", ""), 200, 0)
	expect(t, a.do("DELETE", "/subjects/base", ""), 200, 0)
	expect(t, a.do("DELETE", "/subjects/base?permanent=true", ""), 422, CodeReferenceExists)
	if r := a.do("GET", "/subjects/base/versions/1/referencedby", ""); r.body != "[]" {
		t.Fatalf("referencedby without deleted: %s", r.body)
	}
	if r := a.do("GET", "/subjects/base/versions/1/referencedby?deleted=true", ""); r.body != fmt.Sprintf("[%d]", got.ID) {
		t.Fatalf("referencedby deleted=true: %s", r.body)
	}
	expect(t, a.do("DELETE", "/subjects/user?permanent=true", ""), 200, 0)
	expect(t, a.do("DELETE", "/subjects/base?permanent=true", ""), 200, 0)
	// Version -1 in a reference is the latest, stored as its number.
	a.register("base2", schemaA)
	r = a.do("POST", "/subjects/user2/versions", jsonBody("schema", user, "references", []any{map[string]any{"name": "base.json", "subject": "base2", "version": -1}}))
	r.json(t, &got)
	if got.References[0].Version != 1 {
		t.Fatalf("latest reference: %+v", got.References)
	}
}

func TestSubjectPrefixAndPaging(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	for _, s := range []string{"a1", "a2", "b1", ":.ctx:a3"} {
		a.register(url.PathEscape(s), schemaA)
	}
	cases := map[string]string{
		"/subjects":                              `[":.ctx:a3","a1","a2","b1"]`,
		"/subjects?subjectPrefix=a":              `["a1","a2"]`,
		"/subjects?subjectPrefix=:.ctx:":         `[":.ctx:a3"]`,
		"/subjects?subjectPrefix=:*:a":           `[":.ctx:a3","a1","a2"]`,
		"/subjects?offset=1&limit=2":             `["a1","a2"]`,
		"/subjects?limit=0":                      `[":.ctx:a3","a1","a2","b1"]`,
		"/subjects?offset=10":                    `[]`,
		"/subjects/a1/versions?offset=0&limit=1": `[1]`,
	}
	for path, want := range cases {
		if r := a.do("GET", path, ""); r.status != 200 || r.body != want {
			t.Errorf("%s: %d %s, want %s", path, r.status, r.body, want)
		}
	}
	expect(t, a.do("GET", "/subjects?offset=x", ""), 404, 404)
}

func TestLatestWithMetadata(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	md := func(v string) map[string]any { return map[string]any{"properties": map[string]string{"app": v}} }
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA, "metadata", md("1"))), 200, 0)
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaAB, "metadata", md("2"))), 200, 0)
	r := a.do("GET", "/subjects/s/metadata?key=app&value=1", "")
	expect(t, r, 200, 0)
	var got schemaJSON
	r.json(t, &got)
	if got.Version != 1 || got.Metadata.Properties["app"] != "1" {
		t.Fatalf("%+v", got)
	}
	expect(t, a.do("GET", "/subjects/s/metadata?key=app&value=3", ""), 404, CodeSchemaNotFound)
	expect(t, a.do("GET", "/subjects/none/metadata?key=app&value=1", ""), 404, CodeSubjectNotFound)
}

func TestMetadataAndRulesKept(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	rules := map[string]any{"domainRules": []any{map[string]any{"name": "checkLen", "kind": "CONDITION", "type": "CEL", "mode": "WRITE", "expr": "size(message.name) < 10", "tags": []string{"b", "a", "a"}}}}
	md := map[string]any{"tags": map[string][]string{"f": {"z", "y"}}, "properties": map[string]string{"owner": "x"}, "sensitive": []string{"s2", "s1"}}
	r := a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA, "metadata", md, "ruleSet", rules))
	expect(t, r, 200, 0)
	r = a.do("GET", "/subjects/s/versions/1", "")
	var got schemaJSON
	r.json(t, &got)
	wantRule := Rule{Name: "checkLen", Kind: "CONDITION", Mode: "WRITE", Type: "CEL", Expr: "size(message.name) < 10", Tags: []string{"a", "b"}}
	if !reflect.DeepEqual(got.RuleSet.DomainRules, []Rule{wantRule}) || !reflect.DeepEqual(got.Metadata.Tags["f"], []string{"y", "z"}) || !reflect.DeepEqual(got.Metadata.Sensitive, []string{"s1", "s2"}) {
		t.Fatalf("%+v %+v", got.RuleSet, got.Metadata)
	}
	// A new schema without metadata or rules inherits the previous ones.
	r = a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaAB))
	var reg registerJSON
	r.json(t, &reg)
	if reg.RuleSet == nil || reg.Metadata == nil || reg.Metadata.Properties["owner"] != "x" {
		t.Fatalf("inherited: %+v", reg)
	}
}

func TestContextQualifiedSubjects(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	// Each context has its own ids.
	if id := a.register(url.PathEscape(":.prod:orders"), schemaA); id != 1 {
		t.Fatalf("id in .prod: %d", id)
	}
	if id := a.register("orders", schemaAB); id != 1 {
		t.Fatalf("id in default context: %d", id)
	}
	if r := a.do("GET", "/contexts", ""); r.body != `[".",".prod"]` {
		t.Fatalf("contexts %s", r.body)
	}
	var got schemaJSON
	a.do("GET", "/subjects/"+url.PathEscape(":.prod:orders")+"/versions/1", "").json(t, &got)
	if got.Schema != schemaA || got.Subject != ":.prod:orders" {
		t.Fatalf("%+v", got)
	}
	// An unqualified subject missing from the default context is looked
	// for in the others.
	a.register(url.PathEscape(":.prod:only"), schemaA)
	expect(t, a.do("GET", "/subjects/only/versions/1", ""), 200, 0)
	// ids by context.
	var s schemaStringJSON
	a.do("GET", "/schemas/ids/1?subject="+url.QueryEscape(":.prod:"), "").json(t, &s)
	if s.Schema != schemaA {
		t.Fatalf("id 1 in .prod: %+v", s)
	}
	a.do("GET", "/schemas/ids/1", "").json(t, &s)
	if s.Schema != schemaAB {
		t.Fatalf("id 1 in the default context: %+v", s)
	}
	// The ":.:" prefix is the default context.
	if r := a.do("GET", "/subjects/"+url.PathEscape(":.:orders")+"/versions", ""); r.body != "[1]" {
		t.Fatalf(":.:orders: %s", r.body)
	}
	// A non-empty context cannot be deleted; an empty one can.
	expect(t, a.do("DELETE", "/contexts/.prod", ""), 422, CodeContextNotEmpty)
	a.do("DELETE", "/subjects/"+url.PathEscape(":.prod:orders"), "")
	a.do("DELETE", "/subjects/"+url.PathEscape(":.prod:orders")+"?permanent=true", "")
	a.do("DELETE", "/subjects/"+url.PathEscape(":.prod:only"), "")
	a.do("DELETE", "/subjects/"+url.PathEscape(":.prod:only")+"?permanent=true", "")
	expect(t, a.do("DELETE", "/contexts/"+url.PathEscape(":.prod:"), ""), 204, 0)
	if r := a.do("GET", "/contexts", ""); r.body != `["."]` {
		t.Fatalf("contexts after delete %s", r.body)
	}
}

// TestReferencesInContext: an unqualified reference resolves in the
// referrer's context, and referenceFormat=qualified shows it qualified.
func TestReferencesInContext(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register(url.PathEscape(":.c:base"), schemaA)
	refs := []any{map[string]any{"name": "b", "subject": "base", "version": 1}}
	r := a.do("POST", "/subjects/"+url.PathEscape(":.c:user")+"/versions", jsonBody("schema", `{"refs":["b"]}`, "references", refs))
	expect(t, r, 200, 0)
	var got schemaJSON
	a.do("GET", "/subjects/"+url.PathEscape(":.c:user")+"/versions/1", "").json(t, &got)
	if got.References[0].Subject != "base" {
		t.Fatalf("stored reference: %+v", got.References)
	}
	a.do("GET", "/subjects/"+url.PathEscape(":.c:user")+"/versions/1?referenceFormat=qualified", "").json(t, &got)
	if got.References[0].Subject != ":.c:base" {
		t.Fatalf("qualified reference: %+v", got.References)
	}
	if r := a.do("GET", "/subjects/"+url.PathEscape(":.c:base")+"/versions/1/referencedby", ""); r.body != "[2]" {
		t.Fatalf("referencedby in the context: %s", r.body)
	}
	// The same unqualified reference from the default context finds no
	// "base" there.
	expect(t, a.do("POST", "/subjects/user/versions", jsonBody("schema", `{"refs":["b"]}`, "references", refs)), 422, CodeInvalidSchema)
}
