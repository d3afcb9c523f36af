// Package config turns defaults, a config file (YAML or a Kafka
// server.properties), SHARQ_* environment variables and --override flags into
// one typed Config. It is the only package that imports viper: every other
// package takes the plain structs defined here, so tests never touch viper.
//
// Key names are Kafka's own (listeners, log.dirs, log.segment.bytes, ...),
// kept flat: viper is opened with a non-dot key delimiter so a dotted Kafka
// name is one key, not a nested map.
//
// One table (keys.go for the broker, topic.go for topics) is the single source
// of truth for every key: its Kafka type, default, validation, description and
// whether sharq honours it. Parsing, Validate, --help, WriteReference and the
// DescribeConfigs entries are all driven from it.
package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Sentinel errors. Every error this package returns for a bad key or value
// wraps one of them, so callers (AlterConfigs, CreateTopics) can map them to
// Kafka error codes.
var (
	// ErrUnknownConfig: the key is not a configuration sharq (or Kafka) knows.
	ErrUnknownConfig = errors.New("unknown configuration")
	// ErrInvalidConfig: the key is known but the value is not acceptable.
	ErrInvalidConfig = errors.New("invalid configuration")
	// ErrNotDynamic: a known broker key AlterConfigs may not change (Kafka
	// answers INVALID_REQUEST for it). It is an ErrInvalidConfig too.
	ErrNotDynamic = fmt.Errorf("%w: not dynamically updatable", ErrInvalidConfig)
)

// Listener is one entry of `listeners` or `advertised.listeners`, e.g.
// PLAINTEXT://localhost:9092. Port 0 on a listener means "pick a free port";
// the broker then advertises the port it really got.
type Listener struct {
	Name     string // listener name, e.g. PLAINTEXT
	Host     string // may be empty (all interfaces) for listeners
	Port     int
	Protocol string // security protocol from listener.security.protocol.map: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
}

// Addr is host:port for net.Listen / net.Dial (IPv6 hosts bracketed).
func (l Listener) Addr() string {
	return net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
}

// String is the Kafka form NAME://host:port.
func (l Listener) String() string {
	h := l.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return l.Name + "://" + h + ":" + strconv.Itoa(l.Port)
}

