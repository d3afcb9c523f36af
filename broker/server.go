// Package broker is the only package that knows the Kafka wire protocol. It
// accepts connections, decodes requests with kmsg, calls the domain packages
// (log, group, share, raftmeta) with plain Go values and encodes the answers.
//
// Each API lives in its own file named after its key (00_produce.go,
// 01_fetch.go, ...) with a header comment giving the supported versions and
// behaviour; its init() registers it in the one table (registry.go) that
// drives both dispatch and the ApiVersions response.
//
// Request memory (conn.go): a request's []byte fields are slices of the
// connection's reused frame buffer; a handler copies what a domain package
// keeps before handing it over, and the sharqpoison build tag makes a
// missed copy fail the tests.
//
// Shutdown order (Server.Shutdown): stop accepting, cancel parked long-polls
// and wait for connections to finish their in-flight request, close the
// partition logs (flush + clean-shutdown markers), close the metadata store.
package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sharq/config"
	"sharq/log"
	"sharq/raftmeta"
	"sharq/raftmeta/acl"
	"sharq/raftmeta/clientmetrics"
	"sharq/raftmeta/quota"
	"sharq/schema"
	"sharq/share"
	"sharq/txn"
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("broker: server closed")

// Server is one sharq node.
type Server struct {
	cfg       *config.Config                // static: defaults, file, env, flags
	effective atomic.Pointer[config.Config] // with dynamic broker configs
	logger    *slog.Logger

	meta *raftmeta.Store
	logs *log.Manager

	ctx    context.Context // cancelled at shutdown: wakes every parked request
	cancel context.CancelFunc

	listeners  []net.Listener
	advertised []config.Listener  // with the ports really bound
	security   []listenerSecurity // per listener, as cfg.Listeners: auth.go
	authz      *acl.Authorizer    // nil: no authorizer configured (authz.go)

	// vnodes are the node ids this process serves (sharq.virtual.brokers,
	// vnodes.go); virtual is len(vnodes) > 1. With one node the request
	// paths never look at them.
	vnodes  []*vnode
	virtual bool
	vmu     sync.Mutex // vnodes' up and listeners
	vstop   chan struct{}
	vstopMu sync.Once
	vmoves  [numMoveKinds]atomic.Int64 // moves and outages done, by moveKind

	partsMu sync.RWMutex
	// internalMu serialises the creation of internal topics;
	// internalWarned is when a refused read of one was last logged.
	internalMu     sync.Mutex
	internalWarned atomic.Int64
	topics         map[string]*topicParts // open partition logs by topic name

	fetchSessions *fetchSessionCache
	coord         coordinatorState // coordinators.go
	share         *share.Manager   // share groups: share_glue.go
	// coordReady is closed when the group and share coordinators have
	// loaded (coordErr nil) or failed to (coordErr set); coord and share
	// are written before and only read after. See loadCoordinators.
	coordReady  chan struct{}
	coordErr    error
	producerIDs *txn.IDAllocator

	metrics  *metrics
	reqBytes *requestBytes  // queued.max.request.bytes: reqbytes.go
	quotas   *quota.Manager // client quotas: quotas.go
	// clientMetrics: KIP-714 telemetry (71_get_telemetry_subscriptions.go);
	// connSeq numbers connections for it.
	clientMetrics *clientmetrics.Manager
	connSeq       atomic.Uint64
	faults        faultState   // fault rules: faults.go
	dirLock       *dataDirLock // held while the server owns log.dirs
	admin         *http.Server // metrics.listener: /metrics, /healthz, /readyz
	adminAddr     string
	schemaReg     *schemaRegistry // schema.registry.listeners: schema_registry.go
	schemaFormats []schema.Format // Options.SchemaFormats
	ready         atomic.Bool     // listeners accepting and metadata loaded
	// panics counts panics recovered while serving a connection (each
	// closed that connection): a bug every time, so tests and fuzz
	// targets require 0 (RecoveredPanics) and /metrics shows it.
	panics atomic.Int64

	connsMu  sync.Mutex
	conns    map[*conn]struct{}
	connsWG  sync.WaitGroup
	closed   bool
	bgWG     sync.WaitGroup
	shutdown sync.Once
}

