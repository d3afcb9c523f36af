package config

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SourceGroup is DescribeConfigs' GROUP_CONFIG (the Java admin client shows
// DYNAMIC_GROUP_CONFIG): a dynamic config set on one group.
const SourceGroup int8 = 8

// groupKey is one group config (resource type GROUP, kafka-configs
// --entity-type groups), Kafka 4.4's GroupConfig.
type groupKey struct {
	name   string
	typ    Type
	def    string // used when the key has no broker synonym sharq knows
	broker string // broker-level synonym, "" for none
	valid  validator
	// Range checks against broker configs (Kafka's validateIntRange):
	// names of broker keys, "" for no bound.
	minKey, maxKey string
	doc            string
	// internal keys are accepted like the others but, as in Kafka 4.4's
	// describe of a group, listed only when the group sets them. sharq's own
	// sharq.share.* keys are too, so that a group using none of them is
	// described exactly as Kafka describes it.
	internal bool
	// unused says why sharq accepts the key but does not act on it ("" if
	// it does), for the reference in docs/configuration.md.
	unused string
}

var groupKeys = []*groupKey{
	{name: "consumer.session.timeout.ms", typ: TypeInt, broker: "group.consumer.session.timeout.ms", valid: atLeast(1),
		minKey: "group.consumer.min.session.timeout.ms", maxKey: "group.consumer.max.session.timeout.ms",
		doc: "The timeout to detect client failures when using the consumer group protocol."},
	{name: "consumer.heartbeat.interval.ms", typ: TypeInt, broker: "group.consumer.heartbeat.interval.ms", valid: atLeast(1),
		minKey: "group.consumer.min.heartbeat.interval.ms", maxKey: "group.consumer.max.heartbeat.interval.ms",
		doc: "The heartbeat interval given to the members of a consumer group."},
	{name: "consumer.assignment.interval.ms", typ: TypeInt, broker: "group.consumer.assignment.interval.ms", valid: atLeast(0),
		minKey: "group.consumer.min.assignment.interval.ms", maxKey: "group.consumer.max.assignment.interval.ms",
		doc: "The interval between assignment updates for a consumer group."},
	{name: "consumer.assignor.offload.enable", typ: TypeBoolean, broker: "group.consumer.assignor.offload.enable",
		internal: true,
		doc:      "Whether to offload consumer group assignment to a background thread."},
	{name: "share.session.timeout.ms", typ: TypeInt, broker: "group.share.session.timeout.ms", valid: atLeast(1),
		minKey: "group.share.min.session.timeout.ms", maxKey: "group.share.max.session.timeout.ms",
		doc: "The timeout to detect client failures when using the share group protocol."},
	{name: "share.heartbeat.interval.ms", typ: TypeInt, broker: "group.share.heartbeat.interval.ms", valid: atLeast(1),
		minKey: "group.share.min.heartbeat.interval.ms", maxKey: "group.share.max.heartbeat.interval.ms",
		doc: "The heartbeat interval given to the members of a share group."},
	{name: "share.record.lock.duration.ms", typ: TypeInt, broker: "group.share.record.lock.duration.ms", valid: atLeast(1000),
		minKey: "group.share.min.record.lock.duration.ms", maxKey: "group.share.max.record.lock.duration.ms",
		doc: "The record acquisition lock duration in milliseconds for share groups."},
	{name: "share.delivery.count.limit", typ: TypeInt, broker: "group.share.delivery.count.limit", valid: atLeast(2),
		minKey: "group.share.min.delivery.count.limit", maxKey: "group.share.max.delivery.count.limit",
		doc: "The maximum number of delivery attempts for a record delivered to a share group."},
	{name: "share.partition.max.record.locks", typ: TypeInt, broker: "group.share.partition.max.record.locks", valid: atLeast(100),
		minKey: "group.share.min.partition.max.record.locks", maxKey: "group.share.max.partition.max.record.locks",
		doc: "Share-group record lock limit per share-partition."},
	{name: "share.auto.offset.reset", typ: TypeString, def: "latest", valid: funcV{fn: checkShareAutoOffsetReset, desc: "[latest, earliest, by_duration:PnDTnHnMn.nS]"},
		doc: "The strategy to initialize the share-partition start offset."},
	{name: "share.isolation.level", typ: TypeString, def: "read_uncommitted", valid: in("read_committed", "read_uncommitted"),
		doc: "Controls how to read records written transactionally."},
	{name: "share.renew.acknowledge.enable", typ: TypeBoolean, def: "true",
		doc: "Whether the renew acknowledge type is enabled for the share group."},
	{name: "sharq.share.fair.acquisition.enable", typ: TypeBoolean, def: "true", internal: true,
		doc: "Fair acquisition: while other members of the share group wait for records of a share-partition or hold records there, a member gets no more than its fair share of the records in flight, and log batches are split into record ranges so the others get work. false: Kafka's batch-optimised acquisition (whole batches to whoever fetches first)."},
	{name: "share.assignment.interval.ms", typ: TypeInt, broker: "group.share.assignment.interval.ms", valid: atLeast(0),
		minKey: "group.share.min.assignment.interval.ms", maxKey: "group.share.max.assignment.interval.ms",
		doc: "The interval between assignment updates for a share group."},
	{name: "share.assignor.offload.enable", typ: TypeBoolean, broker: "group.share.assignor.offload.enable",
		internal: true,
		doc:      "Whether to offload share group assignment to a background thread."},
	{name: "streams.session.timeout.ms", typ: TypeInt, broker: "group.streams.session.timeout.ms", valid: atLeast(1),
		minKey: "group.streams.min.session.timeout.ms", maxKey: "group.streams.max.session.timeout.ms",
		doc: "The timeout to detect client failures when using the streams group protocol."},
	{name: "streams.heartbeat.interval.ms", typ: TypeInt, broker: "group.streams.heartbeat.interval.ms", valid: atLeast(1),
		minKey: "group.streams.min.heartbeat.interval.ms", maxKey: "group.streams.max.heartbeat.interval.ms",
		doc: "The heartbeat interval given to the members."},
	{name: "streams.num.standby.replicas", typ: TypeInt, broker: "group.streams.num.standby.replicas", valid: atLeast(0),
		maxKey: "group.streams.max.standby.replicas",
		doc:    "The number of standby replicas for each task."},
	{name: "streams.initial.rebalance.delay.ms", typ: TypeInt, broker: "group.streams.initial.rebalance.delay.ms", valid: atLeast(0),
		doc: "The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance."},
	{name: "streams.assignment.interval.ms", typ: TypeInt, broker: "group.streams.assignment.interval.ms", valid: atLeast(0),
		minKey: "group.streams.min.assignment.interval.ms", maxKey: "group.streams.max.assignment.interval.ms",
		unused: "sharq computes assignments at once",
		doc:    "The interval between assignment updates for a streams group."},
	{name: "streams.assignor.offload.enable", typ: TypeBoolean, broker: "group.streams.assignor.offload.enable",
		internal: true,
		unused:   "sharq computes assignments at once",
		doc:      "Whether to offload streams group assignment to a background thread."},
	{name: "streams.task.offset.interval.ms", typ: TypeInt, broker: "group.streams.task.offset.interval.ms", valid: atLeast(1),
		minKey:   "group.streams.min.task.offset.interval.ms",
		internal: true,
		doc:      "How often the members report the changelog offsets of their warm-up tasks."},
	{name: "streams.num.warmup.replicas", typ: TypeInt, broker: "group.streams.num.warmup.replicas", valid: atLeast(0),
		maxKey:   "group.streams.max.warmup.replicas",
		internal: true,
		unused:   "sharq has no warm-up tasks",
		doc:      "The maximum number of warm-up task replicas."},
	{name: "streams.acceptable.recovery.lag", typ: TypeLong, broker: "group.streams.acceptable.recovery.lag", valid: atLeast(0),
		internal: true,
		doc:      "The largest lag at which a member counts as caught up on a task."},
	// The broker key is a list of assignors; the group names one of them
	// (its default is the list's first entry).
	{name: "streams.assignor.name", typ: TypeString, broker: "group.streams.assignors",
		doc: "The task assignor of this streams group, one of group.streams.assignors by name."},
	{name: "streams.rack.aware.assignment.tags", typ: TypeList, broker: "group.streams.rack.aware.assignment.tags",
		unused: "sharq's sticky assignor is not rack aware",
		doc:    "The client tag keys used to spread standby replicas across racks."},
	{name: "errors.deadletterqueue.topic.name", typ: TypeString, def: "",
		valid: funcV{fn: checkDLQTopicName, desc: "a topic name not starting with '__'"},
		doc:   "The name of the topic to be used as the dead-letter queue (DLQ) topic for this share group. If blank (the default), the group does not have a DLQ topic."},
	// sharq's own share group configs (no Kafka equivalent; off by default).
	{name: "sharq.share.redelivery.backoff.ms", typ: TypeLong, def: "0", valid: between(0, 3600000), internal: true,
		doc: "sharq only: a record released by its consumer or whose acquisition lock expired is redelivered only after this many milliseconds, multiplied by sharq.share.redelivery.backoff.multiplier for each further failed delivery, up to sharq.share.redelivery.backoff.max.ms. 0 (the default) turns the backoff off."},
	{name: "sharq.share.redelivery.backoff.max.ms", typ: TypeLong, def: "60000", valid: between(1, 3600000), internal: true,
		doc: "sharq only: the longest redelivery backoff."},
	{name: "sharq.share.redelivery.backoff.multiplier", typ: TypeDouble, def: "2.0", valid: between(1, 1000), internal: true,
		doc: "sharq only: the factor the redelivery backoff grows by per failed delivery; 1 gives a fixed delay."},
	{name: "sharq.share.key.ordered.enable", typ: TypeBoolean, def: "false", internal: true,
		doc: "sharq only: no two records with the same key are in flight at once in a share-partition, and records of one key are delivered in offset order, across redeliveries; records with a null key are unordered."},
	{name: "sharq.share.delivery.count.persist", typ: TypeBoolean, def: "false", internal: true,
		doc: "sharq only: each acquisition's delivery count is made durable before the records are returned, so that after a crash no record is delivered more than share.delivery.count.limit times."},
	{name: "errors.deadletterqueue.copy.record.enable", typ: TypeBoolean, def: "false",
		doc: "When writing onto the dead-letter queue topic, whether to copy the original record onto the DLQ topic, or just write a record containing the context information headers."},
}