// Config is sharq's whole configuration. Field comments name the Kafka key.
// Build one with New (every default) or Load (defaults, file, environment,
// overrides); a Config built by hand should start from New.
type Config struct {
	Listeners                   []Listener        // listeners
	AdvertisedListeners         []Listener        // advertised.listeners (Load derives it from Listeners when unset)
	ListenerSecurityProtocolMap map[string]string // listener.security.protocol.map: listener name -> security protocol
	LogDirs                     string            // log.dirs: one data directory holding topics/, state/, meta/
	NodeID                      int32             // node.id
	VirtualBrokers              int32             // sharq.virtual.brokers: node ids served by this process (docs/virtual-brokers.md)
	ClusterID                   string            // cluster.id: generated on first start when empty
	BrokerRack                  string            // broker.rack ("" = none)

	NumPartitions            int32 // num.partitions
	MaxPartitions            int32 // sharq.max.partitions: most partitions CreateTopics/CreatePartitions may bring the cluster to
	DefaultReplicationFactor int16 // default.replication.factor
	AutoCreateTopicsEnable   bool  // auto.create.topics.enable
	DeleteTopicEnable        bool  // delete.topic.enable

	LogSegmentBytes                      int64  // log.segment.bytes
	LogRollMs                            int64  // log.roll.ms (log.roll.hours folded in)
	LogRollJitterMs                      int64  // log.roll.jitter.ms (log.roll.jitter.hours folded in)
	LogRetentionMs                       int64  // log.retention.ms (-1 = unlimited; .hours/.minutes folded in)
	LogRetentionBytes                    int64  // log.retention.bytes (-1 = unlimited)
	LogRetentionCheckIntervalMs          int64  // log.retention.check.interval.ms
	LogIndexIntervalBytes                int32  // log.index.interval.bytes
	LogIndexSizeMaxBytes                 int32  // log.index.size.max.bytes
	LogFlushIntervalMessages             int64  // log.flush.interval.messages (1 = sync every append, group commit)
	LogFlushIntervalMs                   int64  // log.flush.interval.ms (log.flush.scheduler.interval.ms folded in; Kafka's default math.MaxInt64 = never by time)
	LogMessageTimestampType              string // log.message.timestamp.type: CreateTime | LogAppendTime
	LogMessageTimestampBeforeMaxMs       int64  // log.message.timestamp.before.max.ms
	LogMessageTimestampAfterMaxMs        int64  // log.message.timestamp.after.max.ms
	LogCleanupPolicy                     string // log.cleanup.policy: delete | compact | delete,compact
	LogSegmentDeleteDelayMs              int64  // log.segment.delete.delay.ms
	LogPreallocate                       bool   // log.preallocate
	MessageMaxBytes                      int32  // message.max.bytes
	SocketRequestMaxBytes                int32  // socket.request.max.bytes
	CompressionType                      string // compression.type (producer = keep the producer's codec)
	MinInsyncReplicas                    int32  // min.insync.replicas
	ConnectionsMaxIdleMs                 int64  // connections.max.idle.ms
	QueuedMaxRequestBytes                int64  // queued.max.request.bytes (<= 0 = unbounded)
	QuotaWindowNum                       int32  // quota.window.num
	TelemetryMaxBytes                    int32  // telemetry.max.bytes
	QuotaWindowSizeSeconds               int32  // quota.window.size.seconds
	RequestReadTimeoutMs                 int64  // sharq.request.read.timeout.ms
	MaxIncrementalFetchSessionCacheSlots int32  // max.incremental.fetch.session.cache.slots
	FetchMaxBytes                        int32  // fetch.max.bytes

	// The log cleaner (log.cleaner.*).
	LogCleanerEnable              bool    // log.cleaner.enable
	LogCleanerThreads             int32   // log.cleaner.threads
	LogCleanerBackoffMs           int64   // log.cleaner.backoff.ms
	LogCleanerDedupeBufferSize    int64   // log.cleaner.dedupe.buffer.size
	LogCleanerIOBufferSize        int32   // log.cleaner.io.buffer.size
	LogCleanerIOBufferLoadFactor  float64 // log.cleaner.io.buffer.load.factor
	LogCleanerIOMaxBytesPerSecond float64 // log.cleaner.io.max.bytes.per.second

	OffsetsRetentionMinutes         int64 // offsets.retention.minutes
	OffsetsRetentionCheckIntervalMs int64 // offsets.retention.check.interval.ms
	OffsetMetadataMaxBytes          int32 // offset.metadata.max.bytes

	// Classic groups.
	GroupInitialRebalanceDelayMs int64 // group.initial.rebalance.delay.ms
	GroupMinSessionTimeoutMs     int32 // group.min.session.timeout.ms
	GroupMaxSessionTimeoutMs     int32 // group.max.session.timeout.ms
	GroupMaxSize                 int32 // group.max.size

	// KIP-848 consumer groups.
	GroupConsumerSessionTimeoutMs        int32    // group.consumer.session.timeout.ms
	GroupConsumerMinSessionTimeoutMs     int32    // group.consumer.min.session.timeout.ms
	GroupConsumerMaxSessionTimeoutMs     int32    // group.consumer.max.session.timeout.ms
	GroupConsumerHeartbeatIntervalMs     int32    // group.consumer.heartbeat.interval.ms
	GroupConsumerMinHeartbeatIntervalMs  int32    // group.consumer.min.heartbeat.interval.ms
	GroupConsumerMaxHeartbeatIntervalMs  int32    // group.consumer.max.heartbeat.interval.ms
	GroupConsumerMaxSize                 int32    // group.consumer.max.size
	GroupConsumerAssignors               []string // group.consumer.assignors (uniform, range)
	GroupConsumerMigrationPolicy         string   // group.consumer.migration.policy
	GroupConsumerAssignmentIntervalMs    int32    // group.consumer.assignment.interval.ms
	GroupConsumerMinAssignmentIntervalMs int32    // group.consumer.min.assignment.interval.ms
	GroupConsumerMaxAssignmentIntervalMs int32    // group.consumer.max.assignment.interval.ms
	GroupCoordinatorRebalanceProtocols   []string // group.coordinator.rebalance.protocols

	// KIP-1071 streams groups.
	GroupStreamsSessionTimeoutMs        int32    // group.streams.session.timeout.ms
	GroupStreamsMinSessionTimeoutMs     int32    // group.streams.min.session.timeout.ms
	GroupStreamsMaxSessionTimeoutMs     int32    // group.streams.max.session.timeout.ms
	GroupStreamsHeartbeatIntervalMs     int32    // group.streams.heartbeat.interval.ms
	GroupStreamsMinHeartbeatIntervalMs  int32    // group.streams.min.heartbeat.interval.ms
	GroupStreamsMaxHeartbeatIntervalMs  int32    // group.streams.max.heartbeat.interval.ms
	GroupStreamsMaxSize                 int32    // group.streams.max.size
	GroupStreamsNumStandbyReplicas      int32    // group.streams.num.standby.replicas
	GroupStreamsMaxStandbyReplicas      int32    // group.streams.max.standby.replicas
	GroupStreamsInitialRebalanceDelayMs int32    // group.streams.initial.rebalance.delay.ms
	GroupStreamsAssignmentIntervalMs    int32    // group.streams.assignment.interval.ms
	GroupStreamsMinAssignmentIntervalMs int32    // group.streams.min.assignment.interval.ms
	GroupStreamsMaxAssignmentIntervalMs int32    // group.streams.max.assignment.interval.ms
	GroupStreamsAssignors               []string // group.streams.assignors (sticky)
	GroupStreamsRackAwareAssignmentTags []string // group.streams.rack.aware.assignment.tags
	GroupStreamsTaskOffsetIntervalMs    int32    // group.streams.task.offset.interval.ms (internal)
	GroupStreamsMinTaskOffsetIntervalMs int32    // group.streams.min.task.offset.interval.ms (internal)
	GroupStreamsNumWarmupReplicas       int32    // group.streams.num.warmup.replicas (internal)
	GroupStreamsMaxWarmupReplicas       int32    // group.streams.max.warmup.replicas (internal)
	GroupStreamsAcceptableRecoveryLag   int64    // group.streams.acceptable.recovery.lag (internal)

	// KIP-932 share groups (group coordinator side).
	GroupShareMaxSize                 int32    // group.share.max.size
	GroupShareSessionTimeoutMs        int32    // group.share.session.timeout.ms
	GroupShareMinSessionTimeoutMs     int32    // group.share.min.session.timeout.ms
	GroupShareMaxSessionTimeoutMs     int32    // group.share.max.session.timeout.ms
	GroupShareHeartbeatIntervalMs     int32    // group.share.heartbeat.interval.ms
	GroupShareMinHeartbeatIntervalMs  int32    // group.share.min.heartbeat.interval.ms
	GroupShareMaxHeartbeatIntervalMs  int32    // group.share.max.heartbeat.interval.ms
	GroupShareAssignors               []string // group.share.assignors (simple)
	GroupShareAssignmentIntervalMs    int32    // group.share.assignment.interval.ms
	GroupShareMinAssignmentIntervalMs int32    // group.share.min.assignment.interval.ms
	GroupShareMaxAssignmentIntervalMs int32    // group.share.max.assignment.interval.ms
	// Share-partition side (ShareGroupConfig).
	GroupShareDeliveryCountLimit         int32  // group.share.delivery.count.limit
	GroupShareMinDeliveryCountLimit      int32  // group.share.min.delivery.count.limit
	GroupShareMaxDeliveryCountLimit      int32  // group.share.max.delivery.count.limit
	GroupShareRecordLockDurationMs       int32  // group.share.record.lock.duration.ms
	GroupShareMinRecordLockDurationMs    int32  // group.share.min.record.lock.duration.ms
	GroupShareMaxRecordLockDurationMs    int32  // group.share.max.record.lock.duration.ms
	GroupSharePartitionMaxRecordLocks    int32  // group.share.partition.max.record.locks
	GroupShareMinPartitionMaxRecordLocks int32  // group.share.min.partition.max.record.locks
	GroupShareMaxPartitionMaxRecordLocks int32  // group.share.max.partition.max.record.locks
	GroupShareMaxShareSessions           int32  // group.share.max.share.sessions
	ErrorsDLQAutoCreateTopicsEnable      bool   // errors.deadletterqueue.auto.create.topics.enable
	ErrorsDLQTopicNamePrefix             string // errors.deadletterqueue.topic.name.prefix

	// Transactions and idempotence.
	TransactionMaxTimeoutMs                int32 // transaction.max.timeout.ms
	TransactionalIDExpirationMs            int32 // transactional.id.expiration.ms
	TransactionAbortTimedOutIntervalMs     int32 // transaction.abort.timed.out.transaction.cleanup.interval.ms
	TransactionRemoveExpiredIntervalMs     int32 // transaction.remove.expired.transaction.cleanup.interval.ms
	ProducerIDExpirationMs                 int32 // producer.id.expiration.ms
	TransactionPartitionVerificationEnable bool  // transaction.partition.verification.enable

	// Controller / raft metadata.
	ControllerQuorumVoters  string // controller.quorum.voters: id@host:port,...; empty = single self voter
	ControllerListener      string // sharq.controller.listener: host:port for raft traffic (cluster mode only)
	ControllerListenerNames string // controller.listener.names: listeners dropped from Listeners/AdvertisedListeners

	MetricsListener string // metrics.listener: host:port for Prometheus text on /metrics ("" = off)
	LogLevel        string // sharq.log.level: debug | info | warn | error
	LogFormat       string // sharq.log.format: text | json

	// explicit holds every key Load set from a file, the environment or an
	// override, normalised to Kafka's string form. It drives the
	// STATIC_BROKER_CONFIG source in DescribeConfigs and the values of keys
	// that have no field (ignored keys, log.retention.hours, ...).
	explicit map[string]string
	// ignored lists the explicitly set keys sharq accepts but does not honour.
	ignored []string
	// kafkaEnv: Load took at least one key from the apache/kafka image's
	// KAFKA_* / CLUSTER_ID environment convention.
	kafkaEnv bool
	// dynDefault and dynBroker are the dynamic broker configs applied by
	// WithDynamic (cluster-wide default, then this broker's own), normalised;
	// dynMerged holds those WithOverrides applied without saying which level
	// they came from (they take effect but are not listed as synonyms).
	dynDefault, dynBroker, dynMerged map[string]string
}

