package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// spec describes a test batch.
type spec struct {
	records     int
	valueSize   int
	ts          int64 // first record timestamp
	tsStep      int64
	pid         int64
	epoch       int16
	seq         int32
	compression int16 // codec: the records are compressed with it (compressForTest)
	txn         bool
	control     bool
	tss         []int64 // per-record timestamps, overriding ts and tsStep
}

func plain(records int) spec {
	return spec{records: records, valueSize: 10, ts: 1_000, tsStep: 1, pid: -1, epoch: -1, seq: -1}
}

func idem(pid int64, epoch int16, seq int32, records int) spec {
	s := plain(records)
	s.pid, s.epoch, s.seq = pid, epoch, seq
	return s
}

// makeBatch encodes a v2 batch as a producer would (base offset 0, CRC set).
func makeBatch(s spec) []byte {
	var recs []byte
	maxTs := s.ts
	for i := 0; i < s.records; i++ {
		delta := int64(i) * s.tsStep
		if s.tss != nil {
			s.ts, delta = s.tss[0], s.tss[i]-s.tss[0]
		}
		r := kmsg.Record{
			TimestampDelta64: delta,
			OffsetDelta:      int32(i),
			Key:              []byte{'k', byte(i)},
			Value:            bytes.Repeat([]byte{byte('a' + i%26)}, s.valueSize),
		}
		if i%3 == 1 {
			r.Headers = []kmsg.Header{{Key: "h", Value: []byte("v")}}
		}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1)
		recs = r.AppendTo(recs)
		if t := s.ts + delta; t > maxTs || i == 0 {
			maxTs = t
		}
	}
	attrs := s.compression
	if s.compression != 0 {
		recs = compressForTest(s.compression, recs)
	}
	if s.txn {
		attrs |= attrTransactional
	}
	if s.control {
		attrs |= attrControl
	}
	b := kmsg.RecordBatch{
		Length:               int32(49 + len(recs)),
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(s.records - 1),
		FirstTimestamp:       s.ts,
		MaxTimestamp:         maxTs,
		ProducerID:           s.pid,
		ProducerEpoch:        s.epoch,
		FirstSequence:        s.seq,
		NumRecords:           int32(s.records),
		Records:              recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[offCRC:], batchCRC(out))
	return out
}

func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[offCRC:], batchCRC(b))
	return b
}

var testNow = time.UnixMilli(1_700_000_000_000)

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type fixture struct {
	t    testing.TB
	fs   FS
	dir  string
	m    *Manager
	now  time.Time
	logs *bytes.Buffer
}

func newFixture(t testing.TB, fsys FS) *fixture {
	t.Helper()
	f := &fixture{t: t, fs: fsys, now: testNow, logs: &bytes.Buffer{}}
	if fsys == nil {
		f.fs = OSFS{}
		f.dir = t.TempDir()
	} else {
		f.dir = "/data"
		if err := fsys.MkdirAll(f.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.SyncDir("/"); err != nil {
			t.Fatal(err)
		}
	}
	f.open()
	t.Cleanup(func() {
		if f.m != nil {
			f.m.Close()
		}
	})
	return f
}

func (f *fixture) open() {
	f.t.Helper()
	m, err := NewManager(f.dir, Options{
		FS:     f.fs,
		Logger: slog.New(slog.NewTextHandler(f.logs, nil)),
		Now:    func() time.Time { return f.now },
	})
	if err != nil {
		f.t.Fatalf("NewManager: %v", err)
	}
	f.m = m
}

func (f *fixture) reopen() {
	f.t.Helper()
	if err := f.m.Close(); err != nil {
		f.t.Fatalf("close: %v", err)
	}
	f.open()
}

func (f *fixture) log(cfg Config) *Log {
	f.t.Helper()
	l, err := f.m.Open("t", 0, cfg)
	if err != nil {
		f.t.Fatalf("open: %v", err)
	}
	return l
}

func (f *fixture) partDir() string { return filepath.Join(f.dir, "topics", "t-0") }

func mustAppend(t testing.TB, l *Log, b []byte) AppendResult {
	t.Helper()
	res, err := l.Append(b, 0)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return res
}

// readAll reads every batch from offset to the high watermark.
func readAll(t testing.TB, l *Log, from int64) [][]byte {
	t.Helper()
	var out [][]byte
	off := from
	for off < l.HighWatermark() {
		b, err := l.Read(off, 1<<20, nil)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		if len(b) == 0 {
			t.Fatalf("read %d: nothing below hw %d", off, l.HighWatermark())
		}
		for len(b) > 0 {
			h := parseHeader(b)
			out = append(out, append([]byte(nil), b[:h.Size]...))
			off = h.LastOffset() + 1
			b = b[h.Size:]
		}
	}
	return out
}

// checkIndexes verifies that every index entry of every segment points at
// the batch whose last offset it names and that time index entries are
// ascending and name offsets inside the segment.
func checkIndexes(t testing.TB, l *Log) {
	t.Helper()
	l.mu.RLock()
	segs := append([]*segment(nil), l.mu.segs...)
	l.mu.RUnlock()
	for _, s := range segs {
		var idx, tidx []byte
		l.mu.RLock()
		mem := s.memIndex
		l.mu.RUnlock()
		if !mem {
			var err error
			if idx, err = readWhole(s.index); err != nil {
				t.Fatal(err)
			}
			if tidx, err = readWhole(s.tindex); err != nil {
				t.Fatal(err)
			}
		} else {
			l.mu.RLock()
			idx, tidx = append([]byte(nil), s.idx...), append([]byte(nil), s.tidx...)
			l.mu.RUnlock()
		}
		if len(idx)%8 != 0 || len(tidx)%12 != 0 {
			t.Fatalf("%s: index sizes %d/%d", s.logPath, len(idx), len(tidx))
		}
		for i := 0; i < len(idx); i += 8 {
			rel, pos := offsetEntry(idx[i:])
			var hdr [batchHeaderSize]byte
			if err := readFull(s.log, hdr[:], int64(pos)); err != nil {
				t.Fatalf("%s: index entry %d position %d: %v", s.logPath, i/8, pos, err)
			}
			if h := parseHeader(hdr[:]); h.LastOffset() != s.base+int64(rel) {
				t.Fatalf("%s: index entry %d says offset %d at %d, batch there ends at %d", s.logPath, i/8, s.base+int64(rel), pos, h.LastOffset())
			}
		}
		prev := int64(-1)
		for i := 0; i < len(tidx); i += 12 {
			ts, rel := timeEntry(tidx[i:])
			if ts <= prev || int64(rel) < 0 || s.base+int64(rel) >= s.next {
				t.Fatalf("%s: bad time index entry %d (%d, +%d)", s.logPath, i/12, ts, rel)
			}
			prev = ts
		}
	}
}

func isErr(err, target error) bool { return errors.Is(err, target) }
