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
	var err error
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

	// Load s's indexes into memory (it becomes the active segment again).
	var idx, tidx []byte
	if !s.memIndex {
		if idx, err = readWhole(s.index); err == nil {
			tidx, err = readWhole(s.tindex)
		}
		if err != nil {
			return l.fail("read index of "+s.logPath, err)
		}
	} else {
		idx, tidx = append([]byte(nil), s.idx...), append([]byte(nil), s.tidx...)
	}
	// Find the batch that contains offset.
	cut, newEnd := int64(-1), int64(-1)
	res, err := scanSegment(s, 0, s.size.Load(), s.base, false, func(h *batchHeader, pos int64) {
		if cut < 0 && h.LastOffset() >= offset {
			cut, newEnd = pos, h.BaseOffset
		}
	})
	if err != nil {
		return l.fail("scan "+s.logPath, err)
	}
	if cut < 0 {
		cut, newEnd = res.end, res.next
	}
	// Rebuild the in-memory state of s for [0, cut).
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
	for _, x := range []struct {
		f    File
		data []byte
	}{{s.index, idx}, {s.tindex, tidx}} {
		// The in-memory index of an active segment may be ahead of its
		// file, so the kept entries are written out, not just cut.
		if len(x.data) > 0 {
			if _, err := x.f.WriteAt(x.data, 0); err != nil {
				return l.fail("write index of "+s.logPath, err)
			}
		}
		if err := x.f.Truncate(int64(len(x.data))); err != nil {
			return l.fail("truncate index of "+s.logPath, err)
		}
		if err := x.f.Sync(); err != nil {
			return l.fail("fsync index of "+s.logPath, err)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail("sync "+l.dir, err)
	}
	maxTs, maxTsOffset := int64(-1), int64(-1)
	if len(tidx) > 0 {
		t, r := timeEntry(tidx[len(tidx)-timeIndexEntry:])
		maxTs, maxTsOffset = t, s.base+int64(r)
	}
	// batches after the last time index entry
	var bytesSince int64
	lastIdxPos := int64(-1)
	if len(idx) > 0 {
		_, p := offsetEntry(idx[len(idx)-offsetIndexEntry:])
		lastIdxPos = int64(p)
	}
	_, err = scanSegment(s, max(lastIdxPos, 0), cut, -1, false, func(h *batchHeader, pos int64) {
		if h.MaxTimestamp > maxTs {
			maxTs, maxTsOffset = h.MaxTimestamp, h.LastOffset()
		}
		if pos == lastIdxPos {
			bytesSince = 0
		}
		bytesSince += int64(h.Size)
	})
	if err != nil {
		return l.fail("scan "+s.logPath, err)
	}
	if lastIdxPos < 0 {
		bytesSince = cut
	}
	l.mu.Lock()
	s.sealed = false
	s.memIndex = true
	s.idx, s.tidx = idx, tidx
	s.idxWritten, s.tidxWritten = len(idx), len(tidx)
	s.bytesSinceIndex = bytesSince
	s.maxTs, s.maxTsOffset = maxTs, maxTsOffset
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
