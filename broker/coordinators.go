package broker

// Coordinators (consumer groups, share groups) and the state store they
// share (<log.dirs>/state, pebble) are opened after the metadata store and
// the partition logs, and closed before them. The hooks are called by New
// and closeStores; each coordinator package adds its part here.
//
// Share groups plug into the group-wide admin APIs (ListGroups,
// DescribeGroups, DeleteGroups) through groupDirectory: whatever
// coordinator owns a group id answers for it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble"

	"sharq/group"
	"sharq/log/statejournal"
	"sharq/share"
	"sharq/txn"
)

// coordinatorState is what openCoordinators opens (a field of Server).
type coordinatorState struct {
	stateDB  *pebble.DB
	stateDir string // where stateDB lives
	// stateJournal is the journal in front of stateDB that the group,
	// transaction and share coordinators write through
	// (log/statejournal), closed after them and before the state store.
	stateJournal *statejournal.Journal
	groups       *group.Coordinator
	txn          *txn.Coordinator
	// others are extra group directories (share groups), consulted by
	// ListGroups, DescribeGroups and DeleteGroups after the consumer
	// group coordinator.
	others []groupDirectory
}

// groupDirectory is what a group coordinator offers the group-wide admin
// APIs. A share coordinator implements it to appear in ListGroups and to
// be deleted by DeleteGroups.
type groupDirectory interface {
	// ListGroups returns the directory's groups.
	ListGroups() []group.Overview
	// Owns reports whether the group id belongs to this directory.
	Owns(id string) bool
	// DeleteGroup deletes an empty group: nil, or an error ErrorCode maps
	// (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND).
	DeleteGroup(id string) error
	// ErrorCode maps the directory's errors to Kafka codes.
	ErrorCode(err error) int16
}

// stateDB is the state store (<log.dirs>/state) being opened in the
// background: it depends on neither the metadata store nor the partition
// logs, so New opens it while those open, overlapping its file creation and
// syncs with theirs.
type stateDB chan stateDBResult

type stateDBResult struct {
	db  *pebble.DB
	dir string
	err error
}

// openStateDB starts opening the state store under logDirs.
func openStateDB(logDirs string, logger *slog.Logger) stateDB {
	ch := make(stateDB, 1)
	go func() {
		dir := filepath.Join(logDirs, "state")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			ch <- stateDBResult{err: fmt.Errorf("create state directory %s: %w", dir, err)}
			return
		}
		db, err := pebble.Open(dir, &pebble.Options{
			MemTableSize: 4 << 20,
			MaxOpenFiles: 64,
			Logger:       pebbleSlog{logger.With("component", "state")},
		})
		if err != nil {
			err = fmt.Errorf("open state store %s: %w", dir, err)
		}
		ch <- stateDBResult{db: db, dir: dir, err: err}
	}()
	return ch
}

// wait returns the opened store and its directory.
func (p stateDB) wait() (*pebble.DB, string, error) {
	r := <-p
	return r.db, r.dir, r.err
}

// discard waits for the store and closes it (New failed before handing it
// to openCoordinators).
func (p stateDB) discard() {
	if db, _, err := p.wait(); err == nil {
		db.Close()
	}
}

