package broker

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/cockroachdb/pebble"

	"sharq/log"
	"sharq/raftmeta"
	"sharq/share"
)

// The broker's side of share groups: share.Manager owns them (sessions,
// share-partitions, timers, persistence); this file gives it the logs,
// the settings and the persister.

// shareGroupsEnabled: every share RPC answers UNSUPPORTED_VERSION unless the
// share.version feature is finalized at 1 or more, as Kafka checks.
func (s *Server) shareGroupsEnabled() bool {
	return s.meta.Image().Features["share.version"] >= 1
}

// isOtherGroupType reports whether a group id is used by a group of another
// type (classic or consumer): share heartbeats for it are refused.
func (s *Server) isOtherGroupType(id string) bool {
	return s.coord.groups != nil && s.coord.groups.Exists(id)
}

// clientHost is the peer address as Kafka's tools print it (Java's
// InetAddress.toString: "/127.0.0.1").
func (c *conn) clientHost() string {
	if c == nil {
		return ""
	}
	if a, ok := c.nc.RemoteAddr().(*net.TCPAddr); ok {
		return "/" + a.IP.String()
	}
	return ""
}

// shareSettings are a share group's effective configs: group overrides
// (kafka-configs --entity-type groups) over the broker's group.share.*.
func (s *Server) shareSettings(group string) share.Settings {
	c := s.effectiveConfig()
	base := share.Settings{
		LockDuration:      time.Duration(c.GroupShareRecordLockDurationMs) * time.Millisecond,
		DeliveryLimit:     int(c.GroupShareDeliveryCountLimit),
		MaxRecordLocks:    int(c.GroupSharePartitionMaxRecordLocks),
		SessionTimeout:    time.Duration(c.GroupShareSessionTimeoutMs) * time.Millisecond,
		HeartbeatInterval: time.Duration(c.GroupShareHeartbeatIntervalMs) * time.Millisecond,
		MaxSize:           int(c.GroupShareMaxSize),
		AutoOffsetReset:   "latest",
		RenewEnabled:      true,
		FairAcquisition:   true,
		MaxSessions:       int(c.GroupShareMaxShareSessions),
		FetchMaxBytes:     int(c.FetchMaxBytes),
		DLQAutoCreate:     c.ErrorsDLQAutoCreateTopicsEnable,
		DLQPrefix:         c.ErrorsDLQTopicNamePrefix,
	}
	img := s.meta.Image()
	base.DLQEnabled = img.Features["share.version"] >= 2
	return base.WithOverrides(img.GroupConfigs[group])
}

// shareLogs is share.Logs over this node's partitions.
type shareLogs struct{ s *Server }

func (l shareLogs) Partition(topicID [16]byte, index int32) (share.PartitionLog, int16) {
	t := l.s.meta.Image().TopicsByID[raftmeta.UUID(topicID)]
	if t == nil {
		return nil, errUnknownTopicID
	}
	pt := l.s.partitionFor(t.Name, index)
	if pt == nil {
		if index >= 0 && int(index) < len(t.Partitions) {
			return nil, errNotLeaderOrFollower
		}
		return nil, errUnknownTopicOrPartition
	}
	return pt, 0
}

func (shareLogs) ReadErrorCode(err error) int16 {
	if errors.Is(err, log.ErrOffsetOutOfRange) {
		return 0
	}
	return log.ErrorCode(err)
}

// share.PartitionLog, read by the share manager: Pin/Unpin around reads
// (a partition whose log cannot be served answers KAFKA_STORAGE_ERROR);
// the offsets also answer unpinned, from the last open log (-1 if never
// opened).

func (p *partition) Pin() error {
	_, err := p.acquire()
	return err
}

func (p *partition) Unpin() { p.release() }

func (p *partition) LogStartOffset() int64 {
	if l := p.log(); l != nil {
		return l.LogStartOffset()
	}
	if st, ok := p.stats(); ok {
		return st.LogStartOffset
	}
	return -1
}

func (p *partition) HighWatermark() int64 {
	if l := p.log(); l != nil {
		return l.HighWatermark()
	}
	if st, ok := p.stats(); ok {
		return st.HighWatermark
	}
	return -1
}

func (p *partition) LastStableOffset() int64 {
	if l := p.log(); l != nil {
		return l.LastStableOffset()
	}
	return p.HighWatermark()
}

// AbortedTransactions is log's: share.AbortedTxn and log.AbortedTxn are
// one type (recordbatch.AbortedTxn).
func (p *partition) AbortedTransactions(from, upTo int64, dst []share.AbortedTxn) []share.AbortedTxn {
	l := p.log()
	if l == nil {
		return dst
	}
	return l.AbortedTransactions(from, upTo, dst)
}

func (p *partition) Read(offset int64, maxBytes int32, dst []byte) ([]byte, error) {
	l := p.log()
	if l == nil {
		return dst, log.ErrClosed
	}
	return l.Read(offset, maxBytes, dst)
}

func (p *partition) OffsetForTimestamp(ts int64) (int64, int64, error) {
	l := p.log()
	if l == nil {
		return -1, -1, log.ErrClosed
	}
	return l.OffsetForTimestamp(ts)
}

// newShareManager sets up share groups on the persister.
func (s *Server) newShareManager(persister share.Persister) (*share.Manager, error) {
	return share.NewManager(share.Options{
		Persister: persister,
		Logs:      shareLogs{s},
		Settings:  s.shareSettings,
		Logger:    s.logger.With("component", "share"),
		DLQ:       shareDLQ{s},
		// Key-ordered delivery reads record keys of compressed batches.
		Decompress: log.Decompress,
	})
}

// dropShareSessions closes the share sessions bound to a closed connection
// and releases what their members hold.
func (s *Server) dropShareSessions(c *conn) {
	if !s.coordinatorsLoaded() {
		// A connection that opened a share session waited for the
		// coordinators; this one cannot have any.
		return
	}
	if s.share != nil {
		s.share.ReleaseConn(c)
	}
}

// newSharePersister picks where share-partition state lives: the node's
// state store when one is open, else memory. On the state store, durable
// writes are staged in the state journal (<state dir>/state.journal),
// which reaches the page cache without an fsync, as Kafka's share state
// does; with log.flush.interval.messages=1 the journal fsyncs every write.
func (s *Server) newSharePersister() (share.Persister, error) {
	db := s.stateDB()
	if db == nil {
		return share.NewMemPersister(), nil
	}
	p, err := share.NewJournaledPersister(db, s.coord.stateJournal, s.logger.With("component", "share"))
	if err != nil {
		return nil, fmt.Errorf("open share state: %w", err)
	}
	return p, nil
}

// stateDB is the node's state store (<log.dirs>/state), nil when not open.
func (s *Server) stateDB() *pebble.DB { return s.coord.stateDB }

// resolveTopic finds a topic by id in the image.
func resolveTopic(img *raftmeta.Image, id [16]byte) *raftmeta.Topic {
	return img.TopicsByID[raftmeta.UUID(id)]
}

// ShareStartOffset is the live SPSO of a share-partition (what /ui and
// sharq_share_partition_start_offset show), ok false when the topic or the
// share-partition's state is unknown. DescribeShareGroupOffsets answers
// the persisted start offset instead, as Kafka does.
func (s *Server) ShareStartOffset(group, topic string, partition int32) (int64, bool) {
	t := s.meta.Image().Topics[topic]
	if t == nil || s.share == nil {
		return -1, false
	}
	spso, _, ok := s.share.Offsets(share.Key{Group: group, TopicID: t.ID, Partition: partition})
	return spso, ok
}
