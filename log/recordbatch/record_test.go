package recordbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// header is a test record header.
type header struct{ key, value []byte }

// encodeKmsg encodes a record with franz-go's encoder, the reference the
// reader and AppendRecord are checked against.
func encodeKmsg(tsDelta int64, offDelta int32, key, value []byte, hs ...header) []byte {
	r := kmsg.Record{TimestampDelta64: tsDelta, OffsetDelta: offDelta, Key: key, Value: value}
	for _, h := range hs {
		r.Headers = append(r.Headers, kmsg.Header{Key: string(h.key), Value: h.value})
	}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	return r.AppendTo(nil)
}

func TestReader(t *testing.T) {
	type want struct {
		ts      int64
		off     int32
		key     []byte
		value   []byte
		headers []header
	}
	k, v := []byte("key"), []byte("value")
	empty := []byte{}
	for _, tc := range []struct {
		name    string
		p       []byte
		count   int32
		want    []want
		message string // the error text after the sentinel's
	}{
		{name: "no records", p: nil, count: 0},
		{name: "one record", p: encodeKmsg(5, 0, k, v), count: 1, want: []want{{ts: 5, key: k, value: v}}},
		{name: "null key and value", p: encodeKmsg(0, 0, nil, nil), count: 1, want: []want{{}}},
		{name: "empty key and value are not null", p: encodeKmsg(0, 0, empty, empty), count: 1, want: []want{{key: empty, value: empty}}},
		{name: "negative lengths other than -1 are null", p: fieldsRecord(5, 7, 0), count: 1, want: []want{{}}},
		{name: "headers", p: encodeKmsg(-3, 0, k, nil, header{[]byte("a"), []byte("1")}, header{[]byte(""), nil}), count: 1,
			want: []want{{ts: -3, key: k, headers: []header{{[]byte("a"), []byte("1")}, {empty, nil}}}}},
		// The reader does not ask offset deltas to run 0..n-1 (after
		// compaction they do not); ScanRecords, the produce check, does.
		{name: "compacted offsets", p: slices.Concat(encodeKmsg(0, 2, k, v), encodeKmsg(1, 7, k, nil)), count: 2,
			want: []want{{off: 2, key: k, value: v}, {ts: 1, off: 7, key: k}}},
		{name: "long fields", p: encodeKmsg(1<<40, 1<<20, bytes.Repeat(k, 100), bytes.Repeat(v, 3000)), count: 1,
			want: []want{{ts: 1 << 40, off: 1 << 20, key: bytes.Repeat(k, 100), value: bytes.Repeat(v, 3000)}}},

		{name: "truncated length varint", p: []byte{0x80, 0x80}, count: 1, message: "record 0: bad length"},
		{name: "eleven-byte length varint", p: bytes.Repeat([]byte{0xff}, 14), count: 1, message: "record 0: bad length"},
		{name: "negative length", p: slices.Concat([]byte{0x01}, encodeKmsg(0, 0, k, v)), count: 1, message: "record 0: bad length"},
		{name: "length below minimum", p: []byte{5 << 1, 0, 0, 0, 1, 1}, count: 1, message: "record 0: bad length"},
		{name: "length past the end", p: encodeKmsg(0, 0, k, v)[:10], count: 1, message: "record 0: bad length"},
		{name: "fewer records than the count", p: encodeKmsg(0, 0, k, v), count: 2, message: "record 1: bad length"},
		{name: "more records than the count", p: slices.Concat(encodeKmsg(0, 0, k, v), encodeKmsg(0, 1, k, v)), count: 1, message: "15 bytes after the last record"},
		{name: "truncated timestamp delta", p: slices.Concat([]byte{6 << 1, 0}, bytes.Repeat([]byte{0x80}, 5)), count: 1, message: "record 0: bad timestamp delta"},
		{name: "truncated offset delta", p: slices.Concat([]byte{6 << 1, 0, 0}, bytes.Repeat([]byte{0x80}, 4)), count: 1, message: "record 0: bad offset delta"},
		{name: "offset delta past int32", p: func() []byte {
			r := binary.AppendVarint([]byte{0, 0}, math.MaxInt32+1)
			r = append(r, 1, 1, 0)
			return append(binary.AppendVarint(nil, int64(len(r))), r...)
		}(), count: 1, message: "record 0 has offset delta 2147483648"},
		{name: "key past the record", p: fieldsRecord(20, 1, 0), count: 1, message: "record 0: bad key length"},
		{name: "key length past int64", p: fieldsRecord(append(bytes.Repeat([]byte{0xff}, 10), 1, 0)...), count: 1, message: "record 0: bad key length"},
		{name: "value past the record", p: fieldsRecord(1, 20, 0), count: 1, message: "record 0: bad value length"},
		{name: "value into the next record", p: slices.Concat(fieldsRecord(1, 8, 0), encodeKmsg(0, 1, k, v)), count: 2, message: "record 0: bad value length"},
		{name: "no header count", p: fieldsRecord(1, 2, 'v'), count: 1, message: "record 0: bad header count"},
		{name: "negative header count", p: fieldsRecord(1, 1, 1), count: 1, message: "record 0: bad header count"},
		{name: "header count past the record", p: fieldsRecord(1, 1, 8, 0, 0), count: 1, message: "record 0: bad header count"},
		{name: "header count past int32", p: fieldsRecord(append(append([]byte{1, 1}, binary.AppendVarint(nil, math.MaxInt32+1)...), 0, 0)...), count: 1, message: "record 0: bad header count"},
		{name: "null header key", p: fieldsRecord(1, 1, 2, 1, 1), count: 1, message: "record 0: header 0: bad key length"},
		{name: "header key past the record", p: fieldsRecord(1, 1, 2, 10, 1), count: 1, message: "record 0: header 0: bad key length"},
		{name: "header value past the record", p: fieldsRecord(1, 1, 2, 0, 10), count: 1, message: "record 0: header 0: bad value length"},
		{name: "bytes left in the record", p: fieldsRecord(1, 1, 0, 7, 7), count: 1, message: "record 0: its fields take 6 bytes of its 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(tc.p, tc.count)
			var r Record
			var got []want
			pos := 0
			for rd.Next(&r) {
				if !bytes.Equal(r.Raw, tc.p[pos:pos+len(r.Raw)]) {
					t.Fatalf("record %d: Raw is not the record's bytes", len(got))
				}
				pos += len(r.Raw)
				w := want{ts: r.TimestampDelta, off: r.OffsetDelta, key: r.Key, value: r.Value}
				hs := r.Headers
				for i := int32(0); i < r.HeaderCount; i++ {
					hk, hv, rest, ok := NextHeader(hs)
					if !ok {
						t.Fatalf("record %d: header %d does not split", len(got), i)
					}
					w.headers = append(w.headers, header{hk, hv})
					hs = rest
				}
				if len(hs) != 0 {
					t.Fatalf("record %d: %d header bytes left", len(got), len(hs))
				}
				got = append(got, w)
			}
			err := rd.Err()
			if tc.message != "" {
				if !errors.Is(err, ErrInvalidRecord) || err.Error() != ErrInvalidRecord.Error()+": "+tc.message {
					t.Fatalf("err %v, want %s", err, tc.message)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("%d records, err %v; want %d", len(got), err, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.ts != w.ts || g.off != w.off || !sameBytes(g.key, w.key) || !sameBytes(g.value, w.value) || len(g.headers) != len(w.headers) {
					t.Fatalf("record %d: %+v, want %+v", i, g, w)
				}
				for j := range w.headers {
					if !sameBytes(g.headers[j].key, w.headers[j].key) || !sameBytes(g.headers[j].value, w.headers[j].value) {
						t.Fatalf("record %d header %d: %q=%q, want %q=%q", i, j, g.headers[j].key, g.headers[j].value, w.headers[j].key, w.headers[j].value)
					}
				}
			}
			if rd.Next(&r) {
				t.Fatal("Next after the end")
			}
		})
	}
}

// sameBytes is bytes.Equal that also tells null from empty.
func sameBytes(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

// AppendRecord writes what franz-go writes, and AppendRetimed what
// franz-go writes with the other timestamp delta.
func TestAppendRecord(t *testing.T) {
	hs := []header{{[]byte("h1"), []byte("x")}, {[]byte("h2"), nil}}
	var hb []byte
	for _, h := range hs {
		hb = AppendHeader(hb, h.key, h.value)
	}
	for _, tc := range []struct {
		name       string
		ts         int64
		off        int32
		key, value []byte
		headers    []header
	}{
		{"plain", 3, 1, []byte("k"), []byte("v"), nil},
		{"nulls", 0, 0, nil, nil, nil},
		{"empty", -1, 2, []byte{}, []byte{}, nil},
		{"headers", 1 << 33, 1 << 16, []byte("k"), bytes.Repeat([]byte("v"), 200), hs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Record{TimestampDelta: tc.ts, OffsetDelta: tc.off, Key: tc.key, Value: tc.value}
			if tc.headers != nil {
				r.HeaderCount, r.Headers = int32(len(tc.headers)), hb
			}
			got := AppendRecord(nil, &r)
			want := encodeKmsg(tc.ts, tc.off, tc.key, tc.value, tc.headers...)
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendRecord %x\nkmsg         %x", got, want)
			}
			rd := NewReader(got, 1)
			var back Record
			if !rd.Next(&back) {
				t.Fatalf("does not read back: %v", rd.Err())
			}
			retimed := AppendRetimed(nil, &back, tc.ts-70_000)
			if want := encodeKmsg(tc.ts-70_000, tc.off, tc.key, tc.value, tc.headers...); !bytes.Equal(retimed, want) {
				t.Fatalf("AppendRetimed %x\nkmsg          %x", retimed, want)
			}
		})
	}
}

