package log

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

func TestValidateBatch(t *testing.T) {
	now := testNow.UnixMilli()
	mut := func(s spec, f func(b []byte) []byte) []byte { return f(makeBatch(s)) }
	withTs := func(ts int64) spec { s := plain(2); s.ts, s.tsStep = ts, 0; return s }
	compressed := plain(3)
	compressed.compression = 4 // zstd
	txn := plain(1)
	txn.txn = true
	txnPid := idem(5, 0, 0, 1)
	txnPid.txn = true
	ctrl := idem(5, 0, 0, 1)
	ctrl.control = true
	for _, tc := range []struct {
		name  string
		batch []byte
		lim   validateLimits
		err   error
	}{
		{"valid", makeBatch(plain(3)), validateLimits{}, nil},
		{"valid idempotent", makeBatch(idem(1, 0, 0, 3)), validateLimits{}, nil},
		{"valid transactional", makeBatch(txnPid), validateLimits{}, nil},
		{"empty", nil, validateLimits{}, ErrCorruptMessage},
		{"short", makeBatch(plain(1))[:10], validateLimits{}, ErrCorruptMessage},
		{"magic 1", mut(plain(1), func(b []byte) []byte { b[offMagic] = 1; return b }), validateLimits{}, ErrUnsupportedMagic},
		{"magic 3", mut(plain(1), func(b []byte) []byte { b[offMagic] = 3; return b }), validateLimits{}, ErrUnsupportedMagic},
		{"header only", makeBatch(plain(1))[:40], validateLimits{}, ErrCorruptMessage},
		{"length too big", mut(plain(1), func(b []byte) []byte { binary.BigEndian.PutUint32(b[offBatchLength:], 1<<20); return b }), validateLimits{}, ErrCorruptMessage},
		{"length too small", mut(plain(1), func(b []byte) []byte { binary.BigEndian.PutUint32(b[offBatchLength:], 10); return b }), validateLimits{}, ErrCorruptMessage},
		{"trailing bytes", append(makeBatch(plain(1)), 0), validateLimits{}, ErrCorruptMessage},
		{"crc", mut(plain(2), func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), validateLimits{}, ErrCorruptMessage},
		{"too large", makeBatch(plain(5)), validateLimits{maxBytes: 100}, ErrMessageTooLarge},
		{"exactly max", makeBatch(plain(1)), validateLimits{maxBytes: int32(len(makeBatch(plain(1))))}, nil},
		{"unknown codec", mut(plain(1), func(b []byte) []byte { b[offAttributes+1] |= 7; return fixCRC(b) }), validateLimits{}, ErrCorruptMessage},
		{"control from client", makeBatch(ctrl), validateLimits{}, ErrInvalidRecord},
		{"zero records", mut(plain(1), func(b []byte) []byte { binary.BigEndian.PutUint32(b[offRecordCount:], 0); return fixCRC(b) }), validateLimits{}, ErrInvalidRecord},
		{"count mismatch", mut(plain(2), func(b []byte) []byte { binary.BigEndian.PutUint32(b[offRecordCount:], 3); return fixCRC(b) }), validateLimits{}, ErrInvalidRecord},
		{"negative delta", mut(plain(1), func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 0xffffffff)
			return fixCRC(b)
		}), validateLimits{}, ErrInvalidRecord},
		{"pid without sequence", makeBatch(idem(1, 0, -1, 1)), validateLimits{requireSequence: true}, ErrInvalidRecord},
		{"transactional without pid", makeBatch(txn), validateLimits{}, ErrInvalidRecord},
		{"record offset delta", mut(plain(2), func(b []byte) []byte {
			// first record: length, attributes, timestamp delta (0), offset delta (0 -> 1)
			b[batchHeaderSize+3] = 2 // zigzag(1)
			return fixCRC(b)
		}), validateLimits{}, ErrInvalidRecord},
		{"record length past end", mut(plain(1), func(b []byte) []byte { b[batchHeaderSize] = 0x7e; return fixCRC(b) }), validateLimits{}, ErrInvalidRecord},
		{"record garbage", mut(plain(2), func(b []byte) []byte {
			for i := batchHeaderSize; i < len(b); i++ {
				b[i] = 0xff
			}
			return fixCRC(b)
		}), validateLimits{}, ErrInvalidRecord},
		{"compressed", makeBatch(compressed), validateLimits{}, nil},
		{"compressed garbage", mut(compressed, func(b []byte) []byte {
			for i := batchHeaderSize; i < len(b); i++ {
				b[i] = 0xff
			}
			return fixCRC(b)
		}), validateLimits{}, ErrInvalidRecord},
		{"timestamp too old", makeBatch(withTs(now - 10_000)), validateLimits{beforeMaxMs: 5_000, nowMs: now}, ErrInvalidTimestamp},
		{"timestamp too new", makeBatch(withTs(now + 10_000)), validateLimits{afterMaxMs: 5_000, nowMs: now}, ErrInvalidTimestamp},
		{"timestamp within", makeBatch(withTs(now - 1_000)), validateLimits{beforeMaxMs: 5_000, afterMaxMs: 5_000, nowMs: now}, nil},
		{"no timestamp", makeBatch(withTs(-1)), validateLimits{beforeMaxMs: 5_000, afterMaxMs: 5_000, nowMs: now}, nil},
		{"old timestamp, LogAppendTime topic", makeBatch(withTs(now - 10_000)), validateLimits{timestampType: LogAppendTime, beforeMaxMs: 5_000, nowMs: now}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := validateBatch(tc.batch, &tc.lim)
			if !isErr(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
		})
	}
}

