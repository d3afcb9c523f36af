package log

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	snapshotSuffix  = ".snapshot"
	tmpSuffix       = ".tmp"
)

func segmentName(base int64, suffix string) string {
	return fmt.Sprintf("%020d%s", base, suffix)
}

// parseSegmentName returns the base offset of a Kafka-named file with suffix.
func parseSegmentName(name, suffix string) (int64, bool) {
	stem, ok := strings.CutSuffix(name, suffix)
	if !ok || len(stem) != 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(stem, 10, 64)
	return v, err == nil && v >= 0
}

// segment is one .log file with its two indexes. The active segment keeps
// its indexes in memory (bounded by segment.bytes / index.interval.bytes);
// sealed segments are read through their index files, so memory does not
// grow with the amount of data stored.
type segment struct {
	base    int64
	logPath string
	log     File
	index   File
	tindex  File
	size    atomic.Int64 // bytes of whole batches in .log; readers never read past it
	refs    atomic.Int32 // 1 for the Log's list plus one per reader
	// holes: offsets may skip between batches and the segment may end
	// before the next one starts (the log was compacted; set at creation).
	holes bool
	// cut: recovery cut a bad tail off this segment (set at open).
	cut bool
	// durable: a sealed segment whose .log and indexes are fsynced.
	durable atomic.Bool
	flushMu sync.Mutex // serialises syncSealed
	// epochLimit is the latest epoch in the leader epoch checkpoint at open
	// (MaxInt32 if unknown). The epoch field is outside the CRC, so a torn
	// write can change it undetected; the checkpoint is always written
	// before a batch of a new epoch, so a larger epoch means garbage.
	epochLimit int32

	// Guarded by Log.mu; written only with Log.appendMu held.
	next        int64 // offset after the last batch
	maxTs       int64 // largest batch max timestamp, -1 if none
	maxTsOffset int64 // last offset of the batch that holds maxTs
	rollBaseMs  int64 // segment.ms is measured from here; -1 until the first append
	sealed      bool
	// memIndex: lookups use idx/tidx in memory (the active segment, and a
	// sealed one until its background fsync wrote the index files).
	memIndex bool

	// Active segment only (guarded by Log.mu, written with appendMu held).
	idx             []byte
	tidx            []byte
	bytesSinceIndex int64

	// Active segment only, guarded by Log.syncMu: how much of idx/tidx is
	// already in the files. Entries reach the files only after the log
	// bytes they point to were fsynced, so recovery can trust them.
	idxWritten  int
	tidxWritten int

	// Sealed segment only: entries in the index files.
	idxEntries  int
	tidxEntries int
}

func (s *segment) acquire() { s.refs.Add(1) }

func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		s.closeFiles()
	}
}

func (s *segment) closeFiles() {
	for _, f := range []File{s.log, s.index, s.tindex} {
		if f != nil {
			f.Close()
		}
	}
}

func (s *segment) path(suffix string) string {
	return strings.TrimSuffix(s.logPath, logSuffix) + suffix
}

// relOffset converts an absolute offset inside the segment.
func (s *segment) rel(offset int64) int32 {
	d := offset - s.base
	if d < 0 {
		return -1
	}
	if d > int64(^uint32(0)>>1) {
		return int32(^uint32(0) >> 1)
	}
	return int32(d)
}

// lastTimeIndexTs is the timestamp of the last in-memory time index entry.
func (s *segment) lastTimeIndexTs() int64 {
	if len(s.tidx) == 0 {
		return -1
	}
	ts, _ := timeEntry(s.tidx[len(s.tidx)-timeIndexEntry:])
	return ts
}

