package group

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TopicID is a Kafka topic id.
type TopicID [16]byte

// TopicInfo is what the coordinator needs to know of a topic.
type TopicInfo struct {
	ID         TopicID
	Partitions int32
}

// Settings are the effective limits and timeouts of one group: broker
// configs with the group's own overrides (consumer.session.timeout.ms, ...)
// applied by the caller.
type Settings struct {
	// Classic protocol.
	InitialRebalanceDelay time.Duration
	MinSessionTimeout     time.Duration
	MaxSessionTimeout     time.Duration
	MaxSize               int
	// Consumer protocol (KIP-848).
	ConsumerSessionTimeout    time.Duration
	ConsumerHeartbeatInterval time.Duration
	ConsumerMaxSize           int
	ConsumerAssignors         []string // first = default; "uniform", "range"
	// Streams protocol (KIP-1071).
	StreamsSessionTimeout time.Duration
	// StreamsInitialRebalanceDelay defers a new streams group's first
	// task assignment (ASSIGNMENT_DELAYED) so that more members can join.
	StreamsInitialRebalanceDelay time.Duration
	StreamsHeartbeatInterval     time.Duration
	StreamsMaxSize               int
	StreamsNumStandbyReplicas    int
	StreamsTaskOffsetInterval    time.Duration
	StreamsAcceptableRecoveryLag int64
	// Offsets.
	OffsetsRetention       time.Duration
	OffsetMetadataMaxBytes int
}

// DefaultSettings are Kafka 4.4's defaults.
func DefaultSettings() Settings {
	return Settings{
		InitialRebalanceDelay:        3 * time.Second,
		MinSessionTimeout:            6 * time.Second,
		MaxSessionTimeout:            30 * time.Minute,
		MaxSize:                      1<<31 - 1,
		ConsumerSessionTimeout:       45 * time.Second,
		ConsumerHeartbeatInterval:    5 * time.Second,
		ConsumerMaxSize:              1<<31 - 1,
		ConsumerAssignors:            []string{"uniform", "range"},
		StreamsSessionTimeout:        45 * time.Second,
		StreamsInitialRebalanceDelay: 3 * time.Second,
		StreamsHeartbeatInterval:     5 * time.Second,
		StreamsMaxSize:               1<<31 - 1,
		StreamsTaskOffsetInterval:    time.Minute,
		// Kafka's group.streams.acceptable.recovery.lag.
		StreamsAcceptableRecoveryLag: 10000,
		OffsetsRetention:             7 * 24 * time.Hour,
		OffsetMetadataMaxBytes:       4096,
	}
}

// Config configures a Coordinator.
type Config struct {
	Store  OffsetStore // required
	Clock  Clock       // nil = wall clock
	Logger *slog.Logger
	// Topics returns the cluster's topics by name (regex subscriptions,
	// assignments); nil = no topics.
	Topics func() map[string]TopicInfo
	// Settings returns a group's effective settings; nil = DefaultSettings.
	Settings func(group string) Settings
}

// Coordinator owns every group of this node.
type Coordinator struct {
	store    OffsetStore
	clock    Clock
	logger   *slog.Logger
	topics   func() map[string]TopicInfo
	settings func(group string) Settings

	// foreign reports whether a group of a type this coordinator does not
	// manage (a share group) holds an id: SetForeignGroups.
	foreign atomic.Pointer[func(id string) bool]

	// io serialises the offset-store writes of one group (striped by
	// group id). An OffsetCommit writes the store holding only its
	// stripe, not mu, so heartbeats and joins never wait for an fsync and
	// pebble can fold concurrent commits of different groups into one
	// sync. Lock order: io stripe, then mu.
	io [64]sync.Mutex

	mu struct {
		sync.Mutex
		closed   bool
		classic  map[string]*classicGroup
		consumer map[string]*consumerGroup
		streams  map[string]*streamsGroup
		offsets  map[string]map[TopicPartition]Offset
		// pending are offsets staged by open transactions, by group and
		// producer id (txn.go).
		pending map[string]map[int64]map[TopicPartition]Offset
		// emptySince is when a group last became empty (offset expiry
		// counts from there, as Kafka's currentStateTimestamp).
		emptySince map[string]time.Time
	}
}

