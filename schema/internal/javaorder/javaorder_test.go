package javaorder

import (
	"slices"
	"testing"
)

// Expected orders are what Java 17 prints for the same operations (String
// hash codes are specified by the JLS; HashMap's layout by its source).
func TestStringOrder(t *testing.T) {
	if h := StringHash("hello"); h != 99162322 {
		t.Fatalf("hash(hello) = %d", h)
	}
	if h := StringHash("polygenelubricants"); h != -2147483648 {
		t.Fatalf("hash overflow: %d", h)
	}
	// "Aa" and "BB" collide (2112): insertion order within the bucket.
	if got := Strings([]string{"BB", "Aa"}, nil); !slices.Equal(got, []string{"BB", "Aa"}) {
		t.Fatalf("collision order %v", got)
	}
	// Single letters hash to their code points: bucket order a(97&15=1), b, c.
	if got := Strings([]string{"c", "a"}, []string{"b"}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("got %v", got)
	}
	// 'q' (113) lands in bucket 1 of 16 and before 'b' (98, bucket 2).
	if got := Strings([]string{"b", "q"}, nil); !slices.Equal(got, []string{"q", "b"}) {
		t.Fatalf("got %v", got)
	}
}

func TestResizeKeepsBucketOrder(t *testing.T) {
	s := NewSet(IntHash)
	var in []int32
	for i := int32(40); i >= 0; i-- {
		in = append(in, i)
		s.Add(i)
	}
	// Small non-negative Integers iterate in ascending order once the table
	// is larger than the largest key.
	got := s.Keys()
	if len(got) != 41 || !slices.IsSorted(got) {
		t.Fatalf("got %v", got)
	}
	// In a 16-bucket table 17 and 1 share a bucket: insertion order.
	small := NewSet(IntHash)
	small.AddAll([]int32{17, 1, 2})
	if got := small.Keys(); !slices.Equal(got, []int32{17, 1, 2}) {
		t.Fatalf("got %v", got)
	}
}
