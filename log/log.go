package log

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Log is one partition's log. All methods are safe for concurrent use.
//
// Locking (acquire in this order, never the reverse):
//
//	appendMu -> syncMu -> segment.flushMu -> rpMu -> mu
//	gc.mu is taken alone.
//
// appendMu serialises everything that writes the log (Append, roll,
// TruncateTo, DeleteRecordsBefore, retention, Close) and guards the producer
// state. syncMu is held while the active segment is fsynced and its index
// tail is written, so a roll cannot swap the segment underneath. rpMu
// guards the recovery point; segment.flushMu serialises the fsync of a
// sealed segment (background or from Flush). mu guards
// the segment list and offsets and is only held for memory operations, never
// across disk I/O, so readers are never blocked by a slow disk.
type Log struct {
	topic     string
	partition int32
	dir       string
	fs        FS
	logger    *slog.Logger
	now       func() time.Time

	appendMu      sync.Mutex
	producers     producerState // guarded by appendMu
	unflushedMsgs int64         // guarded by appendMu
	// cleanMarker: the clean shutdown marker found at open is still there
	// (nothing changed since); guarded by appendMu. markerDoubt: recovery
	// ran despite the marker (set once at open).
	cleanMarker bool
	markerDoubt bool

	syncMu sync.Mutex

	// rpMu guards recoveryPoint, the base offset of the first segment that
	// may not be fsynced, as last written to its checkpoint file.
	rpMu          sync.Mutex
	recoveryPoint int64
	epochLimit    int32 // see segment.epochLimit; set once at open
	// bg counts background fsyncs of just-sealed segments. Add happens
	// only in roll (appendMu held), Wait only in Close (appendMu held).
	bg sync.WaitGroup
	// bgSem bounds background fsyncs across the manager's logs, so many
	// partitions rolling at once do not queue unbounded blocking syscalls.
	bgSem chan struct{}
	// startBG starts a background fsync (flushSealed); nil = a goroutine.
	// Crash tests set it (Manager.startBG) to run those fsyncs at points
	// they choose, so that a crash point names the same operation in
	// every run instead of whichever the scheduler put there.
	startBG func(func())

	mu struct {
		sync.RWMutex
		cfg      Config
		segs     []*segment // ascending base offsets; the last is active
		logStart int64
		leo      int64
		synced   int64 // offsets below are fsynced
		hw       int64
		hwManual bool
		epochs   epochCache
		closed   bool
		failed   error // sticky storage failure (fsyncgate: never retry)
		// txn: open transactions and the aborted index (txn.go)
	}
	txn txnState // guarded by mu, written with appendMu held

	// gc is the group commit state: offsets below gc.offset are durable.
	// One waiter at a time becomes the syncer; the others wait on cond and
	// are released together by its fsync.
	gc struct {
		mu      sync.Mutex
		cond    sync.Cond
		offset  int64
		syncing bool
		err     error
	}

	// The cleaner (cleaner.go): cleanMu serialises passes over this log;
	// cleanerCkpt is the cleaner checkpoint (-1 until read), guarded by
	// cleanMu; nextHorizonMs is the earliest delete horizon a pass set
	// (0 = none), which makes the log due for cleaning when it passes.
	holes         bool // segments may have offset holes (segment.holes); set at open
	cleanMu       sync.Mutex
	cleanerCkpt   int64
	truncations   atomic.Int64 // TruncateTo calls: a pass planned before one is dropped
	nextHorizonMs atomic.Int64

	size         atomic.Int64
	writeFailing atomic.Bool // a run of failed (undone) writes is going on
	lastFlushMs  atomic.Int64
	syncCount    atomic.Int64
	syncNanos    atomic.Int64
}

// Topic returns the log's topic.
func (l *Log) Topic() string { return l.topic }

// Partition returns the log's partition.
func (l *Log) Partition() int32 { return l.partition }

// Dir returns the partition directory.
func (l *Log) Dir() string { return l.dir }

// SyncStats returns how many fsyncs of segment data were done and their
// total duration, for metrics.
func (l *Log) SyncStats() (count int64, total time.Duration) {
	return l.syncCount.Load(), time.Duration(l.syncNanos.Load())
}

func (l *Log) activeLocked() *segment { return l.mu.segs[len(l.mu.segs)-1] }

func (l *Log) usableLocked() error {
	if l.mu.closed {
		return ErrClosed
	}
	if l.mu.failed != nil {
		return fmt.Errorf("%w: partition %s-%d failed earlier: %w", ErrStorage, l.topic, l.partition, l.mu.failed)
	}
	return nil
}

