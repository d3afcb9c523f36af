package broker

// DescribeConfigs: v1-4
//
// Behavior:
// * TOPIC: every topic config Kafka 4.4 has, with the topic override
//   (DYNAMIC_TOPIC_CONFIG) or the broker value it defaults to (its source)
//   or Kafka's default; synonyms (v1+) list the topic override and the
//   broker key behind it.
// * BROKER: node id = every broker key with dynamic overrides applied; the
//   empty name (cluster default entity) = only the dynamic defaults.
// * ConfigNames filters; unknown names are simply absent, as in Kafka.
// * Documentation (v3+) when asked for; sensitive values are null.
// * GROUP: every group config of Kafka 4.4 with the group's override
//   (GROUP_CONFIG) or the broker synonym's value and source; the group need
//   not exist.
// * CLIENT_METRICS: the keys the subscription has (metrics, interval.ms,
//   match), source CLIENT_METRICS_CONFIG, as Kafka answers.
// * BROKER_LOGGER is not supported yet: INVALID_REQUEST with a message.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/raftmeta/clientmetrics"
)

func init() { regKey(32, 1, 4, handleDescribeConfigs) }

func handleDescribeConfigs(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		rs := kmsg.NewDescribeConfigsResponseResource()
		rs.ResourceType, rs.ResourceName = rr.ResourceType, rr.ResourceName
		if code := r.configAuthError(rr.ResourceType, rr.ResourceName, opDescribeConfigs); code != 0 {
			rs.ErrorCode, rs.ErrorMessage = code, kmsg.StringPtr(errorMessage(code))
			resp.Resources = append(resp.Resources, rs)
			continue
		}
		t := r.resolveConfigResource(rr.ResourceType, rr.ResourceName)
		if t.errCode != 0 {
			rs.ErrorCode = t.errCode
			msg := t.errMsg
			rs.ErrorMessage = &msg
			resp.Resources = append(resp.Resources, rs)
			continue
		}
		var entries []config.Entry
		switch {
		case rr.ResourceType == resourceClientMetrics:
			// Only the keys the subscription has, as Kafka lists them.
			cur := r.currentConfigs(t, rr.ResourceType)
			for _, k := range clientmetrics.Keys {
				if v, ok := cur[k]; ok {
					src := int8(kmsg.ConfigSourceClientMetricsConfig)
					entries = append(entries, config.Entry{Name: k, Value: v, Source: src,
						Synonyms: []config.Synonym{{Name: k, Value: v, Source: src}}})
				}
			}
		case rr.ResourceType == resourceGroup:
			entries = config.GroupEntries(r.s.effectiveConfig(), r.currentConfigs(t, rr.ResourceType))
		case rr.ResourceType == resourceTopic:
			entries = config.TopicEntries(r.s.effectiveConfig(), r.currentConfigs(t, rr.ResourceType))
		case t.entity == "":
			// The cluster default entity describes only its dynamic values.
			for _, e := range config.BrokerEntries(r.s.effectiveConfig()) {
				if e.Source == config.SourceDynamicDefaultBroker {
					entries = append(entries, e)
				}
			}
		default:
			entries = config.BrokerEntries(r.s.effectiveConfig())
			if t.entity == strconv.Itoa(int(r.s.cfg.NodeID)) {
				entries = r.s.asKafkaShows(entries)
			}
		}
		want := map[string]bool{}
		for _, n := range rr.ConfigNames {
			want[n] = true
		}
		for _, e := range entries {
			if rr.ConfigNames != nil && !want[e.Name] {
				continue
			}
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			c.Name = e.Name
			if !e.Sensitive && !e.Null {
				v := e.Value
				c.Value = &v
			}
			c.ReadOnly = e.ReadOnly
			c.Source = kmsg.ConfigSource(e.Source)
			c.IsDefault = e.Source == int8(kmsg.ConfigSourceDefaultConfig)
			c.IsSensitive = e.Sensitive
			c.ConfigType = kmsg.ConfigType(e.Type)
			if req.IncludeDocumentation && e.Doc != "" {
				doc := e.Doc
				c.Documentation = &doc
			}
			if req.IncludeSynonyms {
				c.ConfigSynonyms = toSynonyms(e)
			}
			rs.Configs = append(rs.Configs, c)
		}
		resp.Resources = append(resp.Resources, rs)
	}
	return resp, nil
}
