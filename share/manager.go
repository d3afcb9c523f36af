package share

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"sharq/log/clock"
)

// Manager is a node's share groups: the coordinator (membership and
// assignment), the share sessions of ShareFetch/ShareAcknowledge, the
// share-partitions (lock managers) with their lock timers, and the persist
// pipeline. The broker decodes a request, calls one Manager method with
// plain values and encodes the answer.
//
// Lock order (docs/locking.md has it with the other packages' orders;
// broker/ui.go and the metrics collector only ever take one of these at a
// time):
//
//  1. Manager.mu: coordinator, sessions, the share-partition registry.
//     Never held across disk I/O other than loading a share-partition's
//     state on first use.
//  2. part.wmu: serialises one share-partition's state writes (commit).
//  3. part.mu: the lock manager, its timer and its parked fetches.
//     The persister is never called under it: state is staged under part.mu
//     and written under part.wmu alone.
//  4. the log partition's own locks (PartitionLog calls, its waiters).
//  5. the dead-letter queue's mutex (a leaf: queued from under part.mu).
//     Dead-letter writes themselves run on the queue's goroutine with no
//     lock held.
//
// A goroutine may skip levels but never takes a lower-numbered lock while
// holding a higher one. Manager.mu and part.mu are never held together
// except in part() (registry insert, no part.mu) and Close.
type Manager struct {
	persister Persister
	logs      Logs
	settings  func(group string) Settings
	clock     clock.Clock
	logger    *slog.Logger

	mu       sync.Mutex
	coord    *Coordinator
	sessions map[sessionKey]*session
	parts    map[Key]*part
	// expiry is the one timer for member session timeouts.
	expiry clock.Timer

	decompress Decompressor

	dlq  DLQ       // nil: no dead-letter queues
	dlqq *dlqQueue // the dead-letter worker (dlq.go)
	// dlqDone, when set (tests), runs after each dead-letter attempt with
	// whether the range settled.
	dlqDone func(r ArchivingRange, settled bool)

	// faults are the faults the control API injects (manager_faults.go).
	faults faultState
}

// Logs is how the Manager reaches the partition logs of this node.
type Logs interface {
	// Partition is the log of a partition this node leads, or the Kafka
	// error code why not: UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION or
	// NOT_LEADER_OR_FOLLOWER.
	Partition(topicID [16]byte, partition int32) (PartitionLog, int16)
	// ReadErrorCode maps a PartitionLog.Read error to a Kafka error code;
	// 0 means the read found no data (offset out of range) and the
	// acquisition goes on without any.
	ReadErrorCode(err error) int16
}

// PartitionLog is what a share-partition reads of its log.
type PartitionLog interface {
	LogStartOffset() int64
	HighWatermark() int64
	// LastStableOffset is the end for read_committed: the first offset of
	// the oldest open transaction, or the high watermark.
	LastStableOffset() int64
	// AbortedTransactions appends the aborted transactions overlapping
	// [from, upTo) to dst, as a read_committed Fetch returns them.
	AbortedTransactions(from, upTo int64, dst []AbortedTxn) []AbortedTxn
	// Read appends whole v2 batches from offset, about maxBytes of them
	// (the first batch whole even if bigger), to dst.
	Read(offset int64, maxBytes int32, dst []byte) ([]byte, error)
	OffsetForTimestamp(ts int64) (offset, timestamp int64, err error)
	// Pin keeps the log open (and says why it cannot be served) until
	// Unpin; the reads above need it, the offsets answer without (-1 when
	// unknown).
	Pin() error
	Unpin()
	// Watch registers ch for one non-blocking send at the next append;
	// Unwatch removes it.
	Watch(ch chan struct{})
	Unwatch(ch chan struct{})
}

// Options configure a Manager.
type Options struct {
	Persister Persister
	Logs      Logs
	// Settings returns a group's effective settings; called once per
	// request.
	Settings func(group string) Settings
	Clock    clock.Clock  // nil: clock.Real()
	Logger   *slog.Logger // nil: slog.Default
	// DLQ writes dead-letter records (KIP-1191); nil turns them off.
	DLQ DLQ
	// Decompress unpacks compressed batches when key-ordered delivery
	// reads record keys (sharq/log's Decompress); nil: the records of
	// compressed batches count as unordered.
	Decompress Decompressor
}

