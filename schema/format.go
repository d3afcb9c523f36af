// Package schema is sharq's schema registry: Confluent's Schema Registry REST
// API over subjects, versions and global ids, stored in the compacted
// _schemas topic. The schema formats live in their own packages
// (schema/avro, schema/protobuf, schema/jsonschema) behind Format, so the
// registry's rules (levels, transitivity, modes, contexts) are written once.
package schema

// Reference names another registered schema that a schema imports: Name is
// how the referring schema spells it (an Avro full name, a .proto import
// path, a JSON Schema $ref URL), Subject and Version where it is registered.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// ResolvedReference is a reference with the referenced schema's text, and
// the references that schema has in turn, already resolved by the registry.
type ResolvedReference struct {
	Name       string
	Type       string // AVRO, PROTOBUF or JSON
	Schema     string
	References []ResolvedReference
}

// Format parses one schema type. Implementations are stateless and safe for
// concurrent use.
type Format interface {
	// Type is the schemaType the REST API uses: "AVRO", "PROTOBUF", "JSON".
	Type() string
	// Parse checks text with its resolved references. The error's message
	// is what the registry answers in a 42201 (invalid schema) body.
	Parse(text string, refs []ResolvedReference) (Parsed, error)
}

// Parsed is a schema that parsed.
type Parsed interface {
	// Canonical is the form two registrations are compared by: equal
	// canonical strings (with equal references) are the same schema and
	// get the same id.
	Canonical() string
	// Normalized is the schema as registering with normalize=true stores
	// it (Confluent's normalize()).
	Normalized() Parsed
	// BackwardCompatible reports why this schema, as the reader, cannot
	// read data written with previous, one message per incompatibility in
	// Confluent's verbose wording; none when it can. The registry derives
	// every level from it: FORWARD is previous.BackwardCompatible(this),
	// FULL both, *_TRANSITIVE against every earlier version.
	BackwardCompatible(previous Parsed) []string
	// Formatted renders the schema for the REST API's format parameter
	// ("" is the canonical text; Avro "resolved", Protobuf "serialized"
	// and "ignore_extensions"); an unknown format is an error.
	Formatted(format string) (string, error)
}
