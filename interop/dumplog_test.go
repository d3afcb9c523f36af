package interop

import (
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sharq/log"
)

// TestDumpLogSharqSegment writes the golden batches with sharq's storage and
// has Kafka's DumpLogSegments read the segment, its offset index and its
// time index: the files must be byte-compatible with Apache Kafka's.
func TestDumpLogSharqSegment(t *testing.T) {
	needJava(t)
	dataDir := t.TempDir()
	m, err := log.NewManager(dataDir, log.Options{})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	cfg := log.Config{
		SegmentBytes:         1 << 30,
		RetentionMs:          -1,
		RetentionBytes:       -1,
		IndexIntervalBytes:   1, // an index entry for every batch
		MaxMessageBytes:      1048588,
		FlushMessages:        math.MaxInt64,
		TimestampType:        log.CreateTime,
		TimestampBeforeMaxMs: math.MaxInt64,
		TimestampAfterMaxMs:  math.MaxInt64,
	}
	l, err := m.Open("golden", 0, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	next := int64(0)
	for i, gb := range goldenBatches {
		res, err := l.Append(buildBatch(t, gb, goldenTimestamp), 0)
		if err != nil {
			t.Fatalf("Append batch %d: %v", i, err)
		}
		n := int64(len(gb.records))
		if res.BaseOffset != next || res.LastOffset != next+n-1 {
			t.Errorf("batch %d landed at %d..%d, want %d..%d", i, res.BaseOffset, res.LastOffset, next, next+n-1)
		}
		next += n
	}
	// Close writes the clean-shutdown state and trims the preallocated
	// indexes, as Kafka does when it closes a segment.
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	logFile := findSegment(t, dataDir, "golden-0", "00000000000000000000.log")
	dumpLog(t, logFile)

	dir := filepath.Dir(logFile)
	index := filepath.Join(dir, "00000000000000000000.index")
	timeIndex := filepath.Join(dir, "00000000000000000000.timeindex")
	// --verify-index-only checks every index entry against the batch at its
	// position (Kafka indexes a batch's last offset) and prints mismatches.
	res := mustTool(t, Target{Name: "dump"}, "", "", ClassDumpLogSegments,
		"--files", index+","+timeIndex, "--verify-index-only")
	for _, bad := range []string{"Mismatches", "not found", "Exception", "corrupt"} {
		if strings.Contains(res.Stdout+res.Stderr, bad) {
			t.Errorf("index verification reports %q:\n%s\n%s", bad, res.Stdout, res.Stderr)
		}
	}
	// The full index dump: with an entry per batch, every entry's offset is
	// the last offset of a golden batch.
	res = mustTool(t, Target{Name: "dump"}, "", "", ClassDumpLogSegments, "--files", index)
	lastOffsets := map[string]bool{}
	next = 0
	for _, gb := range goldenBatches {
		next += int64(len(gb.records))
		lastOffsets["offset: "+strconv.FormatInt(next-1, 10)] = true
	}
	t.Logf("offset index:\n%s", res.Stdout)
	entries := 0
	for _, line := range strings.Split(res.Stdout, "\n") {
		if !strings.HasPrefix(line, "offset: ") {
			continue
		}
		entries++
		off, _, _ := strings.Cut(line, " position:")
		if !lastOffsets[off] {
			t.Errorf("index entry %q is not a batch's last offset", line)
		}
	}
	if entries == 0 {
		t.Errorf("offset index has no entries:\n%s", res.Stdout)
	}
	if strings.TrimSpace(res.Stderr) != "" {
		t.Errorf("index dump stderr:\n%s", res.Stderr)
	}
}

// findSegment locates <partition>/<file> under root, wherever the storage
// layout puts the partition directory.
func findSegment(t *testing.T, root, partition, file string) string {
	t.Helper()
	var found string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == file && filepath.Base(filepath.Dir(p)) == partition {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	if found == "" {
		t.Fatalf("no %s/%s under %s", partition, file, root)
	}
	return found
}
