package schema

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCompatibilityEndpoints(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaWith([]string{"a", "b"}, nil))
	a.do("PUT", "/config/s", `{"compatibility":"NONE"}`)
	a.register("s", schemaWith([]string{"a"}, nil))
	a.do("PUT", "/config/s", `{"compatibility":"BACKWARD"}`)
	reqB := jsonBody("schema", schemaWith([]string{"a", "b"}, []string{"b"}))
	cases := []struct {
		path, body string
		want       string
	}{
		// Against version 1 (which has b) a reader requiring b is fine,
		// against the latest (without b) it is not.
		{"/compatibility/subjects/s/versions/1", reqB, `{"is_compatible":true}`},
		{"/compatibility/subjects/s/versions/latest", reqB, `{"is_compatible":false}`},
		// Against all versions: BACKWARD checks the latest only.
		{"/compatibility/subjects/s/versions", reqB, `{"is_compatible":false}`},
		{"/compatibility/subjects/s/versions/1?verbose=true", reqB, `{"is_compatible":true,"messages":[]}`},
		// A subject with no versions: nothing to be incompatible with.
		{"/compatibility/subjects/none/versions/latest", reqB, `{"is_compatible":true}`},
		{"/compatibility/subjects/none/versions", reqB, `{"is_compatible":true}`},
		// Verbose turns an invalid schema into a reason.
		{"/compatibility/subjects/s/versions/latest?verbose=true", jsonBody("schema", "{"), `{"is_compatible":false,"messages":["Invalid schema of type AVRO, details: invalid JSON: unexpected end of JSON input"]}`},
	}
	for _, c := range cases {
		r := a.do("POST", c.path, c.body)
		if r.status != 200 || r.body != c.want {
			t.Errorf("%s: %d %s, want %s", c.path, r.status, r.body, c.want)
		}
	}
	// Transitive levels check every version.
	a.do("PUT", "/config/s", `{"compatibility":"BACKWARD_TRANSITIVE"}`)
	if r := a.do("POST", "/compatibility/subjects/s/versions", jsonBody("schema", schemaWith([]string{"a"}, []string{"a"}))); r.body != `{"is_compatible":true}` {
		t.Fatalf("transitive ok: %s", r.body)
	}
	if r := a.do("POST", "/compatibility/subjects/s/versions?verbose=true", reqB); !strings.Contains(r.body, `"is_compatible":false`) || !strings.Contains(r.body, "{oldSchemaVersion: 2}") {
		t.Fatalf("transitive: %s", r.body)
	}
	expect(t, a.do("POST", "/compatibility/subjects/s/versions/9", reqB), 404, CodeVersionNotFound)
	expect(t, a.do("POST", "/compatibility/subjects/s/versions/abc", reqB), 422, CodeInvalidVersion)
	expect(t, a.do("POST", "/compatibility/subjects/s/versions/latest", jsonBody("schema", "{")), 422, CodeInvalidSchema)
	// Another schema type is incompatible.
	r := a.do("POST", "/compatibility/subjects/s/versions/latest?verbose=true", jsonBody("schema", schemaA, "schemaType", "JSON"))
	if !strings.Contains(r.body, differentSchemaType) {
		t.Fatalf("different type: %s", r.body)
	}
}

