// Package javaorder reproduces the iteration order of Java's HashMap and
// HashSet, which decides the order in which Confluent's schema diffs walk
// property names, message names and enum tags, and so the order of the
// messages a compatibility check answers.
//
// A HashMap's iteration is bucket by bucket (hash spread over the table
// size), entries of one bucket in insertion order; resizing keeps that
// relative order. Bins never treeify for the handful of keys a schema has
// (Java needs eight collisions in one bucket and a table of 64).
package javaorder

import (
	"sort"
	"unicode/utf16"
)

// StringHash is Java's String.hashCode.
func StringHash(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

// IntHash is Integer.hashCode.
func IntHash(i int32) int32 { return i }

func spread(h int32) uint32 { u := uint32(h); return u ^ u>>16 }

// tableSizeFor is HashMap.tableSizeFor.
func tableSizeFor(c int) int {
	n := 1
	for n < c {
		n <<= 1
	}
	if n < 1 {
		n = 1
	}
	return n
}

// Set is a Java HashSet (or a HashMap's key set) of keys K.
type Set[K comparable] struct {
	hash    func(K) int32
	cap     int
	size    int
	buckets [][]K
}

// NewSet is new HashSet<>() / new HashMap<>(): sixteen buckets.
func NewSet[K comparable](hash func(K) int32) *Set[K] {
	return &Set[K]{hash: hash, cap: 16, buckets: make([][]K, 16)}
}

// NewSetFrom is new HashSet<>(collection): sized for the collection, then
// filled in its order.
func NewSetFrom[K comparable](hash func(K) int32, from []K) *Set[K] {
	c := int(float32(len(from))/0.75) + 1
	if c < 16 {
		c = 16
	}
	s := &Set[K]{hash: hash, cap: tableSizeFor(c)}
	s.buckets = make([][]K, s.cap)
	s.AddAll(from)
	return s
}

// NewMapCopy is new HashMap<>(map) with len(from) entries: sized for them,
// then filled in the source's order.
func NewMapCopy[K comparable](hash func(K) int32, from []K) *Set[K] {
	if len(from) == 0 {
		return NewSet(hash)
	}
	t := int(float32(len(from))/0.75 + 1)
	s := &Set[K]{hash: hash, cap: tableSizeFor(t)}
	s.buckets = make([][]K, s.cap)
	s.AddAll(from)
	return s
}

// Add inserts k if absent.
func (s *Set[K]) Add(k K) {
	i := int(spread(s.hash(k)) & uint32(s.cap-1))
	for _, x := range s.buckets[i] {
		if x == k {
			return
		}
	}
	s.buckets[i] = append(s.buckets[i], k)
	s.size++
	if float64(s.size) > float64(s.cap)*0.75 {
		s.resize()
	}
}

// AddAll adds ks in order.
func (s *Set[K]) AddAll(ks []K) {
	for _, k := range ks {
		s.Add(k)
	}
}

func (s *Set[K]) resize() {
	nc := s.cap * 2
	nb := make([][]K, nc)
	for _, b := range s.buckets {
		for _, k := range b {
			i := int(spread(s.hash(k)) & uint32(nc-1))
			nb[i] = append(nb[i], k)
		}
	}
	s.cap, s.buckets = nc, nb
}

// Keys returns the keys in iteration order.
func (s *Set[K]) Keys() []K {
	out := make([]K, 0, s.size)
	for _, b := range s.buckets {
		out = append(out, b...)
	}
	return out
}

// Strings is the iteration order of a HashSet<String> built by
// new HashSet<>(first) then addAll(second), Confluent's union of two key
// sets.
func Strings(first, second []string) []string {
	s := NewSetFrom(StringHash, first)
	s.AddAll(second)
	return s.Keys()
}

// Less is String.compareTo(...) < 0: comparison by UTF-16 code units,
// which differs from Go's byte order only for characters beyond U+FFFF
// against U+E000..U+FFFF.
func Less(a, b string) bool {
	ascii := true
	for i := 0; i < len(a) && ascii; i++ {
		ascii = a[i] < 0x80
	}
	for i := 0; i < len(b) && ascii; i++ {
		ascii = b[i] < 0x80
	}
	if ascii {
		return a < b
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// SortedSet is a Java TreeSet<String> of list, as a new slice: Less's
// order, duplicates dropped.
func SortedSet(list []string) []string {
	s := append([]string(nil), list...)
	sort.Slice(s, func(i, j int) bool { return Less(s[i], s[j]) })
	w := 0
	for i, x := range s {
		if i == 0 || x != s[w-1] {
			s[w] = x
			w++
		}
	}
	return s[:w]
}