// A batch built with AppendTo, AppendRecord and Seal is what franz-go
// reads, with the CRC it computes.
func TestBuildBatch(t *testing.T) {
	h := Header{BaseOffset: 10, LeaderEpoch: -1, Magic: MagicV2, LastOffsetDelta: 1, BaseTimestamp: 1000, MaxTimestamp: 1005,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordCount: 2}
	b := h.AppendTo(nil)
	if len(b) != HeaderSize {
		t.Fatalf("header of %d bytes", len(b))
	}
	b = AppendRecord(b, &Record{OffsetDelta: 0, Key: []byte("a"), Value: []byte("1")})
	b = AppendRecord(b, &Record{TimestampDelta: 5, OffsetDelta: 1, Value: []byte("2")})
	Seal(b)
	got, ok := Next(b)
	if !ok || got.CRC != Checksum(b) {
		t.Fatalf("Next %v, CRC %08x, computed %08x", ok, got.CRC, Checksum(b))
	}
	h.Size, h.CRC = int32(len(b)), got.CRC
	if got != h {
		t.Fatalf("read back %+v\nwant        %+v", got, h)
	}
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if rb.Length != int32(len(b)-LengthOverhead) || rb.NumRecords != 2 {
		t.Fatalf("kmsg reads length %d, %d records", rb.Length, rb.NumRecords)
	}
	if lo, hi, err := ScanRecords(b[HeaderSize:], h.RecordCount, h.BaseTimestamp); err != nil || lo != 1000 || hi != 1005 {
		t.Fatalf("ScanRecords: %d %d %v", lo, hi, err)
	}
}

