package share

import (
	"math"
	"time"
)

// throttleLimit is max(2, ceil(limit/2)): from this delivery count on,
// redeliveries are throttled to isolate poison records (Kafka 4.2+).
func (p *SharePartition) throttleLimit() int16 {
	return int16(max(2, (p.cfg.DeliveryCountLimit+1)/2))
}

// Acquire locks records for member and fills res (reset first). It
// re-acquires Available offsets inside the window first, lowest first, then
// reads new batches past SPEO while the in-flight window
// (share.partition.max.record.locks, measured as SPEO-SPSO+1) allows.
func (p *SharePartition) Acquire(member string, now time.Time, req AcquireRequest, src BatchSource, res *AcquireResult) (Effects, error) {
	res.reset()
	var eff Effects
	if p.spso < 0 {
		return eff, ErrNotInitialised
	}
	b := src.Bounds()
	end := b.HighWatermark
	if p.cfg.ReadCommitted {
		end = b.LastStable
	}
	if b.LogStart > p.spso {
		p.moveStart(b.LogStart)
		eff.SPSOMoved, eff.Persist, eff.Available = true, true, true
	}
	if (!p.availOK || p.minAvail <= now.UnixNano()) && p.endBackoff(now.UnixNano()) {
		eff.Available = true
	}
	if p.cfg.PersistCounts {
		p.archiveSpent(&eff)
	}
	remaining := int64(req.MaxRecords)
	if remaining <= 0 {
		remaining = DefaultMaxRecords
	}
	batchSize := int64(req.BatchSize)
	if batchSize <= 0 || req.Mode == RecordLimit {
		batchSize = math.MaxInt64
	}
	tnow := now.UnixNano()
	deadline := tnow + int64(p.cfg.RecordLockDuration)
	if p.cfg.KeyOrdered {
		p.acquireKeyed(member, tnow, deadline, remaining, batchSize, end, src, res, &eff)
		return p.acquired(eff, res), nil
	}
	stop := p.reacquire(member, tnow, deadline, &remaining, batchSize, end, req.Mode, src, res, &eff)
	if !stop && remaining > 0 {
		p.acquireNew(member, deadline, remaining, batchSize, end, req.Mode, src, res, &eff)
	}
	return p.acquired(eff, res), nil
}

// reacquire is Acquire's first phase: it re-acquires released and
// expired offsets inside the window, lowest first, counting them against
// remaining. stop is set by a throttled redelivery, which ends the
// acquisition.
func (p *SharePartition) reacquire(member string, tnow, deadline int64, remaining *int64, batchSize, end int64, mode AcquireMode, src BatchSource, res *AcquireResult, eff *Effects) (stop bool) {
	k := p.search(max(p.availFrom, p.spso))
	scanned := false
	for k < len(p.ranges) && *remaining > 0 && !stop {
		r := &p.ranges[k]
		if r.state != Available || r.last < p.spso {
			k++
			continue
		}
		a := max(r.first, p.spso)
		if !scanned {
			p.availFrom, scanned = a, true
		}
		if r.deadline > tnow {
			// Waiting out its redelivery backoff: never blocks the rest.
			k++
			continue
		}
		if a >= end {
			break
		}
		h, ok := src.Batch(a)
		if !ok {
			// Not in the data read (released after the read started, or
			// past its end): leave it for the next fetch.
			k++
			continue
		}
		if h.BaseOffset > a {
			// The records vanished (compaction): archive so SPSO can move.
			k = p.transition(a, min(r.last, h.BaseOffset-1), Archived, 0, "", 0)
			eff.Persist = true
			continue
		}
		take := r.last - a + 1
		cnt := r.count
		if cnt >= p.throttleLimit() {
			// Throttled redelivery: halve per extra attempt, last attempt alone.
			cap := max(1, take>>(cnt-p.throttleLimit()+1))
			if int(cnt)+1 >= p.cfg.DeliveryCountLimit {
				cap = 1
			}
			*remaining = min(*remaining, cap)
			stop = true
		}
		last := r.last
		if take > *remaining {
			last = a + *remaining - 1
			if mode == BatchOptimized && !stop {
				if hb, ok := src.Batch(last); ok && hb.BaseOffset <= last {
					last = min(r.last, hb.LastOffset)
				}
			}
		}
		last = min(last, end-1)
		k = p.transition(a, last, Acquired, cnt+1, member, deadline)
		res.add(a, last, cnt+1, batchSize)
		p.stats.acquired(last-a+1, cnt+1)
		*remaining -= last - a + 1
		p.noteDeadline(deadline)
	}
	if !scanned && k >= len(p.ranges) {
		p.availFrom = p.speo + 1
	}
	return stop
}

