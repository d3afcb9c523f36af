package log

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kv is one test record: a nil key is a null key, a nil value a tombstone.
type kv struct {
	key, value []byte
}

// keyedBatch encodes a v2 batch of records (base offset 0, CRC set).
func keyedBatch(recs []kv, ts int64, codec int16, pid int64, epoch int16, seq int32, txn bool) []byte {
	var raw []byte
	for i, r := range recs {
		rec := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Key: r.key, Value: r.value}
		body := rec.AppendTo(nil)
		rec.Length = int32(len(body) - 1)
		raw = rec.AppendTo(raw)
	}
	if codec != 0 {
		raw = compressForTest(codec, raw)
	}
	attrs := codec
	if txn {
		attrs |= attrTransactional
	}
	b := kmsg.RecordBatch{
		Length: int32(49 + len(raw)), PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrs,
		LastOffsetDelta: int32(len(recs) - 1), FirstTimestamp: ts, MaxTimestamp: ts + int64(len(recs)-1),
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: int32(len(recs)), Records: raw,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[offCRC:], batchCRC(out))
	return out
}

// readRecord is a record as read back.
type readRecord struct {
	offset int64
	key    []byte
	value  []byte
	ts     int64
	txn    bool
	ctrl   bool
}

// decodeAll reads every batch of the log and returns its records,
// checking each batch's CRC.
func decodeAll(t testing.TB, l *Log) []readRecord {
	t.Helper()
	var out []readRecord
	for _, b := range readAll(t, l, l.LogStartOffset()) {
		h := parseHeader(b)
		if batchCRC(b) != h.CRC {
			t.Fatalf("batch at %d: CRC mismatch", h.BaseOffset)
		}
		p := b[batchHeaderSize:]
		if h.Compression() != 0 {
			var err error
			if p, err = Decompress(nil, h.Compression(), p, 1<<30); err != nil {
				t.Fatalf("batch at %d: %v", h.BaseOffset, err)
			}
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatalf("batch at %d: kmsg: %v", h.BaseOffset, err)
		}
		n := 0
		err := walkCleanRecords(p, h.RecordCount, func(r *cleanRecord) {
			n++
			var rec kmsg.Record
			if err := rec.ReadFrom(r.raw); err != nil {
				t.Fatalf("record: %v", err)
			}
			ts := h.BaseTimestamp + rec.TimestampDelta64
			out = append(out, readRecord{offset: h.BaseOffset + int64(rec.OffsetDelta), key: rec.Key, value: rec.Value, ts: ts,
				txn: h.Attributes&attrTransactional != 0, ctrl: h.Attributes&attrControl != 0})
		})
		if err != nil || n != int(h.RecordCount) {
			t.Fatalf("batch at %d: %d of %d records: %v", h.BaseOffset, n, h.RecordCount, err)
		}
	}
	return out
}

func compactConfig() Config {
	return Config{SegmentBytes: 600, IndexIntervalBytes: 100, CleanupCompact: true, DeleteRetentionMs: 1000, RetentionMs: -1}
}

// TestCleanerProperty produces random keys, values and tombstones in
// random codecs, cleans, and checks that what is read back is exactly the
// latest record of each key in the cleaned range (everything after it
// untouched), at its original offset, with tombstones kept until the
// delete horizon of the pass that first saw them, then gone.
func TestCleanerProperty(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			var fsys FS = NewMemFS()
			if seed == 5 {
				fsys = nil // the real file system too
			}
			f := newFixture(t, fsys)
			cfg := compactConfig()
			cfg.SegmentBytes = int64(300 + rng.IntN(1500))
			l := f.log(cfg)
			produced := map[int64]kv{}
			keys := 5 + rng.IntN(40)
			rounds := 1 + rng.IntN(3)
			for round := 0; round < rounds; round++ {
				for i, n := 0, 20+rng.IntN(150); i < n; i++ {
					recs := make([]kv, 1+rng.IntN(5))
					for j := range recs {
						k := []byte(fmt.Sprintf("key-%d", rng.IntN(keys)))
						var v []byte
						if rng.IntN(8) != 0 {
							v = []byte(fmt.Sprintf("v-%d-%d", i, rng.IntN(1000)))
						}
						recs[j] = kv{k, v}
					}
					codec := int16(0)
					if rng.IntN(3) == 0 {
						codec = int16(1 + rng.IntN(4))
					}
					res := mustAppend(t, l, keyedBatch(recs, f.now.UnixMilli(), codec, -1, -1, -1, false))
					for j, r := range recs {
						produced[res.BaseOffset+int64(j)] = r
					}
				}
				before := decodeAll(t, l)
				st, err := l.Clean(f.now, CleanerOptions{DedupeBufferSize: int64(24 * (16 + rng.IntN(400)))}, false)
				if err != nil {
					t.Fatal(err)
				}
				after := decodeAll(t, l)
				t.Logf("round %d: %d -> %d records, %+v", round, len(before), len(after), st)
				checkCleaned(t, before, after, produced, st, f.now.UnixMilli(), l)
				checkIndexes(t, l)
				if rng.IntN(2) == 0 {
					f.reopen()
					l = f.log(cfg)
					if got := decodeAll(t, l); !sameRecords(got, after) {
						t.Fatalf("after reopen: %d records, before %d", len(got), len(after))
					}
				}
				f.now = f.now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			}
		})
	}
}

func sameRecords(a, b []readRecord) bool {
	return slices.EqualFunc(a, b, func(x, y readRecord) bool {
		return x.offset == y.offset && bytes.Equal(x.key, y.key) && bytes.Equal(x.value, y.value) && (x.value == nil) == (y.value == nil) && x.ts == y.ts
	})
}

