package config

import (
	"sort"
	"strings"
)

// keyDef is one broker configuration key: the single source of truth for its
// parsing, validation, documentation and DescribeConfigs entry.
type keyDef struct {
	name    string
	typ     Type
	def     string // Kafka's default (or sharq's, see deviation), in Kafka's string form
	null    bool   // the default is null (Kafka prints nothing, describes null)
	doc     string
	valid   validator
	impl    bool   // sharq honours the key; false: accepted with a warning, no effect
	dynamic bool   // alterable through AlterConfigs on BROKER (Kafka's DynamicBrokerConfig)
	sharq   bool   // sharq's own key, not Kafka's
	deviate string // why sharq's default differs from Kafka's ("" = same)
	// nullUnlessSet: bound to a folded field (log.retention.ms ...), so the
	// key itself describes as null unless given explicitly (or the field was
	// changed by hand).
	nullUnlessSet bool
	// hideDefault: see unlisted.
	hideDefault bool

	custom func(v any) string // extra check for structured values; "" if valid
	// honours reports whether sharq acts on this particular value of an
	// implemented key (compression.type: only producer); nil: every value.
	honours func(v any) bool

	field func(c *Config) any // pointer to the Config field, nil for keys without one
	set   func(c *Config, v any) error
	get   func(c *Config) (value string, null bool)
}

// parse turns a raw string into the typed value and applies the validator.
func (k *keyDef) parse(raw string) (any, error) {
	v, reason := parseTyped(k.typ, raw)
	if reason == "" && k.valid != nil {
		reason = k.valid.check(v)
	}
	if reason == "" && k.custom != nil {
		reason = k.custom(v)
	}
	if reason != "" {
		return nil, invalid(k.name, strings.TrimSpace(raw), reason)
	}
	return v, nil
}

func newKey(name string, t Type, def, doc string) *keyDef {
	return &keyDef{name: name, typ: t, def: def, doc: doc, impl: true}
}

func (k *keyDef) bind(f func(c *Config) any) *keyDef     { k.field = f; return k }
func (k *keyDef) check(v validator) *keyDef              { k.valid = v; return k }
func (k *keyDef) dyn() *keyDef                           { k.dynamic = true; return k }
func (k *keyDef) nullDef() *keyDef                       { k.null = true; k.def = ""; return k }
func (k *keyDef) ignored() *keyDef                       { k.impl = false; return k }
func (k *keyDef) own() *keyDef                           { k.sharq = true; return k }
func (k *keyDef) deviates(why string) *keyDef            { k.deviate = why; return k }
func (k *keyDef) onlyHonours(f func(v any) bool) *keyDef { k.honours = f; return k }

// unlisted keys are described (kafka-configs --describe --all) only when
// set, as Kafka 4.4 leaves them out: its internal keys, and the
// authorizer's and meta.properties' keys that are not KafkaConfig's.
func (k *keyDef) unlisted() *keyDef { k.hideDefault = true; return k }
func (k *keyDef) folded() *keyDef   { k.nullUnlessSet = true; k.null = true; k.def = ""; return k }

// custom is an extra check for keys with a structured value (listeners).
func (k *keyDef) withCustom(f func(v any) string) *keyDef { k.custom = f; return k }

const (
	maxInt  = "2147483647"
	maxLong = "9223372036854775807"
)

// brokerKeys is every broker key sharq accepts, sorted by name at init.
var brokerKeys []*keyDef

// brokerIndex maps a key name to its definition.
var brokerIndex = map[string]*keyDef{}

// ignoredPrefixes are Kafka key families sharq accepts (with a warning) but
// does not model one by one: per-listener overrides and client quotas.
var ignoredPrefixes = []string{"listener.name."}

func init() {
	brokerKeys = append(append(append(append(brokerKeyTable(), securityKeyTable()...), schemaRegistryKeyTable()...), faultKeyTable()...), kafkaOnlyKeyTable()...)
	sort.Slice(brokerKeys, func(i, j int) bool { return brokerKeys[i].name < brokerKeys[j].name })
	for _, k := range brokerKeys {
		if _, dup := brokerIndex[k.name]; dup {
			panic("config: duplicate key " + k.name)
		}
		brokerIndex[k.name] = k
		k := k
		if k.field != nil && k.set == nil {
			k.set = func(c *Config, v any) error {
				if reason := assign(k.field(c), v); reason != "" {
					return invalid(k.name, formatTyped(v), reason)
				}
				return nil
			}
		}
		if k.field != nil && k.get == nil {
			k.get = func(c *Config) (string, bool) { return readField(k.field(c)), false }
		}
	}
	for _, tk := range topicKeys {
		topicIndex[tk.name] = tk
	}
}