// NewManager sets up share groups; groups with persisted state exist again
// (empty) after a restart, as in Kafka.
func NewManager(o Options) (*Manager, error) {
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := &Manager{
		persister:  o.Persister,
		logs:       o.Logs,
		settings:   o.Settings,
		clock:      o.Clock,
		logger:     o.Logger,
		coord:      NewCoordinator(),
		sessions:   map[sessionKey]*session{},
		parts:      map[Key]*part{},
		dlq:        o.DLQ,
		decompress: o.Decompress,
	}
	groups, err := o.Persister.Groups()
	if err != nil {
		return nil, fmt.Errorf("load share groups: %w", err)
	}
	for _, g := range groups {
		m.coord.EnsureGroup(g)
	}
	if m.dlq != nil {
		m.startDLQ()
	}
	return m, nil
}

// TopicPartition names a partition by topic id.
type TopicPartition struct {
	TopicID   [16]byte
	Partition int32
}

func (tp TopicPartition) key(group string) Key {
	return Key{Group: group, TopicID: tp.TopicID, Partition: tp.Partition}
}

// part is one share-partition: the lock manager, its single lock timer,
// the ShareFetches parked on it and its persist pipeline.
type part struct {
	key Key

	mu      sync.Mutex
	sp      *SharePartition
	timer   clock.Timer
	armed   time.Time
	waiters map[chan struct{}]struct{}
	release []InFlightRange
	// bytesPerOffset of the last log read, to size the next (readSize).
	bytesPerOffset float64
	// batchBytes is the average log batch size of the last read.
	batchBytes int
	// fair is the fair-acquisition bookkeeping (fair.go).
	fair fairState
	// dlqQueued are the Archiving ranges whose dead-letter writes are
	// queued or running; archScratch is reused to list them.
	dlqQueued   []ArchivingRange
	archScratch []ArchivingRange
	// staged is the latest state snapshot to write, stagedSeq its number
	// (both under mu); see commit.
	staged    State
	stagedSeq uint64
	// kafkaStart is the start offset Kafka's DescribeShareGroupOffsets
	// would show (under mu): Kafka persists a share-partition's state on
	// acknowledgements, releases and lock expiries with the SPSO as it was
	// *before* that change (the cached SPSO moves after the write), never
	// on initialisation or acquisition, so the persisted value lags the
	// live one by one write and is -1 until the first write. lastSPSO is the
	// SPSO after the last operation, the value the next such write carries.
	// The live SPSO stays in /ui and the metrics.
	kafkaStart, lastSPSO int64

	// wmu serialises writes of this share-partition's state; the fields
	// below it are under wmu. Lock order: wmu, then mu.
	wmu        sync.Mutex
	writing    State
	writtenSeq uint64
	syncedSeq  uint64
}

// part returns the share-partition for key, loading its persisted state or
// creating it uninitialised. Callers hold no share-partition lock.
func (m *Manager) part(key Key) (*part, error) {
	m.mu.Lock()
	p, loaded, err := m.partLocked(key)
	m.mu.Unlock()
	if loaded && p != nil {
		// Archiving ranges of a loaded state: their dead-letter writes
		// may not have happened (a crash in the Archiving window).
		p.mu.Lock()
		m.scheduleDLQLocked(p)
		p.mu.Unlock()
	}
	return p, err
}

// partLocked is part under m.mu; loaded reports a state read from the
// persister.
func (m *Manager) partLocked(key Key) (_ *part, loaded bool, _ error) {
	if p := m.parts[key]; p != nil {
		return p, false, nil
	}
	cfg := m.settings(key.Group).PartitionConfig()
	p := &part{key: key, kafkaStart: -1, lastSPSO: -1}
	var saved State
	found, err := m.persister.Load(key, &saved)
	if err != nil {
		return nil, false, fmt.Errorf("load share-partition %s: %w", key, err)
	}
	if found {
		sp, err := Restore(cfg, &saved)
		if err != nil {
			return nil, false, fmt.Errorf("restore share-partition %s: %w", key, err)
		}
		p.sp = sp
		// What was persisted is what Kafka would show after a restart.
		p.kafkaStart, p.lastSPSO = sp.StartOffset(), sp.StartOffset()
	} else {
		p.sp = New(cfg)
	}
	m.parts[key] = p
	return p, found, nil
}

