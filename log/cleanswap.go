package log

// The cleaner's on-disk discipline (Kafka's .cleaned -> .swap -> rename),
// and its recovery at open. For a group of segments [B, E) cleaned into
// one segment with base B:
//
//  1. B.log.cleaned, B.index.cleaned, B.timeindex.cleaned (and
//     B.txnindex.cleaned when the group has aborted transactions or B had
//     a .txnindex) are written and fsynced.
//  2. B.cleaner-swap (sharq's) records E, atomically (tmp, fsync, rename,
//     fsync directory); the directory fsync also makes step 1's names
//     durable.
//  3. Under the log's append lock: each .cleaned is renamed to .swap, the
//     .log last: B.log.swap existing is the commit point. Directory fsync.
//  4. The old segments (B, E) are removed, B.txnindex too if the group has
//     none now, and each .swap is renamed over B's file, the .log last;
//     B.cleaner-swap is removed; directory fsync. The segment list is
//     swapped in memory; readers of the old segments keep their open files
//     until they are done.
//
// Open (recoverCleanerSwaps), for each B.cleaner-swap: if B.log.swap exists
// the swap is completed (step 4); otherwise, if B.log.cleaned exists, it is
// rolled back (the .cleaned and .swap files go, the old segments are
// untouched); otherwise it had completed and only leftovers of (B, E) are
// removed. Any other .cleaned or .swap file is removed.

import (
	"fmt"
	"math"
	"os"
	"strings"
)

const (
	cleanedSuffix   = ".cleaned"
	swapSuffix      = ".swap"
	swapMarkSuffix  = ".cleaner-swap"
	cleanedLogFile  = logSuffix + cleanedSuffix
	swapLogFile     = logSuffix + swapSuffix
	segmentFileKind = 4
)

// segmentSuffixes are a segment's files, the .log last (renames of a swap
// go in this order so that the .log decides).
var segmentSuffixes = [segmentFileKind]string{indexSuffix, timeIndexSuffix, txnIndexSuffix, logSuffix}

// cleanedFiles are the .cleaned files of one group being written.
type cleanedFiles struct {
	l      *Log
	base   int64
	log    File
	hasTxn bool
}

func newCleanedFiles(l *Log, base int64) *cleanedFiles { return &cleanedFiles{l: l, base: base} }

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

// remove deletes the .cleaned files (a pass dropped before its commit).
func (f *cleanedFiles) remove() {
	f.closeAll()
	for _, suf := range segmentSuffixes {
		f.l.fs.Remove(f.path(suf))
	}
	f.l.fs.Remove(f.l.filePath(segmentName(f.base, swapMarkSuffix)))
}

// finish fsyncs the .log and writes the index files (steps 1 and 2).
func (f *cleanedFiles) finish(idx, tidx, txn []byte, group []*segment, end int64) error {
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
	return f.l.writeOffsetCheckpoint(segmentName(f.base, swapMarkSuffix), end)
}

