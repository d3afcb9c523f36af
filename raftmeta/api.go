package raftmeta

// The types the broker exchanges with the metadata store; the Store methods
// live in store.go and contract_test.go pins their signatures.

import (
	"errors"
	"log/slog"
)

// UUID is a Kafka UUID (topic ids): 16 bytes, never all zero for a topic.
type UUID [16]byte

// Config opens a Store.
type Config struct {
	Dir    string // <log.dirs>/meta: raft log + stable store in log/raft.wal, snapshots beside it
	NodeID int32
	// LocalNodes are the node ids this process serves over the same
	// partition logs (virtual brokers); empty means NodeID alone. Elections
	// and reassignments only place replicas and leaders on these
	// (replicas.go).
	LocalNodes []int32
	// Voters is controller.quorum.voters parsed ("id@host:port"); empty means
	// a single self voter with an in-memory transport (no port needed).
	Voters []Voter
	// BindAddr is the raft TCP address in cluster mode.
	BindAddr string
	// ClusterID is written into the first metadata entry when bootstrapping;
	// empty = generate one (Kafka's 22-char base64url UUID form).
	ClusterID string
	// BootstrapBrokerConfigs are cluster-wide dynamic broker configs (the
	// <default> entity) written right after the bootstrap of a new
	// cluster: Kafka's controller writes min.insync.replicas there when
	// eligible leader replicas are enabled, so tools see it with source
	// DYNAMIC_DEFAULT_BROKER_CONFIG.
	BootstrapBrokerConfigs map[string]string
	Logger                 *slog.Logger
}

// Voter is one controller.quorum.voters entry.
type Voter struct {
	ID   int32
	Addr string
}

// Image is an immutable snapshot of cluster metadata. Handlers read it
// through Store.Image() without locks and must not modify it.
type Image struct {
	ClusterID    string
	ControllerID int32
	Brokers      map[int32]Broker
	Topics       map[string]*Topic // by name
	TopicsByID   map[UUID]*Topic
	// BrokerConfigs holds dynamic broker configs: key "" = cluster-wide
	// default (<default> entity), otherwise the node id in decimal.
	BrokerConfigs map[string]map[string]string
	GroupConfigs  map[string]map[string]string // group id -> dynamic group configs
	// ClientQuotas holds client quotas by quota entity (QuotaEntityKey):
	// key (producer_byte_rate, ...) -> value in Kafka's decimal form.
	ClientQuotas map[string]map[string]string
	// ClientMetrics holds KIP-714 client metrics subscriptions by name:
	// metrics, interval.ms, match (Kafka's client-metrics config resource).
	ClientMetrics map[string]map[string]string
	Features      map[string]int16 // finalized feature levels (metadata.version, ...)
	AppliedIndex  uint64
	// NextProducerID is the first producer id not yet handed out
	// (AllocateProducerIDs). Added by raftmeta; not part of the original contract.
	NextProducerID int64
	// Scram holds SCRAM credentials (AlterUserScramCredentials).
	Scram map[ScramKey]ScramCredential
	// ACLs holds the ACL bindings, sorted (CreateAcls / DeleteAcls).
	ACLs []ACL
}

// Broker is a registered broker's advertised endpoint.
type Broker struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   string // "" = none
}

// Topic is a topic's metadata.
type Topic struct {
	Name       string
	ID         UUID
	Partitions []Partition       // index == partition number
	Configs    map[string]string // topic-level overrides only
}

// Partition is one partition's placement.
type Partition struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
}

// Sentinel errors.
var (
	ErrTopicExists       = errors.New("topic already exists")      // TOPIC_ALREADY_EXISTS (36)
	ErrUnknownTopic      = errors.New("unknown topic")             // UNKNOWN_TOPIC_OR_PARTITION (3) / UNKNOWN_TOPIC_ID (100)
	ErrInvalidPartitions = errors.New("invalid partition count")   // INVALID_PARTITIONS (37)
	ErrNotController     = errors.New("not the active controller") // NOT_CONTROLLER (41)
	ErrClosed            = errors.New("metadata store closed")
)

// Store methods (store.go):
//
//   func Open(cfg Config) (*Store, error)
//       opens or bootstraps; returns once the local image reflects every
//       committed entry and (single voter) this node is leader.
//   func (s *Store) Image() *Image
//   func (s *Store) Close() error
//   func (s *Store) RegisterBroker(ctx context.Context, b Broker) error
//   func (s *Store) CreateTopic(ctx context.Context, name string, partitions int32, replicas []int32 /*len = RF*/, configs map[string]string) (*Topic, error)
//       assigns a fresh random topic id; answers once applied locally.
//   func (s *Store) DeleteTopic(ctx context.Context, name string) (UUID, error)
//   func (s *Store) CreatePartitions(ctx context.Context, name string, newCount int32) error
//   func (s *Store) AlterTopicConfigs(ctx context.Context, name string, set map[string]string, del []string) error
//   func (s *Store) AlterBrokerConfigs(ctx context.Context, entity string, set map[string]string, del []string) error
//   func (s *Store) AlterGroupConfigs(ctx context.Context, group string, set map[string]string, del []string) error
//   func (s *Store) SetFeature(ctx context.Context, name string, level int16) error
//   func (s *Store) AllocateProducerIDs(ctx context.Context, count int64) (first int64, err error)
//       hands out [first, first+count) never returned again, across restarts.
//   func (s *Store) WaitApplied(ctx context.Context, index uint64) error
