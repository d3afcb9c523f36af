package txn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sort"
	"sync"
	"time"

	"sharq/log/clock"
)

// Markers writes transaction markers into partition logs (Kafka's
// WriteTxnMarkers). A partition that no longer exists is not an error.
type Markers interface {
	WriteMarker(tp TopicPartition, producerID int64, epoch int16, commit bool) error
}

// Offsets completes the offsets a transaction staged in a consumer group
// (TxnOffsetCommit): made visible on commit, dropped on abort.
type Offsets interface {
	CompleteTxnOffsets(group string, producerID int64, commit bool) error
}

// Config configures a Coordinator.
type Config struct {
	Store   Store        // required
	IDs     *IDAllocator // required
	Markers Markers      // required
	Offsets Offsets      // nil = no consumer groups
	// PartitionExists reports whether a topic partition exists
	// (AddPartitionsToTxn answers UNKNOWN_TOPIC_OR_PARTITION otherwise);
	// nil = every partition exists.
	PartitionExists func(TopicPartition) bool
	Clock           clock.Clock // nil = clock.Real()
	Logger          *slog.Logger
	// Settings returns the current limits (dynamic configs); nil = Kafka's
	// defaults.
	Settings func() Settings
}

// Settings are the coordinator's limits.
type Settings struct {
	MaxTimeout   time.Duration // transaction.max.timeout.ms
	IDExpiration time.Duration // transactional.id.expiration.ms
}

// DefaultSettings are Kafka 4.4's defaults.
func DefaultSettings() Settings {
	return Settings{MaxTimeout: 15 * time.Minute, IDExpiration: 7 * 24 * time.Hour}
}

// Coordinator is the transaction coordinator of this node: it owns every
// transactional id. Each id's operations are serialised by the id's own
// lock, held across the durable writes and the marker writes they need, so
// a request observes the result of the previous one.
type Coordinator struct {
	store    Store
	ids      *IDAllocator
	markers  Markers
	offsets  Offsets
	exists   func(TopicPartition) bool
	clock    clock.Clock
	logger   *slog.Logger
	settings func() Settings

	mu     sync.Mutex
	closed bool
	txns   map[string]*entry
}

type entry struct {
	mu   sync.Mutex
	id   string
	meta Metadata
	dead bool // removed from the map (expired); a new entry replaces it
}

// New loads the stored transaction state. Transactions found prepared
// (PrepareCommit, PrepareAbort: the node stopped between the decision and
// the last marker) are completed by the first CompleteUnfinished call.
func New(cfg Config) (*Coordinator, error) {
	if cfg.Store == nil || cfg.IDs == nil || cfg.Markers == nil {
		return nil, errors.New("transaction coordinator: store, id allocator and marker writer are required")
	}
	c := &Coordinator{store: cfg.Store, ids: cfg.IDs, markers: cfg.Markers, offsets: cfg.Offsets,
		exists: cfg.PartitionExists, clock: cfg.Clock, logger: cfg.Logger, settings: cfg.Settings, txns: map[string]*entry{}}
	if c.exists == nil {
		c.exists = func(TopicPartition) bool { return true }
	}
	if c.clock == nil {
		c.clock = clock.Real()
	}
	if c.logger == nil {
		c.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.settings == nil {
		c.settings = DefaultSettings
	}
	all, err := cfg.Store.Load()
	if err != nil {
		return nil, fmt.Errorf("transaction coordinator: %w", err)
	}
	for id, m := range all {
		c.txns[id] = &entry{id: id, meta: m}
	}
	return c, nil
}

// Close makes every later call fail with ErrNotCoordinator.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func (c *Coordinator) nowMs() int64 { return c.clock.Now().UnixMilli() }

// lock returns the locked entry of id (creating it when create is set), or
// nil if there is none.
func (c *Coordinator) lock(id string, create bool) (*entry, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrNotCoordinator
		}
		e := c.txns[id]
		if e == nil {
			if !create {
				c.mu.Unlock()
				return nil, nil
			}
			e = &entry{id: id, meta: Metadata{ProducerID: noProducerID, PrevProducerID: noProducerID, NextProducerID: noProducerID,
				Epoch: noEpoch, LastEpoch: noEpoch, State: Empty, StartMs: -1}}
			c.txns[id] = e
		}
		c.mu.Unlock()
		e.mu.Lock()
		if e.dead {
			e.mu.Unlock()
			continue
		}
		return e, nil
	}
}