// Options are what a program embedding the broker (or a test) may add to
// its config.
type Options struct {
	// LogFS is the file system of the partition logs (nil = the OS); tests
	// inject faults through it (log.FaultFS).
	LogFS log.FS
	// OfflineRetryInterval: see log.Options (0 = its default).
	OfflineRetryInterval time.Duration
	// SchemaFormats replaces the schema registry's formats (nil: all of
	// schema/formats).
	SchemaFormats []schema.Format
}

// New opens the node's stores under cfg.LogDirs. It does not listen yet.
func New(cfg *config.Config, logger *slog.Logger) (*Server, error) {
	if err := os.MkdirAll(cfg.LogDirs, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", cfg.LogDirs, err)
	}
	lock, err := lockDataDir(cfg.LogDirs)
	if err != nil {
		return nil, err
	}
	s, err := newServer(cfg, logger)
	if err != nil {
		lock.release()
		return nil, err
	}
	s.dirLock = lock
	return s, nil
}

func newServer(cfg *config.Config, logger *slog.Logger) (*Server, error) {
	return NewWithOptions(cfg, logger, Options{})
}

// NewWithOptions is New with Options.
func NewWithOptions(cfg *config.Config, logger *slog.Logger, opts Options) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	base := logger // the stores add their own component and node attributes
	logger = logger.With("component", "broker", "node", cfg.NodeID)
	if err := os.MkdirAll(cfg.LogDirs, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", cfg.LogDirs, err)
	}
	voters, err := parseVoters(cfg.ControllerQuorumVoters)
	if err != nil {
		return nil, err
	}
	sec, err := buildListenerSecurity(cfg)
	if err != nil {
		return nil, err
	}
	state := openStateDB(cfg.LogDirs, logger)
	meta, err := raftmeta.Open(raftmeta.Config{
		Dir:        filepath.Join(cfg.LogDirs, "meta"),
		NodeID:     cfg.NodeID,
		LocalNodes: virtualNodeIDs(cfg),
		Voters:     voters,
		BindAddr:   cfg.ControllerListener,
		ClusterID:  cfg.ClusterID,
		// As Kafka's controller does on a new cluster with eligible
		// leader replicas (eligible.leader.replicas.version=1).
		BootstrapBrokerConfigs: map[string]string{"min.insync.replicas": config.Value(cfg, "min.insync.replicas")},
		Logger:                 base,
	})
	if err != nil {
		state.discard()
		return nil, fmt.Errorf("open metadata: %w", err)
	}
	logs, err := log.NewManager(cfg.LogDirs, log.Options{
		FS:                     opts.LogFS,
		OfflineRetryInterval:   opts.OfflineRetryInterval,
		Logger:                 base.With("node", cfg.NodeID),
		RetentionCheckInterval: time.Duration(cfg.LogRetentionCheckIntervalMs) * time.Millisecond,
		Cleaner:                cleanerOptions(cfg),
	})
	if err != nil {
		state.discard()
		meta.Close()
		return nil, fmt.Errorf("open partition logs: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:           cfg,
		logger:        logger,
		meta:          meta,
		logs:          logs,
		ctx:           ctx,
		cancel:        cancel,
		security:      sec,
		authz:         newAuthorizer(cfg),
		topics:        make(map[string]*topicParts),
		conns:         make(map[*conn]struct{}),
		fetchSessions: newFetchSessionCache(int(cfg.MaxIncrementalFetchSessionCacheSlots)),
		reqBytes:      newRequestBytes(cfg.QueuedMaxRequestBytes),
		quotas: quota.New(quota.Config{Samples: int(cfg.QuotaWindowNum),
			Window: time.Duration(cfg.QuotaWindowSizeSeconds) * time.Second}),
		clientMetrics: clientmetrics.New(cfg.TelemetryMaxBytes),
		schemaFormats: opts.SchemaFormats,
	}
	s.initVirtualNodes()
	s.producerIDs = &txn.IDAllocator{Reserve: s.meta.AllocateProducerIDs}
	if err := s.initFaults(); err != nil {
		state.discard()
		s.closeStores()
		return nil, err
	}
	s.metrics = newMetrics(s)
	if err := s.applyDynamicBrokerConfigs(); err != nil {
		state.discard()
		s.closeStores()
		return nil, err
	}
	if err := s.bootstrapScram(); err != nil {
		state.discard()
		s.closeStores()
		return nil, err
	}
	s.coordReady = make(chan struct{})
	go s.loadCoordinators(state)
	return s, nil
}

