package interop

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log/recordbatch"
)

// goldenRecord is one record of a golden batch.
type goldenRecord struct {
	key, value string
	headers    []string // header keys; values are "v-"+key
}

// goldenBatch is one v2 RecordBatch the storage golden tests write.
type goldenBatch struct {
	codec   string // none, gzip, zstd (as DumpLogSegments prints compresscodec)
	records []goldenRecord
}

// goldenBatches are the batches written to the golden segment: plain ones,
// compressed ones, headers, an empty key and value.
var goldenBatches = []goldenBatch{
	{"none", []goldenRecord{{"k0", "value zero", nil}, {"k1", "value one", []string{"h1"}}}},
	{"gzip", []goldenRecord{{"k2", "gzip two", nil}, {"k3", "gzip three", []string{"h1", "h2"}}, {"k4", "gzip four", nil}}},
	{"none", []goldenRecord{{"", "", nil}}},
	{"zstd", []goldenRecord{{"k6", strings.Repeat("zstd six ", 20), nil}, {"k7", "zstd seven", nil}}},
	{"none", []goldenRecord{{"k8", "last", []string{"trace"}}}},
}

var codecAttr = map[string]int16{"none": 0, "gzip": 1, "zstd": 4}

// appendRecord appends one v2 record with its varint length computed.
func appendRecord(dst []byte, r kmsg.Record) []byte {
	r.Length = 0
	body := r.AppendTo(nil)
	// Length counts everything after itself; with Length 0 the varint
	// prefix is exactly one byte.
	r.Length = int32(len(body) - 1)
	return r.AppendTo(dst)
}

// buildBatch encodes b as a v2 RecordBatch with base offset 0, as a producer
// sends it (the broker assigns the real base offset in place).
func buildBatch(t testing.TB, b goldenBatch, firstTimestamp int64) []byte {
	t.Helper()
	var recs []byte
	for i, gr := range b.records {
		r := kmsg.Record{
			TimestampDelta64: int64(i),
			OffsetDelta:      int32(i),
			Key:              []byte(gr.key),
			Value:            []byte(gr.value),
		}
		for _, h := range gr.headers {
			r.Headers = append(r.Headers, kmsg.Header{Key: h, Value: []byte("v-" + h)})
		}
		recs = appendRecord(recs, r)
	}
	switch b.codec {
	case "none":
	case "gzip":
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(recs); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		recs = buf.Bytes()
	case "zstd":
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		recs = enc.EncodeAll(recs, nil)
		_ = enc.Close()
	default:
		t.Fatalf("codec %q", b.codec)
	}
	n := int32(len(b.records))
	rb := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           codecAttr[b.codec],
		LastOffsetDelta:      n - 1,
		FirstTimestamp:       firstTimestamp,
		MaxTimestamp:         firstTimestamp + int64(n-1),
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           n,
		Records:              recs,
	}
	raw := rb.AppendTo(nil)
	// Length counts from the leader epoch on (all but offset and length);
	// the CRC-32C covers attributes to the end.
	binary.BigEndian.PutUint32(raw[8:12], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:21], recordbatch.Checksum(raw))
	return raw
}

// dumpedBatch and dumpedRecord are what DumpLogSegments --print-data-log
// printed.
type dumpedBatch struct {
	fields  map[string]string
	records []dumpedRecord
}

type dumpedRecord struct {
	offset     int64
	headerKeys string
	key        *string
	payload    *string
}

var (
	dumpBatchLine  = regexp.MustCompile(`^baseOffset: `)
	dumpRecordLine = regexp.MustCompile(`^\| offset: (\d+) (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+) keySize: (-?\d+) valueSize: (-?\d+) sequence: (-?\d+) headerKeys: \[([^\]]*)\](.*)$`)
)

// parseDump parses DumpLogSegments output for one .log file.
func parseDump(out string) ([]dumpedBatch, error) {
	var batches []dumpedBatch
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "", strings.HasPrefix(line, "Dumping "), strings.HasPrefix(line, "Log starting offset: "):
		case dumpBatchLine.MatchString(line):
			f := strings.Fields(line)
			if len(f)%2 != 0 {
				return nil, fmt.Errorf("odd batch line %q", line)
			}
			fields := map[string]string{}
			for i := 0; i < len(f); i += 2 {
				fields[strings.TrimSuffix(f[i], ":")] = f[i+1]
			}
			batches = append(batches, dumpedBatch{fields: fields})
		case strings.HasPrefix(line, "| "):
			m := dumpRecordLine.FindStringSubmatch(line)
			if m == nil || len(batches) == 0 {
				return nil, fmt.Errorf("unparsable record line %q", line)
			}
			off, _ := strconv.ParseInt(m[1], 10, 64)
			r := dumpedRecord{offset: off, headerKeys: m[6]}
			rest := m[7]
			// " key: K payload: P": keys here have no " payload: " in them.
			if k, ok := strings.CutPrefix(rest, " key: "); ok {
				key, after, _ := strings.Cut(k, " payload: ")
				r.key = &key
				rest = " payload: " + after
				if !strings.Contains(k, " payload: ") {
					rest = ""
				}
			}
			if p, ok := strings.CutPrefix(rest, " payload: "); ok {
				r.payload = &p
			}
			batches[len(batches)-1].records = append(batches[len(batches)-1].records, r)
		default:
			return nil, fmt.Errorf("unexpected dump line %q", line)
		}
	}
	return batches, nil
}