// openCoordinators takes the state store from openStateDB and opens the
// coordinators on it. On error the store is closed.
func (s *Server) openCoordinators(state stateDB) error {
	db, dir, err := state.wait()
	if err != nil {
		return err
	}
	// Offset commits, transaction state and share acknowledgements
	// survive a killed process with one write(2), as Kafka's internal
	// topics do in the page cache; with log.flush.interval.messages=1 each
	// write is fsynced too. Replay hands the share-partition states a
	// damaged record held to share, which refuses to start them afresh.
	sj, err := statejournal.Open(db, filepath.Join(dir, "state.journal"), statejournal.Options{
		SyncEveryWrite: s.effectiveConfig().LogFlushIntervalMessages == 1,
		Logger:         s.logger.With("component", "state-journal"),
		Lost:           share.MarkLost(s.logger.With("component", "share")),
	})
	if err != nil {
		db.Close()
		return err
	}
	gc, err := group.New(group.Config{
		Store:    group.NewJournaledPebbleStore(db, sj),
		Logger:   s.logger.With("component", "groups"),
		Topics:   s.groupTopics,
		Settings: s.groupSettings,
	})
	if err != nil {
		sj.Close()
		db.Close()
		return fmt.Errorf("open group coordinator: %w", err)
	}
	tc, err := s.newTxnCoordinator(db, sj, gc)
	if err != nil {
		gc.Close()
		sj.Close()
		db.Close()
		return fmt.Errorf("open transaction coordinator: %w", err)
	}
	s.coord.stateJournal = sj
	s.coord.stateDB, s.coord.stateDir, s.coord.groups, s.coord.txn = db, dir, gc, tc
	interval := time.Duration(s.cfg.OffsetsRetentionCheckIntervalMs) * time.Millisecond
	s.bgWG.Add(2)
	go func() {
		defer s.bgWG.Done()
		gc.RunExpiry(s.ctx, interval)
	}()
	go func() {
		defer s.bgWG.Done()
		ms := func(v int32) time.Duration { return time.Duration(v) * time.Millisecond }
		tc.Run(s.ctx, ms(s.cfg.TransactionAbortTimedOutIntervalMs), ms(s.cfg.TransactionRemoveExpiredIntervalMs))
	}()
	return nil
}

// closeCoordinators flushes and closes what openCoordinators opened.
func (s *Server) closeCoordinators() error {
	if s.coord.txn != nil {
		s.coord.txn.Close()
	}
	if s.coord.groups != nil {
		s.coord.groups.Close()
	}
	var errs []error
	if s.coord.stateJournal != nil {
		if err := s.coord.stateJournal.Close(); err != nil {
			errs = append(errs, err)
		}
		s.coord.stateJournal = nil
	}
	if s.coord.stateDB != nil {
		db := s.coord.stateDB
		s.coord.stateDB = nil
		if err := db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close state store: %w", err))
		}
	}
	return errors.Join(errs...)
}

// groupTopicDeleted drops the committed offsets of topics that no longer
// exist. It is meant to be called when syncPartitions removes a topic.
func (s *Server) groupTopicDeleted(topic string) {
	if s.coord.groups == nil {
		return
	}
	if err := s.coord.groups.RemoveTopic(topic); err != nil {
		s.logger.Warn("remove offsets of deleted topic", "topic", topic, "err", err)
	}
}

// groupTopics is the group coordinator's view of the topics.
func (s *Server) groupTopics() map[string]group.TopicInfo {
	img := s.meta.Image()
	out := make(map[string]group.TopicInfo, len(img.Topics))
	for name, t := range img.Topics {
		out[name] = group.TopicInfo{ID: group.TopicID(t.ID), Partitions: int32(len(t.Partitions))}
	}
	return out
}

