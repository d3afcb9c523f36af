package schema

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkOpen10k reads a _schemas topic of 10,000 schema records (1000
// subjects x 10 versions) into a registry: what a restart does before its
// listeners accept.
func BenchmarkOpen10k(b *testing.B) {
	log := topic10k()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := Open(context.Background(), Options{Log: log, Formats: fakeFormats})
		if err != nil {
			b.Fatal(err)
		}
		if st := r.Stats(); st.Versions != 10000 {
			b.Fatalf("%+v", st)
		}
	}
}

// BenchmarkRetained10k reports the heap a registry of 10,000 schemas
// keeps (after a GC), per schema.
func BenchmarkRetained10k(b *testing.B) {
	log := topic10k()
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := Open(context.Background(), Options{Log: log, Formats: fakeFormats})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/10000, "B/schema")
		runtime.KeepAlive(r)
	}
}

// topic10k is a _schemas topic of 10,000 schema records (1000 subjects x
// 10 versions of an Avro record).
func topic10k() *memLog {
	log := newMemLog()
	for s := 0; s < 1000; s++ {
		for v := 1; v <= 10; v++ {
			sv := schemaValue{Subject: fmt.Sprintf("s%d-value", s), Version: int32(v), ID: int32(s*10 + v), SchemaType: "AVRO",
				Schema: fmt.Sprintf(`{"type":"record","name":"R%d","namespace":"bench","fields":[{"name":"id","type":"long"},{"name":"f%d","type":"string","default":""}]}`, s, v)}
			log.Append(context.Background(), []Record{{Key: encodeKey(recordKey{Type: keySchema, Subject: sv.Subject, Version: sv.Version}), Value: marshal(sv)}})
		}
	}
	return log
}
