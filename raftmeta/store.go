package raftmeta

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// defaultFeatures are the feature levels written by the bootstrap command of
// a new cluster (featureTable's Bootstrap levels).
var defaultFeatures = bootstrapFeatures()

// DefaultFeatures returns (a copy of) the feature levels a new cluster is
// bootstrapped with.
func DefaultFeatures() map[string]int16 { return maps.Clone(defaultFeatures) }

const (
	// snapshotRetain is how many raft snapshots the file store keeps.
	snapshotRetain = 2
	// logCacheSize is the number of recent entries raft.NewLogCache keeps
	// decoded in front of the log store.
	logCacheSize = 512
	// defaultProposeTimeout bounds a proposal whose context has no deadline.
	defaultProposeTimeout = 30 * time.Second
	// proposeRetries bounds retries of proposals the FSM rejected as stale
	// (concurrent change) or whose random topic id collided.
	proposeRetries = 8
)

// Store is the replicated cluster metadata. Reads go through Image(), which
// never blocks; the mutating methods propose a raft command and return once
// it is applied locally.
type Store struct {
	cfg     Config
	logger  *slog.Logger
	fsm     *fsm
	raft    *raft.Raft
	dirID   UUID // this node's metadata directory id (DescribeQuorum)
	logs    raftStore
	trans   raft.Transport
	localID raft.ServerID
	cluster bool

	observer   *raft.Observer
	observerCh chan raft.Observation
	// leaderCh receives a token whenever this node's raft state may have
	// changed to or from leader; Open waits on it.
	leaderCh chan struct{}

	closeOnce sync.Once
	closed    chan struct{}
	wg        sync.WaitGroup
	closeErr  error
}

// raftStore is the log and stable store under raft: the fileStore, or, in
// tests that write an old version's data dir, the pebbleStore.
type raftStore interface {
	raft.LogStore
	raft.StableStore
	bootstrap(conf *raft.Config, trans raft.Transport, c raft.Configuration) error
	setLazyStable(lazy bool)
	Close() error
}

func (s *fileStore) setLazyStable(lazy bool)   { s.lazyStable = lazy }
func (s *pebbleStore) setLazyStable(lazy bool) { s.lazyStable = lazy }

// Image returns the current metadata image. It never blocks; the result is
// immutable and stays valid after later changes.
func (s *Store) Image() *Image { return s.fsm.image() }

// Close stops raft and closes the stores. Pending and later calls fail with
// ErrClosed. Only the first call does anything.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.teardown()
	})
	return s.closeErr
}

// teardown stops everything Open started, in reverse order.
func (s *Store) teardown() error {
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	var errs []error
	if s.raft != nil {
		if err := s.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("stop raft: %w", err))
		}
		s.raft.DeregisterObserver(s.observer)
	}
	s.wg.Wait()
	if c, ok := s.trans.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close raft transport: %w", err))
		}
	}
	if s.logs != nil {
		if err := s.logs.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close raft log store: %w", err))
		}
	}
	return errors.Join(errs...)
}

// mapRaftErr turns raft's errors into this package's sentinels.
func mapRaftErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("%w: %v", ErrNotController, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	return err
}

// propose replicates c and returns the FSM's result once it is applied on
// this node. If ctx ends first the command may still be applied later.
func (s *Store) propose(ctx context.Context, c command) (any, error) {
	select {
	case <-s.closed:
		return nil, ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := defaultProposeTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	f := s.raft.Apply(encodeCommand(c), timeout)
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", commandName(c.kind()), ctx.Err())
	case <-s.closed:
		return nil, ErrClosed
	}
	if err != nil {
		return nil, mapRaftErr(err)
	}
	resp := f.Response()
	if err, ok := resp.(error); ok {
		return nil, err
	}
	return resp, nil
}

// WaitApplied blocks until this node's image has applied the log up to index
// (Image().AppliedIndex >= index), ctx ends, or the store closes. Indexes
// are those of metadata commands and configuration entries; raft's internal
// no-op entries advance it only when the next command is applied.
func (s *Store) WaitApplied(ctx context.Context, index uint64) error {
	for {
		ch := s.fsm.appliedCh()
		if s.fsm.image().AppliedIndex >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return ErrClosed
		}
	}
}

// RegisterBroker records (or updates) a broker's advertised endpoint.
//
// A lone voter skips the proposal when its image already holds exactly b
// (a restart on the same address): its image is current once Open returns
// and no other node writes the log, so the entry would change nothing, and
// skipping it saves a synced write on every start.
func (s *Store) RegisterBroker(ctx context.Context, b Broker) error {
	if !s.cluster {
		select {
		case <-s.closed:
			return ErrClosed
		default:
		}
		if cur, ok := s.Image().Brokers[b.NodeID]; ok && cur == b {
			return nil
		}
	}
	_, err := s.propose(ctx, &registerBrokerCmd{Broker: b})
	return err
}

