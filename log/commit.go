package log

import "time"

// indexWriteChunk is how many bytes of new offset index entries are
// gathered before they are written to the index file.
const indexWriteChunk = 4096

// slowSyncThreshold is when an fsync is worth a warning (etcd uses 1s).
const slowSyncThreshold = time.Second

// waitDurable returns once offsets below end are fsynced. The first caller
// to find no fsync running becomes the syncer; while it syncs, later
// appends queue up and are all covered by the next fsync (group commit).
func (l *Log) waitDurable(end int64) error {
	g := &l.gc
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.offset < end {
		if g.err != nil {
			return g.err
		}
		if g.syncing {
			g.cond.Wait()
			continue
		}
		g.syncing = true
		g.mu.Unlock()
		synced, err := l.syncActive()
		g.mu.Lock()
		g.syncing = false
		g.cond.Broadcast()
		if err != nil {
			// The waiters woken here try themselves: a failed log fails
			// them at once, a write that failed without harm is retried.
			return err
		}
		if synced > g.offset {
			g.offset = synced
		}
	}
	return nil
}

// markDurable records that offsets below end are fsynced.
func (l *Log) markDurable(end int64) {
	l.mu.Lock()
	if end > l.mu.synced {
		l.mu.synced = end
	}
	l.mu.Unlock()
	l.gc.mu.Lock()
	if end > l.gc.offset {
		l.gc.offset = end
	}
	l.gc.cond.Broadcast()
	l.gc.mu.Unlock()
	l.lastFlushMs.Store(l.now().UnixMilli())
}

// syncActive fsyncs the active segment and then writes the index entries
// that point into the now durable data. It returns the durable end offset.
func (l *Log) syncActive() (int64, error) {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.RLock()
	err := l.usableLocked()
	var s *segment
	var target int64
	var idx, tidx []byte
	if err == nil {
		s = l.activeLocked()
		target = s.next
		// Index entries go to the files a page at a time: each write
		// dirties another file that the next fsync (in ext4's ordered mode)
		// must flush too. Recovery scans at most this far past the last
		// entry on disk. Appends only ever add entries, so these prefixes
		// are immutable.
		if len(s.idx)-s.idxWritten >= indexWriteChunk {
			idx, tidx = s.idx[s.idxWritten:], s.tidx[s.tidxWritten:]
		}
	}
	l.mu.RUnlock()
	if err != nil {
		return 0, err
	}
	// Segments sealed since the last sync may still wait for their
	// background fsync; durability of target needs them too.
	// A sealed segment whose index files could not be written was still
	// fsynced first: only a failed log stops this sync.
	if err := l.syncPendingSealed(); err != nil && l.failure() != nil {
		return 0, err
	}
	if err := l.timedSync(s.log); err != nil {
		return 0, l.fail("fsync "+s.logPath, err)
	}
	// The data is durable now. Index entries that cannot be written (a
	// full disk) stay in memory and are written by a later sync: recovery
	// checks the files' entries anyway and scans past the last one.
	if len(idx) > 0 {
		if _, err := s.index.WriteAt(idx, int64(s.idxWritten)); err != nil {
			l.writeFailed("write "+s.path(indexSuffix), err)
			idx, tidx = nil, nil
		} else {
			s.idxWritten += len(idx)
		}
	}
	if len(tidx) > 0 {
		if _, err := s.tindex.WriteAt(tidx, int64(s.tidxWritten)); err != nil {
			l.writeFailed("write "+s.path(timeIndexSuffix), err)
		} else {
			s.tidxWritten += len(tidx)
		}
	}
	l.markDurable(target)
	return target, nil
}

func (l *Log) timedSync(f File) error {
	start := time.Now()
	err := f.Sync()
	d := time.Since(start)
	l.syncCount.Add(1)
	l.syncNanos.Add(int64(d))
	if d > slowSyncThreshold {
		l.logger.Warn("slow fsync", "took", d)
	}
	return err
}

// Flush fsyncs everything appended so far.
func (l *Log) Flush() error {
	l.mu.RLock()
	end := l.mu.leo
	err := l.usableLocked()
	l.mu.RUnlock()
	if err != nil {
		return err
	}
	return l.waitDurable(end)
}

// dirty reports whether appended data is not yet fsynced.
func (l *Log) dirty() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.synced < l.mu.leo && !l.mu.closed && l.mu.failed == nil
}

// advanceRecoveryPoint moves the recovery point checkpoint up to the first
// segment that is not yet durable.
func (l *Log) advanceRecoveryPoint() error {
	l.rpMu.Lock()
	defer l.rpMu.Unlock()
	l.mu.RLock()
	if err := l.usableLocked(); err != nil || len(l.mu.segs) == 0 {
		l.mu.RUnlock()
		return err
	}
	rp := l.activeLocked().base
	for _, s := range l.mu.segs[:len(l.mu.segs)-1] {
		if !s.durable.Load() {
			rp = s.base
			break
		}
	}
	l.mu.RUnlock()
	if rp <= l.recoveryPoint {
		return nil
	}
	if err := l.writeOffsetCheckpoint(recoveryPointName, rp); err != nil {
		// The old checkpoint stays: recovery would scan more, no harm.
		return l.writeFailed("write recovery point", err)
	}
	l.recoveryPoint = rp
	return nil
}

// lowerRecoveryPoint moves the recovery point down to base (TruncateTo made
// that segment active again, so it will be rewritten without fsync).
func (l *Log) lowerRecoveryPoint(base int64) error {
	l.rpMu.Lock()
	defer l.rpMu.Unlock()
	if base >= l.recoveryPoint {
		return nil
	}
	if err := l.writeOffsetCheckpoint(recoveryPointName, base); err != nil {
		return l.fail("write recovery point", err)
	}
	l.recoveryPoint = base
	return nil
}

// syncPendingSealed fsyncs the sealed segments whose background fsync has
// not completed yet.
func (l *Log) syncPendingSealed() error {
	l.mu.RLock()
	var pending []*segment
	if len(l.mu.segs) > 0 {
		for _, p := range l.mu.segs[:len(l.mu.segs)-1] {
			if !p.durable.Load() {
				p.acquire()
				pending = append(pending, p)
			}
		}
	}
	l.mu.RUnlock()
	var err error
	fsyncFailed := false
	for _, p := range pending {
		// A failed index write (a full disk) does not stop the fsyncs of
		// the later segments: the caller goes on to declare offsets up to
		// the active segment durable when the log did not fail.
		if !fsyncFailed {
			f, e := l.syncSealed(p)
			if err == nil || f {
				fsyncFailed, err = f, e
			}
		}
		p.release()
	}
	switch {
	case err == nil:
		return nil
	case fsyncFailed:
		return l.fail("fsync sealed segment", err)
	default:
		return l.writeFailed("write index of sealed segment", err)
	}
}