var groupIndex = func() map[string]*groupKey {
	sort.Slice(groupKeys, func(i, j int) bool { return groupKeys[i].name < groupKeys[j].name })
	m := make(map[string]*groupKey, len(groupKeys))
	for _, k := range groupKeys {
		m[k.name] = k
	}
	return m
}()

func checkShareAutoOffsetReset(v any) string {
	s := strings.ToLower(v.(string))
	switch {
	case s == "latest", s == "earliest":
		return ""
	case strings.HasPrefix(s, "by_duration:") && len(s) > len("by_duration:") && strings.HasPrefix(strings.ToUpper(s[len("by_duration:"):]), "P"):
		return ""
	}
	return "Invalid value `" + v.(string) + "` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS.>'."
}

func checkDLQTopicName(v any) string {
	if strings.HasPrefix(v.(string), "__") {
		return "DLQ topic name must not start with '__'"
	}
	return ""
}

// IsGroupConfig reports whether name is a group config key.
func IsGroupConfig(name string) bool { return groupIndex[name] != nil }

// GroupConfigNames lists the group config keys in name order.
func GroupConfigNames() []string {
	out := make([]string, len(groupKeys))
	for i, k := range groupKeys {
		out[i] = k.name
	}
	return out
}

// ValidateGroupConfig checks one group config against its type and the
// broker's min/max bounds in c ("Unknown group config name: x" for an
// unknown key, Kafka's wording for the rest).
func ValidateGroupConfig(c *Config, name, value string) error {
	k := groupIndex[name]
	if k == nil {
		return &Error{Key: name, Value: value, Reason: "Unknown group config name: " + name, Err: ErrUnknownConfig}
	}
	v, reason := parseTyped(k.typ, value)
	if reason == "" && k.valid != nil {
		reason = k.valid.check(v)
	}
	if reason != "" {
		return invalid(k.name, strings.TrimSpace(value), reason)
	}
	if c == nil && (k.minKey != "" || k.maxKey != "" || k.name == "streams.assignor.name") {
		c = defaultConfig()
	}
	// Kafka's validateIntRange, validateIntMax and validateIntMin.
	bound := func(key string) int64 {
		n, _ := strconv.ParseInt(Value(c, key), 10, 64)
		return n
	}
	n, _ := v.(int64)
	switch {
	case k.minKey != "" && k.maxKey != "":
		if lo, hi := bound(k.minKey), bound(k.maxKey); n < lo || n > hi {
			reason = fmt.Sprintf("%s must be in the range %d to %d inclusive.", name, lo, hi)
		}
	case k.maxKey != "":
		if hi := bound(k.maxKey); n > hi {
			reason = fmt.Sprintf("%s must be less than or equal to %d", name, hi)
		}
	case k.minKey != "":
		if lo := bound(k.minKey); n < lo {
			reason = fmt.Sprintf("%s must be greater than or equal to %d", name, lo)
		}
	case k.name == "streams.assignor.name":
		if names := c.GroupStreamsAssignors; !slices.Contains(names, v.(string)) {
			reason = fmt.Sprintf("streams.assignor.name '%s' is not a registered task assignor. Registered assignors are: [%s].", v, strings.Join(names, ", "))
		}
	case k.name == "streams.rack.aware.assignment.tags":
		if xs := v.([]string); len(xs) != len(uniq(xs)) {
			reason = "streams.rack.aware.assignment.tags must not contain duplicate tag keys."
		}
	}
	if reason != "" {
		return &Error{Key: name, Value: value, Reason: reason, Err: ErrInvalidConfig}
	}
	return nil
}

