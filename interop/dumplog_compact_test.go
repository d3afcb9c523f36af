package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/log/recordbatch"
)

// compactRecord is one record of the compaction dump test; a nil value is
// a tombstone.
type compactRecord struct {
	key   string
	value *string
}

// compactBatch encodes records as a v2 batch in codec (Kafka's codec
// numbers: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
func compactBatch(t *testing.T, codec int16, ts int64, recs []compactRecord) []byte {
	t.Helper()
	var raw []byte
	for i, r := range recs {
		kr := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Key: []byte(r.key)}
		if r.value != nil {
			kr.Value = []byte(*r.value)
		}
		raw = appendRecord(raw, kr)
	}
	switch codec {
	case 1:
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(raw)
		w.Close()
		raw = buf.Bytes()
	case 2:
		raw = s2.EncodeSnappy(nil, raw) // a raw block, as franz-go sends
	case 3:
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		w.Write(raw)
		w.Close()
		raw = buf.Bytes()
	case 4:
		enc, _ := zstd.NewWriter(nil)
		raw = enc.EncodeAll(raw, nil)
		enc.Close()
	}
	n := int32(len(recs))
	rb := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, Attributes: codec, LastOffsetDelta: n - 1,
		FirstTimestamp: ts, MaxTimestamp: ts + int64(n-1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: n, Records: raw}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:21], recordbatch.Checksum(b))
	return b
}

// TestDumpLogCleanedSegment compacts a log with sharq's cleaner (batches
// in every codec, some kept whole, some rewritten, some removed, a
// tombstone that gets a delete horizon) and has Kafka's DumpLogSegments
// read every segment deeply: each batch must be valid (CRC), keep its
// base and last offsets, and hold exactly the records the cleaner was to
// keep; the cleaned segments' indexes must verify.
func TestDumpLogCleanedSegment(t *testing.T) {
	needJava(t)
	dataDir := t.TempDir()
	now := time.Now()
	m, err := log.NewManager(dataDir, log.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	cfg := log.Config{SegmentBytes: 400, IndexIntervalBytes: 1, RetentionMs: -1, CleanupCompact: true}
	l, err := m.Open("compacted", 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	type produced struct {
		key   string
		value *string
		base  int64
		last  int64
	}
	byOffset := map[int64]produced{}
	ts := now.Add(-time.Hour).UnixMilli()
	for i := range 40 {
		var recs []compactRecord
		for j := range 1 + i%4 {
			v := fmt.Sprintf("value-%d-%d", i, j)
			r := compactRecord{key: fmt.Sprintf("key-%d", (i*3+j)%9), value: &v}
			recs = append(recs, r)
		}
		if i == 30 {
			recs = append(recs, compactRecord{key: "gone"}) // a tombstone
		}
		res, err := l.Append(compactBatch(t, int16(i%5), ts, recs), 0)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		for j, r := range recs {
			off := res.BaseOffset + int64(j)
			byOffset[off] = produced{r.key, r.value, res.BaseOffset, res.LastOffset}
		}
	}
	st, err := l.Clean(now, log.CleanerOptions{}, true)
	if err != nil || !st.Cleaned {
		t.Fatalf("clean: %+v %v", st, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, "topics", "compacted-0")
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files, indexes []string
	for _, n := range names {
		switch filepath.Ext(n.Name()) {
		case ".log":
			files = append(files, filepath.Join(dir, n.Name()))
		case ".index", ".timeindex":
			indexes = append(indexes, filepath.Join(dir, n.Name()))
		}
	}
	res := mustTool(t, Target{Name: "dump"}, "", "", ClassDumpLogSegments,
		"--files", strings.Join(files, ","), "--print-data-log", "--deep-iteration")
	var out strings.Builder
	for _, line := range strings.Split(res.Stdout, "\n") {
		// the tombstone's line ends in "payload: " or lacks it; keep the
		// parser to what it knows
		out.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	batches, err := parseDump(out.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	seen := map[int64]bool{}
	horizons := 0
	for _, b := range batches {
		if b.fields["isvalid"] != "true" {
			t.Errorf("batch %v is not valid", b.fields)
		}
		base, _ := strconv.ParseInt(b.fields["baseOffset"], 10, 64)
		last, _ := strconv.ParseInt(b.fields["lastOffset"], 10, 64)
		if p, ok := byOffset[base]; !ok || p.base != base || p.last != last {
			t.Errorf("batch %d..%d: produced as %d..%d", base, last, p.base, p.last)
		}
		if b.fields["deleteHorizonMs"] != "" && b.fields["deleteHorizonMs"] != "OptionalLong.empty" {
			horizons++
		}
		for _, r := range b.records {
			p := byOffset[r.offset]
			seen[r.offset] = true
			if r.key == nil || *r.key != p.key {
				t.Errorf("offset %d: key %s, produced %q", r.offset, deref(r.key), p.key)
			}
			if p.value != nil && (r.payload == nil || *r.payload != *p.value) {
				t.Errorf("offset %d: payload %s, produced %q", r.offset, deref(r.payload), *p.value)
			}
		}
	}
	latestCleaned := map[string]int64{} // what the cleaner's map saw
	for off, p := range byOffset {
		if off < st.End && off > latestCleaned[p.key] {
			latestCleaned[p.key] = off
		}
	}
	for off, p := range byOffset {
		want := off >= st.End || latestCleaned[p.key] == off
		if seen[off] != want {
			t.Errorf("offset %d (%s): dumped %v, want %v", off, p.key, seen[off], want)
		}
	}
	if horizons == 0 {
		t.Errorf("no batch shows a delete horizon (the tombstone's):\n%s", res.Stdout)
	}
	t.Logf("DumpLogSegments of the cleaned log:\n%s", res.Stdout)
	ires := mustTool(t, Target{Name: "dump"}, "", "", ClassDumpLogSegments,
		"--files", strings.Join(indexes, ","), "--verify-index-only")
	for _, bad := range []string{"Mismatches", "not found", "Exception", "corrupt"} {
		if strings.Contains(ires.Stdout+ires.Stderr, bad) {
			t.Errorf("index verification reports %q:\n%s\n%s", bad, ires.Stdout, ires.Stderr)
		}
	}
}
