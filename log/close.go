package log

import "fmt"

// Close flushes the log and leaves the clean shutdown marker: the active
// segment's indexes are written completely and the producer state is
// snapshotted at the log end, so the next open needs no recovery scan.
func (l *Log) Close() error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.bg.Wait()
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return nil
	}
	failed := l.mu.failed
	s := l.activeLocked()
	idx, tidx := s.idx, s.tidx
	leo := l.mu.leo
	l.mu.Unlock()
	err := failed
	if err == nil && !l.cleanMarker {
		// (with the marker still there nothing changed: nothing to write)
		err = l.closeCleanly(s, idx, tidx, leo)
	}
	l.mu.Lock()
	l.mu.closed = true
	segs := l.mu.segs
	l.mu.segs = nil
	l.mu.Unlock()
	l.gc.mu.Lock()
	if l.gc.err == nil {
		l.gc.err = ErrClosed
	}
	l.gc.cond.Broadcast()
	l.gc.mu.Unlock()
	for _, s := range segs {
		s.release()
	}
	// A log that failed earlier is closed without the clean shutdown
	// marker; say so, the data after the failure may not be durable.
	return err
}

func (l *Log) closeCleanly(s *segment, idx, tidx []byte, leo int64) error {
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("%w: fsync %s: %w", ErrStorage, s.logPath, err)
	}
	if op, err := s.putIndexFiles(idx, tidx, s.idxWritten, s.tidxWritten, false); err != nil {
		return indexFileError(s, op, err)
	}
	if err := l.writeFileAtomic(segmentName(leo, snapshotSuffix), l.producers.encode()); err != nil {
		return err
	}
	if err := l.writeFileAtomic(cleanShutdownName, cleanShutdownContent); err != nil {
		return err
	}
	return nil
}
