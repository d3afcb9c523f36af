package config

import (
	"sort"
	"strings"
	"sync"
)

// Config sources, numbered as DescribeConfigs' ConfigSource.
const (
	SourceDynamicTopic         int8 = 1 // DYNAMIC_TOPIC_CONFIG
	SourceDynamicBroker        int8 = 2 // DYNAMIC_BROKER_CONFIG
	SourceDynamicDefaultBroker int8 = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG
	SourceStaticBroker         int8 = 4 // STATIC_BROKER_CONFIG
	SourceDefault              int8 = 5 // DEFAULT_CONFIG
)

// Synonym is one entry of a DescribeConfigs synonym list (v1+), in order of
// precedence.
type Synonym struct {
	Name   string
	Value  string
	Null   bool
	Source int8
}

// Entry is one config of a DescribeConfigs answer.
type Entry struct {
	Name      string
	Value     string
	Null      bool // the value is null on the wire (no default, or a password)
	Source    int8
	ReadOnly  bool
	Sensitive bool
	Type      int8 // Kafka ConfigType id (TypeBoolean ... TypePassword)
	Doc       string
	Synonyms  []Synonym
}

var (
	defaultOnce sync.Once
	defaultCfg  *Config
)

// defaultConfig is a shared, read-only Config at every default.
func defaultConfig() *Config {
	defaultOnce.Do(func() { defaultCfg = New() })
	return defaultCfg
}

// reference rebuilds from c's recorded settings (static, then dynamic) the
// Config Load and WithDynamic would produce. A field of c that differs from
// it was changed by hand and is described as a static broker setting.
func (c *Config) reference() *Config {
	if c.explicit == nil && c.dynDefault == nil && c.dynBroker == nil && c.dynMerged == nil {
		return defaultConfig()
	}
	r := New()
	r.explicit, r.dynDefault, r.dynBroker, r.dynMerged = c.explicit, c.dynDefault, c.dynBroker, c.dynMerged
	for _, m := range []map[string]string{c.explicit, c.dynMerged, c.dynDefault, c.dynBroker} {
		names := sortedKeys(m)
		// The protocol map first: listeners are resolved against it.
		sort.SliceStable(names, func(i, j int) bool {
			return names[i] == "listener.security.protocol.map" && names[j] != names[i]
		})
		for _, name := range names {
			k := brokerIndex[name]
			if k == nil || k.set == nil {
				continue
			}
			if v, err := k.parse(m[name]); err == nil {
				_ = k.set(r, v) // values were validated when recorded
			}
		}
	}
	r.fold()
	if _, ok := r.merged("advertised.listeners"); !ok {
		r.AdvertisedListeners = defaultAdvertised(r.Listeners)
	}
	return r
}

// handChanged reports whether k's field in c differs from the reference.
func handChanged(c, ref *Config, k *keyDef) bool {
	if k.get == nil || c == ref {
		return false
	}
	v, null := k.get(c)
	rv, rnull := k.get(ref)
	return v != rv || null != rnull
}

// layerValue is k's value at one level of Kafka's precedence, if set there.
func layerValue(c, ref *Config, k *keyDef, src int8) (string, bool) {
	switch src {
	case SourceDynamicBroker:
		v, ok := c.dynBroker[k.name]
		return v, ok
	case SourceDynamicDefaultBroker:
		v, ok := c.dynDefault[k.name]
		return v, ok
	case SourceStaticBroker:
		if v, ok := c.explicit[k.name]; ok {
			return v, true
		}
		if _, dyn := c.merged(k.name); !dyn && handChanged(c, ref, k) {
			v, _ := k.get(c)
			return v, true
		}
	case SourceDefault:
		if !k.null {
			return k.def, true
		}
	}
	return "", false
}

// brokerEntryValue is a broker key's described value: its field (which
// carries every layer), or for a key folded into another field its own
// setting, null when it has none.
func brokerEntryValue(c, ref *Config, k *keyDef) (string, bool) {
	if k.nullUnlessSet {
		if v, ok := c.merged(k.name); ok {
			return v, false
		}
		if handChanged(c, ref, k) {
			v, _ := k.get(c)
			return v, false
		}
		return "", true
	}
	if k.get != nil {
		v, null := k.get(c)
		if _, set := c.merged(k.name); k.null && !set && v == "" {
			null = true // an unset string key with a null default (broker.rack)
		}
		return v, null
	}
	if v, ok := c.merged(k.name); ok {
		return v, false
	}
	return k.def, k.null
}

var sourceOrder = []int8{SourceDynamicBroker, SourceDynamicDefaultBroker, SourceStaticBroker, SourceDefault}

