package protobuf

import (
	"encoding/base64"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"sharq/schema"
)

// Stand-ins for Confluent's confluent/type/decimal.proto and
// confluent/meta.proto, written here from the names Confluent's tests use,
// so its normalization example compiles.
var confluentRefs = []schema.ResolvedReference{
	{Name: "confluent/type/decimal.proto", Type: "PROTOBUF", Schema: "syntax = \"proto3\";\npackage confluent.type;\nmessage Decimal {\n  bytes value = 1;\n  uint32 precision = 2;\n  int32 scale = 3;\n}\n"},
	{Name: "confluent/meta.proto", Type: "PROTOBUF", Schema: "syntax = \"proto3\";\npackage confluent;\nimport \"google/protobuf/descriptor.proto\";\n" +
		"message Meta {\n  string doc = 1;\n  map<string, string> params = 2;\n  repeated string tags = 3;\n}\n" +
		"extend google.protobuf.FieldOptions {\n  Meta field_meta = 1298;\n}\n"},
}

// Canonical and normalized text. Sources: Confluent's ProtobufSchemaTest
// testEnumReserved, testRanges, testNormalization (each made valid where
// it was not: protoc and this package reject a value inside a reserved
// range, a proto3 enum not starting at zero and a jstype on an int32,
// which Confluent's parser alone accepts).
func TestCanonicalAndNormalized(t *testing.T) {
	cases := []struct {
		name, in, normalized string
		refs                 []schema.ResolvedReference
	}{
		{
			name: "testEnumReserved",
			in: "\nimport \"google/protobuf/descriptor.proto\";\n\nmessage FooOptions {\n  optional string name = 1;\n  optional FooParameterType type = 2;\n}\n" +
				"enum FooParameterType {\n  reserved 20, 100 to max;\n  reserved 10;\n  reserved 4 to 6;\n  reserved \"BAD\", \"OLD\";\n  NUMBER = 1;\n  STRING = 2;\n}\n",
			normalized: "\nimport \"google/protobuf/descriptor.proto\";\n\nmessage FooOptions {\n  optional string name = 1;\n  optional .FooParameterType type = 2;\n}\n" +
				"enum FooParameterType {\n  reserved 4 to 6;\n  reserved 10;\n  reserved 20;\n  reserved 100 to max;\n  reserved \"BAD\";\n  reserved \"OLD\";\n  NUMBER = 1;\n  STRING = 2;\n}\n",
		},
		{
			name: "testRanges",
			in: "\nmessage Money {\n  reserved 5000 to 6000;\n  reserved 10000 to 10001;\n  reserved 20000 to 20000;\n\n  optional int64 cents = 1;\n\n" +
				"  extensions 100 to 200;\n  extensions 1000 to 1001;\n  extensions 2000 to 2000;\n\n  enum MoneyEnum {\n    reserved 100 to 200;\n" +
				"    reserved 1000 to 1001;\n    reserved 2000 to 2000;\n    NONE = 0;\n    CENTS = 1;\n    DOLLARS = 2;\n  }\n}\n",
			normalized: "\nmessage Money {\n  reserved 5000 to 6000;\n  reserved 10000 to 10001;\n  reserved 20000;\n\n  optional int64 cents = 1;\n\n" +
				"  extensions 100 to 200;\n  extensions 1000 to 1001;\n  extensions 2000;\n\n  enum MoneyEnum {\n    reserved 100 to 200;\n" +
				"    reserved 1000 to 1001;\n    reserved 2000;\n    NONE = 0;\n    CENTS = 1;\n    DOLLARS = 2;\n  }\n}\n",
		},
		{
			name: "testNormalization",
			refs: confluentRefs,
			in: "syntax = \"proto3\";\npackage my.package;\n\nimport \"google/protobuf/timestamp.proto\";\nimport \"confluent/type/decimal.proto\";\nimport \"confluent/meta.proto\";\n\n" +
				"option java_package = \"my.package\";\noption java_outer_classname = \"Outer\";\noption java_multiple_files = true;\noption java_string_check_utf8 = true;\n" +
				"option optimize_for = CODE_SIZE;\noption go_package = \"go.package\";\noption cc_generic_services = false;\noption java_generic_services = true;\n" +
				"option py_generic_services = false;\noption cc_enable_arenas = true;\noption objc_class_prefix = \"objc\";\noption csharp_namespace = \"csharp\";\n" +
				"option swift_prefix = \"swift\";\noption php_class_prefix = \"php\";\noption php_namespace = \"php_ns\";\noption php_metadata_namespace = \"php_md_ns\";\n" +
				"option ruby_package = \"ruby\";\n\nmessage Nested {\n  confluent.type.Decimal test_cflt_decimal = 1 [(confluent.field_meta) = {\n" +
				"    params: [\n      {\n        value: \"8\",\n        key: \"precision\"\n      },\n      {\n        value: \"3\",\n        key: \"scale\"\n      }\n    ],\n" +
				"    doc: \"test decimal\"\n  }];\n  google.protobuf.Timestamp test_timestamp = 2;\n  map<string, InnerMessage> test_map = 3;\n\n" +
				"  message InnerMessage {\n    reserved \"foo\", \"bar\";\n    reserved 14, 15, 8 to 9;\n    reserved 16, 20, 29 to 31;\n  \n" +
				"    option no_standard_descriptor_accessor = true;\n    option deprecated = true;\n  \n    InnerMessage.DeepMessage deep2 = 4;\n" +
				"    Nested.InnerMessage.DeepMessage deep3 = 5;\n    my.package.Nested.InnerMessage.DeepMessage deep4 = 6;\n" +
				"    .my.package.Nested.InnerMessage.DeepMessage deep5 = 7;\n    string id = 1 [json_name = \"id\"];\n    repeated int32 ids = 2 [packed = true];\n" +
				"    DeepMessage deep1 = 3;\n  \n    oneof some_val {\n      string one_id = 12;\n      int32 other_id = 11;\n    }\n    oneof some_val2 {\n" +
				"      string one_id2 = 13;\n      int64 other_id2 = 10 [\n        deprecated = true,\n        ctype = CORD,\n        jstype = JS_STRING,\n" +
				"        json_name = \"otherId2\"\n      ];\n    }\n  \n    message DeepMessage {\n      string id = 1;\n    }\n    enum InnerEnum {\n" +
				"      reserved 100 to 110;\n      option allow_alias = true;\n      ZERO = 0 [deprecated = true];\n      TWO = 2;\n      ONE = 1;\n      ALSO_ZERO = 0;\n" +
				"    }\n  }\n}\nenum Status {\n  ACTIVE = 0;\n  INACTIVE = 1;\n}\n\nservice MyService {\n  option deprecated = true;\n\n" +
				"  rpc MyMethod2 (stream Nested) returns (Nested.InnerMessage);\n  rpc MyMethod1 (Nested.InnerMessage) returns (stream Nested) {\n" +
				"    option idempotency_level = NO_SIDE_EFFECTS;\n    option deprecated = true;\n  };\n}\n",
			normalized: "syntax = \"proto3\";\npackage my.package;\n\nimport \"confluent/meta.proto\";\nimport \"confluent/type/decimal.proto\";\nimport \"google/protobuf/timestamp.proto\";\n\n" +
				"option cc_enable_arenas = true;\noption cc_generic_services = false;\noption csharp_namespace = \"csharp\";\noption go_package = \"go.package\";\n" +
				"option java_generic_services = true;\noption java_multiple_files = true;\noption java_outer_classname = \"Outer\";\noption java_package = \"my.package\";\n" +
				"option java_string_check_utf8 = true;\noption objc_class_prefix = \"objc\";\noption optimize_for = CODE_SIZE;\noption php_class_prefix = \"php\";\n" +
				"option php_metadata_namespace = \"php_md_ns\";\noption php_namespace = \"php_ns\";\noption py_generic_services = false;\noption ruby_package = \"ruby\";\n" +
				"option swift_prefix = \"swift\";\n\nmessage Nested {\n  .confluent.type.Decimal test_cflt_decimal = 1 [(confluent.field_meta) = {\n" +
				"    doc: \"test decimal\",\n    params: [\n      {\n        key: \"precision\",\n        value: \"8\"\n      },\n      {\n        key: \"scale\",\n" +
				"        value: \"3\"\n      }\n    ]\n  }];\n  .google.protobuf.Timestamp test_timestamp = 2;\n  map<string, .my.package.Nested.InnerMessage> test_map = 3;\n\n" +
				"  message InnerMessage {\n    reserved 8 to 9;\n    reserved 14;\n    reserved 15;\n    reserved 16;\n    reserved 20;\n    reserved 29 to 31;\n" +
				"    reserved \"bar\";\n    reserved \"foo\";\n  \n    option deprecated = true;\n    option no_standard_descriptor_accessor = true;\n  \n" +
				"    string id = 1 [json_name = \"id\"];\n    repeated int32 ids = 2 [packed = true];\n    .my.package.Nested.InnerMessage.DeepMessage deep1 = 3;\n" +
				"    .my.package.Nested.InnerMessage.DeepMessage deep2 = 4;\n    .my.package.Nested.InnerMessage.DeepMessage deep3 = 5;\n" +
				"    .my.package.Nested.InnerMessage.DeepMessage deep4 = 6;\n    .my.package.Nested.InnerMessage.DeepMessage deep5 = 7;\n  \n" +
				"    oneof some_val2 {\n      int64 other_id2 = 10 [\n        ctype = CORD,\n        deprecated = true,\n        json_name = \"otherId2\",\n" +
				"        jstype = JS_STRING\n      ];\n      string one_id2 = 13;\n    }\n    oneof some_val {\n      int32 other_id = 11;\n      string one_id = 12;\n" +
				"    }\n  \n    message DeepMessage {\n      string id = 1;\n    }\n    enum InnerEnum {\n      reserved 100 to 110;\n      option allow_alias = true;\n" +
				"      ALSO_ZERO = 0;\n      ZERO = 0 [deprecated = true];\n      ONE = 1;\n      TWO = 2;\n    }\n  }\n}\nenum Status {\n  ACTIVE = 0;\n  INACTIVE = 1;\n}\n\n" +
				"service MyService {\n  option deprecated = true;\n\n  rpc MyMethod2 (stream .my.package.Nested) returns (.my.package.Nested.InnerMessage);\n" +
				"  rpc MyMethod1 (.my.package.Nested.InnerMessage) returns (stream .my.package.Nested) {\n    option deprecated = true;\n" +
				"    option idempotency_level = NO_SIDE_EFFECTS;\n  };\n}\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Format.Parse(c.in, c.refs)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Canonical(); got != c.in {
				t.Errorf("canonical\n got %q\nwant %q", got, c.in)
			}
			n := p.Normalized()
			if got := n.Canonical(); got != c.normalized {
				t.Errorf("normalized\n got %q\nwant %q", got, c.normalized)
			}
			if again := n.Normalized().Canonical(); again != c.normalized {
				t.Errorf("normalizing twice: %q", again)
			}
			if msgs := n.BackwardCompatible(p); len(msgs) != 0 {
				t.Errorf("the normalized schema cannot read the original: %v", msgs)
			}
		})
	}
}

