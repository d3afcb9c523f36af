package log

// Recovery of a partition's segments at open: sealed segments are trusted
// below the recovery point and scanned from it on, the active segment is
// checked from its last good index entry, and what a crash left torn is
// cut.

import (
	"errors"
	"fmt"
	"math"
	"os"
)

// openSegments opens the segments named by bases. Sealed segments below
// the recovery point rp are trusted (tail check only); from rp on they may
// not have been fsynced before a crash, so they are scanned like the active
// segment, and one found cut short becomes the active segment: the
// segments after it are removed.
func (l *Log) openSegments(bases []int64, rp int64, clean bool) error {
	for i, b := range bases[:len(bases)-1] {
		next := bases[i+1]
		if clean || b < rp {
			s, err := l.openSealed(b, next)
			if err != nil {
				return err
			}
			l.mu.segs = append(l.mu.segs, s)
			continue
		}
		s, err := l.openActive(b, false, true)
		if err != nil {
			return err
		}
		l.mu.segs = append(l.mu.segs, s)
		// A compacted log's segment may end before the next one starts
		// (the cleaner's holes): one that scans clean to its end is whole.
		if s.next == next || (s.holes && !s.cut && s.next < next) {
			s.next = next
			if err := l.sealRecovered(s); err != nil {
				return err
			}
			continue
		}
		l.logger.Warn("segment written before the crash ends early; removing the segments after it",
			"file", s.logPath, "log_end_offset", s.next, "next_segment", next, "removed", len(bases)-1-i)
		for j := len(bases) - 1; j > i; j-- {
			l.removeFile(segmentName(bases[j], logSuffix))
			l.removeFile(segmentName(bases[j], indexSuffix))
			l.removeFile(segmentName(bases[j], timeIndexSuffix))
		}
		if err := l.fs.SyncDir(l.dir); err != nil {
			return fmt.Errorf("%w: sync %s: %w", ErrStorage, l.dir, err)
		}
		return nil
	}
	s, err := l.openActive(bases[len(bases)-1], clean, false)
	if err != nil {
		return err
	}
	l.mu.segs = append(l.mu.segs, s)
	return nil
}

// scanResult is what a validating scan of a segment found.
type scanResult struct {
	end    int64 // position after the last valid batch
	next   int64 // offset after the last valid batch
	reason string
	at     int64 // position of the first invalid batch
}

// scanSegment validates batches of s from pos (whose first batch must have
// base offset expect, or any if expect < 0) up to end, calling fn for each
// valid one.
func scanSegment(s *segment, pos, end, expect int64, verifyCRC bool, fn func(h *batchHeader, pos int64)) (scanResult, error) {
	sc := newScanner(s.log, pos, end)
	sc.headerOnly = !verifyCRC
	res := scanResult{end: pos, next: expect}
	for {
		b, reason, err := sc.next()
		if err != nil {
			return res, fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
		}
		if b == nil {
			res.reason, res.at = reason, sc.pos
			return res, nil
		}
		want := res.next
		if base := parseStoredPrefix(b).base; want < 0 || (s.holes && base > want) {
			// (a compacted log's offsets only grow: the cleaner leaves holes)
			want = base
		}
		r := ""
		if sc.headerOnly {
			r = checkHeader(b, want)
		} else {
			r = checkStored(b, want, verifyCRC)
		}
		if r != "" {
			res.reason, res.at = r, sc.pos
			return res, nil
		}
		h := parseHeader(b)
		if h.LeaderEpoch < -1 || h.LeaderEpoch > s.epochLimit {
			res.reason, res.at = fmt.Sprintf("leader epoch %d is not in the leader epoch checkpoint", h.LeaderEpoch), sc.pos
			return res, nil
		}
		if h.LastOffset()-s.base > math.MaxInt32 || h.BaseOffset < s.base {
			res.reason, res.at = fmt.Sprintf("offset %d does not belong to segment %d", h.BaseOffset, s.base), sc.pos
			return res, nil
		}
		if fn != nil {
			fn(&h, sc.pos)
		}
		sc.advance(int64(h.Size))
		res.end, res.next = sc.pos, h.LastOffset()+1
	}
}

// rebuildIndexes recomputes a segment's indexes from its batches, as Kafka's
// LogSegment.recover does, and returns them with the scan result.
func (l *Log) rebuildIndexes(s *segment, interval int64, verifyCRC bool) ([]byte, []byte, scanResult, error) {
	s.idx, s.tidx, s.bytesSinceIndex = nil, nil, 0
	s.maxTs, s.maxTsOffset = -1, -1
	res, err := scanSegment(s, 0, s.size.Load(), s.base, verifyCRC, func(h *batchHeader, pos int64) {
		s.onAppendLocked(h, pos, interval)
	})
	idx, tidx := s.idx, s.tidx
	s.idx, s.tidx = nil, nil
	return idx, tidx, res, err
}

