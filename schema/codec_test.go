package schema

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

// TestRecordsAsConfluentWritesThem pins the _schemas records a session
// writes to the bytes Confluent 8.3's registry writes for the same calls
// (Jackson: @JsonPropertyOrder keys, NON_EMPTY values).
func TestRecordsAsConfluentWritesThem(t *testing.T) {
	a := newAPI(t)
	a.register("test", `"string"`)
	a.do("PUT", "/config/test", `{"compatibility":"FULL"}`)
	a.do("PUT", "/config", `{"compatibility":"NONE"}`)
	a.do("PUT", "/mode/test", `{"mode":"READONLY"}`)
	a.do("DELETE", "/mode/test", "")
	a.register(url.PathEscape(":.ctx:s"), `"int"`)
	a.do("DELETE", "/subjects/test", "")
	a.do("DELETE", "/subjects/test?permanent=true", "")
	want := []string{
		`{"keytype":"SCHEMA","subject":"test","version":1,"magic":1} {"subject":"test","version":1,"id":1,"schemaType":"AVRO","schema":"\"string\"","deleted":false}`,
		`{"keytype":"CONFIG","subject":"test","magic":0} {"subject":"test","compatibilityLevel":"FULL"}`,
		`{"keytype":"CONFIG","magic":0} {"compatibilityLevel":"NONE"}`,
		`{"keytype":"MODE","subject":"test","magic":0} {"subject":"test","mode":"READONLY"}`,
		`{"keytype":"MODE","subject":"test","magic":0} null`,
		`{"keytype":"CONTEXT","tenant":"default","context":".ctx","magic":0} {"tenant":"default","context":".ctx"}`,
		`{"keytype":"SCHEMA","subject":":.ctx:s","version":1,"magic":1} {"subject":":.ctx:s","version":1,"id":1,"schemaType":"AVRO","schema":"\"int\"","deleted":false}`,
		`{"keytype":"DELETE_SUBJECT","subject":"test","magic":0} {"subject":"test","version":1}`,
		`{"keytype":"SCHEMA","subject":"test","version":1,"magic":1} null`,
		`{"keytype":"CONFIG","subject":"test","magic":0} null`,
		`{"keytype":"NOOP","magic":0} {"sharqMaxIds":{".":1,".ctx":1}}`,
	}
	got := a.log.records()
	if len(got) != len(want) {
		for _, r := range got {
			t.Logf("%s %s", r.Key, r.Value)
		}
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		v := "null"
		if r.Value != nil {
			v = string(r.Value)
		}
		if s := string(r.Key) + " " + v; s != want[i] {
			t.Errorf("record %d:\n got %s\nwant %s", i, s, want[i])
		}
	}
}

// TestReadsConfluentRecords applies records as Confluent versions wrote
// them: 5.x values without schemaType, 8.x ones with md5 and unknown
// fields, a legacy config value without its subject, keys in another field
// order, and keys this registry skips (ASSOC) or cannot read.
func TestReadsConfluentRecords(t *testing.T) {
	log := newMemLog()
	log.produce(`{"magic":1,"keytype":"SCHEMA","subject":"old","version":1}`, `{"subject":"old","version":1,"id":3,"schema":"\"string\"","deleted":false}`)
	log.produce(`{"keytype":"SCHEMA","subject":"new","version":1,"magic":1}`, `{"subject":"new","version":1,"id":4,"md5":"AAAAAAAAAAAAAAAAAAAAAA==","schemaType":"JSON","references":[],"schema":"{}","deleted":false,"someFutureField":7}`)
	log.produce(`{"keytype":"CONFIG","subject":"old","magic":0}`, `{"compatibilityLevel":"FORWARD"}`)
	log.produce(`{"keytype":"ASSOC","tenant":"default","subject":"x","magic":0}`, `{"whatever":1}`)
	log.produce(`not json`, `{}`)
	log.produce(`{"keytype":"SCHEMA","subject":"bad","version":1,"magic":1}`, `{"id":"not a number"}`)
	log.produce(`{"keytype":"NOOP","magic":0}`, "")
	log.produce(`{"keytype":"MODE","magic":0}`, `{"mode":"READONLY"}`)
	reg, _ := newTestRegistry(t, log)
	a := newAPIOver(t, reg, log, HandlerOptions{})
	var got schemaJSON
	a.do("GET", "/subjects/old/versions/1", "").json(t, &got)
	if got.ID != 3 || got.SchemaType != "AVRO" || got.Schema != `"string"` {
		t.Fatalf("old: %+v", got)
	}
	a.do("GET", "/subjects/new/versions/1", "").json(t, &got)
	if got.ID != 4 || got.SchemaType != "JSON" || got.GUID != "00000000-0000-0000-0000-000000000000" {
		t.Fatalf("new: %+v", got)
	}
	if r := a.do("GET", "/config/old", ""); r.body != `{"compatibilityLevel":"FORWARD"}` {
		t.Fatalf("legacy config: %s", r.body)
	}
	if r := a.do("GET", "/mode", ""); r.body != `{"mode":"READONLY"}` {
		t.Fatalf("mode: %s", r.body)
	}
	st := reg.Stats()
	if st.Skipped != 3 || st.Subjects != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStateRebuilt: a second registry reading the same topic answers as
// the first, including deletes, configs, modes and contexts.
func TestStateRebuilt(t *testing.T) {
	a := newAPI(t)
	a.register("s", schemaA)
	a.register("s", schemaAB)
	a.register("t", schemaA)
	a.register(url.PathEscape(":.c:x"), schemaAB)
	a.do("DELETE", "/subjects/s/versions/1", "")
	a.do("DELETE", "/subjects/t", "")
	a.do("PUT", "/config/s", `{"compatibility":"FULL"}`)
	a.do("PUT", "/mode/t", `{"mode":"READONLY"}`)
	paths := []string{"/subjects?deleted=true", "/subjects/s/versions?deletedAsNegative=true", "/schemas?deleted=true",
		"/config/s", "/mode/t", "/contexts", "/schemas/ids/1/versions?deleted=true", "/schemas/ids/2"}
	before := map[string]string{}
	for _, p := range paths {
		before[p] = a.do("GET", p, "").body
	}
	reg2, _ := newTestRegistry(t, a.log)
	b := newAPIOver(t, reg2, a.log, HandlerOptions{})
	for _, p := range paths {
		if got := b.do("GET", p, "").body; got != before[p] {
			t.Errorf("%s after rebuild:\n got %s\nwant %s", p, got, before[p])
		}
	}
	// Ids continue where they were.
	if id := b.register("s", schemaWith([]string{"a", "b", "c"}, nil)); id != 3 {
		t.Fatalf("next id after rebuild: %d", id)
	}
}

// TestIDsNotReusedAfterCompaction: the highest id was hard-deleted and
// compaction removed its records; a restart must not give it out again.
func TestIDsNotReusedAfterCompaction(t *testing.T) {
	a := newAPI(t)
	a.register("s", schemaA)
	a.register("t", schemaAB) // id 2, the highest
	a.do("DELETE", "/subjects/t", "")
	a.do("DELETE", "/subjects/t?permanent=true", "")
	a.log.compact()
	for _, r := range a.log.records() {
		if strings.Contains(string(r.Key), `"keytype":"SCHEMA","subject":"t"`) {
			t.Fatalf("compaction left %s", r.Key)
		}
	}
	reg2, _ := newTestRegistry(t, a.log)
	b := newAPIOver(t, reg2, a.log, HandlerOptions{})
	if id := b.register("u", schemaWith([]string{"q"}, nil)); id != 3 {
		t.Fatalf("id after compaction and restart: %d, want 3", id)
	}
}

// TestOtherWritersRecordsAreRead: records another writer appends (a
// Confluent registry on the same topic) are applied by Run.
func TestOtherWritersRecordsAreRead(t *testing.T) {
	reg, log := newTestRegistry(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- reg.Run(ctx) }()
	defer func() { cancel(); <-done }()
	log.produce(`{"keytype":"SCHEMA","subject":"ext","version":1,"magic":1}`, `{"subject":"ext","version":1,"id":42,"schemaType":"AVRO","schema":"\"long\"","deleted":false}`)
	if err := reg.catchUp(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	v, e := reg.GetVersion("ext", 1, false)
	if e != nil || v.ID != 42 {
		t.Fatalf("%+v %v", v, e)
	}
	// A duplicate id with other content is refused, as Confluent's reader
	// refuses it.
	log.produce(`{"keytype":"SCHEMA","subject":"dup","version":1,"magic":1}`, `{"subject":"dup","version":1,"id":42,"schemaType":"AVRO","schema":"\"int\"","deleted":false}`)
	reg.catchUp(context.Background(), 1)
	if _, e := reg.GetVersion("dup", 1, false); e == nil || e.Code != CodeSubjectNotFound {
		t.Fatalf("duplicate id applied: %v", e)
	}
}

func TestWriteFailures(t *testing.T) {
	a := newAPI(t)
	a.log.maxRec = 100
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaWith([]string{strings.Repeat("x", 200)}, nil))), 422, CodeSchemaTooLarge)
	a.log.maxRec = 0
	a.log.failErr = context.DeadlineExceeded
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA)), 500, CodeOperationTimeout)
	a.log.failErr = errStorageTest
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA)), 500, CodeStoreError)
	a.log.failErr = nil
	expect(t, a.do("POST", "/subjects/s/versions", jsonBody("schema", schemaA)), 200, 0)
}

var errStorageTest = &Error{Message: "disk on fire"}
