package broker

import (
	"context"
	"testing"

	"sharq/schema"
)

// TestSchemaLogReadAtEndDoesNotSkipAnAppend: a read at the end of _schemas
// that finds nothing while a record is appended must not answer a next
// offset past that record (it did, taking the high watermark after the
// read, and a registration read back by the tailer first was then never
// applied: its id answered 40403).
func TestSchemaLogReadAtEndDoesNotSkipAnAppend(t *testing.T) {
	s, _ := benchServer(t)
	if _, err := s.createTopic(context.Background(), "_schemas", 1, 1, map[string]string{"cleanup.policy": "compact"}, false); err != nil {
		t.Fatal(err)
	}
	l := &schemaLog{s: s, topic: "_schemas"}
	ctx := context.Background()
	rec := []schema.Record{{Key: []byte(`{"keytype":"NOOP","magic":0}`)}}
	if _, err := l.Append(ctx, rec); err != nil {
		t.Fatal(err)
	}
	schemaLogAfterRead = func() {
		schemaLogAfterRead = nil
		if _, err := l.Append(ctx, rec); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { schemaLogAfterRead = nil })
	recs, next, err := l.Read(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 0 || next != 1 {
		t.Fatalf("read at the end: %d records, next %d; want none and 1 (offset 1 appended during the read)", len(recs), next)
	}
	recs, next, err = l.Read(ctx, next)
	if err != nil || len(recs) != 1 || recs[0].Offset != 1 || next != 2 {
		t.Fatalf("the appended record: %+v next %d %v", recs, next, err)
	}
}
