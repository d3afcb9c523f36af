package raftmeta

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// Primitive encoding shared by commands, snapshots and the raft log value:
// unsigned integers are uvarints, signed ones zig-zag varints, byte strings a
// uvarint length then the bytes, maps a uvarint count then sorted key/value
// pairs (sorted so that equal maps encode to equal bytes).

// reader decodes primitives from b. The first failure sticks in err and every
// later call returns a zero value, so decoders check err once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("truncated or invalid %s: %w", what, ErrCorrupt)
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) < 1 {
		r.fail("byte")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int32() int32 {
	v := r.varint()
	if v < -1<<31 || v > 1<<31-1 {
		r.fail("int32")
		return 0
	}
	return int32(v)
}

func (r *reader) int16() int16 {
	v := r.varint()
	if v < -1<<15 || v > 1<<15-1 {
		r.fail("int16")
		return 0
	}
	return int16(v)
}

// count reads a collection length and rejects lengths that cannot fit in the
// remaining input (each element takes at least minSize bytes), so garbage
// never makes us allocate gigabytes.
func (r *reader) count(minSize int) int {
	n := r.uvarint()
	if r.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(len(r.b)/minSize) {
		r.fail("length")
		return 0
	}
	return int(n)
}

// bytes returns a sub-slice of the input (not a copy).
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("byte string")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string { return string(r.bytes()) }

func (r *reader) uuid() UUID {
	var u UUID
	if r.err != nil || len(r.b) < len(u) {
		r.fail("uuid")
		return u
	}
	copy(u[:], r.b)
	r.b = r.b[len(u):]
	return u
}

func (r *reader) int32s() []int32 {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = r.int32()
	}
	return out
}

func (r *reader) strings() []string {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.string()
	}
	return out
}

// stringMap decodes a map; nil when empty. Keys must be strictly increasing,
// which both keeps the encoding canonical and rejects duplicates.
func (r *reader) stringMap() map[string]string {
	n := r.count(2)
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	prev := ""
	for i := 0; i < n; i++ {
		k := r.string()
		v := r.string()
		if r.err != nil {
			return nil
		}
		if i > 0 && k <= prev {
			r.fail("map key order")
			return nil
		}
		prev = k
		m[k] = v
	}
	return m
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes: %w", len(r.b), ErrCorrupt)
	}
	return r.err
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, v string) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func appendInt32s(b []byte, v []int32) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, x := range v {
		b = binary.AppendVarint(b, int64(x))
	}
	return b
}

func appendStrings(b []byte, v []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, s := range v {
		b = appendString(b, s)
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func appendStringMap(b []byte, m map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	for _, k := range sortedKeys(m) {
		b = appendString(b, k)
		b = appendString(b, m[k])
	}
	return b
}
