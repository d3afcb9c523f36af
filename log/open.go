package log

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func (c Config) withDefaults() Config {
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = 1 << 30
	}
	if c.SegmentBytes > math.MaxInt32 {
		c.SegmentBytes = math.MaxInt32
	}
	if c.RetentionMs == 0 {
		c.RetentionMs = 7 * 24 * 3600 * 1000
	}
	if c.RetentionBytes == 0 {
		c.RetentionBytes = -1
	}
	if c.IndexIntervalBytes <= 0 {
		c.IndexIntervalBytes = 4096
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 1048588
	}
	if !c.CleanupCompact {
		c.CleanupDelete = true
	}
	if c.DeleteRetentionMs == 0 {
		c.DeleteRetentionMs = 24 * 3600 * 1000
	} else if c.DeleteRetentionMs < 0 {
		c.DeleteRetentionMs = 0
	}
	if c.MaxCompactionLagMs <= 0 {
		c.MaxCompactionLagMs = math.MaxInt64
	}
	c.rollMs = c.SegmentMs
	if c.CleanupCompact && c.MaxCompactionLagMs < math.MaxInt64 && (c.rollMs <= 0 || c.MaxCompactionLagMs < c.rollMs) {
		c.rollMs = c.MaxCompactionLagMs
	}
	return c
}

// openLog opens (recovering if needed) or creates the partition log in dir.
func openLog(fsys FS, dir, topic string, partition int32, cfg Config, logger *slog.Logger, now func() time.Time) (_ *Log, retErr error) {
	l := &Log{
		topic:     topic,
		partition: partition,
		dir:       dir,
		fs:        fsys,
		logger:    logger.With("topic", topic, "partition", partition),
		now:       now,
		producers: newProducerState(),
	}
	l.cleanerCkpt = -1
	l.gc.cond.L = &l.gc.mu
	l.mu.cfg = cfg.withDefaults()
	names, err := l.listDir()
	if err != nil {
		return nil, err
	}
	files, err := l.sortDir(names)
	if err != nil {
		return nil, err
	}
	// A compacted log (now, or cleaned before: the cleaner checkpoint is
	// written before its first swap) may have offset holes.
	l.holes = l.mu.cfg.CleanupCompact || slices.Contains(names, cleanerCheckpointName)

	epochsChanged, err := l.readEpochs()
	if err != nil {
		return nil, err
	}
	logStart, err := l.readLogStartCheckpoint()
	if err != nil {
		l.logger.Warn("ignoring unreadable log start offset checkpoint", "err", err)
		logStart = 0
	}
	if err := l.openOrCreateSegments(files.bases, logStart, files.clean); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			l.closeSegments()
		}
	}()
	active := l.mu.segs[len(l.mu.segs)-1]
	l.recoveryPoint = active.base
	if !files.clean {
		if err := l.writeOffsetCheckpoint(recoveryPointName, active.base); err != nil {
			return nil, err
		}
	}
	l.mu.leo = active.next
	l.mu.synced = l.mu.leo
	l.gc.offset = l.mu.leo
	l.mu.logStart = max(l.mu.segs[0].base, min(logStart, l.mu.leo))
	for _, s := range l.mu.segs {
		l.size.Add(s.size.Load())
	}

	if l.mu.epochs.truncateFromEnd(l.mu.leo) {
		epochsChanged = true
	}
	if l.mu.epochs.truncateFromStart(l.mu.logStart) {
		epochsChanged = true
	}
	if err := l.recoverProducers(files, epochsChanged); err != nil {
		return nil, err
	}
	if err := l.keepCleanMarker(files.clean); err != nil {
		return nil, err
	}
	for _, s := range l.mu.segs {
		// the epoch check is for data written before the crash only
		s.epochLimit = math.MaxInt32
	}
	l.lastFlushMs.Store(l.now().UnixMilli())
	return l, nil
}

// listDir lists the partition directory, creating it if needed, after
// finishing or undoing a cleaner swap a crash interrupted.
func (l *Log) listDir() ([]string, error) {
	if err := l.fs.MkdirAll(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: create %s: %w", ErrStorage, l.dir, err)
	}
	names, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: list %s: %w", ErrStorage, l.dir, err)
	}
	if changed, err := l.recoverCleanerSwaps(names); err != nil {
		return nil, err
	} else if changed {
		if names, err = l.fs.ReadDir(l.dir); err != nil {
			return nil, fmt.Errorf("%w: list %s: %w", ErrStorage, l.dir, err)
		}
	}
	return names, nil
}

// dirFiles is what openLog finds in the partition directory.
type dirFiles struct {
	bases     []int64 // segments, ascending
	snapshots []int64 // producer snapshots, ascending
	clean     bool    // the clean shutdown marker is there
}

