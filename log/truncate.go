package log

import "fmt"

// TruncateTo removes everything at and after offset (replication and
// recovery). Truncation happens at a batch boundary: the batch containing
// offset goes too, so the new log end offset may be below offset.
func (l *Log) TruncateTo(offset int64) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	// A background fsync still running for a segment that becomes active
	// again here would mark it durable after new unsynced appends.
	l.bg.Wait()
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.RLock()
	if err := l.usableLocked(); err != nil {
		l.mu.RUnlock()
		return err
	}
	leo := l.mu.leo
	first := l.mu.segs[0].base
	l.mu.RUnlock()
	if offset >= leo {
		return nil
	}
	if offset < 0 {
		return fmt.Errorf("%w: cannot truncate to %d", ErrOffsetOutOfRange, offset)
	}
	if err := l.dirtyLocked(); err != nil {
		return err
	}
	l.truncations.Add(1)
	if offset <= first {
		return l.truncateFullyLocked(offset)
	}
	l.mu.Lock()
	i := l.segmentForLocked(offset)
	s := l.mu.segs[i]
	doomed := append([]*segment(nil), l.mu.segs[i+1:]...)
	l.mu.Unlock()

	// s becomes the active segment again, cut before the batch holding
	// offset, its indexes in memory.
	idx, tidx, err := l.indexesOf(s)
	if err != nil {
		return err
	}
	cut, newEnd, err := l.batchHolding(s, offset)
	if err != nil {
		return err
	}
	idx, tidx = trimIndexes(s, idx, tidx, cut, newEnd)
	if err := l.cutSegmentFiles(s, doomed, cut, idx, tidx); err != nil {
		return err
	}
	tail, err := scanTail(s, idx, tidx, cut)
	if err != nil {
		return l.fail("scan "+s.logPath, err)
	}
	l.mu.Lock()
	s.sealed = false
	s.memIndex = true
	s.idx, s.tidx = idx, tidx
	s.idxWritten, s.tidxWritten = len(idx), len(tidx)
	s.bytesSinceIndex = tail.bytesSince
	s.maxTs, s.maxTsOffset = tail.maxTs, tail.maxTsOffset
	s.next = newEnd
	oldSize := s.size.Load()
	s.size.Store(cut)
	l.mu.segs = l.mu.segs[:i+1]
	l.mu.leo = newEnd
	l.mu.synced = min(l.mu.synced, newEnd)
	if l.mu.hwManual {
		l.mu.hw = min(l.mu.hw, newEnd)
	}
	c := append(epochCache(nil), l.mu.epochs...)
	l.mu.Unlock()
	l.gc.mu.Lock()
	l.gc.offset = min(l.gc.offset, newEnd)
	l.gc.mu.Unlock()
	l.size.Add(cut - oldSize)
	for _, d := range doomed {
		l.size.Add(-d.size.Load())
		d.release()
	}
	l.logger.Info("truncated log", "offset", offset, "log_end_offset", newEnd)
	// what is left is durable when TruncateTo returns
	if err := l.syncPendingSealed(); err != nil {
		return err
	}
	return l.afterTruncateLocked(newEnd, c)
}

// indexesOf is a copy of s's index entries, read from its files when they
// are not in memory.
func (l *Log) indexesOf(s *segment) (idx, tidx []byte, err error) {
	if s.memIndex {
		return append([]byte(nil), s.idx...), append([]byte(nil), s.tidx...), nil
	}
	if idx, err = readWhole(s.index); err == nil {
		tidx, err = readWhole(s.tindex)
	}
	if err != nil {
		return nil, nil, l.fail("read index of "+s.logPath, err)
	}
	return idx, tidx, nil
}

// batchHolding finds the batch of s that holds offset: where it starts
// (cut) and its base offset (newEnd), or the segment's end when none does.
func (l *Log) batchHolding(s *segment, offset int64) (cut, newEnd int64, _ error) {
	cut, newEnd = -1, -1
	res, err := scanSegment(s, 0, s.size.Load(), s.base, false, func(h *batchHeader, pos int64) {
		if cut < 0 && h.LastOffset() >= offset {
			cut, newEnd = pos, h.BaseOffset
		}
	})
	if err != nil {
		return 0, 0, l.fail("scan "+s.logPath, err)
	}
	if cut < 0 {
		cut, newEnd = res.end, res.next
	}
	return cut, newEnd, nil
}

// trimIndexes drops the index entries of s at or past the cut.
func trimIndexes(s *segment, idx, tidx []byte, cut, newEnd int64) ([]byte, []byte) {
	for len(idx) > 0 {
		if _, p := offsetEntry(idx[len(idx)-offsetIndexEntry:]); int64(p) < cut {
			break
		}
		idx = idx[:len(idx)-offsetIndexEntry]
	}
	for len(tidx) > 0 {
		if _, r := timeEntry(tidx[len(tidx)-timeIndexEntry:]); s.base+int64(r) < newEnd {
			break
		}
		tidx = tidx[:len(tidx)-timeIndexEntry]
	}
	return idx, tidx
}