// Listen binds every listener. A listener with port 0 gets a free port, and
// that port is what the broker advertises.
func (s *Server) Listen() error {
	for i, l := range s.cfg.Listeners {
		addr := net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("listen %s://%s: %w", l.Name, addr, err)
		}
		s.listeners = append(s.listeners, ln)
		adv := l
		for _, a := range s.cfg.AdvertisedListeners {
			if a.Name == l.Name {
				adv = a
			}
		}
		if adv.Host == "" || adv.Host == "0.0.0.0" || adv.Host == "::" {
			adv.Host = "localhost"
		}
		if adv.Port == 0 || (l.Port == 0 && adv.Port == l.Port) {
			adv.Port = ln.Addr().(*net.TCPAddr).Port
		}
		s.advertised = append(s.advertised, adv)
		_ = i
	}
	if len(s.advertised) == 0 {
		return errors.New("no listeners configured")
	}
	adv := s.advertised[0]
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	if err := s.meta.RegisterBroker(ctx, raftmeta.Broker{NodeID: s.cfg.NodeID, Host: adv.Host, Port: int32(adv.Port), Rack: s.cfg.BrokerRack}); err != nil {
		s.closeListeners()
		return fmt.Errorf("register broker: %w", err)
	}
	if err := s.listenVirtual(ctx); err != nil {
		s.closeListeners()
		return err
	}
	if err := s.startAdmin(); err != nil {
		s.closeListeners()
		return err
	}
	if err := s.startSchemaRegistry(); err != nil {
		s.closeListeners()
		return err
	}
	return nil
}

// Advertised returns the listeners as clients should reach them.
func (s *Server) Advertised() []config.Listener { return s.advertised }

// RecoveredPanics is how many panics were recovered while serving
// connections since start; anything but 0 is a bug.
func (s *Server) RecoveredPanics() int64 { return s.panics.Load() }

// Serve accepts connections on every bound listener and runs background
// work until Shutdown. It returns ErrServerClosed after a clean shutdown.
func (s *Server) Serve() error {
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		if err := s.logs.Run(s.ctx); err != nil && s.ctx.Err() == nil {
			s.logger.Error("log maintenance stopped", "err", err)
		}
	}()
	s.ready.Store(true)
	s.bgWG.Add(1)
	go func() {
		// A node whose coordinators cannot load stops serving; Serve then
		// returns their error (below).
		defer s.bgWG.Done()
		if s.awaitCoordinators(s.ctx) != nil && s.ctx.Err() == nil {
			s.closeListeners()
		}
	}()
	var wg sync.WaitGroup
	for i, ln := range s.listeners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.acceptLoop(ln, i, s.cfg.NodeID)
		}()
	}
	s.serveVirtual()
	wg.Wait()
	if s.virtual {
		// node.id's listeners close when it is stopped, too.
		<-s.vstop
	}
	select {
	case <-s.coordReady:
		if s.coordErr != nil {
			return s.coordErr
		}
	default:
	}
	return ErrServerClosed
}

