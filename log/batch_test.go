package log

import (
	"encoding/binary"
	"slices"
	"testing"

	"sharq/log/recordbatch"
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

// rawRecord encodes a v2 record: length, attributes, timestamp delta,
// offset delta, a null key, value as its value, no headers.
func rawRecord(tsDelta, offDelta int64, value []byte) []byte {
	return recordbatch.AppendRecord(nil, &recordbatch.Record{TimestampDelta: tsDelta, OffsetDelta: int32(offDelta), Value: value})
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

// After compaction a record's offset delta is not its index: the
// timestamp lookups report the record's own offset.
func TestRecordTimestampsCompacted(t *testing.T) {
	recs := slices.Concat(
		recordbatch.AppendRecord(nil, &recordbatch.Record{TimestampDelta: 1, OffsetDelta: 0, Key: []byte("a")}),
		recordbatch.AppendRecord(nil, &recordbatch.Record{TimestampDelta: 7, OffsetDelta: 3, Key: []byte("b")}),
	)
	h := batchHeader{Magic: magicV2, LastOffsetDelta: 4, BaseTimestamp: 100, MaxTimestamp: 107, RecordCount: 2}
	b := h.AppendTo(nil)
	b = append(b, recs...)
	recordbatch.Seal(b)
	var deltas []int32
	recordTimestamps(b, &h, func(delta int32, ts int64) bool {
		deltas = append(deltas, delta)
		return ts != 107
	})
	if !slices.Equal(deltas, []int32{0, 3}) {
		t.Fatalf("recordTimestamps deltas %v, want [0 3]", deltas)
	}
	for _, c := range []int16{codecGzip, codecLZ4, codecZstd, codecSnappy} {
		delta, found, err := firstRecordAt(wireCodec(c), compressForTest(c, recs), 2, 100, 107)
		if err != nil || !found || delta != 3 {
			t.Fatalf("codec %d: firstRecordAt %d %v %v, want 3", c, delta, found, err)
		}
	}
}