// dumpLog runs DumpLogSegments on a .log file and checks that every golden
// batch and record appears with the offsets it was given (batches in order
// from offset 0).
func dumpLog(t *testing.T, logFile string) {
	t.Helper()
	res := mustTool(t, Target{Name: "dump"}, "", "", ClassDumpLogSegments,
		"--files", logFile, "--print-data-log", "--deep-iteration")
	problems, err := checkDump(res.Stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Logf("DumpLogSegments output:\n%s", res.Stdout)
	}
}

// checkDump compares DumpLogSegments output with goldenBatches.
func checkDump(out string) ([]string, error) {
	batches, err := parseDump(out)
	if err != nil {
		return nil, err
	}
	if len(batches) != len(goldenBatches) {
		return []string{fmt.Sprintf("dump shows %d batches, want %d", len(batches), len(goldenBatches))}, nil
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	next := int64(0)
	for i, gb := range goldenBatches {
		got := batches[i]
		n := int64(len(gb.records))
		for _, kv := range [][2]string{
			{"baseOffset", strconv.FormatInt(next, 10)},
			{"lastOffset", strconv.FormatInt(next+n-1, 10)},
			{"count", strconv.FormatInt(n, 10)},
			{"magic", "2"},
			{"compresscodec", gb.codec},
			{"isvalid", "true"},
			{"isControl", "false"},
		} {
			if got.fields[kv[0]] != kv[1] {
				bad("batch %d: %s %q, want %q", i, kv[0], got.fields[kv[0]], kv[1])
			}
		}
		if len(got.records) != len(gb.records) {
			bad("batch %d: %d records dumped, want %d", i, len(got.records), len(gb.records))
			next += n
			continue
		}
		for j, gr := range gb.records {
			r := got.records[j]
			if r.offset != next+int64(j) {
				bad("batch %d record %d: offset %d, want %d", i, j, r.offset, next+int64(j))
			}
			if r.headerKeys != strings.Join(gr.headers, ",") {
				bad("batch %d record %d: headerKeys [%s], want %v", i, j, r.headerKeys, gr.headers)
			}
			if r.key == nil || *r.key != gr.key {
				bad("batch %d record %d: key %v, want %q", i, j, deref(r.key), gr.key)
			}
			if r.payload == nil || *r.payload != gr.value {
				bad("batch %d record %d: payload %v, want %q", i, j, deref(r.payload), gr.value)
			}
		}
		next += n
	}
	return problems, nil
}

func deref(s *string) string {
	if s == nil {
		return "<absent>"
	}
	return strconv.Quote(*s)
}

// writeReferenceSegment lays the golden batches out in dir as a broker
// would (base offsets assigned in place, leader epoch 0) and returns the
// .log path.
func writeReferenceSegment(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var seg []byte
	next := int64(0)
	for _, gb := range goldenBatches {
		b := buildBatch(t, gb, goldenTimestamp)
		binary.BigEndian.PutUint64(b[0:8], uint64(next))
		binary.BigEndian.PutUint32(b[12:16], 0) // leader epoch, outside the CRC
		seg = append(seg, b...)
		next += int64(len(gb.records))
	}
	logFile := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(logFile, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	return logFile
}

var goldenTimestamp = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()

// TestDumpLogReferenceSegment checks the golden batches and the dump
// checker against Kafka's own DumpLogSegments without sharq's storage: it
// proves the batches are valid v2 batches to Kafka (CRC, gzip, zstd) and
// that the checker holds for Kafka's output format, and that a corrupted
// batch is caught.
func TestDumpLogReferenceSegment(t *testing.T) {
	needJava(t)
	logFile := writeReferenceSegment(t, filepath.Join(t.TempDir(), "golden-0"))
	dumpLog(t, logFile)

	// Flip one payload byte of the last (uncompressed) batch: Kafka must
	// report it invalid and the checker must say so.
	seg, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(seg, []byte("last"))
	if i < 0 {
		t.Fatal("payload not found in segment")
	}
	seg[i] = 'L'
	if err := os.WriteFile(logFile, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustTool(t, Target{Name: "dump"}, "", "", ClassDumpLogSegments,
		"--files", logFile, "--print-data-log", "--deep-iteration")
	problems, err := checkDump(res.Stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	joined := strings.Join(problems, "\n")
	if !strings.Contains(joined, `batch 4: isvalid "false"`) || !strings.Contains(joined, `payload "Last", want "last"`) {
		t.Errorf("corrupted batch not reported; problems:\n%s\noutput:\n%s", joined, res.Stdout)
	}
}
