package log

import "fmt"

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
