package log

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendAssignsOffsetsAndEpoch(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{})
	var want [][]byte
	for i := 0; i < 10; i++ {
		b := makeBatch(plain(1 + i%3))
		res, err := l.Append(b, 7)
		if err != nil {
			t.Fatal(err)
		}
		h := parseHeader(b)
		if res.BaseOffset != h.BaseOffset || res.LastOffset != h.LastOffset() || h.LeaderEpoch != 7 {
			t.Fatalf("append %d: result %+v, header base %d last %d epoch %d", i, res, h.BaseOffset, h.LastOffset(), h.LeaderEpoch)
		}
		if res.LogAppendTime != -1 || res.Duplicate {
			t.Fatalf("unexpected %+v", res)
		}
		if batchCRC(b) != h.CRC {
			t.Fatal("CRC broken by in-place assignment")
		}
		want = append(want, append([]byte(nil), b...))
	}
	got := readAll(t, l, 0)
	if len(got) != len(want) {
		t.Fatalf("read %d batches, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d differs", i)
		}
	}
	if l.LogEndOffset() != 19 || l.HighWatermark() != 19 || l.LogStartOffset() != 0 {
		t.Fatalf("offsets: leo %d hw %d lso %d", l.LogEndOffset(), l.HighWatermark(), l.LogStartOffset())
	}
	if e, off := l.EndOffsetForEpoch(7); e != 7 || off != 19 {
		t.Fatalf("EndOffsetForEpoch(7) = %d, %d", e, off)
	}
}

func TestReadContract(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{IndexIntervalBytes: 100})
	var sizes []int
	for i := 0; i < 20; i++ {
		b := makeBatch(plain(5)) // offsets 5i..5i+4
		mustAppend(t, l, b)
		sizes = append(sizes, len(b))
	}
	for _, tc := range []struct {
		name     string
		offset   int64
		maxBytes int32
		first    int64 // base offset of the first batch, -1 for none
		batches  int
		err      error
	}{
		{"start", 0, 1 << 20, 0, 20, nil},
		{"inside batch", 7, 1 << 20, 5, 19, nil},
		{"last record", 99, 1 << 20, 95, 1, nil},
		{"at hw", 100, 1 << 20, -1, 0, nil},
		{"past leo", 101, 1 << 20, -1, 0, ErrOffsetOutOfRange},
		{"negative", -1, 1 << 20, -1, 0, ErrOffsetOutOfRange},
		{"limit smaller than batch", 50, 1, 50, 1, nil},
		{"limit two batches", 50, int32(sizes[0] * 2), 50, 2, nil},
		{"limit just under two", 50, int32(sizes[0]*2 - 1), 50, 1, nil},
		{"zero limit", 10, 0, 10, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix")
			out, err := l.Read(tc.offset, tc.maxBytes, prefix)
			if !isErr(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if !bytes.Equal(out[:6], prefix) {
				t.Fatal("dst prefix clobbered")
			}
			b := out[6:]
			n := 0
			for len(b) > 0 {
				h := parseHeader(b)
				if n == 0 && h.BaseOffset != tc.first {
					t.Fatalf("first batch %d, want %d", h.BaseOffset, tc.first)
				}
				if int(h.Size) > len(b) || batchCRC(b[:h.Size]) != h.CRC {
					t.Fatal("partial or corrupt batch returned")
				}
				b = b[h.Size:]
				n++
			}
			if n != tc.batches {
				t.Fatalf("%d batches, want %d", n, tc.batches)
			}
		})
	}
	checkIndexes(t, l)
}

