// Package formats is where the schema formats the registry serves are
// listed, in the order GET /schemas/types shows them (Confluent's: its
// providers' HashMap order).
package formats

import (
	"sharq/schema"
	"sharq/schema/avro"
	"sharq/schema/jsonschema"
	"sharq/schema/protobuf"
)

// All returns every format sharq's registry serves.
func All() []schema.Format {
	return []schema.Format{jsonschema.Format, protobuf.Format, avro.Format}
}
