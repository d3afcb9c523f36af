package log

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// indexWriteChunk is how many bytes of new offset index entries are
// gathered before they are written to the index file.
const indexWriteChunk = 4096

// slowSyncThreshold is when an fsync is worth a warning (etcd uses 1s).
const slowSyncThreshold = time.Second

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
	if errors.Is(err, ErrStorage) {
		err = errors.Unwrap(err)
	}
	if !l.writeFailing.Swap(true) {
		l.logger.Error("write failed; the partition log is unchanged and the next write tries again", "op", op, "err", err)
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
	if errors.Is(err, ErrStorage) {
		err = errors.Unwrap(err)
	}
	werr := fmt.Errorf("%w: %s %s-%d: %w", ErrStorage, op, l.topic, l.partition, err)
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

// Append validates one v2 RecordBatch as produced, assigns its offsets and
// leader epoch in place and writes it. See api.go for the contract. It
// keeps nothing of batch past the call, so the broker passes a Produce
// request's bytes as they are.
func (l *Log) Append(batch []byte, leaderEpoch int32) (AppendResult, error) {
	return l.appendBatch(batch, leaderEpoch, false)
}

// appendBatch is Append; marker is set for the control batches AppendMarker
// builds (no sequence, allowed control bit).
func (l *Log) appendBatch(batch []byte, leaderEpoch int32, marker bool) (AppendResult, error) {
	res := AppendResult{BaseOffset: -1, LastOffset: -1, LogAppendTime: -1}
	l.appendMu.Lock()
	l.mu.RLock()
	if err := l.usableLocked(); err != nil {
		l.mu.RUnlock()
		l.appendMu.Unlock()
		return res, err
	}
	cfg := l.mu.cfg
	logStart := l.mu.logStart
	latestEpoch := l.mu.epochs.latest()
	active := l.activeLocked()
	l.mu.RUnlock()
	nowMs := l.now().UnixMilli()
	lim := validateLimits{
		maxBytes:        cfg.MaxMessageBytes,
		timestampType:   cfg.TimestampType,
		beforeMaxMs:     cfg.TimestampBeforeMaxMs,
		afterMaxMs:      cfg.TimestampAfterMaxMs,
		nowMs:           nowMs,
		requireSequence: !marker,
		allowControl:    marker,
		requireKeys:     cfg.CleanupCompact,
	}
	h, maxRecTs, err := validateBatch(batch, &lim)
	if err != nil {
		l.appendMu.Unlock()
		if err == errMissingKey {
			err = missingKeyError(l.topic, l.partition)
		}
		return res, err
	}
	if marker {
		if err := l.producers.checkMarker(&h); err != nil {
			l.appendMu.Unlock()
			return res, err
		}
	} else if h.ProducerID >= 0 {
		if orig, dup := l.producers.duplicate(&h); dup {
			l.appendMu.Unlock()
			res.BaseOffset = orig.firstOffset
			res.LastOffset = orig.firstOffset + int64(orig.lastOffsetDelta)
			res.LogStartOffset = logStart
			res.Duplicate = true
			return res, nil
		}
		if err := l.producers.check(&h); err != nil {
			l.appendMu.Unlock()
			return res, err
		}
	}
	if cfg.TimestampType == LogAppendTime {
		setMaxTimestamp(batch, LogAppendTime, nowMs)
		h.MaxTimestamp = nowMs
		res.LogAppendTime = nowMs
	} else if h.Attributes&attrTimestampType != 0 || maxRecTs != h.MaxTimestamp {
		setMaxTimestamp(batch, CreateTime, maxRecTs)
		h.MaxTimestamp = maxRecTs
	}

	if l.cleanMarker {
		if err := l.dirtyLocked(); err != nil {
			l.appendMu.Unlock()
			return res, err
		}
	}
	if l.shouldRoll(active, &h, &cfg, nowMs) {
		if active, err = l.roll(nowMs); err != nil {
			l.appendMu.Unlock()
			return res, err
		}
	}
	base := active.next
	h.BaseOffset = base
	setBaseOffsetAndEpoch(batch, base, leaderEpoch)
	if leaderEpoch >= 0 && leaderEpoch > latestEpoch {
		// Rare (once per leader change), so it is written synchronously:
		// the cache must never miss an epoch whose data is on disk.
		l.mu.Lock()
		c := append(epochCache(nil), l.mu.epochs...)
		l.mu.Unlock()
		c.assign(leaderEpoch, base)
		if err := l.writeEpochCheckpoint(c); err != nil {
			// The old checkpoint is intact (atomic replace): nothing to
			// undo, the next append of this epoch tries again.
			l.appendMu.Unlock()
			return res, l.writeFailed("write leader epoch checkpoint", err)
		}
		l.mu.Lock()
		l.mu.epochs = c
		l.mu.Unlock()
	}
	pos := active.size.Load()
	if _, err := active.log.WriteAt(batch, pos); err != nil {
		err = l.undoWrite(active, pos, err)
		l.appendMu.Unlock()
		return res, err
	}
	l.writeOK()
	// A transactional batch changes what read_committed readers may see
	// (the last stable offset, the aborted index) together with the log
	// end: both are published in one critical section below. Publishing
	// the end first let a read_committed fetch in between see the first
	// batch of a just-opened transaction below the LSO, or an aborted
	// transaction's data below the LSO without its aborted-index entry
	// (whose fsync made that window wide), and hand aborted records out.
	var tc txnChange
	if h.Attributes&attrTransactional != 0 {
		if tc, err = l.prepareTxnAppend(&h, batch, active.base); err != nil {
			l.appendMu.Unlock()
			return res, err
		}
	}
	l.producers.update(&h)
	if marker {
		if e := l.producers.m[h.ProducerID]; e != nil {
			e.coordinatorEpoch = tc.coordinatorEpoch
		}
	}
	l.mu.Lock()
	active.onAppendLocked(&h, pos, int64(cfg.IndexIntervalBytes))
	active.size.Store(pos + int64(h.Size))
	l.mu.leo = active.next
	end := l.mu.leo
	logStart = l.mu.logStart
	if h.Attributes&attrTransactional != 0 {
		l.applyTxnLocked(&h, tc)
	}
	l.mu.Unlock()
	l.size.Add(int64(h.Size))

	wait := cfg.FlushMessages == 1
	if cfg.FlushMessages > 1 {
		l.unflushedMsgs += int64(h.RecordCount)
		if l.unflushedMsgs >= cfg.FlushMessages {
			l.unflushedMsgs = 0
			wait = true
		}
	}
	l.appendMu.Unlock()

	res.BaseOffset = base
	res.LastOffset = end - 1
	res.LogStartOffset = logStart
	if wait {
		if err := l.waitDurable(end); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (l *Log) shouldRoll(s *segment, h *batchHeader, cfg *Config, nowMs int64) bool {
	size := s.size.Load()
	if size == 0 {
		return false
	}
	switch {
	case size+int64(h.Size) > cfg.SegmentBytes:
		return true
	case cfg.rollMs > 0 && s.rollBaseMs >= 0 && nowMs-s.rollBaseMs > cfg.rollMs:
		return true
	case len(s.idx)+offsetIndexEntry > maxIndexBytes || len(s.tidx)+timeIndexEntry > maxIndexBytes:
		return true
	case s.next+int64(h.LastOffsetDelta)-s.base > math.MaxInt32:
		return true
	}
	return false
}

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
	for _, x := range []struct {
		f       File
		data    []byte
		written int
	}{{s.index, idx, s.idxWritten}, {s.tindex, tidx, s.tidxWritten}} {
		if len(x.data) > x.written {
			if _, err := x.f.WriteAt(x.data[x.written:], int64(x.written)); err != nil {
				return fmt.Errorf("%w: write index of %s: %w", ErrStorage, s.logPath, err)
			}
		}
		if err := x.f.Truncate(int64(len(x.data))); err != nil {
			return fmt.Errorf("%w: truncate index of %s: %w", ErrStorage, s.logPath, err)
		}
		if err := x.f.Sync(); err != nil {
			return fmt.Errorf("%w: fsync index of %s: %w", ErrStorage, s.logPath, err)
		}
	}
	return nil
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

// Read appends to dst whole batches from the one containing offset; see
// api.go for the contract.
func (l *Log) Read(offset int64, maxBytes int32, dst []byte) ([]byte, error) {
	return l.read(offset, maxBytes, dst, false)
}

// read is Read; committed bounds it by the last stable offset.
func (l *Log) read(offset int64, maxBytes int32, dst []byte, committed bool) ([]byte, error) {
	l.mu.RLock()
	if err := l.usableLocked(); err != nil {
		l.mu.RUnlock()
		return dst, err
	}
	if offset < l.mu.logStart || offset > l.mu.leo {
		ls, le := l.mu.logStart, l.mu.leo
		l.mu.RUnlock()
		return dst, fmt.Errorf("%w: offset %d is outside [%d, %d] of %s-%d", ErrOffsetOutOfRange, offset, ls, le, l.topic, l.partition)
	}
	for {
		hw := l.hwLocked()
		if committed {
			hw = l.lsoLocked()
		}
		if offset >= hw {
			l.mu.RUnlock()
			return dst, nil
		}
		i := l.segmentForLocked(offset)
		s := l.mu.segs[i]
		pos := int64(0)
		memIndex := s.memIndex
		if memIndex {
			pos = offsetFloorMem(s.idx, s.rel(offset))
		}
		limit := s.size.Load()
		nextBase := int64(-1)
		if i+1 < len(l.mu.segs) {
			nextBase = l.mu.segs[i+1].base
		}
		s.acquire()
		l.mu.RUnlock()
		n := len(dst)
		out, err := s.readAt(pos, limit, offset, hw, maxBytes, dst, memIndex)
		s.release()
		if err != nil || len(out) > n || nextBase < 0 || nextBase >= hw {
			return out, err
		}
		// The rest of this segment was removed by the cleaner (offsets
		// keep their holes): the next batch is in the next segment, as
		// Kafka's read moves on.
		dst, offset = out, nextBase
		l.mu.RLock()
		if err := l.usableLocked(); err != nil {
			l.mu.RUnlock()
			return dst, err
		}
	}
}

// readAt is read's part outside the lock: the index lookup of a sealed
// segment and the segment read.
func (s *segment) readAt(pos, limit, offset, hw int64, maxBytes int32, dst []byte, memIndex bool) ([]byte, error) {
	if !memIndex {
		var err error
		if pos, err = s.sealedFloor(offset, &dst); err != nil {
			return dst, err
		}
	}
	return s.read(pos, limit, offset, hw, maxBytes, dst)
}

// sealedFloor looks offset up in a sealed segment's .index file, using
// dst's spare capacity as scratch.
func (s *segment) sealedFloor(offset int64, dst *[]byte) (int64, error) {
	*dst = grow(*dst, timeIndexEntry)
	scratch := (*dst)[len(*dst) : len(*dst)+timeIndexEntry]
	pos, err := offsetFloorFile(s.index, s.idxEntries, s.rel(offset), scratch)
	if err != nil {
		return 0, fmt.Errorf("%w: read %s: %w", ErrStorage, s.path(indexSuffix), err)
	}
	return pos, nil
}

// segmentForLocked returns the index of the last segment with base <= offset.
func (l *Log) segmentForLocked(offset int64) int {
	segs := l.mu.segs
	lo, hi := 0, len(segs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if segs[mid].base <= offset {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return max(lo-1, 0)
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

// MaxTimestamp returns the largest timestamp in the log and the offset of
// the first record that holds it, as Kafka answers ListOffsets
// MAX_TIMESTAMP: the segment whose largest timestamp is greatest (the first
// of equal ones), in it the first batch holding that timestamp, in that
// batch the first record with it (compressed batches are decompressed,
// streaming).
// (-1, -1) for an empty log.
func (l *Log) MaxTimestamp() (offset, timestamp int64, err error) {
	l.mu.RLock()
	if err := l.usableLocked(); err != nil {
		l.mu.RUnlock()
		return -1, -1, err
	}
	var best *segment
	for _, s := range l.mu.segs {
		if s.maxTs >= 0 && (best == nil || s.maxTs > best.maxTs) {
			best = s
		}
	}
	if best == nil {
		l.mu.RUnlock()
		return -1, -1, nil
	}
	s, ts, last := best, best.maxTs, best.maxTsOffset
	pos := int64(0)
	var scratch []byte
	if s.memIndex {
		pos = offsetFloorMem(s.idx, s.rel(last))
	}
	limit := s.size.Load()
	s.acquire()
	l.mu.RUnlock()
	defer s.release()
	if !s.memIndex {
		scratch = make([]byte, offsetIndexEntry)
		if pos, err = offsetFloorFile(s.index, s.idxEntries, s.rel(last), scratch); err != nil {
			return -1, -1, fmt.Errorf("%w: read %s: %w", ErrStorage, s.path(indexSuffix), err)
		}
	}
	sc := newScanner(s.log, pos, limit)
	for {
		b, reason, err := sc.next()
		if err != nil {
			return -1, -1, fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
		}
		if b == nil {
			if reason != "" {
				return -1, -1, s.corrupt(sc.pos, reason)
			}
			return last, ts, nil // not found again: the tracked batch's last offset
		}
		h := parseHeader(b)
		sc.advance(int64(h.Size))
		if h.MaxTimestamp != ts {
			continue
		}
		if h.Attributes&attrTimestampType != 0 {
			return h.BaseOffset, ts, nil // LogAppendTime: every record has it
		}
		if h.Compression() != 0 {
			delta, ok, err := firstRecordAt(h.Compression(), b[batchHeaderSize:], h.RecordCount, h.BaseTimestamp, ts)
			if err != nil {
				return -1, -1, fmt.Errorf("batch at offset %d of %s: %w", h.BaseOffset, s.logPath, err)
			}
			if ok {
				return h.BaseOffset + int64(delta), ts, nil
			}
			return h.LastOffset(), ts, nil
		}
		found := int64(-1)
		recordTimestamps(b, &h, func(delta int32, rts int64) bool {
			if rts == ts {
				found = h.BaseOffset + int64(delta)
				return false
			}
			return true
		})
		if found >= 0 {
			return found, ts, nil
		}
		return h.LastOffset(), ts, nil
	}
}

// OffsetForTimestamp returns the first record with a timestamp >= ts below
// the high watermark, or (-1, -1, nil). Compressed CreateTime batches are
// not decompressed: for them the batch's base offset and max timestamp are
// returned, which is where a consumer must start anyway.
func (l *Log) OffsetForTimestamp(ts int64) (int64, int64, error) {
	l.mu.RLock()
	if err := l.usableLocked(); err != nil {
		l.mu.RUnlock()
		return -1, -1, err
	}
	hw := l.hwLocked()
	logStart := l.mu.logStart
	segs := append([]*segment(nil), l.mu.segs...)
	l.mu.RUnlock()
	for _, s := range segs {
		l.mu.RLock()
		// skip segments deleted meanwhile (their files may be closed)
		gone := len(l.mu.segs) == 0 || l.mu.segs[l.segmentForLocked(s.base)] != s
		if gone || s.maxTs < ts || s.next <= logStart {
			l.mu.RUnlock()
			continue
		}
		var rel int32 = -1
		pos := int64(0)
		if s.memIndex {
			if rel = timeFloorMem(s.tidx, ts); rel >= 0 {
				pos = offsetFloorMem(s.idx, rel)
			}
		}
		sealed := !s.memIndex
		limit := s.size.Load()
		s.acquire()
		l.mu.RUnlock()
		off, found, err := s.findTimestamp(ts, sealed, pos, limit, hw, logStart)
		s.release()
		if err != nil || off >= 0 {
			return off, found, err
		}
		if s.next >= hw {
			break
		}
	}
	return -1, -1, nil
}

// findTimestamp searches one segment for the first record with a
// timestamp >= ts; pos is where to start for an active segment.
func (s *segment) findTimestamp(ts int64, sealed bool, pos, limit, hw, logStart int64) (int64, int64, error) {
	if sealed {
		scratch := make([]byte, timeIndexEntry)
		rel, err := timeFloorFile(s.tindex, s.tidxEntries, ts, scratch)
		if err != nil {
			return -1, -1, fmt.Errorf("%w: read %s: %w", ErrStorage, s.path(timeIndexSuffix), err)
		}
		if rel >= 0 {
			if pos, err = offsetFloorFile(s.index, s.idxEntries, rel, scratch); err != nil {
				return -1, -1, fmt.Errorf("%w: read %s: %w", ErrStorage, s.path(indexSuffix), err)
			}
		}
	}
	sc := newScanner(s.log, pos, limit)
	for {
		b, reason, err := sc.next()
		if err != nil {
			return -1, -1, fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
		}
		if b == nil {
			if reason != "" {
				return -1, -1, s.corrupt(sc.pos, reason)
			}
			return -1, -1, nil
		}
		h := parseHeader(b)
		sc.advance(int64(h.Size))
		if h.BaseOffset >= hw {
			return -1, -1, nil
		}
		if h.MaxTimestamp < ts || h.LastOffset() < logStart {
			continue
		}
		if h.Attributes&attrTimestampType != 0 || h.Compression() != 0 {
			return max(h.BaseOffset, logStart), h.MaxTimestamp, nil
		}
		foundOff, foundTs := int64(-1), int64(-1)
		recordTimestamps(b, &h, func(delta int32, rts int64) bool {
			o := h.BaseOffset + int64(delta)
			if rts >= ts && o >= logStart {
				foundOff, foundTs = o, rts
				return false
			}
			return true
		})
		if foundOff >= 0 {
			return foundOff, foundTs, nil
		}
	}
}

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
	for _, x := range []struct {
		f       File
		data    []byte
		written int
	}{{s.index, idx, s.idxWritten}, {s.tindex, tidx, s.tidxWritten}} {
		if len(x.data) > x.written {
			if _, err := x.f.WriteAt(x.data[x.written:], int64(x.written)); err != nil {
				return fmt.Errorf("%w: write index of %s: %w", ErrStorage, s.logPath, err)
			}
		}
		if err := x.f.Sync(); err != nil {
			return fmt.Errorf("%w: fsync index of %s: %w", ErrStorage, s.logPath, err)
		}
	}
	if err := l.writeFileAtomic(segmentName(leo, snapshotSuffix), l.producers.encode()); err != nil {
		return err
	}
	if err := l.writeFileAtomic(cleanShutdownName, cleanShutdownContent); err != nil {
		return err
	}
	return nil
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