// acquireNew is Acquire's second phase: new batches past SPEO, up to
// remaining records and while the in-flight window allows.
func (p *SharePartition) acquireNew(member string, deadline, remaining, batchSize, end int64, mode AcquireMode, src BatchSource, res *AcquireResult, eff *Effects) {
	inFlight := p.speo - p.spso + 1
	quota := min(remaining, int64(p.cfg.MaxRecordLocks)-inFlight)
	off := p.speo + 1
	extend := false // the previous batch was acquired by this call
	for quota > 0 && off < end {
		h, ok := src.Batch(off)
		if !ok || h.BaseOffset >= end || h.LastOffset >= end {
			break
		}
		if h.BaseOffset > off {
			// Offsets with no batch (compaction). Between two batches of
			// one acquisition Kafka acquires them with the span and the
			// client gap-acks them; before the first batch they are
			// skipped, which here means archived so SPSO can pass them.
			if extend && mode == BatchOptimized {
				p.appendSpan(span{first: off, last: h.BaseOffset - 1, state: Acquired, count: 1, owner: member, deadline: deadline})
				res.add(off, h.BaseOffset-1, 1, batchSize)
				p.stats.acquired(h.BaseOffset-off, 1)
				quota -= h.BaseOffset - off
			} else {
				p.appendSpan(span{first: off, last: h.BaseOffset - 1, state: Archived})
				eff.Persist = true
			}
		}
		first := max(h.BaseOffset, off)
		if p.cfg.ReadCommitted && h.Aborted {
			p.appendSpan(span{first: first, last: h.LastOffset, state: Archived})
			eff.Persist = true
			off = h.LastOffset + 1
			extend = false
			continue
		}
		extend = true
		last := h.LastOffset
		if n := last - first + 1; n > quota && mode == RecordLimit {
			last = first + quota - 1
		}
		p.appendSpan(span{first: first, last: last, state: Acquired, count: 1, owner: member, deadline: deadline})
		if last < h.LastOffset {
			p.appendSpan(span{first: last + 1, last: h.LastOffset, state: Available})
		}
		res.add(first, last, 1, batchSize)
		p.stats.acquired(last-first+1, 1)
		quota -= last - first + 1
		off = h.LastOffset + 1
		p.noteDeadline(deadline)
	}
}

// acquired finishes an acquisition, key-ordered or not: SPSO moves over
// what it archived; with persisted delivery counts an acquisition is
// durable before the records are returned.
func (p *SharePartition) acquired(eff Effects, res *AcquireResult) Effects {
	if p.cfg.PersistCounts && res.Count > 0 {
		eff.Persist, eff.Durable = true, true
	}
	if p.advance() {
		eff.SPSOMoved = true
	}
	if eff.Persist {
		p.dirty = true
	}
	return eff
}

// add appends an acquired range to the result, merging with the previous
// entry when contiguous with the same count and under the batch size.
func (res *AcquireResult) add(first, last int64, count int16, batchSize int64) {
	if n := len(res.Acquired); n > 0 {
		e := &res.Acquired[n-1]
		if e.LastOffset+1 == first && e.DeliveryCount == count && e.LastOffset-e.FirstOffset+1 < batchSize {
			e.LastOffset = last
			goto span
		}
	}
	res.Acquired = append(res.Acquired, AcquiredRecords{FirstOffset: first, LastOffset: last, DeliveryCount: count})
span:
	if res.RecordsFirst < 0 {
		res.RecordsFirst = first
	}
	res.RecordsLast = last
	res.Count += last - first + 1
}