func TestAppendRejectsAndKeepsLogIntact(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{MaxMessageBytes: 500})
	mustAppend(t, l, makeBatch(plain(1)))
	bad := makeBatch(plain(1))
	bad[len(bad)-1] ^= 0xff
	for _, b := range [][]byte{bad, makeBatch(plain(60)), {1, 2, 3}} {
		if _, err := l.Append(b, 0); err == nil || ErrorCode(err) == 56 {
			t.Fatalf("bad batch: err %v (code %d)", err, ErrorCode(err))
		}
	}
	if l.LogEndOffset() != 1 {
		t.Fatalf("leo %d after rejected appends", l.LogEndOffset())
	}
}

func TestCreateTimeMaxTimestampCorrected(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{})
	s := plain(3)
	s.ts, s.tsStep = 5_000, 10
	b := makeBatch(s)
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], 1) // a client bug
	fixCRC(b)
	mustAppend(t, l, b)
	if h := parseHeader(b); h.MaxTimestamp != 5_020 || batchCRC(b) != h.CRC {
		t.Fatalf("maxTimestamp %d, crc ok %v", h.MaxTimestamp, batchCRC(b) == h.CRC)
	}
}

func TestIncrementSequence(t *testing.T) {
	for _, tc := range []struct{ seq, delta, want int32 }{
		{0, 0, 0}, {5, 3, 8}, {2147483647, 1, 0}, {2147483646, 3, 1},
	} {
		if got := incrementSequence(tc.seq, tc.delta); got != tc.want {
			t.Errorf("incrementSequence(%d, %d) = %d, want %d", tc.seq, tc.delta, got, tc.want)
		}
	}
	if !inSequence(2147483647, 0) || inSequence(3, 5) || !inSequence(3, 4) {
		t.Fatal("inSequence")
	}
}

func TestProducerSnapshotCodec(t *testing.T) {
	ps := newProducerState()
	for i := 0; i < 8; i++ {
		h := parseHeader(makeBatch(idem(int64(i%3), int16(i/4), int32(i), 1)))
		h.BaseOffset = int64(i)
		ps.update(&h)
	}
	enc := ps.encode()
	back, err := decodeProducerSnapshot(enc)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.encode()) != string(enc) {
		t.Fatal("round trip differs")
	}
	for i := range enc {
		c := append([]byte(nil), enc...)
		c[i] ^= 0x40
		if _, err := decodeProducerSnapshot(c); err == nil {
			t.Fatalf("corruption at byte %d not detected", i)
		}
	}
	if _, err := decodeProducerSnapshot(enc[:len(enc)-1]); err == nil {
		t.Fatal("truncation not detected")
	}
}

