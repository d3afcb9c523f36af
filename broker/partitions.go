package broker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"sharq/config"
	"sharq/log"
	"sharq/raftmeta"
)

// topicParts is the set of partition logs this node serves for one topic.
type topicParts struct {
	id    raftmeta.UUID
	parts []*partition
}

// partition is a served partition: its log and the long-polls parked on it.
type partition struct {
	topic string
	index int32
	h     *log.Partition

	mu      sync.Mutex
	waiters map[chan struct{}]struct{}
}

// waiter is one parked long-poll. It may be registered on many partitions;
// the first wake-up wins and the rest are no-ops (the channel holds one).
type waiter struct {
	ch chan struct{}
}

func newWaiter() *waiter { return &waiter{ch: make(chan struct{}, 1)} }

func (p *partition) addWaiter(w *waiter) { p.Watch(w.ch) }

func (p *partition) removeWaiter(w *waiter) { p.Unwatch(w.ch) }

// Watch registers ch for one non-blocking send at the next append (or
// high-watermark move); share.PartitionLog.
func (p *partition) Watch(ch chan struct{}) {
	p.mu.Lock()
	if p.waiters == nil {
		p.waiters = make(map[chan struct{}]struct{})
	}
	p.waiters[ch] = struct{}{}
	p.mu.Unlock()
}

// Unwatch removes ch; share.PartitionLog.
func (p *partition) Unwatch(ch chan struct{}) {
	p.mu.Lock()
	delete(p.waiters, ch)
	p.mu.Unlock()
}

// wake fires every parked waiter once; they re-register if they park again.
func (p *partition) wake() {
	p.mu.Lock()
	for ch := range p.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
		delete(p.waiters, ch)
	}
	p.mu.Unlock()
}

// acquire pins the partition's log for one request (release when done).
// A partition whose log cannot be served answers KAFKA_STORAGE_ERROR with
// why, as Kafka answers for a partition in an offline log dir.
func (p *partition) acquire() (*log.Log, error) { return p.h.Acquire() }

func (p *partition) release() { p.h.Release() }

// log is the log pinned by acquire.
func (p *partition) log() *log.Log { return p.h.Peek() }

// stats are the log's offsets for gauges and lag, without opening it.
func (p *partition) stats() (log.PartitionStats, bool) { return p.h.Stats() }

