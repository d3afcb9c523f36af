package log

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Partition is the manager's handle on one partition log, the way the
// broker holds it. The log behind it is opened by Acquire and pinned until
// Release. A partition whose log cannot be opened (a corrupt sealed
// segment, a full disk) is offline: Acquire returns why, wrapping
// ErrStorage, and tries again at most every Options.OfflineRetryInterval,
// so one broken partition never stops the others and a fixed one comes
// back without a restart (Kafka's offline partitions). A log that failed on
// its write path (fsync error) is reopened the same way once nobody uses
// it: the reopen recovers from what is on disk.
type Partition struct {
	m         *Manager
	topic     string
	partition int32

	mu       sync.Mutex
	cfg      Config
	id       TopicID
	log      *Log
	pins     int
	offline  error     // why the last open failed; nil when online
	failedAt time.Time // when offline was set, or the open log was found failed
	// permanent: opened through Manager.Open, whose callers keep the *Log
	// for good.
	permanent bool
	removed   bool
	lastUse   int64          // manager clock at the last Acquire; 0 = opened by a sweep only
	stats     PartitionStats // as of the last close
	haveStats bool
}

// Topic is the partition's topic.
func (p *Partition) Topic() string { return p.topic }

// Index is the partition number.
func (p *Partition) Index() int32 { return p.partition }

// Acquire returns the open log, opening (and, after an unclean stop,
// recovering) it if needed, and pins it until Release. Logs not used for
// the longest time are closed when more than Options.MaxOpenLogs are open.
func (p *Partition) Acquire() (*Log, error) {
	l, opened, err := p.acquire(true)
	if opened {
		p.m.maybeEvict()
	}
	return l, err
}

// visit runs fn on the partition's log, opening it for that only if it is
// not open (and closing it again, unless it got used meanwhile), without
// counting as a use for eviction: the manager's sweeps (start-up check,
// retention) touch every partition without loading them all.
func (p *Partition) visit(fn func(*Log)) error {
	l, opened, err := p.acquire(false)
	if err != nil {
		return err
	}
	fn(l)
	p.mu.Lock()
	p.pins--
	if opened && p.pins == 0 && p.log == l && !p.permanent && p.lastUse == 0 {
		p.closeLocked()
	}
	p.mu.Unlock()
	return nil
}

func (p *Partition) acquire(use bool) (_ *Log, opened bool, _ error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.removed {
		return nil, false, ErrClosed
	}
	if p.log != nil {
		if ferr := p.log.failure(); ferr != nil && p.pins == 0 && !p.permanent {
			now := p.m.now()
			if p.failedAt.IsZero() {
				p.failedAt = now
			}
			if now.Sub(p.failedAt) >= p.m.opts.OfflineRetryInterval {
				p.m.logger.Warn("reopening failed partition log", "topic", p.topic, "partition", p.partition, "err", ferr)
				p.closeLocked()
			}
		}
	}
	if p.log == nil {
		if err := p.openLocked(); err != nil {
			return nil, false, err
		}
		opened = true
		if !use {
			p.lastUse = 0
		}
	}
	if use {
		p.lastUse = p.m.clock.Add(1)
	}
	p.pins++
	return p.log, opened, nil
}

// Release unpins the log returned by Acquire.
func (p *Partition) Release() {
	p.mu.Lock()
	p.pins--
	p.mu.Unlock()
}

// Offline returns why the partition's log cannot be served, or nil: the
// last open failed, or the open log failed on its write path.
func (p *Partition) Offline() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.offline != nil {
		return p.offline
	}
	if p.log != nil {
		return p.log.failure()
	}
	return nil
}

// Peek returns the open log without pinning it, or nil. Only for reads of
// in-memory state (offsets, sizes for metrics): a log closed meanwhile still
// answers those.
func (p *Partition) Peek() *Log {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log
}

// SetConfig changes the config the log is (or will be) opened with.
func (p *Partition) SetConfig(cfg Config) {
	p.mu.Lock()
	p.cfg = cfg
	l := p.log
	p.mu.Unlock()
	if l != nil {
		l.SetConfig(cfg)
	}
}

