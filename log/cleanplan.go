package log

import (
	"math"
	"sort"
)

// cleanPlan is what a pass found under the log's locks.
type cleanPlan struct {
	cfg          Config
	segs         []*segment // acquired; all but the last are sealed
	sizes        []int64
	maxTs        []int64
	logStart     int64
	firstDirty   int64
	end          int64 // first uncleanable offset
	aborted      map[int64][]abortedTxn
	allAborted   []abortedTxn
	producerLast map[int64]int64
	truncations  int64 // Log.truncations when planned
}

func (p *cleanPlan) release() {
	for _, s := range p.segs {
		s.release()
	}
}

// planClean decides whether the log is to be cleaned now and takes what
// the pass needs from under the locks; nil if there is nothing to do.
func (l *Log) planClean(env *cleanEnv) (*cleanPlan, error) {
	if err := l.loadCleanerCheckpoint(); err != nil {
		return nil, err
	}
	p, fu, activeBase, err := l.takeCleanPlan()
	if p == nil || err != nil {
		return nil, err
	}
	p.aborted = map[int64][]abortedTxn{}
	for _, a := range p.allAborted {
		p.aborted[a.producerID] = append(p.aborted[a.producerID], a)
	}
	for _, list := range p.aborted {
		sort.Slice(list, func(i, j int) bool { return list[i].first < list[j].first })
	}
	nowMs := env.now.UnixMilli()
	l.dirtyRange(p, nowMs, fu, activeBase)
	if !l.cleanDue(p, env, nowMs) {
		p.release()
		return nil, nil
	}
	return p, nil
}

// loadCleanerCheckpoint reads the cleaner checkpoint on the log's first
// pass.
func (l *Log) loadCleanerCheckpoint() error {
	if l.cleanerCkpt >= 0 {
		return nil
	}
	_, statErr := l.readSmallFile(cleanerCheckpointName)
	ck, err := l.readOffsetCheckpoint(cleanerCheckpointName)
	if err != nil {
		l.logger.Warn("ignoring unreadable cleaner checkpoint; cleaning from the log start", "err", err)
		ck = 0
	}
	if isNotExist(statErr) {
		// Written before the first swap: it tells a later open (even
		// after cleanup.policy changed) that the log has holes.
		if err := l.writeOffsetCheckpoint(cleanerCheckpointName, 0); err != nil {
			return l.writeFailed("write cleaner checkpoint", err)
		}
	}
	l.cleanerCkpt = ck
	return nil
}

// takeCleanPlan takes, under the locks, what a pass reads of the log:
// its segments (held), sizes, producer and transaction state. It returns
// nil for a log that is not compacted, and the first unstable offset and
// the active segment's base.
func (l *Log) takeCleanPlan() (p *cleanPlan, fu, activeBase int64, _ error) {
	p = &cleanPlan{}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.RLock()
	if err := l.usableLocked(); err != nil {
		l.mu.RUnlock()
		return nil, 0, 0, err
	}
	p.cfg = l.mu.cfg
	if !p.cfg.CleanupCompact {
		l.mu.RUnlock()
		return nil, 0, 0, nil
	}
	l.holes = true // (appendMu held: new segments get holes = true)
	p.segs = append([]*segment(nil), l.mu.segs...)
	for _, s := range p.segs {
		s.acquire()
		p.sizes = append(p.sizes, s.size.Load())
		p.maxTs = append(p.maxTs, s.maxTs)
	}
	p.logStart = l.mu.logStart
	p.truncations = l.truncations.Load()
	fu = l.txn.firstUnstable
	p.allAborted = append([]abortedTxn(nil), l.txn.aborted...)
	activeBase = l.activeLocked().base
	l.mu.RUnlock()
	p.producerLast = make(map[int64]int64, len(l.producers.m))
	for id, e := range l.producers.m {
		if e.n > 0 {
			b := e.batches[e.n-1]
			p.producerLast[id] = b.firstOffset + int64(b.lastOffsetDelta)
		}
	}
	return p, fu, activeBase, nil
}

// dirtyRange sets the pass's range [p.firstDirty, p.end): from the
// cleaner checkpoint to the active segment, the first unstable offset or
// the first segment younger than min.compaction.lag.ms.
func (l *Log) dirtyRange(p *cleanPlan, nowMs, fu, activeBase int64) {
	end := activeBase
	if fu >= 0 {
		end = min(end, fu)
	}
	first := max(l.cleanerCkpt, p.logStart, p.segs[0].base)
	if first > end && l.cleanerCkpt > end {
		// The log was truncated below the checkpoint.
		first = max(p.logStart, p.segs[0].base)
		l.cleanerCkpt = first
	}
	p.firstDirty = first
	if p.cfg.MinCompactionLagMs > 0 {
		for i, s := range p.segs[:len(p.segs)-1] {
			if s.base >= end {
				break
			}
			if i+1 < len(p.segs) && p.segs[i+1].base <= first {
				continue
			}
			if p.maxTs[i] > nowMs-p.cfg.MinCompactionLagMs {
				end = min(end, s.base)
				break
			}
		}
	}
	p.end = end
}

// cleanDue reports whether the pass is worth running: a delete horizon
// passed, the dirty ratio is above min.cleanable.dirty.ratio (or the pass
// is forced), or the oldest dirty record is older than
// max.compaction.lag.ms.
func (l *Log) cleanDue(p *cleanPlan, env *cleanEnv, nowMs int64) bool {
	first, end := p.firstDirty, p.end
	var cleanBytes, dirtyBytes int64
	firstDirtySeg := -1
	for i, s := range p.segs[:len(p.segs)-1] {
		next := p.segs[i+1].base
		switch {
		case next <= first:
			cleanBytes += p.sizes[i]
		case s.base < end:
			dirtyBytes += p.sizes[i]
			if firstDirtySeg < 0 {
				firstDirtySeg = i
			}
		}
	}
	due := false
	if h := l.nextHorizonMs.Load(); h > 0 && nowMs >= h {
		due = true
	}
	if dirtyBytes > 0 && end > first {
		ratio := float64(dirtyBytes) / float64(cleanBytes+dirtyBytes)
		if env.force || ratio > p.cfg.MinCleanableDirtyRatio || (p.cfg.MinCleanableDirtyRatio <= 0 && ratio > 0) {
			due = true
		} else if p.cfg.MaxCompactionLagMs > 0 && p.cfg.MaxCompactionLagMs < math.MaxInt64 && firstDirtySeg >= 0 {
			// max.compaction.lag.ms: the oldest dirty record is due.
			var hdr [batchHeaderSize]byte
			s := p.segs[firstDirtySeg]
			if p.sizes[firstDirtySeg] >= batchHeaderSize && readFull(s.log, hdr[:], 0) == nil {
				ts := parseHeader(hdr[:]).MaxTimestamp
				if ts >= 0 && nowMs-ts > p.cfg.MaxCompactionLagMs {
					due = true
				}
			}
		}
	}
	return due
}