// loaded is the share-partition for key if it is in memory.
func (m *Manager) loaded(key Key) *part {
	m.mu.Lock()
	p := m.parts[key]
	m.mu.Unlock()
	return p
}

// pendingWrite is a state snapshot an operation staged under the
// share-partition's lock and must see written (synced if sync) before it
// answers. The zero value writes nothing.
type pendingWrite struct {
	seq  uint64
	sync bool
}

// or merges two pending writes of one share-partition: the later snapshot
// covers the earlier one.
func (w pendingWrite) or(o pendingWrite) pendingWrite {
	return pendingWrite{seq: max(w.seq, o.seq), sync: w.sync || o.sync}
}

// stageLocked snapshots the share-partition's state when an operation asks
// for it. The write itself happens in commit, after p.mu is released, so
// that other members' acquisitions and acks never wait behind a durable
// write (a journal append, or an fsync with log.flush.interval.messages=1).
func (p *part) stageLocked(eff Effects) pendingWrite {
	defer func() { p.lastSPSO = p.sp.StartOffset() }()
	if !eff.Persist && !eff.Durable {
		return pendingWrite{}
	}
	p.sp.AppendState(&p.staged)
	p.stagedSeq++
	return pendingWrite{seq: p.stagedSeq, sync: eff.Durable}
}

// commit returns once the snapshot w (or a later one) is written, and
// durable if w asks for it (Persister.Write with sync). Called without p.mu.
// Writes of one share-partition are serialised under p.wmu and always write
// the latest staged snapshot, so they never go backwards, and operations
// queued behind a write share the next one (group commit).
func (m *Manager) commit(p *part, w pendingWrite) error {
	if w.seq == 0 {
		return nil
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.syncedSeq >= w.seq || (!w.sync && p.writtenSeq >= w.seq) {
		return nil
	}
	p.mu.Lock()
	seq := p.stagedSeq
	p.writing.StartOffset, p.writing.StateEpoch = p.staged.StartOffset, p.staged.StateEpoch
	p.writing.DeliveryCompleteCount = p.staged.DeliveryCompleteCount
	p.writing.Batches = append(p.writing.Batches[:0], p.staged.Batches...)
	p.mu.Unlock()
	if err := m.persister.Write(p.key, &p.writing, w.sync); err != nil {
		return fmt.Errorf("persist share-partition %s: %w", p.key, err)
	}
	p.writtenSeq = seq
	if w.sync {
		p.syncedSeq = seq
	}
	return nil
}

// stageKafkaWriteLocked is stageLocked for the changes Kafka persists
// (acknowledgements, releases, lock expiries, archiving): see kafkaStart.
func (p *part) stageKafkaWriteLocked(eff Effects) pendingWrite {
	if eff.Persist || eff.Durable {
		p.kafkaStart = p.lastSPSO
	}
	return p.stageLocked(eff)
}

// afterLocked follows up on an operation's effects: wakes parked fetches
// when records became available and re-arms the lock timer.
func (m *Manager) afterLocked(p *part, eff Effects) {
	if eff.Available || eff.SPSOMoved {
		p.wakeLocked()
	}
	if eff.Archiving {
		m.scheduleDLQLocked(p)
	}
	m.armLocked(p)
}

func (p *part) wakeLocked() {
	for ch := range p.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
		delete(p.waiters, ch)
	}
}

func (p *part) addWaiter(ch chan struct{}) {
	p.mu.Lock()
	if p.waiters == nil {
		p.waiters = map[chan struct{}]struct{}{}
	}
	p.waiters[ch] = struct{}{}
	p.mu.Unlock()
}

func (p *part) removeWaiter(ch chan struct{}) {
	p.mu.Lock()
	delete(p.waiters, ch)
	p.mu.Unlock()
}

