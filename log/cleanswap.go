package log

// The cleaner's on-disk discipline (Kafka's .cleaned -> .swap -> rename),
// and its recovery at open. A pass cleans groups of segments; group
// [B, E) becomes one segment with base B:
//
//  1. For each group: B.log.cleaned, B.index.cleaned, B.timeindex.cleaned
//     (and B.txnindex.cleaned when the group has aborted transactions or B
//     had a .txnindex) are written and fsynced.
//  2. cleaner-swap (sharq's) lists the groups' ranges, written atomically
//     (tmp, fsync, rename, fsync directory); that directory fsync also
//     makes step 1's names durable.
//  3. Under the log's append lock: each .cleaned is renamed to .swap, the
//     .log last; B.log.swap existing is group B's commit point. Directory
//     fsync.
//  4. The old segments (B, E) are removed, B.txnindex too if the group has
//     none now, and each .swap is renamed over B's file, the .log last;
//     cleaner-swap is removed; directory fsync. The segment list is
//     swapped in memory; readers of the old segments keep their open
//     files until they are done.
//
// One swap covers all the groups of a pass, so a pass costs two directory
// fsyncs under the lock however many groups it has.
//
// Open (recoverCleanerSwaps), for each range [B, E) of cleaner-swap: if
// B.log.swap exists the swap is completed (step 4); otherwise, if
// B.log.cleaned exists, it is rolled back (the .cleaned and .swap files go,
// the old segments are untouched); otherwise it had completed and only
// leftovers of (B, E) are removed. Groups are disjoint, so each is either
// old or new. Any other .cleaned or .swap file is removed.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

const (
	cleanedSuffix  = ".cleaned"
	swapSuffix     = ".swap"
	swapMarkerName = "cleaner-swap"
	cleanedLogFile = logSuffix + cleanedSuffix
	swapLogFile    = logSuffix + swapSuffix
)

// segmentSuffixes are a segment's files, the .log last (renames of a swap
// go in this order so that the .log decides).
var segmentSuffixes = [...]string{indexSuffix, timeIndexSuffix, txnIndexSuffix, logSuffix}

// cleanedFiles are the .cleaned files of one group.
type cleanedFiles struct {
	l      *Log
	base   int64
	end    int64      // base of the segment after the group
	group  []*segment // the segments it replaces
	out    *segment   // its index entries and largest timestamp
	log    File
	hasTxn bool
}

func newCleanedFiles(l *Log, group []*segment, end int64) *cleanedFiles {
	return &cleanedFiles{l: l, base: group[0].base, end: end, group: group}
}

func (f *cleanedFiles) path(suffix string) string {
	return f.l.filePath(segmentName(f.base, suffix) + cleanedSuffix)
}

func (f *cleanedFiles) create() error {
	var err error
	f.log, err = f.l.fs.OpenFile(f.path(logSuffix), os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("%w: create %s: %w", ErrStorage, f.path(logSuffix), err)
	}
	return nil
}

func (f *cleanedFiles) closeAll() {
	if f.log != nil {
		f.log.Close()
		f.log = nil
	}
}

// remove deletes the .cleaned (and .swap) files of a group whose swap did
// not commit.
func (f *cleanedFiles) remove() {
	f.closeAll()
	for _, suf := range segmentSuffixes {
		f.l.fs.Remove(f.path(suf))
		f.l.fs.Remove(f.l.filePath(segmentName(f.base, suf) + swapSuffix))
	}
}

// finish fsyncs the .log and writes the index files (step 1).
func (f *cleanedFiles) finish(idx, tidx, txn []byte) error {
	if err := f.log.Sync(); err != nil {
		return fmt.Errorf("%w: fsync %s: %w", ErrStorage, f.path(logSuffix), err)
	}
	f.hasTxn = len(txn) > 0
	if !f.hasTxn {
		if g, err := f.l.fs.OpenFile(f.l.filePath(segmentName(f.base, txnIndexSuffix)), os.O_RDONLY, 0); err == nil {
			g.Close()
			f.hasTxn = true // an empty one replaces B's
		}
	}
	write := func(suffix string, data []byte) error {
		g, err := f.l.fs.OpenFile(f.path(suffix), os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("%w: create %s: %w", ErrStorage, f.path(suffix), err)
		}
		defer g.Close()
		if len(data) > 0 {
			if _, err := g.WriteAt(data, 0); err != nil {
				return fmt.Errorf("%w: write %s: %w", ErrStorage, f.path(suffix), err)
			}
		}
		if err := g.Sync(); err != nil {
			return fmt.Errorf("%w: fsync %s: %w", ErrStorage, f.path(suffix), err)
		}
		return nil
	}
	if err := write(indexSuffix, idx); err != nil {
		return err
	}
	if err := write(timeIndexSuffix, tidx); err != nil {
		return err
	}
	if f.hasTxn {
		if err := write(txnIndexSuffix, txn); err != nil {
			return err
		}
	}
	f.closeAll()
	return nil
}