// openSealed opens a segment that is not the last one. Sealed segments
// were fsynced with their indexes when they were rolled, so only the tail
// after the last index entry is checked (framing, CRC, and that it ends
// exactly where the next segment starts). A segment that fails is an error
// naming the file: it is never served silently.
func (l *Log) openSealed(base, next int64) (*segment, error) {
	interval := int64(l.mu.cfg.IndexIntervalBytes)
	s, idx, tidx, err := l.openSegmentFiles(base)
	if err != nil {
		return nil, err
	}
	s.sealed = true
	s.durable.Store(true)
	size := s.size.Load()
	idx, ierr := checkOffsetIndex(idx, size)
	tidx, terr := checkTimeIndex(tidx, next-base)
	ok := ierr == nil && terr == nil
	// The tail scan also checks, for free, that no entry is missing: an
	// emptied or cut .index leaves more than index.interval.bytes of
	// batches after its last entry, and a cut .timeindex lacks the
	// segment's largest timestamp, which a seal always adds last.
	var tailBytes int64
	tailMaxTs := int64(-1)
	missing := ""
	track := func(h *batchHeader, pos int64) {
		if missing == "" && tailBytes > interval {
			missing = fmt.Sprintf("no index entry for the batch at position %d, %d bytes after the last one", pos, tailBytes)
		}
		tailBytes += int64(h.Size)
		tailMaxTs = max(tailMaxTs, h.MaxTimestamp)
	}
	if ok {
		pos, expect := int64(0), base
		if n := len(idx); n > 0 {
			rel, p := offsetEntry(idx[n-offsetIndexEntry:])
			pos = int64(p)
			hs := newScanner(s.log, pos, size)
			hs.headerOnly = true // the batch's offsets are in its header
			b, _, ferr := hs.next()
			if ferr != nil {
				s.closeFiles()
				return nil, fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, ferr)
			}
			ok = b != nil && parseStoredPrefix(b).last == base+int64(rel)
			if ok {
				res, err := scanSegment(s, pos, size, parseStoredPrefix(b).base, true, track)
				if err != nil {
					s.closeFiles()
					return nil, err
				}
				ok = res.reason == "" && res.end == size && (res.next == next || (s.holes && res.next < next))
			}
		} else {
			res, err := scanSegment(s, pos, size, expect, true, track)
			if err != nil {
				s.closeFiles()
				return nil, err
			}
			// (a cleaned segment may end before the next one starts)
			ok = res.reason == "" && res.end == size && (res.next == next || size == 0 || (s.holes && res.next < next))
		}
	}
	if ok && missing == "" && tailMaxTs >= 0 && (len(tidx) == 0 || lastTs(tidx) < tailMaxTs) {
		missing = fmt.Sprintf("time index lacks the largest timestamp %d", tailMaxTs)
	}
	if ok && missing != "" {
		ok = false
		if ierr == nil {
			ierr = errors.New(missing)
		}
	}
	if !ok {
		nidx, ntidx, res, err := l.rebuildIndexes(s, interval, true)
		if err != nil {
			s.closeFiles()
			return nil, err
		}
		if res.reason != "" || res.end != size || res.next > next || (res.next < next && !s.holes) {
			s.closeFiles()
			why := res.reason
			if why == "" {
				why = fmt.Sprintf("ends at offset %d but the next segment starts at %d", res.next, next)
			}
			return nil, fmt.Errorf("%w: corrupt sealed segment %s at position %d: %s", ErrStorage, s.logPath, res.at, why)
		}
		if s.maxTs > 0 && (len(ntidx) == 0 || s.maxTs > lastTs(ntidx)) {
			ntidx = appendTimeEntry(ntidx, s.maxTs, s.rel(s.maxTsOffset))
		}
		l.logger.Warn("rebuilt index of sealed segment", "file", s.logPath, "index_err", errString(ierr), "timeindex_err", errString(terr), "entries", len(nidx)/offsetIndexEntry)
		if err := l.replaceIndexFiles(s, nidx, ntidx); err != nil {
			s.closeFiles()
			return nil, err
		}
		idx, tidx = nidx, ntidx
	}
	s.next = next
	s.idxEntries = len(idx) / offsetIndexEntry
	s.tidxEntries = len(tidx) / timeIndexEntry
	if n := len(tidx); n > 0 {
		ts, rel := timeEntry(tidx[n-timeIndexEntry:])
		s.maxTs, s.maxTsOffset = ts, base+int64(rel)
	}
	return s, nil
}