func (p *Partition) openLocked() error {
	now := p.m.now()
	if p.offline != nil && now.Sub(p.failedAt) < p.m.opts.OfflineRetryInterval {
		return p.offline
	}
	l, err := p.m.openDir(p.topic, p.partition, p.id, p.cfg)
	if err != nil {
		if !errors.Is(err, ErrStorage) {
			err = fmt.Errorf("%w: %w", ErrStorage, err)
		}
		if p.offline == nil || p.offline.Error() != err.Error() {
			p.m.logger.Error("partition offline: its log cannot be opened; serving the others",
				"topic", p.topic, "partition", p.partition, "dir", p.m.partitionDir(p.topic, p.partition), "err", err)
		}
		p.offline, p.failedAt = err, now
		return err
	}
	if p.offline != nil {
		p.m.logger.Info("partition back online", "topic", p.topic, "partition", p.partition)
	}
	p.offline, p.failedAt = nil, time.Time{}
	p.log = l
	p.m.openLogs.Add(1)
	p.m.openMu.Lock()
	p.m.open[l] = struct{}{}
	p.m.openMu.Unlock()
	return nil
}

// closeLocked closes the open log. A log that failed is closed without its
// clean shutdown marker (Close says why); that was logged when it failed.
func (p *Partition) closeLocked() error {
	l := p.log
	if l == nil {
		return nil
	}
	p.log = nil
	p.failedAt = time.Time{}
	p.m.openLogs.Add(-1)
	p.m.openMu.Lock()
	delete(p.m.open, l)
	p.m.openMu.Unlock()
	p.stats, p.haveStats = statsOf(l), true
	err := l.Close()
	// Whether the log had failed is read after Close, which first waits
	// for the background fsyncs of sealed segments: read before, a
	// background fsync failing during that wait made Close's error
	// reported or not depending on which goroutine ran first.
	l.mu.RLock()
	failed := l.mu.failed
	l.mu.RUnlock()
	if failed != nil {
		return nil
	}
	return err
}

// OfflinePartition is a partition that cannot be served and why.
type OfflinePartition struct {
	Topic     string
	Partition int32
	Err       error
}

// PartitionStats are a partition log's offsets and size.
type PartitionStats struct {
	LogStartOffset int64
	LogEndOffset   int64
	HighWatermark  int64
	Size           int64
}

// Stats returns the offsets of the open log, or as they were when it was
// last closed (nothing writes a closed log, so they are exact); false if
// the log was not opened since the manager started.
func (p *Partition) Stats() (PartitionStats, bool) {
	p.mu.Lock()
	l, st, ok := p.log, p.stats, p.haveStats
	p.mu.Unlock()
	if l != nil {
		return statsOf(l), true
	}
	return st, ok
}

func statsOf(l *Log) PartitionStats {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return PartitionStats{LogStartOffset: l.mu.logStart, LogEndOffset: l.mu.leo, HighWatermark: l.hwLocked(), Size: l.size.Load()}
}

// maybeEvict starts closing the least recently used logs when more than
// MaxOpenLogs are open, in the background: closing a changed log fsyncs,
// which must not delay the request that opened one more.
func (m *Manager) maybeEvict() {
	if m.openLogs.Load() <= int64(m.maxOpen) || !m.evicting.CompareAndSwap(false, true) {
		return
	}
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		m.evicting.Store(false)
		return
	}
	m.evictWG.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.evictWG.Done()
		defer m.evicting.Store(false)
		m.evict()
	}()
}

// evict closes unpinned logs, least recently used first, until at most
// 90% of MaxOpenLogs are open.
func (m *Manager) evict() {
	target := int64(m.maxOpen) * 9 / 10
	type cand struct {
		p   *Partition
		use int64
	}
	var cands []cand
	for _, p := range m.handles() {
		p.mu.Lock()
		if p.log != nil && p.pins == 0 && !p.permanent {
			cands = append(cands, cand{p, p.lastUse})
		}
		p.mu.Unlock()
	}
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.use, b.use) })
	for _, c := range cands {
		if m.openLogs.Load() <= target {
			return
		}
		c.p.mu.Lock()
		if c.p.log != nil && c.p.pins == 0 && c.p.lastUse == c.use && !c.p.removed {
			if err := c.p.closeLocked(); err != nil {
				m.logger.Error("close idle partition log", "topic", c.p.topic, "partition", c.p.partition, "err", err)
			}
		}
		c.p.mu.Unlock()
	}
}

// defaultMaxOpenLogs derives the open-log bound from the descriptor limit:
// 512 are left for connections and the other stores, and an open log is
// reckoned at 16 descriptors (a few segments of three files each).
func defaultMaxOpenLogs() int {
	limit := FileLimit()
	if limit == 0 || limit > 1<<24 {
		return 1 << 20
	}
	return max(16, int((int64(limit)-512)/16))
}