// CreateTopic creates a topic with a fresh random id. Partition p gets the
// replica list rotated left by p (so leaders spread over the brokers, as
// Kafka's assignment does); its leader is its first replica.
func (s *Store) CreateTopic(ctx context.Context, name string, partitions int32, replicas []int32, configs map[string]string) (*Topic, error) {
	if err := validTopicName(name); err != nil {
		return nil, err
	}
	if partitions <= 0 || partitions > MaxPartitions {
		return nil, fmt.Errorf("create topic %s with %d partitions: %w", name, partitions, ErrInvalidPartitions)
	}
	if len(replicas) == 0 {
		return nil, fmt.Errorf("create topic %s without replicas: %w", name, ErrInvalidReplicationFactor)
	}
	assignment := make([][]int32, partitions)
	for p := range assignment {
		assignment[p] = rotate(replicas, p)
	}
	for attempt := 0; ; attempt++ {
		c := &createTopicCmd{Name: name, ID: newTopicID(), Assignment: assignment, Configs: configs}
		resp, err := s.propose(ctx, c)
		if errors.Is(err, errTopicIDTaken) && attempt < proposeRetries {
			continue
		}
		if err != nil {
			return nil, err
		}
		return resp.(*Topic), nil
	}
}

func rotate(replicas []int32, by int) []int32 {
	n := len(replicas)
	out := make([]int32, n)
	for i := range out {
		out[i] = replicas[(i+by)%n]
	}
	return out
}

// DeleteTopic deletes a topic and returns the id it had.
func (s *Store) DeleteTopic(ctx context.Context, name string) (UUID, error) {
	t, ok := s.Image().Topics[name]
	if !ok {
		return UUID{}, fmt.Errorf("delete topic %s: %w", name, ErrUnknownTopic)
	}
	resp, err := s.propose(ctx, &deleteTopicCmd{Name: name, ID: t.ID})
	if err != nil {
		return UUID{}, err
	}
	return resp.(UUID), nil
}

// CreatePartitions grows a topic to newCount partitions. New partition p
// gets partition 0's replicas rotated by p.
func (s *Store) CreatePartitions(ctx context.Context, name string, newCount int32) error {
	for attempt := 0; ; attempt++ {
		t, ok := s.Image().Topics[name]
		if !ok {
			return fmt.Errorf("create partitions for %s: %w", name, ErrUnknownTopic)
		}
		cur := int32(len(t.Partitions))
		if newCount <= cur || newCount > MaxPartitions {
			return fmt.Errorf("topic %s has %d partitions, asked for %d: %w", name, cur, newCount, ErrInvalidPartitions)
		}
		base := t.Partitions[0].Replicas
		assignment := make([][]int32, 0, newCount-cur)
		for p := cur; p < newCount; p++ {
			assignment = append(assignment, rotate(base, int(p)))
		}
		_, err := s.propose(ctx, &createPartitionsCmd{Name: name, ID: t.ID, From: cur, Assignment: assignment})
		if errors.Is(err, errStaleProposal) && attempt < proposeRetries {
			continue
		}
		return err
	}
}

// AlterTopicConfigs sets, then deletes, topic-level config overrides.
func (s *Store) AlterTopicConfigs(ctx context.Context, name string, set map[string]string, del []string) error {
	_, err := s.propose(ctx, &alterConfigsCmd{Resource: resourceTopic, Entity: name, Set: set, Delete: del})
	return err
}

// AlterBrokerConfigs sets, then deletes, dynamic broker configs. entity ""
// is the cluster-wide default, otherwise a node id in decimal.
func (s *Store) AlterBrokerConfigs(ctx context.Context, entity string, set map[string]string, del []string) error {
	if entity != "" {
		if n, err := strconv.ParseInt(entity, 10, 32); err != nil || n < 0 || strconv.FormatInt(n, 10) != entity {
			return fmt.Errorf("broker config entity %q is not a node id: %w", entity, ErrInvalidRequest)
		}
	}
	_, err := s.propose(ctx, &alterConfigsCmd{Resource: resourceBroker, Entity: entity, Set: set, Delete: del})
	return err
}

// AlterGroupConfigs sets, then deletes, dynamic group configs.
func (s *Store) AlterGroupConfigs(ctx context.Context, group string, set map[string]string, del []string) error {
	_, err := s.propose(ctx, &alterConfigsCmd{Resource: resourceGroup, Entity: group, Set: set, Delete: del})
	return err
}

// SetFeature finalizes a feature level; level 0 removes the feature. Which
// levels are supported is the caller's (UpdateFeatures handler's) check.
func (s *Store) SetFeature(ctx context.Context, name string, level int16) error {
	_, err := s.propose(ctx, &setFeatureCmd{Name: name, Level: level})
	return err
}

// AllocateProducerIDs reserves count producer ids and returns the first:
// [first, first+count) is never returned again, across restarts, because
// the counter lives in the replicated image.
func (s *Store) AllocateProducerIDs(ctx context.Context, count int64) (first int64, err error) {
	resp, err := s.propose(ctx, &allocateProducerIDsCmd{Count: count})
	if err != nil {
		return 0, err
	}
	return resp.(int64), nil
}

// NewClusterID returns a random cluster id in Kafka's form: 16 random bytes
// as unpadded base64url (22 characters), never starting with '-'.
func NewClusterID() string {
	u := newTopicID()
	return base64.RawURLEncoding.EncodeToString(u[:])
}

// newTopicID returns a random id avoiding what Kafka's Uuid.randomUuid
// avoids: the zero UUID, the reserved metadata topic id (0...01) and ids
// whose string form starts with '-' (it reads as a command-line flag).
func newTopicID() UUID {
	for {
		var u UUID
		if _, err := rand.Read(u[:]); err != nil {
			panic(fmt.Sprintf("raftmeta: crypto/rand: %v", err))
		}
		if u == (UUID{}) || u == (UUID{15: 1}) {
			continue
		}
		if base64.RawURLEncoding.EncodeToString(u[:1])[0] == '-' {
			continue
		}
		return u
	}
}

// String returns the UUID in Kafka's form (unpadded base64url).
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }
