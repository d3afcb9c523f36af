package broker

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"sharq/raftmeta"
	"sharq/share"
)

// Share groups on this node: the coordinator (membership and assignment),
// the share sessions of ShareFetch/ShareAcknowledge and the share-partitions
// (lock managers) with their timers and persistence.
//
// Lock order: shareState.mu, then sharePart.mu, then partition.mu (log
// waiters). No disk I/O under shareState.mu except the persister writes an
// acknowledgement must wait for, which happen under the share-partition's
// own mutex, never under shareState.mu.
type shareState struct {
	s *Server

	mu       sync.Mutex
	coord    *share.Coordinator
	sessions map[shareSessionKey]*shareSession
	parts    map[sharePartKey]*sharePart
	// expiry is the one timer for member session timeouts.
	expiry *time.Timer

	persister share.Persister
}

type shareSessionKey struct{ group, member string }

// shareSession is a ShareFetch session: the partitions a member fetches from
// this node and the epoch its next request must carry.
type shareSession struct {
	key   shareSessionKey
	epoch int32
	parts []sharePartKey
	conn  *conn
}

func (ss *shareSession) has(k sharePartKey) bool {
	for _, p := range ss.parts {
		if p == k {
			return true
		}
	}
	return false
}

func (ss *shareSession) add(k sharePartKey) bool {
	if ss.has(k) {
		return false
	}
	ss.parts = append(ss.parts, k)
	return true
}

func (ss *shareSession) forget(k sharePartKey) {
	for i, p := range ss.parts {
		if p == k {
			ss.parts = append(ss.parts[:i], ss.parts[i+1:]...)
			return
		}
	}
}

type sharePartKey struct {
	group     string
	topicID   raftmeta.UUID
	partition int32
}

func (k sharePartKey) persistKey() share.Key {
	return share.Key{Group: k.group, TopicID: k.topicID, Partition: k.partition}
}

// sharePart is one share-partition: the lock manager, its single lock
// timer and the ShareFetches parked on it.
type sharePart struct {
	key sharePartKey

	mu      sync.Mutex
	sp      *share.SharePartition
	timer   *time.Timer
	armed   time.Time
	waiters map[*waiter]struct{}
	release []share.InFlightRange
	// bytesPerOffset of the last log read, to size the next (readSize).
	bytesPerOffset float64
	// staged is the latest state snapshot to write, stagedSeq its number
	// (both under mu); see commit.
	staged    share.State
	stagedSeq uint64

	// wmu serialises writes of this share-partition's state; the fields
	// below it are under wmu. Lock order: wmu, then mu.
	wmu        sync.Mutex
	writing    share.State
	writtenSeq uint64
	syncedSeq  uint64
}

// newShareState sets up share groups; groups with persisted state exist
// again (empty) after a restart, as in Kafka.
func newShareState(s *Server, persister share.Persister) (*shareState, error) {
	st := &shareState{
		s:         s,
		coord:     share.NewCoordinator(),
		sessions:  map[shareSessionKey]*shareSession{},
		parts:     map[sharePartKey]*sharePart{},
		persister: persister,
	}
	groups, err := persister.Groups()
	if err != nil {
		return nil, fmt.Errorf("load share groups: %w", err)
	}
	for _, g := range groups {
		st.coord.EnsureGroup(g)
	}
	return st, nil
}

// shareSettings are a share group's effective configs: group overrides
// (kafka-configs --entity-type groups) over the broker's group.share.*.
type shareSettings struct {
	lockDuration      time.Duration
	deliveryLimit     int
	maxRecordLocks    int
	sessionTimeout    time.Duration
	heartbeatInterval time.Duration
	maxSize           int
	autoOffsetReset   string
	readCommitted     bool
	renewEnabled      bool
}

func (s *Server) shareSettings(group string) shareSettings {
	c := s.effectiveConfig()
	st := shareSettings{
		lockDuration:      time.Duration(c.GroupShareRecordLockDurationMs) * time.Millisecond,
		deliveryLimit:     int(c.GroupShareDeliveryCountLimit),
		maxRecordLocks:    int(c.GroupSharePartitionMaxRecordLocks),
		sessionTimeout:    time.Duration(c.GroupShareSessionTimeoutMs) * time.Millisecond,
		heartbeatInterval: time.Duration(c.GroupShareHeartbeatIntervalMs) * time.Millisecond,
		maxSize:           int(c.GroupShareMaxSize),
		autoOffsetReset:   "latest",
		renewEnabled:      true,
	}
	overrides := s.meta.Image().GroupConfigs[group]
	ms := func(name string, dst *time.Duration) {
		if v, ok := overrides[name]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				*dst = time.Duration(n) * time.Millisecond
			}
		}
	}
	num := func(name string, dst *int) {
		if v, ok := overrides[name]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				*dst = n
			}
		}
	}
	ms("share.record.lock.duration.ms", &st.lockDuration)
	ms("share.session.timeout.ms", &st.sessionTimeout)
	ms("share.heartbeat.interval.ms", &st.heartbeatInterval)
	num("share.delivery.count.limit", &st.deliveryLimit)
	num("share.partition.max.record.locks", &st.maxRecordLocks)
	if v, ok := overrides["share.auto.offset.reset"]; ok {
		st.autoOffsetReset = v
	}
	if v := overrides["share.isolation.level"]; v == "read_committed" {
		st.readCommitted = true
	}
	if v := overrides["share.renew.acknowledge.enable"]; v == "false" {
		st.renewEnabled = false
	}
	return st
}

func (st shareSettings) partitionConfig() share.Config {
	return share.Config{
		DeliveryCountLimit: st.deliveryLimit,
		RecordLockDuration: st.lockDuration,
		MaxRecordLocks:     st.maxRecordLocks,
		ReadCommitted:      st.readCommitted,
		RenewDisabled:      !st.renewEnabled,
	}
}

func (st shareSettings) groupConfig() share.GroupConfig {
	return share.GroupConfig{SessionTimeout: st.sessionTimeout, HeartbeatInterval: st.heartbeatInterval, MaxSize: st.maxSize}
}