// checkCleaned compares a log before and after a pass.
func checkCleaned(t *testing.T, before, after []readRecord, produced map[int64]kv, st CleanStats, nowMs int64, l *Log) {
	t.Helper()
	latest := map[string]int64{}
	for _, r := range before {
		if r.offset < st.End || !st.Cleaned {
			latest[string(r.key)] = r.offset
		}
	}
	var horizon = nowMs + l.Config().DeleteRetentionMs
	_ = horizon
	i := 0
	for _, r := range after {
		p, ok := produced[r.offset]
		if !ok {
			t.Fatalf("offset %d was never produced", r.offset)
		}
		if !bytes.Equal(p.key, r.key) || !bytes.Equal(p.value, r.value) || (p.value == nil) != (r.value == nil) {
			t.Fatalf("offset %d reads %q=%q, produced %q=%q", r.offset, r.key, r.value, p.key, p.value)
		}
		for i < len(before) && before[i].offset < r.offset {
			// a removed record: it must be obsolete, or an expired tombstone
			b := before[i]
			if b.offset >= st.End && st.Cleaned {
				t.Fatalf("offset %d after the cleaned range was removed", b.offset)
			}
			if latest[string(b.key)] == b.offset && b.value != nil {
				t.Fatalf("offset %d, the latest value of %q, was removed", b.offset, b.key)
			}
			i++
		}
		if i >= len(before) || before[i].offset != r.offset {
			t.Fatalf("offset %d reads back but was not there before", r.offset)
		}
		if before[i].ts != r.ts {
			t.Fatalf("offset %d: timestamp %d, was %d", r.offset, r.ts, before[i].ts)
		}
		if st.Cleaned && r.offset < st.End && latest[string(r.key)] != r.offset {
			t.Fatalf("offset %d: %q has a later record at %d in the cleaned range", r.offset, r.key, latest[string(r.key)])
		}
		i++
	}
	for ; i < len(before); i++ {
		b := before[i]
		if b.offset >= st.End || (latest[string(b.key)] == b.offset && b.value != nil) {
			t.Fatalf("offset %d (%q) at the end was removed", b.offset, b.key)
		}
	}
}

// TestCleanerTombstones: a tombstone stays for delete.retention.ms after
// the pass that first saw it, then a pass removes it.
func TestCleanerTombstones(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := compactConfig()
	cfg.SegmentBytes = 200
	l := f.log(cfg)
	mustAppend(t, l, keyedBatch([]kv{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("1")}}, 1000, 0, -1, -1, -1, false))
	mustAppend(t, l, keyedBatch([]kv{{[]byte("a"), nil}}, 1000, 0, -1, -1, -1, false))
	for range 6 {
		mustAppend(t, l, keyedBatch([]kv{{[]byte("c"), []byte("x")}}, 1000, 0, -1, -1, -1, false))
	}
	st, err := l.Clean(f.now, CleanerOptions{}, true)
	if err != nil || !st.Cleaned {
		t.Fatalf("clean: %+v %v", st, err)
	}
	recs := decodeAll(t, l)
	if !hasRecord(recs, 2, "a", true) || hasRecord(recs, 0, "a", false) || !hasRecord(recs, 1, "b", false) {
		t.Fatalf("after the first pass: %+v", recs)
	}
	if h := l.nextHorizonMs.Load(); h != f.now.UnixMilli()+1000 {
		t.Fatalf("next horizon %d, want %d", h, f.now.UnixMilli()+1000)
	}
	// Before the horizon nothing changes.
	f.now = f.now.Add(500 * time.Millisecond)
	if _, err := l.Clean(f.now, CleanerOptions{}, true); err != nil {
		t.Fatal(err)
	}
	if !hasRecord(decodeAll(t, l), 2, "a", true) {
		t.Fatal("tombstone removed before its horizon")
	}
	f.now = f.now.Add(600 * time.Millisecond)
	st, err = l.Clean(f.now, CleanerOptions{}, false) // due by the horizon alone
	if err != nil || !st.Cleaned {
		t.Fatalf("clean after the horizon: %+v %v", st, err)
	}
	recs = decodeAll(t, l)
	if hasRecord(recs, 2, "a", true) || !hasRecord(recs, 1, "b", false) {
		t.Fatalf("after the horizon: %+v", recs)
	}
}

func hasRecord(recs []readRecord, offset int64, key string, tombstone bool) bool {
	for _, r := range recs {
		if r.offset == offset && string(r.key) == key && (r.value == nil) == tombstone {
			return true
		}
	}
	return false
}

// TestCompactedTopicRefusesKeylessRecords: Kafka's LogValidator answers a
// record without a key on a compacted topic with INVALID_RECORD and this
// message; other topics take it.
func TestCompactedTopicRefusesKeylessRecords(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(compactConfig())
	for _, codec := range []int16{0, codecGzip, codecZstd} {
		b := keyedBatch([]kv{{[]byte("k"), []byte("v")}, {nil, []byte("v")}}, 1000, codec, -1, -1, -1, false)
		_, err := l.Append(b, 0)
		if ErrorCode(err) != 87 || err.Error() != "Compacted topic cannot accept message without key in topic partition t-0" {
			t.Fatalf("codec %d: %v (code %d)", codec, err, ErrorCode(err))
		}
	}
	mustAppend(t, l, keyedBatch([]kv{{[]byte("k"), nil}}, 1000, codecLZ4, -1, -1, -1, false))
	l.SetConfig(Config{})
	mustAppend(t, l, keyedBatch([]kv{{nil, []byte("v")}}, 1000, 0, -1, -1, -1, false))
}
