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

// TestParseTable: proto2, proto3 and editions constructs (messages, nested
// types, enums, oneofs, maps, groups, extensions, reserved, standard and
// custom options with aggregate values, services and streams, imports of
// the well-known files, public and weak, packages and name resolution),
// each accepted or rejected as bufbuild/protocompile (which this package
// linked before its own parser and linker) and protoc decide.
func TestParseTable(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"syntax = \"proto2\";\npackage p;\nmessage M { optional group G = 1 { optional int32 a = 1;\n} repeated group H = 2 { required string s = 1;\nmessage N { optional int32 x = 1;\n} } }", true},
		{"syntax = \"proto2\";\nmessage M { optional group g = 1 { optional int32 a = 1;\n} }", false},
		{"syntax = \"proto3\";\nmessage M { optional group G = 1 { int32 a = 1;\n} }", false},
		{"syntax = \"proto2\";\nmessage M { extensions 100 to 199;\nextensions 1000 to max;\n} extend M { optional int32 e = 100;\nrepeated string f = 150;\n}", true},
		{"syntax = \"proto2\";\nmessage M { extensions 100 to 199;\n} extend M { optional int32 e = 200;\n}", false},
		{"syntax = \"proto2\";\nmessage M { extensions 100 to 199;\n} extend M { optional int32 e = 100;\noptional int32 f = 100;\n}", false},
		{"syntax = \"proto2\";\nmessage M { extensions 100 to 199;\nmessage N { extend M { optional N n = 101;\n} } }", true},
		{"syntax = \"proto2\";\nmessage M { extensions 100 to 199;\n} extend M { optional group Ext = 120 { optional int32 q = 1;\n} }", true},
		{"syntax = \"proto3\";\nmessage M { } extend M { int32 e = 100;\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FieldOptions { string my_opt = 50001;\n} message M { string a = 1 [(my_opt) = \"x\"];\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FieldOptions { string my_opt = 50001;\n} message M { string a = 1 [(my_opt) = 5];\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MessageOptions { int32 mo = 50001;\n} message M { option (mo) = -5;\nstring a = 1;\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MessageOptions { uint32 mo = 50001;\n} message M { option (mo) = -5;\nstring a = 1;\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MessageOptions { int32 mo = 50001;\n} message M { option (mo) = 5000000000;\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MessageOptions { int32 mo = 50001;\n} message M { option (mo) = 1;\noption (mo) = 2;\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FileOptions { double d = 50001;\nfloat f = 50002;\nsint32 s = 50003;\nsint64 s64 = 50004;\nfixed32 f32 = 50005;\nsfixed64 sf = 50006;\nbool b = 50007;\nbytes by = 50008;\n} option (d) = -inf;\noption (f) = 1.5;\noption (s) = -3;\noption (s64) = -4;\noption (f32) = 0x10;\noption (sf) = -1;\noption (b) = true;\noption (by) = \"\\001\\002\";", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nmessage Opt { string name = 1;\nint32 n = 2;\nrepeated string tags = 3;\nOpt child = 4;\nE e = 5;\n} enum E { Z = 0;\nO = 1;\n} extend google.protobuf.MessageOptions { Opt opt = 50001;\n} message M { option (opt) = { name: \"a\" n: 3 tags: [\"x\", \"y\"] tags: \"z\" child { name: \"c\" } e: O };\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nmessage Opt { string name = 1;\nint32 n = 2;\n} extend google.protobuf.MessageOptions { Opt opt = 50001;\n} message M { option (opt).name = \"a\";\noption (opt).n = 2;\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nmessage Opt { string name = 1;\nint32 n = 2;\n} extend google.protobuf.MessageOptions { Opt opt = 50001;\n} message M { option (opt) = { nope: 1 };\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nmessage Opt { string name = 1;\n} extend google.protobuf.MessageOptions { Opt opt = 50001;\n} message M { option (opt) = { name: 1 };\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nenum E { Z = 0;\n} extend google.protobuf.EnumValueOptions { string ev = 50001;\n} extend google.protobuf.EnumOptions { bool eo = 50002;\n} enum F { option (eo) = true;\nA = 0 [(ev) = \"a\"];\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.ServiceOptions { string so = 50001;\n} extend google.protobuf.MethodOptions { string mo = 50002;\n} message Req {} service S { option (so) = \"s\";\nrpc Get (Req) returns (stream Req) { option (mo) = \"m\";\n} rpc Put (stream Req) returns (Req);\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.OneofOptions { string oo = 50001;\n} message M { oneof o { option (oo) = \"x\";\nint32 a = 1;\nstring b = 2;\n} }", true},
		{"syntax = \"proto2\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.ExtensionRangeOptions { optional string ro = 50001;\n} message M { extensions 100 to 200 [(ro) = \"r\"];\n}", true},
		{"syntax = \"proto3\";\nmessage M { string a = 1 [(nope) = \"x\"];\n}", false},
		{"syntax = \"proto3\";\noption nope = 1;", false},
		{"syntax = \"proto3\";\noption java_package = 5;", false},
		{"syntax = \"proto3\";\noption optimize_for = FAST;", false},
		{"syntax = \"proto3\";\noption optimize_for = SPEED;\noption java_multiple_files = true;\noption deprecated = true;", true},
		{"syntax = \"proto3\";\nmessage M { option deprecated = true;\noption no_standard_descriptor_accessor = false;\nint32 a = 1 [deprecated = true, packed = false];\n}", true},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1 [packed = true];\n}", false},
		{"syntax = \"proto3\";\nmessage M { repeated int32 a = 1 [packed = true];\nrepeated string s = 2 [packed = true];\n}", false},
		{"syntax = \"proto3\";\nmessage M { repeated int32 a = 1 [packed = true];\n}", true},
		{"syntax = \"proto3\";\nmessage M { int64 a = 1 [jstype = JS_STRING];\nint32 b = 2 [jstype = JS_NUMBER];\n}", false},
		{"syntax = \"proto3\";\nmessage M { int64 a = 1 [jstype = JS_STRING];\n}", true},
		{"syntax = \"proto3\";\nmessage M { string a = 1 [ctype = CORD];\nbytes b = 2 [ctype = STRING_PIECE];\n}", true},
		{"syntax = \"proto3\";\nmessage M { M a = 1 [lazy = true];\n}", true},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1 [lazy = true];\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional int32 a = 1 [default = 0x10];\noptional int64 b = 2 [default = -9223372036854775808];\noptional uint32 c = 3 [default = 4294967295];\noptional double d = 4 [default = 1e10];\noptional float f = 5 [default = -inf];\noptional bool g = 6 [default = true];\noptional string h = 7 [default = \"a\\nb\"];\noptional bytes i = 8 [default = \"\\000\\xff\"];\noptional E e = 9 [default = B];\noptional double n = 10 [default = nan];\noptional float x = 11 [default = 0.1];\noptional double y = 12 [default = 3];\noptional sint32 z = 13 [default = -017];\n} enum E { A = 1;\nB = 2;\n}", true},
		{"syntax = \"proto2\";\nmessage M { optional int32 a = 1 [default = 1.5];\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional uint32 a = 1 [default = -1];\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional int32 a = 1 [default = 2147483648];\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional E e = 1 [default = C];\n} enum E { A = 1;\n}", false},
		{"syntax = \"proto2\";\nmessage M { repeated int32 a = 1 [default = 1];\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional M a = 1 [default = 1];\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional bool a = 1 [default = 1];\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional string a = 1 [default = x];\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1 [default = 1];\n}", false},
		{"syntax = \"proto3\";\nmessage M { required int32 a = 1;\n}", false},
		{"syntax = \"proto2\";\nmessage M { required int32 a = 1;\noptional int32 b = 2 [json_name = \"bee\"];\n}", true},
		{"syntax = \"proto3\";\nmessage M { int32 a_b = 1;\nint32 aB = 2;\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1 [json_name = \"b\"];\nint32 b = 2;\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional int32 a_b = 1;\noptional int32 aB = 2;\n}", true},
		{"syntax = \"proto3\";\nmessage M { reserved 2, 15, 9 to 11;\nreserved \"foo\", \"bar\";\nint32 a = 1;\n}", true},
		{"syntax = \"proto3\";\nmessage M { reserved 2;\nint32 a = 2;\n}", false},
		{"syntax = \"proto3\";\nmessage M { reserved \"a\";\nint32 a = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { reserved 1 to 5;\nreserved 3;\n}", false},
		{"syntax = \"proto3\";\nmessage M { reserved 5 to 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { reserved 1 to max;\n}", true},
		{"syntax = \"proto3\";\nmessage M { reserved foo;\n}", false},
		{"syntax = \"proto3\";\nmessage M { reserved \"foo bar\";\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 19000;\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 536870911;\n}", true},
		{"syntax = \"proto3\";\nmessage M { int32 a = 536870912;\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 0;\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = -1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 0x10;\nint32 b = 010;\n}", true},
		{"syntax = \"proto3\";\nenum E { A = 0;\nB = -1;\nC = 0x7fffffff;\nD = -2147483648;\n}", true},
		{"syntax = \"proto3\";\nenum E { A = 0;\nB = 2147483648;\n}", false},
		{"syntax = \"proto3\";\nenum E { A = 0;\nB = 0;\n}", false},
		{"syntax = \"proto3\";\nenum E { option allow_alias = true;\nA = 0;\nB = 1;\n}", false},
		{"syntax = \"proto3\";\nenum E { option allow_alias = false;\nA = 0;\nB = 1;\n}", true},
		{"syntax = \"proto3\";\nenum E { A = 0;\n} enum F { A = 0;\n}", false},
		{"syntax = \"proto3\";\nmessage M { enum E { A = 0;\n} enum F { B = 0;\n} int32 A = 1;\n}", false},
		{"syntax = \"proto3\";\nenum E { reserved 1, 5 to 10, 20 to max;\nreserved \"X\";\nA = 0;\n}", true},
		{"syntax = \"proto3\";\nenum E { reserved 1;\nA = 0;\nB = 1;\n}", false},
		{"syntax = \"proto3\";\nenum E { reserved \"B\";\nA = 0;\nB = 1;\n}", false},
		{"syntax = \"proto3\";\nenum E { reserved -5 to -1;\nA = 0;\n}", true},
		{"syntax = \"proto3\";\nenum E { E_A = 0;\nA = 1;\n}", false},
		{"syntax = \"proto3\";\nenum Foo { FOO_BAR = 0;\nBAR = 1;\n}", false},
		{"syntax = \"proto3\";\nenum Foo { FOO_UNKNOWN = 0;\nFOO_BAR = 1;\nBAZ = 2;\n}", true},
		{"syntax = \"proto3\";\nenum E {}", false},
		{"syntax = \"proto2\";\nenum E { B = 1;\n}", true},
		{"syntax = \"proto2\";\nenum E { B = 1;\n} message M { optional E e = 1;\n}", true},
		{"syntax = \"proto3\";\nimport \"p2.proto\";\nmessage M { E e = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { map<string, M> m = 1;\nmap<int32, string> n = 2;\nmap<bool, bytes> o = 3;\nmap<sfixed64, E> p = 4;\n} enum E { Z = 0;\n}", true},
		{"syntax = \"proto3\";\nmessage M { map<float, string> m = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { map<bytes, string> m = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { map<E, string> m = 1;\n} enum E { Z = 0;\n}", false},
		{"syntax = \"proto3\";\nmessage M { map<M, string> m = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { map<string, map<string, string>> m = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { repeated map<string, string> m = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { oneof o { map<string, string> m = 1;\n} }", false},
		{"syntax = \"proto3\";\nmessage M { map<string, string> foo = 1;\nmessage FooEntry {} }", false},
		{"syntax = \"proto3\";\nmessage M { map<string, string> foo_bar = 1;\nint32 x = 2;\nmessage Q {} map<int32, int32> baz = 3;\n}", true},
		{"syntax = \"proto3\";\nmessage M { oneof o { int32 a = 1;\nstring b = 2;\n} oneof p { M m = 3;\n} int32 c = 4;\n}", true},
		{"syntax = \"proto3\";\nmessage M { oneof o { } }", false},
		{"syntax = \"proto3\";\nmessage M { oneof o { repeated int32 a = 1;\n} }", false},
		{"syntax = \"proto3\";\nmessage M { oneof o { optional int32 a = 1;\n} }", false},
		{"syntax = \"proto3\";\nmessage M { oneof a { int32 b = 1;\n} int32 a = 2;\n}", false},
		{"syntax = \"proto3\";\nmessage M { optional int32 a = 1;\noptional string b = 2;\noneof c { int32 d = 3;\n} optional M e = 4;\n}", true},
		{"syntax = \"proto3\";\nmessage M { optional int32 a = 1;\nint32 _a = 2;\n}", true},
		{"syntax = \"proto3\";\nmessage M { optional int32 a = 1;\noneof _a { int32 b = 2;\n} }", true},
		{"syntax = \"proto3\";\npackage a.b.c;\nmessage M { message N { message O {} } N.O o = 1;\n.a.b.c.M.N n = 2;\nc.M m = 3;\nb.c.M m2 = 4;\na.b.c.M m3 = 5;\n}", true},
		{"syntax = \"proto3\";\npackage a.b;\nmessage M { b.M x = 1;\n} message b {}", false},
		{"syntax = \"proto3\";\npackage a.b;\nmessage b { } message M { b.M x = 1;\n}", false},
		{"syntax = \"proto3\";\npackage a.b;\nmessage M { M.N x = 1;\nmessage N {} }", true},
		{"syntax = \"proto3\";\nmessage M { int32 x = 1;\nx.y z = 2;\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 x = 1;\n} message N { M.x y = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 M = 1;\n}", true},
		{"syntax = \"proto3\";\nmessage M { message N {} N N = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M {} message M {}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1;\nint32 a = 2;\n}", false},
		{"syntax = \"proto3\";\nmessage M { message a {} int32 a = 1;\n}", false},
		{"syntax = \"proto3\";\npackage M;\nmessage M {}", true},
		{"syntax = \"proto3\";\npackage foo.bar;\nmessage foo {}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/timestamp.proto\";\nimport \"google/protobuf/any.proto\";\nimport \"google/protobuf/struct.proto\";\nimport \"google/protobuf/wrappers.proto\";\nimport \"google/protobuf/duration.proto\";\nimport \"google/protobuf/empty.proto\";\nimport \"google/protobuf/field_mask.proto\";\nmessage M { google.protobuf.Timestamp t = 1;\ngoogle.protobuf.Any a = 2;\ngoogle.protobuf.Struct s = 3;\ngoogle.protobuf.StringValue w = 4;\ngoogle.protobuf.Duration d = 5;\ngoogle.protobuf.Empty e = 6;\ngoogle.protobuf.FieldMask f = 7;\ngoogle.protobuf.Value v = 8;\ngoogle.protobuf.NullValue n = 9;\n}", true},
		{"syntax = \"proto3\";\nmessage M { google.protobuf.Timestamp t = 1;\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/nope.proto\";", false},
		{"syntax = \"proto3\";\nimport public \"google/protobuf/timestamp.proto\";\nmessage M { google.protobuf.Timestamp t = 1;\n}", true},
		{"syntax = \"proto3\";\nimport weak \"google/protobuf/timestamp.proto\";\nmessage M { google.protobuf.Timestamp t = 1;\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/api.proto\";\nmessage M { google.protobuf.Api a = 1;\ngoogle.protobuf.Method m = 2;\ngoogle.protobuf.Type t = 3;\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/timestamp.proto\";\nimport \"google/protobuf/timestamp.proto\";", false},
		{"syntax = \"proto3\";\npackage p;\nservice S { rpc A (M) returns (M);\nrpc B (stream M) returns (stream M) {} rpc C (.p.M) returns (M) { option deprecated = true;\n} } message M {}", true},
		{"syntax = \"proto3\";\nservice S { rpc A (M) returns (M);\n} enum M { Z = 0;\n}", false},
		{"syntax = \"proto3\";\nservice S { rpc A (N) returns (N);\n}", false},
		{"syntax = \"proto3\";\nservice S { rpc A (M) returns (M);\nrpc A (M) returns (M);\n} message M {}", false},
		{"syntax = \"proto3\";\nservice S { option (foo) = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M {} service S { rpc A (M) returns (M) { option idempotency_level = IDEMPOTENT;\n} }", true},
		{"syntax = \"proto3\";\nmessage stream {} service S { rpc A (stream) returns (stream stream);\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1;\n};\n;\nenum E { A = 0;\n;\n}", true},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1 [deprecated = true,];\n}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1 [];\n}", false},
		{"syntax = \"proto3\";;\nmessage M {}", true},
		{"syntax = \"proto4\";", false},
		{"syntax = 'proto3';\nmessage M { string s = 1 [json_name = 'x'];\n}", true},
		{"syntax = \"proto\" \"3\";\nmessage M {}", true},
		{"package a;\nsyntax = \"proto3\";", false},
		{"syntax = \"proto3\";\npackage a;\npackage b;", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1 } ", false},
		{"syntax = \"proto3\";\nmessage M { int32 1a = 1;\n}", false},
		{"syntax = \"proto3\";\nmessage M { string s = 1 [json_name = \"a\\u00e9b\\x41\\101\\?\"];\n}", true},
		{"syntax = \"proto3\";\nmessage M { string s = 1 [json_name = \"a\\zb\"];\n}", false},
		{"syntax = \"proto3\";\n/* comment */ message M { // line", false},
		{" int32 a = 1;\n/* x */ }", false},
		{"syntax = \"proto3\";\n/* unterminated message M {}", false},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1;\n} // trailing", true},
		{"syntax = \"proto3\";\nmessage M { float f = 1 [(x) = 1.5e3];\n}", false},
		{"edition = \"2023\";\nmessage M { int32 a = 1;\nstring b = 2 [features.field_presence = IMPLICIT];\nrepeated int32 c = 3;\n}", true},
		{"edition = \"2023\";\noption features.field_presence = EXPLICIT;\nmessage M { int32 a = 1;\n}", true},
		{"edition = \"2023\";\nmessage M { optional int32 a = 1;\n}", false},
		{"edition = \"2023\";\nmessage M { reserved foo, bar;\nint32 a = 1;\n}", true},
		{"edition = \"2023\";\nmessage M { reserved \"foo\";\n}", false},
		{"edition = \"2023\";\nenum E { A = 1;\nB = 2;\n}", false},
		{"edition = \"2023\";\nmessage M { message N { int32 x = 1;\n} N n = 1 [features.message_encoding = DELIMITED];\n}", true},
		{"edition = \"2024\";\nmessage M { int32 a = 1;\n}", false},
		{"edition = \"2022\";\nmessage M { int32 a = 1;\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional int32 a = 1;\nextensions 2 to 5;\noptional int32 b = 3;\n}", false},
		{"syntax = \"proto2\";\nmessage M { extensions 2 to 5;\nreserved 4 to 8;\n}", false},
		{"syntax = \"proto2\";\nmessage M { extensions 2 to 5;\nextensions 5;\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional int32 a = 1;\n} extend M { optional int32 b = 2;\n}", false},
		{"syntax = \"proto2\";\nmessage M { extensions 100 to 200;\n} message N { extend M { required int32 q = 100;\n} }", false},
		{"syntax = \"proto2\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FileOptions { repeated string tags = 50001;\n} option (tags) = \"a\";\noption (tags) = \"b\";", true},
		{"syntax = \"proto2\";\nimport \"google/protobuf/descriptor.proto\";\nmessage Rules { optional int32 min = 1;\noptional Inner in = 2;\nmessage Inner { optional string s = 1;\n} extensions 100 to 200;\n} extend Rules { optional int32 ext = 100;\n} extend google.protobuf.FieldOptions { optional Rules rules = 50001;\n} message M { optional int32 a = 1 [(rules).min = 1, (rules).in.s = \"x\", (rules).(ext) = 5];\noptional int32 b = 2 [(rules) = { min: 2 [ext]: 3 in < s: \"y\" > }];\n}", true},
		{"syntax = \"proto2\";\nimport \"google/protobuf/descriptor.proto\";\nimport \"google/protobuf/any.proto\";\nmessage V { optional string s = 1;\n} extend google.protobuf.FileOptions { optional google.protobuf.Any anyopt = 50001;\n} option (anyopt) = { [type.googleapis.com/V] { s: \"x\" } };", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FieldOptions { string a = 50001;\n} extend google.protobuf.FieldOptions { string b = 50001;\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MessageOptions { string mo = 50001;\n} message M { option (.mo) = \"x\";\n}", true},
		{"syntax = \"proto3\";\npackage p;\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MessageOptions { string mo = 50001;\n} message M { option (p.mo) = \"x\";\noption (.p.mo) = \"y\";\n}", false},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MessageOptions { string mo = 50001;\n} message M { string a = 1 [(mo) = \"x\"];\n}", false},
		{"syntax = \"proto3\";\nmessage M { option map_entry = true;\n}", false},
		{"syntax = \"proto3\";\noption uninterpreted_option = 1;", false},
		{"syntax = \"proto3\";\nmessage M { M.N.O x = 1;\nmessage N { message O {} } }", true},
		{"syntax = \"proto3\";\nmessage M { .M.N x = 1;\nmessage N {} }", true},
		{"syntax = \"proto3\";\nmessage M { .N x = 1;\nmessage N {} }", false},
		{"syntax = \"proto3\";\nmessage A { message B { message C {} } } message D { A.B.C c = 1;\nB.C x = 2;\n}", false},
		{"syntax = \"proto3\";\nmessage Outer { message Inner {} } message Other { message Outer {} Outer.Inner i = 1;\n}", false},
		{"syntax = \"proto2\";\nmessage M { optional group G = 1 [deprecated = true] { optional int32 a = 1;\n} }", true},
		{"syntax = \"proto2\";\nmessage M { oneof o { group G = 1 { optional int32 a = 1;\n} } }", true},
		{"syntax = \"proto3\";\nmessage M { int32 a = 1;\nmessage N { int32 b = 1;\n} oneof o { N n = 2;\n} repeated N ns = 3;\nmap<string, N> nm = 4;\n}", true},
		{"syntax = \"proto3\";\nmessage M { string s = 1 [json_name = \"id\"];\nstring id = 2;\n}", false},
		{"syntax = \"proto3\";\nmessage M { double d = 1;\nfloat f = 2;\nint64 i64 = 3;\nuint64 u64 = 4;\nint32 i32 = 5;\nfixed64 f64 = 6;\nfixed32 f32 = 7;\nbool b = 8;\nstring s = 9;\nbytes by = 12;\nuint32 u32 = 13;\nsfixed32 sf32 = 15;\nsfixed64 sf64 = 16;\nsint32 si32 = 17;\nsint64 si64 = 18;\n}", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FieldOptions {\n  string b = 50002;\n  string a = 50001;\n}\nmessage M {\n  string x = 1 [(b) = \"b\", deprecated = true, (a) = \"a\"];\n}\n", true},
		{"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nmessage O { oneof k { string s = 1; int32 i = 2; } int32 z = 3; }\nextend google.protobuf.MessageOptions {\n  O o = 50002;\n}\nmessage M {\n  option (o) = { s: \"x\" z: 1 };\n  option deprecated = true;\n}\n", true},
	} {
		_, err := Format.Parse(c.in, nil)
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.in, err, c.ok)
		}
	}
}
