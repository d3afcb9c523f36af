package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// topicKey is one topic-level configuration key (Kafka's LogConfig).
type topicKey struct {
	name     string
	typ      Type
	def      string // Kafka's LogConfig default, used when no broker synonym exists
	doc      string
	valid    validator
	synonyms []string // broker keys whose value is the topic's default, in priority order
	impl     bool
}

// topicKeys is Kafka 4.4's topic config set (LogConfig), sorted by name.
// message.downconversion.enable and message.format.version were removed in
// Kafka 4.0 and are unknown here as they are there.
var topicKeys = sortedTopicKeys([]*topicKey{
	{name: "cleanup.policy", typ: TypeList, def: "delete", impl: true, synonyms: []string{"log.cleanup.policy"},
		valid: listIn(true, "compact", "delete"),
		doc:   "The retention policy for old log segments: delete, compact or both (comma-separated)."},
	{name: "compression.type", typ: TypeString, def: "producer", synonyms: []string{"compression.type"},
		valid: in("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
		doc:   "The final compression type for the topic. sharq keeps batches as produced (producer)."},
	{name: "compression.gzip.level", typ: TypeInt, def: "-1", synonyms: []string{"compression.gzip.level"}, valid: gzipLevel,
		doc: "The compression level when compression.type is gzip."},
	{name: "compression.lz4.level", typ: TypeInt, def: "9", synonyms: []string{"compression.lz4.level"}, valid: between(1, 17),
		doc: "The compression level when compression.type is lz4."},
	{name: "compression.zstd.level", typ: TypeInt, def: "3", synonyms: []string{"compression.zstd.level"}, valid: between(-131072, 22),
		doc: "The compression level when compression.type is zstd."},
	{name: "delete.retention.ms", typ: TypeLong, def: "86400000", impl: true, synonyms: []string{"log.cleaner.delete.retention.ms"}, valid: atLeast(0),
		doc: "The amount of time to retain delete tombstone markers for log compacted topics."},
	{name: "errors.deadletterqueue.group.enable", typ: TypeBoolean, def: "false", impl: true,
		doc: "Whether share groups may use this topic as their dead-letter queue (KIP-1191)."},
	{name: "file.delete.delay.ms", typ: TypeLong, def: "60000", impl: true, synonyms: []string{"log.segment.delete.delay.ms"}, valid: atLeast(0),
		doc: "The time to wait before deleting a file from the filesystem."},
	{name: "flush.messages", typ: TypeLong, def: maxLong, impl: true, synonyms: []string{"log.flush.interval.messages"}, valid: atLeast(1),
		doc: "Force an fsync after this many messages. 1: fsync every append (with group commit)."},
	{name: "flush.ms", typ: TypeLong, def: maxLong, impl: true, synonyms: []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}, valid: atLeast(0),
		doc: "Force an fsync after this much time since the last one."},
	{name: "follower.replication.throttled.replicas", typ: TypeList, def: "", valid: throttledReplicas{},
		doc: "Replicas whose log replication should be throttled on the follower side: partition:broker,... or *."},
	{name: "index.interval.bytes", typ: TypeInt, def: "4096", impl: true, synonyms: []string{"log.index.interval.bytes"}, valid: atLeast(0),
		doc: "How frequently an entry is added to the offset index."},
	{name: "leader.replication.throttled.replicas", typ: TypeList, def: "", valid: throttledReplicas{},
		doc: "Replicas whose log replication should be throttled on the leader side: partition:broker,... or *."},
	{name: "local.retention.bytes", typ: TypeLong, def: "-2", synonyms: []string{"log.local.retention.bytes"}, valid: atLeast(-2),
		doc: "Local log size kept before deletion with tiered storage; -2: retention.bytes."},
	{name: "local.retention.ms", typ: TypeLong, def: "-2", synonyms: []string{"log.local.retention.ms"}, valid: atLeast(-2),
		doc: "Local log time kept before deletion with tiered storage; -2: retention.ms."},
	{name: "max.compaction.lag.ms", typ: TypeLong, def: maxLong, impl: true, synonyms: []string{"log.cleaner.max.compaction.lag.ms"}, valid: atLeast(1),
		doc: "The maximum time a message remains ineligible for compaction."},
	{name: "max.message.bytes", typ: TypeInt, def: "1048588", impl: true, synonyms: []string{"message.max.bytes"}, valid: atLeast(0),
		doc: "The largest record batch size allowed (after compression)."},
	{name: "message.timestamp.after.max.ms", typ: TypeLong, def: "3600000", impl: true, synonyms: []string{"log.message.timestamp.after.max.ms"}, valid: atLeast(0),
		doc: "The allowed difference between a later message timestamp and the broker's time (CreateTime only)."},
	{name: "message.timestamp.before.max.ms", typ: TypeLong, def: maxLong, impl: true, synonyms: []string{"log.message.timestamp.before.max.ms"}, valid: atLeast(0),
		doc: "The allowed difference between the broker's time and an earlier message timestamp (CreateTime only)."},
	{name: "message.timestamp.type", typ: TypeString, def: "CreateTime", impl: true, synonyms: []string{"log.message.timestamp.type"},
		valid: in("CreateTime", "LogAppendTime"),
		doc:   "Whether record timestamps are the producer's create time or the log append time."},
	{name: "min.cleanable.dirty.ratio", typ: TypeDouble, def: "0.5", impl: true, synonyms: []string{"log.cleaner.min.cleanable.ratio"}, valid: between(0, 1),
		doc: "How dirty a log must be before the compactor cleans it."},
	{name: "min.compaction.lag.ms", typ: TypeLong, def: "0", impl: true, synonyms: []string{"log.cleaner.min.compaction.lag.ms"}, valid: atLeast(0),
		doc: "The minimum time a message remains uncompacted."},
	{name: "min.insync.replicas", typ: TypeInt, def: "1", impl: true, synonyms: []string{"min.insync.replicas"}, valid: atLeast(1),
		doc: "The minimum number of replicas that must acknowledge an acks=all write."},
	{name: "preallocate", typ: TypeBoolean, def: "false", impl: true, synonyms: []string{"log.preallocate"},
		doc: "Preallocate the file on disk when creating a new log segment."},
	{name: "remote.log.copy.disable", typ: TypeBoolean, def: "false",
		doc: "Stop copying segments to remote storage (tiered storage)."},
	{name: "remote.log.delete.on.disable", typ: TypeBoolean, def: "false",
		doc: "Delete remote data when tiered storage is disabled for the topic."},
	{name: "remote.storage.enable", typ: TypeBoolean, def: "false",
		doc: "Enable tiered storage for the topic. sharq has no tiered storage: true is refused."},
	{name: "retention.bytes", typ: TypeLong, def: "-1", impl: true, synonyms: []string{"log.retention.bytes"},
		doc: "The maximum size a partition can grow to before old segments are discarded (delete policy). -1: no limit."},
	{name: "retention.ms", typ: TypeLong, def: "604800000", impl: true, synonyms: []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}, valid: atLeast(-1),
		doc: "The maximum time a log is retained before old segments are discarded (delete policy). -1: no limit."},
	{name: "segment.bytes", typ: TypeInt, def: "1073741824", impl: true, synonyms: []string{"log.segment.bytes"}, valid: atLeast(1048576),
		doc: "The segment file size for the log."},
	{name: "segment.index.bytes", typ: TypeInt, def: "10485760", impl: true, synonyms: []string{"log.index.size.max.bytes"}, valid: atLeast(4),
		doc: "The size of the offset index that maps offsets to file positions."},
	{name: "segment.jitter.ms", typ: TypeLong, def: "0", impl: true, synonyms: []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}, valid: atLeast(0),
		doc: "The maximum random jitter subtracted from the scheduled segment roll time."},
	{name: "segment.ms", typ: TypeLong, def: "604800000", impl: true, synonyms: []string{"log.roll.ms", "log.roll.hours"}, valid: atLeast(1),
		doc: "The period after which the log rolls even if the segment file is not full."},
	{name: "unclean.leader.election.enable", typ: TypeBoolean, def: "false", synonyms: []string{"unclean.leader.election.enable"},
		doc: "Whether replicas outside the ISR may be elected leader as a last resort."},
})

