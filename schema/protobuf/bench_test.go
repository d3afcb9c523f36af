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
	if testing.Short() {
		t.Skip("allocates 3,000 schemas")
	}
	// 3,000 keeps the suite fast; the figure is per schema.
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