// New returns a Config with every key at its default.
func New() *Config {
	c := &Config{}
	c.Defaults()
	return c
}

// Defaults sets every field to its default (Kafka's, unless sharq
// deliberately differs: see the key table) and forgets explicit settings.
func (c *Config) Defaults() {
	*c = Config{}
	for _, k := range brokerKeys {
		if k.set == nil || k.null {
			continue
		}
		v, err := k.parse(k.def)
		if err != nil {
			panic(fmt.Sprintf("config: bad default for %s: %v", k.name, err)) // a table bug, caught by tests
		}
		if err := k.set(c, v); err != nil {
			panic(fmt.Sprintf("config: bad default for %s: %v", k.name, err))
		}
	}
	c.fold()
	c.AdvertisedListeners = defaultAdvertised(c.Listeners)
}

// KafkaEnvironment reports whether Load took a key from the apache/kafka
// image's environment convention (a KAFKA_* variable or CLUSTER_ID): sharq
// is then standing in for that image, and prints the readiness lines tools
// written for it wait for.
func (c *Config) KafkaEnvironment() bool { return c.kafkaEnv }

// Ignored returns the explicitly set keys that sharq accepts but ignores.
func (c *Config) Ignored() []string { return append([]string(nil), c.ignored...) }

// Explicit reports the value a key was explicitly given (file, environment or
// override), normalised to Kafka's string form.
func (c *Config) Explicit(name string) (string, bool) {
	v, ok := c.explicit[name]
	return v, ok
}