// swapCleaned puts the cleaned group in place of group (steps 3 and 4).
func (l *Log) swapCleaned(f *cleanedFiles, group []*segment, end int64, out *segment) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.RLock()
	err := l.usableLocked()
	at := -1
	if err == nil {
		for i, s := range l.mu.segs {
			if s == group[0] {
				at = i
				break
			}
		}
		ok := at >= 0 && at+len(group) < len(l.mu.segs)
		for j := 0; ok && j < len(group); j++ {
			ok = l.mu.segs[at+j] == group[j]
		}
		if !ok || l.mu.segs[at+len(group)].base != end {
			err = errCleanAborted
		}
	}
	l.mu.RUnlock()
	if err != nil {
		f.remove()
		return err
	}
	if err := l.dirtyLocked(); err != nil {
		f.remove()
		return err
	}
	name := func(suffix string) string { return l.filePath(segmentName(f.base, suffix)) }
	for _, suf := range segmentSuffixes {
		if suf == txnIndexSuffix && !f.hasTxn {
			continue
		}
		if err := l.fs.Rename(name(suf)+cleanedSuffix, name(suf)+swapSuffix); err != nil {
			if suf == logSuffix {
				f.remove()
				return l.writeFailed("rename "+name(suf)+cleanedSuffix, err)
			}
			// Before the commit point: roll back.
			for _, s2 := range segmentSuffixes {
				l.fs.Remove(name(s2) + swapSuffix)
			}
			f.remove()
			return l.writeFailed("rename "+name(suf)+cleanedSuffix, err)
		}
	}
	// Committed: from here a failure leaves the swap to the next open.
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail("sync "+l.dir, err)
	}
	for _, s := range group[1:] {
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
		if err := l.fs.Rename(name(suf)+swapSuffix, name(suf)); err != nil {
			return l.fail("rename "+name(suf)+swapSuffix, err)
		}
	}
	l.removeFile(segmentName(f.base, swapMarkSuffix))
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail("sync "+l.dir, err)
	}
	s, _, _, err := l.openSegmentFiles(f.base)
	if err != nil {
		return l.fail("open cleaned segment", err)
	}
	s.sealed = true
	s.holes = true
	s.durable.Store(true)
	s.next = end
	s.epochLimit = math.MaxInt32
	s.idxEntries = len(out.idx) / offsetIndexEntry
	s.tidxEntries = len(out.tidx) / timeIndexEntry
	if n := len(out.tidx); n > 0 {
		ts, rel := timeEntry(out.tidx[n-timeIndexEntry:])
		s.maxTs, s.maxTsOffset = ts, f.base+int64(rel)
	}
	var oldSize int64
	for _, g := range group {
		oldSize += g.size.Load()
	}
	l.mu.Lock()
	segs := make([]*segment, 0, len(l.mu.segs)-len(group)+1)
	segs = append(segs, l.mu.segs[:at]...)
	segs = append(segs, s)
	segs = append(segs, l.mu.segs[at+len(group):]...)
	l.mu.segs = segs
	for i := range l.txn.aborted {
		if a := &l.txn.aborted[i]; a.segment >= f.base && a.segment < end {
			a.segment = f.base
		}
	}
	l.mu.Unlock()
	l.size.Add(s.size.Load() - oldSize)
	for _, g := range group {
		g.release() // the list's reference; open readers keep theirs
	}
	return nil
}

// recoverCleanerSwaps finishes or rolls back a cleaner swap interrupted by
// a crash (see the file comment). It returns whether it changed anything.
func (l *Log) recoverCleanerSwaps(names []string) (bool, error) {
	has := make(map[string]bool, len(names))
	for _, n := range names {
		has[n] = true
	}
	changed := false
	for _, n := range names {
		b, ok := parseSegmentName(n, swapMarkSuffix)
		if !ok {
			continue
		}
		changed = true
		end, err := l.readOffsetCheckpoint(n)
		if err != nil {
			return changed, fmt.Errorf("%w: cleaner swap marker %s: %w", ErrStorage, n, err)
		}
		name := func(base int64, suffix string) string { return segmentName(base, suffix) }
		switch {
		case has[name(b, swapLogFile)]:
			l.logger.Warn("completing a log cleaner swap interrupted by a crash", "segment", b, "end", end)
			l.removeSegmentsBetween(names, b, end)
			// A B.txnindex without B.txnindex.swap is the new one: a group
			// whose B had one always writes a (maybe empty) replacement.
			for _, suf := range segmentSuffixes {
				if has[name(b, suf+swapSuffix)] {
					if err := l.fs.Rename(l.filePath(name(b, suf+swapSuffix)), l.filePath(name(b, suf))); err != nil {
						return changed, fmt.Errorf("%w: rename %s: %w", ErrStorage, name(b, suf+swapSuffix), err)
					}
				}
			}
		case has[name(b, cleanedLogFile)]:
			l.logger.Warn("rolling back a log cleaner swap interrupted by a crash", "segment", b)
			for _, suf := range segmentSuffixes {
				l.removeFile(name(b, suf+swapSuffix))
			}
		default:
			l.removeSegmentsBetween(names, b, end)
		}
		l.removeFile(n)
	}
	for _, n := range names {
		if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			l.removeFile(n)
			changed = true
		}
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