func lastTs(tidx []byte) int64 {
	ts, _ := timeEntry(tidx[len(tidx)-timeIndexEntry:])
	return ts
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// replaceIndexFiles atomically replaces both index files of s.
func (l *Log) replaceIndexFiles(s *segment, idx, tidx []byte) error {
	for _, x := range []struct {
		f    *File
		data []byte
		suf  string
	}{{&s.index, idx, indexSuffix}, {&s.tindex, tidx, timeIndexSuffix}} {
		name := segmentName(s.base, x.suf)
		if err := l.writeFileAtomic(name, x.data); err != nil {
			return err
		}
		f, err := l.fs.OpenFile(l.filePath(name), os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("%w: open %s: %w", ErrStorage, name, err)
		}
		(*x.f).Close()
		*x.f = f
	}
	return nil
}

// sealRecovered turns a segment recovered by a full scan back into a
// sealed one: its rebuilt indexes replace the files, which are fsynced.
func (l *Log) sealRecovered(s *segment) error {
	if s.maxTs >= 0 && s.maxTs > s.lastTimeIndexTs() {
		s.tidx = appendTimeEntry(s.tidx, s.maxTs, s.rel(s.maxTsOffset))
	}
	if op, err := s.putIndexFiles(s.idx, s.tidx, 0, 0, true); err != nil {
		return indexFileError(s, op, err)
	}
	s.sealed = true
	s.memIndex = false
	s.durable.Store(true)
	s.idxEntries, s.tidxEntries = len(s.idx)/offsetIndexEntry, len(s.tidx)/timeIndexEntry
	s.idx, s.tidx = nil, nil
	return nil
}

// lastGoodEntry finds the last entry of the active segment's offset index
// that points at a valid batch, dropping the entries after it: the scan
// for the rest of the segment starts there (start, at the batch with base
// offset startBatch and relative offset startRel; 0, -1, -1 without one).
func lastGoodEntry(s *segment, idx []byte, size int64, clean bool) (_ []byte, start, startBatch int64, startRel int32, _ error) {
	start, startBatch, startRel = 0, -1, -1
	for len(idx) > 0 {
		rel, p := offsetEntry(idx[len(idx)-offsetIndexEntry:])
		sc := newScanner(s.log, int64(p), size)
		// After a clean stop the index and the batch it names were
		// written before the marker: the header is enough, as for the
		// scan below. Otherwise the batch must pass its CRC.
		sc.headerOnly = clean
		b, reason, err := sc.next()
		if err != nil {
			return idx, 0, 0, 0, fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
		}
		if b != nil && reason == "" {
			sh := parseStoredPrefix(b)
			check := checkHeader(b, sh.base)
			if !clean {
				check = checkStored(b, sh.base, true)
			}
			if e := parseHeader(b).LeaderEpoch; sh.last == s.base+int64(rel) && check == "" && e >= -1 && e <= s.epochLimit {
				return idx, int64(p), sh.base, rel, nil
			}
		}
		idx = idx[:len(idx)-offsetIndexEntry]
	}
	return idx, start, startBatch, startRel, nil
}

// openActive opens the last segment. After an unclean stop it scans from
// the last index entry (index entries only ever point at fsynced data),
// truncates at the first invalid batch, and logs what it cut. After a
// clean stop the same walk only checks framing.
func (l *Log) openActive(base int64, clean, fullScan bool) (*segment, error) {
	interval := int64(l.mu.cfg.IndexIntervalBytes)
	s, idx, tidx, err := l.openSegmentFiles(base)
	if err != nil {
		return nil, err
	}
	size := s.size.Load()
	if fullScan {
		// nothing in this segment is known to be durable
		idx, tidx = idx[:0], tidx[:0]
	}
	idx, _ = checkOffsetIndex(idx, size)
	if !clean {
		// The index files are not fsynced between rolls, so after a crash
		// their unsynced tail may be torn. Every entry is checked against
		// the batch it names (one header read per entry, through the
		// read-ahead buffer), cutting at the first that does not match.
		idx = validOffsetEntries(s, idx, size)
	}
	idx, start, startBatch, startRel, err := lastGoodEntry(s, idx, size, clean)
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	tidx, _ = checkTimeIndex(tidx, int64(startRel)+1)
	if !clean {
		tidx = validTimeEntries(s, idx, tidx, size)
	}
	s.idx, s.tidx = idx, tidx
	if len(tidx) > 0 {
		ts, rel := timeEntry(tidx[len(tidx)-timeIndexEntry:])
		s.maxTs, s.maxTsOffset = ts, base+int64(rel)
	}
	expect := base
	if startBatch >= 0 {
		expect = startBatch
	}
	res, err := scanSegment(s, start, size, expect, !clean, func(h *batchHeader, pos int64) {
		if pos == start && startBatch >= 0 {
			// this batch already has its index entry
			if h.MaxTimestamp > s.maxTs {
				s.maxTs, s.maxTsOffset = h.MaxTimestamp, h.LastOffset()
			}
			s.bytesSinceIndex = int64(h.Size)
			s.next = h.LastOffset() + 1
			return
		}
		s.onAppendLocked(h, pos, interval)
	})
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	if res.reason != "" && clean {
		l.logger.Warn("active segment inconsistent despite clean shutdown marker; recovering", "file", s.logPath, "position", res.at, "reason", res.reason)
		l.markerDoubt = true
		s.closeFiles()
		return l.openActive(base, false, fullScan)
	}
	s.next = max(res.next, base)
	if res.end < size {
		s.cut = true
		cut := size - res.end
		l.logger.Warn("truncating log segment after unclean shutdown",
			"file", s.logPath, "position", res.end, "bytes_cut", cut,
			"log_end_offset", s.next, "reason", res.reason)
		if err := s.log.Truncate(res.end); err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("%w: truncate %s: %w", ErrStorage, s.logPath, err)
		}
		s.size.Store(res.end)
	}
	if !clean || res.end < size {
		if err := s.log.Sync(); err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("%w: sync %s: %w", ErrStorage, s.logPath, err)
		}
	}
	// Drop index entries beyond what was kept; new ones are written at the
	// next flush.
	for _, x := range []struct {
		f File
		n int
	}{{s.index, len(idx)}, {s.tindex, len(tidx)}} {
		if sz, err := x.f.Size(); err != nil || sz != int64(x.n) {
			if err := x.f.Truncate(int64(x.n)); err != nil {
				s.closeFiles()
				return nil, fmt.Errorf("%w: truncate index of %s: %w", ErrStorage, s.logPath, err)
			}
		}
	}
	s.idxWritten, s.tidxWritten = len(idx), len(tidx)
	s.memIndex = true
	if s.size.Load() > 0 {
		var hdr [batchHeaderSize]byte
		if err := readFull(s.log, hdr[:], 0); err == nil {
			s.rollBaseMs = parseHeader(hdr[:]).MaxTimestamp
		}
	}
	return s, nil
}

