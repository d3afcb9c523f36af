package raftmeta

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/vfs"
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

// openOptions are test hooks.
type openOptions struct {
	fs            vfs.FS       // raft log store's file system; nil = real disk
	listener      net.Listener // cluster mode: pre-bound raft listener
	leaderTimeout time.Duration
	// legacyPebble puts the raft log on pebble, as versions before the file
	// store did, so tests can write the data dirs that migration reads.
	legacyPebble bool
}

// Open opens or bootstraps the metadata store in cfg.Dir. With no Voters it
// runs a single self-voting raft node: it bootstraps on first start, elects
// itself, applies everything committed and writes the bootstrap command
// before returning. With Voters it joins that cluster over TCP on BindAddr;
// see DESIGN.md for what Open waits for in that mode.
func Open(cfg Config) (*Store, error) { return open(cfg, openOptions{}) }

func open(cfg Config, opts openOptions) (_ *Store, retErr error) {
	start := time.Now()
	if cfg.Dir == "" {
		return nil, fmt.Errorf("raftmeta: Config.Dir is empty: %w", ErrInvalidRequest)
	}
	if cfg.NodeID < 0 {
		return nil, fmt.Errorf("raftmeta: node id %d: %w", cfg.NodeID, ErrInvalidRequest)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = discardLogger()
	}
	logger = logger.With("component", "raftmeta", "node", cfg.NodeID)
	if opts.leaderTimeout == 0 {
		opts.leaderTimeout = 10 * time.Second
	}

	s := &Store{
		cfg:        cfg,
		logger:     logger,
		fsm:        newFSM(logger),
		localID:    raft.ServerID(strconv.Itoa(int(cfg.NodeID))),
		cluster:    len(cfg.Voters) > 0,
		observerCh: make(chan raft.Observation, 16),
		leaderCh:   make(chan struct{}, 1),
		closed:     make(chan struct{}),
	}

	var servers []raft.Server
	if s.cluster {
		self := false
		for _, v := range cfg.Voters {
			if v.ID == cfg.NodeID {
				self = true
			}
			servers = append(servers, raft.Server{
				Suffrage: raft.Voter,
				ID:       raft.ServerID(strconv.Itoa(int(v.ID))),
				Address:  raft.ServerAddress(v.Addr),
			})
		}
		if !self {
			return nil, fmt.Errorf("raftmeta: node %d is not in the voter list: %w", cfg.NodeID, ErrInvalidRequest)
		}
		if cfg.BindAddr == "" && opts.listener == nil {
			return nil, fmt.Errorf("raftmeta: cluster mode needs a raft BindAddr: %w", ErrInvalidRequest)
		}
	}

	var logs raftStore
	var err error
	if opts.legacyPebble {
		logs, err = openPebbleStore(filepath.Join(cfg.Dir, "log"), opts.fs, logger)
	} else {
		logs, err = openFileStore(filepath.Join(cfg.Dir, "log"), opts.fs, logger)
	}
	if err != nil {
		return nil, fmt.Errorf("raftmeta: %w", err)
	}
	s.logs = logs
	defer func() {
		if retErr != nil {
			s.teardown()
		}
	}()
	if opts.fs != nil {
		// Tests put the raft log on a memory FS; the snapshot store always
		// uses the real one.
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("raftmeta: create %s: %w", cfg.Dir, err)
		}
	}
	var routine []string
	if !s.cluster {
		routine = append(routine, "heartbeat timeout reached, starting election")
	}
	hlog := newHCLog(logger, routine...)
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, snapshotRetain, hlog.Named("snapshot"))
	if err != nil {
		return nil, fmt.Errorf("raftmeta: snapshot store in %s: %w", cfg.Dir, err)
	}
	if s.dirID, err = loadDirectoryID(cfg.Dir); err != nil {
		return nil, fmt.Errorf("raftmeta: %w", err)
	}
	cached, err := raft.NewLogCache(logCacheSize, logs)
	if err != nil {
		return nil, fmt.Errorf("raftmeta: log cache: %w", err)
	}

	conf := raft.DefaultConfig()
	conf.LocalID = s.localID
	conf.Logger = hlog
	// Metadata entries are tiny; snapshot more often than raft's default so
	// a restart replays little log.
	conf.SnapshotThreshold = 4096
	conf.TrailingLogs = 1024
	if !s.cluster {
		// A lone voter never hears from a leader, so only the heartbeat
		// timeout decides when it elects itself. Open shortens it right after
		// start (see electNow); these values only bound the lease check
		// wake-ups while idle and the fallback if that trick stops working.
		conf.HeartbeatTimeout = 500 * time.Millisecond
		conf.ElectionTimeout = 500 * time.Millisecond
		conf.LeaderLeaseTimeout = 250 * time.Millisecond
		addr, trans := raft.NewInmemTransport(raft.ServerAddress("inmem-" + string(s.localID)))
		s.trans = trans
		servers = []raft.Server{{Suffrage: raft.Voter, ID: s.localID, Address: addr}}
	} else {
		ln := opts.listener
		if ln == nil {
			if ln, err = net.Listen("tcp", cfg.BindAddr); err != nil {
				return nil, fmt.Errorf("raftmeta: listen on %s: %w", cfg.BindAddr, err)
			}
		}
		var advertise net.Addr = ln.Addr()
		for _, v := range cfg.Voters {
			if v.ID == cfg.NodeID {
				if a, err := net.ResolveTCPAddr("tcp", v.Addr); err == nil {
					advertise = a
				}
			}
		}
		s.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream:  &tcpStreamLayer{Listener: ln, advertise: advertise},
			MaxPool: 3,
			Timeout: 10 * time.Second,
			Logger:  hlog.Named("transport"),
		})
	}

	existing, err := raft.HasExistingState(cached, logs, snaps)
	if err != nil {
		return nil, fmt.Errorf("raftmeta: inspect raft state in %s: %w", cfg.Dir, err)
	}
	if !existing {
		if err := logs.bootstrap(conf, s.trans, raft.Configuration{Servers: servers}); err != nil {
			return nil, fmt.Errorf("raftmeta: bootstrap raft in %s: %w", cfg.Dir, err)
		}
		logger.Info("bootstrapped new metadata raft", "voters", len(servers))
	}
	// A lone voter's term and vote need not be synced on their own; see
	// fileStore.Set.
	logs.setLazyStable(!s.cluster)

	r, err := raft.NewRaft(conf, s.fsm, cached, logs, snaps, s.trans)
	if err != nil {
		return nil, fmt.Errorf("raftmeta: start raft: %w", err)
	}
	s.raft = r
	s.observer = raft.NewObserver(s.observerCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(s.observer)
	s.wg.Add(1)
	go s.watchLeader()

	if s.cluster {
		// Elections need the other voters; do not block start-up on them.
		// Whoever becomes leader writes the bootstrap command (watchLeader).
		logger.Info("metadata store open, raft cluster mode", "voters", len(servers), "took", time.Since(start))
		return s, nil
	}
	// A data dir written by another node id would never elect this one;
	// say so now rather than time out.
	cf := r.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, fmt.Errorf("raftmeta: read raft configuration: %w", mapRaftErr(err))
	}
	isVoter, voters := false, 0
	for _, srv := range cf.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			voters++
			isVoter = isVoter || srv.ID == s.localID
		}
	}
	if voters > 1 {
		return nil, fmt.Errorf("raftmeta: %s holds a %d-voter cluster's metadata; configure its voters: %w",
			cfg.Dir, voters, ErrInvalidRequest)
	}
	if !isVoter {
		return nil, fmt.Errorf("raftmeta: %s holds the metadata of another node (voters %v), not node %d: %w",
			cfg.Dir, cf.Configuration().Servers, cfg.NodeID, ErrInvalidRequest)
	}
	if err := s.electNow(); err != nil {
		return nil, err
	}
	if err := s.awaitLeader(opts.leaderTimeout); err != nil {
		return nil, err
	}
	// A node that just bootstrapped raft has nothing committed to catch up
	// on; its bootstrap command is applied after the leader's own entries
	// anyway, which saves one synced barrier write on first start.
	if err := s.catchUpAndBootstrap(opts.leaderTimeout, existing); err != nil {
		return nil, err
	}
	if img := s.Image(); cfg.ClusterID != "" && img.ClusterID != cfg.ClusterID {
		return nil, fmt.Errorf("raftmeta: %s belongs to cluster %q, configured cluster id is %q: %w",
			cfg.Dir, img.ClusterID, cfg.ClusterID, ErrInvalidRequest)
	}
	img := s.Image()
	logger.Info("metadata store open", "cluster_id", img.ClusterID, "applied_index", img.AppliedIndex,
		"topics", len(img.Topics), "took", time.Since(start))
	return s, nil
}