// groupSettings are the broker's group configs with the group's own
// dynamic configs (consumer.session.timeout.ms, ...) laid over them.
func (s *Server) groupSettings(id string) group.Settings {
	c := s.effectiveConfig()
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	st := group.Settings{
		InitialRebalanceDelay:        ms(c.GroupInitialRebalanceDelayMs),
		MinSessionTimeout:            ms(int64(c.GroupMinSessionTimeoutMs)),
		MaxSessionTimeout:            ms(int64(c.GroupMaxSessionTimeoutMs)),
		MaxSize:                      int(c.GroupMaxSize),
		ConsumerSessionTimeout:       ms(int64(c.GroupConsumerSessionTimeoutMs)),
		ConsumerHeartbeatInterval:    ms(int64(c.GroupConsumerHeartbeatIntervalMs)),
		ConsumerMaxSize:              int(c.GroupConsumerMaxSize),
		ConsumerAssignors:            c.GroupConsumerAssignors,
		OffsetsRetention:             time.Duration(c.OffsetsRetentionMinutes) * time.Minute,
		StreamsSessionTimeout:        ms(int64(c.GroupStreamsSessionTimeoutMs)),
		StreamsInitialRebalanceDelay: ms(int64(c.GroupStreamsInitialRebalanceDelayMs)),
		StreamsHeartbeatInterval:     ms(int64(c.GroupStreamsHeartbeatIntervalMs)),
		StreamsMaxSize:               int(c.GroupStreamsMaxSize),
		StreamsNumStandbyReplicas:    int(c.GroupStreamsNumStandbyReplicas),
		StreamsTaskOffsetInterval:    ms(int64(c.GroupStreamsTaskOffsetIntervalMs)),
		StreamsAcceptableRecoveryLag: c.GroupStreamsAcceptableRecoveryLag,
		OffsetMetadataMaxBytes:       int(c.OffsetMetadataMaxBytes),
	}
	for k, v := range s.meta.Image().GroupConfigs[id] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue // validated on the way in; a bad value keeps the default
		}
		switch k {
		case "consumer.session.timeout.ms":
			st.ConsumerSessionTimeout = ms(n)
		case "consumer.heartbeat.interval.ms":
			st.ConsumerHeartbeatInterval = ms(n)
		case "streams.session.timeout.ms":
			st.StreamsSessionTimeout = ms(n)
		case "streams.heartbeat.interval.ms":
			st.StreamsHeartbeatInterval = ms(n)
		case "streams.initial.rebalance.delay.ms":
			st.StreamsInitialRebalanceDelay = ms(n)
		case "streams.num.standby.replicas":
			st.StreamsNumStandbyReplicas = int(n)
		case "streams.task.offset.interval.ms":
			st.StreamsTaskOffsetInterval = ms(n)
		case "streams.acceptable.recovery.lag":
			st.StreamsAcceptableRecoveryLag = n
		}
	}
	return st
}

// pebbleSlog adapts pebble's printf logger to slog. pebble calls Fatalf on
// broken invariants and does not expect it to return.
type pebbleSlog struct{ l *slog.Logger }

func (p pebbleSlog) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "source", "pebble")
}

func (p pebbleSlog) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "source", "pebble")
	panic("state store: pebble fatal: " + msg)
}

// loadCoordinators opens the group and share coordinators on the state
// store while the node already serves: Kafka too answers ApiVersions,
// Metadata, Produce and Fetch while its coordinators load their state. The
// requests of APIs not registered coordinatorFree wait in handleFrame for
// the few milliseconds this takes rather than getting
// COORDINATOR_LOAD_IN_PROGRESS and a client back-off of 100 ms or more.
// A failure stops the node: Serve returns it.
func (s *Server) loadCoordinators(state stateDB) {
	if coordinatorLoadHook != nil {
		coordinatorLoadHook()
	}
	err := s.openCoordinators(state)
	if err == nil {
		var persister share.Persister
		if persister, err = s.newSharePersister(); err == nil {
			var m *share.Manager
			if m, err = s.newShareManager(persister); err == nil {
				s.share = m
				s.coord.others = append(s.coord.others, shareDirectory{m})
				// One id space for every group type, as in Kafka.
				s.coord.groups.SetForeignGroups(shareDirectory{m}.Owns)
			}
		}
	}
	if err != nil {
		s.coordErr = fmt.Errorf("load group and share coordinators: %w", err)
		s.logger.Error("start failed", "err", s.coordErr)
	}
	close(s.coordReady)
}

// coordinatorLoadHook, when set (tests only), runs before the coordinators
// load, so a test can hold them back and watch a node serve without them.
var coordinatorLoadHook func()

// awaitCoordinators waits until the coordinators have loaded; it returns
// their load error, or ctx's if the wait is cut short.
func (s *Server) awaitCoordinators(ctx context.Context) error {
	select {
	case <-s.coordReady:
		return s.coordErr
	default:
	}
	select {
	case <-s.coordReady:
		return s.coordErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AwaitCoordinators waits until the group, transaction and share
// coordinators have loaded (they load in the background after the listeners
// open; /readyz and the control API's status say ready from then on).
func (s *Server) AwaitCoordinators(ctx context.Context) error { return s.awaitCoordinators(ctx) }

// coordinatorsLoaded reports, without waiting, whether coord and share may
// be read (metrics scrapes and the UI skip them until then).
func (s *Server) coordinatorsLoaded() bool {
	select {
	case <-s.coordReady:
		return s.coordErr == nil
	default:
		return false
	}
}