func TestVarintAt(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 100, 8191, -8192, 8192, -8193, 1 << 40, -1 << 40, math.MaxInt64, math.MinInt64} {
		enc := binary.AppendVarint(nil, v)
		want, wn := binary.Varint(enc)
		// at the start, after a prefix, and followed by more bytes (the
		// two-byte fast path needs a second byte to look at)
		for _, pre := range [][]byte{nil, {0xff, 0xff}} {
			for _, post := range [][]byte{nil, {0x00, 0x7f}} {
				p := append(append(append([]byte(nil), pre...), enc...), post...)
				got, next := varintAt(p, len(pre))
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
			if v, next := varintAt(tc.p, tc.i); next != -1 || v != 0 {
				t.Fatalf("varintAt = %d, %d; want 0, -1", v, next)
			}
			if v, next := varint2(tc.p, tc.i); next != -1 || v != 0 {
				t.Fatalf("varint2 = %d, %d; want 0, -1", v, next)
			}
		})
	}
	// varint2 leaves a one-byte varint in the last byte to varintAt
	if _, next := varint2([]byte{0x00, 0x04}, 1); next != -1 {
		t.Fatalf("varint2 decoded a last byte (next %d)", next)
	}
	if v, next := varintAt([]byte{0x00, 0x04}, 1); v != 2 || next != 2 {
		t.Fatalf("varintAt last byte = %d, %d", v, next)
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

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestScanRecords(t *testing.T) {
	pad := bytes.Repeat([]byte{'x'}, 3)
	big := bytes.Repeat([]byte{'v'}, 300) // two-byte length
	// a record whose timestamp delta does not end inside it
	tsRunsOn := cat([]byte{6 << 1, 0}, bytes.Repeat([]byte{0x80}, 5), rawRecord(0, 1, pad))
	// a record whose offset delta does not end inside it
	offRunsOn := cat([]byte{6 << 1, 0, 0}, bytes.Repeat([]byte{0x80}, 4), rawRecord(0, 1, pad))
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
		{name: "three records, unordered timestamps", p: cat(rawRecord(5, 0, pad), rawRecord(-3, 1, pad), rawRecord(9, 2, pad)), count: 3, baseTs: 100, lo: 97, hi: 109},
		{name: "multi-byte fields", p: cat(rawRecord(1<<40, 0, big), rawRecord(-70_000, 1, big)), count: 2, baseTs: 1 << 41, lo: 1<<41 - 70_000, hi: 1<<41 + 1<<40},
		{name: "offset delta past 63", p: func() []byte {
			var b []byte
			for i := int64(0); i < 200; i++ {
				b = append(b, rawRecord(i*1000, i, pad)...)
			}
			return b
		}(), count: 200, baseTs: 0, lo: 0, hi: 199_000},
		{name: "fast path resumes after a long field", p: cat(rawRecord(0, 0, pad), rawRecord(1<<30, 1, pad), rawRecord(-2, 2, pad)), count: 3, baseTs: 10, lo: 8, hi: 10 + 1<<30},
		{name: "no timestamp", p: cat(rawRecord(0, 0, pad), rawRecord(0, 1, pad)), count: 2, baseTs: -1, lo: math.MaxInt64, hi: -1},
		{name: "negative timestamps are exempt from lo", p: cat(rawRecord(0, 0, pad), rawRecord(11, 1, pad)), count: 2, baseTs: -1, lo: 10, hi: 10},

		{name: "count mismatch, bytes run out", p: rawRecord(0, 0, pad), count: 2, err: ErrInvalidRecord, message: "record 1: bad length"},
		{name: "huge count", p: rawRecord(0, 0, pad), count: math.MaxInt32, err: ErrInvalidRecord, message: "record 1: bad length"},
		{name: "count mismatch, too many", p: cat(rawRecord(0, 0, pad), rawRecord(0, 1, pad), bytes.Repeat([]byte{0}, 7)), count: 3, err: ErrInvalidRecord, message: "record 2: bad length"},
		{name: "count mismatch, too few", p: cat(rawRecord(0, 0, pad), rawRecord(0, 1, pad)), count: 1, err: ErrInvalidRecord, message: "10 bytes after the last record"},
		{name: "truncated length varint", p: cat(rawRecord(0, 0, pad), bytes.Repeat([]byte{0x80}, 7)), count: 2, err: ErrInvalidRecord, message: "record 1: bad length"},
		{name: "eleven-byte length varint", p: bytes.Repeat([]byte{0xff}, 14), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "negative length", p: cat([]byte{0x01}, rawRecord(0, 0, pad)), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "large negative length", p: cat(binary.AppendVarint(nil, -70_000), rawRecord(0, 0, pad)), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "length below minimum", p: cat([]byte{5 << 1, 0, 0, 0, 0, 0}, pad), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "length past end", p: cat([]byte{20 << 1}, bytes.Repeat([]byte{0}, 19)), count: 1, err: ErrInvalidRecord, message: "record 0: bad length"},
		{name: "timestamp delta runs into next record", p: tsRunsOn, count: 2, err: ErrInvalidRecord, message: "record 0: bad timestamp delta"},
		{name: "offset delta runs into next record", p: offRunsOn, count: 2, err: ErrInvalidRecord, message: "record 0: bad offset delta"},
		{name: "first offset delta not 0", p: cat(rawRecord(0, 1, pad), rawRecord(0, 2, pad)), count: 2, err: ErrInvalidRecord, message: "record 0 has offset delta 1"},
		{name: "offset delta out of order", p: cat(rawRecord(0, 0, pad), rawRecord(0, 2, pad), rawRecord(0, 1, pad)), count: 3, err: ErrInvalidRecord, message: "record 1 has offset delta 2"},
		{name: "offset delta repeated", p: cat(rawRecord(0, 0, pad), rawRecord(0, 0, pad)), count: 2, err: ErrInvalidRecord, message: "record 1 has offset delta 0"},
		{name: "error after the fast path resumed", p: cat(rawRecord(0, 0, pad), rawRecord(1<<30, 1, pad), rawRecord(2, 2, pad), rawRecord(3, 5, pad)), count: 4, err: ErrInvalidRecord, message: "record 3 has offset delta 5"},
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
		{name: "value into the next record", p: cat(fieldsRecord(1, 8, 0), rawRecord(0, 1, pad)), count: 2, err: ErrInvalidRecord, message: "record 0: bad value length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, err := scanRecords(tc.p, tc.count, tc.baseTs)
			if tc.err != nil {
				if !isErr(err, tc.err) || err.Error() != tc.err.Error()+": "+tc.message {
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

// TestWalkRecordsTimestampBounds checks that bounding only the earliest
// and latest timestamps rejects whatever a per-record check would.
func TestWalkRecordsTimestampBounds(t *testing.T) {
	now := testNow.UnixMilli()
	pad := []byte("k+v!")
	batch := func(base int64, deltas ...int64) []byte {
		var recs []byte
		for i, d := range deltas {
			recs = append(recs, rawRecord(d, int64(i), pad)...)
		}
		b := make([]byte, batchHeaderSize, batchHeaderSize+len(recs))
		binary.BigEndian.PutUint32(b[offRecordCount:], uint32(len(deltas)))
		binary.BigEndian.PutUint64(b[offBaseTimestamp:], uint64(base))
		return append(b, recs...)
	}
	lim := validateLimits{beforeMaxMs: 5_000, afterMaxMs: 5_000, nowMs: now}
	for _, tc := range []struct {
		name  string
		batch []byte
		lim   validateLimits
		hi    int64
		err   error
	}{
		{"all within", batch(now, -4_000, 0, 4_000), lim, now + 4_000, nil},
		{"middle record too old", batch(now, 0, -6_000, 1), lim, 0, ErrInvalidTimestamp},
		{"middle record too new", batch(now, 0, 6_000, 1), lim, 0, ErrInvalidTimestamp},
		{"no timestamp records exempt", batch(-1, 0, 0), lim, -1, nil},
		{"one stamped record among no timestamps", batch(-1, 0, now+1, 0), lim, now, nil},
		{"old record among no timestamps", batch(-1, 0, now-9_000, 0), lim, 0, ErrInvalidTimestamp},
		{"unbounded", batch(now, -1<<40, 1<<40), validateLimits{nowMs: now}, now + 1<<40, nil},
		{"LogAppendTime topic ignores bounds", batch(now, -1<<40), validateLimits{timestampType: LogAppendTime, beforeMaxMs: 5_000, nowMs: now}, now - 1<<40, nil},
		{"framing error outranks timestamp error", func() []byte {
			b := batch(now, -9_000, 0)
			return append(b, 0)
		}(), lim, 0, ErrInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := parseHeader(tc.batch)
			hi, err := walkRecords(tc.batch, &h, &tc.lim)
			if tc.err != nil {
				if !isErr(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || hi != tc.hi {
				t.Fatalf("hi %d err %v, want %d", hi, err, tc.hi)
			}
		})
	}
}
