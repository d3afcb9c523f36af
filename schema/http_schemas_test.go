package schema

import (
	"strings"
	"testing"
)

func TestSchemasByID(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	a.register("t", schemaA)
	a.register("s", schemaAB)

	var got schemaStringJSON
	r := a.do("GET", "/schemas/ids/1", "")
	expect(t, r, 200, 0)
	r.json(t, &got)
	if got.Schema != schemaA || got.Subject != "" || got.Version != 0 || got.SchemaType != "AVRO" || got.MaxID != 0 {
		t.Fatalf("%+v", got)
	}
	a.do("GET", "/schemas/ids/1?subject=t&fetchMaxId=true", "").json(t, &got)
	if got.Subject != "t" || got.Version != 1 || got.MaxID != 2 {
		t.Fatalf("with subject: %+v", got)
	}
	if r := a.do("GET", "/schemas/ids/2/schema", ""); r.body != schemaAB {
		t.Fatalf("raw: %s", r.body)
	}
	if r := a.do("GET", "/schemas/ids/1?format=upper", ""); !strings.Contains(r.body, strings.ToUpper(`\"fields\"`)) {
		t.Fatalf("format: %s", r.body)
	}
	expect(t, a.do("GET", "/schemas/ids/9", ""), 404, CodeSchemaNotFound)
	expect(t, a.do("GET", "/schemas/ids/9/schema", ""), 404, CodeSchemaNotFound)
	expect(t, a.do("GET", "/schemas/ids/x", ""), 404, 404)
	if r := a.do("GET", "/schemas/ids/1/subjects", ""); r.body != `["s","t"]` {
		t.Fatalf("subjects: %s", r.body)
	}
	if r := a.do("GET", "/schemas/ids/1/versions", ""); r.body != `[{"subject":"s","version":1},{"subject":"t","version":1}]` {
		t.Fatalf("versions: %s", r.body)
	}
	expect(t, a.do("GET", "/schemas/ids/9/subjects", ""), 404, CodeSchemaNotFound)
	expect(t, a.do("GET", "/schemas/ids/9/versions", ""), 404, CodeSchemaNotFound)
	// Deleted versions drop out unless asked for; the id stays readable.
	a.do("DELETE", "/subjects/t/versions/1", "")
	if r := a.do("GET", "/schemas/ids/1/subjects", ""); r.body != `["s"]` {
		t.Fatalf("subjects after delete: %s", r.body)
	}
	if r := a.do("GET", "/schemas/ids/1/subjects?deleted=true", ""); r.body != `["s","t"]` {
		t.Fatalf("subjects deleted=true: %s", r.body)
	}
	// By guid.
	a.do("GET", "/schemas/ids/2", "").json(t, &got)
	var byGUID schemaStringJSON
	r = a.do("GET", "/schemas/guids/"+got.GUID, "")
	expect(t, r, 200, 0)
	r.json(t, &byGUID)
	if byGUID.Schema != schemaAB {
		t.Fatalf("guid: %+v", byGUID)
	}
	expect(t, a.do("GET", "/schemas/guids/00000000-0000-0000-0000-000000000000", ""), 404, CodeSchemaNotFound)
	if r := a.do("GET", "/schemas/guids/"+got.GUID+"/ids", ""); r.body != `[{"context":".","id":2}]` {
		t.Fatalf("guid ids: %s", r.body)
	}
}

func TestSchemasList(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.register("s", schemaA)
	a.register("s", schemaAB)
	a.register("t", schemaA)
	a.do("DELETE", "/subjects/t", "")
	rules := map[string]any{"domainRules": []any{map[string]any{"name": "r", "type": "CEL"}}}
	a.do("POST", "/subjects/u/versions", jsonBody("schema", schemaA, "ruleSet", rules))
	list := func(q string) []string {
		var got []schemaJSON
		a.do("GET", "/schemas"+q, "").json(t, &got)
		var out []string
		for _, s := range got {
			out = append(out, s.Subject+":"+itoa(s.Version))
		}
		return out
	}
	for q, want := range map[string]string{
		"":                              "s:1 s:2 u:1",
		"?deleted=true":                 "s:1 s:2 t:1 u:1",
		"?latestOnly=true":              "s:2 u:1",
		"?subjectPrefix=t&deleted=true": "t:1",
		"?ruleType=CEL":                 "u:1",
		"?offset=1&limit=1":             "s:2",
	} {
		if got := strings.Join(list(q), " "); got != want {
			t.Errorf("/schemas%s: %q, want %q", q, got, want)
		}
	}
	if r := a.do("GET", "/schemas/types", ""); r.body != `["AVRO","JSON","PROTOBUF"]` {
		t.Fatalf("types %s", r.body)
	}
}