// TestPrinting: Confluent's layout for what the examples above leave out.
// Sources: ProtobufSchemaTest.testOptionEscape (escapes), testEnumOption
// (aggregate values), and ProtobufSchemaUtils.toString's order (messages
// before enums, imports before public imports, a section per kind).
func TestPrinting(t *testing.T) {
	in := "syntax = \"proto3\";\npackage a.b;\nimport public \"google/protobuf/empty.proto\";\nimport \"google/protobuf/descriptor.proto\";\n" +
		"option java_package = \"x\\\\y \\\"q\\\" \\'s\\' \\n\\a\\b\\f\\r\\t\\v\";\n" +
		"enum E { option allow_alias = true; A = 0; B = 0; }\n" +
		"message FooOptions { string name = 1; E type = 2; }\n" +
		"extend google.protobuf.MessageOptions { repeated FooOptions foo = 12345; }\n" +
		"message M {\n  option (foo) = { name: \"test\" type: B };\n  option (foo) = { name: \"test2\", type: A };\n" +
		"  map<string, M> kids = 1;\n  optional int32 n = 2 [deprecated = true];\n  oneof o { string s = 3; M m = 4; }\n  message Inner { repeated bytes b = 1; }\n}\n"
	want := "syntax = \"proto3\";\npackage a.b;\n\nimport \"google/protobuf/descriptor.proto\";\nimport public \"google/protobuf/empty.proto\";\n\n" +
		"option java_package = \"x\\\\y \\\"q\\\" \\'s\\' \\n\\a\\b\\f\\r\\t\\v\";\n\n" +
		"message FooOptions {\n  string name = 1;\n  E type = 2;\n}\n" +
		"message M {\n  option (foo) = {\n    name: \"test\",\n    type: B\n  };\n  option (foo) = {\n    name: \"test2\",\n    type: A\n  };\n\n" +
		"  map<string, M> kids = 1;\n  optional int32 n = 2 [deprecated = true];\n\n  oneof o {\n    string s = 3;\n    M m = 4;\n  }\n\n" +
		"  message Inner {\n    repeated bytes b = 1;\n  }\n}\n" +
		"enum E {\n  option allow_alias = true;\n  A = 0;\n  B = 0;\n}\n\n" +
		"extend google.protobuf.MessageOptions {\n  repeated FooOptions foo = 12345;\n}\n"
	p, err := Format.Parse(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Canonical(); got != want {
		t.Errorf("canonical\n got %q\nwant %q", got, want)
	}
	q, err := Format.Parse(p.Canonical(), nil)
	if err != nil || q.Canonical() != want {
		t.Errorf("canonical does not parse to itself: %v", err)
	}
	// ignore_extensions drops the custom options and the extend block.
	ie, err := p.Formatted("ignore_extensions")
	if err != nil || strings.Contains(ie, "(foo)") || strings.Contains(ie, "extend ") || !strings.Contains(ie, "[deprecated = true]") {
		t.Errorf("ignore_extensions:\n%s (%v)", ie, err)
	}
}

// TestNumberFormats is Confluent's testNumberFormats: a normalized number
// is printed as Java's DecimalFormat prints it.
func TestNumberFormats(t *testing.T) {
	p := printer{normalize: true, ctx: newContext()}
	for in, want := range map[string]string{
		"123": "123", "0123": "83", "0x123": "291", "0123.0": "123", "123.0": "123", "123.00": "123",
		"123e1": "1230", "123E1": "1230", "123E+1": "1230", "123E-1": "12.3", "1.23E+3": "1230",
		"12.3E+3": "12300", "123.4E+3": "123400", "123.45E+3": "123450", "123.456E+3": "123456",
		"123.4567E+2": "12345.67", "-5": "-5", "1.23456": "1.235", "inf": "inf",
	} {
		if got := p.number(in); got != want {
			t.Errorf("number(%s) = %s, want %s", in, got, want)
		}
	}
}

// Errors: syntax errors, imports nothing provides, schemas that do not
// link (Confluent's parser alone accepts some of these; see
// docs/schema-formats.md).
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"message M { int32 a = 1 }", "Could not parse Protobuf"},
		{"syntax = \"proto3\"; message M { bad.Message m = 1; }", "bad.Message"},
		{"syntax = \"proto3\"; import \"other.proto\"; message M { Other o = 1; }", "other.proto"},
		{"syntax = \"proto3\"; message M { int32 a = 1; string b = 1; }", "same tag"},
		{"syntax = \"proto3\"; enum E { A = 1; }", "first"},
		{"garbage", "Could not parse Protobuf"},
		{"", ""},
	} {
		_, err := Format.Parse(c.in, nil)
		if c.want == "" {
			// An empty file is a valid proto file.
			if err != nil {
				t.Errorf("%q: %v", c.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// References: imports resolve from references by import path, then from
// the well-known google/protobuf files. Source: Confluent docs "Schema
// references" (Protobuf imports); SchemaDiff's diff examples with imports.
func TestReferences(t *testing.T) {
	refs := []schema.ResolvedReference{{Name: "money.proto", Type: "PROTOBUF",
		Schema:     "syntax = \"proto3\";\npackage shop;\nimport \"cur.proto\";\nmessage Money { int64 cents = 1; Currency cur = 2; }\n",
		References: []schema.ResolvedReference{{Name: "cur.proto", Type: "PROTOBUF", Schema: "syntax = \"proto3\";\npackage shop;\nenum Currency { EUR = 0; USD = 1; }\n"}}}}
	in := "syntax = \"proto3\";\npackage shop;\nimport \"money.proto\";\nimport \"google/protobuf/timestamp.proto\";\n" +
		"message Order {\n  Money total = 1;\n  google.protobuf.Timestamp at = 2;\n}\n"
	p, err := Format.Parse(in, refs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Format.Parse(in, nil); err == nil {
		t.Error("parsed without its references")
	}
	// A change inside the referenced type is seen through the field.
	refs2 := []schema.ResolvedReference{{Name: "money.proto", Type: "PROTOBUF",
		Schema:     "syntax = \"proto3\";\npackage shop;\nimport \"cur.proto\";\nmessage Money { string cents = 1; Currency cur = 2; }\n",
		References: refs[0].References}}
	q, err := Format.Parse(in, refs2)
	if err != nil {
		t.Fatal(err)
	}
	msgs := q.BackwardCompatible(p)
	if len(msgs) != 2 || !strings.Contains(msgs[0], "FIELD_SCALAR_KIND_CHANGED") || !strings.Contains(msgs[0], "#/Money/1") ||
		!strings.Contains(msgs[1], "FIELD_NAMED_TYPE_CHANGED") || !strings.Contains(msgs[1], "#/Order/1") {
		t.Errorf("got %v", msgs)
	}
	if msgs := p.BackwardCompatible(p); len(msgs) != 0 {
		t.Errorf("cannot read itself: %v", msgs)
	}
	if got := p.BackwardCompatible(otherParsed{}); len(got) != 1 || got[0] != "Incompatible because of different schema type" {
		t.Errorf("different type: %v", got)
	}
}

type otherParsed struct{ schema.Parsed }

// The serialized format is a FileDescriptorProto in base64, which parses
// back to the same schema. Source: Confluent testFileDescriptorProto (a
// serialized schema round-trips and is compatible both ways).
func TestSerialized(t *testing.T) {
	in := "syntax = \"proto3\";\npackage a;\n\nmessage M {\n  string name = 1;\n  map<string, int32> counts = 2;\n  oneof v {\n    int64 i = 3;\n    string s = 4;\n  }\n  optional bool flag = 5;\n}\n"
	p, err := Format.Parse(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Formatted("serialized")
	if err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	var fd descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(b, &fd); err != nil {
		t.Fatal(err)
	}
	if fd.GetName() != "default" || fd.GetPackage() != "a" || len(fd.GetMessageType()) != 1 {
		t.Fatalf("descriptor %v", &fd)
	}
	q, err := Format.Parse(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m1, m2 := q.BackwardCompatible(p), p.BackwardCompatible(q); len(m1)+len(m2) != 0 {
		t.Errorf("serialized form not compatible: %v %v", m1, m2)
	}
	// The map comes back as a map field.
	if !strings.Contains(q.Canonical(), "map<string, int32> counts = 2;") {
		t.Errorf("canonical of the descriptor:\n%s", q.Canonical())
	}
	if _, err := p.Formatted("resolved"); err == nil {
		t.Error("PROTOBUF has no resolved format")
	}
}

// TestOptionBytes: a bytes default that is not UTF-8 survives the
// canonical text (as octal escapes) and the serialized descriptor.
func TestOptionBytes(t *testing.T) {
	in := "syntax = \"proto2\";\nmessage M {\n  optional bytes b = 1 [default = \"\\001\\377x\"];\n}\n"
	p, err := Format.Parse(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Canonical(), `[default = "\001\377x"]`) {
		t.Fatalf("canonical:\n%s", p.Canonical())
	}
	q, err := Format.Parse(p.Canonical(), nil)
	if err != nil || q.Canonical() != p.Canonical() {
		t.Fatalf("reparse: %v", err)
	}
}