// cutSegmentFiles makes the truncation durable: the recovery point moves
// down to s, the later segments go, then s's data is cut at cut and its
// index files hold exactly idx and tidx.
func (l *Log) cutSegmentFiles(s *segment, doomed []*segment, cut int64, idx, tidx []byte) error {
	if err := l.lowerRecoveryPoint(s.base); err != nil {
		return err
	}
	// Later segments go first, durably: if s were cut while they still
	// existed, a crash could leave a sealed segment that ends before its
	// successor starts.
	removeNewestFirst(l, doomed)
	if len(doomed) > 0 {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.fail("sync "+l.dir, err)
		}
	}
	if err := s.log.Truncate(cut); err != nil {
		return l.fail("truncate "+s.logPath, err)
	}
	if err := s.log.Sync(); err != nil {
		return l.fail("fsync "+s.logPath, err)
	}
	// The in-memory index of an active segment may be ahead of its file,
	// so the kept entries are written out, not just cut.
	if op, err := s.putIndexFiles(idx, tidx, 0, 0, true); err != nil {
		return l.fail(op+" index of "+s.logPath, err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail("sync "+l.dir, err)
	}
	return nil
}

// activeTail is what an active segment tracks past its last index
// entries, rebuilt after a truncation.
type activeTail struct {
	maxTs, maxTsOffset int64
	bytesSince         int64 // bytes since the last offset index entry
}

// scanTail rebuilds activeTail for s cut at cut: the largest timestamp
// from the last time index entry and the batches after the last offset
// index entry.
func scanTail(s *segment, idx, tidx []byte, cut int64) (activeTail, error) {
	t := activeTail{maxTs: -1, maxTsOffset: -1}
	if len(tidx) > 0 {
		ts, r := timeEntry(tidx[len(tidx)-timeIndexEntry:])
		t.maxTs, t.maxTsOffset = ts, s.base+int64(r)
	}
	lastIdxPos := int64(-1)
	if len(idx) > 0 {
		_, p := offsetEntry(idx[len(idx)-offsetIndexEntry:])
		lastIdxPos = int64(p)
	}
	_, err := scanSegment(s, max(lastIdxPos, 0), cut, -1, false, func(h *batchHeader, pos int64) {
		if h.MaxTimestamp > t.maxTs {
			t.maxTs, t.maxTsOffset = h.MaxTimestamp, h.LastOffset()
		}
		if pos == lastIdxPos {
			t.bytesSince = 0
		}
		t.bytesSince += int64(h.Size)
	})
	if err != nil {
		return t, err
	}
	if lastIdxPos < 0 {
		t.bytesSince = cut
	}
	return t, nil
}

// afterTruncateLocked fixes the epoch cache and producer state after the
// log end moved back to end.
func (l *Log) afterTruncateLocked(end int64, c epochCache) error {
	if c.truncateFromEnd(end) {
		if err := l.writeEpochCheckpoint(c); err != nil {
			return l.fail("write leader epoch checkpoint", err)
		}
		l.mu.Lock()
		l.mu.epochs = c
		l.mu.Unlock()
	}
	names, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return l.fail("list "+l.dir, err)
	}
	var snaps []int64
	removed := false
	for _, n := range names {
		if b, ok := parseSegmentName(n, snapshotSuffix); ok {
			if b > end {
				l.removeFile(n)
				removed = true
				continue
			}
			snaps = append(snaps, b)
		}
	}
	if removed {
		// A snapshot from the discarded timeline must not come back after
		// a crash once the log has grown past its offset again.
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.fail("sync "+l.dir, err)
		}
	}
	if _, err = l.rebuildProducerState(snaps, end); err != nil {
		return l.fail("rebuild producer state", err)
	}
	return nil
}

// truncateFullyLocked deletes every segment and restarts the log, empty,
// at offset (Kafka's truncateFullyAndStartAt).
func (l *Log) truncateFullyLocked(offset int64) error {
	l.mu.Lock()
	doomed := append([]*segment(nil), l.mu.segs...)
	l.mu.Unlock()
	removeNewestFirst(l, doomed)
	if err := l.lowerRecoveryPoint(offset); err != nil {
		return err
	}
	s, err := l.createSegment(offset)
	if err != nil {
		return l.fail("create segment", err)
	}
	if err := l.writeLogStartCheckpoint(offset); err != nil {
		return l.fail("write log start offset", err)
	}
	l.mu.Lock()
	l.mu.segs = []*segment{s}
	l.mu.leo, l.mu.logStart, l.mu.synced = offset, offset, offset
	if l.mu.hwManual {
		l.mu.hw = min(l.mu.hw, offset)
	}
	l.mu.Unlock()
	l.gc.mu.Lock()
	l.gc.offset = offset
	l.gc.mu.Unlock()
	for _, d := range doomed {
		l.size.Add(-d.size.Load())
		d.release()
	}
	return l.afterTruncateLocked(offset, nil)
}

// removeNewestFirst removes segment files from the newest: if a crash
// persists only some of the removals, what is left is still a prefix of
// the log without holes.
func removeNewestFirst(l *Log, doomed []*segment) {
	for i := len(doomed) - 1; i >= 0; i-- {
		d := doomed[i]
		l.removeFile(segmentName(d.base, logSuffix))
		l.removeFile(segmentName(d.base, indexSuffix))
		l.removeFile(segmentName(d.base, timeIndexSuffix))
		l.removeFile(segmentName(d.base, txnIndexSuffix))
	}
}