// sortDir sorts the directory's files into dirFiles and removes what an
// interrupted write or deletion left: temporary files, and index files
// whose .log is gone.
func (l *Log) sortDir(names []string) (dirFiles, error) {
	var d dirFiles
	haveLog := map[int64]bool{}
	for _, n := range names {
		if b, ok := parseSegmentName(n, logSuffix); ok {
			d.bases = append(d.bases, b)
			haveLog[b] = true
		}
	}
	for _, n := range names {
		switch {
		case n == cleanShutdownName:
			d.clean = true
		case strings.HasSuffix(n, tmpSuffix):
			// an interrupted atomic write; the old file (if any) is intact
			if err := l.fs.Remove(filepath.Join(l.dir, n)); err != nil {
				return d, fmt.Errorf("%w: remove %s: %w", ErrStorage, n, err)
			}
		case strings.HasSuffix(n, snapshotSuffix):
			if b, ok := parseSegmentName(n, snapshotSuffix); ok {
				d.snapshots = append(d.snapshots, b)
			}
		case strings.HasSuffix(n, indexSuffix) || strings.HasSuffix(n, timeIndexSuffix):
			suffix := indexSuffix
			if strings.HasSuffix(n, timeIndexSuffix) {
				suffix = timeIndexSuffix
			}
			if b, ok := parseSegmentName(n, suffix); ok && !haveLog[b] {
				// orphan of a segment whose .log was deleted first
				if err := l.fs.Remove(filepath.Join(l.dir, n)); err != nil {
					return d, fmt.Errorf("%w: remove %s: %w", ErrStorage, n, err)
				}
			}
		}
	}
	slices.Sort(d.bases)
	slices.Sort(d.snapshots)
	return d, nil
}

// readEpochs loads the leader epoch checkpoint; changed reports a corrupt
// one, which is rebuilt from the log.
func (l *Log) readEpochs() (changed bool, _ error) {
	l.epochLimit = math.MaxInt32
	data, err := l.readSmallFile(epochCheckpointName)
	if err != nil {
		if !isNotExist(err) {
			return false, fmt.Errorf("%w: %w", ErrStorage, err)
		}
		return false, nil
	}
	c, derr := decodeEpochCheckpoint(data)
	if derr != nil {
		l.logger.Warn("ignoring corrupt leader epoch checkpoint; rebuilding it from the log", "err", derr)
		return true, nil
	}
	l.mu.epochs = c
	if len(c) > 0 {
		l.epochLimit = c.latest()
	}
	return false, nil
}

// openOrCreateSegments opens the segments at bases, recovering those from
// the recovery point on after an unclean stop, or creates the first
// segment of a new log at logStart.
func (l *Log) openOrCreateSegments(bases []int64, logStart int64, clean bool) error {
	if len(bases) == 0 {
		s, err := l.createSegment(logStart)
		if err != nil {
			return err
		}
		l.mu.segs = []*segment{s}
		return nil
	}
	rp := int64(math.MaxInt64)
	if !clean {
		var err error
		if rp, err = l.readOffsetCheckpoint(recoveryPointName); err != nil {
			l.logger.Warn("ignoring unreadable recovery point; scanning all segments", "err", err)
			rp = 0
		}
	}
	if err := l.openSegments(bases, rp, clean); err != nil {
		l.closeSegments()
		return err
	}
	return nil
}

// recoverProducers rebuilds the producer state from the newest usable
// snapshot, writes the epoch checkpoint if the epochs changed, and removes
// snapshots past the log end.
func (l *Log) recoverProducers(files dirFiles, epochsChanged bool) error {
	changed, err := l.rebuildProducerState(files.snapshots, l.mu.leo)
	if err != nil {
		return err
	}
	if epochsChanged || changed {
		if err := l.writeEpochCheckpoint(l.mu.epochs); err != nil {
			return err
		}
	}
	staleSnapshots := false
	for _, b := range files.snapshots {
		if b > l.mu.leo {
			// from data lost in a crash; it must not come back once the
			// log grows past its offset again
			l.removeFile(segmentName(b, snapshotSuffix))
			staleSnapshots = true
		}
	}
	if staleSnapshots && !files.clean {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return fmt.Errorf("%w: sync %s: %w", ErrStorage, l.dir, err)
		}
	}
	return nil
}

// keepCleanMarker decides what becomes of the clean shutdown marker found
// at open.
func (l *Log) keepCleanMarker(clean bool) error {
	if clean && !l.markerDoubt {
		// The marker stays until the first change (dirtyLocked removes it,
		// durably, before anything new is written, or a later crash would
		// be mistaken for a clean stop): opening and closing a partition
		// that only served reads costs no write and no fsync.
		l.cleanMarker = true
	} else if clean {
		if err := l.fs.Remove(filepath.Join(l.dir, cleanShutdownName)); err != nil {
			return fmt.Errorf("%w: remove clean shutdown marker: %w", ErrStorage, err)
		}
		if err := l.fs.SyncDir(l.dir); err != nil {
			return fmt.Errorf("%w: sync %s: %w", ErrStorage, l.dir, err)
		}
	}
	return nil
}