// put makes next the id's durable state, then its current one.
func (c *Coordinator) put(e *entry, next Metadata) error {
	if err := c.store.Put(e.id, &next); err != nil {
		c.logger.Error("write transaction state", "transactional_id", e.id, "err", err)
		return err
	}
	e.meta = next
	return nil
}

// NewProducerID hands out a producer id for an idempotent producer
// (InitProducerId without a transactional id): a fresh id, epoch 0.
func (c *Coordinator) NewProducerID(ctx context.Context) (int64, error) {
	return c.ids.Next(ctx)
}

// ProducerIDAndEpoch is a producer's identity.
type ProducerIDAndEpoch struct {
	ProducerID int64
	Epoch      int16
}

// InitProducerID is InitProducerId with a transactional id (Kafka's
// TransactionCoordinator.handleInitProducerId): a new id gets a producer id
// and epoch 0; a known one gets its epoch bumped (a new producer id once
// the epoch is exhausted), which fences older producers; an open
// transaction is aborted first. expected (v3+, KIP-360) is the producer's
// current id and epoch when it re-initialises after an error, nil if none.
func (c *Coordinator) InitProducerID(ctx context.Context, id string, timeoutMs int32, expected *ProducerIDAndEpoch) (ProducerIDAndEpoch, error) {
	fail := ProducerIDAndEpoch{ProducerID: noProducerID, Epoch: noEpoch}
	if id == "" {
		return fail, ErrInvalidRequest
	}
	if timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > c.settings().MaxTimeout {
		return fail, ErrInvalidTransactionTimeout
	}
	e, err := c.lock(id, true)
	if err != nil {
		return fail, err
	}
	defer e.mu.Unlock()
	m := &e.meta
	if m.ProducerID == noProducerID {
		pid, err := c.ids.Next(ctx)
		if err != nil {
			c.mu.Lock()
			delete(c.txns, id)
			c.mu.Unlock()
			e.dead = true
			return fail, err
		}
		m.ProducerID = pid
		m.LastUpdateMs = c.nowMs()
	}
	if expected != nil {
		valid := m.Epoch == noEpoch || expected.ProducerID == m.ProducerID ||
			(expected.ProducerID == m.PrevProducerID && epochExhausted(expected.Epoch))
		if !valid {
			return fail, ErrProducerFenced
		}
	}
	switch m.State {
	case PrepareCommit, PrepareAbort:
		// markers still to be written: the background completion retries
		return fail, ErrConcurrentTransactions
	case Ongoing:
		// Kafka fences the epoch, aborts, and answers CONCURRENT_TRANSACTIONS
		// so that the client retries and gets a second bump; the abort is
		// done here synchronously, so the retry's bump follows at once.
		if err := c.fenceAndAbortLocked(e); err != nil {
			return fail, err
		}
		if e.meta.State != CompleteAbort {
			return fail, ErrConcurrentTransactions
		}
	}
	now := c.nowMs()
	next := e.meta
	next.TimeoutMs = timeoutMs
	next.Partitions, next.Groups = nil, nil
	next.StartMs = -1
	next.LastUpdateMs = now
	next.State = Empty
	if epochExhausted(m.Epoch) && (expected == nil || expected.Epoch == m.Epoch) {
		pid, err := c.ids.Next(ctx)
		if err != nil {
			return fail, err
		}
		next.PrevProducerID = m.ProducerID
		next.ProducerID, next.Epoch = pid, 0
		next.LastEpoch = noEpoch
		if expected != nil {
			next.LastEpoch = m.Epoch
		}
	} else {
		switch {
		case expected == nil:
			next.Epoch, next.LastEpoch = m.Epoch+1, noEpoch
		case m.Epoch == noEpoch || expected.Epoch == m.Epoch:
			next.Epoch, next.LastEpoch = m.Epoch+1, m.Epoch
		case expected.Epoch == m.LastEpoch:
			// a retry of a call that succeeded: the same epoch again
		default:
			return fail, ErrProducerFenced
		}
	}
	if err := c.put(e, next); err != nil {
		return fail, err
	}
	c.logger.Info("initialized transactional id", "transactional_id", id, "producer_id", next.ProducerID, "epoch", next.Epoch)
	return ProducerIDAndEpoch{ProducerID: next.ProducerID, Epoch: next.Epoch}, nil
}