func brokerKeyTable() []*keyDef {
	return []*keyDef{
		// --- Server basics, KRaft and listeners ---
		newKey("listeners", TypeString, "PLAINTEXT://localhost:9092",
			"Listener list: comma-separated URIs NAME://host:port the broker listens on. An empty host listens on all interfaces; port 0 binds a free port, and the broker advertises the port it really got.").
			deviates("Kafka's default is PLAINTEXT://:9092; sharq listens on localhost only unless told otherwise.").
			withSetGet(setListeners, func(c *Config) (string, bool) { return formatListeners(c.Listeners), false }).
			withCustom(checkListenerSyntax),
		newKey("advertised.listeners", TypeString, "",
			"Listeners published to clients if different from listeners. When unset, sharq advertises listeners, replacing an empty host or 0.0.0.0/:: with localhost (Kafka uses the canonical host name).").
			nullDef().
			withSetGet(setAdvertised, getAdvertised).
			withCustom(checkListenerSyntax),
		newKey("listener.security.protocol.map", TypeString, "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
			"Map between listener names and security protocols, NAME:PROTOCOL,... Protocols: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL; a listener's TLS and SASL settings come from the ssl.* and sasl.* keys, per listener as listener.name.<name>.<key>.").
			withSetGet(setProtocolMap, func(c *Config) (string, bool) {
				if c.ListenerSecurityProtocolMap == nil {
					return formatProtocolMap(defaultProtocolMap()), false
				}
				return formatProtocolMap(c.ListenerSecurityProtocolMap), false
			}).
			withCustom(func(v any) string {
				if _, err := parseProtocolMap(v.(string)); err != nil {
					return err.Error()
				}
				return ""
			}),
		newKey("log.dirs", TypeList, "./sharq-data",
			"The data directory: partition logs (topics/), group and share state (state/) and raft metadata (meta/) all live under it. sharq uses exactly one directory.").
			deviates("Kafka's default is null (falls back to log.dir=/tmp/kafka-logs).").
			bind(func(c *Config) any { return &c.LogDirs }).check(nonEmptyList{}),
		newKey("log.dir", TypeString, "/tmp/kafka-logs",
			"The data directory, used only when log.dirs is not given explicitly.").
			// No field of its own: fold() reads the recorded value when
			// log.dirs is not given.
			withSetGet(func(c *Config, v any) error { return nil }, func(c *Config) (string, bool) {
				if v, ok := c.explicit["log.dir"]; ok {
					return v, false
				}
				return "/tmp/kafka-logs", false
			}),
		newKey("node.id", TypeInt, "1", "The node ID of this broker and controller.").
			deviates("Kafka requires it (default -1); sharq defaults to 1 so a single node needs no config.").
			bind(func(c *Config) any { return &c.NodeID }).check(atLeast(0)),
		newKey("sharq.virtual.brokers", TypeInt, "1",
			"Node ids this process serves (node.id, node.id+1, ...), each with its own listeners, over the one log of each partition, so clients see a cluster of that many brokers with every partition replicated on all of them; nodes can be stopped and started and leaders and coordinators moved to rehearse failures (docs/virtual-brokers.md). 1: a single broker.").own().
			bind(func(c *Config) any { return &c.VirtualBrokers }).check(between(1, 64)),
		newKey("broker.rack", TypeString, "", "Rack of the broker, reported in Metadata and DescribeCluster.").nullDef().
			bind(func(c *Config) any { return &c.BrokerRack }),
		newKey("cluster.id", TypeString, "",
			"Cluster ID (a Kafka Uuid, 22 characters of URL-safe base64). Empty: generated on first start and kept in the data directory.").
			own().unlisted().bind(func(c *Config) any { return &c.ClusterID }),
		newKey("process.roles", TypeList, "broker,controller",
			"The roles this process plays. Every sharq node is both broker and controller, so the value is checked and otherwise has no effect.").
			deviates("Kafka requires it; sharq nodes always play both roles.").ignored().
			check(listIn(false, "broker", "controller")),
		newKey("controller.quorum.voters", TypeList, "",
			"Voters of the metadata quorum as id@host:port,... Empty: this node is the single voter and bootstraps itself.").
			bind(func(c *Config) any { return &c.ControllerQuorumVoters }).
			withCustom(func(v any) string {
				if _, err := parseVoters(strings.Join(v.([]string), ",")); err != nil {
					return err.(*Error).Reason
				}
				return ""
			}),
		newKey("controller.quorum.bootstrap.servers", TypeList, "",
			"Bootstrap servers of the KRaft quorum (dynamic quorum). sharq uses controller.quorum.voters.").ignored(),
		newKey("controller.listener.names", TypeString, "",
			"Listener names used by the controller (comma-separated). sharq does not serve the Kafka protocol on these listeners and does not advertise them; its raft traffic uses sharq.controller.listener.").
			nullDef().bind(func(c *Config) any { return &c.ControllerListenerNames }),
		newKey("inter.broker.listener.name", TypeString, "", "Listener name for inter-broker traffic.").nullDef().ignored(),
		newKey("security.inter.broker.protocol", TypeString, "PLAINTEXT", "Security protocol between brokers.").ignored().
			check(in(securityProtocols...)),
		newKey("sharq.controller.listener", TypeString, "",
			"host:port for raft traffic between sharq nodes (cluster mode only).").own().
			bind(func(c *Config) any { return &c.ControllerListener }),
		newKey("metrics.listener", TypeString, "",
			"host:port of the admin HTTP listener: Prometheus metrics on /metrics, /healthz, /readyz and the share-partition page /ui. Empty: no admin listener.").own().
			bind(func(c *Config) any { return &c.MetricsListener }),
		newKey("sharq.log.level", TypeString, "info", "Log level: debug, info, warn or error.").own().
			bind(func(c *Config) any { return &c.LogLevel }).check(inFold("debug", "info", "warn", "error")),
		newKey("sharq.log.format", TypeString, "text", "Log format on stderr: text or json.").own().
			bind(func(c *Config) any { return &c.LogFormat }).check(inFold("text", "json")),
		newKey("broker.id", TypeInt, "-1", "Legacy alias of node.id in ZooKeeper mode.").ignored().check(atLeast(-1)),
		newKey("metadata.log.dir", TypeString, "", "Directory of the metadata log. sharq keeps raft metadata under log.dirs (meta/).").nullDef().ignored(),

		// --- Socket server ---
		newKey("socket.request.max.bytes", TypeInt, "104857600", "The maximum number of bytes in a socket request; larger frames are refused before allocation.").
			bind(func(c *Config) any { return &c.SocketRequestMaxBytes }).check(atLeast(1)),
		newKey("socket.send.buffer.bytes", TypeInt, "102400", "SO_SNDBUF of the socket server sockets. -1: OS default.").ignored(),
		newKey("socket.receive.buffer.bytes", TypeInt, "102400", "SO_RCVBUF of the socket server sockets. -1: OS default.").ignored(),
		newKey("socket.listen.backlog.size", TypeInt, "50", "Maximum number of pending connections on the socket.").ignored().check(atLeast(1)),
		newKey("num.network.threads", TypeInt, "3", "Threads receiving requests and sending responses. sharq uses goroutines per connection.").ignored().dyn().check(atLeast(1)),
		newKey("num.io.threads", TypeInt, "8", "Threads processing requests. sharq uses goroutines.").ignored().dyn().check(atLeast(1)),
		newKey("background.threads", TypeInt, "10", "Threads for background tasks.").ignored().dyn().check(atLeast(1)),
		newKey("queued.max.requests", TypeInt, "500", "Queued requests before network threads block.").ignored().check(atLeast(1)),
		newKey("queued.max.request.bytes", TypeLong, "104857600",
			"Bytes of request frames being read or handled, across all connections, before the broker stops reading new request bodies; a connection waiting for room is simply not read (back-pressure). A frame's declared size is reserved when its body starts, so the value must be at least socket.request.max.bytes. -1 or 0: unbounded.").
			deviates("Kafka's default is -1 (unbounded); sharq bounds it at 100 MiB so request bodies cannot take the broker's memory.").
			bind(func(c *Config) any { return &c.QueuedMaxRequestBytes }),
		newKey("quota.window.num", TypeInt, "11", "The number of samples to retain in memory for client quotas.").
			bind(func(c *Config) any { return &c.QuotaWindowNum }).check(atLeast(1)),
		newKey("quota.window.size.seconds", TypeInt, "1", "The time span of each sample for client quotas.").
			bind(func(c *Config) any { return &c.QuotaWindowSizeSeconds }).check(atLeast(1)),
		newKey("telemetry.max.bytes", TypeInt, "1048576", "The maximum size (after compression if compression is used) of telemetry metrics pushed from a client to the broker (KIP-714); also the bound on a push once decompressed.").
			bind(func(c *Config) any { return &c.TelemetryMaxBytes }).check(atLeast(1)),
		newKey("connections.max.idle.ms", TypeLong, "600000", "Idle connections timeout: the server closes connections idle longer than this.").
			bind(func(c *Config) any { return &c.ConnectionsMaxIdleMs }),
		newKey("sharq.request.read.timeout.ms", TypeLong, "30000",
			"Time a client has to send the rest of a request frame once its first byte arrived (header) and once room for its body was granted (body); a connection that stalls mid-frame is closed. Between frames connections.max.idle.ms applies.").
			own().bind(func(c *Config) any { return &c.RequestReadTimeoutMs }).check(atLeast(1)),
		newKey("max.connections", TypeInt, maxInt, "Maximum connections allowed in the broker at any time.").ignored().dyn().check(atLeast(0)),
		newKey("max.connections.per.ip", TypeInt, maxInt, "Maximum connections allowed from each IP address.").ignored().dyn().check(atLeast(0)),
		newKey("max.connections.per.ip.overrides", TypeString, "", "Per-IP or hostname overrides of max.connections.per.ip.").ignored().dyn(),
		newKey("max.connection.creation.rate", TypeInt, maxInt, "Maximum connection creation rate per second.").ignored().dyn().check(atLeast(0)),

		// --- Topics and logs ---
		newKey("num.partitions", TypeInt, "1", "The default number of log partitions per topic.").
			bind(func(c *Config) any { return &c.NumPartitions }).check(atLeast(1)),
		newKey("sharq.max.partitions", TypeInt, "50000",
			"Most partitions (all topics) the cluster may have: CreateTopics and CreatePartitions that would go past it are refused with POLICY_VIOLATION. Open partition logs (and so file descriptors) are bounded separately, by RLIMIT_NOFILE.").own().
			bind(func(c *Config) any { return &c.MaxPartitions }).check(atLeast(1)),
		newKey("default.replication.factor", TypeInt, "1", "The default replication factor for automatically created topics.").
			bind(func(c *Config) any { return &c.DefaultReplicationFactor }).check(between(1, 32767)),
		newKey("auto.create.topics.enable", TypeBoolean, "true", "Enable auto creation of topics on the server (Metadata requests for unknown topics).").
			bind(func(c *Config) any { return &c.AutoCreateTopicsEnable }),
		newKey("delete.topic.enable", TypeBoolean, "true", "Enables topic deletion through DeleteTopics.").
			bind(func(c *Config) any { return &c.DeleteTopicEnable }),
		newKey("num.recovery.threads.per.data.dir", TypeInt, "2", "Threads per data directory for log recovery at startup.").ignored().dyn().check(atLeast(1)),
		newKey("num.replica.fetchers", TypeInt, "1", "Fetcher threads replicating from each source broker.").ignored().dyn().check(atLeast(1)),
		newKey("replica.lag.time.max.ms", TypeLong, "30000", "Time after which a follower that has not caught up leaves the ISR.").ignored(),
		newKey("replica.fetch.max.bytes", TypeInt, "1048576", "Bytes a follower fetches per partition.").ignored().check(atLeast(0)),
		newKey("auto.leader.rebalance.enable", TypeBoolean, "true", "Enables automatic leader balancing.").ignored(),
		newKey("log.segment.bytes", TypeInt, "1073741824", "The maximum size of a single log file.").
			bind(func(c *Config) any { return &c.LogSegmentBytes }).check(atLeast(1048576)).dyn(),
		newKey("log.roll.ms", TypeLong, "", "The maximum time before a new log segment is rolled out (in milliseconds). If not set, the value in log.roll.hours is used.").
			folded().bind(func(c *Config) any { return &c.LogRollMs }).dyn(),
		newKey("log.roll.hours", TypeInt, "168", "The maximum time before a new log segment is rolled out (in hours), secondary to log.roll.ms.").
			check(atLeast(1)).dyn(),
		newKey("log.roll.jitter.ms", TypeLong, "", "The maximum jitter to subtract from the roll time (in milliseconds). If not set, the value in log.roll.jitter.hours is used.").
			folded().bind(func(c *Config) any { return &c.LogRollJitterMs }).dyn(),
		newKey("log.roll.jitter.hours", TypeInt, "0", "The maximum jitter to subtract from the roll time (in hours), secondary to log.roll.jitter.ms.").
			check(atLeast(0)).dyn(),
		newKey("log.retention.ms", TypeLong, "", "The number of milliseconds to keep a log file before deleting it. If not set, the value in log.retention.minutes is used. If set to -1, no time limit is applied.").
			folded().bind(func(c *Config) any { return &c.LogRetentionMs }).dyn(),
		newKey("log.retention.minutes", TypeInt, "", "The number of minutes to keep a log file before deleting it, secondary to log.retention.ms. If not set, the value in log.retention.hours is used.").
			nullDef().dyn(),
		newKey("log.retention.hours", TypeInt, "168", "The number of hours to keep a log file before deleting it, tertiary to log.retention.ms.").
			dyn(),
		newKey("log.retention.bytes", TypeLong, "-1", "The maximum size of the log before deleting it. -1: no size limit.").
			bind(func(c *Config) any { return &c.LogRetentionBytes }).dyn(),
		newKey("log.retention.check.interval.ms", TypeLong, "300000", "The frequency in milliseconds that the log cleaner checks whether any log is eligible for deletion.").
			bind(func(c *Config) any { return &c.LogRetentionCheckIntervalMs }).check(atLeast(1)),
		newKey("log.cleanup.policy", TypeList, "delete", "The default cleanup policy for segments beyond the retention window: delete, compact or both.").
			bind(func(c *Config) any { return &c.LogCleanupPolicy }).check(listIn(true, "compact", "delete")).dyn(),
		newKey("log.index.size.max.bytes", TypeInt, "10485760", "The maximum size in bytes of the offset index.").
			bind(func(c *Config) any { return &c.LogIndexSizeMaxBytes }).check(atLeast(4)).dyn(),
		newKey("log.index.interval.bytes", TypeInt, "4096", "The interval with which an entry is added to the offset index.").
			bind(func(c *Config) any { return &c.LogIndexIntervalBytes }).check(atLeast(0)).dyn(),
		newKey("log.flush.interval.messages", TypeLong, maxLong, "The number of messages accumulated on a log partition before they are flushed to disk. 1: fsync every append (with group commit).").
			bind(func(c *Config) any { return &c.LogFlushIntervalMessages }).check(atLeast(1)).dyn(),
		newKey("log.flush.interval.ms", TypeLong, "", "The maximum time in ms that a message is kept in memory before it is flushed to disk. If not set, the value in log.flush.scheduler.interval.ms is used.").
			folded().bind(func(c *Config) any { return &c.LogFlushIntervalMs }).dyn(),
		newKey("log.flush.scheduler.interval.ms", TypeLong, maxLong, "The frequency in ms that the log flusher checks whether any log needs to be flushed to disk.").
			dyn(),
		newKey("log.flush.offset.checkpoint.interval.ms", TypeInt, "60000", "Frequency of recovery point checkpoints.").ignored().check(atLeast(0)),
		newKey("log.flush.start.offset.checkpoint.interval.ms", TypeInt, "60000", "Frequency of log start offset checkpoints.").ignored().check(atLeast(0)),
		newKey("log.segment.delete.delay.ms", TypeLong, "60000", "The amount of time to wait before deleting a file from the filesystem.").
			bind(func(c *Config) any { return &c.LogSegmentDeleteDelayMs }).check(atLeast(0)).dyn(),
		newKey("log.preallocate", TypeBoolean, "false", "Preallocate the file when creating a new segment.").
			bind(func(c *Config) any { return &c.LogPreallocate }).dyn(),
		newKey("log.message.timestamp.type", TypeString, "CreateTime", "Whether the timestamp in the message is the create time or the log append time: CreateTime or LogAppendTime.").
			bind(func(c *Config) any { return &c.LogMessageTimestampType }).check(in("CreateTime", "LogAppendTime")).dyn(),
		newKey("log.message.timestamp.before.max.ms", TypeLong, maxLong, "The allowed difference between the broker's time and an earlier message timestamp (CreateTime only).").
			bind(func(c *Config) any { return &c.LogMessageTimestampBeforeMaxMs }).check(atLeast(0)).dyn(),
		newKey("log.message.timestamp.after.max.ms", TypeLong, "3600000", "The allowed difference between a later message timestamp and the broker's time (CreateTime only).").
			bind(func(c *Config) any { return &c.LogMessageTimestampAfterMaxMs }).check(atLeast(0)).dyn(),
		newKey("log.local.retention.ms", TypeLong, "-2", "Local retention time with tiered storage; -2: use log.retention.ms.").ignored().check(atLeast(-2)).dyn(),
		newKey("log.local.retention.bytes", TypeLong, "-2", "Local retention size with tiered storage; -2: use log.retention.bytes.").ignored().check(atLeast(-2)).dyn(),
		newKey("log.cleaner.enable", TypeBoolean, "true", "Enable the log cleaner (compaction of cleanup.policy=compact topics).").
			bind(func(c *Config) any { return &c.LogCleanerEnable }),
		newKey("log.cleaner.threads", TypeInt, "1", "Background threads for log cleaning.").
			bind(func(c *Config) any { return &c.LogCleanerThreads }).check(atLeast(0)).dyn(),
		newKey("log.cleaner.backoff.ms", TypeLong, "15000", "Sleep when there are no logs to clean.").
			bind(func(c *Config) any { return &c.LogCleanerBackoffMs }).check(atLeast(0)).dyn(),
		newKey("log.cleaner.dedupe.buffer.size", TypeLong, "134217728", "Memory for log deduplication across all cleaner threads (the bound of the cleaner's offset maps).").
			bind(func(c *Config) any { return &c.LogCleanerDedupeBufferSize }).dyn(),
		newKey("log.cleaner.io.buffer.size", TypeInt, "524288", "The read and write buffer of each cleaner thread.").
			bind(func(c *Config) any { return &c.LogCleanerIOBufferSize }).check(atLeast(0)).dyn(),
		newKey("log.cleaner.io.buffer.load.factor", TypeDouble, "0.9", "How full the cleaner's offset map may get.").
			bind(func(c *Config) any { return &c.LogCleanerIOBufferLoadFactor }).dyn(),
		newKey("log.cleaner.io.max.bytes.per.second", TypeDouble, "1.7976931348623157E308", "Cleaner I/O throttle: read and written bytes per second of all threads.").
			bind(func(c *Config) any { return &c.LogCleanerIOMaxBytesPerSecond }).dyn(),
		newKey("log.cleaner.delete.retention.ms", TypeLong, "86400000", "How long delete tombstones are retained for compacted topics.").dyn().check(atLeast(0)),
		newKey("log.cleaner.min.compaction.lag.ms", TypeLong, "0", "The minimum time a message remains uncompacted.").dyn().check(atLeast(0)),
		newKey("log.cleaner.max.compaction.lag.ms", TypeLong, maxLong, "The maximum time a message remains ineligible for compaction.").dyn().check(atLeast(1)),
		newKey("log.cleaner.min.cleanable.ratio", TypeDouble, "0.5", "The minimum ratio of dirty log to total log for a log to be eligible for cleaning.").dyn().check(between(0, 1)),
		newKey("message.max.bytes", TypeInt, "1048588", "The largest record batch size allowed (after compression).").
			bind(func(c *Config) any { return &c.MessageMaxBytes }).check(atLeast(0)).dyn(),
		newKey("compression.type", TypeString, "producer", "The final compression type for topics. sharq keeps batches exactly as produced, so only producer (the default) is honoured; other values are accepted with a warning.").
			bind(func(c *Config) any { return &c.CompressionType }).check(in("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")).dyn().
			onlyHonours(func(v any) bool { return v == "producer" }),
		newKey("compression.gzip.level", TypeInt, "-1", "Compression level for gzip.").ignored().dyn().check(gzipLevel),
		newKey("compression.lz4.level", TypeInt, "9", "Compression level for lz4.").ignored().dyn().check(between(1, 17)),
		newKey("compression.zstd.level", TypeInt, "3", "Compression level for zstd.").ignored().dyn().check(between(-131072, 22)),
		newKey("min.insync.replicas", TypeInt, "1", "The minimum number of replicas that must acknowledge an acks=all write.").
			bind(func(c *Config) any { return &c.MinInsyncReplicas }).check(atLeast(1)).dyn(),
		newKey("unclean.leader.election.enable", TypeBoolean, "false", "Whether replicas outside the ISR may be elected leader as a last resort.").ignored().dyn(),
		newKey("fetch.max.bytes", TypeInt, "57671680", "The maximum number of bytes returned for a fetch request.").
			bind(func(c *Config) any { return &c.FetchMaxBytes }).check(atLeast(1024)),
		newKey("max.incremental.fetch.session.cache.slots", TypeInt, "1000", "The maximum number of incremental fetch sessions (KIP-227).").
			bind(func(c *Config) any { return &c.MaxIncrementalFetchSessionCacheSlots }).check(atLeast(0)),
		newKey("create.topic.policy.class.name", TypeClass, "", "The create topic policy class.").nullDef().ignored(),
		newKey("alter.config.policy.class.name", TypeClass, "", "The alter configs policy class.").nullDef().ignored(),
		newKey("metric.reporters", TypeList, "org.apache.kafka.common.metrics.JmxReporter", "Metrics reporter classes. sharq serves Prometheus metrics on metrics.listener.").ignored().dyn(),
		// --- Offsets and the group coordinator ---
		newKey("offsets.retention.minutes", TypeInt, "10080", "How long committed offsets of an empty group (or unsubscribed partition) are kept.").
			bind(func(c *Config) any { return &c.OffsetsRetentionMinutes }).check(atLeast(1)),
		newKey("offsets.retention.check.interval.ms", TypeLong, "600000", "Frequency at which to check for stale offsets.").
			bind(func(c *Config) any { return &c.OffsetsRetentionCheckIntervalMs }).check(atLeast(1)),
		newKey("offset.metadata.max.bytes", TypeInt, "4096", "The maximum size for a metadata entry associated with an offset commit.").
			bind(func(c *Config) any { return &c.OffsetMetadataMaxBytes }),
		newKey("offsets.topic.replication.factor", TypeShort, "3", "Replication factor of __consumer_offsets. sharq keeps offsets in its state store.").ignored().check(atLeast(1)),
		newKey("offsets.topic.num.partitions", TypeInt, "50", "Partitions of __consumer_offsets.").ignored().check(atLeast(1)),
		newKey("offsets.topic.segment.bytes", TypeInt, "104857600", "Segment bytes of __consumer_offsets.").ignored().check(atLeast(1)),
		newKey("offsets.topic.compression.codec", TypeInt, "0", "Compression codec of __consumer_offsets.").ignored(),
		newKey("offsets.load.buffer.size", TypeInt, "5242880", "Batch size for loading offsets.").ignored().check(atLeast(1)),
		newKey("offsets.commit.timeout.ms", TypeInt, "5000", "Offset commit timeout for replication of __consumer_offsets.").ignored().check(atLeast(1)),
		newKey("group.coordinator.threads", TypeInt, "4", "Group coordinator threads.").ignored().check(atLeast(1)),
		newKey("group.coordinator.background.threads", TypeInt, "2", "Group coordinator background threads.").ignored().check(atLeast(1)),
		newKey("group.coordinator.append.linger.ms", TypeInt, "-1", "Group coordinator write linger.").ignored().check(atLeast(-1)),
		newKey("group.coordinator.cached.buffer.max.bytes", TypeInt, "1048588", "Group coordinator buffer cache.").ignored().dyn().check(atLeast(524288)),
		newKey("group.coordinator.rebalance.protocols", TypeList, "classic,consumer,streams", "Deprecated in Kafka 4.3: the enabled rebalance protocols. sharq, as Kafka 4.4, turns streams groups off without streams; the other protocols are always on.").
			bind(func(c *Config) any { return &c.GroupCoordinatorRebalanceProtocols }).check(listIn(false, "classic", "consumer", "streams", "share")),
		newKey("group.initial.rebalance.delay.ms", TypeInt, "3000", "How long the coordinator waits for more members to join a new classic group before the first rebalance.").
			bind(func(c *Config) any { return &c.GroupInitialRebalanceDelayMs }),
		newKey("group.min.session.timeout.ms", TypeInt, "6000", "The minimum allowed session timeout for classic group members.").
			bind(func(c *Config) any { return &c.GroupMinSessionTimeoutMs }),
		newKey("group.max.session.timeout.ms", TypeInt, "1800000", "The maximum allowed session timeout for classic group members.").
			bind(func(c *Config) any { return &c.GroupMaxSessionTimeoutMs }),
		newKey("group.max.size", TypeInt, maxInt, "The maximum number of members of a classic group.").
			bind(func(c *Config) any { return &c.GroupMaxSize }).check(atLeast(1)),
		newKey("group.consumer.session.timeout.ms", TypeInt, "45000", "The timeout to detect client failures with the consumer group protocol.").
			bind(func(c *Config) any { return &c.GroupConsumerSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.consumer.min.session.timeout.ms", TypeInt, "45000", "The minimum allowed session timeout for consumer group members.").
			bind(func(c *Config) any { return &c.GroupConsumerMinSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.consumer.max.session.timeout.ms", TypeInt, "60000", "The maximum allowed session timeout for consumer group members.").
			bind(func(c *Config) any { return &c.GroupConsumerMaxSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.consumer.heartbeat.interval.ms", TypeInt, "5000", "The heartbeat interval given to consumer group members.").
			bind(func(c *Config) any { return &c.GroupConsumerHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.consumer.min.heartbeat.interval.ms", TypeInt, "5000", "The minimum heartbeat interval for consumer group members.").
			bind(func(c *Config) any { return &c.GroupConsumerMinHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.consumer.max.heartbeat.interval.ms", TypeInt, "15000", "The maximum heartbeat interval for consumer group members.").
			bind(func(c *Config) any { return &c.GroupConsumerMaxHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.consumer.max.size", TypeInt, maxInt, "The maximum number of members of a consumer group.").
			bind(func(c *Config) any { return &c.GroupConsumerMaxSize }).check(atLeast(1)),
		newKey("group.consumer.assignors", TypeList, "uniform,range", "Server-side assignors, built-in names (uniform, range); the first is the default.").
			bind(func(c *Config) any { return &c.GroupConsumerAssignors }).check(nonEmptyList{}),
		newKey("group.consumer.migration.policy", TypeString, "bidirectional", "Conversion between classic and consumer groups: disabled, upgrade, downgrade or bidirectional.").
			bind(func(c *Config) any { return &c.GroupConsumerMigrationPolicy }).check(inFold("disabled", "upgrade", "downgrade", "bidirectional")),
		newKey("group.consumer.assignment.interval.ms", TypeInt, "1000", "The interval between assignment updates for a consumer group.").
			bind(func(c *Config) any { return &c.GroupConsumerAssignmentIntervalMs }).check(atLeast(0)).dyn(),
		newKey("group.consumer.min.assignment.interval.ms", TypeInt, "0", "The minimum interval between assignment updates for a consumer group.").
			bind(func(c *Config) any { return &c.GroupConsumerMinAssignmentIntervalMs }).check(atLeast(0)),
		newKey("group.consumer.max.assignment.interval.ms", TypeInt, "15000", "The maximum interval between assignment updates for a consumer group.").
			bind(func(c *Config) any { return &c.GroupConsumerMaxAssignmentIntervalMs }).check(atLeast(0)),
		newKey("group.consumer.assignor.offload.enable", TypeBoolean, "true", "Whether to offload consumer group assignment to a background thread.").ignored().dyn().unlisted(),

		// --- Streams groups (KIP-1071) ---
		newKey("group.streams.session.timeout.ms", TypeInt, "45000", "The timeout to detect client failures with the streams group protocol.").
			bind(func(c *Config) any { return &c.GroupStreamsSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.streams.min.session.timeout.ms", TypeInt, "45000", "The minimum allowed value of the group config streams.session.timeout.ms.").
			bind(func(c *Config) any { return &c.GroupStreamsMinSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.streams.max.session.timeout.ms", TypeInt, "60000", "The maximum allowed value of the group config streams.session.timeout.ms.").
			bind(func(c *Config) any { return &c.GroupStreamsMaxSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.streams.heartbeat.interval.ms", TypeInt, "5000", "The heartbeat interval given to streams group members.").
			bind(func(c *Config) any { return &c.GroupStreamsHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.streams.min.heartbeat.interval.ms", TypeInt, "5000", "The minimum allowed value of the group config streams.heartbeat.interval.ms.").
			bind(func(c *Config) any { return &c.GroupStreamsMinHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.streams.max.heartbeat.interval.ms", TypeInt, "15000", "The maximum allowed value of the group config streams.heartbeat.interval.ms.").
			bind(func(c *Config) any { return &c.GroupStreamsMaxHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.streams.max.size", TypeInt, maxInt, "The maximum number of members of a streams group.").
			bind(func(c *Config) any { return &c.GroupStreamsMaxSize }).check(atLeast(1)),
		newKey("group.streams.num.standby.replicas", TypeInt, "0", "The number of standby replicas of each task of a streams group.").
			bind(func(c *Config) any { return &c.GroupStreamsNumStandbyReplicas }).check(atLeast(0)),
		newKey("group.streams.max.standby.replicas", TypeInt, "2", "The maximum allowed value of the group config streams.num.standby.replicas.").
			bind(func(c *Config) any { return &c.GroupStreamsMaxStandbyReplicas }).check(atLeast(0)),
		newKey("group.streams.initial.rebalance.delay.ms", TypeInt, "3000", "How long the coordinator waits for more members to join a new streams group before its first task assignment.").
			bind(func(c *Config) any { return &c.GroupStreamsInitialRebalanceDelayMs }).check(atLeast(0)),
		newKey("group.streams.assignment.interval.ms", TypeInt, "1000", "The interval between assignment updates for a streams group.").
			bind(func(c *Config) any { return &c.GroupStreamsAssignmentIntervalMs }).check(atLeast(0)).dyn(),
		newKey("group.streams.min.assignment.interval.ms", TypeInt, "0", "The minimum interval between assignment updates for a streams group.").
			bind(func(c *Config) any { return &c.GroupStreamsMinAssignmentIntervalMs }).check(atLeast(0)),
		newKey("group.streams.max.assignment.interval.ms", TypeInt, "15000", "The maximum interval between assignment updates for a streams group.").
			bind(func(c *Config) any { return &c.GroupStreamsMaxAssignmentIntervalMs }).check(atLeast(0)),
		// sharq loads no Java classes, so only the built-in sticky task
		// assignor can be named.
		newKey("group.streams.assignors", TypeList, "sticky", "The server-side task assignors of streams groups; the first is the default for a group that names none (group config streams.assignor.name). Built-in: sticky.").
			bind(func(c *Config) any { return &c.GroupStreamsAssignors }).check(nonEmptyList{}).withCustom(onlyBuiltIn("sticky")),
		newKey("group.streams.rack.aware.assignment.tags", TypeList, "", "Client tag keys used to spread standby replicas over Kafka Streams instances, when the assignor supports it (sharq's sticky assignor does not).").
			bind(func(c *Config) any { return &c.GroupStreamsRackAwareAssignmentTags }).check(noDuplicates{}).
			onlyHonours(func(v any) bool { xs, _ := v.([]string); return len(xs) == 0 }),
		newKey("group.streams.topology.description.plugin.class", TypeClass, "", "A StreamsGroupTopologyDescriptionPlugin class; unset turns the feature off (sharq answers as a Kafka broker without one).").nullDef().ignored(),
		// Kafka 4.4's internal streams keys: not listed unless set.
		newKey("group.streams.assignor.offload.enable", TypeBoolean, "true", "Whether to offload streams group assignment to a background thread.").ignored().dyn().unlisted(),
		newKey("group.streams.task.offset.interval.ms", TypeInt, "60000", "How often clients report the changelog offsets of their warm-up tasks (sent with the next heartbeat once this time has passed).").
			bind(func(c *Config) any { return &c.GroupStreamsTaskOffsetIntervalMs }).check(atLeast(1)).unlisted(),
		newKey("group.streams.min.task.offset.interval.ms", TypeInt, "15000", "The minimum allowed value of the group config streams.task.offset.interval.ms.").
			bind(func(c *Config) any { return &c.GroupStreamsMinTaskOffsetIntervalMs }).check(atLeast(1)).unlisted(),
		newKey("group.streams.num.warmup.replicas", TypeInt, "2", "The maximum number of warm-up task replicas (sharq has no warm-up tasks).").
			bind(func(c *Config) any { return &c.GroupStreamsNumWarmupReplicas }).check(atLeast(0)).ignored().unlisted(),
		newKey("group.streams.max.warmup.replicas", TypeInt, "20", "The maximum allowed value of the group config streams.num.warmup.replicas.").
			bind(func(c *Config) any { return &c.GroupStreamsMaxWarmupReplicas }).check(atLeast(0)).unlisted(),
		newKey("group.streams.acceptable.recovery.lag", TypeLong, "10000", "The largest lag (offsets to catch up) at which a client counts as caught up on a task for an active assignment.").
			bind(func(c *Config) any { return &c.GroupStreamsAcceptableRecoveryLag }).check(atLeast(0)).unlisted(),

		// --- Share groups (KIP-932) ---
		newKey("group.share.max.size", TypeInt, "200", "The maximum number of members of a share group.").
			bind(func(c *Config) any { return &c.GroupShareMaxSize }).check(between(1, 1000)),
		newKey("group.share.session.timeout.ms", TypeInt, "45000", "The timeout to detect client failures with the share group protocol.").
			bind(func(c *Config) any { return &c.GroupShareSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.share.min.session.timeout.ms", TypeInt, "45000", "The minimum allowed session timeout for share group members.").
			bind(func(c *Config) any { return &c.GroupShareMinSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.share.max.session.timeout.ms", TypeInt, "60000", "The maximum allowed session timeout for share group members.").
			bind(func(c *Config) any { return &c.GroupShareMaxSessionTimeoutMs }).check(atLeast(1)),
		newKey("group.share.heartbeat.interval.ms", TypeInt, "5000", "The heartbeat interval given to share group members.").
			bind(func(c *Config) any { return &c.GroupShareHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.share.min.heartbeat.interval.ms", TypeInt, "5000", "The minimum heartbeat interval for share group members.").
			bind(func(c *Config) any { return &c.GroupShareMinHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.share.max.heartbeat.interval.ms", TypeInt, "15000", "The maximum heartbeat interval for share group members.").
			bind(func(c *Config) any { return &c.GroupShareMaxHeartbeatIntervalMs }).check(atLeast(1)),
		newKey("group.share.assignors", TypeList, "simple", "The server-side share group assignor; exactly one entry. Built-in: simple.").
			bind(func(c *Config) any { return &c.GroupShareAssignors }).check(nonEmptyList{}),
		newKey("group.share.assignment.interval.ms", TypeInt, "1000", "The interval between assignment updates for a share group.").
			bind(func(c *Config) any { return &c.GroupShareAssignmentIntervalMs }).check(atLeast(0)).dyn(),
		newKey("group.share.min.assignment.interval.ms", TypeInt, "0", "The minimum interval between assignment updates for a share group.").
			bind(func(c *Config) any { return &c.GroupShareMinAssignmentIntervalMs }).check(atLeast(0)),
		newKey("group.share.max.assignment.interval.ms", TypeInt, "15000", "The maximum interval between assignment updates for a share group.").
			bind(func(c *Config) any { return &c.GroupShareMaxAssignmentIntervalMs }).check(atLeast(0)),
		newKey("group.share.assignor.offload.enable", TypeBoolean, "true", "Whether to offload share group assignment to a background thread.").ignored().dyn().unlisted(),
		newKey("group.share.delivery.count.limit", TypeInt, "5", "The maximum number of delivery attempts for a record delivered to a share group.").
			bind(func(c *Config) any { return &c.GroupShareDeliveryCountLimit }).check(between(2, 10)),
		newKey("group.share.min.delivery.count.limit", TypeInt, "2", "The minimum value of the group config share.delivery.count.limit.").
			bind(func(c *Config) any { return &c.GroupShareMinDeliveryCountLimit }).check(between(2, 5)),
		newKey("group.share.max.delivery.count.limit", TypeInt, "10", "The maximum value of the group config share.delivery.count.limit.").
			bind(func(c *Config) any { return &c.GroupShareMaxDeliveryCountLimit }).check(between(5, 25)),
		newKey("group.share.record.lock.duration.ms", TypeInt, "30000", "The record acquisition lock duration in milliseconds for share groups.").
			bind(func(c *Config) any { return &c.GroupShareRecordLockDurationMs }).check(between(1000, 3600000)),
		newKey("group.share.min.record.lock.duration.ms", TypeInt, "15000", "The minimum record acquisition lock duration.").
			bind(func(c *Config) any { return &c.GroupShareMinRecordLockDurationMs }).check(between(1000, 30000)),
		newKey("group.share.max.record.lock.duration.ms", TypeInt, "60000", "The maximum record acquisition lock duration.").
			bind(func(c *Config) any { return &c.GroupShareMaxRecordLockDurationMs }).check(between(30000, 3600000)),
		newKey("group.share.partition.max.record.locks", TypeInt, "2000", "The maximum number of in-flight (acquired) records per share-partition.").
			bind(func(c *Config) any { return &c.GroupSharePartitionMaxRecordLocks }).check(between(100, 10000)),
		newKey("group.share.min.partition.max.record.locks", TypeInt, "100", "The minimum value of the group config share.partition.max.record.locks.").
			bind(func(c *Config) any { return &c.GroupShareMinPartitionMaxRecordLocks }).check(between(100, 2000)),
		newKey("group.share.max.partition.max.record.locks", TypeInt, "4000", "The maximum value of the group config share.partition.max.record.locks.").
			bind(func(c *Config) any { return &c.GroupShareMaxPartitionMaxRecordLocks }).check(between(2000, 10000)),
		newKey("group.share.max.share.sessions", TypeInt, "2000", "The maximum number of share sessions per broker.").
			bind(func(c *Config) any { return &c.GroupShareMaxShareSessions }).check(atLeast(1)),
		newKey("share.fetch.purgatory.purge.interval.requests", TypeInt, "1000", "Purge interval of the share fetch purgatory.").ignored(),
		newKey("errors.deadletterqueue.auto.create.topics.enable", TypeBoolean, "false", "Whether share-group dead-letter topics are created automatically (KIP-1191).").
			bind(func(c *Config) any { return &c.ErrorsDLQAutoCreateTopicsEnable }).dyn(),
		newKey("errors.deadletterqueue.topic.name.prefix", TypeString, "dlq.", "The prefix every share-group dead-letter topic name must start with (KIP-1191).").
			bind(func(c *Config) any { return &c.ErrorsDLQTopicNamePrefix }).dyn(),
		newKey("share.coordinator.state.topic.num.partitions", TypeInt, "50", "Partitions of __share_group_state. sharq keeps share state in its state store.").ignored().check(atLeast(1)),
		newKey("share.coordinator.state.topic.replication.factor", TypeShort, "3", "Replication factor of __share_group_state.").ignored().check(atLeast(1)),
		newKey("share.coordinator.state.topic.min.isr", TypeShort, "2", "min.insync.replicas of __share_group_state.").ignored().check(atLeast(1)),
		newKey("share.coordinator.state.topic.segment.bytes", TypeInt, "104857600", "Segment bytes of __share_group_state.").ignored().check(atLeast(1)),
		newKey("share.coordinator.state.topic.compression.codec", TypeInt, "0", "Compression codec of __share_group_state.").ignored(),
		newKey("share.coordinator.state.topic.prune.interval.ms", TypeLong, "300000", "Prune interval of __share_group_state.").ignored().unlisted(),
		newKey("share.coordinator.cold.partition.snapshot.interval.ms", TypeInt, "300000", "Snapshot interval for cold share-state partitions.").ignored().unlisted(),
		newKey("share.coordinator.snapshot.update.records.per.snapshot", TypeInt, "500", "Update records per share-state snapshot.").ignored(),
		newKey("share.coordinator.threads", TypeInt, "1", "Share coordinator threads.").ignored().check(atLeast(1)),
		newKey("share.coordinator.write.timeout.ms", TypeInt, "5000", "Share coordinator write timeout.").ignored(),
		newKey("share.coordinator.load.buffer.size", TypeInt, "5242880", "Share coordinator load buffer size.").ignored(),
		newKey("share.coordinator.append.linger.ms", TypeInt, "-1", "Share coordinator write linger.").ignored(),
		newKey("share.coordinator.cached.buffer.max.bytes", TypeInt, "1048588", "Share coordinator buffer cache.").ignored().dyn(),

		// --- Transactions and producer state ---
		newKey("transaction.max.timeout.ms", TypeInt, "900000", "The maximum allowed transaction timeout.").
			bind(func(c *Config) any { return &c.TransactionMaxTimeoutMs }).check(atLeast(1)),
		newKey("transactional.id.expiration.ms", TypeInt, "604800000", "How long an idle transactional ID is kept.").
			bind(func(c *Config) any { return &c.TransactionalIDExpirationMs }).check(atLeast(1)),
		newKey("producer.id.expiration.ms", TypeInt, "86400000", "How long producer-ID state of an idle idempotent producer is kept.").
			bind(func(c *Config) any { return &c.ProducerIDExpirationMs }).check(atLeast(1)).dyn(),
		newKey("transaction.partition.verification.enable", TypeBoolean, "true", "Verify that a partition was added to the transaction before writing transactional records to it.").
			bind(func(c *Config) any { return &c.TransactionPartitionVerificationEnable }).dyn(),
		newKey("transaction.state.log.replication.factor", TypeShort, "3", "Replication factor of __transaction_state. sharq keeps transaction state in its state store.").ignored().check(atLeast(1)),
		newKey("transaction.state.log.min.isr", TypeInt, "2", "min.insync.replicas of __transaction_state.").ignored().check(atLeast(1)),
		newKey("transaction.state.log.num.partitions", TypeInt, "50", "Partitions of __transaction_state.").ignored().check(atLeast(1)),
		newKey("transaction.state.log.segment.bytes", TypeInt, "104857600", "Segment bytes of __transaction_state.").ignored().check(atLeast(1)),
		newKey("transaction.state.log.load.buffer.size", TypeInt, "5242880", "Load buffer of __transaction_state.").ignored().check(atLeast(1)),
		newKey("transaction.abort.timed.out.transaction.cleanup.interval.ms", TypeInt, "10000", "Interval to roll back timed-out transactions (and to finish ones whose markers could not all be written).").
			bind(func(c *Config) any { return &c.TransactionAbortTimedOutIntervalMs }).check(atLeast(1)),
		newKey("transaction.remove.expired.transaction.cleanup.interval.ms", TypeInt, "3600000", "Interval to remove expired transactional IDs.").
			bind(func(c *Config) any { return &c.TransactionRemoveExpiredIntervalMs }).check(atLeast(1)),
	}
}

// withSetGet installs a custom setter and getter (listeners and friends).
func (k *keyDef) withSetGet(set func(c *Config, v any) error, get func(c *Config) (string, bool)) *keyDef {
	k.set, k.get = set, get
	return k
}

func setListeners(c *Config, v any) error {
	ls, err := ParseListeners("listeners", v.(string), c.ListenerSecurityProtocolMap)
	if err != nil {
		return err
	}
	c.Listeners = ls
	return nil
}

func setAdvertised(c *Config, v any) error {
	ls, err := ParseListeners("advertised.listeners", v.(string), c.ListenerSecurityProtocolMap)
	if err != nil {
		return err
	}
	c.AdvertisedListeners = ls
	return nil
}

func getAdvertised(c *Config) (string, bool) {
	if v, ok := c.explicit["advertised.listeners"]; ok {
		return v, false
	}
	if formatListeners(c.AdvertisedListeners) != formatListeners(defaultAdvertised(c.Listeners)) {
		return formatListeners(c.AdvertisedListeners), false
	}
	return "", true
}

func setProtocolMap(c *Config, v any) error {
	m, err := parseProtocolMap(v.(string))
	if err != nil {
		return invalid("listener.security.protocol.map", v, err.Error())
	}
	c.ListenerSecurityProtocolMap = m
	for i := range c.Listeners {
		c.Listeners[i].Protocol = m[c.Listeners[i].Name]
	}
	for i := range c.AdvertisedListeners {
		c.AdvertisedListeners[i].Protocol = m[c.AdvertisedListeners[i].Name]
	}
	return nil
}

// checkListenerSyntax validates listener URIs on their own (names, hosts,
// ports); the protocol map is checked by Validate, which sees both keys.
func checkListenerSyntax(v any) string {
	seen := map[string]bool{}
	for _, part := range strings.Split(v.(string), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		l, err := parseListener(part)
		if err != nil {
			return err.Error()
		}
		if seen[l.Name] {
			return "Each listener must have a different name, listener " + l.Name + " appears twice"
		}
		seen[l.Name] = true
	}
	return ""
}
