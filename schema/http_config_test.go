package schema

import (
	"net/url"
	"testing"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	check := func(method, path, body string, status int, want string) {
		t.Helper()
		r := a.do(method, path, body)
		if r.status != status || (want != "" && r.body != want) {
			t.Fatalf("%s %s: %d %s, want %d %s", method, path, r.status, r.body, status, want)
		}
		expect(t, r, status, 0)
	}
	check("GET", "/config", "", 200, `{"compatibilityLevel":"BACKWARD"}`)
	check("PUT", "/config", `{"compatibility":"full"}`, 200, `{"compatibility":"FULL"}`)
	check("GET", "/config", "", 200, `{"compatibilityLevel":"FULL"}`)
	check("GET", "/config/s", "", 404, "")
	if r := a.do("GET", "/config/s", ""); r.errCode() != CodeSubjectCompatibilityNotConfig {
		t.Fatalf("%s", r.body)
	}
	check("GET", "/config/s?defaultToGlobal=true", "", 200, `{"compatibilityLevel":"FULL"}`)
	check("PUT", "/config/s", `{"compatibility":"NONE","normalize":true}`, 200, `{"normalize":true,"compatibility":"NONE"}`)
	// Absent fields are kept, null ones cleared.
	check("PUT", "/config/s", `{"compatibilityGroup":"app"}`, 200, `{"normalize":true,"compatibility":"NONE","compatibilityGroup":"app"}`)
	check("PUT", "/config/s", `{"normalize":null}`, 200, `{"compatibility":"NONE","compatibilityGroup":"app"}`)
	check("GET", "/config/s", "", 200, `{"compatibilityLevel":"NONE","compatibilityGroup":"app"}`)
	check("DELETE", "/config/s", "", 200, `{"compatibilityLevel":"NONE","compatibilityGroup":"app"}`)
	check("DELETE", "/config/s", "", 404, "")
	check("DELETE", "/config", "", 200, `{"compatibilityLevel":"FULL"}`)
	check("GET", "/config", "", 200, `{"compatibilityLevel":"BACKWARD"}`)
	// A config without a level shows the server's default.
	check("PUT", "/config/g", `{"compatibilityGroup":"x"}`, 200, `{"compatibilityGroup":"x"}`)
	check("GET", "/config/g", "", 200, `{"compatibilityLevel":"BACKWARD","compatibilityGroup":"x"}`)
	// ":.:" is the default context: the global config.
	check("PUT", "/config/"+url.PathEscape(":.:"), `{"compatibility":"FORWARD"}`, 200, `{"compatibility":"FORWARD"}`)
	check("GET", "/config", "", 200, `{"compatibilityLevel":"FORWARD"}`)
	// A context's config applies to its subjects below their own.
	check("PUT", "/config/"+url.PathEscape(":.ctx:"), `{"compatibility":"FULL_TRANSITIVE"}`, 200, "")
	check("GET", "/config/"+url.PathEscape(":.ctx:x")+"?defaultToGlobal=true", "", 200, `{"compatibilityLevel":"FULL_TRANSITIVE"}`)

	expect(t, a.do("PUT", "/config", `{"compatibility":"SIDEWAYS"}`), 422, CodeInvalidCompatibilityLevel)
	expect(t, a.do("PUT", "/config/"+url.PathEscape("x\x7f"), `{"compatibility":"NONE"}`), 422, CodeInvalidSubject)
	expect(t, a.do("PUT", "/config", `{"defaultRuleSet":{"domainRules":[{"name":"","type":"CEL"}]}}`), 422, CodeInvalidRuleSet)
	expect(t, a.do("PUT", "/config", `{"normalize":"yes"}`), 400, 400)
}

func TestConfigLevelsApply(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	// BACKWARD (the default) refuses a reader requiring a new field.
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaABreqB)), 409, CodeIncompatibleSchema)
	// FORWARD: the old schema must read the new one's data; it requires
	// nothing, so it can.
	a.do("PUT", "/config/s", `{"compatibility":"FORWARD"}`)
	a.register("s", schemaABreqB)
	// The latest now requires b: under FORWARD it must read a new schema's
	// data, which a schema without b does not give it.
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaWith([]string{"a", "c"}, nil))), 409, CodeIncompatibleSchema)
	// FULL checks both ways and reports both directions.
	a.do("PUT", "/config/s", `{"compatibility":"FULL"}`)
	r := a.do("POST", "/compatibility/subjects/s/versions/latest?verbose=true", jsonBody("schema", schemaWith([]string{"c"}, []string{"c"})))
	var v verboseCompatibilityJSON
	r.json(t, &v)
	if v.IsCompatible || len(v.Messages) != 5 {
		t.Fatalf("FULL: %+v", v)
	}
	a.do("PUT", "/config/s", `{"compatibility":"NONE"}`)
	a.register("s", schemaWith([]string{"z"}, []string{"z"}))
	// The default-group filter: only versions with the same group value
	// take part.
	a.do("PUT", "/config/g", `{"compatibility":"BACKWARD","compatibilityGroup":"major"}`)
	md := func(v string) map[string]any { return map[string]any{"properties": map[string]string{"major": v}} }
	expect(t, a.do("POST", "/subjects/g/versions", jsonBody("schema", schemaA, "metadata", md("1"))), 200, 0)
	expect(t, a.do("POST", "/subjects/g/versions", jsonBody("schema", schemaABreqB, "metadata", md("1"))), 409, CodeIncompatibleSchema)
	expect(t, a.do("POST", "/subjects/g/versions", jsonBody("schema", schemaABreqB, "metadata", md("2"))), 200, 0)
}