// The reader is on the cleaner's and share acquisition's paths: it must
// not allocate.
func TestReaderAllocs(t *testing.T) {
	p := slices.Concat(encodeKmsg(0, 0, []byte("k"), []byte("v"), header{[]byte("h"), []byte("x")}), encodeKmsg(1, 1, nil, []byte("w")))
	var sink int
	allocs := testing.AllocsPerRun(100, func() {
		rd := NewReader(p, 2)
		var r Record
		for rd.Next(&r) {
			sink += len(r.Key) + len(r.Value)
		}
		if rd.Err() != nil {
			t.Fatal(rd.Err())
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per walk", allocs)
	}
	_ = sink
}

// FuzzReader: any bytes read or fail with ErrInvalidRecord, never a
// panic; the records read tile the input; each encodes back (AppendRecord)
// to a record that franz-go's decoder and the reader read the same;
// and the reader agrees with ScanRecords on batches as produced.
func FuzzReader(f *testing.F) {
	k, v := []byte("key"), []byte("value")
	f.Add(slices.Concat(encodeKmsg(0, 0, k, v), encodeKmsg(3, 1, nil, v, header{[]byte("h"), nil})), int32(2))
	f.Add(encodeKmsg(-5, 4, []byte{}, nil), int32(1))
	f.Add(fieldsRecord(1, 1, 2, 1, 1), int32(1))
	f.Add(bytes.Repeat([]byte{0xff}, 14), int32(1))
	f.Fuzz(func(t *testing.T, p []byte, count int32) {
		count = min(max(count, -1), 1000)
		rd := NewReader(p, count)
		var r Record
		var recs []Record
		inOrder := true
		pos := 0
		for rd.Next(&r) {
			if !bytes.Equal(r.Raw, p[pos:pos+len(r.Raw)]) {
				t.Fatalf("record %d: Raw is not at %d", len(recs), pos)
			}
			pos += len(r.Raw)
			inOrder = inOrder && r.OffsetDelta == int32(len(recs))
			recs = append(recs, r)
		}
		err := rd.Err()
		if err != nil && !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("error without the sentinel: %v", err)
		}
		if err == nil && pos != len(p) {
			t.Fatalf("read %d of %d bytes", pos, len(p))
		}
		if count >= 0 {
			_, _, scanErr := ScanRecords(p, count, 0)
			if (scanErr == nil) != (err == nil && inOrder) {
				t.Fatalf("ScanRecords %v; reader %v, offsets in order %v", scanErr, err, inOrder)
			}
		}
		for i := range recs {
			o := &recs[i]
			// franz-go, like Kafka, reads the int32 fields as varints of at
			// most 5 bytes; the reader (like the produce check) takes any
			// varint up to binary.Varint's 10 bytes whose value fits, so
			// franz-go reads the record as AppendRecord writes it again.
			c := *o
			c.Headers = nil
			for hs, j := o.Headers, int32(0); j < o.HeaderCount; j++ {
				hk, hv, rest, ok := NextHeader(hs)
				if !ok {
					t.Fatalf("record %d: header %d does not split", i, j)
				}
				c.Headers, hs = AppendHeader(c.Headers, hk, hv), rest
			}
			again := AppendRecord(nil, &c)
			var kr kmsg.Record
			if err := kr.ReadFrom(again); err != nil {
				t.Fatalf("record %d: franz-go: %v", i, err)
			}
			if kr.TimestampDelta64 != o.TimestampDelta || kr.OffsetDelta != o.OffsetDelta || !sameBytes(kr.Key, o.Key) ||
				!bytes.Equal(kr.Value, o.Value) || (kr.Value == nil) != (o.Value == nil) || len(kr.Headers) != int(o.HeaderCount) {
				t.Fatalf("record %d: franz-go reads %+v, reader %+v", i, kr, o)
			}
			ard := NewReader(again, 1)
			var a Record
			if !ard.Next(&a) {
				t.Fatalf("record %d does not read back: %v", i, ard.Err())
			}
			if a.TimestampDelta != o.TimestampDelta || a.OffsetDelta != o.OffsetDelta || !sameBytes(a.Key, o.Key) ||
				!sameBytes(a.Value, o.Value) || a.HeaderCount != o.HeaderCount || !bytes.Equal(a.Headers, c.Headers) {
				t.Fatalf("record %d: read back %+v, was %+v", i, a, o)
			}
		}
	})
}
