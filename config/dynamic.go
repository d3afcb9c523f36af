package config

import (
	"errors"
	"sort"
)

// Lookups the broker needs for dynamic configs (AlterConfigs on BROKER and
// TOPIC), kept apart from the key tables they read.

// WithDynamic returns a copy of c with dynamic broker configs laid over it:
// clusterDefault (the "" entity, DYNAMIC_DEFAULT_BROKER_CONFIG) and then
// perBroker (this node's entity, DYNAMIC_BROKER_CONFIG), as Kafka's
// DynamicBrokerConfig merges them. Each key must be dynamically alterable
// and its value valid (ValidateBrokerDynamic); every problem is reported,
// naming the key. BrokerEntries and TopicEntries of the result report the
// dynamic sources and synonyms the way Kafka does. c is not modified.
func (c *Config) WithDynamic(clusterDefault, perBroker map[string]string) (*Config, error) {
	out := *c
	var errs []error
	norm := func(m map[string]string) map[string]string {
		if len(m) == 0 {
			return nil
		}
		n := make(map[string]string, len(m))
		for _, name := range sortedKeys(m) {
			if err := ValidateBrokerDynamic(name, m[name]); err != nil {
				// Kafka stores dynamic keys it does not know and ignores
				// them; so does sharq (AlterConfigs accepts them).
				if !errors.Is(err, ErrUnknownConfig) {
					errs = append(errs, err)
				}
				continue
			}
			v, _ := brokerIndex[name].parse(m[name])
			n[name] = formatTyped(v)
		}
		return n
	}
	out.dynDefault, out.dynBroker = norm(clusterDefault), norm(perBroker)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := out.applyDynamic(); err != nil {
		return nil, err
	}
	return &out, nil
}

// WithOverrides returns a copy of c with dynamic broker configs laid over it
// (the cluster-wide default entity first, then the node's own values, merged
// by the caller into kv). The values take effect, but since kv does not say
// which level each came from, the entries do not list them as synonyms:
// prefer WithDynamic. An unknown key or invalid value is an error naming
// it. The static config c is not modified.
func WithOverrides(c *Config, kv map[string]string) (*Config, error) {
	out := *c
	out.dynMerged = make(map[string]string, len(kv))
	for _, name := range sortedKeys(kv) {
		k, ok := brokerIndex[name]
		if !ok {
			return nil, &Error{Key: name, Value: kv[name], Err: ErrUnknownConfig, Reason: "Unknown broker config name: " + name}
		}
		v, err := k.parse(kv[name])
		if err != nil {
			return nil, err
		}
		out.dynMerged[name] = formatTyped(v)
	}
	if err := out.applyDynamic(); err != nil {
		return nil, err
	}
	return &out, nil
}

// applyDynamic sets the fields of the dynamic keys (lowest level first so
// the highest wins) and re-derives the folded fields if one of their
// synonyms changed. Fields of keys no dynamic layer touches keep their
// values, including ones a caller set by hand.
func (c *Config) applyDynamic() error {
	refold := false
	for _, m := range []map[string]string{c.dynMerged, c.dynDefault, c.dynBroker} {
		for _, name := range sortedKeys(m) {
			k := brokerIndex[name]
			if k.nullUnlessSet || k.set == nil || name == "log.dir" {
				refold = true // a folded key, or a key only fold() reads
			}
			if k.set == nil {
				continue
			}
			v, err := k.parse(m[name])
			if err != nil {
				return err
			}
			if err := k.set(c, v); err != nil {
				return err
			}
		}
	}
	if refold {
		c.fold()
	}
	return c.Validate()
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// IsTopicConfig reports whether name is a topic-level config key.
func IsTopicConfig(name string) bool {
	_, ok := topicIndex[name]
	return ok
}

// DefaultValue is a broker key's default in Kafka's string form; ok is false
// for an unknown key.
func DefaultValue(name string) (string, bool) {
	k, ok := brokerIndex[name]
	if !ok {
		return "", false
	}
	return k.def, true
}

// Value is a broker key's current value in c ("" for an unknown or null key).
func Value(c *Config, name string) string {
	k, ok := brokerIndex[name]
	if !ok {
		return ""
	}
	v, null := brokerEntryValue(c, c.reference(), k)
	if null {
		return ""
	}
	return v
}
