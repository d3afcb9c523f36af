package avro

import (
	"fmt"
	"testing"

	"sharq/schema/internal/compattest"
)

// sample is a typical registered value schema: a dozen fields, a nested
// record, an enum, a union, an array and a map, docs.
func sample(i int) string {
	return fmt.Sprintf(`{"type":"record","name":"Order%d","namespace":"com.example.shop","doc":"An order placed in the shop.",
"fields":[{"name":"id","type":"string","doc":"Order id"},{"name":"customer","type":"long"},
{"name":"placed_at","type":{"type":"long","logicalType":"timestamp-millis"}},
{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED","CANCELLED"],"default":"NEW"}},
{"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
{"name":"coupon","type":["null","string"],"default":null},
{"name":"address","type":{"type":"record","name":"Address","fields":[{"name":"street","type":"string"},{"name":"city","type":"string"},{"name":"zip","type":"string"},{"name":"country","type":"string","default":"NL"}]}},
{"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[{"name":"sku","type":"string"},{"name":"qty","type":"int"},{"name":"price","type":"double"}]}}},
{"name":"attributes","type":{"type":"map","values":"string"},"default":{}},
{"name":"gift","type":"boolean","default":false},
{"name":"note","type":["null","string"],"default":null,"doc":"Free text"},
{"name":"version","type":"int","default":1}]}`, i)
}

// TestMemoryPerSchema measures the heap a parsed schema keeps (10,000
// registrations must fit comfortably) and guards against a regression.
func TestMemoryPerSchema(t *testing.T) {
	compattest.MemoryTest(t, Format, 10000, sample)
}

func BenchmarkParse(b *testing.B) { compattest.BenchmarkParse(b, Format, sample(1)) }

func BenchmarkBackwardCompatible(b *testing.B) {
	compattest.BenchmarkBackwardCompatible(b, Format, sample(1))
}
