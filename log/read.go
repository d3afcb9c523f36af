package log

import (
	"errors"
	"fmt"
)

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
		if err != nil && errors.Is(err, ErrStorage) {
			// The disk failed to read what it acknowledged (EIO: a bad
			// sector, a dying device). Serving on would answer some reads
			// and not others, and appends would go on above data that
			// cannot be read, so the partition goes offline as after a
			// failed fsync: the manager's handle reopens it (recovery
			// reads the disk again) after OfflineRetryInterval, while
			// every other partition is served.
			return out, l.fail("read "+s.logPath, err)
		}
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