func TestRollReopenAndIndexes(t *testing.T) {
	for _, name := range []string{"memfs", "os"} {
		t.Run(name, func(t *testing.T) {
			var fsys FS
			if name == "memfs" {
				fsys = NewMemFS()
			}
			f := newFixture(t, fsys)
			cfg := Config{SegmentBytes: 2000, IndexIntervalBytes: 300}
			l := f.log(cfg)
			for i := 0; i < 60; i++ {
				s := plain(1 + i%4)
				s.ts = int64(1000 + i*10)
				mustAppend(t, l, makeBatch(s))
			}
			checkIndexes(t, l)
			before := readAll(t, l, 0)
			leo := l.LogEndOffset()
			names, _ := f.fs.ReadDir(f.partDir())
			var logs int
			for _, n := range names {
				if strings.HasSuffix(n, ".log") {
					logs++
				}
			}
			if logs < 4 {
				t.Fatalf("expected several segments, files: %v", names)
			}
			if !contains(names, "00000000000000000000.log") || !contains(names, "00000000000000000000.index") || !contains(names, "00000000000000000000.timeindex") {
				t.Fatalf("Kafka file names missing: %v", names)
			}
			f.reopen()
			l = f.log(cfg)
			if l.LogEndOffset() != leo {
				t.Fatalf("leo %d after reopen, want %d", l.LogEndOffset(), leo)
			}
			after := readAll(t, l, 0)
			if len(after) != len(before) {
				t.Fatalf("%d batches after reopen, want %d", len(after), len(before))
			}
			for i := range after {
				if !bytes.Equal(after[i], before[i]) {
					t.Fatalf("batch %d differs after reopen", i)
				}
			}
			checkIndexes(t, l)
			if strings.Contains(f.logs.String(), "truncating") {
				t.Fatalf("clean reopen truncated: %s", f.logs)
			}
			// append after reopen continues the offsets
			res := mustAppend(t, l, makeBatch(plain(2)))
			if res.BaseOffset != leo {
				t.Fatalf("base %d after reopen, want %d", res.BaseOffset, leo)
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestUncleanRecoveryTruncatesTornTail(t *testing.T) {
	fsys := NewMemFS()
	f := newFixture(t, fsys)
	cfg := Config{IndexIntervalBytes: 200}
	l := f.log(cfg)
	for i := 0; i < 20; i++ {
		mustAppend(t, l, makeBatch(plain(3)))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	synced := l.LogEndOffset()
	// unsynced tail, then garbage appended to it
	for i := 0; i < 5; i++ {
		mustAppend(t, l, makeBatch(plain(3)))
	}
	s := l.mu.segs[0]
	garbage := []byte("garbage garbage garbage garbage garbage garbage garbage garbage")
	if _, err := s.log.WriteAt(garbage, s.size.Load()); err != nil {
		t.Fatal(err)
	}
	// CrashClone(nil) keeps only synced data: sync the file by hand so the
	// garbage is on "disk" and recovery has to cut it.
	s.log.Sync()
	img := fsys.CrashClone(nil)
	f2 := newFixture(t, img)
	l2 := f2.log(cfg)
	if l2.LogEndOffset() != 75 {
		t.Fatalf("leo %d, want 75 (synced %d)", l2.LogEndOffset(), synced)
	}
	if !strings.Contains(f2.logs.String(), fmt.Sprintf("bytes_cut=%d", len(garbage))) {
		t.Fatalf("recovery did not report the cut: %s", f2.logs)
	}
	if got := len(readAll(t, l2, 0)); got != 25 {
		t.Fatalf("%d batches, want 25", got)
	}
	checkIndexes(t, l2)
}

func TestCorruptSealedSegmentIsReported(t *testing.T) {
	fsys := NewMemFS()
	f := newFixture(t, fsys)
	cfg := Config{SegmentBytes: 1000}
	l := f.log(cfg)
	for i := 0; i < 20; i++ {
		mustAppend(t, l, makeBatch(plain(2)))
	}
	f.reopen()
	// flip a byte in the middle of the first (sealed) segment's last batch
	lf, err := fsys.OpenFile(filepath.Join(f.partDir(), "00000000000000000000.log"), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	size, _ := lf.Size()
	lf.WriteAt([]byte{0xff}, size-3)
	lf.Close()
	f.m.Close()
	f.open()
	_, err = f.m.Open("t", 0, cfg)
	if err == nil || !strings.Contains(err.Error(), "00000000000000000000.log") || !isErr(err, ErrStorage) {
		t.Fatalf("want a storage error naming the segment, got %v", err)
	}
}

func TestOffsetForTimestampAndMaxTimestamp(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{SegmentBytes: 1500, IndexIntervalBytes: 200})
	if o, ts, err := l.MaxTimestamp(); o != -1 || ts != -1 || err != nil {
		t.Fatalf("empty MaxTimestamp = %d, %d, %v", o, ts, err)
	}
	// 40 batches of 3 records, timestamps 1000 + 10*record index
	for i := 0; i < 40; i++ {
		s := plain(3)
		s.ts, s.tsStep = int64(1000+30*i), 10
		mustAppend(t, l, makeBatch(s))
	}
	for _, tc := range []struct{ ts, off, got int64 }{
		{0, 0, 1000},
		{1000, 0, 1000},
		{1001, 1, 1010},
		{1015, 2, 1020},
		{1030, 3, 1030},
		{2195, 120 - 0, -1},
		{2190, 119, 2190},
		{1500, 50, 1500},
		{5000, -1, -1},
	} {
		off, ts, err := l.OffsetForTimestamp(tc.ts)
		if err != nil {
			t.Fatal(err)
		}
		if tc.off == 120 {
			tc.off = -1
		}
		if off != tc.off || ts != tc.got {
			t.Errorf("OffsetForTimestamp(%d) = %d, %d; want %d, %d", tc.ts, off, ts, tc.off, tc.got)
		}
	}
	if o, ts, err := l.MaxTimestamp(); ts != 2190 || o != 119 || err != nil {
		t.Fatalf("MaxTimestamp = %d, %d, %v", o, ts, err)
	}
}

func TestLogAppendTime(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{TimestampType: LogAppendTime})
	b := makeBatch(plain(3))
	res := mustAppend(t, l, b)
	h := parseHeader(b)
	if res.LogAppendTime != testNow.UnixMilli() || h.MaxTimestamp != testNow.UnixMilli() || h.Attributes&attrTimestampType == 0 {
		t.Fatalf("LogAppendTime not applied: res %+v header %+v", res, h)
	}
	if batchCRC(b) != h.CRC {
		t.Fatal("CRC not recomputed")
	}
	if off, ts, _ := l.OffsetForTimestamp(testNow.UnixMilli()); off != 0 || ts != testNow.UnixMilli() {
		t.Fatalf("OffsetForTimestamp = %d, %d", off, ts)
	}
}

func TestProducerIdempotence(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := Config{SegmentBytes: 800}
	l := f.log(cfg)
	type step struct {
		s       spec
		err     error
		dup     bool
		base    int64 // expected base offset (for dups: the original)
		comment string
	}
	steps := []step{
		{idem(1, 0, 0, 2), nil, false, 0, "first batch"},
		{idem(1, 0, 2, 3), nil, false, 2, "in sequence"},
		{idem(1, 0, 0, 2), nil, true, 0, "retry of the first"},
		{idem(1, 0, 2, 3), nil, true, 2, "retry of the second"},
		{idem(1, 0, 6, 1), ErrOutOfOrderSequence, false, -1, "gap"},
		{idem(1, 0, 3, 1), ErrOutOfOrderSequence, false, -1, "overlap, not an exact retry"},
		{idem(2, 5, 100, 1), nil, false, 5, "unknown producer: any sequence"},
		{idem(1, 1, 3, 1), ErrOutOfOrderSequence, false, -1, "new epoch must start at 0"},
		{idem(1, 1, 0, 1), nil, false, 6, "new epoch at 0"},
		{idem(1, 0, 5, 1), ErrInvalidProducerEpoch, false, -1, "fenced old epoch"},
		{idem(1, 1, 0, 1), nil, true, 6, "retry in new epoch"},
	}
	for i := 0; i < 6; i++ {
		steps = append(steps, step{idem(3, 0, int32(i), 1), nil, false, int64(7 + i), "fill cache"})
	}
	steps = append(steps,
		step{idem(3, 0, 0, 1), ErrOutOfOrderSequence, false, -1, "older than the 5 cached batches"},
		step{idem(3, 0, 1, 1), nil, true, 8, "oldest cached"},
	)
	run := func(l *Log, steps []step) {
		for i, st := range steps {
			res, err := l.Append(makeBatch(st.s), 0)
			if !isErr(err, st.err) {
				t.Fatalf("step %d (%s): err %v, want %v", i, st.comment, err, st.err)
			}
			if err != nil {
				if ErrorCode(err) == 0 {
					t.Fatal("no error code")
				}
				continue
			}
			if res.Duplicate != st.dup || res.BaseOffset != st.base {
				t.Fatalf("step %d (%s): %+v, want dup %v base %d", i, st.comment, res, st.dup, st.base)
			}
		}
	}
	run(l, steps)
	after := []step{
		{idem(3, 0, 5, 1), nil, true, 12, "retry after restart"},
		{idem(1, 0, 7, 1), ErrInvalidProducerEpoch, false, -1, "still fenced after restart"},
		{idem(3, 0, 7, 1), ErrOutOfOrderSequence, false, -1, "gap after restart"},
		{idem(3, 0, 6, 1), nil, false, 13, "next after restart"},
	}
	// clean restart: state from the snapshot written at close
	f.reopen()
	run(f.log(cfg), after[:3])
	// unclean restart: snapshot at the last roll plus a log scan
	img := f.fs.(*MemFS).CrashClone(nil)
	f2 := newFixture(t, img)
	l2 := f2.log(cfg)
	if err := l2.Flush(); err != nil {
		t.Fatal(err)
	}
	run(l2, after)
}

func TestGroupCommit(t *testing.T) {
	fsys := NewMemFS()
	f := newFixture(t, fsys)
	l := f.log(Config{FlushMessages: 1})
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				res, err := l.Append(makeBatch(plain(1)), 0)
				if err != nil {
					errs <- err
					return
				}
				// acknowledged means durable and visible
				if hw := l.HighWatermark(); hw <= res.LastOffset {
					errs <- fmt.Errorf("hw %d does not cover acknowledged offset %d", hw, res.LastOffset)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	syncs, _ := l.SyncStats()
	t.Logf("%d appends, %d fsyncs", writers*each, syncs)
	if syncs > writers*each {
		t.Fatalf("%d fsyncs for %d appends", syncs, writers*each)
	}
	// Everything acknowledged survives a crash that keeps only synced data.
	f2 := newFixture(t, fsys.CrashClone(nil))
	if got := f2.log(Config{}).LogEndOffset(); got != writers*each {
		t.Fatalf("after crash leo %d, want %d", got, writers*each)
	}
}

func TestFlushMessagesAndFlushMs(t *testing.T) {
	fsys := NewMemFS()
	f := newFixture(t, fsys)
	l := f.log(Config{FlushMessages: 10})
	for i := 0; i < 9; i++ {
		mustAppend(t, l, makeBatch(plain(1)))
	}
	if n, _ := l.SyncStats(); n != 0 {
		t.Fatalf("%d fsyncs before flush.messages reached", n)
	}
	mustAppend(t, l, makeBatch(plain(1)))
	if n, _ := l.SyncStats(); n != 1 {
		t.Fatalf("%d fsyncs after flush.messages reached", n)
	}
	// flush.ms through the manager loop
	l.SetConfig(Config{FlushMs: 50})
	mustAppend(t, l, makeBatch(plain(1)))
	f.now = f.now.Add(time.Second)
	f.m.flushDue()
	if n, _ := l.SyncStats(); n != 2 {
		t.Fatalf("%d fsyncs after flush.ms elapsed", n)
	}
	if l.dirty() {
		t.Fatal("still dirty after flush")
	}
}

func TestRetention(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := Config{SegmentBytes: 1000, RetentionMs: 10_000, RetentionBytes: -1}
	l := f.log(cfg)
	now := testNow.UnixMilli()
	for i := 0; i < 30; i++ {
		s := plain(2)
		s.ts = now - 60_000 + int64(i)*1000 // 60s ago .. 31s ago
		if i >= 20 {
			s.ts = now // recent
		}
		mustAppend(t, l, makeBatch(s))
	}
	segsBefore := len(l.mu.segs)
	sizeBefore := l.Size()
	if err := l.applyRetention(f.now); err != nil {
		t.Fatal(err)
	}
	if len(l.mu.segs) >= segsBefore || l.Size() >= sizeBefore {
		t.Fatalf("nothing deleted: %d segments, size %d", len(l.mu.segs), l.Size())
	}
	lso := l.LogStartOffset()
	if lso != l.mu.segs[0].base || lso == 0 {
		t.Fatalf("log start %d, first segment %d", lso, l.mu.segs[0].base)
	}
	for _, s := range l.mu.segs[:len(l.mu.segs)-1] {
		if s.maxTs < now-10_000 {
			t.Fatalf("expired segment %d kept", s.base)
		}
	}
	if _, err := l.Read(0, 100, nil); !isErr(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below log start: %v", err)
	}
	readAll(t, l, lso)
	// size retention keeps at most retention.bytes (plus the active segment)
	cfg.RetentionMs = -1
	cfg.RetentionBytes = 1500
	l.SetConfig(cfg)
	if err := l.applyRetention(f.now); err != nil {
		t.Fatal(err)
	}
	if l.Size() > 1500+1000 || len(l.mu.segs) > 3 {
		t.Fatalf("size %d with %d segments after retention.bytes", l.Size(), len(l.mu.segs))
	}
	checkIndexes(t, l)
	f.reopen()
	l = f.log(cfg)
	if l.LogStartOffset() != l.mu.segs[0].base {
		t.Fatal("log start not restored")
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := Config{SegmentBytes: 1000}
	l := f.log(cfg)
	for i := 0; i < 30; i++ {
		mustAppend(t, l, makeBatch(plain(2)))
	}
	if _, err := l.DeleteRecordsBefore(61); !isErr(err, ErrOffsetOutOfRange) {
		t.Fatalf("beyond hw: %v", err)
	}
	lso, err := l.DeleteRecordsBefore(25)
	if err != nil || lso != 25 || l.LogStartOffset() != 25 {
		t.Fatalf("DeleteRecordsBefore(25) = %d, %v", lso, err)
	}
	if l.mu.segs[0].base > 25 || l.mu.segs[0].next <= 25 {
		t.Fatalf("segments not trimmed correctly: first [%d, %d)", l.mu.segs[0].base, l.mu.segs[0].next)
	}
	if _, err := l.Read(24, 100, nil); !isErr(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	b, err := l.Read(25, 1, nil)
	if err != nil || parseHeader(b).BaseOffset != 24 {
		t.Fatalf("read at start: base %d err %v (the batch containing 25 starts at 24)", parseHeader(b).BaseOffset, err)
	}
	if lso, _ := l.DeleteRecordsBefore(10); lso != 25 {
		t.Fatal("log start moved back")
	}
	f.reopen()
	l = f.log(cfg)
	if l.LogStartOffset() != 25 {
		t.Fatalf("log start %d after reopen", l.LogStartOffset())
	}
	if lso, err := l.DeleteRecordsBefore(-1); err != nil || lso != 60 {
		t.Fatalf("delete to hw: %d %v", lso, err)
	}
}

func TestTruncateTo(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := Config{SegmentBytes: 1000, IndexIntervalBytes: 100}
	l := f.log(cfg)
	var batches [][]byte
	for i := 0; i < 30; i++ {
		epoch := int32(i / 10)
		b := makeBatch(idem(9, 0, int32(2*i), 2))
		if _, err := l.Append(b, epoch); err != nil {
			t.Fatal(err)
		}
		batches = append(batches, append([]byte(nil), b...))
	}
	if e, off := l.EndOffsetForEpoch(1); e != 1 || off != 40 {
		t.Fatalf("EndOffsetForEpoch(1) = %d, %d", e, off)
	}
	if err := l.TruncateTo(35); err != nil { // inside batch [34,35]
		t.Fatal(err)
	}
	if l.LogEndOffset() != 34 {
		t.Fatalf("leo %d, want 34", l.LogEndOffset())
	}
	got := readAll(t, l, 0)
	if len(got) != 17 || !bytes.Equal(got[16], batches[16]) {
		t.Fatalf("%d batches after truncate", len(got))
	}
	checkIndexes(t, l)
	if e, off := l.EndOffsetForEpoch(1); e != 1 || off != 34 {
		t.Fatalf("EndOffsetForEpoch(1) after truncate = %d, %d", e, off)
	}
	if e, off := l.EndOffsetForEpoch(2); e != -1 || off != -1 {
		t.Fatalf("EndOffsetForEpoch(2) after truncate = %d, %d", e, off)
	}
	// producer state rolled back: sequence 34 is next again
	if res, err := l.Append(makeBatch(idem(9, 0, 34, 2)), 1); err != nil || res.Duplicate || res.BaseOffset != 34 {
		t.Fatalf("append after truncate: %+v %v", res, err)
	}
	checkIndexes(t, l)
	f.reopen()
	l = f.log(cfg)
	if l.LogEndOffset() != 36 {
		t.Fatalf("leo after reopen %d", l.LogEndOffset())
	}
	// truncate everything
	if err := l.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 0 || l.LogStartOffset() != 0 || l.Size() != 0 {
		t.Fatalf("after full truncate: leo %d lso %d size %d", l.LogEndOffset(), l.LogStartOffset(), l.Size())
	}
	mustAppend(t, l, makeBatch(plain(1)))
}

func TestEndOffsetForEpoch(t *testing.T) {
	c := epochCache{{1, 0}, {3, 10}, {6, 20}}
	for _, tc := range []struct {
		req     int32
		e       int32
		off     int64
		comment string
	}{
		{-1, -1, -1, "undefined"},
		{0, 0, 0, "below first"},
		{1, 1, 10, "first"},
		{2, 1, 10, "gap"},
		{3, 3, 20, "middle"},
		{5, 3, 20, "gap before latest"},
		{6, 6, 30, "latest -> log end"},
		{7, -1, -1, "above latest"},
	} {
		if e, off := c.endOffsetFor(tc.req, 30); e != tc.e || off != tc.off {
			t.Errorf("%s: endOffsetFor(%d) = %d, %d; want %d, %d", tc.comment, tc.req, e, off, tc.e, tc.off)
		}
	}
	enc := c.encode()
	if string(enc) != "0\n3\n1 0\n3 10\n6 20\n" {
		t.Fatalf("checkpoint format %q", enc)
	}
	back, err := decodeEpochCheckpoint(enc)
	if err != nil || len(back) != 3 || back[2] != c[2] {
		t.Fatalf("round trip %v %v", back, err)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n2\n1 0\n", "0\n2\n3 0\n1 5\n", "0\n1\nx y\n"} {
		if _, err := decodeEpochCheckpoint([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	d := append(epochCache(nil), c...)
	d.truncateFromStart(15)
	if d[0] != (epochEntry{3, 15}) || len(d) != 2 {
		t.Fatalf("truncateFromStart: %v", d)
	}
}

func TestManager(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{})
	if f.m.Get("t", 0) != l || f.m.Get("t", 1) != nil {
		t.Fatal("Get")
	}
	l1, err := f.m.Open("t", 1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l1, makeBatch(plain(1)))
	parts, err := f.m.Partitions()
	if err != nil || len(parts) != 2 {
		t.Fatalf("Partitions %v %v", parts, err)
	}
	if err := f.m.Delete("t", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l1.Append(makeBatch(plain(1)), 0); !isErr(err, ErrClosed) || ErrorCode(err) != 6 {
		t.Fatalf("append to deleted: %v", err)
	}
	if names, _ := f.fs.ReadDir(filepath.Join(f.dir, "topics")); len(names) != 1 {
		t.Fatalf("left after delete: %v", names)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.m.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Open("../x", 0, Config{}); err == nil {
		t.Fatal("accepted a path in a topic name")
	}
}

func TestErrorCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int16
	}{
		{nil, 0},
		{ErrCorruptMessage, 2},
		{fmt.Errorf("x: %w", ErrInvalidRecord), 87},
		{ErrMessageTooLarge, 10},
		{ErrInvalidTimestamp, 32},
		{ErrOffsetOutOfRange, 1},
		{ErrOutOfOrderSequence, 45},
		{ErrInvalidProducerEpoch, 47},
		{ErrUnknownProducerID, 59},
		{ErrUnsupportedMagic, 43},
		{ErrClosed, 6},
		{ErrStorage, 56},
		{fmt.Errorf("other"), 56},
	} {
		if got := ErrorCode(tc.err); got != tc.code {
			t.Errorf("ErrorCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
}

func TestAppendAllocs(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{SegmentBytes: 1 << 30})
	b := makeBatch(idem(1, 0, 0, 10))
	seq := int32(0)
	// warm up: producer entry, index growth
	for i := 0; i < 100; i++ {
		binary_setSeq(b, seq)
		seq += 10
		mustAppend(t, l, b)
	}
	allocs := testing.AllocsPerRun(200, func() {
		binary_setSeq(b, seq)
		seq += 10
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Append", allocs)
	}
	dst := make([]byte, 0, 1<<20)
	allocs = testing.AllocsPerRun(100, func() {
		if _, err := l.Read(500, 64<<10, dst); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Read", allocs)
	}
}

func binary_setSeq(b []byte, seq int32) {
	b[offBaseSequence] = byte(seq >> 24)
	b[offBaseSequence+1] = byte(seq >> 16)
	b[offBaseSequence+2] = byte(seq >> 8)
	b[offBaseSequence+3] = byte(seq)
	fixCRC(b)
}

func TestTornIndexEntriesAreDropped(t *testing.T) {
	fsys := NewMemFS()
	f := newFixture(t, fsys)
	cfg := Config{IndexIntervalBytes: 1} // an entry per batch: 600 > one index write chunk
	l := f.log(cfg)
	for i := 0; i < 600; i++ {
		s := plain(2)
		s.ts = int64(1000 + i*10)
		mustAppend(t, l, makeBatch(s))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	s := l.mu.segs[0]
	if s.idxWritten < 5*offsetIndexEntry || s.tidxWritten < 5*timeIndexEntry {
		t.Fatalf("index not written at flush: %d/%d bytes", s.idxWritten, s.tidxWritten)
	}
	// A torn write left a plausible but wrong entry in the middle of both
	// index files (positions still ascending, offsets still ascending).
	rel, pos := offsetEntry(s.idx[2*offsetIndexEntry:])
	bad := appendOffsetEntry(nil, rel+1, pos+1)
	s.index.WriteAt(bad, 2*offsetIndexEntry)
	ts, trel := timeEntry(s.tidx[2*timeIndexEntry:])
	s.tindex.WriteAt(appendTimeEntry(nil, ts+1, trel), 2*timeIndexEntry)
	s.index.Sync()
	s.tindex.Sync()
	f2 := newFixture(t, fsys.CrashClone(nil))
	l2 := f2.log(cfg)
	if l2.LogEndOffset() != 1200 {
		t.Fatalf("leo %d", l2.LogEndOffset())
	}
	checkIndexes(t, l2)
	for _, want := range []int64{0, 1005, 1200, 1390, 6001, 6990} {
		off, _, err := l2.OffsetForTimestamp(want)
		if err != nil {
			t.Fatal(err)
		}
		// batch i holds offsets 2i (ts 1000+10i) and 2i+1 (ts 1001+10i)
		exp := int64(0)
		if want > 1000 {
			i := (want - 1000) / 10
			exp = 2 * i
			if (want-1000)%10 > 1 {
				exp = 2 * (i + 1)
			} else if (want-1000)%10 == 1 {
				exp = 2*i + 1
			}
		}
		if off != exp {
			t.Errorf("OffsetForTimestamp(%d) = %d, want %d", want, off, exp)
		}
	}
}

// slowSyncFS adds latency to fsync, as a disk has, so that concurrent
// appends overlap with it.
type slowSyncFS struct {
	*MemFS
	delay time.Duration
}

type slowSyncFile struct {
	File
	delay time.Duration
}

func (f slowSyncFile) Sync() error {
	time.Sleep(f.delay)
	return f.File.Sync()
}

func (s slowSyncFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := s.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return slowSyncFile{f, s.delay}, nil
}

func TestGroupCommitCoalesces(t *testing.T) {
	mem := NewMemFS()
	f := newFixture(t, slowSyncFS{mem, 2 * time.Millisecond})
	l := f.log(Config{FlushMessages: 1})
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := l.Append(makeBatch(plain(1)), 0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	syncs, _ := l.SyncStats()
	t.Logf("%d appends, %d fsyncs", writers*each, syncs)
	if syncs > writers*each/2 {
		t.Fatalf("group commit did not coalesce: %d fsyncs for %d appends", syncs, writers*each)
	}
	f2 := newFixture(t, mem.CrashClone(nil))
	if got := f2.log(Config{}).LogEndOffset(); got != writers*each {
		t.Fatalf("after crash leo %d, want %d", got, writers*each)
	}
}

func TestRetentionRollsExpiredActiveSegment(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{RetentionMs: 1000})
	s := plain(2)
	s.ts = testNow.UnixMilli() - 5000
	mustAppend(t, l, makeBatch(s))
	mustAppend(t, l, makeBatch(s))
	if err := l.applyRetention(f.now); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 4 || l.LogEndOffset() != 4 || l.Size() != 0 {
		t.Fatalf("lso %d leo %d size %d", l.LogStartOffset(), l.LogEndOffset(), l.Size())
	}
	if res := mustAppend(t, l, makeBatch(plain(1))); res.BaseOffset != 4 {
		t.Fatalf("offsets restarted: %+v", res)
	}
	f.reopen()
	if l := f.log(Config{RetentionMs: 1000}); l.LogStartOffset() != 4 || l.LogEndOffset() != 5 {
		t.Fatalf("after reopen lso %d leo %d", l.LogStartOffset(), l.LogEndOffset())
	}
}

// failSyncFS makes fsync fail once armed, as a dying disk does.
type failSyncFS struct {
	*MemFS
	fail *bool
}

type failSyncFile struct {
	File
	fail *bool
}

func (f failSyncFile) Sync() error {
	if *f.fail {
		return fmt.Errorf("injected EIO")
	}
	return f.File.Sync()
}

func (s failSyncFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := s.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return failSyncFile{f, s.fail}, nil
}

func TestFailedFsyncIsSticky(t *testing.T) {
	mem := NewMemFS()
	fail := false
	f := newFixture(t, failSyncFS{mem, &fail})
	l := f.log(Config{FlushMessages: 1})
	mustAppend(t, l, makeBatch(plain(1)))
	fail = true
	_, err := l.Append(makeBatch(plain(1)), 0)
	if !isErr(err, ErrStorage) || ErrorCode(err) != 56 {
		t.Fatalf("append with failing fsync: %v", err)
	}
	fail = false
	// after a failed fsync the page cache cannot be trusted: no retries
	if _, err := l.Append(makeBatch(plain(1)), 0); !isErr(err, ErrStorage) {
		t.Fatalf("append after failure: %v", err)
	}
	if _, err := l.Read(0, 100, nil); !isErr(err, ErrStorage) {
		t.Fatalf("read after failure: %v", err)
	}
	if err := l.Close(); err == nil {
		t.Fatal("close of a failed log reported success")
	}
	// The manager logged the failure when it happened; its Close (a
	// broker's clean shutdown) does not fail for it.
	if err := f.m.Close(); err != nil {
		t.Fatalf("manager close: %v", err)
	}
	f.m = nil
	// a reopen recovers from what is on disk
	f2 := newFixture(t, mem.CrashClone(nil))
	if leo := f2.log(Config{}).LogEndOffset(); leo != 1 {
		t.Fatalf("leo after reopen %d, want 1", leo)
	}
}

func TestClosedLog(t *testing.T) {
	f := newFixture(t, NewMemFS())
	l := f.log(Config{})
	mustAppend(t, l, makeBatch(plain(1)))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	for name, err := range map[string]error{
		"append": func() error { _, err := l.Append(makeBatch(plain(1)), 0); return err }(),
		"read":   func() error { _, err := l.Read(0, 1, nil); return err }(),
		"flush":  l.Flush(),
		"trunc":  l.TruncateTo(0),
		"delete": func() error { _, err := l.DeleteRecordsBefore(1); return err }(),
		"time":   func() error { _, _, err := l.OffsetForTimestamp(0); return err }(),
	} {
		if !isErr(err, ErrClosed) {
			t.Errorf("%s after close: %v", name, err)
		}
	}
}

// TestReadSealedBeforeBackgroundFsync reads a segment that was just rolled
// in page-cache mode, whose index files are written only after its
// background fsync; until then it is served from memory.
func TestReadSealedBeforeBackgroundFsync(t *testing.T) {
	mem := NewMemFS()
	f := newFixture(t, slowSyncFS{mem, 20 * time.Millisecond})
	l := f.log(Config{SegmentBytes: 1000, IndexIntervalBytes: 100})
	var want [][]byte
	for i := 0; i < 30; i++ {
		b := makeBatch(plain(2))
		mustAppend(t, l, b)
		want = append(want, append([]byte(nil), b...))
	}
	got := readAll(t, l, 0)
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d differs", i)
		}
	}
	for off := int64(0); off < l.LogEndOffset(); off += 7 {
		out, err := l.Read(off, 1, nil)
		if err != nil || len(out) == 0 {
			t.Fatalf("read %d: %v", off, err)
		}
		if h := parseHeader(out); h.BaseOffset > off || h.LastOffset() < off {
			t.Fatalf("read %d returned [%d, %d]", off, h.BaseOffset, h.LastOffset())
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, l)
}

// TestMaxTimestampFirstRecord: MAX_TIMESTAMP answers the first record
// holding the largest timestamp, as Kafka does, not the last offset of its
// batch: inside a batch, across batches and segments with equal maxima,
// in a compressed batch and in a sealed (reopened) segment.
func TestMaxTimestampFirstRecord(t *testing.T) {
	ts := func(v ...int64) spec {
		s := plain(len(v))
		s.tss = v
		return s
	}
	gz := func(s spec) spec { s.compression = codecGzip; return s }
	for _, tc := range []struct {
		name    string
		batches []spec
		reopen  bool
		off, ts int64
	}{
		{"in one batch", []spec{ts(5000, 7000, 6000, 7000)}, false, 1, 7000},
		{"first batch of equal maxima", []spec{ts(1, 2, 3), ts(9, 9, 4), ts(9)}, false, 3, 9},
		{"later batch larger", []spec{ts(9, 1), ts(3, 10, 10)}, false, 3, 10},
		{"compressed batch", []spec{ts(1), gz(ts(5, 8, 8, 1))}, false, 2, 8},
		{"sealed segments", []spec{ts(1, 2), ts(50, 40), ts(3, 4), ts(50), ts(5)}, true, 2, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, NewMemFS())
			cfg := Config{SegmentBytes: 1 << 20, IndexIntervalBytes: 1}
			if tc.reopen {
				cfg.SegmentBytes = 150 // a segment per batch or two
			}
			l := f.log(cfg)
			for _, s := range tc.batches {
				mustAppend(t, l, makeBatch(s))
			}
			if tc.reopen {
				f.m.Close()
				f.open()
				var err error
				if l, err = f.m.Open("t", 0, cfg); err != nil {
					t.Fatal(err)
				}
			}
			off, got, err := l.MaxTimestamp()
			if err != nil || off != tc.off || got != tc.ts {
				t.Errorf("MaxTimestamp = %d, %d, %v; want %d, %d", off, got, err, tc.off, tc.ts)
			}
		})
	}
}
