package log

import (
	"bytes"
	"strconv"
	"testing"

	"sharq/log/recordbatch"
)

// FuzzOffsetCheckpoint: the one-offset checkpoint decoder (the cleaner's
// cleaner-offset-checkpoint and .cleaner-swap marker, the recovery point,
// the log start) never panics, and what it accepts encodes back the same.
func FuzzOffsetCheckpoint(f *testing.F) {
	for _, s := range []string{"0\n1\n0\n", "0\n1\n1234\n", "0\n1\n-1\n", "0\n2\n5\n", "", "0\n1\n99999999999999999999\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeOffsetCheckpoint(data)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("negative offset %d accepted", v)
		}
		again, err := decodeOffsetCheckpoint([]byte("0\n1\n" + strconv.FormatInt(v, 10) + "\n"))
		if err != nil || again != v {
			t.Fatalf("%d does not round-trip: %d %v", v, again, err)
		}
	})
}

// FuzzCleanRecords: the record reader over stored bytes never panics, and
// every record it accepts, written again with a new timestamp delta as the
// cleaner writes it (recordbatch.AppendRetimed) and read back, keeps its
// key, value and headers.
func FuzzCleanRecords(f *testing.F) {
	f.Add(keyedBatch([]kv{{[]byte("k"), []byte("v")}, {nil, []byte("x")}, {[]byte("t"), nil}}, 5, 0, -1, -1, -1, false)[batchHeaderSize:], int32(3), int64(7))
	f.Add([]byte{0x0c, 0, 0, 0, 1, 'k', 1, 0}, int32(1), int64(-3))
	f.Fuzz(func(t *testing.T, p []byte, count int32, shift int64) {
		count = min(max(count, 0), 64)
		var recs []recordbatch.Record
		rd := recordbatch.NewReader(p, count)
		var r recordbatch.Record
		for rd.Next(&r) {
			recs = append(recs, r)
		}
		if rd.Err() != nil {
			return
		}
		var out []byte
		for i := range recs {
			out = recordbatch.AppendRetimed(out, &recs[i], recs[i].TimestampDelta+shift)
		}
		i := 0
		rd = recordbatch.NewReader(out, int32(len(recs)))
		for rd.Next(&r) {
			o := &recs[i]
			if !bytes.Equal(r.Key, o.Key) || (r.Key == nil) != (o.Key == nil) || !bytes.Equal(r.Fields(), o.Fields()) ||
				(r.Value == nil) != (o.Value == nil) || r.OffsetDelta != o.OffsetDelta || r.TimestampDelta != o.TimestampDelta+shift || r.Attributes != o.Attributes {
				t.Fatalf("record %d changed: %+v -> %+v", i, o, r)
			}
			i++
		}
		if err := rd.Err(); err != nil || i != len(recs) {
			t.Fatalf("rewritten records do not walk: %v (%d of %d)", err, i, len(recs))
		}
	})
}

// FuzzSwapMarker: the cleaner-swap decoder never panics; what it accepts
// is ascending, disjoint and encodes back to what decodes the same.
func FuzzSwapMarker(f *testing.F) {
	f.Add(encodeSwapMarker([]swapRange{{0, 10}, {10, 25}, {40, 41}}))
	f.Add([]byte("0\n0\n"))
	f.Add([]byte("0\n1\n5 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := decodeSwapMarker(data)
		if err != nil {
			return
		}
		for i, r := range rs {
			if r.base < 0 || r.end <= r.base || (i > 0 && r.base < rs[i-1].end) {
				t.Fatalf("accepted range %d: %+v", i, rs)
			}
		}
		again, err := decodeSwapMarker(encodeSwapMarker(rs))
		if err != nil || len(again) != len(rs) {
			t.Fatalf("round trip: %v %v", again, err)
		}
		for i := range rs {
			if again[i] != rs[i] {
				t.Fatalf("round trip: %v, want %v", again, rs)
			}
		}
	})
}