func TestContainerErrors(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	cases := []struct {
		method, path, body string
		headers            []string
		status             int
	}{
		{"GET", "/nope", "", nil, 404},
		{"GET", "/subjects/s/versions/1/schema/extra", "", nil, 404},
		{"GET", "/subjects//versions", "", nil, 404},
		{"PATCH", "/subjects", "", nil, 405},
		{"PUT", "/subjects/s/versions", "", nil, 405},
		{"GET", "/subjects", "", []string{"Accept", "text/html"}, 406},
		{"GET", "/nope", "", []string{"Accept", "text/html"}, 404}, // path first, as Jersey
		{"DELETE", "/schemas", "", []string{"Accept", "text/html"}, 405},
		{"POST", "/subjects/s/versions", jsonBody("schema", schemaA), []string{"Content-Type", "text/plain"}, 415},
		{"GET", "/subjects/s/versions/0", "", nil, 422},
		{"GET", "/subjects/s/versions/2147483648", "", nil, 422},
		{"GET", "/subjects/s/versions/x", "", nil, 422},
	}
	for _, c := range cases {
		r := a.do(c.method, c.path, c.body, c.headers...)
		expect(t, r, c.status, 0)
		if c.status != 422 && r.errCode() != c.status {
			t.Errorf("%s %s: error_code %d, want %d", c.method, c.path, r.errCode(), c.status)
		}
	}
	// Content negotiation.
	for accept, want := range map[string]string{
		"":                                      mediaV1,
		"*/*":                                   mediaV1,
		"application/json":                      mediaJSON,
		"application/vnd.schemaregistry+json":   mediaDefault,
		"application/json, application/*;q=0.1": mediaJSON,
		"application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json": mediaV1,
	} {
		var h []string
		if accept != "" {
			h = []string{"Accept", accept}
		}
		if r := a.do("GET", "/subjects", "", h...); r.ctype != want {
			t.Errorf("Accept %q: %q, want %q", accept, r.ctype, want)
		}
	}
	// Every request content type Confluent consumes is taken.
	for _, ct := range []string{mediaV1, mediaDefault, mediaJSON, mediaGeneric, "application/json; charset=utf-8"} {
		expect(t, a.do("POST", "/subjects/s", jsonBody("schema", schemaA), "Content-Type", ct), 200, 0)
	}
	// Trailing slashes and HEAD.
	expect(t, a.do("GET", "/subjects/", ""), 200, 0)
	if r := a.do("HEAD", "/subjects", ""); r.status != 200 || r.body != "" {
		t.Fatalf("HEAD: %+v", r)
	}
	// An escaped slash stays part of the subject.
	a.register(url.PathEscape("a/b"), schemaA)
	if r := a.do("GET", "/subjects/"+url.PathEscape("a/b")+"/versions", ""); r.body != "[1]" {
		t.Fatalf("a/b: %+v", r)
	}
}

func TestRootAndMetadata(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	if r := a.do("GET", "/", ""); r.status != 200 || r.body != "{}" {
		t.Fatalf("GET /: %+v", r)
	}
	if r := a.do("POST", "/", `{"a":"b"}`); r.status != 200 || r.body != "{}" {
		t.Fatalf("POST /: %+v", r)
	}
	r := a.do("GET", "/v1/metadata/id", "")
	want := `{"scope":{"clusters":{"kafka-cluster":"test-cluster","schema-registry-cluster":"schema-registry"},"path":[]}}`
	if r.body != want {
		t.Fatalf("metadata id: %s", r.body)
	}
}

// testAuth lets users through by a header and allows what grants say.
type testAuth struct{ grants map[string]bool }

func (testAuth) Authenticate(r *http.Request) (string, bool) {
	u := r.Header.Get("X-User")
	return "User:" + u, u != ""
}

func (a testAuth) Allowed(p, host string, op Operation, subject string) bool {
	return a.grants[p+" "+op.String()+" "+subject]
}

func TestAuthHooks(t *testing.T) {
	t.Parallel()
	reg, log := newTestRegistry(t, nil)
	auth := testAuth{grants: map[string]bool{
		"User:alice Write s":    true,
		"User:alice Read s":     true,
		"User:alice Describe s": true,
		"User:bob Describe t":   true,
	}}
	a := newAPIOver(t, reg, log, HandlerOptions{Authenticator: auth, Authorizer: auth})
	r := a.do("GET", "/subjects", "")
	expect(t, r, 401, 401)
	expect(t, a.do("GET", "/nope", ""), 401, 401) // authentication before routing, as Jetty
	alice, bob := []string{"X-User", "alice"}, []string{"X-User", "bob"}
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA), alice...), 200, 0)
	expect(t, a.do("POST", "/subjects/t/versions", jsonBody("schema", schemaA), alice...), 403, CodeDenied)
	expect(t, a.do("GET", "/schemas/ids/1", "", bob...), 403, CodeDenied)
	expect(t, a.do("GET", "/schemas/ids/1", "", alice...), 200, 0)
	expect(t, a.do("PUT", "/config", `{"compatibility":"NONE"}`, alice...), 403, CodeDenied)
	if r := a.do("GET", "/subjects", "", bob...); r.body != "[]" {
		t.Fatalf("bob's subjects: %s", r.body)
	}
	if r := a.do("GET", "/subjects", "", alice...); r.body != `["s"]` {
		t.Fatalf("alice's subjects: %s", r.body)
	}
	if r := a.do("GET", "/subjects", ""); r.status != 401 || !strings.Contains(a.srv.URL, "127.0.0.1") {
		t.Fatalf("no user: %+v", r)
	}
}