// kafkaSynonyms is Kafka's ConfigHelper.configSynonyms: for each level in
// precedence order, each synonym of name set there; then everything before
// name's own first appearance is dropped.
func kafkaSynonyms(c, ref *Config, name string) []Synonym {
	group := brokerSynonymGroup(name)
	var all []Synonym
	for _, src := range sourceOrder {
		for _, s := range group {
			if v, ok := layerValue(c, ref, brokerIndex[s], src); ok {
				all = append(all, Synonym{Name: s, Value: v, Source: src})
			}
		}
	}
	for i, s := range all {
		if s.Name == name {
			return all[i:]
		}
	}
	return nil
}

// BrokerEntries describes every broker key for DescribeConfigs on BROKER,
// as Kafka's ConfigHelper does: the value in force, the source of the first
// synonym (DEFAULT_CONFIG when there is none), the synonyms in precedence
// order, read-only unless dynamically alterable. Passwords are sensitive
// and described as null. Dynamic configs show up when c came from
// WithDynamic.
func BrokerEntries(c *Config) []Entry {
	if c == nil {
		c = defaultConfig()
	}
	ref := c.reference()
	out := make([]Entry, 0, len(brokerKeys))
	for _, k := range brokerKeys {
		v, null := brokerEntryValue(c, ref, k)
		e := Entry{
			Name:      k.name,
			Value:     v,
			Null:      null,
			Source:    SourceDefault,
			ReadOnly:  !k.dynamic,
			Sensitive: k.typ == TypePassword,
			Type:      int8(k.typ),
			Doc:       k.doc,
			Synonyms:  kafkaSynonyms(c, ref, k.name),
		}
		if len(e.Synonyms) > 0 {
			e.Source = e.Synonyms[0].Source
		}
		if k.hideDefault && (e.Source == SourceDefault || len(e.Synonyms) == 0) {
			continue
		}
		if e.Sensitive {
			e.Value, e.Null = "", true
			for i := range e.Synonyms {
				e.Synonyms[i].Value, e.Synonyms[i].Null = "", true
			}
		}
		out = append(out, e)
	}
	return out
}

// brokerSynonymGroup is Kafka's DynamicBrokerConfig.brokerConfigSynonyms.
func brokerSynonymGroup(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	return []string{name}
}

// TopicEntries describes every topic key for DescribeConfigs on TOPIC, as
// Kafka's ConfigHelper does: the topic's override first
// (DYNAMIC_TOPIC_CONFIG), then the synonyms of the key's first broker
// synonym; the source is the first synonym's, DEFAULT_CONFIG when there is
// none. The value is the one in force: the override, else the broker's
// value, else Kafka's default. Like Kafka, a topic whose broker default
// comes from a secondary key (log.retention.hours for retention.ms) has no
// synonyms and shows DEFAULT_CONFIG. Topic configs are never read-only.
func TopicEntries(c *Config, overrides map[string]string) []Entry {
	if c == nil {
		c = defaultConfig()
	}
	ref := c.reference()
	out := make([]Entry, 0, len(topicKeys))
	for _, k := range topicKeys {
		e := Entry{Name: k.name, Type: int8(k.typ), Doc: k.doc, Source: SourceDefault}
		ov, hasOverride := overrides[k.name]
		if hasOverride {
			if pv, err := k.parse(ov); err == nil {
				ov = formatTyped(pv)
			}
			e.Synonyms = append(e.Synonyms, Synonym{Name: k.name, Value: ov, Source: SourceDynamicTopic})
		}
		if len(k.synonyms) > 0 {
			e.Synonyms = append(e.Synonyms, kafkaSynonyms(c, ref, k.synonyms[0])...)
		}
		if len(e.Synonyms) > 0 {
			e.Source = e.Synonyms[0].Source
		}
		if hasOverride {
			e.Value = ov
		} else {
			e.Value = brokerDefault(c, k)
		}
		out = append(out, e)
	}
	return out
}

// ValidateBrokerDynamic checks one key of an AlterConfigs /
// IncrementalAlterConfigs on BROKER: it must be known, dynamically
// alterable in Kafka's DynamicBrokerConfig (and applicable by sharq), and
// its value must parse. The error texts follow Kafka's.
func ValidateBrokerDynamic(name, value string) error {
	k, ok := brokerIndex[name]
	if !ok {
		if hasIgnoredPrefix(name) {
			return &Error{Key: name, Value: value, Err: ErrNotDynamic,
				Reason: "Cannot update these configs dynamically: [" + name + "]"}
		}
		return &Error{Key: name, Value: value, Err: ErrUnknownConfig, Reason: "Unknown broker config name: " + name}
	}
	if !k.dynamic {
		return &Error{Key: name, Value: value, Err: ErrNotDynamic,
			Reason: "Cannot update these configs dynamically: [" + name + "]"}
	}
	_, err := k.parse(value)
	return err
}

// DynamicBrokerConfigNames lists the broker keys AlterConfigs may change.
func DynamicBrokerConfigNames() []string {
	var out []string
	for _, k := range brokerKeys {
		if k.dynamic {
			out = append(out, k.name)
		}
	}
	sort.Strings(out)
	return out
}

func hasIgnoredPrefix(name string) bool {
	for _, p := range ignoredPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return false
}