// merged is a key's explicit value at its highest layer: this broker's
// dynamic config, the cluster-wide dynamic default, then the static config.
func (c *Config) merged(name string) (string, bool) {
	for _, m := range []map[string]string{c.dynBroker, c.dynDefault, c.dynMerged, c.explicit} {
		if v, ok := m[name]; ok {
			return v, true
		}
	}
	return "", false
}

// fold derives the millisecond fields from their hour/minute synonyms, the
// way Kafka does: ms wins over minutes over hours.
func (c *Config) fold() {
	get := func(name string) (int64, bool) {
		s, ok := c.merged(name)
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	hoursDefault := func(name string) int64 {
		if n, ok := get(name); ok {
			return n
		}
		n, _ := strconv.ParseInt(brokerIndex[name].def, 10, 64)
		return n
	}
	const hour, minute = int64(3600000), int64(60000)
	if ms, ok := get("log.retention.ms"); ok {
		c.LogRetentionMs = ms
	} else if m, ok := get("log.retention.minutes"); ok {
		c.LogRetentionMs = m * minute
	} else {
		c.LogRetentionMs = hoursDefault("log.retention.hours") * hour
	}
	if c.LogRetentionMs < 0 {
		c.LogRetentionMs = -1
	}
	if ms, ok := get("log.roll.ms"); ok {
		c.LogRollMs = ms
	} else {
		c.LogRollMs = hoursDefault("log.roll.hours") * hour
	}
	if ms, ok := get("log.roll.jitter.ms"); ok {
		c.LogRollJitterMs = ms
	} else {
		c.LogRollJitterMs = hoursDefault("log.roll.jitter.hours") * hour
	}
	if ms, ok := get("log.flush.interval.ms"); ok {
		c.LogFlushIntervalMs = ms
	} else {
		c.LogFlushIntervalMs = hoursDefault("log.flush.scheduler.interval.ms")
	}
	// Kafka's combined-mode server.properties lists a CONTROLLER listener;
	// sharq's raft does not speak Kafka's controller protocol, so such
	// listeners are neither served nor advertised.
	if names := strings.TrimSpace(c.ControllerListenerNames); names != "" {
		drop := map[string]bool{}
		for _, n := range strings.Split(names, ",") {
			drop[strings.ToUpper(strings.TrimSpace(n))] = true
		}
		keep := func(ls []Listener) []Listener {
			var out []Listener
			for _, l := range ls {
				if !drop[l.Name] {
					out = append(out, l)
				}
			}
			return out
		}
		c.Listeners, c.AdvertisedListeners = keep(c.Listeners), keep(c.AdvertisedListeners)
	}
	if _, ok := c.merged("log.dirs"); !ok {
		if d, ok := c.merged("log.dir"); ok {
			c.LogDirs = d
		}
	}
}

// defaultAdvertised derives advertised.listeners from listeners. Kafka
// advertises the canonical host name for an empty host; sharq advertises
// "localhost" for an empty host and for the wildcard addresses, which is
// right for a single machine and must be overridden with advertised.listeners
// for remote clients.
func defaultAdvertised(ls []Listener) []Listener {
	out := make([]Listener, len(ls))
	for i, l := range ls {
		if l.Host == "" || l.Host == "0.0.0.0" || l.Host == "::" {
			l.Host = "localhost"
		}
		out[i] = l
	}
	return out
}

// Validate checks every field against its key's rules and the rules that
// span keys. The error names each offending key and wraps ErrInvalidConfig.
func (c *Config) Validate() error {
	var errs []error
	for _, k := range brokerKeys {
		if k.get == nil {
			continue
		}
		s, null := k.get(c)
		if null {
			continue
		}
		if _, err := k.parse(s); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.validateCross()...)
	return errors.Join(errs...)
}

func invalid(key string, value any, reason string) error {
	return &Error{Key: key, Value: fmt.Sprint(value), Reason: reason, Err: ErrInvalidConfig}
}

// Error is a configuration problem with one key. Its text follows Kafka's
// ConfigException ("Invalid value X for configuration Y: reason").
type Error struct {
	Key    string
	Value  string
	Reason string
	Origin string // where the value came from (file, SHARQ_X, --override); may be empty
	Err    error  // ErrInvalidConfig or ErrUnknownConfig
}

func (e *Error) Error() string {
	var s string
	if errors.Is(e.Err, ErrUnknownConfig) {
		s = "unknown configuration " + e.Key
		if e.Reason != "" {
			s += ": " + e.Reason
		}
	} else {
		s = "Invalid value " + e.Value + " for configuration " + e.Key
		if e.Reason != "" {
			s += ": " + e.Reason
		}
	}
	if e.Origin != "" {
		s += " (from " + e.Origin + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func (c *Config) validateCross() []error {
	var errs []error
	add := func(key string, value any, reason string) { errs = append(errs, invalid(key, value, reason)) }

	if len(c.Listeners) == 0 {
		add("listeners", "", "at least one listener is required")
	}
	if err := checkListeners("listeners", c.Listeners, c.ListenerSecurityProtocolMap, false); err != nil {
		errs = append(errs, err)
	}
	if err := checkListeners("advertised.listeners", c.AdvertisedListeners, c.ListenerSecurityProtocolMap, true); err != nil {
		errs = append(errs, err)
	}
	names := map[string]bool{}
	for _, l := range c.Listeners {
		names[l.Name] = true
	}
	for _, l := range c.AdvertisedListeners {
		if !names[l.Name] {
			add("advertised.listeners", formatListeners(c.AdvertisedListeners),
				"listener "+l.Name+" is not in listeners: advertised listener names must also be listeners")
		}
	}
	errs = append(errs, c.validateSecurity()...)
	if q := c.QueuedMaxRequestBytes; q > 0 && q < int64(c.SocketRequestMaxBytes) {
		// Kafka's rule: one frame of the largest size must fit, or a
		// connection could wait for room forever.
		add("queued.max.request.bytes", q, fmt.Sprintf("must be at least socket.request.max.bytes (%d), or -1 for unbounded", c.SocketRequestMaxBytes))
	}
	if strings.TrimSpace(c.LogDirs) == "" {
		add("log.dirs", c.LogDirs, "a data directory is required")
	} else if strings.Contains(c.LogDirs, ",") {
		add("log.dirs", c.LogDirs, "sharq uses exactly one data directory; give one path")
	}
	if c.ClusterID != "" && !validClusterID(c.ClusterID) {
		add("cluster.id", c.ClusterID, "must be a Kafka Uuid: 22 characters of URL-safe base64 encoding 16 bytes")
	}
	if err := checkVoters(c.ControllerQuorumVoters, c.NodeID); err != nil {
		errs = append(errs, err)
	}
	if c.VirtualBrokers > 1 && c.ControllerQuorumVoters != "" {
		if vs, err := parseVoters(c.ControllerQuorumVoters); err == nil && len(vs) > 1 {
			add("sharq.virtual.brokers", c.VirtualBrokers, "virtual brokers share one process's partition logs; they cannot be combined with a multi-node controller.quorum.voters")
		}
	}
	if c.ControllerListener != "" {
		if _, _, err := splitHostPort(c.ControllerListener); err != nil {
			add("sharq.controller.listener", c.ControllerListener, err.Error())
		}
	}
	if c.MetricsListener != "" {
		if _, _, err := splitHostPort(c.MetricsListener); err != nil {
			add("metrics.listener", c.MetricsListener, err.Error())
		}
	}
	if c.LogFlushIntervalMs < 0 {
		add("log.flush.interval.ms", c.LogFlushIntervalMs, "Value must be at least 0")
	}
	if c.LogRollMs < 1 {
		add("log.roll.ms", c.LogRollMs, "Value must be at least 1")
	}
	if c.LogRollJitterMs < 0 {
		add("log.roll.jitter.ms", c.LogRollJitterMs, "Value must be at least 0")
	}

	// Kafka's GroupCoordinatorConfig / ShareGroupConfig "require" checks.
	type bound struct {
		val, min, max        int32
		vKey, minKey, maxKey string
	}
	for _, b := range []bound{
		{c.GroupConsumerSessionTimeoutMs, c.GroupConsumerMinSessionTimeoutMs, c.GroupConsumerMaxSessionTimeoutMs,
			"group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
		{c.GroupConsumerHeartbeatIntervalMs, c.GroupConsumerMinHeartbeatIntervalMs, c.GroupConsumerMaxHeartbeatIntervalMs,
			"group.consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
		{c.GroupConsumerAssignmentIntervalMs, c.GroupConsumerMinAssignmentIntervalMs, c.GroupConsumerMaxAssignmentIntervalMs,
			"group.consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"},
		{c.GroupStreamsSessionTimeoutMs, c.GroupStreamsMinSessionTimeoutMs, c.GroupStreamsMaxSessionTimeoutMs,
			"group.streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
		{c.GroupStreamsHeartbeatIntervalMs, c.GroupStreamsMinHeartbeatIntervalMs, c.GroupStreamsMaxHeartbeatIntervalMs,
			"group.streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
		{c.GroupStreamsAssignmentIntervalMs, c.GroupStreamsMinAssignmentIntervalMs, c.GroupStreamsMaxAssignmentIntervalMs,
			"group.streams.assignment.interval.ms", "group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms"},
		{c.GroupShareSessionTimeoutMs, c.GroupShareMinSessionTimeoutMs, c.GroupShareMaxSessionTimeoutMs,
			"group.share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
		{c.GroupShareHeartbeatIntervalMs, c.GroupShareMinHeartbeatIntervalMs, c.GroupShareMaxHeartbeatIntervalMs,
			"group.share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
		{c.GroupShareAssignmentIntervalMs, c.GroupShareMinAssignmentIntervalMs, c.GroupShareMaxAssignmentIntervalMs,
			"group.share.assignment.interval.ms", "group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"},
		{c.GroupShareDeliveryCountLimit, c.GroupShareMinDeliveryCountLimit, c.GroupShareMaxDeliveryCountLimit,
			"group.share.delivery.count.limit", "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"},
		{c.GroupShareRecordLockDurationMs, c.GroupShareMinRecordLockDurationMs, c.GroupShareMaxRecordLockDurationMs,
			"group.share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
		{c.GroupSharePartitionMaxRecordLocks, c.GroupShareMinPartitionMaxRecordLocks, c.GroupShareMaxPartitionMaxRecordLocks,
			"group.share.partition.max.record.locks", "group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"},
	} {
		if b.max < b.min {
			add(b.maxKey, b.max, b.maxKey+" must be greater than or equal to "+b.minKey)
		}
		if b.val < b.min {
			add(b.vKey, b.val, b.vKey+" must be greater than or equal to "+b.minKey)
		}
		if b.val > b.max {
			add(b.vKey, b.val, b.vKey+" must be less than or equal to "+b.maxKey)
		}
	}
	if c.GroupConsumerHeartbeatIntervalMs >= c.GroupConsumerSessionTimeoutMs {
		add("group.consumer.heartbeat.interval.ms", c.GroupConsumerHeartbeatIntervalMs,
			"group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms")
	}
	if c.GroupShareHeartbeatIntervalMs >= c.GroupShareSessionTimeoutMs {
		add("group.share.heartbeat.interval.ms", c.GroupShareHeartbeatIntervalMs,
			"group.share.heartbeat.interval.ms must be less than group.share.session.timeout.ms")
	}
	if c.GroupStreamsHeartbeatIntervalMs >= c.GroupStreamsSessionTimeoutMs {
		add("group.streams.heartbeat.interval.ms", c.GroupStreamsHeartbeatIntervalMs,
			"group.streams.heartbeat.interval.ms must be less than group.streams.session.timeout.ms")
	}
	if c.GroupStreamsNumStandbyReplicas > c.GroupStreamsMaxStandbyReplicas {
		add("group.streams.num.standby.replicas", c.GroupStreamsNumStandbyReplicas,
			"group.streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas")
	}
	if c.GroupStreamsTaskOffsetIntervalMs < c.GroupStreamsMinTaskOffsetIntervalMs {
		add("group.streams.task.offset.interval.ms", c.GroupStreamsTaskOffsetIntervalMs,
			"group.streams.task.offset.interval.ms must be greater than or equal to group.streams.min.task.offset.interval.ms")
	}
	if c.GroupStreamsNumWarmupReplicas > c.GroupStreamsMaxWarmupReplicas {
		add("group.streams.num.warmup.replicas", c.GroupStreamsNumWarmupReplicas,
			"group.streams.num.warmup.replicas must be less than or equal to group.streams.max.warmup.replicas")
	}
	if len(c.GroupShareAssignors) != 1 {
		add("group.share.assignors", strings.Join(c.GroupShareAssignors, ","),
			fmt.Sprintf("group.share.assignors must contain exactly one assignor, but found %d", len(c.GroupShareAssignors)))
	}
	if c.GroupMaxSessionTimeoutMs < c.GroupMinSessionTimeoutMs {
		add("group.max.session.timeout.ms", c.GroupMaxSessionTimeoutMs,
			"group.max.session.timeout.ms must be greater than or equal to group.min.session.timeout.ms")
	}
	return errs
}

func validClusterID(s string) bool {
	if len(s) != 22 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Voter is one entry of controller.quorum.voters.
type Voter struct {
	ID   int32
	Host string
	Port int
}

// Voters parses controller.quorum.voters ("id@host:port,..."); empty means
// a single voter: this node.
func (c *Config) Voters() ([]Voter, error) { return parseVoters(c.ControllerQuorumVoters) }

func parseVoters(s string) ([]Voter, error) {
	var out []Voter
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	seen := map[int32]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		at := strings.IndexByte(part, '@')
		if at <= 0 {
			return nil, invalid("controller.quorum.voters", s, fmt.Sprintf("%q is not of the form id@host:port", part))
		}
		id, err := strconv.ParseInt(part[:at], 10, 32)
		if err != nil || id < 0 {
			return nil, invalid("controller.quorum.voters", s, fmt.Sprintf("%q: voter id must be a non-negative integer", part))
		}
		host, port, err := splitHostPort(part[at+1:])
		if err != nil {
			return nil, invalid("controller.quorum.voters", s, fmt.Sprintf("%q is not of the form id@host:port: %v", part, err))
		}
		if seen[int32(id)] {
			return nil, invalid("controller.quorum.voters", s, fmt.Sprintf("voter id %d appears twice", id))
		}
		seen[int32(id)] = true
		out = append(out, Voter{ID: int32(id), Host: host, Port: port})
	}
	return out, nil
}

func checkVoters(s string, nodeID int32) error {
	vs, err := parseVoters(s)
	if err != nil || len(vs) == 0 {
		return err
	}
	for _, v := range vs {
		if v.ID == nodeID {
			return nil
		}
	}
	return invalid("controller.quorum.voters", s, fmt.Sprintf("node.id %d is not among the voters", nodeID))
}

func splitHostPort(s string) (string, int, error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("not host:port: %v", err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not in 0..65535", p)
	}
	return host, port, nil
}