func uniq(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// ValidateGroupConfigs checks a group's whole override set, including
// Kafka's cross-key rule that a session timeout exceeds the heartbeat
// interval.
func ValidateGroupConfigs(c *Config, overrides map[string]string) error {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := ValidateGroupConfig(c, n, overrides[n]); err != nil {
			return err
		}
	}
	for _, p := range [][2]string{{"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"}, {"share.session.timeout.ms", "share.heartbeat.interval.ms"}, {"streams.session.timeout.ms", "streams.heartbeat.interval.ms"}} {
		_, s := overrides[p[0]]
		_, h := overrides[p[1]]
		if !s && !h {
			continue
		}
		sv, _ := strconv.ParseInt(GroupValue(c, overrides, p[0]), 10, 64)
		hv, _ := strconv.ParseInt(GroupValue(c, overrides, p[1]), 10, 64)
		if sv <= hv {
			return &Error{Key: p[0], Value: overrides[p[0]], Reason: p[0] + " must be greater than " + p[1], Err: ErrInvalidConfig}
		}
	}
	return nil
}

// GroupValue is a group config's effective value: the group's override,
// else the broker's synonym, else Kafka's default ("" for an unknown key).
func GroupValue(c *Config, overrides map[string]string, name string) string {
	k := groupIndex[name]
	if k == nil {
		return ""
	}
	if v, ok := overrides[name]; ok {
		if pv, reason := parseTyped(k.typ, v); reason == "" {
			return formatTyped(pv)
		}
	}
	if k.broker != "" {
		if c == nil {
			c = defaultConfig()
		}
		return Value(c, k.broker)
	}
	return k.def
}