func TestConfigDefaultAndOverrideMetadata(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	expect(t, a.do("PUT", "/config/s", `{"defaultMetadata":{"properties":{"owner":"default","x":"1"}},"overrideMetadata":{"properties":{"owner":"override"}}}`), 200, 0)
	r := a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA, "metadata", map[string]any{"properties": map[string]string{"x": "2"}}))
	expect(t, r, 200, 0)
	var got registerJSON
	r.json(t, &got)
	if p := got.Metadata.Properties; p["owner"] != "override" || p["x"] != "2" {
		t.Fatalf("merged metadata: %+v", p)
	}
}

func TestMode(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	check := func(method, path, body string, status int, want string) {
		t.Helper()
		r := a.do(method, path, body)
		if r.status != status || (want != "" && r.body != want) {
			t.Fatalf("%s %s: %d %s, want %d %s", method, path, r.status, r.body, status, want)
		}
	}
	check("GET", "/mode", "", 200, `{"mode":"READWRITE"}`)
	check("GET", "/mode/s", "", 404, "")
	if r := a.do("GET", "/mode/s", ""); r.errCode() != CodeSubjectModeNotConfigured {
		t.Fatal(r.body)
	}
	check("GET", "/mode/s?defaultToGlobal=true", "", 200, `{"mode":"READWRITE"}`)
	expect(t, a.do("PUT", "/mode", `{"mode":"SLEEPY"}`), 422, CodeInvalidMode)
	expect(t, a.do("PUT", "/mode", `{"mode":""}`), 422, CodeInvalidMode)
	expect(t, a.do("PUT", "/mode", `{"mode":"FORWARD"}`), 422, CodeInvalidMode)
	expect(t, a.do("PUT", "/mode/"+url.PathEscape("\x01"), `{"mode":"READONLY"}`), 422, CodeInvalidSubject)

	a.register("s", schemaA)
	check("PUT", "/mode/s", `{"mode":"READONLY"}`, 200, `{"mode":"READONLY"}`)
	check("GET", "/mode/s", "", 200, `{"mode":"READONLY"}`)
	// Read-only: registering an existing schema still answers, a new one
	// is refused, so are deletes and config changes.
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA)), 200, 0)
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaAB)), 422, CodeOperationNotPermitted)
	expect(t, a.do("DELETE", "/subjects/s/versions/1", ""), 422, CodeOperationNotPermitted)
	expect(t, a.do("DELETE", "/subjects/s", ""), 422, CodeOperationNotPermitted)
	expect(t, a.do("PUT", "/config/s", `{"compatibility":"NONE"}`), 422, CodeOperationNotPermitted)
	check("DELETE", "/mode/s", "", 200, `{"mode":"READONLY"}`)
	check("DELETE", "/mode/s", "", 404, "")
	// READONLY_OVERRIDE is read-only too.
	check("PUT", "/mode", `{"mode":"READONLY_OVERRIDE"}`, 200, "")
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaAB)), 422, CodeOperationNotPermitted)
	check("PUT", "/mode", `{"mode":"readwrite"}`, 200, `{"mode":"readwrite"}`)
	check("GET", "/mode", "", 200, `{"mode":"READWRITE"}`)
	// Deleting the global mode leaves the default.
	check("DELETE", "/mode", "", 200, `{"mode":"READWRITE"}`)
	// recursive deletes the context's subject modes too.
	a.do("PUT", "/mode/"+url.PathEscape(":.c:a"), `{"mode":"READONLY"}`)
	a.do("PUT", "/mode/"+url.PathEscape(":.c:b"), `{"mode":"READONLY"}`)
	check("DELETE", "/mode/"+url.PathEscape(":.c:")+"?recursive=true", "", 200, `{}`)
	check("GET", "/mode/"+url.PathEscape(":.c:a"), "", 404, "")
}

func TestImportMode(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	// Globally, any subject of any context blocks IMPORT.
	a.register(url.PathEscape(":.c:x"), schemaA)
	expect(t, a.do("PUT", "/mode", `{"mode":"IMPORT"}`), 422, CodeOperationNotPermitted)
	a.register("s", schemaA)
	// IMPORT needs the subjects empty, or force.
	expect(t, a.do("PUT", "/mode/s", `{"mode":"IMPORT"}`), 422, CodeOperationNotPermitted)
	expect(t, a.do("PUT", "/mode/s?force=true", `{"mode":"IMPORT"}`), 200, 0)
	// Import keeps the ids and versions given.
	r := a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaABreqB, "id", 100, "version", 7))
	expect(t, r, 200, 0)
	var got registerJSON
	r.json(t, &got)
	if got.ID != 100 || got.Version != 7 {
		t.Fatalf("imported: %+v", got)
	}
	// An id naming another schema is refused.
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaAB, "id", 100, "version", 8)), 422, CodeOperationNotPermitted)
	// Without an id, IMPORT refuses (not read-write).
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaAB)), 422, CodeOperationNotPermitted)
	expect(t, a.do("PUT", "/mode/s", `{"mode":"READWRITE"}`), 200, 0)
	// New ids continue past the imported ones.
	if id := a.register("s", schemaWith([]string{"a", "b", "c"}, []string{"b"})); id != 101 {
		t.Fatalf("next id after import: %d", id)
	}
	// A subject emptied by a soft delete: IMPORT hard-deletes what is left
	// and clears it.
	a.register("e", schemaA)
	a.do("DELETE", "/subjects/e", "")
	expect(t, a.do("PUT", "/mode/e", `{"mode":"IMPORT"}`), 200, 0)
	expect(t, a.do("GET", "/subjects/e/versions?deleted=true", ""), 404, CodeSubjectNotFound)
}
