package log

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"testing"
	"time"
)

func FuzzValidateBatch(f *testing.F) {
	compressed := plain(3)
	compressed.compression = 1
	for _, b := range [][]byte{
		makeBatch(plain(1)),
		makeBatch(plain(7)),
		makeBatch(idem(3, 1, 100, 4)),
		makeBatch(compressed),
		makeBatch(plain(2))[:30],
		{},
		bytes.Repeat([]byte{0xff}, 61),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := validateLimits{maxBytes: 1 << 20, requireSequence: true}
		h, _, err := validateBatch(b, &lim)
		if err != nil {
			if ErrorCode(err) == 0 || ErrorCode(err) == 56 {
				t.Fatalf("validation error without a client error code: %v", err)
			}
			return
		}
		if len(b) < batchHeaderSize || int(h.Size) != len(b) || batchCRC(b) != h.CRC || h.RecordCount != h.LastOffsetDelta+1 || h.Magic != 2 {
			t.Fatalf("accepted an invalid batch: %+v", h)
		}
		// what Append does to an accepted batch keeps it valid
		c := append([]byte(nil), b...)
		setBaseOffsetAndEpoch(c, 12345, 7)
		setMaxTimestamp(c, LogAppendTime, 99)
		lim.timestampType = LogAppendTime
		if _, _, err := validateBatch(c, &lim); err != nil {
			t.Fatalf("batch invalid after in-place assignment: %v", err)
		}
		if checkStored(c, 12345, true) != "" {
			t.Fatal("stored batch check disagrees with validation")
		}
	})
}

// FuzzRecovery writes a log of valid batches, then replaces the tail of
// the active segment and its index file with fuzzed bytes and recovers.
// Whatever the bytes, opening must not fail or panic, the synced valid
// prefix must survive, everything served must be valid and contiguous,
// and a second open must see the same log.
func FuzzRecovery(f *testing.F) {
	f.Add(uint8(3), uint8(0), []byte("garbage"), []byte{})
	f.Add(uint8(0), uint8(0), makeBatch(plain(2)), []byte{0, 0, 0, 1, 0, 0, 0, 0})
	f.Add(uint8(10), uint8(0), makeBatch(plain(1))[:40], bytes.Repeat([]byte{0, 0, 0, 5, 0, 0, 1, 0}, 3))
	nb := makeBatch(plain(1))
	setBaseOffsetAndEpoch(nb, 5, 0)
	f.Add(uint8(5), uint8(0), nb, []byte{})
	f.Add(uint8(30), uint8(1), []byte("torn sealed segment"), []byte{})
	f.Add(uint8(30), uint8(3), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, n, which uint8, tail, index []byte) {
		n %= 32
		fsys := newCrashFS()
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		now := func() time.Time { return testNow }
		cfg := Config{SegmentBytes: 1500, IndexIntervalBytes: 100}
		m, err := NewManager("/data", Options{FS: fsys, Logger: logger, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.Open("t", 0, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(n); i++ {
			if _, err := l.Append(makeBatch(plain(1+i%3)), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		synced := l.LogEndOffset()
		if err := l.syncPendingSealed(); err != nil {
			t.Fatal(err)
		}
		target := l.mu.segs[len(l.mu.segs)-1]
		if which%2 == 1 && len(l.mu.segs) > 1 {
			// A sealed segment whose background fsync did not finish: it
			// is torn from its middle on and the recovery point says it
			// must be scanned.
			target = l.mu.segs[int(which/2)%(len(l.mu.segs)-1)]
			mid := target.size.Load() / 2
			target.log.Truncate(mid)
			target.log.WriteAt(tail, mid)
			target.log.Sync()
			synced = target.base
			l.bg.Wait()
			l.rpMu.Lock()
			err := l.writeOffsetCheckpoint(recoveryPointName, target.base)
			l.rpMu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		} else {
			target.log.WriteAt(tail, target.size.Load())
			target.log.Sync()
		}
		target.index.Truncate(0)
		target.index.WriteAt(index, 0)
		target.index.Sync()
		img := fsys.CrashClone(nil)

		open := func() (*Manager, *Log) {
			m, err := NewManager("/data", Options{FS: img, Logger: logger, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			l, err := m.Open("t", 0, cfg)
			if err != nil {
				t.Fatalf("recovery failed: %v", err)
			}
			return m, l
		}
		m1, l1 := open()
		leo := l1.LogEndOffset()
		if leo < synced {
			t.Fatalf("lost synced data: leo %d < %d", leo, synced)
		}
		var served []byte
		next := int64(0)
		for next < l1.HighWatermark() {
			out, err := l1.Read(next, 1<<20, nil)
			if err != nil || len(out) == 0 {
				t.Fatalf("read %d: %v", next, err)
			}
			served = append(served, out...)
			for len(out) > 0 {
				h := parseHeader(out)
				if r := checkStored(out[:h.Size], next, true); r != "" {
					t.Fatalf("served an invalid batch at %d: %s", next, r)
				}
				next = h.LastOffset() + 1
				out = out[h.Size:]
			}
		}
		checkIndexes(t, l1)
		m1.Close()
		m2, l2 := open()
		defer m2.Close()
		if l2.LogEndOffset() != leo {
			t.Fatalf("second open: leo %d, first %d", l2.LogEndOffset(), leo)
		}
		var again []byte
		for off := int64(0); off < l2.HighWatermark(); {
			out, err := l2.Read(off, 1<<20, nil)
			if err != nil || len(out) == 0 {
				t.Fatalf("reread %d: %v", off, err)
			}
			again = append(again, out...)
			for len(out) > 0 {
				h := parseHeader(out)
				off = h.LastOffset() + 1
				out = out[h.Size:]
			}
		}
		if !bytes.Equal(served, again) {
			t.Fatal("second open serves different bytes")
		}
	})
}

// refWalk is the plain record walk that scanRecords and walkRecords
// replace: each field decoded with binary.Varint from a slice bounded by
// its record, and then every record's timestamp checked on its own. It
// is kept simple so that the fast walk can be fuzzed against it.
func refWalk(p []byte, count int32, baseTs int64, lim *validateLimits) (int64, error) {
	hi := int64(math.MinInt64)
	var stamps []int64
	for i := int32(0); i < count; i++ {
		length, n := binary.Varint(p)
		if n <= 0 || length < minRecordSize || length > int64(len(p)-n) {
			return 0, fmt.Errorf("%w: record %d: bad length", ErrInvalidRecord, i)
		}
		rec := p[n+1 : n+int(length)]
		p = p[n+int(length):]
		tsDelta, n := binary.Varint(rec)
		if n <= 0 {
			return 0, fmt.Errorf("%w: record %d: bad timestamp delta", ErrInvalidRecord, i)
		}
		offDelta, m := binary.Varint(rec[n:])
		if m <= 0 {
			return 0, fmt.Errorf("%w: record %d: bad offset delta", ErrInvalidRecord, i)
		}
		if offDelta != int64(i) {
			return 0, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, offDelta)
		}
		if err := refFields(rec, n+m, i); err != nil {
			return 0, err
		}
		hi = max(hi, baseTs+tsDelta)
		stamps = append(stamps, baseTs+tsDelta)
	}
	if len(p) != 0 {
		return 0, fmt.Errorf("%w: %d bytes after the last record", ErrInvalidRecord, len(p))
	}
	for _, ts := range stamps {
		if err := checkTimestamp(ts, lim); err != nil {
			return 0, err
		}
	}
	return hi, nil
}

// refFields checks key, value and headers of record i from rec[at:] (rec
// is the record after its attributes byte) as Kafka's DefaultRecord
// reads them.
func refFields(rec []byte, at int, i int32) error {
	p := rec[at:]
	bad := func(what string) error { return fmt.Errorf("%w: record %d: %s", ErrInvalidRecord, i, what) }
	for _, f := range []string{"key", "value"} {
		l, n := binary.Varint(p)
		if n <= 0 || l > int64(len(p)-n) {
			return bad("bad " + f + " length")
		}
		p = p[n+int(max(l, 0)):]
	}
	h, n := binary.Varint(p)
	if n <= 0 || h < 0 || h > int64(len(p)-n)/2 {
		return bad("bad header count")
	}
	p = p[n:]
	for j := int64(0); j < h; j++ {
		l, n := binary.Varint(p)
		if n <= 0 || l < 0 || l > int64(len(p)-n) {
			return bad(fmt.Sprintf("header %d: bad key length", j))
		}
		p = p[n+int(l):]
		l, n = binary.Varint(p)
		if n <= 0 || l > int64(len(p)-n) {
			return bad(fmt.Sprintf("header %d: bad value length", j))
		}
		p = p[n+int(max(l, 0)):]
	}
	if len(p) != 0 {
		return bad(fmt.Sprintf("its fields take %d bytes of its %d", len(rec)+1-len(p), len(rec)+1))
	}
	return nil
}

// FuzzScanRecords checks the record walk against refWalk: the same
// records are accepted with the same largest timestamp, and rejected with
// the same error (for framing errors, the same text; for timestamp
// errors, which name the earliest or latest timestamp rather than the
// first bad one, the same sentinel).
func FuzzScanRecords(f *testing.F) {
	sections := func(s spec) []byte { return makeBatch(s)[batchHeaderSize:] }
	big := plain(3)
	big.valueSize = 9000 // three-byte lengths
	steps := plain(100)
	steps.tsStep = 70 // timestamp deltas past two bytes
	for _, s := range []spec{plain(1), plain(7), plain(70), big, steps} {
		f.Add(sections(s), int32(s.records), int64(1_000), int64(0), int64(0))
		f.Add(sections(s), int32(s.records), int64(-1), int64(500), int64(500))
	}
	f.Add([]byte{0x01, 0, 0, 0, 0, 0, 0}, int32(1), int64(0), int64(0), int64(0))
	f.Add(bytes.Repeat([]byte{0xff}, 20), int32(2), int64(0), int64(0), int64(0))
	f.Add(slices.Concat(rawRecord(0, 0, []byte("abcd")), rawRecord(-900, 1, []byte("abcd"))), int32(2), int64(1_000), int64(500), int64(500))
	f.Fuzz(func(t *testing.T, p []byte, count int32, baseTs, before, after int64) {
		// now is 1000 so that small fuzzed bounds matter
		lim := validateLimits{timestampType: CreateTime, beforeMaxMs: before, afterMaxMs: after, nowMs: 1_000}
		b := make([]byte, batchHeaderSize, batchHeaderSize+len(p))
		binary.BigEndian.PutUint64(b[offBaseTimestamp:], uint64(baseTs))
		binary.BigEndian.PutUint32(b[offRecordCount:], uint32(count))
		b = append(b, p...)
		h := parseHeader(b)
		got, err := walkRecords(b, &h, &lim)
		want, wantErr := refWalk(p, count, baseTs, &lim)
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("walk: %d, %v; reference: %d, %v", got, err, want, wantErr)
		case err == nil && got != want:
			t.Fatalf("largest timestamp %d, reference %d", got, want)
		case isErr(wantErr, ErrInvalidTimestamp):
			if !isErr(err, ErrInvalidTimestamp) {
				t.Fatalf("walk: %v; reference: %v", err, wantErr)
			}
		case err != nil && err.Error() != wantErr.Error():
			t.Fatalf("walk: %v; reference: %v", err, wantErr)
		}
	})
}

// FuzzDecodePartitionMetadata: any bytes decode or fail cleanly, and what
// decodes encodes back to the same id.
func FuzzDecodePartitionMetadata(f *testing.F) {
	f.Add([]byte("version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA"))
	f.Add([]byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n"))
	f.Add([]byte("version: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := decodePartitionMetadata(data)
		if err != nil {
			return
		}
		again, err := decodePartitionMetadata(encodePartitionMetadata(id))
		if err != nil || again != id {
			t.Fatalf("round trip of %x: %x %v", id, again, err)
		}
	})
}