func (l *Log) closeSegments() {
	for _, s := range l.mu.segs {
		s.closeFiles()
	}
	l.mu.segs = nil
}

// createSegment creates an empty segment and makes its files durable.
func (l *Log) createSegment(base int64) (*segment, error) {
	s := &segment{base: base, logPath: l.filePath(segmentName(base, logSuffix)), next: base, maxTs: -1, maxTsOffset: -1, rollBaseMs: -1, memIndex: true, epochLimit: math.MaxInt32, holes: l.holes}
	s.refs.Store(1)
	var err error
	flags := os.O_CREATE | os.O_TRUNC | os.O_RDWR
	if s.log, err = l.fs.OpenFile(s.logPath, flags, 0o644); err != nil {
		return nil, fmt.Errorf("%w: create %s: %w", ErrStorage, s.logPath, err)
	}
	if s.index, err = l.fs.OpenFile(s.path(indexSuffix), flags, 0o644); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("%w: create %s: %w", ErrStorage, s.path(indexSuffix), err)
	}
	if s.tindex, err = l.fs.OpenFile(s.path(timeIndexSuffix), flags, 0o644); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("%w: create %s: %w", ErrStorage, s.path(timeIndexSuffix), err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("%w: sync %s: %w", ErrStorage, l.dir, err)
	}
	return s, nil
}

func (l *Log) openSegmentFiles(base int64) (*segment, []byte, []byte, error) {
	s := &segment{base: base, logPath: l.filePath(segmentName(base, logSuffix)), next: base, maxTs: -1, maxTsOffset: -1, rollBaseMs: -1, epochLimit: l.epochLimit, holes: l.holes}
	s.refs.Store(1)
	var err error
	if s.log, err = l.fs.OpenFile(s.logPath, os.O_RDWR, 0); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: open %s: %w", ErrStorage, s.logPath, err)
	}
	size, err := s.log.Size()
	if err != nil {
		s.closeFiles()
		return nil, nil, nil, fmt.Errorf("%w: stat %s: %w", ErrStorage, s.logPath, err)
	}
	s.size.Store(size)
	var idx, tidx []byte
	for _, x := range []struct {
		f   *File
		buf *[]byte
		suf string
	}{{&s.index, &idx, indexSuffix}, {&s.tindex, &tidx, timeIndexSuffix}} {
		p := s.path(x.suf)
		if *x.f, err = l.fs.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644); err != nil {
			s.closeFiles()
			return nil, nil, nil, fmt.Errorf("%w: open %s: %w", ErrStorage, p, err)
		}
		if *x.buf, err = readWhole(*x.f); err != nil {
			s.closeFiles()
			return nil, nil, nil, fmt.Errorf("%w: read %s: %w", ErrStorage, p, err)
		}
	}
	return s, idx, tidx, nil
}

// rebuildProducerState loads the newest usable snapshot at or below leo and
// replays the batches after it. It also assigns leader epochs found in the
// replayed batches and reports whether that changed the epoch cache.
func (l *Log) rebuildProducerState(snapshots []int64, leo int64) (bool, error) {
	from := l.mu.segs[0].base
	ps := newProducerState()
	for i := len(snapshots) - 1; i >= 0; i-- {
		b := snapshots[i]
		if b > leo || b < l.mu.segs[0].base {
			continue
		}
		data, err := l.readSmallFile(segmentName(b, snapshotSuffix))
		if err == nil {
			ps, err = decodeProducerSnapshot(data)
		}
		if err != nil {
			l.logger.Warn("ignoring producer snapshot", "file", l.filePath(segmentName(b, snapshotSuffix)), "err", err)
			ps = newProducerState()
			continue
		}
		from = b
		break
	}
	// The segment list and the epoch cache only change with appendMu held,
	// which the caller holds (or nothing else runs yet): read them without
	// mu, write the cache back under it.
	changed := false
	epochs := append(epochCache(nil), l.mu.epochs...)
	var aborted []abortedTxn
	var replayErr error
	for _, s := range l.mu.segs {
		if s.next <= from || s.size.Load() == 0 {
			continue
		}
		_, err := scanSegment(s, 0, s.size.Load(), -1, false, func(h *batchHeader, pos int64) {
			if h.LastOffset() < from {
				return
			}
			if first := ps.update(h); h.Attributes&attrControl != 0 && replayErr == nil {
				replayErr = l.replayMarker(&aborted, &ps, s, h, pos, first)
			}
			if h.LeaderEpoch >= 0 && h.LeaderEpoch > epochs.latest() {
				epochs.assign(h.LeaderEpoch, h.BaseOffset)
				changed = true
			}
		})
		if err == nil {
			err = replayErr
		}
		if err != nil {
			return false, err
		}
	}
	l.producers = ps
	if err := l.resetTxnState(from, aborted); err != nil {
		return false, err
	}
	if changed {
		l.mu.Lock()
		l.mu.epochs = epochs
		l.mu.Unlock()
	}
	return changed, nil
}