// armLocked keeps the one timer of the share-partition set for its
// earliest acquisition lock deadline or redelivery backoff end.
func (m *Manager) armLocked(p *part) {
	next, ok := p.sp.NextWake()
	if !ok {
		if p.timer != nil {
			p.timer.Stop()
			p.armed = time.Time{}
		}
		return
	}
	if p.timer != nil && p.armed.Equal(next) {
		return
	}
	d := next.Sub(m.clock.Now())
	if p.timer == nil {
		p.timer = m.clock.AfterFunc(d, func() { m.expire(p) })
	} else {
		p.timer.Stop()
		p.timer.Reset(d)
	}
	p.armed = next
}

// expire is the share-partition's timer: expired acquisitions go back to
// Available (or are archived at the delivery limit) and records whose
// redelivery backoff ended become acquirable (parked fetches wake).
func (m *Manager) expire(p *part) {
	p.mu.Lock()
	p.armed = time.Time{}
	var eff Effects
	p.release, eff = p.sp.ExpireLocks(m.clock.Now(), p.release[:0])
	w := p.stageKafkaWriteLocked(eff)
	m.afterLocked(p, eff)
	p.mu.Unlock()
	if err := m.commit(p, w); err != nil {
		m.logger.Error("persist after lock expiry", "err", err)
	}
}

// releaseMember releases what a member holds in the given share-partitions
// (its share session closed or its connection dropped).
func (m *Manager) releaseMember(group, member string, tps []TopicPartition) {
	for _, tp := range tps {
		if p := m.loaded(tp.key(group)); p != nil {
			m.releaseMemberIn(p, member)
		}
	}
}

func (m *Manager) releaseMemberIn(p *part, member string) {
	p.mu.Lock()
	var eff Effects
	p.release, eff = p.sp.ReleaseMember(member, m.clock.Now(), p.release[:0])
	p.fair.forget(member)
	w := p.stageKafkaWriteLocked(eff)
	m.afterLocked(p, eff)
	p.mu.Unlock()
	if err := m.commit(p, w); err != nil {
		m.logger.Error("persist after member release", "err", err)
	}
}

// initLocked initialises an uninitialised share-partition from
// share.auto.offset.reset, as the first fetch on the leader does in Kafka.
// The caller commits the returned write before answering.
func (m *Manager) initLocked(p *part, lg PartitionLog, st *Settings) pendingWrite {
	if p.sp.Initialised() {
		return pendingWrite{}
	}
	reset, dur, err := ParseAutoOffsetReset(st.AutoOffsetReset)
	if err != nil {
		reset = ResetLatest
	}
	b := Bounds{LogStart: lg.LogStartOffset(), HighWatermark: lg.HighWatermark()}
	b.LastStable = b.HighWatermark
	if st.ReadCommitted {
		b.LastStable = lg.LastStableOffset()
	}
	byDuration := int64(-1)
	if reset == ResetByDuration {
		off, _, err := lg.OffsetForTimestamp(m.clock.Now().Add(-dur).UnixMilli())
		if err == nil {
			byDuration = off
		}
	}
	eff := p.sp.Initialise(ResolveStartOffset(reset, b, byDuration), 0)
	return p.stageLocked(eff)
}

// Close stops the share timers and makes pending share state durable; it
// runs before the state store closes.
func (m *Manager) Close() error {
	m.stopDLQ()
	m.mu.Lock()
	if m.expiry != nil {
		m.expiry.Stop()
	}
	parts := make([]*part, 0, len(m.parts))
	for _, p := range m.parts {
		parts = append(parts, p)
	}
	m.mu.Unlock()
	for _, p := range parts {
		p.mu.Lock()
		if p.timer != nil {
			p.timer.Stop()
		}
		if p.sp.Dirty() {
			p.stageLocked(Effects{Persist: true})
		}
		// The latest snapshot, even one whose commit failed earlier.
		w := pendingWrite{seq: p.stagedSeq}
		p.mu.Unlock()
		if err := m.commit(p, w); err != nil {
			return err
		}
	}
	return m.persister.Flush()
}
