package log

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newTestManager(t *testing.T, fsys FS, logs *bytes.Buffer, retry time.Duration) *Manager {
	t.Helper()
	var w io.Writer = io.Discard
	if logs != nil {
		w = logs
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
	bad, good := m.Partition("bad", 0, cfg), m.Partition("good", 0, cfg)
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