// fenceAndAbortLocked aborts the open transaction of e with a bumped epoch
// (Kafka's prepareFenceProducerEpoch followed by an abort from the
// coordinator), so the producer that opened it is fenced.
func (c *Coordinator) fenceAndAbortLocked(e *entry) error {
	m := &e.meta
	fenced := m.Epoch
	if fenced < math.MaxInt16 {
		fenced++
	}
	next := *m
	next.Epoch = fenced
	next.LastEpoch = noEpoch
	return c.endLocked(e, next, false, true, true)
}

// endLocked writes the decision (PrepareCommit/PrepareAbort from next),
// the markers and the completion. tv2 bumps the epoch as transaction
// version 2 does. With the decision durable, a marker failure leaves the
// transaction prepared; CompleteUnfinished finishes it later.
func (c *Coordinator) endLocked(e *entry, base Metadata, commit, tv2, noPartitionAdded bool) error {
	now := c.nowMs()
	next := base
	next.State = PrepareAbort
	if commit {
		next.State = PrepareCommit
	}
	next.TV2 = tv2
	next.NextProducerID = noProducerID
	if tv2 {
		if base.Epoch == math.MaxInt16 && !commit {
			c.logger.Error("aborting with an exhausted epoch", "transactional_id", e.id, "producer_id", base.ProducerID)
		} else {
			next.Epoch = base.Epoch + 1
		}
		next.LastEpoch = base.Epoch
		if epochExhausted(next.Epoch) {
			pid, err := c.ids.Next(context.Background())
			if err != nil {
				return err
			}
			next.NextProducerID = pid
		}
	}
	if noPartitionAdded && len(base.Partitions) == 0 && len(base.Groups) == 0 {
		next.StartMs = now
	}
	next.LastUpdateMs = now
	if err := c.put(e, next); err != nil {
		return err
	}
	return c.completeLocked(e)
}