// undoWrite handles a failed write of the active segment at pos (a full
// disk: ENOSPC, possibly after a short write). Nothing of the write was
// acknowledged or indexed, so cutting the file back to pos restores the
// log exactly and the next append tries again: the partition resumes by
// itself when space returns. Only if the cut fails is the log failed.
// Called with appendMu held.
func (l *Log) undoWrite(s *segment, pos int64, werr error) error {
	if terr := s.log.Truncate(pos); terr != nil {
		return l.fail("write "+s.logPath, fmt.Errorf("%w; cutting the partial write back to %d: %w", werr, pos, terr))
	}
	return l.writeFailed("write "+s.logPath, werr)
}

// writeFailed reports a write that failed without changing the log (the
// files are as they were, or were put back): an ErrStorage error, not
// sticky. It is logged once per run of failures.
func (l *Log) writeFailed(op string, err error) error {
	werr := l.storageError(op, err)
	if !l.writeFailing.Swap(true) {
		l.logger.Error("write failed; the partition log is unchanged and the next write tries again", "op", op, "err", err)
	}
	return werr
}

// storageError wraps err as ErrStorage with the operation and partition. An
// err that is already one (a lower step's) is wrapped once more for the
// context, not a second ErrStorage: errors.Unwrap would give nil for an
// error built with two %w, and lose the cause.
func (l *Log) storageError(op string, err error) error {
	if errors.Is(err, ErrStorage) {
		return fmt.Errorf("%s %s-%d: %w", op, l.topic, l.partition, err)
	}
	return fmt.Errorf("%w: %s %s-%d: %w", ErrStorage, op, l.topic, l.partition, err)
}

// writeOK ends a run of failed writes.
func (l *Log) writeOK() {
	if l.writeFailing.Load() && l.writeFailing.Swap(false) {
		l.logger.Info("writes succeed again")
	}
}

// dirtyLocked removes the clean shutdown marker kept since open, durably,
// before the first change of the partition's files. Called with appendMu
// held by everything that writes.
func (l *Log) dirtyLocked() error {
	if !l.cleanMarker {
		return nil
	}
	if err := l.fs.Remove(l.filePath(cleanShutdownName)); err != nil && !isNotExist(err) {
		return l.writeFailed("remove clean shutdown marker", err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.writeFailed("sync "+l.dir, err)
	}
	l.cleanMarker = false
	return nil
}

// failure is the sticky write-path failure, or nil.
func (l *Log) failure() error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.mu.closed {
		return nil
	}
	return l.mu.failed
}

// fail makes the log unusable after an I/O error on the write path: after a
// failed write or fsync the page cache and the disk may disagree, so the
// only safe way on is a reopen, which recovers from what is on disk.
func (l *Log) fail(op string, err error) error {
	werr := l.storageError(op, err)
	l.mu.Lock()
	if l.mu.failed == nil {
		l.mu.failed = werr
		l.logger.Error("partition log failed; it must be reopened", "op", op, "err", err)
	}
	l.mu.Unlock()
	return werr
}

func (l *Log) alwaysSyncLocked() bool { return l.mu.cfg.FlushMessages == 1 }

func (l *Log) hwLocked() int64 {
	if l.mu.hwManual {
		return min(l.mu.hw, l.mu.leo)
	}
	if l.alwaysSyncLocked() {
		// In always-sync mode nothing is served before it is durable.
		return min(l.mu.synced, l.mu.leo)
	}
	return l.mu.leo
}

// LogStartOffset is the first offset that may be read.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.logStart
}

// LogEndOffset is the offset the next append gets.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.leo
}

// HighWatermark is the end of what readers may see. Until SetHighWatermark
// is called it follows the log end offset, except in always-sync mode
// (flush.messages=1) where it follows the fsynced end, so a consumer never
// sees a record a crash could still take back.
func (l *Log) HighWatermark() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.hwLocked()
}

// SetHighWatermark is the replication hook: from the first call on, the
// high watermark is what the caller sets (capped at the log end offset).
// A negative offset returns to following the log end offset.
func (l *Log) SetHighWatermark(offset int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if offset < 0 {
		l.mu.hwManual = false
		return
	}
	l.mu.hwManual = true
	l.mu.hw = min(offset, l.mu.leo)
}

// Size is the total size of the segment files in bytes.
func (l *Log) Size() int64 { return l.size.Load() }

// SetConfig applies changed topic configs; they take effect on the next
// append (and the next retention pass).
func (l *Log) SetConfig(cfg Config) {
	cfg = cfg.withDefaults()
	l.mu.Lock()
	l.mu.cfg = cfg
	l.mu.Unlock()
}

// Config returns the effective configuration (defaults applied).
func (l *Log) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.cfg
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch <= the
// requested one and the offset where the next epoch starts (the log end
// offset for the latest epoch); (-1, -1) if unknown.
func (l *Log) EndOffsetForEpoch(leaderEpoch int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.endOffsetFor(leaderEpoch, l.mu.leo)
}

// LatestEpoch is the newest leader epoch in the log, -1 if none.
func (l *Log) LatestEpoch() int32 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.latest()
}