var topicIndex = map[string]*topicKey{}

func sortedTopicKeys(ks []*topicKey) []*topicKey {
	sort.Slice(ks, func(i, j int) bool { return ks[i].name < ks[j].name })
	return ks
}

// TopicConfigNames lists every topic config key, sorted.
func TopicConfigNames() []string {
	out := make([]string, len(topicKeys))
	for i, k := range topicKeys {
		out[i] = k.name
	}
	return out
}

// throttledReplicas is Kafka's ThrottledReplicaListValidator.
type throttledReplicas struct{}

func (throttledReplicas) String() string {
	return "[partitionId]:[brokerId],[partitionId]:[brokerId],... or *"
}
func (throttledReplicas) check(v any) string {
	xs, _ := v.([]string)
	if len(xs) == 1 && xs[0] == "*" {
		return ""
	}
	for _, x := range xs {
		p, b, ok := strings.Cut(x, ":")
		_, e1 := strconv.ParseUint(strings.TrimSpace(p), 10, 31)
		_, e2 := strconv.ParseUint(strings.TrimSpace(b), 10, 31)
		if !ok || e1 != nil || e2 != nil {
			return "must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
		}
	}
	return ""
}

func (k *topicKey) parse(raw string) (any, error) {
	v, reason := parseTyped(k.typ, raw)
	if reason == "" && k.valid != nil {
		reason = k.valid.check(v)
	}
	if reason == "" && k.name == "remote.storage.enable" && v == true {
		reason = "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
	}
	if reason != "" {
		return nil, invalid(k.name, strings.TrimSpace(raw), reason)
	}
	return v, nil
}