// onAppendLocked updates the in-memory state of the active segment after a
// batch of size bytes at position pos was written. It follows Kafka's
// LogSegment.append: an index entry for the batch's last offset is added
// once more than index.interval.bytes were written since the last one.
func (s *segment) onAppendLocked(h *batchHeader, pos int64, interval int64) {
	last := h.LastOffset()
	if h.MaxTimestamp > s.maxTs {
		s.maxTs = h.MaxTimestamp
		s.maxTsOffset = last
	}
	if s.bytesSinceIndex > interval {
		s.idx = appendOffsetEntry(s.idx, s.rel(last), int32(pos))
		if s.maxTs > s.lastTimeIndexTs() {
			s.tidx = appendTimeEntry(s.tidx, s.maxTs, s.rel(s.maxTsOffset))
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int64(h.Size)
	s.next = last + 1
	if s.rollBaseMs < 0 {
		s.rollBaseMs = h.MaxTimestamp
	}
}

// stored-batch checks shared by recovery, open and read.

// headerPrefix is how much of a header is needed to walk batches.
const headerPrefix = offLastOffsetDelta + 4

type storedHeader struct {
	base int64
	size int64
	last int64
}

func parseStoredPrefix(b []byte) storedHeader {
	base := int64(binary.BigEndian.Uint64(b[offBaseOffset:]))
	return storedHeader{
		base: base,
		size: int64(int32(binary.BigEndian.Uint32(b[offBatchLength:]))) + batchLengthOverhead,
		last: base + int64(int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))),
	}
}

// checkStored validates a whole stored batch found at pos of a segment
// whose next offset must be expect. It returns "" or why the batch is bad.
func checkStored(b []byte, expect int64, verifyCRC bool) string {
	if len(b) < batchHeaderSize {
		return "truncated batch header"
	}
	if r := checkHeader(b, expect); r != "" {
		return r
	}
	switch h := parseHeader(b); {
	case int64(h.Size) != int64(len(b)):
		return "batch length mismatch"
	case verifyCRC && batchCRC(b) != h.CRC:
		return "CRC-32C mismatch"
	}
	return ""
}

// checkHeader is checkStored's part that needs only the batch header (a
// scanner in header-only mode returns no more).
func checkHeader(hdr []byte, expect int64) string {
	h := parseHeader(hdr)
	switch {
	case h.Magic != magicV2:
		return fmt.Sprintf("magic %d", h.Magic)
	case h.BaseOffset != expect:
		return fmt.Sprintf("base offset %d, expected %d", h.BaseOffset, expect)
	case h.LastOffsetDelta < 0:
		return fmt.Sprintf("negative last offset delta %d", h.LastOffsetDelta)
	}
	return ""
}

// scanner reads whole batches sequentially from pos to end with a
// read-ahead buffer, for recovery and state rebuilds.
type scanner struct {
	f      File
	pos    int64
	end    int64
	buf    []byte
	bufPos int64
	bufLen int
	// headerOnly makes next return only each batch's header, after the
	// same framing checks, without reading the records: scans that check
	// no CRC need nothing else, and skipping a batch of 1 MB costs no read.
	headerOnly bool
}

func newScanner(f File, pos, end int64) *scanner {
	n := min(16<<10, max(end-pos, batchHeaderSize))
	return &scanner{f: f, pos: pos, end: end, buf: make([]byte, n)}
}

// next returns the batch at s.pos or a reason why there is no valid batch
// framing there ("" with nil batch at the end). The batch is valid until
// the next call.
func (s *scanner) next() ([]byte, string, error) {
	if s.pos >= s.end {
		return nil, "", nil
	}
	if s.end-s.pos < batchHeaderSize {
		return nil, fmt.Sprintf("%d trailing bytes, shorter than a batch header", s.end-s.pos), nil
	}
	hdr, err := s.window(batchHeaderSize)
	if err != nil {
		return nil, "", err
	}
	sh := parseStoredPrefix(hdr)
	if sh.size < batchHeaderSize {
		return nil, fmt.Sprintf("batch length %d is too small", sh.size-batchLengthOverhead), nil
	}
	if sh.size > s.end-s.pos {
		return nil, fmt.Sprintf("batch of %d bytes runs past the end of the file (%d bytes left)", sh.size, s.end-s.pos), nil
	}
	if s.headerOnly {
		return hdr, "", nil
	}
	b, err := s.window(int(sh.size))
	if err != nil {
		return nil, "", err
	}
	return b, "", nil
}

