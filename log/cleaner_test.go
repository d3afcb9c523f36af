package log

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log/recordbatch"
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
		rd := recordbatch.NewReader(p, h.RecordCount)
		var r recordbatch.Record
		for rd.Next(&r) {
			n++
			var rec kmsg.Record
			if err := rec.ReadFrom(r.Raw); err != nil {
				t.Fatalf("record: %v", err)
			}
			ts := h.BaseTimestamp + rec.TimestampDelta64
			out = append(out, readRecord{offset: h.BaseOffset + int64(rec.OffsetDelta), key: rec.Key, value: rec.Value, ts: ts,
				txn: h.Attributes&attrTransactional != 0, ctrl: h.Attributes&attrControl != 0})
		}
		if err := rd.Err(); err != nil || n != int(h.RecordCount) {
			t.Fatalf("batch at %d: %d of %d records: %v", h.BaseOffset, n, h.RecordCount, rd.Err())
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
			lastEnd := int64(0)
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
				if st.Cleaned && st.FirstDirty < lastEnd {
					t.Fatalf("pass started at %d, the last one (checkpoint) ended at %d", st.FirstDirty, lastEnd)
				}
				if st.Cleaned {
					lastEnd = st.End
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

// TestCleanerTransactions: aborted records go, a COMMIT marker stays while
// a record of its transaction does, markers stay until their delete
// horizon, nothing at or after the first unstable offset is touched, and
// a producer's last batch stays (empty) so its state survives.
func TestCleanerTransactions(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := compactConfig()
	cfg.SegmentBytes = 60 // every append rolls
	l := f.log(cfg)
	old := f.now.Add(-time.Hour).UnixMilli()
	kvs := func(pairs ...string) []kv {
		var out []kv
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, kv{[]byte(pairs[i]), []byte(pairs[i+1])})
		}
		return out
	}
	mustAppend(t, l, keyedBatch(kvs("k1", "a1", "k2", "a2"), old, 0, 10, 0, 0, true)) // 0-1
	mustAppend(t, l, keyedBatch(kvs("k1", "b1", "k3", "b3"), old, 0, 11, 0, 0, true)) // 2-3
	if _, err := l.AppendMarker(10, 0, true, 0, 0); err != nil {                      // 4 COMMIT
		t.Fatal(err)
	}
	if _, err := l.AppendMarker(11, 0, false, 0, 0); err != nil { // 5 ABORT
		t.Fatal(err)
	}
	mustAppend(t, l, keyedBatch(kvs("k1", "c1"), old, 0, -1, -1, -1, false))          // 6
	mustAppend(t, l, keyedBatch(kvs("k4", "d4", "k1", "d1"), old, 0, 12, 0, 0, true)) // 7-8 open
	mustAppend(t, l, keyedBatch(kvs("k2", "e2"), old, 0, -1, -1, -1, false))          // 9
	mustAppend(t, l, keyedBatch(kvs("end", "x"), old, 0, -1, -1, -1, false))          // 10
	if lso := l.LastStableOffset(); lso != 7 {
		t.Fatalf("LSO %d, want 7", lso)
	}
	st, err := l.Clean(f.now, CleanerOptions{}, true)
	if err != nil || !st.Cleaned || st.End != 7 {
		t.Fatalf("first pass: %+v %v", st, err)
	}
	offsets := func() []int64 {
		var out []int64
		for _, r := range decodeAll(t, l) {
			out = append(out, r.offset)
		}
		return out
	}
	// k1=a1 (0) is obsolete (6); k2=a2 (1) is the latest below the LSO;
	// the aborted 2-3 go; both markers stay (horizon set); 7 on untouched.
	if got, want := offsets(), []int64{1, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) {
		t.Fatalf("after the first pass: %v, want %v", got, want)
	}
	for _, b := range readAll(t, l, 0) {
		h := parseHeader(b)
		if h.Attributes&attrControl != 0 && (h.Attributes&attrDeleteHorizon == 0 || h.BaseTimestamp != f.now.UnixMilli()+1000) {
			t.Fatalf("marker at %d: attributes %#x, base timestamp %d: no delete horizon", h.BaseOffset, h.Attributes, h.BaseTimestamp)
		}
	}
	if ab := l.AbortedTransactions(0, 11, nil); len(ab) != 1 || ab[0].ProducerID != 11 || ab[0].FirstOffset != 2 {
		t.Fatalf("aborted transactions %+v", ab)
	}
	// Close the open transaction; past the horizon the next pass removes
	// the abort marker and (k2=a2 now obsolete) the commit marker; the
	// producers' last data batches stay, empty.
	if _, err := l.AppendMarker(12, 0, true, 0, 0); err != nil { // 11
		t.Fatal(err)
	}
	mustAppend(t, l, keyedBatch(kvs("end", "y"), old, 0, -1, -1, -1, false)) // 12
	f.now = f.now.Add(2 * time.Second)
	if st, err = l.Clean(f.now, CleanerOptions{}, true); err != nil || !st.Cleaned {
		t.Fatalf("second pass: %+v %v", st, err)
	}
	recs := decodeAll(t, l)
	var got []int64
	for _, r := range recs {
		got = append(got, r.offset)
	}
	// (k1=c1 at 6 is obsolete now: the committed k1=d1 at 8 is newer; 10
	// stays, the newer "end" at 12 is in the active segment)
	if want := []int64{7, 8, 9, 10, 11, 12}; !slices.Equal(got, want) {
		t.Fatalf("after the second pass: %v, want %v", got, want)
	}
	var bases []int64
	for _, b := range readAll(t, l, 0) {
		h := parseHeader(b)
		bases = append(bases, h.BaseOffset)
		if h.RecordCount == 0 && h.ProducerID != 10 && h.ProducerID != 11 {
			t.Fatalf("empty batch at %d of producer %d", h.BaseOffset, h.ProducerID)
		}
	}
	if want := []int64{0, 2, 7, 9, 10, 11, 12}; !slices.Equal(bases, want) {
		t.Fatalf("batches at %v, want %v (empty last batches of producers 10 and 11 kept)", bases, want)
	}
	// read_committed still sees what it should
	for off := int64(0); off < 13; {
		b, err := l.ReadCommitted(off, 1<<20, nil)
		if err != nil || NextOffsetAfter(b) <= off {
			t.Fatalf("read_committed from %d: next %d, %v", off, NextOffsetAfter(b), err)
		}
		off = NextOffsetAfter(b)
	}
	f.reopen()
	l = f.log(cfg)
	if got2 := decodeAll(t, l); !sameRecords(got2, recs) {
		t.Fatal("reopen changed the records")
	}
}