// ValidateTopicConfig checks one topic config. An unknown name wraps
// ErrUnknownConfig ("Unknown topic config name: x"); a bad value wraps
// ErrInvalidConfig with Kafka's ConfigException wording.
func ValidateTopicConfig(name, value string) error {
	k, ok := topicIndex[name]
	if !ok {
		return &Error{Key: name, Value: value, Reason: "Unknown topic config name: " + name, Err: ErrUnknownConfig}
	}
	_, err := k.parse(value)
	return err
}

// ValidateTopicConfigs checks a whole set of topic overrides against the
// broker's defaults, including the rules that span keys (Kafka's
// LogConfig.validateValues).
func ValidateTopicConfigs(c *Config, overrides map[string]string) error {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := ValidateTopicConfig(n, overrides[n]); err != nil {
			return err
		}
	}
	s := TopicSettingsFor(c, overrides)
	if s.MinCompactionLagMs > s.MaxCompactionLagMs {
		return &Error{Key: "min.compaction.lag.ms", Value: strconv.FormatInt(s.MinCompactionLagMs, 10), Err: ErrInvalidConfig,
			Reason: fmt.Sprintf("conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", s.MinCompactionLagMs, s.MaxCompactionLagMs)}
	}
	return nil
}

// TopicValue is the effective value of a topic config: the topic's override,
// else the broker's value of its synonym, else Kafka's default. An unknown
// name gives "".
func TopicValue(c *Config, overrides map[string]string, name string) string {
	k, ok := topicIndex[name]
	if !ok {
		return ""
	}
	if v, ok := overrides[name]; ok {
		if pv, err := k.parse(v); err == nil {
			return formatTyped(pv)
		}
	}
	if c == nil {
		c = defaultConfig()
	}
	return brokerDefault(c, k)
}

