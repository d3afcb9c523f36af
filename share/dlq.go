package share

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"sharq/log/clock"
)

// Dead-letter queues (KIP-1191, share.version 2) as Kafka 4.4's
// ShareGroupDLQStateManager does them: a record rejected by a client, or
// released or timed out on its last permitted delivery, goes Archiving
// (persisted), one record per offset is produced to the group's
// errors.deadletterqueue.topic.name, and the range becomes Archived
// whether the write succeeded or failed for good (best effort). SPSO stops
// at Archiving records until they settle; Archiving ranges found when a
// share-partition loads are written again (a duplicate is allowed, a loss
// is not).

// DLQ is how the Manager reaches topics for dead-letter writes; the broker
// implements it.
type DLQ interface {
	// Topic reports whether topic exists, its partition count and its
	// errors.deadletterqueue.group.enable.
	Topic(name string) (partitions int32, groupEnable, ok bool)
	// CreateTopic creates a dead-letter topic with the broker's defaults,
	// errors.deadletterqueue.group.enable=true and CreateTime timestamps.
	// A topic that exists already is not an error.
	CreateTopic(name string) error
	// TopicName is a source topic's name, "" if unknown.
	TopicName(id [16]byte) string
	// SourceRecords reads the keys and values of offsets first..last of a
	// source partition (copy enabled); offsets without a record are absent.
	SourceRecords(topicID [16]byte, partition int32, first, last int64) (map[int64]SourceRecord, error)
	// Append writes recs to one partition of topic as one uncompressed
	// CreateTime batch.
	Append(topic string, partition int32, recs []DLQRecord) error
}

// SourceRecord is the key and value of a source record; nil is null.
type SourceRecord struct{ Key, Value []byte }

// DLQRecord is one dead-letter record.
type DLQRecord struct {
	Timestamp  int64 // ms, the time of the write
	Key, Value []byte
	Headers    []Header
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// The dead-letter headers (ShareGroupDLQStateManager.ProduceRequestHandler).
const (
	HeaderDLQTopic         = "__dlq.errors.topic"
	HeaderDLQPartition     = "__dlq.errors.partition"
	HeaderDLQOffset        = "__dlq.errors.offset"
	HeaderDLQGroup         = "__dlq.errors.group"
	HeaderDLQDeliveryCount = "__dlq.errors.delivery.count"
	HeaderDLQMessage       = "__dlq.errors.message"
)

// Retries as Kafka's DLQ sender: exponential from 1 s, at most 30 s, 5
// attempts in all (Kafka adds ±20% jitter; sharq does not, so tests can
// drive it on a fake clock).
const (
	dlqBackoff     = time.Second
	dlqBackoffMax  = 30 * time.Second
	dlqMaxAttempts = 5
	// dlqChunkBytes bounds one append (Kafka splits at the DLQ topic's
	// max.message.bytes, 1 MiB by default).
	dlqChunkBytes = 1 << 20
)

// errDLQConfig is a dead-letter configuration problem: no retry, the range
// is archived at once (Kafka's validateDlqTopic).
var errDLQConfig = errors.New("share: dead-letter queue misconfigured")

// DLQStats counts dead-letter outcomes of one (group, source topic).
type DLQStats struct {
	Group, Topic string
	Records      int64 // records written to the dead-letter topic
	Failures     int64 // records archived without a dead-letter write
}

type dlqStatsKey struct{ group, topic string }

type dlqJob struct {
	key     Key
	r       ArchivingRange
	attempt int
}

// dlqQueue is the Manager's dead-letter worker: one goroutine, jobs in
// order, retries re-queued by timers on the Manager's clock.
type dlqQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []dlqJob
	closed  bool
	timers  map[clock.Timer]struct{}
	stats   map[dlqStatsKey]*DLQStats
	done    chan struct{}
	running int // jobs taken but not finished (tests wait for idle)
}

