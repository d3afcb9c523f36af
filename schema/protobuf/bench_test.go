package protobuf

import (
	"fmt"
	"testing"

	"sharq/schema/internal/compattest"
)

// sample is a typical registered value schema: a dozen fields, a nested
// message, an enum, a oneof, a map, a well-known import.
func sample(i int) string {
	return fmt.Sprintf(`syntax = "proto3";
package com.example.shop;

import "google/protobuf/timestamp.proto";

option java_package = "com.example.shop";
option java_multiple_files = true;

message Order%d {
  string id = 1;
  int64 customer = 2;
  google.protobuf.Timestamp placed_at = 3;
  Status status = 4;
  string total = 5;
  optional string coupon = 6;
  Address address = 7;
  repeated Line lines = 8;
  map<string, string> attributes = 9;
  bool gift = 10;
  oneof contact {
    string email = 11;
    string phone = 12;
  }

  message Address {
    string street = 1;
    string city = 2;
    string zip = 3;
    string country = 4;
  }
  message Line {
    string sku = 1;
    int32 qty = 2;
    double price = 3;
  }
  enum Status {
    NEW = 0;
    PAID = 1;
    SHIPPED = 2;
    CANCELLED = 3;
  }
}
`, i)
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
