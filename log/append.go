package log

import "math"

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
	h, dup, err := l.checkAppend(batch, &cfg, marker, nowMs, logStart, &res)
	if err != nil || dup {
		l.appendMu.Unlock()
		return res, err
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
		if err := l.noteEpoch(leaderEpoch, base); err != nil {
			l.appendMu.Unlock()
			return res, err
		}
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
	wait := l.countUnflushed(&cfg, h.RecordCount)
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

// checkAppend validates batch against the log's limits and its
// producer's state, and sets its max timestamp as the log keeps it. dup,
// with res filled in, is a retried batch the log already holds. Called
// with appendMu held.
func (l *Log) checkAppend(batch []byte, cfg *Config, marker bool, nowMs, logStart int64, res *AppendResult) (h batchHeader, dup bool, err error) {
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
		if err == errMissingKey {
			err = missingKeyError(l.topic, l.partition)
		}
		return h, false, err
	}
	if marker {
		if err := l.producers.checkMarker(&h); err != nil {
			return h, false, err
		}
	} else if h.ProducerID >= 0 {
		if orig, dup := l.producers.duplicate(&h); dup {
			res.BaseOffset = orig.firstOffset
			res.LastOffset = orig.firstOffset + int64(orig.lastOffsetDelta)
			res.LogStartOffset = logStart
			res.Duplicate = true
			return h, true, nil
		}
		if err := l.producers.check(&h); err != nil {
			return h, false, err
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
	return h, false, nil
}

// noteEpoch records, durably, that leaderEpoch starts at base, before the
// epoch's first batch is written. Rare (once per leader change), so it is
// written synchronously: the cache must never miss an epoch whose data is
// on disk. Called with appendMu held.
func (l *Log) noteEpoch(leaderEpoch int32, base int64) error {
	l.mu.Lock()
	c := append(epochCache(nil), l.mu.epochs...)
	l.mu.Unlock()
	c.assign(leaderEpoch, base)
	if err := l.writeEpochCheckpoint(c); err != nil {
		// The old checkpoint is intact (atomic replace): nothing to
		// undo, the next append of this epoch tries again.
		return l.writeFailed("write leader epoch checkpoint", err)
	}
	l.mu.Lock()
	l.mu.epochs = c
	l.mu.Unlock()
	return nil
}

// countUnflushed counts an appended batch's records against
// flush.messages and reports whether the append must wait for an fsync.
// Called with appendMu held.
func (l *Log) countUnflushed(cfg *Config, records int32) bool {
	if cfg.FlushMessages == 1 {
		return true
	}
	if cfg.FlushMessages > 1 {
		l.unflushedMsgs += int64(records)
		if l.unflushedMsgs >= cfg.FlushMessages {
			l.unflushedMsgs = 0
			return true
		}
	}
	return false
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
