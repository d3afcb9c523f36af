package schema

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzREST drives the REST API with arbitrary methods, paths, queries and
// bodies. Every answer must be a success or Confluent's error body with a
// 4xx status: never a 5xx (the log never fails here), never a panic.
func FuzzREST(f *testing.F) {
	seeds := []struct{ method, path, body string }{
		{"POST", "/subjects/s/versions", `{"schema":"{\"fields\":[\"a\"]}"}`},
		{"POST", "/subjects/s/versions?normalize=true", `{"schema":"{}","references":[{"name":"n","subject":"s","version":-1}]}`},
		{"POST", "/subjects/s/versions", `{"schema":"{}","id":5,"version":3,"schemaType":"JSON"}`},
		{"POST", "/subjects/s", `{"schema":"{}","metadata":{"properties":{"a":"b"}},"ruleSet":{"domainRules":[{"name":"r","type":"CEL"}]}}`},
		{"POST", "/compatibility/subjects/s/versions/latest?verbose=true", `{"schema":"[1,2]"}`},
		{"PUT", "/config/s", `{"compatibility":"FULL","normalize":null,"defaultMetadata":{"tags":{"a":["b"]}}}`},
		{"PUT", "/mode/s?force=true", `{"mode":"IMPORT"}`},
		{"DELETE", "/subjects/s?permanent=true", ""},
		{"DELETE", "/subjects/s/versions/latest", ""},
		{"GET", "/schemas/ids/1?subject=:.c:s&format=upper&fetchMaxId=true", ""},
		{"GET", "/subjects?subjectPrefix=:*:&deleted=true&offset=1&limit=2", ""},
		{"GET", "/subjects/%3A.c%3As/versions/1/referencedby", ""},
		{"DELETE", "/contexts/%3A.c%3A", ""},
		{"GET", "/schemas/guids/0ab217a6-e5d0-b84b-cabc-cfeba63d350b", ""},
		{"POST", "/subjects/s/versions", `{"schema":"x"} trailing`},
		{"PUT", "/config", `[]`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		// A fresh registry per input, with a little in it, so an input's
		// outcome never depends on the inputs before it.
		reg, _ := newTestRegistry(t, nil)
		h := NewHandler(reg, HandlerOptions{})
		for _, s := range []string{"s", "%3A.c%3As"} {
			req := httptest.NewRequest("POST", "/subjects/"+s+"/versions", strings.NewReader(`{"schema":"{\"fields\":[\"a\"]}"}`))
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://sr"+path, strings.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("Content-Type", mediaV1)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && method != http.MethodHead {
			var e struct {
				Code    *int    `json:"error_code"`
				Message *string `json:"message"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == nil || e.Message == nil {
				t.Fatalf("%s %s: %d without Confluent's error body: %q", method, path, rec.Code, rec.Body)
			}
		}
	})
}

// FuzzRecords applies arbitrary _schemas records: the state must never
// panic, and a record either applies or is skipped.
func FuzzRecords(f *testing.F) {
	f.Add([]byte(`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`), []byte(`{"subject":"s","version":1,"id":1,"schema":"{}","references":[{"name":"a","subject":"s","version":1}],"deleted":false}`))
	f.Add([]byte(`{"keytype":"CONFIG","magic":0}`), []byte(`{"compatibilityLevel":"full","defaultRuleSet":{"domainRules":[{"name":"x"}]}}`))
	f.Add([]byte(`{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}`), []byte(`{"subject":"s","version":2147483647}`))
	f.Add([]byte(`{"keytype":"CLEAR_SUBJECT","subject":":.c:","magic":0}`), []byte(`{"subject":":.c:"}`))
	f.Add([]byte(`{"keytype":"CONTEXT","tenant":"default","context":".c","magic":0}`), []byte(`{}`))
	f.Add([]byte(`{"keytype":"NOOP","magic":0}`), []byte(`{"sharqMaxIds":{".":-5}}`))
	f.Add([]byte(`{"keytype":"MODE","subject":"s","magic":0}`), []byte(nil))
	st := newState()
	f.Fuzz(func(t *testing.T, key, value []byte) {
		before := st.applied + st.skipped
		st.apply(key, value, 0, 0)
		if st.applied+st.skipped != before+1 {
			t.Fatal("record neither applied nor skipped")
		}
		// What was applied must still be consistent enough to answer.
		for name := range st.subjects {
			st.hasSubjects(name, true)
			for _, v := range st.subjects[name].versions {
				st.referencedBy(name, v.Version)
				st.keyByID(contextOf(name), v.ID, "")
			}
		}
	})
}
