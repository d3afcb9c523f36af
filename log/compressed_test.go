package log

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"sharq/log/recordbatch"
)

// codecSnappyRaw stands for snappy written as one raw block (no
// snappy-java framing), which Kafka also reads; on the wire it is codec 2.
const codecSnappyRaw = 102

// compressForTest compresses a records section as a producer would.
func compressForTest(codec int16, raw []byte) []byte {
	var buf bytes.Buffer
	switch codec {
	case codecGzip:
		w := gzip.NewWriter(&buf)
		w.Write(raw)
		w.Close()
	case codecSnappy:
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1}) // version, compatible version
		for len(raw) > 0 {
			n := min(len(raw), 32<<10)
			block := s2.EncodeSnappy(nil, raw[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(block))))
			buf.Write(block)
			raw = raw[n:]
		}
	case codecSnappyRaw:
		return s2.EncodeSnappy(nil, raw)
	case codecLZ4:
		w := lz4.NewWriter(&buf)
		w.Write(raw)
		w.Close()
	case codecZstd:
		e, _ := zstd.NewWriter(nil)
		return e.EncodeAll(raw, nil)
	default:
		panic(fmt.Sprintf("codec %d", codec))
	}
	return buf.Bytes()
}

func wireCodec(c int16) int {
	if c == codecSnappyRaw {
		return codecSnappy
	}
	return int(c)
}

var testCodecs = []struct {
	name  string
	codec int16
}{{"gzip", codecGzip}, {"snappy", codecSnappy}, {"snappy raw", codecSnappyRaw}, {"lz4", codecLZ4}, {"zstd", codecZstd}}

// TestScanCompressed: every codec's good records pass with the timestamps
// scanRecords finds in the same records uncompressed; records that do not
// decompress, or that decompress to records no consumer could parse, get
// INVALID_RECORD, as Kafka 4.4 answers the faults it detects (count
// mismatch, bad record framing).
func TestScanCompressed(t *testing.T) {
	pad := []byte("key+value")
	good := slices.Concat(rawRecord(5, 0, pad), rawRecord(-3, 1, pad), rawRecord(9, 2, pad))
	big := slices.Concat(rawRecord(0, 0, bytes.Repeat([]byte{'v'}, 200<<10)), rawRecord(1, 1, pad)) // past the window
	for _, c := range testCodecs {
		z := func(raw []byte) []byte { return compressForTest(c.codec, raw) }
		cases := []struct {
			name    string
			p       []byte
			count   int32
			lo, hi  int64
			message string // "" for valid
		}{
			{name: "three records", p: z(good), count: 3, lo: 97, hi: 109},
			{name: "a record larger than the window", p: z(big), count: 2, lo: 100, hi: 101},
			{name: "uncompressed records", p: good, count: 3, message: "does not decode"},
			{name: "empty", p: nil, count: 3, message: "record"}, // does not decode, or no records
			{name: "garbage", p: bytes.Repeat([]byte{0xa5}, 64), count: 3, message: "does not decode"},
			{name: "count larger", p: z(good), count: 4, message: "record 3: bad length"},
			{name: "count smaller", p: z(good), count: 2, message: "bytes after the last record"},
			{name: "offset delta", p: z(slices.Concat(rawRecord(0, 0, pad), rawRecord(0, 0, pad))), count: 2, message: "record 1 has offset delta 0"},
			{name: "record length past end", p: z(slices.Concat(rawRecord(0, 0, pad), []byte{40 << 1, 0, 0, 2})), count: 2, message: "record 1: bad length"},
			{name: "length below minimum", p: z(slices.Concat(rawRecord(0, 0, pad), []byte{2 << 1, 0, 0})), count: 2, message: "record 1: bad length"},
			{name: "eleven-byte length varint", p: z(bytes.Repeat([]byte{0xff}, 14)), count: 1, message: "record 0: bad length"},
			{name: "timestamp delta runs off the record", p: z(slices.Concat([]byte{6 << 1, 0}, bytes.Repeat([]byte{0x80}, 5))), count: 1, message: "record 0: bad timestamp delta"},
		}
		if c.codec != codecSnappyRaw { // a raw snappy block has no stream to cut
			full := z(good)
			cases = append(cases, struct {
				name    string
				p       []byte
				count   int32
				lo, hi  int64
				message string
			}{name: "truncated stream", p: full[:len(full)*2/3], count: 3, message: "record"})
		}
		for _, tc := range cases {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				lo, hi, err := scanCompressed(wireCodec(c.codec), tc.p, tc.count, 100)
				if tc.message == "" {
					if err != nil || lo != tc.lo || hi != tc.hi {
						t.Fatalf("lo %d hi %d err %v, want lo %d hi %d", lo, hi, err, tc.lo, tc.hi)
					}
					return
				}
				if !isErr(err, ErrInvalidRecord) || !bytes.Contains([]byte(err.Error()), []byte(tc.message)) {
					t.Fatalf("err %v, want INVALID_RECORD with %q", err, tc.message)
				}
			})
		}
	}
}