// New loads the committed offsets and returns the coordinator.
func New(cfg Config) (*Coordinator, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("group coordinator: no offset store")
	}
	c := &Coordinator{store: cfg.Store, clock: cfg.Clock, logger: cfg.Logger, topics: cfg.Topics, settings: cfg.Settings}
	if c.clock == nil {
		c.clock = RealClock()
	}
	if c.logger == nil {
		c.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.topics == nil {
		c.topics = func() map[string]TopicInfo { return nil }
	}
	if c.settings == nil {
		c.settings = func(string) Settings { return DefaultSettings() }
	}
	offs, err := cfg.Store.Load()
	if err != nil {
		return nil, fmt.Errorf("group coordinator: %w", err)
	}
	c.mu.classic = map[string]*classicGroup{}
	c.mu.consumer = map[string]*consumerGroup{}
	c.mu.streams = map[string]*streamsGroup{}
	c.mu.offsets = offs
	if ts, ok := cfg.Store.(TxnStore); ok {
		if c.mu.pending, err = ts.LoadTxn(); err != nil {
			return nil, fmt.Errorf("group coordinator: %w", err)
		}
	}
	c.mu.emptySince = map[string]time.Time{}
	return c, nil
}

// Close fails every parked request with ErrNotCoordinator and stops the
// timers. The store is the caller's to close.
func (c *Coordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return
	}
	c.mu.closed = true
	for _, g := range c.mu.classic {
		g.shutdownLocked()
	}
	for _, g := range c.mu.consumer {
		g.shutdownLocked()
	}
	for _, g := range c.mu.streams {
		g.shutdownLocked()
	}
}

// newMemberID is Kafka's "<client id>-<uuid>" (or a bare uuid).
func newMemberID(clientID string) string {
	u := newUUID()
	if clientID == "" {
		return u
	}
	return clientID + "-" + u
}