func (s *Server) acceptLoop(ln net.Listener, idx int, node int32) {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Temporary failures (EMFILE...): back off like net/http does.
			if backoff == 0 {
				backoff = 5 * time.Millisecond
			} else if backoff *= 2; backoff > time.Second {
				backoff = time.Second
			}
			s.logger.Warn("accept failed", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-s.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		if tc := s.security[idx].tls; tc != nil {
			// The handshake runs on the connection's goroutine (startSecurity).
			nc = tls.Server(nc, tc)
		}
		c := s.newConn(nc, idx)
		c.node = node
		s.connsMu.Lock()
		if s.closed {
			s.connsMu.Unlock()
			nc.Close()
			return
		}
		if s.virtual && !s.nodeUp(node) {
			// Accepted as its node stopped (StopNode closes what it
			// finds under connsMu after marking the node down).
			s.connsMu.Unlock()
			nc.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.connsWG.Add(1)
		s.connsMu.Unlock()
		s.metrics.connections.Add(1)
		go c.serve()
	}
}

func (s *Server) connDone(c *conn) {
	s.connsMu.Lock()
	delete(s.conns, c)
	s.connsMu.Unlock()
	s.metrics.connections.Add(-1)
	s.dropShareSessions(c)
	s.clientMetrics.ConnClosed(c.id)
	s.connsWG.Done()
}

// Shutdown stops accepting, lets in-flight requests finish (parked
// long-polls are woken and answer at once), then closes the stores in
// reverse order of opening. If ctx expires first, remaining connections are
// closed hard.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.shutdown.Do(func() {
		s.ready.Store(false)
		s.connsMu.Lock()
		s.closed = true
		conns := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.connsMu.Unlock()
		s.closeListeners()
		// Wake parked long-polls, then stop reading new requests: a request
		// being handled finishes and its answer is written before the
		// processor sees the closed channel. Cancelling first matters: a
		// reader re-arming its idle deadline checks the context after doing
		// so (conn.readLoop).
		s.cancel()
		for _, c := range conns {
			c.nc.SetReadDeadline(time.Now())
		}
		done := make(chan struct{})
		go func() { s.connsWG.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			for _, c := range conns {
				c.close()
			}
			<-done
		}
		s.stopAdmin(ctx)
		s.stopSchemaRegistry(ctx)
		// The coordinators' loader adds to bgWG and its stores must be
		// closed here, so it has to have finished.
		<-s.coordReady
		s.bgWG.Wait()
		err = s.closeStores()
	})
	return err
}

func (s *Server) closeListeners() {
	for _, ln := range s.listeners {
		ln.Close()
	}
	s.closeVirtualListeners()
}

func (s *Server) closeStores() error {
	var errs []error
	if s.share != nil {
		if err := s.share.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close share groups: %w", err))
		}
	}
	if err := s.closeCoordinators(); err != nil {
		errs = append(errs, fmt.Errorf("close coordinators: %w", err))
	}
	if err := s.logs.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close partition logs: %w", err))
	}
	if err := s.meta.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close metadata: %w", err))
	}
	s.dirLock.release()
	return errors.Join(errs...)
}

// parseVoters parses controller.quorum.voters: "1@host:port,2@host:port".
func parseVoters(s string) ([]raftmeta.Voter, error) {
	if s == "" {
		return nil, nil
	}
	var out []raftmeta.Voter
	for _, part := range splitList(s) {
		at := -1
		for i := range part {
			if part[i] == '@' {
				at = i
				break
			}
		}
		if at <= 0 {
			return nil, fmt.Errorf("controller.quorum.voters: %q is not id@host:port", part)
		}
		id, err := strconv.ParseInt(part[:at], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("controller.quorum.voters: bad node id in %q", part)
		}
		out = append(out, raftmeta.Voter{ID: int32(id), Addr: part[at+1:]})
	}
	return out, nil
}

// CleanLogs runs one log cleaner pass over every compacted partition now
// and returns how many were cleaned (tests; the cleaner threads do the
// same every log.cleaner.backoff.ms).
func (s *Server) CleanLogs() int { return s.logs.CleanNow() }