// completeLocked writes the markers and staged offsets of a prepared
// transaction and then its Complete state.
func (c *Coordinator) completeLocked(e *entry) error {
	m := e.meta
	commit := m.State == PrepareCommit
	var errs []error
	for _, tp := range m.Partitions {
		if err := c.markers.WriteMarker(tp, m.ProducerID, m.Epoch, commit); err != nil {
			errs = append(errs, fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, err))
		}
	}
	if c.offsets != nil {
		for _, g := range m.Groups {
			if err := c.offsets.CompleteTxnOffsets(g, m.ProducerID, commit); err != nil {
				errs = append(errs, fmt.Errorf("offsets of group %s: %w", g, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		c.logger.Warn("transaction markers not all written; will retry", "transactional_id", e.id, "producer_id", m.ProducerID, "err", err)
		return nil
	}
	next := m
	next.State = CompleteAbort
	if commit {
		next.State = CompleteCommit
	}
	if m.TV2 && m.NextProducerID != noProducerID {
		next.PrevProducerID = m.ProducerID
		next.ProducerID, next.Epoch = m.NextProducerID, 0
	}
	next.NextProducerID = noProducerID
	next.Partitions, next.Groups = nil, nil
	next.LastUpdateMs = c.nowMs()
	return c.put(e, next)
}

// checkProducer validates a request's producer id and epoch for an
// operation inside a transaction (AddPartitions, AddOffsets).
func checkProducer(m *Metadata, pid int64, epoch int16) error {
	switch {
	case m.ProducerID != pid:
		return ErrInvalidProducerIDMapping
	case m.Epoch != epoch:
		return ErrProducerFenced
	case m.State == PrepareCommit || m.State == PrepareAbort:
		return ErrConcurrentTransactions
	}
	return nil
}

// AddPartitions adds partitions to the producer's transaction, starting it
// if none is open (AddPartitionsToTxn v0-4, and the implicit add of
// Produce v12+ with tv2). Unknown partitions fail the whole call with
// per-partition UNKNOWN_TOPIC_OR_PARTITION and OPERATION_NOT_ATTEMPTED for
// the rest, as Kafka does.
func (c *Coordinator) AddPartitions(id string, pid int64, epoch int16, tps []TopicPartition, tv2 bool) (map[TopicPartition]error, error) {
	if id == "" {
		return nil, ErrInvalidRequest
	}
	var unknown map[TopicPartition]error
	for _, tp := range tps {
		if !c.exists(tp) {
			if unknown == nil {
				unknown = map[TopicPartition]error{}
			}
			unknown[tp] = ErrUnknownTopicOrPartition
		}
	}
	if unknown != nil {
		for _, tp := range tps {
			if unknown[tp] == nil {
				unknown[tp] = ErrOperationNotAttempted
			}
		}
		return unknown, nil
	}
	e, err := c.lock(id, false)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, ErrInvalidProducerIDMapping
	}
	defer e.mu.Unlock()
	m := &e.meta
	if err := checkProducer(m, pid, epoch); err != nil {
		return nil, err
	}
	if m.State == Ongoing {
		all := true
		for _, tp := range tps {
			if !m.hasPartition(tp) {
				all = false
				break
			}
		}
		if all {
			return nil, nil
		}
	}
	next := *m
	now := c.nowMs()
	if m.State != Ongoing {
		next.StartMs = now
		next.TV2 = tv2
	}
	next.State = Ongoing
	next.Partitions = addPartitions(m.Partitions, tps)
	next.LastUpdateMs = now
	return nil, c.put(e, next)
}

// VerifyPartitions reports, per partition, whether it is in the producer's
// open transaction (AddPartitionsToTxn v4+ VerifyOnly, and the
// transaction.partition.verification check of Produce before v12):
// TRANSACTION_ABORTABLE for a partition that is not.
func (c *Coordinator) VerifyPartitions(id string, pid int64, epoch int16, tps []TopicPartition) (map[TopicPartition]error, error) {
	if id == "" {
		return nil, ErrInvalidRequest
	}
	e, err := c.lock(id, false)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, ErrInvalidProducerIDMapping
	}
	defer e.mu.Unlock()
	m := &e.meta
	switch {
	case m.ProducerID != pid:
		return nil, ErrInvalidProducerIDMapping
	case m.Epoch != epoch:
		return nil, ErrProducerFenced
	case m.State == PrepareCommit || m.State == PrepareAbort:
		return nil, ErrConcurrentTransactions
	}
	out := map[TopicPartition]error{}
	for _, tp := range tps {
		if !m.hasPartition(tp) || m.State != Ongoing {
			out[tp] = ErrTransactionAbortable
		}
	}
	return out, nil
}

// AddGroup adds a consumer group's offsets to the producer's transaction
// (AddOffsetsToTxn; implicitly by TxnOffsetCommit v5+ when tv2).
func (c *Coordinator) AddGroup(id string, pid int64, epoch int16, group string, tv2 bool) error {
	if id == "" {
		return ErrInvalidRequest
	}
	e, err := c.lock(id, false)
	if err != nil {
		return err
	}
	if e == nil {
		return ErrInvalidProducerIDMapping
	}
	defer e.mu.Unlock()
	m := &e.meta
	if err := checkProducer(m, pid, epoch); err != nil {
		return err
	}
	if m.State == Ongoing && m.hasGroup(group) {
		return nil
	}
	next := *m
	now := c.nowMs()
	if m.State != Ongoing {
		next.StartMs = now
		next.TV2 = tv2
	}
	next.State = Ongoing
	next.Groups = addGroup(m.Groups, group)
	next.LastUpdateMs = now
	return c.put(e, next)
}

// VerifyGroup checks that the group is part of the producer's open
// transaction (TxnOffsetCommit before v5): INVALID_TXN_STATE otherwise.
func (c *Coordinator) VerifyGroup(id string, pid int64, epoch int16, group string) error {
	e, err := c.lock(id, false)
	if err != nil {
		return err
	}
	if e == nil {
		return ErrInvalidProducerIDMapping
	}
	defer e.mu.Unlock()
	m := &e.meta
	if err := checkProducer(m, pid, epoch); err != nil {
		return err
	}
	if m.State != Ongoing || !m.hasGroup(group) {
		return ErrInvalidTxnState
	}
	return nil
}

// EndTxn commits or aborts the producer's transaction (EndTxn; tv2 for
// v5+, which bumps the epoch: the returned id and epoch are what the
// producer uses next). It follows Kafka's TransactionCoordinator.
// endTransaction and its TV2 retry table.
func (c *Coordinator) EndTxn(id string, pid int64, epoch int16, commit, tv2 bool) (ProducerIDAndEpoch, error) {
	fail := ProducerIDAndEpoch{ProducerID: noProducerID, Epoch: noEpoch}
	if id == "" {
		return fail, ErrInvalidRequest
	}
	e, err := c.lock(id, false)
	if err != nil {
		return fail, err
	}
	if e == nil {
		return fail, ErrInvalidProducerIDMapping
	}
	defer e.mu.Unlock()
	m := &e.meta
	cur := ProducerIDAndEpoch{ProducerID: m.ProducerID, Epoch: m.Epoch}
	invalidState := func() (ProducerIDAndEpoch, error) {
		c.logger.Warn("end transaction in a wrong state", "transactional_id", id, "state", m.State.String(), "commit", commit)
		return fail, ErrInvalidTxnState
	}
	if !tv2 {
		switch {
		case m.ProducerID != pid:
			return fail, ErrInvalidProducerIDMapping
		case epoch != m.Epoch:
			return fail, ErrProducerFenced
		}
		switch m.State {
		case Ongoing:
			if err := c.endLocked(e, *m, commit, false, false); err != nil {
				return fail, err
			}
			return fail, nil
		case CompleteCommit:
			if commit {
				return fail, nil
			}
		case CompleteAbort:
			if !commit {
				return fail, nil
			}
		case PrepareCommit:
			if commit {
				return fail, ErrConcurrentTransactions
			}
		case PrepareAbort:
			if !commit {
				return fail, ErrConcurrentTransactions
			}
		}
		return invalidState()
	}
	retryOnOverflow := m.PrevProducerID == pid && epoch == math.MaxInt16-1 && m.Epoch == 0
	retryOnEpochBump := m.Epoch == epoch+1
	var validEpoch bool
	switch m.State {
	case Ongoing, Empty:
		validEpoch = epoch == m.Epoch
	case PrepareCommit, PrepareAbort:
		validEpoch = retryOnEpochBump
	case CompleteCommit, CompleteAbort:
		validEpoch = retryOnEpochBump || retryOnOverflow || epoch == m.Epoch
	}
	isRetry := retryOnEpochBump || retryOnOverflow
	switch {
	case m.ProducerID != pid && !retryOnOverflow:
		return fail, ErrInvalidProducerIDMapping
	case !validEpoch:
		return fail, ErrProducerFenced
	}
	end := func(commit, noPartitionAdded bool) (ProducerIDAndEpoch, error) {
		if err := c.endLocked(e, *m, commit, true, noPartitionAdded); err != nil {
			return fail, err
		}
		after := &e.meta
		if after.State == PrepareCommit || after.State == PrepareAbort {
			// decided and durable; markers pending. The producer continues
			// with the bumped epoch (and the next id on overflow).
			if after.NextProducerID != noProducerID {
				return ProducerIDAndEpoch{ProducerID: after.NextProducerID, Epoch: 0}, nil
			}
		}
		return ProducerIDAndEpoch{ProducerID: after.ProducerID, Epoch: after.Epoch}, nil
	}
	switch m.State {
	case Ongoing:
		return end(commit, false)
	case CompleteCommit:
		if commit && isRetry {
			return cur, nil
		}
		if !commit && !isRetry {
			return end(false, true)
		}
	case CompleteAbort:
		if !commit && isRetry {
			return cur, nil
		}
		if !commit {
			return end(false, true)
		}
	case PrepareCommit:
		if commit {
			return fail, ErrConcurrentTransactions
		}
	case PrepareAbort:
		if !commit {
			return fail, ErrConcurrentTransactions
		}
	case Empty:
		if !commit {
			return end(false, true)
		}
	}
	return invalidState()
}

// CompleteUnfinished finishes transactions whose decision is durable but
// whose markers are not all written (a failed marker write, or a stop
// between the two). It returns how many it completed.
func (c *Coordinator) CompleteUnfinished() int {
	n := 0
	for _, id := range c.allIDs() {
		e, err := c.lock(id, false)
		if err != nil || e == nil {
			continue
		}
		if s := e.meta.State; s == PrepareCommit || s == PrepareAbort {
			if err := c.completeLocked(e); err == nil && e.meta.State != s {
				n++
			}
		}
		e.mu.Unlock()
	}
	return n
}

// AbortTimedOut aborts every transaction open longer than its timeout and
// fences its producer (Kafka's abortTimedOutTransactions). It returns the
// transactional ids it aborted.
func (c *Coordinator) AbortTimedOut() []string {
	var out []string
	now := c.nowMs()
	for _, id := range c.allIDs() {
		e, err := c.lock(id, false)
		if err != nil || e == nil {
			continue
		}
		m := &e.meta
		if m.State == Ongoing && m.StartMs >= 0 && m.StartMs+int64(m.TimeoutMs) < now {
			if err := c.fenceAndAbortLocked(e); err != nil {
				c.logger.Warn("abort timed-out transaction", "transactional_id", id, "err", err)
			} else {
				c.logger.Info("aborted timed-out transaction", "transactional_id", id, "producer_id", e.meta.ProducerID, "epoch", e.meta.Epoch)
				out = append(out, id)
			}
		}
		e.mu.Unlock()
	}
	return out
}

// ExpireIDs removes transactional ids idle (no transaction open) for
// longer than transactional.id.expiration.ms, as Kafka's
// removeExpiredTransactionalIds. It returns the ids removed.
func (c *Coordinator) ExpireIDs() []string {
	var out []string
	now := c.nowMs()
	exp := c.settings().IDExpiration.Milliseconds()
	for _, id := range c.allIDs() {
		e, err := c.lock(id, false)
		if err != nil || e == nil {
			continue
		}
		m := &e.meta
		switch m.State {
		case Empty, CompleteCommit, CompleteAbort:
			if m.LastUpdateMs <= now-exp {
				if err := c.store.Delete(id); err != nil {
					c.logger.Warn("expire transactional id", "transactional_id", id, "err", err)
					break
				}
				c.mu.Lock()
				delete(c.txns, id)
				c.mu.Unlock()
				e.dead = true
				out = append(out, id)
			}
		}
		e.mu.Unlock()
	}
	return out
}

// Run calls CompleteUnfinished and AbortTimedOut every abortInterval
// (transaction.abort.timed.out.transaction.cleanup.interval.ms) and
// ExpireIDs every expireInterval
// (transaction.remove.expired.transaction.cleanup.interval.ms) until ctx
// is done. It completes unfinished transactions at once on start.
func (c *Coordinator) Run(ctx context.Context, abortInterval, expireInterval time.Duration) {
	c.CompleteUnfinished()
	at := clock.NewTicker(c.clock, abortInterval)
	defer at.Stop()
	et := clock.NewTicker(c.clock, expireInterval)
	defer et.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-at.C:
			c.CompleteUnfinished()
			c.AbortTimedOut()
		case <-et.C:
			if ids := c.ExpireIDs(); len(ids) > 0 {
				c.logger.Info("removed expired transactional ids", "count", len(ids))
			}
		}
	}
}