// brokerDefault is the broker-side value of a topic key: the field of its
// first broker synonym (which folds the others in), else the highest set
// synonym without a field, else Kafka's topic default.
func brokerDefault(c *Config, k *topicKey) string {
	if len(k.synonyms) == 0 {
		return k.def
	}
	if b := brokerIndex[k.synonyms[0]]; b.get != nil {
		v, _ := b.get(c)
		return v
	}
	for _, s := range k.synonyms {
		if v, ok := c.merged(s); ok {
			return v
		}
	}
	return k.def
}

// TopicSettings is what the storage layer needs of a topic's effective
// configuration.
type TopicSettings struct {
	SegmentBytes           int64
	SegmentMs              int64
	SegmentJitterMs        int64
	SegmentIndexBytes      int32
	RetentionMs            int64 // -1: no time limit
	RetentionBytes         int64 // -1: no size limit
	IndexIntervalBytes     int32
	MaxMessageBytes        int32
	FlushMessages          int64  // math.MaxInt64: never by count; 1: every append
	FlushMs                int64  // math.MaxInt64: never by time
	TimestampType          string // CreateTime | LogAppendTime
	LogAppendTime          bool
	TimestampBeforeMaxMs   int64
	TimestampAfterMaxMs    int64
	CleanupPolicy          []string
	Compact                bool
	Delete                 bool
	CompressionType        string
	MinInsyncReplicas      int32
	Preallocate            bool
	FileDeleteDelayMs      int64
	DeleteRetentionMs      int64
	MinCompactionLagMs     int64
	MaxCompactionLagMs     int64
	MinCleanableDirtyRatio float64
}

// TopicSettingsFor resolves a topic's effective settings. Overrides are assumed
// validated; one that does not parse falls back to the broker value.
func TopicSettingsFor(c *Config, overrides map[string]string) TopicSettings {
	if c == nil {
		c = defaultConfig()
	}
	val := func(name string) any {
		k := topicIndex[name]
		if v, err := k.parse(TopicValue(c, overrides, name)); err == nil {
			return v
		}
		v, _ := k.parse(k.def)
		return v
	}
	i64 := func(name string) int64 { n, _ := val(name).(int64); return n }
	i32 := func(name string) int32 {
		n := i64(name)
		if n > math.MaxInt32 {
			return math.MaxInt32
		}
		return int32(n)
	}
	str := func(name string) string { s, _ := val(name).(string); return s }
	boolean := func(name string) bool { b, _ := val(name).(bool); return b }
	policy, _ := val("cleanup.policy").([]string)
	s := TopicSettings{
		SegmentBytes:         i64("segment.bytes"),
		SegmentMs:            i64("segment.ms"),
		SegmentJitterMs:      i64("segment.jitter.ms"),
		SegmentIndexBytes:    i32("segment.index.bytes"),
		RetentionMs:          i64("retention.ms"),
		RetentionBytes:       i64("retention.bytes"),
		IndexIntervalBytes:   i32("index.interval.bytes"),
		MaxMessageBytes:      i32("max.message.bytes"),
		FlushMessages:        i64("flush.messages"),
		FlushMs:              i64("flush.ms"),
		TimestampType:        str("message.timestamp.type"),
		TimestampBeforeMaxMs: i64("message.timestamp.before.max.ms"),
		TimestampAfterMaxMs:  i64("message.timestamp.after.max.ms"),
		CleanupPolicy:        policy,
		CompressionType:      str("compression.type"),
		MinInsyncReplicas:    i32("min.insync.replicas"),
		Preallocate:          boolean("preallocate"),
		FileDeleteDelayMs:    i64("file.delete.delay.ms"),
		DeleteRetentionMs:    i64("delete.retention.ms"),
		MinCompactionLagMs:   i64("min.compaction.lag.ms"),
		MaxCompactionLagMs:   i64("max.compaction.lag.ms"),
	}
	s.MinCleanableDirtyRatio, _ = val("min.cleanable.dirty.ratio").(float64)
	s.LogAppendTime = s.TimestampType == "LogAppendTime"
	for _, p := range policy {
		switch strings.ToLower(p) {
		case "compact":
			s.Compact = true
		case "delete":
			s.Delete = true
		}
	}
	return s
}