// validOffsetEntries returns the prefix of idx whose entries each point at
// a batch header ending at the offset the entry names.
func validOffsetEntries(s *segment, idx []byte, size int64) []byte {
	sc := newScanner(s.log, 0, size)
	prevLast := s.base - 1
	for i := 0; i < len(idx); i += offsetIndexEntry {
		rel, p := offsetEntry(idx[i:])
		hdr := sc.header(int64(p))
		if hdr == nil {
			return idx[:i]
		}
		sh := parseStoredPrefix(hdr)
		if hdr[offMagic] != magicV2 || sh.last != s.base+int64(rel) || sh.base <= prevLast || sh.size < batchHeaderSize || int64(p)+sh.size > size {
			return idx[:i]
		}
		prevLast = sh.last
	}
	return idx
}

// validTimeEntries returns the prefix of tidx whose entries each name the
// last offset and the max timestamp of a batch, found through idx.
func validTimeEntries(s *segment, idx, tidx []byte, size int64) []byte {
	sc := newScanner(s.log, 0, size)
	for i := 0; i < len(tidx); i += timeIndexEntry {
		ts, rel := timeEntry(tidx[i:])
		target := s.base + int64(rel)
		pos := offsetFloorMem(idx, rel)
		ok := false
		for {
			hdr := sc.header(pos)
			if hdr == nil {
				break
			}
			sh := parseStoredPrefix(hdr)
			if sh.size < batchHeaderSize || hdr[offMagic] != magicV2 || sh.last > target {
				break
			}
			if sh.last == target {
				ok = parseHeader(hdr).MaxTimestamp == ts
				break
			}
			pos += sh.size
		}
		if !ok {
			return tidx[:i]
		}
	}
	return tidx
}