func (c *Coordinator) allIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.txns))
	for id := range c.txns {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Description is one transactional id's state (DescribeTransactions,
// ListTransactions).
type Description struct {
	ID         string
	Metadata   Metadata
	DurationMs int64 // how long the current transaction runs, -1 if none
}

// Describe returns the state of id: ErrTransactionalIDNotFound if unknown.
func (c *Coordinator) Describe(id string) (Description, error) {
	if id == "" {
		return Description{ID: id}, ErrInvalidRequest
	}
	e, err := c.lock(id, false)
	if err != nil {
		return Description{ID: id}, err
	}
	if e == nil || e.meta.ProducerID == noProducerID {
		if e != nil {
			e.mu.Unlock()
		}
		return Description{ID: id}, ErrTransactionalIDNotFound
	}
	defer e.mu.Unlock()
	return c.describeLocked(e), nil
}

func (c *Coordinator) describeLocked(e *entry) Description {
	d := Description{ID: e.id, Metadata: e.meta, DurationMs: -1}
	d.Metadata.Partitions = append([]TopicPartition(nil), e.meta.Partitions...)
	d.Metadata.Groups = append([]string(nil), e.meta.Groups...)
	if e.meta.StartMs >= 0 {
		d.DurationMs = c.nowMs() - e.meta.StartMs
	}
	return d
}

// ListFilter selects transactions for ListTransactions.
type ListFilter struct {
	StateNames  []string // Kafka state names; empty = all
	ProducerIDs []int64  // empty = all
	// MinDurationMs: only transactions running longer than this; < 0 = all.
	MinDurationMs int64
	// Match, when set, must accept the transactional id (v2 pattern).
	Match func(id string) bool
}

// List returns the transactional ids matching f, sorted by id, and the
// state names of f it does not know (Kafka's listTransactionStates).
func (c *Coordinator) List(f ListFilter) ([]Description, []string, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, ErrNotCoordinator
	}
	c.mu.Unlock()
	var states []State
	var unknown []string
	for _, n := range f.StateNames {
		if s, ok := ParseState(n); ok {
			states = append(states, s)
		} else {
			unknown = append(unknown, n)
		}
	}
	now := c.nowMs()
	var out []Description
	for _, id := range c.allIDs() {
		e, err := c.lock(id, false)
		if err != nil || e == nil {
			continue
		}
		d := c.describeLocked(e)
		e.mu.Unlock()
		m := &d.Metadata
		if m.ProducerID == noProducerID || m.State == Dead {
			continue
		}
		if len(f.StateNames) > 0 && !containsState(states, m.State) {
			continue
		}
		if len(f.ProducerIDs) > 0 && !containsID(f.ProducerIDs, m.ProducerID) {
			continue
		}
		// As Kafka, measured from txnStartTimestamp even when it is -1.
		if f.MinDurationMs >= 0 && now-m.StartMs <= f.MinDurationMs {
			continue
		}
		if f.Match != nil && !f.Match(id) {
			continue
		}
		out = append(out, d)
	}
	return out, unknown, nil
}

func containsState(ss []State, s State) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