// swapRange is one group of a cleaner-swap marker.
type swapRange struct{ base, end int64 }

// encodeSwapMarker lays out cleaner-swap in Kafka's checkpoint text style:
// version 0, the count, then "base end" per line.
func encodeSwapMarker(rs []swapRange) []byte {
	b := []byte("0\n" + strconv.Itoa(len(rs)) + "\n")
	for _, r := range rs {
		b = strconv.AppendInt(b, r.base, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, r.end, 10)
		b = append(b, '\n')
	}
	return b
}

var errBadSwapMarker = errors.New("bad cleaner swap marker")

// decodeSwapMarker parses cleaner-swap; ranges must be ascending and
// disjoint.
func decodeSwapMarker(data []byte) ([]swapRange, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("%w: header %q", errBadSwapMarker, data)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("%w: count %q for %d lines", errBadSwapMarker, lines[1], len(lines)-2)
	}
	out := make([]swapRange, 0, n)
	for _, line := range lines[2:] {
		a, b, ok := strings.Cut(line, " ")
		base, err1 := strconv.ParseInt(a, 10, 64)
		end, err2 := strconv.ParseInt(b, 10, 64)
		if !ok || err1 != nil || err2 != nil || base < 0 || end <= base || (len(out) > 0 && base < out[len(out)-1].end) {
			return nil, fmt.Errorf("%w: range %q", errBadSwapMarker, line)
		}
		out = append(out, swapRange{base, end})
	}
	return out, nil
}

// swapCleaned puts the cleaned groups in place of theirs (steps 2 to 4).
// It returns errCleanAborted, having removed the new files, if the log
// changed since the pass was planned.
func (l *Log) swapCleaned(groups []*cleanedFiles, truncations int64) error {
	if len(groups) == 0 {
		return nil
	}
	removeAll := func() {
		for _, f := range groups {
			f.remove()
		}
		l.removeFile(swapMarkerName)
	}
	rs := make([]swapRange, len(groups))
	for i, f := range groups {
		rs[i] = swapRange{f.base, f.end}
	}
	if err := l.writeFileAtomic(swapMarkerName, encodeSwapMarker(rs)); err != nil {
		removeAll()
		return l.writeFailed("write "+swapMarkerName, err)
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	at, err := l.locateGroups(groups, truncations)
	if err == nil {
		err = l.dirtyLocked()
	}
	if err != nil {
		removeAll()
		return err
	}
	if err := l.renameCleaned(groups); err != nil {
		return err
	}
	news, err := l.openCleaned(groups)
	if err != nil {
		return err
	}
	var delta int64
	l.mu.Lock()
	segs := make([]*segment, 0, len(l.mu.segs))
	prev := 0
	for gi, f := range groups {
		segs = append(segs, l.mu.segs[prev:at[gi]]...)
		segs = append(segs, news[gi])
		prev = at[gi] + len(f.group)
		delta += news[gi].size.Load()
		for _, g := range f.group {
			delta -= g.size.Load()
		}
	}
	segs = append(segs, l.mu.segs[prev:]...)
	l.mu.segs = segs
	for i := range l.txn.aborted {
		a := &l.txn.aborted[i]
		for _, f := range groups {
			if a.segment >= f.base && a.segment < f.end {
				a.segment = f.base
			}
		}
	}
	l.mu.Unlock()
	l.size.Add(delta)
	for _, f := range groups {
		for _, g := range f.group {
			g.release() // the list's reference; open readers keep theirs
		}
	}
	return nil
}

// locateGroups finds where each group's segments stand in the log's list;
// errCleanAborted if the log was truncated since the pass was planned or a
// group's segments are no longer in place. Called with appendMu held.
func (l *Log) locateGroups(groups []*cleanedFiles, truncations int64) ([]int, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	err := l.usableLocked()
	if err == nil && l.truncations.Load() != truncations {
		// (a truncated segment may be the same object with other data)
		err = errCleanAborted
	}
	at := make([]int, len(groups))
	for gi, f := range groups {
		if err != nil {
			break
		}
		at[gi] = -1
		for i, s := range l.mu.segs {
			if s == f.group[0] {
				at[gi] = i
				break
			}
		}
		a := at[gi]
		ok := a >= 0 && a+len(f.group) < len(l.mu.segs)
		for j := 0; ok && j < len(f.group); j++ {
			ok = l.mu.segs[a+j] == f.group[j]
		}
		if !ok || l.mu.segs[a+len(f.group)].base != f.end {
			err = errCleanAborted
		}
	}
	return at, err
}

// renameCleaned moves the new files in: every group's .cleaned files to
// .swap (the commit point), then the old segments out and the .swap files
// over them, each stage made durable.
func (l *Log) renameCleaned(groups []*cleanedFiles) error {
	name := func(base int64, suffix string) string { return l.filePath(segmentName(base, suffix)) }
	for gi, f := range groups {
		for _, suf := range segmentSuffixes {
			if suf == txnIndexSuffix && !f.hasTxn {
				continue
			}
			if err := l.fs.Rename(name(f.base, suf)+cleanedSuffix, name(f.base, suf)+swapSuffix); err != nil {
				// Groups before this one are committed (their .log.swap
				// exists); this one and the rest are not: undo them, and
				// leave the committed ones to the next open.
				for _, g := range groups[gi:] {
					g.remove()
				}
				return l.fail("rename "+name(f.base, suf)+cleanedSuffix, err)
			}
		}
	}
	// Committed: from here a failure leaves the swap to the next open.
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail("sync "+l.dir, err)
	}
	for _, f := range groups {
		for _, s := range f.group[1:] {
			for _, suf := range segmentSuffixes {
				l.removeFile(segmentName(s.base, suf))
			}
		}
		if !f.hasTxn {
			l.removeFile(segmentName(f.base, txnIndexSuffix))
		}
		for _, suf := range segmentSuffixes {
			if suf == txnIndexSuffix && !f.hasTxn {
				continue
			}
			if err := l.fs.Rename(name(f.base, suf)+swapSuffix, name(f.base, suf)); err != nil {
				return l.fail("rename "+name(f.base, suf)+swapSuffix, err)
			}
		}
	}
	l.removeFile(swapMarkerName)
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail("sync "+l.dir, err)
	}
	return nil
}