// TestCleanerCrash crashes a cleaning pass at every one of its file
// system operations (with several images of what reaches the disk) and
// checks that the log then opens, reads back a valid log that still holds
// the latest record of every key at its offset and nothing that was not
// there before, and that cleaning it again gives the uncrashed result.
func TestCleanerCrash(t *testing.T) {
	cfg := compactConfig()
	cfg.SegmentBytes = 500
	base := NewMemFS()
	f := newFixture(t, base)
	l := f.log(cfg)
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 120 {
		recs := make([]kv, 1+rng.IntN(3))
		for j := range recs {
			var v []byte
			if rng.IntN(6) != 0 {
				v = []byte(fmt.Sprintf("v%d", i))
			}
			recs[j] = kv{[]byte(fmt.Sprintf("k%d", rng.IntN(12))), v}
		}
		mustAppend(t, l, keyedBatch(recs, 1000, int16(rng.IntN(2)*codecZstd), -1, -1, -1, false))
	}
	// a transaction to abort, so that the cleaned groups carry .txnindex
	mustAppend(t, l, keyedBatch([]kv{{[]byte("k1"), []byte("aborted")}}, 1000, 0, 9, 0, 0, true))
	if _, err := l.AppendMarker(9, 0, false, 0, 0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, keyedBatch([]kv{{[]byte("tail"), []byte("x")}}, 1000, 0, -1, -1, -1, false))
	before := decodeAll(t, l)
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
	f.m = nil

	open := func(fsys *MemFS) (*Manager, *Log) {
		t.Helper()
		m, err := NewManager("/data", Options{FS: fsys, Logger: testLogger(t), Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.Open("t", 0, cfg)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return m, l
	}
	// The uncrashed pass, and how many operations it takes.
	ref := base.CrashClone(nil)
	m, rl := open(ref)
	ops0 := ref.Ops()
	if st, err := rl.Clean(testNow, CleanerOptions{}, true); err != nil || !st.Cleaned {
		t.Fatalf("clean: %+v %v", st, err)
	}
	ops := ref.Ops() - ops0
	want := decodeAll(t, rl)
	m.Close()
	if len(want) >= len(before) {
		t.Fatalf("cleaning kept %d of %d records", len(want), len(before))
	}
	latest := map[string]readRecord{}
	for _, r := range before {
		latest[string(r.key)] = r
	}
	byOffset := map[int64]readRecord{}
	for _, r := range before {
		byOffset[r.offset] = r
	}
	for k := 1; k <= ops; k++ {
		images := 1
		if k%5 == 0 {
			images = 3 // more images of what reached the disk, at some points
		}
		for img := range images {
			fsys := base.CrashClone(nil)
			m, l := open(fsys)
			fsys.CrashAfter(k, rand.New(rand.NewPCG(uint64(k), uint64(img))))
			l.Clean(testNow, CleanerOptions{}, true)
			crashed := fsys.Crashed()
			m.Close()
			if crashed == nil {
				t.Fatalf("crash point %d of %d not reached", k, ops)
			}
			m2, l2 := open(crashed)
			got := decodeAll(t, l2)
			seen := map[string]bool{}
			for _, r := range got {
				b, ok := byOffset[r.offset]
				if !ok || !bytes.Equal(b.key, r.key) || !bytes.Equal(b.value, r.value) {
					t.Fatalf("crash %d/%d: offset %d reads %q=%q, not what was there", k, img, r.offset, r.key, r.value)
				}
				if latest[string(r.key)].offset == r.offset {
					seen[string(r.key)] = true
				}
			}
			for key := range latest {
				if !seen[key] {
					t.Fatalf("crash %d/%d: the latest record of %q (offset %d) is gone", k, img, key, latest[key].offset)
				}
			}
			if st, err := l2.Clean(testNow, CleanerOptions{}, true); err != nil {
				t.Fatalf("crash %d/%d: clean after recovery: %+v %v", k, img, st, err)
			}
			if again := decodeAll(t, l2); !sameRecords(again, want) {
				t.Fatalf("crash %d/%d: cleaning after recovery gives %d records, want %d", k, img, len(again), len(want))
			}
			checkIndexes(t, l2)
			m2.Close()
		}
	}
	t.Logf("%d crash points", ops)
}

// TestCompactRetentionAndDeleteRecords: compact,delete still deletes by
// size, compact alone does not; DeleteRecords into a hole moves the log
// start there and reads from it answer the next batch.
func TestCompactRetentionAndDeleteRecords(t *testing.T) {
	for _, policy := range []string{"compact", "compact,delete"} {
		t.Run(policy, func(t *testing.T) {
			f := newFixture(t, NewMemFS())
			cfg := compactConfig()
			cfg.SegmentBytes = 60 // a segment per batch
			cfg.RetentionBytes = 300
			cfg.CleanupDelete = policy == "compact,delete"
			l := f.log(cfg)
			for i := range 12 {
				mustAppend(t, l, keyedBatch([]kv{{[]byte(fmt.Sprintf("k%d", i%3)), []byte("v")}}, 1000, 0, -1, -1, -1, false))
			}
			if err := l.applyRetention(f.now); err != nil {
				t.Fatal(err)
			}
			start := l.LogStartOffset()
			if (start > 0) != cfg.CleanupDelete {
				t.Fatalf("log start %d after retention.bytes with %s", start, policy)
			}
			if _, err := l.Clean(f.now, CleanerOptions{}, true); err != nil {
				t.Fatal(err)
			}
			recs := decodeAll(t, l)
			// a hole: an offset removed by the cleaner, above the start
			hole := int64(-1)
			for o := l.LogStartOffset(); o < recs[len(recs)-1].offset; o++ {
				if !slices.ContainsFunc(recs, func(r readRecord) bool { return r.offset == o }) {
					hole = o
					break
				}
			}
			if hole < 0 {
				t.Fatalf("no hole in %+v", recs)
			}
			if got, err := l.DeleteRecordsBefore(hole); err != nil || got != hole || l.LogStartOffset() != hole {
				t.Fatalf("DeleteRecordsBefore(%d): %d %v, start %d", hole, got, err, l.LogStartOffset())
			}
			b, err := l.Read(hole, 1<<20, nil)
			if err != nil || len(b) == 0 || parseHeader(b).BaseOffset <= hole {
				t.Fatalf("read at the hole %d: %d bytes, %v", hole, len(b), err)
			}
			checkIndexes(t, l)
		})
	}
}

// TestCleanerEligibility: min.cleanable.dirty.ratio, min.compaction.lag.ms
// and max.compaction.lag.ms decide whether and how far a log is cleaned.
func TestCleanerEligibility(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := compactConfig()
	cfg.SegmentBytes = 60 // a segment per batch
	cfg.MinCleanableDirtyRatio = 0.5
	l := f.log(cfg)
	nowMs := f.now.UnixMilli()
	put := func(key string, ts int64) {
		mustAppend(t, l, keyedBatch([]kv{{[]byte(key), []byte("v")}}, ts, 0, -1, -1, -1, false))
	}
	for i := range 8 {
		put(fmt.Sprintf("k%d", i%2), nowMs-10_000+int64(i)) // 0-7: ten seconds old
	}
	put("new", nowMs) // 8: now
	put("tail", nowMs)
	st, err := l.Clean(f.now, CleanerOptions{}, false)
	if err != nil || !st.Cleaned || st.End != 9 {
		t.Fatalf("all dirty: %+v %v", st, err)
	}
	// Dirty part now: 9 (one segment) against 8's cleaned ones: 2 of 3
	// segments' bytes are clean, the ratio is under 0.5.
	put("k0", nowMs-100_000) // 10
	put("tail2", nowMs-100_000)
	if st, err := l.Clean(f.now, CleanerOptions{}, false); err != nil || st.Cleaned {
		t.Fatalf("dirty ratio under min.cleanable.dirty.ratio: %+v %v", st, err)
	}
	// max.compaction.lag.ms: the oldest dirty record is due.
	cfg.MaxCompactionLagMs = 1
	l.SetConfig(cfg)
	f.now = f.now.Add(time.Second)
	if st, err := l.Clean(f.now, CleanerOptions{}, false); err != nil || !st.Cleaned {
		t.Fatalf("max.compaction.lag.ms passed: %+v %v", st, err)
	}
	// min.compaction.lag.ms holds back the segments with younger records.
	cfg.MaxCompactionLagMs, cfg.MinCompactionLagMs = 0, 60_000
	l.SetConfig(cfg)
	put("k0", f.now.UnixMilli()-100_000) // 12: old enough
	put("k1", f.now.UnixMilli())         // 13, 14: too young
	put("k1", f.now.UnixMilli())
	put("tail3", f.now.UnixMilli())
	st, err = l.Clean(f.now, CleanerOptions{}, true)
	if err != nil || !st.Cleaned || st.End != 13 {
		t.Fatalf("min.compaction.lag.ms: %+v %v", st, err)
	}
	var got []int64
	for _, r := range decodeAll(t, l) {
		if string(r.key) == "k0" || string(r.key) == "k1" {
			got = append(got, r.offset)
		}
	}
	// k0's 10 is gone (12 is newer); k1's 7 is not: the young 13 and 14
	// are not in the map
	if want := []int64{7, 12, 13, 14}; !slices.Equal(got, want) {
		t.Fatalf("k0/k1 records at %v, want %v", got, want)
	}
}

// TestCleanerThreads: the manager's cleaner threads clean a compacted log
// by themselves, and log.cleaner.threads and the backoff change while they
// run (dynamic configs).
func TestCleanerThreads(t *testing.T) {
	f := newFixture(t, NewMemFS())
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(f.dir, Options{FS: f.fs, Logger: testLogger(t), Now: func() time.Time { return f.now },
		Cleaner: CleanerOptions{Threads: 1, Backoff: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	cfg := compactConfig()
	cfg.SegmentBytes = 60
	l := f.log(cfg)
	for i := range 10 {
		mustAppend(t, l, keyedBatch([]kv{{[]byte("k"), []byte(fmt.Sprint(i))}}, 1000, 0, -1, -1, -1, false))
	}
	// The thread sleeps an hour; the new options wake it, with 3 threads.
	m.SetCleanerOptions(CleanerOptions{Threads: 3, Backoff: 10 * time.Millisecond})
	deadline := time.Now().Add(10 * time.Second)
	for len(decodeAll(t, l)) > 2 {
		if time.Now().After(deadline) {
			t.Fatalf("not cleaned by the threads: %d records", len(decodeAll(t, l)))
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
	}
	m.cleaner.mu.Lock()
	live := len(m.cleaner.live)
	m.cleaner.mu.Unlock()
	if live != 3 {
		t.Fatalf("%d threads running, want 3", live)
	}
	m.SetCleanerOptions(CleanerOptions{Threads: 1, Backoff: 10 * time.Millisecond})
	for {
		m.cleaner.mu.Lock()
		live = len(m.cleaner.live)
		m.cleaner.mu.Unlock()
		if live == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads running after going down to 1", live)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCleanerThrottle: log.cleaner.io.max.bytes.per.second holds a pass to
// the rate (a lower bound on its duration: it cannot be faster).
func TestCleanerThrottle(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := compactConfig()
	cfg.SegmentBytes = 64 << 10
	l := f.log(cfg)
	v := bytes.Repeat([]byte("x"), 1000)
	for i := range 400 {
		mustAppend(t, l, keyedBatch([]kv{{[]byte(fmt.Sprint(i % 10)), v}}, 1000, 0, -1, -1, -1, false))
	}
	const rate = 2 << 20
	start := time.Now()
	st, err := l.Clean(f.now, CleanerOptions{IOMaxBytesPerSecond: rate}, true)
	took := time.Since(start)
	if err != nil || !st.Cleaned {
		t.Fatalf("clean: %+v %v", st, err)
	}
	if min := time.Duration(float64(st.BytesRead+st.BytesWritten)/rate*float64(time.Second)) - 50*time.Millisecond; took < min {
		t.Fatalf("%d bytes read and %d written in %v, faster than %d B/s allows (%v)", st.BytesRead, st.BytesWritten, took, rate, min)
	}
}
