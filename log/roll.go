package log

import (
	"errors"
	"fmt"
)

// roll seals the active segment and starts a new one at the log end.
// The old segment's indexes are completed and its producer snapshot is
// written; the new .log is created and the directory fsynced before
// anything is acknowledged from it. The old segment's data is fsynced
// right away in always-sync mode (it is nearly synced anyway) and in the
// background otherwise, as Kafka does, so a roll never stalls producers
// behind a segment-sized fsync. Until that background fsync completes the
// recovery point stays at the old segment, so a crash makes recovery scan
// it in full. Called with appendMu held.
func (l *Log) roll(nowMs int64) (*segment, error) {
	if err := l.dirtyLocked(); err != nil {
		return nil, err
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	old := l.activeLocked()
	if old.maxTs >= 0 && old.maxTs > old.lastTimeIndexTs() {
		// Kafka's onBecomeInactiveSegment: the last time index entry is the
		// segment's largest timestamp, which retention and reopen read back.
		old.tidx = appendTimeEntry(old.tidx, old.maxTs, old.rel(old.maxTsOffset))
	}
	next := old.next
	idx, tidx := old.idx, old.tidx
	syncNow := l.alwaysSyncLocked()
	l.mu.Unlock()

	if syncNow {
		if err := l.timedSync(old.log); err != nil {
			return nil, l.fail("fsync "+old.logPath, err)
		}
		// A roll that fails from here on changes nothing that matters: the
		// old segment stays active, and the next append rolls again.
		if err := writeIndexFiles(old, idx, tidx); err != nil {
			return nil, l.writeFailed("write index of "+old.logPath, err)
		}
	}
	if err := l.writeFileAtomic(segmentName(next, snapshotSuffix), l.producers.encode()); err != nil {
		return nil, l.writeFailed("write producer snapshot", err)
	}
	s, err := l.createSegment(next)
	if err != nil {
		// A segment file left behind would start a segment that the old
		// one does not end at once it grows on.
		l.removeFile(segmentName(next, logSuffix))
		l.removeFile(segmentName(next, indexSuffix))
		l.removeFile(segmentName(next, timeIndexSuffix))
		return nil, l.writeFailed("roll", err)
	}
	old.durable.Store(syncNow)
	l.mu.Lock()
	old.sealed = true
	old.idxEntries, old.tidxEntries = len(idx)/offsetIndexEntry, len(tidx)/timeIndexEntry
	if syncNow {
		old.memIndex = false
		old.idx, old.tidx = nil, nil
	}
	l.mu.segs = append(l.mu.segs, s)
	l.mu.Unlock()
	if syncNow {
		// Segments sealed before flush.messages became 1 may still wait
		// for their background fsync: markDurable would declare them
		// durable (and in always-sync mode the high watermark past them)
		// to a Flush waiting meanwhile.
		if err := l.syncPendingSealed(); err != nil && l.failure() != nil {
			return nil, err
		}
		l.markDurable(next)
		// A recovery point that cannot be written stays lower (logged):
		// recovery scans more, nothing is lost.
		_ = l.advanceRecoveryPoint()
	} else {
		old.acquire()
		l.bg.Add(1)
		if l.startBG != nil {
			l.startBG(func() { l.flushSealed(old) })
		} else {
			go l.flushSealed(old)
		}
	}
	l.pruneSnapshots(next)
	l.logger.Debug("rolled segment", "base_offset", next)
	return s, nil
}

// flushSealed is the background fsync of a segment sealed by roll.
func (l *Log) flushSealed(s *segment) {
	defer l.bg.Done()
	defer s.release()
	if l.bgSem != nil {
		l.bgSem <- struct{}{}
		defer func() { <-l.bgSem }()
	}
	if fsyncFailed, err := l.syncSealed(s); err != nil {
		if fsyncFailed {
			l.fail("fsync sealed segment", err)
		} else if !errors.Is(err, ErrClosed) {
			// the next sync of the log tries again (syncPendingSealed)
			l.writeFailed("write index of sealed segment", err)
		}
		return
	}
	if err := l.advanceRecoveryPoint(); err != nil && !errors.Is(err, ErrClosed) {
		l.logger.Error("cannot write recovery point", "err", err)
	}
}

// syncSealed fsyncs a sealed segment and then writes and fsyncs its
// index files, so that index entries on disk only ever point at durable
// data. Until then readers use the in-memory index.
//
// fsyncFailed tells a failed fsync of the data (the log must fail) from a
// failed index write (the segment stays in memory and is tried again).
func (l *Log) syncSealed(s *segment) (fsyncFailed bool, err error) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	if s.durable.Load() {
		return false, nil
	}
	if err := l.timedSync(s.log); err != nil {
		return true, fmt.Errorf("%w: fsync %s: %w", ErrStorage, s.logPath, err)
	}
	l.mu.RLock()
	idx, tidx, mem := s.idx, s.tidx, s.memIndex
	l.mu.RUnlock()
	if mem {
		if err := writeIndexFiles(s, idx, tidx); err != nil {
			return false, err
		}
		l.mu.Lock()
		s.memIndex = false
		s.idx, s.tidx = nil, nil
		l.mu.Unlock()
	}
	s.durable.Store(true)
	return false, nil
}

// writeIndexFiles makes s's index files hold exactly idx and tidx, durably.
func writeIndexFiles(s *segment, idx, tidx []byte) error {
	if op, err := s.putIndexFiles(idx, tidx, s.idxWritten, s.tidxWritten, true); err != nil {
		return indexFileError(s, op, err)
	}
	return nil
}

// pruneSnapshots keeps the two newest producer snapshots at or below keep
// (the older one serves a TruncateTo into the previous segment).
func (l *Log) pruneSnapshots(keep int64) {
	names, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return
	}
	var offs []int64
	for _, n := range names {
		if b, ok := parseSegmentName(n, snapshotSuffix); ok && b <= keep {
			offs = append(offs, b)
		}
	}
	for i := 0; i+2 < len(offs); i++ {
		l.removeFile(segmentName(offs[i], snapshotSuffix))
	}
}
