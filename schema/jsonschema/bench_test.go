package jsonschema

import (
	"fmt"
	"testing"

	"sharq/schema/internal/compattest"
)

// sample is a typical registered JSON schema: an object with a dozen
// properties, a nested object, an array, an enum, a $ref to a definition.
func sample(i int) string {
	return fmt.Sprintf(`{"$schema":"http://json-schema.org/draft-07/schema#","title":"Order%d","type":"object",
"definitions":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{4}"}},"required":["street","city"]}},
"properties":{"id":{"type":"string","description":"Order id"},"customer":{"type":"integer","minimum":0},
"placed_at":{"type":"string","format":"date-time"},"status":{"enum":["NEW","PAID","SHIPPED","CANCELLED"]},
"total":{"type":"number","multipleOf":0.01},"coupon":{"type":["string","null"]},"address":{"$ref":"#/definitions/address"},
"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","minimum":1},"price":{"type":"number"}},"required":["sku","qty"]}},
"attributes":{"type":"object","additionalProperties":{"type":"string"}},"gift":{"type":"boolean","default":false},
"note":{"type":"string","maxLength":500},"version":{"type":"integer","default":1}},
"required":["id","customer","status"],"additionalProperties":false}`, i)
}

func TestMemoryPerSchema(t *testing.T) {
	// 1,000 keeps the suite fast (about half a millisecond a parse, more
	// under -race); the figure is per schema.
	compattest.MemoryTest(t, Format, 1000, sample)
}

func BenchmarkParse(b *testing.B) { compattest.BenchmarkParse(b, Format, sample(1)) }

func BenchmarkBackwardCompatible(b *testing.B) {
	compattest.BenchmarkBackwardCompatible(b, Format, sample(1))
}
