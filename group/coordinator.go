package group

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"sharq/log/clock"
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
	Clock  clock.Clock // nil = wall clock
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
	clock    clock.Clock
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
		c.clock = clock.Real()
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

// noteEmptyLocked records when a group lost its last member.
func (c *Coordinator) noteEmptyLocked(group string) {
	c.mu.emptySince[group] = c.clock.Now()
}
