package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

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

// open runs Open's steps in order; each failure after the log store is
// open tears down what the steps before it started.
func open(cfg Config, opts openOptions) (_ *Store, retErr error) {
	start := time.Now()
	if opts.leaderTimeout == 0 {
		opts.leaderTimeout = 10 * time.Second
	}
	s, voters, err := storeFor(cfg, opts)
	if err != nil {
		return nil, err
	}
	logs, err := openRaftStore(cfg.Dir, opts, s.logger)
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
	hlog := newHCLog(s.logger, routine...)
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
	conf := s.raftConfig(hlog)
	servers, err := s.openTransport(opts, hlog, voters)
	if err != nil {
		return nil, err
	}
	existing, err := s.bootstrapIfNew(conf, cached, snaps, servers)
	if err != nil {
		return nil, err
	}
	// A lone voter's term and vote need not be synced on their own; see
	// fileStore.Set.
	logs.setLazyStable(!s.cluster)
	if err := s.startRaft(conf, cached, snaps); err != nil {
		return nil, err
	}
	if s.cluster {
		// Elections need the other voters; do not block start-up on them.
		// Whoever becomes leader writes the bootstrap command (watchLeader).
		s.logger.Info("metadata store open, raft cluster mode", "voters", len(servers), "took", time.Since(start))
		return s, nil
	}
	if err := s.checkLoneVoter(); err != nil {
		return nil, err
	}
	if err := s.leadAlone(opts.leaderTimeout, existing); err != nil {
		return nil, err
	}
	img := s.Image()
	s.logger.Info("metadata store open", "cluster_id", img.ClusterID, "applied_index", img.AppliedIndex,
		"topics", len(img.Topics), "took", time.Since(start))
	return s, nil
}

// storeFor checks cfg and builds the Store that open's steps fill in. In
// cluster mode it also returns the voters a new raft is bootstrapped with.
func storeFor(cfg Config, opts openOptions) (*Store, []raft.Server, error) {
	if cfg.Dir == "" {
		return nil, nil, fmt.Errorf("raftmeta: Config.Dir is empty: %w", ErrInvalidRequest)
	}
	if cfg.NodeID < 0 {
		return nil, nil, fmt.Errorf("raftmeta: node id %d: %w", cfg.NodeID, ErrInvalidRequest)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = discardLogger()
	}
	logger = logger.With("component", "raftmeta", "node", cfg.NodeID)

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
	if !s.cluster {
		return s, nil, nil
	}
	var servers []raft.Server
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
		return nil, nil, fmt.Errorf("raftmeta: node %d is not in the voter list: %w", cfg.NodeID, ErrInvalidRequest)
	}
	if cfg.BindAddr == "" && opts.listener == nil {
		return nil, nil, fmt.Errorf("raftmeta: cluster mode needs a raft BindAddr: %w", ErrInvalidRequest)
	}
	return s, servers, nil
}

// openRaftStore opens raft's log and stable store in <dir>/log: the file
// store, or pebble for tests that write an old version's data dir.
func openRaftStore(dir string, opts openOptions, logger *slog.Logger) (raftStore, error) {
	if opts.legacyPebble {
		return openPebbleStore(filepath.Join(dir, "log"), opts.fs, logger)
	}
	return openFileStore(filepath.Join(dir, "log"), opts.fs, logger)
}

// raftConfig is raft's configuration for this node.
func (s *Store) raftConfig(hlog hclog.Logger) *raft.Config {
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
	}
	return conf
}

// openTransport sets s.trans: in-memory for a lone voter, TCP on BindAddr
// (or the test's listener) in cluster mode. It returns the servers a new
// raft is bootstrapped with: voters, or this node alone on its in-memory
// address.
func (s *Store) openTransport(opts openOptions, hlog hclog.Logger, voters []raft.Server) ([]raft.Server, error) {
	if !s.cluster {
		addr, trans := raft.NewInmemTransport(raft.ServerAddress("inmem-" + string(s.localID)))
		s.trans = trans
		return []raft.Server{{Suffrage: raft.Voter, ID: s.localID, Address: addr}}, nil
	}
	ln := opts.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.BindAddr); err != nil {
			return nil, fmt.Errorf("raftmeta: listen on %s: %w", s.cfg.BindAddr, err)
		}
	}
	var advertise net.Addr = ln.Addr()
	for _, v := range s.cfg.Voters {
		if v.ID == s.cfg.NodeID {
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
	return voters, nil
}

// bootstrapIfNew writes raft's first-start state when the dir holds none,
// and reports whether it held some.
func (s *Store) bootstrapIfNew(conf *raft.Config, cached raft.LogStore, snaps raft.SnapshotStore, servers []raft.Server) (existing bool, err error) {
	existing, err = raft.HasExistingState(cached, s.logs, snaps)
	if err != nil {
		return false, fmt.Errorf("raftmeta: inspect raft state in %s: %w", s.cfg.Dir, err)
	}
	if !existing {
		if err := s.logs.bootstrap(conf, s.trans, raft.Configuration{Servers: servers}); err != nil {
			return false, fmt.Errorf("raftmeta: bootstrap raft in %s: %w", s.cfg.Dir, err)
		}
		s.logger.Info("bootstrapped new metadata raft", "voters", len(servers))
	}
	return existing, nil
}

// startRaft starts raft and the goroutine that follows its leadership.
func (s *Store) startRaft(conf *raft.Config, cached raft.LogStore, snaps raft.SnapshotStore) error {
	r, err := raft.NewRaft(conf, s.fsm, cached, s.logs, snaps, s.trans)
	if err != nil {
		return fmt.Errorf("raftmeta: start raft: %w", err)
	}
	s.raft = r
	s.observer = raft.NewObserver(s.observerCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(s.observer)
	s.wg.Add(1)
	go s.watchLeader()
	return nil
}

// checkLoneVoter refuses a data dir written by another node id or by a
// cluster: it would never elect this node; say so now rather than time out.
func (s *Store) checkLoneVoter() error {
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return fmt.Errorf("raftmeta: read raft configuration: %w", mapRaftErr(err))
	}
	isVoter, voters := false, 0
	for _, srv := range cf.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			voters++
			isVoter = isVoter || srv.ID == s.localID
		}
	}
	if voters > 1 {
		return fmt.Errorf("raftmeta: %s holds a %d-voter cluster's metadata; configure its voters: %w",
			s.cfg.Dir, voters, ErrInvalidRequest)
	}
	if !isVoter {
		return fmt.Errorf("raftmeta: %s holds the metadata of another node (voters %v), not node %d: %w",
			s.cfg.Dir, cf.Configuration().Servers, s.cfg.NodeID, ErrInvalidRequest)
	}
	return nil
}

// leadAlone elects a lone voter, applies what is committed and writes the
// bootstrap command of a new cluster, then checks the configured cluster id.
func (s *Store) leadAlone(timeout time.Duration, existing bool) error {
	if err := s.electNow(); err != nil {
		return err
	}
	if err := s.awaitLeader(timeout); err != nil {
		return err
	}
	// A node that just bootstrapped raft has nothing committed to catch up
	// on; its bootstrap command is applied after the leader's own entries
	// anyway, which saves one synced barrier write on first start.
	if err := s.catchUpAndBootstrap(timeout, existing); err != nil {
		return err
	}
	if img := s.Image(); s.cfg.ClusterID != "" && img.ClusterID != s.cfg.ClusterID {
		return fmt.Errorf("raftmeta: %s belongs to cluster %q, configured cluster id is %q: %w",
			s.cfg.Dir, img.ClusterID, s.cfg.ClusterID, ErrInvalidRequest)
	}
	return nil
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
