package log

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func newTestManager(t *testing.T, fsys FS, logs *bytes.Buffer, retry time.Duration) *Manager {
	t.Helper()
	var w io.Writer = io.Discard
	if logs != nil {
		w = logs
	}
	// the data dir itself is durable, as the fixture makes it
	if err := fsys.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager("/data", Options{FS: fsys, Logger: slog.New(slog.NewTextHandler(w, nil)), Now: func() time.Time { return testNow }, OfflineRetryInterval: retry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func readFileMem(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := readWhole(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFileMem(t *testing.T, fsys FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
}

// TestCorruptPartitionOffline: a partition with a deleted middle segment
// is offline (ErrStorage naming the file) while another partition of the
// same manager is served; once the file is back the next use opens it.
func TestCorruptPartitionOffline(t *testing.T) {
	mem := NewMemFS()
	cfg := Config{SegmentBytes: 300}
	m := newTestManager(t, mem, nil, 0)
	for _, tp := range []string{"bad", "good"} {
		l, err := m.Open(tp, 0, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 12; i++ {
			mustAppend(t, l, makeBatch(plain(2)))
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	dir := "/data/topics/bad-0"
	names, _ := mem.ReadDir(dir)
	var segs []string
	for _, n := range names {
		if strings.HasSuffix(n, logSuffix) {
			segs = append(segs, n)
		}
	}
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	middle := filepath.Join(dir, segs[1])
	saved := readFileMem(t, mem, middle)
	if err := mem.Remove(middle); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	m = newTestManager(t, mem, &logs, -1)
	bad, good := m.Partition("bad", 0, TopicID{}, cfg), m.Partition("good", 0, TopicID{}, cfg)
	if _, err := bad.Acquire(); !isErr(err, ErrStorage) || ErrorCode(err) != 56 || !strings.Contains(err.Error(), "next segment starts at") {
		t.Fatalf("acquire of the broken partition: %v", err)
	}
	l, err := good.Acquire()
	if err != nil {
		t.Fatalf("acquire of the healthy partition: %v", err)
	}
	mustAppend(t, l, makeBatch(plain(1)))
	good.Release()
	off := m.Offline()
	if len(off) != 1 || off[0].Topic != "bad" || off[0].Partition != 0 || !isErr(off[0].Err, ErrStorage) {
		t.Fatalf("offline: %+v", off)
	}
	if !strings.Contains(logs.String(), "partition offline") || !strings.Contains(logs.String(), dir) {
		t.Fatalf("the failure is not logged with its directory: %s", logs.String())
	}

	writeFileMem(t, mem, middle, saved)
	l, err = bad.Acquire()
	if err != nil {
		t.Fatalf("acquire after the repair: %v", err)
	}
	if l.LogEndOffset() != 24 {
		t.Fatalf("leo %d after repair", l.LogEndOffset())
	}
	bad.Release()
	if off := m.Offline(); len(off) != 0 {
		t.Fatalf("still offline: %+v", off)
	}
}

// TestFullDiskResumes: while every write fails with ENOSPC (after writing
// half of its bytes), appends fail at once with KAFKA_STORAGE_ERROR and
// change nothing; when space returns the same log takes appends again,
// with no reopen, and everything acknowledged is there after a restart.
func TestFullDiskResumes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"page cache", Config{SegmentBytes: 400, IndexIntervalBytes: 50}},
		{"flush per message", Config{SegmentBytes: 400, IndexIntervalBytes: 50, FlushMessages: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := NewMemFS()
			ffs := NewFaultFS(mem)
			m := newTestManager(t, ffs, nil, 0)
			p := m.Partition("t", 0, TopicID{}, tc.cfg)
			l, err := p.Acquire()
			if err != nil {
				t.Fatal(err)
			}
			var acked [][]byte
			appendOK := func() {
				t.Helper()
				b := makeBatch(plain(2))
				res := mustAppend(t, l, b)
				if want := int64(2 * len(acked)); res.BaseOffset != want {
					t.Fatalf("base offset %d, want %d", res.BaseOffset, want)
				}
				acked = append(acked, append([]byte(nil), b...))
			}
			for i := 0; i < 7; i++ {
				appendOK()
			}
			ffs.FailWrites(syscall.ENOSPC, true)
			for i := 0; i < 6; i++ {
				_, err := l.Append(makeBatch(plain(2)), 0)
				if !isErr(err, ErrStorage) || ErrorCode(err) != 56 || !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("append on a full disk: %v", err)
				}
			}
			if w, _ := ffs.Failed(); w == 0 {
				t.Fatal("no write failed")
			}
			if err := p.Offline(); err != nil {
				t.Fatalf("a failed write made the log unusable: %v", err)
			}
			if got := readAll(t, l, 0); len(got) != len(acked) {
				t.Fatalf("%d batches readable during the fault, want %d", len(got), len(acked))
			}
			ffs.FailWrites(nil, false)
			for i := 0; i < 7; i++ {
				appendOK()
			}
			p.Release()
			if err := m.Close(); err != nil {
				t.Fatalf("clean shutdown after the fault: %v", err)
			}
			for _, fsys := range []FS{mem, mem.CrashClone(nil)} {
				m2 := newTestManager(t, fsys, nil, 0)
				l2, err := m2.Open("t", 0, tc.cfg)
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(t, l2, 0)
				if len(got) != len(acked) {
					t.Fatalf("%d batches after reopen, want %d", len(got), len(acked))
				}
				for i := range got {
					if !bytes.Equal(got[i], acked[i]) {
						t.Fatalf("batch %d differs after reopen", i)
					}
				}
				checkIndexes(t, l2)
				m2.Close()
			}
		})
	}
}

// TestFailedFsyncReopens: a failed fsync fails the log (its page cache
// cannot be trusted); the partition handle reopens it on the next use once
// the fault is gone, keeping every acknowledged batch.
func TestFailedFsyncReopens(t *testing.T) {
	mem := NewMemFS()
	ffs := NewFaultFS(mem)
	m := newTestManager(t, ffs, nil, -1)
	cfg := Config{FlushMessages: 1}
	p := m.Partition("t", 0, TopicID{}, cfg)
	l, err := p.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		mustAppend(t, l, makeBatch(plain(1)))
	}
	ffs.FailSyncs(syscall.EIO)
	if _, err := l.Append(makeBatch(plain(1)), 0); ErrorCode(err) != 56 {
		t.Fatalf("append with failing fsync: %v", err)
	}
	p.Release()
	if err := p.Offline(); err == nil {
		t.Fatal("a failed fsync did not fail the log")
	}
	ffs.FailSyncs(nil)
	l, err = p.Acquire()
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer p.Release()
	if err := p.Offline(); err != nil {
		t.Fatalf("still offline: %v", err)
	}
	leo := l.LogEndOffset()
	if leo < 3 {
		t.Fatalf("acknowledged data lost: leo %d", leo)
	}
	if res := mustAppend(t, l, makeBatch(plain(1))); res.BaseOffset != leo {
		t.Fatalf("append after reopen at %d, want %d", res.BaseOffset, leo)
	}
}

// TestTopicIDChecked: a partition directory carries its topic id in
// Kafka's partition.metadata; opening it for another id (the topic was
// re-created while this node missed the deletion) sets the old directory
// aside as <dir>.<old id>-stray and serves a new, empty log. A directory
// from before the file gets it on its first open.
func TestTopicIDChecked(t *testing.T) {
	mem := NewMemFS()
	var logs bytes.Buffer
	m := newTestManager(t, mem, &logs, 0)
	idA := TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	idB := TopicID{0xff, 1}
	for _, c := range []struct {
		topic string
		id    TopicID
	}{{"t", idA}, {"old", TopicID{}}} {
		p := m.Partition(c.topic, 0, c.id, Config{})
		l, err := p.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			mustAppend(t, l, makeBatch(plain(1)))
		}
		p.Release()
	}
	if got := string(readFileMem(t, mem, "/data/topics/t-0/partition.metadata")); got != "version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA" {
		t.Fatalf("partition.metadata = %q", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = newTestManager(t, mem, &logs, 0)
	// same id: served as it is
	p := m.Partition("t", 0, idA, Config{})
	l, err := p.Acquire()
	if err != nil || l.LogEndOffset() != 5 {
		t.Fatalf("same topic id: %v, leo %v", err, l)
	}
	p.Release()
	// sharq data from before partition.metadata: the file is written
	p = m.Partition("old", 0, idB, Config{})
	if l, err = p.Acquire(); err != nil || l.LogEndOffset() != 5 {
		t.Fatalf("directory without partition.metadata: %v", err)
	}
	p.Release()
	if id, err := decodePartitionMetadata(readFileMem(t, mem, "/data/topics/old-0/partition.metadata")); err != nil || id != idB {
		t.Fatalf("partition.metadata written on first open: %v %v", id, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = newTestManager(t, mem, &logs, 0)
	p = m.Partition("t", 0, idB, Config{})
	if l, err = p.Acquire(); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 0 || l.HighWatermark() != 0 {
		t.Fatalf("re-created topic serves the old data: leo %d", l.LogEndOffset())
	}
	p.Release()
	stray := "/data/topics/t-0.0102030405060708090a0b0c0d0e0f10-stray"
	if _, err := mem.ReadDir(stray); err != nil {
		t.Fatalf("old directory not set aside as %s: %v", stray, err)
	}
	if !strings.Contains(logs.String(), "set aside") || !strings.Contains(logs.String(), stray) {
		t.Fatalf("setting aside is not logged: %s", logs.String())
	}
	parts, err := m.Partitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range parts {
		if strings.Contains(pid.Topic, "stray") || strings.Contains(pid.Topic, ".") {
			t.Fatalf("stray directory listed as a partition: %+v", pid)
		}
	}
}

func TestDecodePartitionMetadata(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", true},
		{"version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA\n", true},
		{"version:   0\ntopic_id:\tAQIDBAUGBwgJCgsMDQ4PEA", true},
		{"version: 1\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", false},
		{"version: 0\n", false},
		{"topic_id: AQIDBAUGBwgJCgsMDQ4PEA\nversion: 0", false},
		{"version: 0\ntopic_id: AQID", false},
		{"", false},
	} {
		_, err := decodePartitionMetadata([]byte(c.in))
		if (err == nil) != c.ok {
			t.Errorf("%q: %v", c.in, err)
		}
	}
}

// TestOpenLogsBounded: past MaxOpenLogs the least recently used unpinned
// logs are closed, a pinned one never, and a closed one opens again with
// its data on the next use.
func TestOpenLogsBounded(t *testing.T) {
	mem := NewMemFS()
	m, err := NewManager("/data", Options{FS: mem, Now: func() time.Time { return testNow }, MaxOpenLogs: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	pinned := m.Partition("t", 0, TopicID{}, Config{})
	if _, err := pinned.Acquire(); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := int32(1); i < n; i++ {
		p := m.Partition("t", i, TopicID{}, Config{})
		l, err := p.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		for j := int32(0); j <= i; j++ {
			mustAppend(t, l, makeBatch(plain(1)))
		}
		p.Release()
		m.evictWG.Wait()
		if open := m.OpenLogs(); open > 4 {
			t.Fatalf("%d logs open after %d partitions, bound 4", open, i+1)
		}
	}
	if pinned.Peek() == nil {
		t.Fatal("a pinned log was closed")
	}
	pinned.Release()
	for i := int32(1); i < n; i++ {
		p := m.Partition("t", i, TopicID{}, Config{})
		if st, ok := p.Stats(); !ok || st.LogEndOffset != int64(i+1) {
			t.Fatalf("stats of partition %d: %+v %v", i, st, ok)
		}
		l, err := p.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, l, 0); len(got) != int(i+1) {
			t.Fatalf("partition %d: %d batches after reopen, want %d", i, len(got), i+1)
		}
		p.Release()
		m.evictWG.Wait()
	}
	if open := m.OpenLogs(); open > 4 {
		t.Fatalf("%d logs open, bound 4", open)
	}
}

// TestCleanOpenWritesNothing: opening a cleanly closed partition, reading
// it and closing it again writes nothing (the clean shutdown marker stays
// until the first change), and the first change removes the marker
// durably before it writes.
func TestCleanOpenWritesNothing(t *testing.T) {
	mem := NewMemFS()
	m := newTestManager(t, mem, nil, 0)
	l, err := m.Open("t", 0, Config{SegmentBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		mustAppend(t, l, makeBatch(plain(2)))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, mem, nil, 0)
	before := mem.Ops()
	p := m.Partition("t", 0, TopicID{}, Config{SegmentBytes: 300})
	if l, err = p.Acquire(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, l, 0); len(got) != 10 {
		t.Fatalf("%d batches", len(got))
	}
	p.Release()
	m.Check(context.Background())
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if ops := mem.Ops() - before; ops != 0 {
		t.Fatalf("open, read and close of a clean partition did %d writes", ops)
	}

	m = newTestManager(t, mem, nil, 0)
	if l, err = m.Open("t", 0, Config{SegmentBytes: 300}); err != nil {
		t.Fatal(err)
	}
	mem.CrashAfter(3, nil) // remove marker, sync dir, then the write crashes
	if _, err := l.Append(makeBatch(plain(2)), 0); err == nil {
		t.Fatal("append after the crash point succeeded")
	}
	img := mem.Crashed()
	if names, _ := img.ReadDir("/data/topics/t-0"); slices.Contains(names, cleanShutdownName) {
		t.Fatal("the clean shutdown marker survived the first write")
	}
	m2 := newTestManager(t, img, nil, 0)
	l2, err := m2.Open("t", 0, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, l2, 0); len(got) != 10 {
		t.Fatalf("%d batches after the crash", len(got))
	}
}

// TestEmptiedSealedIndexRebuilt: a sealed segment's .index or .timeindex
// emptied (0 bytes) or cut short is noticed on open by the tail check (more
// than index.interval.bytes after the last entry, or no entry for the
// largest timestamp) and rebuilt, with a warning naming the file; lookups
// then use it again.
func TestEmptiedSealedIndexRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name, suffix string
		keep         func(n int) int // bytes kept of n
	}{
		{"index emptied", indexSuffix, func(int) int { return 0 }},
		{"index cut", indexSuffix, func(n int) int { return n / offsetIndexEntry / 2 * offsetIndexEntry }},
		{"timeindex emptied", timeIndexSuffix, func(int) int { return 0 }},
		{"timeindex cut", timeIndexSuffix, func(n int) int { return n - timeIndexEntry }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := NewMemFS()
			cfg := Config{SegmentBytes: 4000, IndexIntervalBytes: 100}
			var logs bytes.Buffer
			m := newTestManager(t, mem, &logs, 0)
			l, err := m.Open("t", 0, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 120; i++ {
				s := plain(2)
				s.ts = testNow.UnixMilli() + int64(i)
				mustAppend(t, l, makeBatch(s))
			}
			wantOff, wantTs, err := l.OffsetForTimestamp(testNow.UnixMilli() + 10)
			if err != nil || wantOff < 0 {
				t.Fatalf("OffsetForTimestamp: %d %v", wantOff, err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			name := "/data/topics/t-0/" + segmentName(0, tc.suffix)
			full := readFileMem(t, mem, name)
			if len(full) < 2*timeIndexEntry {
				t.Fatalf("%s has %d bytes: not a useful fixture", name, len(full))
			}
			writeFileMem(t, mem, name, full[:tc.keep(len(full))])

			m = newTestManager(t, mem, &logs, 0)
			l, err = m.Open("t", 0, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := readFileMem(t, mem, name); !bytes.Equal(got, full) {
				t.Fatalf("%s not rebuilt: %d bytes, want %d", name, len(got), len(full))
			}
			if !strings.Contains(logs.String(), "rebuilt index of sealed segment") {
				t.Fatalf("rebuild not logged: %s", logs.String())
			}
			checkIndexes(t, l)
			if off, ts, err := l.OffsetForTimestamp(testNow.UnixMilli() + 10); err != nil || off != wantOff || ts != wantTs {
				t.Fatalf("OffsetForTimestamp after rebuild: %d %d %v, want %d %d", off, ts, err, wantOff, wantTs)
			}
		})
	}
}
