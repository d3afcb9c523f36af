package log

import (
	"fmt"
	"time"
)

// DeleteRecordsBefore moves the log start offset up to offset (-1 = the
// high watermark), as the DeleteRecords API does. Whole segments below it
// are deleted at once; the new start offset is durable when it returns.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.RLock()
	err := l.usableLocked()
	hw, logStart := l.hwLocked(), l.mu.logStart
	l.mu.RUnlock()
	if err != nil {
		return -1, err
	}
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return logStart, fmt.Errorf("%w: cannot delete records before %d, high watermark is %d", ErrOffsetOutOfRange, offset, hw)
	}
	if offset <= logStart {
		return logStart, nil
	}
	if err := l.dirtyLocked(); err != nil {
		return logStart, err
	}
	if err := l.writeLogStartCheckpoint(offset); err != nil {
		return logStart, l.writeFailed("write log start offset", err)
	}
	l.mu.Lock()
	l.mu.logStart = offset
	c := append(epochCache(nil), l.mu.epochs...)
	l.mu.Unlock()
	if c.truncateFromStart(offset) {
		if err := l.writeEpochCheckpoint(c); err != nil {
			// Epochs below the log start are only unused entries.
			return offset, l.writeFailed("write leader epoch checkpoint", err)
		}
		l.mu.Lock()
		l.mu.epochs = c
		l.mu.Unlock()
	}
	if err := l.deleteSegmentsLocked(func(s, next *segment) bool { return next.base <= offset }, "log start offset"); err != nil {
		return offset, err
	}
	return offset, nil
}

// deleteSegmentsLocked deletes sealed segments from the oldest while pred
// holds. Called with appendMu held.
func (l *Log) deleteSegmentsLocked(pred func(s, next *segment) bool, reason string) error {
	// Holding rpMu until the removals are durable keeps a background flush
	// from moving the recovery point past segments that a crash could
	// bring back (not fsynced, and then trusted by recovery).
	l.rpMu.Lock()
	defer l.rpMu.Unlock()
	count := func() int {
		n := 0
		for n < len(l.mu.segs)-1 && pred(l.mu.segs[n], l.mu.segs[n+1]) {
			n++
		}
		return n
	}
	l.mu.RLock()
	n := count()
	l.mu.RUnlock()
	if n == 0 {
		return nil
	}
	if err := l.dirtyLocked(); err != nil {
		return err
	}
	// The list changes only with appendMu held (as here), so n holds; pred
	// may count state, so it is not called twice.
	l.mu.Lock()
	doomed := append([]*segment(nil), l.mu.segs[:n]...)
	l.mu.segs = append(l.mu.segs[:0:0], l.mu.segs[n:]...)
	if first := l.mu.segs[0].base; first > l.mu.logStart {
		l.mu.logStart = first
	}
	newStart := l.mu.logStart
	l.dropAbortedBelowLocked(l.mu.segs[0].base)
	l.mu.Unlock()
	for _, s := range doomed {
		// .log first: index files without a .log are removed on open
		l.removeFile(segmentName(s.base, logSuffix))
		l.removeFile(segmentName(s.base, indexSuffix))
		l.removeFile(segmentName(s.base, timeIndexSuffix))
		l.removeFile(segmentName(s.base, txnIndexSuffix))
		l.size.Add(-s.size.Load())
		l.logger.Info("deleted segment", "file", s.logPath, "reason", reason, "bytes", s.size.Load(), "log_start_offset", newStart)
		s.release() // files close when the last reader is done
	}
	names, err := l.fs.ReadDir(l.dir)
	if err == nil {
		var snaps []int64
		for _, name := range names {
			if b, ok := parseSegmentName(name, snapshotSuffix); ok && b < newStart {
				snaps = append(snaps, b)
			}
		}
		// keep the newest one below the start: it still seeds the state
		for i := 0; i+1 < len(snaps); i++ {
			l.removeFile(segmentName(snaps[i], snapshotSuffix))
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.fail("sync "+l.dir, err)
	}
	return nil
}

// applyRetention deletes old sealed segments by retention.ms and
// retention.bytes and expires idle producers.
func (l *Log) applyRetention(now time.Time) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.RLock()
	err := l.usableLocked()
	cfg := l.mu.cfg
	l.mu.RUnlock()
	if err != nil {
		return nil
	}
	nowMs := now.UnixMilli()
	l.producers.expire(nowMs - producerIDExpirationMs)
	if !cfg.CleanupDelete {
		// cleanup.policy=compact alone: the cleaner removes records, time
		// and size never do (Kafka's rule).
		return nil
	}
	if cfg.RetentionMs > 0 {
		expired := func(s, _ *segment) bool { return s.maxTs >= 0 && nowMs-s.maxTs > cfg.RetentionMs }
		if err := l.deleteSegmentsLocked(expired, "retention.ms"); err != nil {
			return err
		}
		// Like Kafka, an expired active segment is rolled so that it can be
		// deleted too; the log then is empty but keeps its offsets.
		l.mu.RLock()
		active := l.activeLocked()
		allExpired := len(l.mu.segs) == 1 && active.size.Load() > 0 && expired(active, nil)
		l.mu.RUnlock()
		if allExpired {
			if _, err := l.roll(nowMs); err != nil {
				return err
			}
			if err := l.deleteSegmentsLocked(expired, "retention.ms"); err != nil {
				return err
			}
		}
	}
	if cfg.RetentionBytes >= 0 {
		excess := l.size.Load() - cfg.RetentionBytes
		err := l.deleteSegmentsLocked(func(s, _ *segment) bool {
			if excess-s.size.Load() < 0 {
				return false
			}
			excess -= s.size.Load()
			return true
		}, "retention.bytes")
		if err != nil {
			return err
		}
	}
	return nil
}

// producerIDExpirationMs is Kafka's producer.id.expiration.ms default.
const producerIDExpirationMs = 24 * 3600 * 1000