// openCleaned opens the swapped-in segments as sealed, durable ones.
func (l *Log) openCleaned(groups []*cleanedFiles) ([]*segment, error) {
	news := make([]*segment, len(groups))
	for gi, f := range groups {
		s, _, _, err := l.openSegmentFiles(f.base)
		if err != nil {
			for _, n := range news[:gi] {
				n.closeFiles()
			}
			return nil, l.fail("open cleaned segment", err)
		}
		s.sealed = true
		s.holes = true
		s.durable.Store(true)
		s.next = f.end
		s.epochLimit = math.MaxInt32
		s.idxEntries = len(f.out.idx) / offsetIndexEntry
		s.tidxEntries = len(f.out.tidx) / timeIndexEntry
		if n := len(f.out.tidx); n > 0 {
			ts, rel := timeEntry(f.out.tidx[n-timeIndexEntry:])
			s.maxTs, s.maxTsOffset = ts, f.base+int64(rel)
		}
		news[gi] = s
	}
	return news, nil
}

// recoverCleanerSwaps finishes or rolls back a cleaner swap interrupted by
// a crash (see the file comment). It returns whether it changed anything.
func (l *Log) recoverCleanerSwaps(names []string) (bool, error) {
	has := make(map[string]bool, len(names))
	for _, n := range names {
		has[n] = true
	}
	changed := false
	if has[swapMarkerName] {
		changed = true
		data, err := l.readSmallFile(swapMarkerName)
		if err != nil {
			return changed, fmt.Errorf("%w: %w", ErrStorage, err)
		}
		rs, err := decodeSwapMarker(data)
		if err != nil {
			return changed, fmt.Errorf("%w: %s: %w", ErrStorage, l.filePath(swapMarkerName), err)
		}
		for _, r := range rs {
			b := r.base
			switch {
			case has[segmentName(b, swapLogFile)]:
				l.logger.Warn("completing a log cleaner swap interrupted by a crash", "segment", b, "end", r.end)
				l.removeSegmentsBetween(names, b, r.end)
				// A B.txnindex without B.txnindex.swap is the new one: a
				// group whose B had one always writes a (maybe empty)
				// replacement.
				for _, suf := range segmentSuffixes {
					if from := segmentName(b, suf) + swapSuffix; has[from] {
						if err := l.fs.Rename(l.filePath(from), l.filePath(segmentName(b, suf))); err != nil {
							return changed, fmt.Errorf("%w: rename %s: %w", ErrStorage, from, err)
						}
					}
				}
			case has[segmentName(b, cleanedLogFile)]:
				l.logger.Warn("rolling back a log cleaner swap interrupted by a crash", "segment", b)
			default:
				l.removeSegmentsBetween(names, b, r.end)
			}
		}
	}
	for _, n := range names {
		if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			l.removeFile(n) // (renamed ones are gone already: no harm)
			changed = true
		}
	}
	if has[swapMarkerName] {
		// Only once the swaps are done: a crash before this redoes them.
		if err := l.fs.SyncDir(l.dir); err != nil {
			return changed, fmt.Errorf("%w: sync %s: %w", ErrStorage, l.dir, err)
		}
		l.removeFile(swapMarkerName)
	}
	if changed {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return changed, fmt.Errorf("%w: sync %s: %w", ErrStorage, l.dir, err)
		}
	}
	return changed, nil
}

// removeSegmentsBetween removes the files of the segments with base in
// (from, to).
func (l *Log) removeSegmentsBetween(names []string, from, to int64) {
	for _, n := range names {
		for _, suf := range segmentSuffixes {
			if b, ok := parseSegmentName(n, suf); ok && b > from && b < to {
				l.removeFile(n)
			}
		}
	}
}
