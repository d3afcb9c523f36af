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
	if testing.Short() {
		t.Skip("allocates 3,000 schemas")
	}
	// 3,000 keeps the suite fast (a JSON schema parses in about half a
	// millisecond); the figure is per schema.
	per := compattest.RetainedBytes(t, Format, 3000, sample)
	t.Logf("%.0f bytes retained per parsed schema (%d bytes of text)", per, len(sample(0)))
	if per > 64<<10 {
		t.Errorf("a parsed schema keeps %.0f bytes", per)
	}
}

func BenchmarkParse(b *testing.B) {
	text := sample(1)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Format.Parse(text, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBackwardCompatible(b *testing.B) {
	p, _ := Format.Parse(sample(1), nil)
	q, _ := Format.Parse(sample(1), nil)
	b.ReportAllocs()
	for b.Loop() {
		if msgs := p.BackwardCompatible(q); len(msgs) != 0 {
			b.Fatal(msgs)
		}
	}
}