func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("group: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Group types and the protocol type a consumer group reports.
const (
	TypeClassic  = "classic"
	TypeConsumer = "consumer"
)

// Overview is one ListGroups entry.
type Overview struct {
	ID           string
	ProtocolType string
	State        string
	Type         string
}

// ListGroups returns every group, including groups that only hold
// committed offsets (Empty classic groups, as in Kafka).
func (c *Coordinator) ListGroups() []Overview {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Overview
	seen := map[string]bool{}
	for id, g := range c.mu.classic {
		seen[id] = true
		out = append(out, Overview{ID: id, ProtocolType: g.protocolType, State: g.state.String(), Type: TypeClassic})
	}
	for id, g := range c.mu.consumer {
		seen[id] = true
		out = append(out, Overview{ID: id, ProtocolType: "consumer", State: g.stateLocked(), Type: TypeConsumer})
	}
	for id, g := range c.mu.streams {
		seen[id] = true
		out = append(out, Overview{ID: id, ProtocolType: "streams", State: g.stateLocked(), Type: TypeStreams})
	}
	for id := range c.mu.offsets {
		if !seen[id] {
			out = append(out, Overview{ID: id, State: StateEmpty.String(), Type: TypeClassic})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// SetForeignGroups tells the coordinator which group ids groups of other
// types (share groups) hold. As in Kafka, where one coordinator keeps every
// type of group under one id space, such an id is GROUP_ID_NOT_FOUND ("is
// not a consumer group") for ConsumerGroupHeartbeat, OffsetCommit,
// OffsetFetch and OffsetDelete, and INCONSISTENT_GROUP_PROTOCOL for a
// classic JoinGroup, instead of a second group of the same name. f is called
// without the coordinator's lock held, so it may take its own locks.
func (c *Coordinator) SetForeignGroups(f func(id string) bool) { c.foreign.Store(&f) }

// notOurs reports whether a group of another type holds id; a group of our
// own under the same id (left from before the check existed) wins.
func (c *Coordinator) notOurs(id string) bool {
	f := c.foreign.Load()
	return f != nil && (*f)(id) && !c.Exists(id)
}

// errNotConsumerGroup is Kafka's answer for a share group's id on the
// consumer group APIs.
func errNotConsumerGroup(id string) error {
	return withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", id))
}

// Exists reports whether the coordinator knows the group.
func (c *Coordinator) Exists(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.classic[id] != nil || c.mu.consumer[id] != nil || c.mu.streams[id] != nil || c.mu.offsets[id] != nil
}

// ioLock returns the store-write stripe of a group.
func (c *Coordinator) ioLock(group string) *sync.Mutex {
	h := uint32(2166136261)
	for i := 0; i < len(group); i++ {
		h = (h ^ uint32(group[i])) * 16777619
	}
	return &c.io[h%uint32(len(c.io))]
}

// DeleteGroups deletes empty groups and their offsets. Per group: nil,
// ErrGroupIDNotFound, ErrNonEmptyGroup or a store error.
func (c *Coordinator) DeleteGroups(ids []string) map[string]error {
	out := make(map[string]error, len(ids))
	for _, id := range ids {
		// Deletes are rare admin operations: they write the store under
		// mu too, so that no member can join between the check and the
		// delete.
		io := c.ioLock(id)
		io.Lock()
		c.mu.Lock()
		out[id] = c.deleteGroupLocked(id)
		c.mu.Unlock()
		io.Unlock()
	}
	return out
}

func (c *Coordinator) deleteGroupLocked(id string) error {
	if id == "" {
		return ErrInvalidGroupID
	}
	cg, kg, sg := c.mu.classic[id], c.mu.consumer[id], c.mu.streams[id]
	if cg == nil && kg == nil && sg == nil && c.mu.offsets[id] == nil {
		return withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s not found.", id))
	}
	if (cg != nil && cg.state != StateEmpty) || (kg != nil && len(kg.members) > 0) || (sg != nil && len(sg.members) > 0) {
		return withMsg(ErrNonEmptyGroup, fmt.Sprintf("Group %s is not empty.", id))
	}
	if err := c.store.DeleteGroup(id); err != nil {
		return err
	}
	if cg != nil {
		cg.state = StateDead
		cg.shutdownLocked()
	}
	delete(c.mu.classic, id)
	delete(c.mu.consumer, id)
	delete(c.mu.streams, id)
	delete(c.mu.offsets, id)
	delete(c.mu.emptySince, id)
	return nil
}

// RemoveTopic drops every group's offsets of a deleted topic.
func (c *Coordinator) RemoveTopic(topic string) error {
	c.mu.Lock()
	var groups []string
	for g, offs := range c.mu.offsets {
		for tp := range offs {
			if tp.Topic == topic {
				groups = append(groups, g)
				break
			}
		}
	}
	c.mu.Unlock()
	var errs []string
	for _, g := range groups {
		if err := c.removeTopicOffsets(g, topic); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if errs != nil {
		return fmt.Errorf("remove offsets of topic %s: %s", topic, strings.Join(errs, "; "))
	}
	return nil
}

func (c *Coordinator) removeTopicOffsets(g, topic string) error {
	io := c.ioLock(g)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if offs := c.mu.offsets[g]; offs != nil {
		var tps []TopicPartition
		for tp := range offs {
			if tp.Topic == topic {
				tps = append(tps, tp)
			}
		}
		if len(tps) == 0 {
			return nil
		}
		if err := c.store.Delete(g, tps); err != nil {
			return err
		}
		for _, tp := range tps {
			delete(offs, tp)
		}
		if len(offs) == 0 {
			delete(c.mu.offsets, g)
		}
	}
	return nil
}

// removeMissingTopics drops offsets of topics that no longer exist, in case
// a deletion was not reported through RemoveTopic (a topic deleted through
// another node).
func (c *Coordinator) removeMissingTopics() {
	topics := c.topics()
	c.mu.Lock()
	gone := map[string]bool{}
	for _, offs := range c.mu.offsets {
		for tp := range offs {
			if _, ok := topics[tp.Topic]; !ok {
				gone[tp.Topic] = true
			}
		}
	}
	c.mu.Unlock()
	for t := range gone {
		if err := c.RemoveTopic(t); err != nil {
			c.logger.Warn("remove offsets of deleted topic", "topic", t, "err", err)
		}
	}
}

// ExpireOffsets applies offsets.retention.minutes: the offsets of a group
// without members expire once retention has passed since both their
// commit and the moment the group became empty; a group left with neither
// members nor offsets is removed. It returns how many offsets expired.
func (c *Coordinator) ExpireOffsets() int {
	c.mu.Lock()
	// Kafka's periodic cleanup also deletes groups that are empty and
	// have no offsets at all (kafka-console-consumer's console-consumer-N
	// groups), which nothing below would reach.
	for id, cg := range c.mu.classic {
		if cg.state == StateEmpty && c.mu.offsets[id] == nil {
			cg.state = StateDead
			delete(c.mu.classic, id)
			delete(c.mu.emptySince, id)
		}
	}
	for id, sg := range c.mu.streams {
		if len(sg.members) == 0 && c.mu.offsets[id] == nil {
			delete(c.mu.streams, id)
			delete(c.mu.emptySince, id)
		}
	}
	for id, kg := range c.mu.consumer {
		if len(kg.members) == 0 && c.mu.offsets[id] == nil {
			delete(c.mu.consumer, id)
			delete(c.mu.emptySince, id)
		}
	}
	groups := make([]string, 0, len(c.mu.offsets))
	for g := range c.mu.offsets {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	n := 0
	for _, g := range groups {
		n += c.expireGroupOffsets(g)
	}
	return n
}

func (c *Coordinator) expireGroupOffsets(g string) int {
	io := c.ioLock(g)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	n := 0
	if offs := c.mu.offsets[g]; offs != nil {
		if cg := c.mu.classic[g]; cg != nil && cg.state != StateEmpty {
			return 0
		}
		if kg := c.mu.consumer[g]; kg != nil && len(kg.members) > 0 {
			return 0
		}
		if sg := c.mu.streams[g]; sg != nil && len(sg.members) > 0 {
			return 0
		}
		ret := c.settings(g).OffsetsRetention
		base := c.mu.emptySince[g]
		var tps []TopicPartition
		for tp, o := range offs {
			t := time.UnixMilli(o.CommitTime)
			if base.After(t) {
				t = base
			}
			if !now.Before(t.Add(ret)) {
				tps = append(tps, tp)
			}
		}
		if len(tps) == 0 {
			return 0
		}
		if err := c.store.Delete(g, tps); err != nil {
			c.logger.Warn("expire offsets", "group", g, "err", err)
			return 0
		}
		for _, tp := range tps {
			delete(offs, tp)
		}
		n += len(tps)
		if len(offs) == 0 {
			delete(c.mu.offsets, g)
			if cg := c.mu.classic[g]; cg != nil {
				cg.state = StateDead
				delete(c.mu.classic, g)
			}
			delete(c.mu.consumer, g)
			delete(c.mu.streams, g)
			delete(c.mu.emptySince, g)
		}
	}
	return n
}

// RunExpiry calls ExpireOffsets every interval until ctx is done.
func (c *Coordinator) RunExpiry(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.removeMissingTopics()
			if n := c.ExpireOffsets(); n > 0 {
				c.logger.Info("expired committed offsets", "count", n)
			}
		}
	}
}

// CommitRequest is an OffsetCommit for one group. Generation is the classic
// generation or the consumer member epoch; -1 with an empty MemberID is a
// commit from outside the group (admin tools, simple consumers).
type CommitRequest struct {
	Group    string
	MemberID string
	// InstanceID is the static member's group.instance.id; nil is Kafka's
	// null (an empty string is an id, and no static member has it).
	InstanceID *string
	Generation int32
	Offsets    map[TopicPartition]Offset
	// StaleEpochError is OffsetCommit v9+ (KIP-848): a wrong consumer or
	// streams member epoch is STALE_MEMBER_EPOCH and a member's commit to
	// a group that does not exist GROUP_ID_NOT_FOUND, where earlier
	// versions answer ILLEGAL_GENERATION; a consumer or streams group
	// member may not commit with an earlier version (UNSUPPORTED_VERSION).
	StaleEpochError bool
}

// CommitOffsets validates the committer and stores the offsets durably. A
// group-level error fails every partition; per-partition errors (metadata
// too large) come in the map.
func (c *Coordinator) CommitOffsets(req CommitRequest) (map[TopicPartition]error, error) {
	if req.Group == "" {
		return nil, ErrInvalidGroupID
	}
	if c.notOurs(req.Group) {
		return nil, errNotConsumerGroup(req.Group)
	}
	st := c.settings(req.Group)
	io := c.ioLock(req.Group)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, ErrNotCoordinator
	}
	if err := c.validateCommitLocked(commitCheck{group: req.Group, memberID: req.MemberID, instanceID: req.InstanceID,
		generation: req.Generation, newErrors: req.StaleEpochError}); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	c.mu.Unlock()
	perr := map[TopicPartition]error{}
	ok := make(map[TopicPartition]Offset, len(req.Offsets))
	now := c.clock.Now().UnixMilli()
	for tp, o := range req.Offsets {
		if len(o.Metadata) > st.OffsetMetadataMaxBytes {
			perr[tp] = ErrOffsetMetadataTooLarge
			continue
		}
		o.CommitTime = now
		ok[tp] = o
	}
	if len(ok) == 0 {
		return perr, nil
	}
	// The write happens outside mu (see Coordinator.io); the stripe keeps
	// this group's store writes and in-memory updates in the same order.
	if err := c.store.Commit(req.Group, ok); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	offs := c.mu.offsets[req.Group]
	if offs == nil {
		offs = map[TopicPartition]Offset{}
		c.mu.offsets[req.Group] = offs
	}
	for tp, o := range ok {
		offs[tp] = o
	}
	return perr, nil
}

// commitCheck is who commits offsets, as Kafka 4.4's group coordinator
// validates it (OffsetMetadataManager.validateOffsetCommit and
// validateTransactionalOffsetCommit, then the group type's
// validateOffsetCommit).
type commitCheck struct {
	group      string
	memberID   string
	instanceID *string
	generation int32
	// txn is a TxnOffsetCommit: it may come from a producer that sends no
	// member (v0-2 have no member fields; the Java producer's
	// sendOffsetsToTransaction(offsets, groupId) sends none either), and
	// the group's rebalance state is not enforced for it.
	txn bool
	// newErrors: OffsetCommit v9+ or TxnOffsetCommit v6+ (see
	// CommitRequest.StaleEpochError and TxnCommitRequest.KIP1319Errors).
	newErrors bool
}

// validateCommitLocked checks the committer of an OffsetCommit or a
// TxnOffsetCommit against the group, Kafka 4.4's rules (the table in
// commit_validation_test.go cites them case by case).
func (c *Coordinator) validateCommitLocked(req commitCheck) error {
	var err error
	switch {
	case c.mu.streams[req.group] != nil:
		err = c.mu.streams[req.group].validateCommitLocked(req)
	case c.mu.consumer[req.group] != nil:
		err = c.mu.consumer[req.group].validateCommitLocked(req)
	case c.mu.classic[req.group] != nil:
		err = c.mu.classic[req.group].validateOffsetCommitLocked(req)
	case c.mu.offsets[req.group] != nil || len(c.mu.pending[req.group]) > 0:
		// Kafka keeps a group that only holds offsets as an Empty classic
		// group without members ("simple group"): anyone may commit
		// with generation -1, and nobody is a member.
		if req.generation < 0 {
			return nil
		}
		return ErrUnknownMemberID
	default:
		// A group that does not exist: generation -1 creates a simple
		// group (whatever member id comes with it); a member's commit
		// is refused.
		if req.generation < 0 {
			return nil
		}
		if req.newErrors {
			return withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s not found.", req.group))
		}
		return ErrIllegalGeneration
	}
	// Kafka converts STALE_MEMBER_EPOCH for the versions that predate it
	// (TxnOffsetCommit v0-5; OffsetCommit v0-8 never get this far with a
	// consumer or streams member).
	if errors.Is(err, ErrStaleMemberEpoch) && !req.newErrors {
		return ErrIllegalGeneration
	}
	return err
}

// validateCommitLocked is Kafka 4.4's ConsumerGroup.validateOffsetCommit
// for a group whose members all use the consumer protocol (sharq has no
// classic-protocol members in consumer groups).
func (g *consumerGroup) validateCommitLocked(req commitCheck) error {
	return validateMemberEpochCommit(req, g.id, "consumer", len(g.members), func(id string) (int32, bool) {
		m := g.members[id]
		if m == nil {
			return 0, false
		}
		return m.epoch, true
	})
}

// validateMemberEpochCommit is the rule consumer groups (KIP-848) and
// streams groups (KIP-1071) share for a commit by member epoch. A member
// epoch older than the member's is refused: Kafka 4.4 accepts it when each
// committed partition (task) was assigned to the member at that epoch or
// earlier, and sharq keeps no per-partition assignment epochs.
func validateMemberEpochCommit(req commitCheck, group, protocol string, members int, epochOf func(string) (int32, bool)) error {
	if req.generation < 0 && members == 0 {
		return nil
	}
	if req.txn && req.generation == -1 && req.memberID == "" && req.instanceID == nil {
		// A producer that sends no member (TxnOffsetCommit v0-2, or
		// sendOffsetsToTransaction with only the group id).
		return nil
	}
	epoch, ok := epochOf(req.memberID)
	if !ok {
		return withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.memberID, group))
	}
	if !req.txn && !req.newErrors {
		return withMsg(ErrUnsupportedVersion, fmt.Sprintf("OffsetCommit version 9 or above must be used by members using the %s group protocol", protocol))
	}
	switch {
	case req.generation == epoch:
		return nil
	case req.generation > epoch:
		return withMsg(ErrStaleMemberEpoch, fmt.Sprintf("Received member epoch %d is newer than current member epoch %d.", req.generation, epoch))
	}
	return withMsg(ErrStaleMemberEpoch, fmt.Sprintf("Received member epoch %d is older than current member epoch %d.", req.generation, epoch))
}

// FetchOffsets returns the committed offsets of tps (all of the group's
// offsets when all is set). memberID/memberEpoch (OffsetFetch v9+) are
// checked against a consumer group when given. Missing
// partitions are simply absent.
func (c *Coordinator) FetchOffsets(group, memberID string, memberEpoch int32, tps []TopicPartition, all bool) (map[TopicPartition]Offset, error) {
	if c.notOurs(group) {
		return nil, errNotConsumerGroup(group)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, ErrNotCoordinator
	}
	// Only consumer group members are checked (Kafka's classic groups
	// ignore the member id and epoch of OffsetFetch v9+).
	if kg := c.mu.consumer[group]; kg != nil && (memberID != "" || memberEpoch >= 0) {
		m := kg.members[memberID]
		if m == nil {
			return nil, ErrUnknownMemberID
		}
		if memberEpoch != m.epoch {
			return nil, ErrStaleMemberEpoch
		}
	}
	if sg := c.mu.streams[group]; sg != nil && (memberID != "" || memberEpoch >= 0) {
		if err := sg.validateFetchLocked(memberID, memberEpoch); err != nil {
			return nil, err
		}
	}
	offs := c.mu.offsets[group]
	out := map[TopicPartition]Offset{}
	if all {
		for tp, o := range offs {
			out[tp] = o
		}
		return out, nil
	}
	for _, tp := range tps {
		if o, ok := offs[tp]; ok {
			out[tp] = o
		}
	}
	return out, nil
}

// DeleteOffsets removes committed offsets of partitions the group is not
// subscribed to (OffsetDelete).
func (c *Coordinator) DeleteOffsets(group string, tps []TopicPartition) (map[TopicPartition]error, error) {
	if c.notOurs(group) {
		return nil, errNotConsumerGroup(group)
	}
	io := c.ioLock(group)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, ErrNotCoordinator
	}
	cg, kg, sg := c.mu.classic[group], c.mu.consumer[group], c.mu.streams[group]
	if cg == nil && kg == nil && sg == nil && c.mu.offsets[group] == nil {
		return nil, ErrGroupIDNotFound
	}
	subscribed := map[string]bool{}
	switch {
	case cg != nil && cg.state != StateEmpty:
		if cg.protocolType != "consumer" {
			return nil, ErrNonEmptyGroup
		}
		for _, m := range cg.members {
			for _, t := range m.subscribedTopics {
				subscribed[t] = true
			}
		}
	case kg != nil:
		for t := range kg.subscribedTopicsLocked(c.topics()) {
			subscribed[t] = true
		}
	case sg != nil && len(sg.members) > 0:
		subscribed = sg.sourceTopicsLocked()
	}
	perr := map[TopicPartition]error{}
	var del []TopicPartition
	for _, tp := range tps {
		if subscribed[tp.Topic] {
			perr[tp] = ErrGroupSubscribedToTopic
			continue
		}
		del = append(del, tp)
	}
	if len(del) > 0 {
		if err := c.store.Delete(group, del); err != nil {
			return nil, err
		}
		offs := c.mu.offsets[group]
		for _, tp := range del {
			delete(offs, tp)
		}
		if offs != nil && len(offs) == 0 {
			delete(c.mu.offsets, group)
		}
	}
	return perr, nil
}

// noteEmptyLocked records when a group lost its last member.
func (c *Coordinator) noteEmptyLocked(group string) {
	c.mu.emptySince[group] = c.clock.Now()
}