// GroupEntries describes every group config of one group for
// DescribeConfigs on GROUP, as Kafka does: the override (source
// GROUP_CONFIG) or the broker synonym's value and source, with the
// synonyms in precedence order; a key without a broker synonym falls back
// to its own default (DEFAULT_CONFIG).
func GroupEntries(c *Config, overrides map[string]string) []Entry {
	if c == nil {
		c = defaultConfig()
	}
	ref := c.reference()
	out := make([]Entry, 0, len(groupKeys))
	for _, k := range groupKeys {
		e := Entry{Name: k.name, Type: int8(k.typ), Doc: k.doc, Source: SourceDefault}
		ov, has := overrides[k.name]
		if k.internal && !has {
			continue
		}
		if has {
			if pv, reason := parseTyped(k.typ, ov); reason == "" {
				ov = formatTyped(pv)
			}
			e.Synonyms = append(e.Synonyms, Synonym{Name: k.name, Value: ov, Source: SourceGroup})
		}
		if k.broker != "" {
			e.Synonyms = append(e.Synonyms, kafkaSynonyms(c, ref, k.broker)...)
		} else {
			e.Synonyms = append(e.Synonyms, Synonym{Name: k.name, Value: k.def, Source: SourceDefault})
		}
		if len(e.Synonyms) > 0 {
			e.Source = e.Synonyms[0].Source
		}
		e.Value = GroupValue(c, overrides, k.name)
		out = append(out, e)
	}
	return out
}