// electNow makes a lone voter start its election at once instead of after a
// heartbeat timeout. Lowering HeartbeatTimeout through ReloadConfig wakes the
// follower loop immediately (raft re-arms its timer), and a node that never
// heard from a leader then becomes candidate; with one voter its own vote
// wins. The second reload restores the idle timeout.
func (s *Store) electNow() error {
	rc := s.raft.ReloadableConfig()
	fast := rc
	fast.HeartbeatTimeout = 250 * time.Millisecond // >= LeaderLeaseTimeout, as raft requires
	fast.ElectionTimeout = 250 * time.Millisecond
	if err := s.raft.ReloadConfig(fast); err != nil {
		return fmt.Errorf("raftmeta: shorten election timeout: %w", err)
	}
	if err := s.raft.ReloadConfig(rc); err != nil {
		return fmt.Errorf("raftmeta: restore election timeout: %w", err)
	}
	return nil
}

func (s *Store) awaitLeader(timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	// The observer may drop events under load, so also poll, slowly.
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for s.raft.State() != raft.Leader {
		select {
		case <-s.leaderCh:
		case <-poll.C:
		case <-deadline.C:
			return fmt.Errorf("raftmeta: no leadership after %s: %w", timeout, ErrTimeout)
		}
	}
	s.fsm.setController(s.cfg.NodeID)
	return nil
}