// TestSnappyClaimNotAllocated: a snappy block claiming a huge decoded size
// is refused from its header, before anything that size is allocated.
func TestSnappyClaimNotAllocated(t *testing.T) {
	block := binary.AppendUvarint(nil, 1<<31) // decoded length, then nothing
	block = append(block, 0, 0, 0, 0)
	// Bytes, not allocation counts: the race detector adds allocations of
	// its own, and what matters is that nothing near 2 GiB is allocated.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, _, err := scanCompressed(codecSnappy, block, 1, 0); !isErr(err, ErrInvalidRecord) {
			t.Fatalf("err %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("10 refusals allocated %d bytes", got)
	}
}

// TestValidateBatchCompressed: through validateBatch, a compressed batch's
// largest timestamp comes from its records, and its record timestamps are
// bounded like an uncompressed batch's.
func TestValidateBatchCompressed(t *testing.T) {
	for _, c := range testCodecs {
		t.Run(c.name, func(t *testing.T) {
			s := plain(5)
			s.compression = c.codec
			b := makeBatch(s)
			if c.codec == codecSnappyRaw {
				binary.BigEndian.PutUint16(b[offAttributes:], codecSnappy)
				fixCRC(b)
			}
			_, maxTs, err := validateBatch(b, &validateLimits{})
			if err != nil || maxTs != 1_004 {
				t.Fatalf("max timestamp %d err %v, want 1004", maxTs, err)
			}
			now := int64(1_000_000)
			if _, _, err := validateBatch(b, &validateLimits{beforeMaxMs: 10_000, nowMs: now}); !isErr(err, ErrInvalidTimestamp) {
				t.Fatalf("err %v, want INVALID_TIMESTAMP for records %d ms old", err, now-1_000)
			}
		})
	}
}

// FuzzScanCompressed: records compressed with any codec are judged exactly
// as the same records uncompressed (same sentinel and timestamps), and any
// compressed bytes at all are judged without a panic.
func FuzzScanCompressed(f *testing.F) {
	pad := []byte("k+v")
	f.Add(uint8(1), slices.Concat(rawRecord(5, 0, pad), rawRecord(-3, 1, pad)), int32(2), false)
	f.Add(uint8(2), slices.Concat(rawRecord(0, 0, pad), rawRecord(0, 0, pad)), int32(2), false)
	f.Add(uint8(3), rawRecord(0, 0, pad), int32(2), false)
	f.Add(uint8(4), rawRecord(0, 0, pad), int32(1), true)
	f.Add(uint8(0), bytes.Repeat([]byte{0xff}, 20), int32(1), false)
	f.Fuzz(func(t *testing.T, codec uint8, raw []byte, count int32, asIs bool) {
		c := testCodecs[int(codec)%len(testCodecs)].codec
		if asIs {
			// arbitrary bytes under the codec: only must not panic
			scanCompressed(wireCodec(c), raw, count, 0)
			return
		}
		lo, hi, err := scanCompressed(wireCodec(c), compressForTest(c, raw), count, 0)
		wlo, whi, werr := recordbatch.ScanRecords(raw, count, 0)
		if (err == nil) != (werr == nil) {
			t.Fatalf("compressed: %v; uncompressed: %v", err, werr)
		}
		if err == nil && (lo != wlo || hi != whi) {
			t.Fatalf("compressed lo %d hi %d, uncompressed %d %d", lo, hi, wlo, whi)
		}
		if err != nil && !isErr(err, ErrInvalidRecord) {
			t.Fatalf("err %v, want INVALID_RECORD", err)
		}
	})
}

// BenchmarkScanCompressed is the cost of checking a compressed batch of
// 100 records of 100 bytes, per codec, against the uncompressed walk.
func BenchmarkScanCompressed(b *testing.B) {
	s := plain(100)
	s.valueSize = 100
	raw := makeBatch(s)[batchHeaderSize:]
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, _, err := recordbatch.ScanRecords(raw, 100, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range testCodecs {
		p := compressForTest(c.codec, raw)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, _, err := scanCompressed(wireCodec(c.codec), p, 100, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