func (m *Manager) startDLQ() {
	q := &dlqQueue{timers: map[clock.Timer]struct{}{}, stats: map[dlqStatsKey]*DLQStats{}, done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	m.dlqq = q
	go m.dlqLoop()
}

func (m *Manager) stopDLQ() {
	q := m.dlqq
	if q == nil {
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	for t := range q.timers {
		t.Stop()
	}
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.done
}

func (m *Manager) dlqLoop() {
	q := m.dlqq
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.jobs) == 0 && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		j := q.jobs[0]
		q.jobs = q.jobs[1:]
		q.running++
		q.mu.Unlock()
		m.runDLQJob(j)
		q.mu.Lock()
		q.running--
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}

func (q *dlqQueue) push(j dlqJob) {
	q.mu.Lock()
	if !q.closed {
		q.jobs = append(q.jobs, j)
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

// scheduleDLQLocked queues the dead-letter writes of p's Archiving ranges
// that are not queued yet. Called with p.mu held.
func (m *Manager) scheduleDLQLocked(p *part) {
	if m.dlqq == nil {
		return
	}
	p.archScratch = p.sp.Archiving(p.archScratch[:0])
	for _, r := range p.archScratch {
		// The parts of r that no queued job covers (an Archiving range
		// may have merged with one that is queued already).
		next := r.FirstOffset
		for _, q := range p.dlqQueued {
			if q.LastOffset < next || q.FirstOffset > r.LastOffset {
				continue
			}
			if q.FirstOffset > next {
				m.queueRange(p, ArchivingRange{next, q.FirstOffset - 1, r.DeliveryCount, r.Cause})
			}
			next = max(next, q.LastOffset+1)
		}
		if next <= r.LastOffset {
			m.queueRange(p, ArchivingRange{next, r.LastOffset, r.DeliveryCount, r.Cause})
		}
	}
}

func (m *Manager) queueRange(p *part, r ArchivingRange) {
	p.dlqQueued = append(p.dlqQueued, r)
	m.dlqq.push(dlqJob{key: p.key, r: r})
}

// runDLQJob makes one attempt at a range's dead-letter write and settles
// it, or schedules the next attempt.
func (m *Manager) runDLQJob(j dlqJob) {
	st := m.settings(j.key.Group)
	written, err := m.writeDLQ(j, &st)
	if err != nil && !errors.Is(err, errDLQConfig) && j.attempt+1 < dlqMaxAttempts {
		d := min(dlqBackoff<<j.attempt, dlqBackoffMax)
		m.logger.Warn("dead-letter write failed, retrying", "group", j.key.Group, "key", j.key.String(),
			"offsets", fmt.Sprintf("%d-%d", j.r.FirstOffset, j.r.LastOffset), "attempt", j.attempt+1, "in", d, "err", err)
		j.attempt++
		q := m.dlqq
		q.mu.Lock()
		if !q.closed {
			var t clock.Timer
			t = m.clock.AfterFunc(d, func() {
				q.mu.Lock()
				delete(q.timers, t)
				q.mu.Unlock()
				q.push(j)
			})
			q.timers[t] = struct{}{}
		}
		q.mu.Unlock()
		if m.dlqDone != nil {
			m.dlqDone(j.r, false)
		}
		return
	}
	n := j.r.LastOffset - j.r.FirstOffset + 1
	if err != nil {
		m.logger.Error("Failed to write to DLQ, proceeding to ARCHIVED regardless.", "group", j.key.Group, "key", j.key.String(),
			"offsets", fmt.Sprintf("%d-%d", j.r.FirstOffset, j.r.LastOffset), "attempts", j.attempt+1, "err", err)
	}
	m.countDLQ(j.key, written, n-written)
	m.settleDLQ(j)
	if m.dlqDone != nil {
		m.dlqDone(j.r, true)
	}
}

// settleDLQ archives a range whose dead-letter write is over.
func (m *Manager) settleDLQ(j dlqJob) {
	p := m.loaded(j.key)
	if p == nil {
		return // deleted meanwhile
	}
	p.mu.Lock()
	for i, q := range p.dlqQueued {
		if q.FirstOffset == j.r.FirstOffset && q.LastOffset == j.r.LastOffset {
			p.dlqQueued = append(p.dlqQueued[:i], p.dlqQueued[i+1:]...)
			break
		}
	}
	eff := p.sp.SettleArchiving(j.r.FirstOffset, j.r.LastOffset)
	w := p.stageKafkaWriteLocked(eff)
	m.afterLocked(p, eff)
	p.mu.Unlock()
	if err := m.commit(p, w); err != nil {
		m.logger.Error("persist after dead-letter write", "err", err)
	}
}

// validateDLQ is Kafka's validateDlqTopic; it also returns whether the
// topic exists and its partition count.
func (m *Manager) validateDLQ(group string, st *Settings) (partitions int32, exists bool, err error) {
	name := st.DLQTopic
	switch {
	case name == "":
		return 0, false, fmt.Errorf("%w: Configured DLQ topic name in share group: %s is empty.", errDLQConfig, group)
	case strings.HasPrefix(name, "__"):
		return 0, false, fmt.Errorf("%w: Configured DLQ topic name in share group: %s cannot start with __, topic: %s.", errDLQConfig, group, name)
	}
	partitions, enabled, exists := m.dlq.Topic(name)
	if exists && !enabled {
		return 0, true, fmt.Errorf("%w: DLQ is not enabled on configured DLQ topic for share group: %s, topic: %s.", errDLQConfig, group, name)
	}
	if !exists && !st.DLQAutoCreate {
		return 0, false, fmt.Errorf("%w: DLQ topic does not exist and auto create is disabled on cluster for share group: %s, topic: %s.", errDLQConfig, group, name)
	}
	if st.DLQPrefix != "" && !strings.HasPrefix(name, st.DLQPrefix) {
		return 0, exists, fmt.Errorf("%w: Configured DLQ topic name does not comply with the DLQ topic prefix in share group: %s, topic: %s, prefix: %s.", errDLQConfig, group, name, st.DLQPrefix)
	}
	return partitions, exists, nil
}

// writeDLQ writes one record per offset of j.r and returns how many it
// wrote before an error.
func (m *Manager) writeDLQ(j dlqJob, st *Settings) (int64, error) {
	if m.faults.armedDLQ.Load() > 0 && m.failDLQ(j.key) { // manager_faults.go
		return 0, errInjectedDLQ
	}
	partitions, exists, err := m.validateDLQ(j.key.Group, st)
	if err != nil {
		return 0, err
	}
	if !exists {
		if err := m.dlq.CreateTopic(st.DLQTopic); err != nil {
			return 0, fmt.Errorf("create DLQ topic %s: %w", st.DLQTopic, err)
		}
		var ok bool
		if partitions, _, ok = m.dlq.Topic(st.DLQTopic); !ok {
			return 0, fmt.Errorf("DLQ topic %s not found after creating it", st.DLQTopic)
		}
	}
	if partitions <= 0 {
		return 0, fmt.Errorf("DLQ topic partition count could not be found for share group %s with DLQ topic %s.", j.key.Group, st.DLQTopic)
	}
	dest := j.key.Partition % partitions
	topic := m.dlq.TopicName(j.key.TopicID)
	if topic == "" {
		// Kafka: the topic id as a string when the name lookup fails.
		topic = UUIDString(j.key.TopicID)
	}
	var src map[int64]SourceRecord
	if st.DLQCopy {
		src, err = m.dlq.SourceRecords(j.key.TopicID, j.key.Partition, j.r.FirstOffset, j.r.LastOffset)
		if err != nil {
			m.logger.Warn("Unable to fetch original record data; DLQ records will be produced with headers only.",
				"group", j.key.Group, "key", j.key.String(), "err", err)
			src = nil
		}
	}
	partition := []byte(strconv.Itoa(int(j.key.Partition)))
	group := []byte(j.key.Group)
	count := []byte(strconv.Itoa(int(j.r.DeliveryCount)))
	msg := []byte(j.r.Cause.Message())
	topicB := []byte(topic)
	var written int64
	var recs []DLQRecord
	size := 0
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		if err := m.dlq.Append(st.DLQTopic, dest, recs); err != nil {
			return fmt.Errorf("produce to DLQ topic %s partition %d: %w", st.DLQTopic, dest, err)
		}
		written += int64(len(recs))
		recs, size = recs[:0], 0
		return nil
	}
	for off := j.r.FirstOffset; off <= j.r.LastOffset; off++ {
		rec := DLQRecord{Timestamp: m.clock.Now().UnixMilli()}
		if sr, ok := src[off]; ok {
			rec.Key, rec.Value = sr.Key, sr.Value
		}
		rec.Headers = []Header{
			{HeaderDLQTopic, topicB},
			{HeaderDLQPartition, partition},
			{HeaderDLQOffset, []byte(strconv.FormatInt(off, 10))},
			{HeaderDLQGroup, group},
			{HeaderDLQDeliveryCount, count},
		}
		if len(msg) > 0 {
			rec.Headers = append(rec.Headers, Header{HeaderDLQMessage, msg})
		}
		n := len(rec.Key) + len(rec.Value) + 200
		if size+n > dlqChunkBytes && len(recs) > 0 {
			if err := flush(); err != nil {
				return written, err
			}
		}
		recs = append(recs, rec)
		size += n
	}
	return written, flush()
}

func (m *Manager) countDLQ(k Key, written, failed int64) {
	topic := m.dlq.TopicName(k.TopicID)
	if topic == "" {
		topic = UUIDString(k.TopicID)
	}
	q := m.dlqq
	q.mu.Lock()
	s := q.stats[dlqStatsKey{k.Group, topic}]
	if s == nil {
		s = &DLQStats{Group: k.Group, Topic: topic}
		q.stats[dlqStatsKey{k.Group, topic}] = s
	}
	s.Records += written
	s.Failures += failed
	q.mu.Unlock()
}

// DLQStats snapshots the dead-letter counters (metrics).
func (m *Manager) DLQStats() []DLQStats {
	if m.dlqq == nil {
		return nil
	}
	q := m.dlqq
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]DLQStats, 0, len(q.stats))
	for _, s := range q.stats {
		out = append(out, *s)
	}
	return out
}

// DLQIdle reports whether no dead-letter write is queued or running;
// retries waiting on a timer do not count (tests).
func (m *Manager) DLQIdle() bool {
	if m.dlqq == nil {
		return true
	}
	q := m.dlqq
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs) == 0 && q.running == 0
}

// UUIDString is Kafka's Uuid.toString: URL-safe base64 without padding.
func UUIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