// catchUpAndBootstrap runs on a new leader: a barrier makes the local image
// reflect every committed entry, then a cluster without an id gets its
// bootstrap command.
func (s *Store) catchUpAndBootstrap(timeout time.Duration, barrier bool) error {
	if barrier {
		if err := s.raft.Barrier(timeout).Error(); err != nil {
			return fmt.Errorf("raftmeta: apply committed log: %w", mapRaftErr(err))
		}
	}
	if s.Image().ClusterID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return s.reconcileFeatures(ctx)
	}
	id := s.cfg.ClusterID
	if id == "" {
		id = NewClusterID()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := s.propose(ctx, &bootstrapCmd{ClusterID: id, Features: defaultFeatures})
	if err != nil && !errors.Is(err, errAlreadyBootstrapped) {
		return fmt.Errorf("raftmeta: bootstrap metadata: %w", err)
	}
	if err == nil {
		s.logger.Info("bootstrapped cluster metadata", "cluster_id", id)
		if len(s.cfg.BootstrapBrokerConfigs) > 0 {
			if _, err := s.propose(ctx, &alterConfigsCmd{Resource: resourceBroker, Set: s.cfg.BootstrapBrokerConfigs}); err != nil {
				return fmt.Errorf("raftmeta: bootstrap broker configs: %w", err)
			}
		}
	}
	return nil
}

// watchLeader keeps Image().ControllerID current and, in cluster mode,
// bootstraps the metadata when this node first becomes leader.
func (s *Store) watchLeader() {
	defer s.wg.Done()
	for {
		select {
		case <-s.closed:
			return
		case <-s.observerCh:
		}
		select {
		case s.leaderCh <- struct{}{}:
		default:
		}
		_, id := s.raft.LeaderWithID()
		ctrl := int32(-1)
		if n, err := strconv.ParseInt(string(id), 10, 32); err == nil {
			ctrl = int32(n)
		}
		s.fsm.setController(ctrl)
		if s.cluster && id == s.localID {
			if err := s.catchUpAndBootstrap(10*time.Second, true); err != nil {
				s.logger.Warn("new leader could not bootstrap metadata", "err", err)
			}
		}
	}
}

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

// tcpStreamLayer is raft's StreamLayer over a listener we bound ourselves,
// advertising the configured voter address rather than the bind address.
type tcpStreamLayer struct {
	net.Listener
	advertise net.Addr
}

func (t *tcpStreamLayer) Addr() net.Addr { return t.advertise }

func (t *tcpStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(addr), timeout)
}
