package recordbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
)

func TestVarintAt(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 100, 8191, -8192, 8192, -8193, 1 << 40, -1 << 40, math.MaxInt64, math.MinInt64} {
		enc := binary.AppendVarint(nil, v)
		want, wn := binary.Varint(enc)
		// at the start, after a prefix, and followed by more bytes (the
		// two-byte fast path needs a second byte to look at)
		for _, pre := range [][]byte{nil, {0xff, 0xff}} {
			for _, post := range [][]byte{nil, {0x00, 0x7f}} {
				p := append(append(append([]byte(nil), pre...), enc...), post...)
				got, next := VarintAt(p, len(pre))
				if got != want || next != len(pre)+wn {
					t.Fatalf("%d pre %x post %x: got %d next %d, want %d next %d", v, pre, post, got, next, want, len(pre)+wn)
				}
				if fv, fn := varint2(p, len(pre)); fn >= 0 && (fv != want || fn != len(pre)+wn) {
					t.Fatalf("%d: fast path got %d next %d, want %d next %d", v, fv, fn, want, len(pre)+wn)
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		p    []byte
		i    int
		fast bool // varint2 decodes it itself
	}{
		{"empty", nil, 0, false},
		{"at end", []byte{0x02}, 1, false},
		{"past end", []byte{0x02}, 2, false},
		{"negative index", []byte{0x02, 0x02}, -1, false},
		{"truncated after one byte", []byte{0x80}, 0, false},
		{"truncated after two bytes", []byte{0x80, 0x80}, 0, false},
		{"truncated at index", []byte{0x02, 0x81, 0x82}, 1, false},
		{"eleven bytes", bytes.Repeat([]byte{0xff}, 11), 0, false},
		{"overflows int64", append(bytes.Repeat([]byte{0xff}, 9), 0x02), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, next := VarintAt(tc.p, tc.i); next != -1 || v != 0 {
				t.Fatalf("VarintAt = %d, %d; want 0, -1", v, next)
			}
			if v, next := varint2(tc.p, tc.i); next != -1 || v != 0 {
				t.Fatalf("varint2 = %d, %d; want 0, -1", v, next)
			}
		})
	}
	// varint2 leaves a one-byte varint in the last byte to VarintAt
	if _, next := varint2([]byte{0x00, 0x04}, 1); next != -1 {
		t.Fatalf("varint2 decoded a last byte (next %d)", next)
	}
	if v, next := VarintAt([]byte{0x00, 0x04}, 1); v != 2 || next != 2 {
		t.Fatalf("VarintAt last byte = %d, %d", v, next)
	}
}

// rawRecord encodes a v2 record: length, attributes, timestamp delta,
// offset delta, a null key, value as its value, no headers.
func rawRecord(tsDelta, offDelta int64, value []byte) []byte {
	r := []byte{0} // attributes
	r = binary.AppendVarint(r, tsDelta)
	r = binary.AppendVarint(r, offDelta)
	r = binary.AppendVarint(r, -1)
	r = binary.AppendVarint(r, int64(len(value)))
	r = append(r, value...)
	r = append(r, 0) // headers
	return append(binary.AppendVarint(nil, int64(len(r))), r...)
}

// fieldsRecord is a record 0 with the given bytes after its offset delta,
// standing in for key, value and headers.
func fieldsRecord(fields ...byte) []byte {
	r := append([]byte{0, 0, 0}, fields...)
	return append(binary.AppendVarint(nil, int64(len(r))), r...)
}

func TestScanRecords(t *testing.T) {
	pad := bytes.Repeat([]byte{'x'}, 3)
	big := bytes.Repeat([]byte{'v'}, 300) // two-byte length
	// a record whose timestamp delta does not end inside it
	tsRunsOn := slices.Concat([]byte{6 << 1, 0}, bytes.Repeat([]byte{0x80}, 5), rawRecord(0, 1, pad))
	// a record whose offset delta does not end inside it
	offRunsOn := slices.Concat([]byte{6 << 1, 0, 0}, bytes.Repeat([]byte{0x80}, 4), rawRecord(0, 1, pad))
	for _, tc := range []struct {
		name    string
		p       []byte
		count   int32
		baseTs  int64
		lo, hi  int64
		err     error
		message string // the error text after the sentinel's
	}{
		{name: "one record", p: rawRecord(0, 0, pad), count: 1, baseTs: 1000, lo: 1000, hi: 1000},
		{name: "three records, unordered timestamps", p: slices.Concat(rawRecord(5, 0, pad), rawRecord(-3, 1, pad), rawRecord(9, 2, pad)), count: 3, baseTs: 100, lo: 97, hi: 109},
		{name: "multi-byte fields", p: slices.Concat(rawRecord(1<<40, 0, big), rawRecord(-70_000, 1, big)), count: 2, baseTs: 1 << 41, lo: 1<<41 - 70_000, hi: 1<<41 + 1<<40},
		{name: "offset delta past 63", p: func() []byte {
			var b []byte
			for i := int64(0); i < 200; i++ {
				b = append(b, rawRecord(i*1000, i, pad)...)
			}
			return b
		}(), count: 200, baseTs: 0, lo: 0, hi: 199_000},
		{name: "fast path resumes after a long field", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(1<<30, 1, pad), rawRecord(-2, 2, pad)), count: 3, baseTs: 10, lo: 8, hi: 10 + 1<<30},
		{name: "no timestamp", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(0, 1, pad)), count: 2, baseTs: -1, lo: math.MaxInt64, hi: -1},
		{name: "negative timestamps are exempt from lo", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(11, 1, pad)), count: 2, baseTs: -1, lo: 10, hi: 10},

		{name: "count mismatch, bytes run out", p: rawRecord(0, 0, pad), count: 2, err: ErrInvalidRecord, message: "record 1: bad length"},
		{name: "huge count", p: rawRecord(0, 0, pad), count: math.MaxInt32, err: ErrInvalidRecord, message: "record 1: bad length"},
		{name: "count mismatch, too many", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(0, 1, pad), bytes.Repeat([]byte{0}, 7)), count: 3, err: ErrInvalidRecord, message: "record 2: bad length"},
		{name: "count mismatch, too few", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(0, 1, pad)), count: 1, err: ErrInvalidRecord, message: "10 bytes after the last record"},
		{name: "truncated length varint", p: slices.Concat(rawRecord(0, 0, pad), bytes.Repeat([]byte{0x80}, 7)), count: 2, err: ErrInvalidRecord, message: "record 1: bad length"},
		{name: "eleven-byte length varint", p: bytes.Repeat([]byte{0xff}, 14), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "negative length", p: slices.Concat([]byte{0x01}, rawRecord(0, 0, pad)), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "large negative length", p: slices.Concat(binary.AppendVarint(nil, -70_000), rawRecord(0, 0, pad)), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "length below minimum", p: slices.Concat([]byte{5 << 1, 0, 0, 0, 0, 0}, pad), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "length past end", p: slices.Concat([]byte{20 << 1}, bytes.Repeat([]byte{0}, 19)), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "timestamp delta runs into next record", p: tsRunsOn, count: 2, err: ErrInvalidRecord, message: "record 0: bad timestamp delta"},
		{name: "offset delta runs into next record", p: offRunsOn, count: 2, err: ErrInvalidRecord, message: "record 0: bad offset delta"},
		{name: "first offset delta not 0", p: slices.Concat(rawRecord(0, 1, pad), rawRecord(0, 2, pad)), count: 2, err: ErrInvalidRecord, message: "record 0 has offset delta 1"},
		{name: "offset delta out of order", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(0, 2, pad), rawRecord(0, 1, pad)), count: 3, err: ErrInvalidRecord, message: "record 1 has offset delta 2"},
		{name: "offset delta repeated", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(0, 0, pad)), count: 2, err: ErrInvalidRecord, message: "record 1 has offset delta 0"},
		{name: "error after the fast path resumed", p: slices.Concat(rawRecord(0, 0, pad), rawRecord(1<<30, 1, pad), rawRecord(2, 2, pad), rawRecord(3, 5, pad)), count: 4, err: ErrInvalidRecord, message: "record 3 has offset delta 5"},
		{name: "negative offset delta", p: rawRecord(0, -1, pad), count: 1, err: ErrInvalidRecord, message: "record 0 has offset delta -1"},
		{name: "null key and value", p: fieldsRecord(1, 1, 0), count: 1, baseTs: 5, lo: 5, hi: 5},
		{name: "negative lengths other than -1 are null too", p: fieldsRecord(3, 5, 0), count: 1, baseTs: 5, lo: 5, hi: 5},
		{name: "headers", p: fieldsRecord(2, 'k', 2, 'v', 4, 2, 'a', 1, 2, 'b', 4, 'x', 'y'), count: 1, baseTs: 5, lo: 5, hi: 5},
		{name: "key past the record", p: fieldsRecord(20, 0, 0), count: 1, err: ErrInvalidRecord, message: "record 0: bad key length"},
		{name: "value past the record", p: fieldsRecord(1, 20, 0), count: 1, err: ErrInvalidRecord, message: "record 0: bad value length"},
		{name: "no header count", p: fieldsRecord(1, 2, 'v'), count: 1, err: ErrInvalidRecord, message: "record 0: bad header count"},
		{name: "negative header count", p: fieldsRecord(1, 1, 1), count: 1, err: ErrInvalidRecord, message: "record 0: bad header count"},
		{name: "more headers than bytes", p: fieldsRecord(1, 1, 8, 0, 0), count: 1, err: ErrInvalidRecord, message: "record 0: bad header count"},
		{name: "null header key", p: fieldsRecord(1, 1, 2, 1, 1), count: 1, err: ErrInvalidRecord, message: "record 0: header 0: bad key length"},
		{name: "header value past the record", p: fieldsRecord(1, 1, 2, 0, 10), count: 1, err: ErrInvalidRecord, message: "record 0: header 0: bad value length"},
		{name: "bytes left in the record", p: fieldsRecord(1, 1, 0, 7, 7), count: 1, err: ErrInvalidRecord, message: "record 0: its fields take 6 bytes of its 8"},
		{name: "value into the next record", p: slices.Concat(fieldsRecord(1, 8, 0), rawRecord(0, 1, pad)), count: 2, err: ErrInvalidRecord, message: "record 0: bad value length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, err := ScanRecords(tc.p, tc.count, tc.baseTs)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || err.Error() != tc.err.Error()+": "+tc.message {
					t.Fatalf("err %v, want %v: %s", err, tc.err, tc.message)
				}
				return
			}
			if err != nil || lo != tc.lo || hi != tc.hi {
				t.Fatalf("got lo %d hi %d err %v, want lo %d hi %d", lo, hi, err, tc.lo, tc.hi)
			}
		})
	}
}
