package broker

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/raftmeta/clientmetrics"
)

// Config resource types and sources, as on the wire.
const (
	resourceTopic  = kmsg.ConfigResourceTypeTopic
	resourceBroker = kmsg.ConfigResourceTypeBroker
	resourceGroup  = kmsg.ConfigResourceTypeGroupConfig
	// resourceClientMetrics is a KIP-714 subscription (raftmeta/clientmetrics).
	resourceClientMetrics = kmsg.ConfigResourceTypeClientMetrics

	sourceDynamicBroker        = config.SourceDynamicBroker
	sourceDynamicDefaultBroker = config.SourceDynamicDefaultBroker
)

// configTarget resolves a config resource to what the handlers work on.
type configTarget struct {
	errCode int16
	errMsg  string
	topic   string // for topics
	group   string // for groups and client metrics subscriptions
	entity  string // for brokers: "" = cluster default, else the node id
}

func (r *request) resolveConfigResource(typ kmsg.ConfigResourceType, name string) configTarget {
	switch typ {
	case resourceTopic:
		if err := validateTopicName(name); err != nil {
			return configTarget{errCode: errInvalidTopic, errMsg: err.Error()}
		}
		if r.s.meta.Image().Topics[name] == nil {
			return configTarget{errCode: errUnknownTopicOrPartition, errMsg: fmt.Sprintf("Topic %s does not exist.", name)}
		}
		return configTarget{topic: name}
	case resourceBroker:
		if name == "" {
			return configTarget{entity: ""}
		}
		id, err := strconv.ParseInt(name, 10, 32)
		if err != nil {
			return configTarget{errCode: errInvalidRequest, errMsg: fmt.Sprintf("Invalid broker id %s", name)}
		}
		if int32(id) != r.s.cfg.NodeID {
			if _, ok := r.s.meta.Image().Brokers[int32(id)]; !ok {
				return configTarget{errCode: errInvalidRequest, errMsg: fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %s", r.s.cfg.NodeID, name)}
			}
		}
		return configTarget{entity: name}
	case resourceGroup:
		// A group need not exist to carry configs, as in Kafka.
		if name == "" {
			return configTarget{errCode: errInvalidRequest, errMsg: "Group name must not be empty."}
		}
		return configTarget{group: name}
	case resourceClientMetrics:
		// A subscription need not exist to be described (it has no keys).
		if name == "" {
			return configTarget{errCode: errInvalidRequest, errMsg: "Client metrics subscription name must not be empty"}
		}
		return configTarget{group: name}
	}
	return configTarget{errCode: errInvalidRequest, errMsg: fmt.Sprintf("sharq does not support config resource type %d yet", typ)}
}

// validateConfigChange checks one key/value for a resource.
func (r *request) validateConfigChange(t configTarget, typ kmsg.ConfigResourceType, name, value string) error {
	if typ == resourceClientMetrics {
		return nil // the resulting set is checked whole: validateClientMetricsSet
	}
	if typ == resourceGroup {
		return config.ValidateGroupConfig(r.s.effectiveConfig(), name, value)
	}
	if typ == resourceTopic {
		return config.ValidateTopicConfig(name, value)
	}
	err := config.ValidateBrokerDynamic(name, value)
	if errors.Is(err, config.ErrUnknownConfig) {
		// Kafka stores broker keys it does not know (a plugin's, a newer
		// version's) and ignores them; so does sharq.
		return nil
	}
	return err
}

// configChangeError is the code and message of a refused config change:
// a broker key that cannot change at run time is INVALID_REQUEST with
// Kafka's words, every other refusal INVALID_CONFIG.
func configChangeError(err error) (int16, string) {
	var ce *config.Error
	if errors.Is(err, config.ErrNotDynamic) && errors.As(err, &ce) {
		return errInvalidRequest, ce.Reason
	}
	return errInvalidConfig, err.Error()
}

// applyConfigChange stores a validated change through the metadata store and
// makes it take effect.
func (r *request) applyConfigChange(t configTarget, typ kmsg.ConfigResourceType, set map[string]string, del []string) error {
	if typ == resourceClientMetrics {
		return r.s.meta.AlterClientMetrics(r.ctx, t.group, set, del)
	}
	if typ == resourceGroup {
		return r.s.meta.AlterGroupConfigs(r.ctx, t.group, set, del)
	}
	if typ == resourceTopic {
		if err := r.s.meta.AlterTopicConfigs(r.ctx, t.topic, set, del); err != nil {
			return err
		}
		return r.s.syncPartitions()
	}
	if err := r.s.meta.AlterBrokerConfigs(r.ctx, t.entity, set, del); err != nil {
		return err
	}
	return r.s.applyDynamicBrokerConfigs()
}

// currentConfigs returns the dynamic values a resource has now.
func (r *request) currentConfigs(t configTarget, typ kmsg.ConfigResourceType) map[string]string {
	img := r.s.meta.Image()
	var src map[string]string
	if typ == resourceGroup {
		src = img.GroupConfigs[t.group]
	} else if typ == resourceClientMetrics {
		src = img.ClientMetrics[t.group]
	} else if typ == resourceTopic {
		if tp := img.Topics[t.topic]; tp != nil {
			src = tp.Configs
		}
	} else {
		src = img.BrokerConfigs[t.entity]
	}
	out := make(map[string]string, len(src))
	for k, v := range src {
		out[k] = v
	}
	return out
}

// listOp applies APPEND/SUBTRACT to a comma-separated list value.
func listOp(cur, value string, appendOp bool) string {
	items := splitList(cur)
	for _, v := range splitList(value) {
		idx := -1
		for i, it := range items {
			if it == v {
				idx = i
				break
			}
		}
		switch {
		case appendOp && idx < 0:
			items = append(items, v)
		case !appendOp && idx >= 0:
			items = append(items[:idx], items[idx+1:]...)
		}
	}
	return strings.Join(items, ",")
}

// validateConfigName checks that a key exists for the resource type (for
// DELETE, which carries no value to validate).
func validateConfigName(typ kmsg.ConfigResourceType, name string) error {
	if typ == resourceClientMetrics {
		return nil // deleting a key a subscription lacks changes nothing, as in Kafka
	}
	if typ == resourceGroup {
		if !config.IsGroupConfig(name) {
			return fmt.Errorf("Unknown group config name: %s", name)
		}
		return nil
	}
	if typ == resourceTopic {
		if !config.IsTopicConfig(name) {
			return fmt.Errorf("Unknown topic config name: %s", name)
		}
		return nil
	}
	// A broker key Kafka does not know may be deleted (it may be stored).
	return nil
}

// currentEffectiveValue is the value a key has now for a resource, dynamic
// or not: the base for APPEND and SUBTRACT.
func (r *request) currentEffectiveValue(t configTarget, typ kmsg.ConfigResourceType, name string) string {
	if typ == resourceClientMetrics {
		return r.currentConfigs(t, typ)[name]
	}
	eff := r.s.effectiveConfig()
	if typ == resourceGroup {
		return config.GroupValue(eff, r.currentConfigs(t, typ), name)
	}
	if typ == resourceTopic {
		return config.TopicValue(eff, r.currentConfigs(t, typ), name)
	}
	return config.Value(eff, name)
}

// validateGroupConfigSet checks the cross-key rules of a group's resulting
// config set (a session timeout above the heartbeat interval).
func (r *request) validateGroupConfigSet(t configTarget, set map[string]string, del []string) error {
	next := r.currentConfigs(t, resourceGroup)
	for _, k := range del {
		delete(next, k)
	}
	for k, v := range set {
		next[k] = v
	}
	return config.ValidateGroupConfigs(r.s.effectiveConfig(), next)
}

// validateClientMetricsSet checks a subscription's resulting key set as
// Kafka does (clientmetrics.Validate): unknown keys and a push interval out
// of range are INVALID_REQUEST, a bad match pattern INVALID_CONFIG.
func (r *request) validateClientMetricsSet(t configTarget, set map[string]string, del []string) (int16, string) {
	next := r.currentConfigs(t, resourceClientMetrics)
	for _, k := range del {
		delete(next, k)
	}
	for k, v := range set {
		next[k] = v
	}
	if err := clientmetrics.Validate(t.group, next); err != nil {
		return telemetryErrorCode(err), err.Error()
	}
	return 0, ""
}