func (s *scanner) advance(n int64) { s.pos += n }

// header returns the batch header at pos, or nil if there is no room for
// one or it cannot be read.
func (s *scanner) header(pos int64) []byte {
	if pos < 0 || pos+batchHeaderSize > s.end {
		return nil
	}
	s.pos = pos
	b, err := s.window(batchHeaderSize)
	if err != nil {
		return nil
	}
	return b
}

// window returns n bytes at s.pos, refilling the buffer as needed.
func (s *scanner) window(n int) ([]byte, error) {
	if s.pos >= s.bufPos && s.pos+int64(n) <= s.bufPos+int64(s.bufLen) {
		o := s.pos - s.bufPos
		return s.buf[o : o+int64(n)], nil
	}
	if n > len(s.buf) {
		s.buf = make([]byte, n)
	}
	m := min(int64(len(s.buf)), s.end-s.pos)
	if err := readFull(s.f, s.buf[:m], s.pos); err != nil {
		return nil, err
	}
	s.bufPos, s.bufLen = s.pos, int(m)
	return s.buf[:n], nil
}

// read appends to dst the whole batches from the one containing offset,
// starting the search at pos (an index entry at or before it), below hw,
// within the first limit bytes of the file, using at most maxBytes unless
// the first batch alone is bigger.
func (s *segment) read(pos, limit, offset, hw int64, maxBytes int32, dst []byte) ([]byte, error) {
	start := len(dst)
	// Phase 1: find the batch containing offset. Headers are read in 4 KiB
	// chunks into dst's spare capacity, so the walk from the index entry
	// usually costs one read.
	const chunk = 4096
	dst = grow(dst, chunk)
	scratch := dst[start : start+chunk]
	chunkPos, chunkLen := int64(-1), int64(0)
	var first storedHeader
	for {
		if pos >= limit {
			return dst[:start], nil
		}
		if pos < chunkPos || chunkPos < 0 || pos+headerPrefix > chunkPos+chunkLen {
			n := min(int64(chunk), limit-pos)
			if n < headerPrefix {
				return dst[:start], s.corrupt(pos, "truncated batch header")
			}
			if err := readFull(s.log, scratch[:n], pos); err != nil {
				return dst[:start], fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
			}
			chunkPos, chunkLen = pos, n
		}
		sh := parseStoredPrefix(scratch[pos-chunkPos:])
		if sh.size < batchHeaderSize || pos+sh.size > limit || sh.last < sh.base {
			return dst[:start], s.corrupt(pos, fmt.Sprintf("bad batch framing (length %d)", sh.size))
		}
		if sh.base >= hw {
			return dst[:start], nil
		}
		if sh.last >= offset {
			first = sh
			break
		}
		pos += sh.size
	}
	// Phase 2: one read of up to maxBytes, cut at the last whole batch.
	n := min(limit-pos, max(int64(maxBytes), first.size))
	dst = grow(dst[:start], int(n))
	buf := dst[start : start+int(n)]
	if err := readFull(s.log, buf, pos); err != nil {
		return dst[:start], fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
	}
	cut := int64(0)
	for cut+headerPrefix <= n {
		sh := parseStoredPrefix(buf[cut:])
		if sh.size < batchHeaderSize || pos+cut+sh.size > limit {
			if cut == 0 {
				return dst[:start], s.corrupt(pos+cut, "bad batch framing")
			}
			break
		}
		if sh.base >= hw || cut+sh.size > n {
			break
		}
		cut += sh.size
	}
	return dst[:start+int(cut)], nil
}

func (s *segment) corrupt(pos int64, why string) error {
	return fmt.Errorf("%w: corrupt segment %s at position %d: %s", ErrStorage, s.logPath, pos, why)
}

// grow makes sure dst has room for n more bytes after len(dst) and returns
// it with the same length.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst):cap(dst)]
	}
	nd := make([]byte, len(dst), len(dst)+n)
	copy(nd, dst)
	return nd
}