// offlinePartitions lists the served partitions whose log cannot be
// served, sorted, with why.
func (s *Server) offlinePartitions() []log.OfflinePartition {
	s.partsMu.RLock()
	var out []log.OfflinePartition
	for name, tp := range s.topics {
		for _, p := range tp.parts {
			if p == nil {
				continue
			}
			if err := p.h.Offline(); err != nil {
				out = append(out, log.OfflinePartition{Topic: name, Partition: p.index, Err: err})
			}
		}
	}
	s.partsMu.RUnlock()
	slices.SortFunc(out, func(a, b log.OfflinePartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

// partitionFor returns the served partition, or nil.
func (s *Server) partitionFor(topic string, index int32) *partition {
	s.partsMu.RLock()
	defer s.partsMu.RUnlock()
	tp := s.topics[topic]
	if tp == nil || index < 0 || int(index) >= len(tp.parts) {
		return nil
	}
	return tp.parts[index]
}

// syncPartitions makes the open partition logs match the metadata image:
// it opens logs for partitions this node leads and removes those of topics
// that no longer exist (or were recreated with a new id). It is idempotent
// and runs at start-up and after every metadata change made through this
// node.
func (s *Server) syncPartitions() error {
	removed, err := s.syncPartitionLogs()
	if s.virtual {
		s.fenceStopped() // vnodes.go
	}
	if len(removed) == 0 {
		return err
	}
	// Committed offsets and share state of deleted topics go with them;
	// outside partsMu, as the coordinators take their own locks. New calls
	// this before the coordinators start loading, but with no topic open
	// yet, so nothing is removed then and nothing waits.
	if s.coordReady == nil || s.awaitCoordinators(s.ctx) != nil {
		return err
	}
	for _, r := range removed {
		s.groupTopicDeleted(r.name)
		if s.share != nil {
			s.share.TopicDeleted([16]byte(r.id))
		}
	}
	return err
}

type removedTopic struct {
	name string
	id   raftmeta.UUID
}

func (s *Server) syncPartitionLogs() ([]removedTopic, error) {
	img := s.meta.Image()
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	var removed []removedTopic
	for name, tp := range s.topics {
		t := img.Topics[name]
		if t != nil && t.ID == tp.id {
			continue
		}
		for _, p := range tp.parts {
			if p == nil {
				continue
			}
			if err := s.logs.Delete(name, p.index); err != nil {
				s.logger.Error("delete partition log", "topic", name, "partition", p.index, "err", err)
			}
			p.wake()
		}
		delete(s.topics, name)
		removed = append(removed, removedTopic{name, tp.id})
	}
	for name, t := range img.Topics {
		if isInternalTopic(name) {
			continue // no log: see ensureInternalTopic
		}
		tp := s.topics[name]
		if tp == nil {
			tp = &topicParts{id: t.ID}
			s.topics[name] = tp
		}
		cfg, err := s.logConfig(t.Configs)
		if err != nil {
			return removed, fmt.Errorf("topic %s: %w", name, err)
		}
		for i := range t.Partitions {
			if i < len(tp.parts) && tp.parts[i] != nil {
				tp.parts[i].h.SetConfig(cfg)
				continue
			}
			if s.vnode(t.Partitions[i].Leader) == nil { // led by another process
				continue
			}
			// The log opens on first use (and in the manager's start-up
			// check); one that cannot be opened is offline, the others
			// are served.
			h := s.logs.Partition(name, int32(i), log.TopicID(t.ID), cfg)
			for len(tp.parts) <= i {
				tp.parts = append(tp.parts, nil)
			}
			tp.parts[i] = &partition{topic: name, index: int32(i), h: h}
		}
	}
	return removed, nil
}

// logConfig turns a topic's config overrides (with broker defaults) into the
// storage layer's settings.
func (s *Server) logConfig(overrides map[string]string) (log.Config, error) {
	get := func(name string) string { return config.TopicValue(s.effectiveConfig(), overrides, name) }
	var firstErr error
	num := func(name string) int64 {
		v, err := strconv.ParseInt(strings.TrimSpace(get(name)), 10, 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("config %s: %w", name, err)
		}
		return v
	}
	c := log.Config{
		SegmentBytes:         num("segment.bytes"),
		SegmentMs:            num("segment.ms"),
		RetentionMs:          num("retention.ms"),
		RetentionBytes:       num("retention.bytes"),
		IndexIntervalBytes:   int32(num("index.interval.bytes")),
		MaxMessageBytes:      int32(num("max.message.bytes")),
		FlushMessages:        num("flush.messages"),
		FlushMs:              num("flush.ms"),
		TimestampBeforeMaxMs: num("message.timestamp.before.max.ms"),
		TimestampAfterMaxMs:  num("message.timestamp.after.max.ms"),
	}
	if get("message.timestamp.type") == "LogAppendTime" {
		c.TimestampType = log.LogAppendTime
	}
	for _, p := range splitList(get("cleanup.policy")) {
		switch p {
		case "compact":
			c.CleanupCompact = true
		case "delete":
			c.CleanupDelete = true
		}
	}
	if c.CleanupCompact {
		c.DeleteRetentionMs = num("delete.retention.ms")
		if c.DeleteRetentionMs == 0 {
			c.DeleteRetentionMs = -1 // 0 is "remove at once"; the zero Config means Kafka's default
		}
		c.MinCompactionLagMs = num("min.compaction.lag.ms")
		c.MaxCompactionLagMs = num("max.compaction.lag.ms")
		ratio, err := strconv.ParseFloat(strings.TrimSpace(get("min.cleanable.dirty.ratio")), 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("config min.cleanable.dirty.ratio: %w", err)
		}
		c.MinCleanableDirtyRatio = ratio
	}
	return c, firstErr
}
