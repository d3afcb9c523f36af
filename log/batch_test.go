package log

import (
	"encoding/binary"
	"testing"
)

func TestValidateBatch(t *testing.T) {
	now := testNow.UnixMilli()
	mut := func(s spec, f func(b []byte) []byte) []byte { return f(makeBatch(s)) }
	withTs := func(ts int64) spec { s := plain(2); s.ts, s.tsStep = ts, 0; return s }
	compressed := plain(3)
	compressed.compression = 4 // zstd bits; payload stays opaque
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
		{"record length past end", mut(plain(1), func(b []byte) []byte { b[batchHeaderSize] = 0x7e; return fixCRC(b) }), validateLimits{}, ErrCorruptMessage},
		{"record garbage", mut(plain(2), func(b []byte) []byte {
			for i := batchHeaderSize; i < len(b); i++ {
				b[i] = 0xff
			}
			return fixCRC(b)
		}), validateLimits{}, ErrCorruptMessage},
		{"compressed: records not walked", mut(compressed, func(b []byte) []byte {
			for i := batchHeaderSize; i < len(b); i++ {
				b[i] = 0xff
			}
			return fixCRC(b)
		}), validateLimits{}, nil},
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
	if h := parseHeader(b); h.maxTimestamp != 5_020 || batchCRC(b) != h.crc {
		t.Fatalf("maxTimestamp %d, crc ok %v", h.maxTimestamp, batchCRC(b) == h.crc)
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
		h.baseOffset = int64(i)
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

func TestReadVarint(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 100, 8191, -8192, 8192, 1 << 40, -1 << 40} {
		b := binary.AppendVarint(nil, v)
		got, n := readVarint(b)
		want, wn := binary.Varint(b)
		if got != want || n != wn {
			t.Fatalf("%d: got %d (%d bytes), want %d (%d bytes)", v, got, n, want, wn)
		}
	}
	if _, n := readVarint(nil); n != 0 {
		t.Fatal("empty input")
	}
	if _, n := readVarint([]byte{0x80}); n != 0 {
		t.Fatal("truncated input")
	}
}
