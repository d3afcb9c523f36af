package broker

// DescribeClientQuotas: v0-1
//
// Behavior:
// * sharq has no client quotas (AlterClientQuotas is not served), so after
//   the filter is validated the answer lists no entries: exactly what Kafka
//   answers for a cluster without quotas. kafka-configs.sh --describe
//   --entity-type users needs it before it describes SCRAM credentials.
// * Filters are validated as Kafka's ClientQuotasImage does: entity types
//   user, client-id and ip, each at most once, ip not combined with the
//   others, a match only for match type EXACT (INVALID_REQUEST).
// * Needs DESCRIBE_CONFIGS on the cluster.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(48, 0, 1, handleDescribeClientQuotas) }

func handleDescribeClientQuotas(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !r.authorizeCluster(opDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	if msg := checkQuotaFilter(req.Components); msg != "" {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(msg)
		return resp, nil
	}
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	return resp, nil
}

func checkQuotaFilter(cs []kmsg.DescribeClientQuotasRequestComponent) string {
	seen := map[string]bool{}
	for _, c := range cs {
		switch c.EntityType {
		case "user", "client-id", "ip":
		default:
			return fmt.Sprintf("Custom entity type '%s' not supported", c.EntityType)
		}
		if seen[c.EntityType] {
			return fmt.Sprintf("Entity type %s cannot appear more than once in the filter.", c.EntityType)
		}
		seen[c.EntityType] = true
		switch c.MatchType {
		case kmsg.QuotasMatchTypeExact:
			if c.Match == nil {
				return fmt.Sprintf("Match type EXACT for entity type %s requires a match string.", c.EntityType)
			}
		case kmsg.QuotasMatchTypeDefault, kmsg.QuotasMatchTypeAny:
			if c.Match != nil {
				return fmt.Sprintf("A match string must not be given with match type %d.", c.MatchType)
			}
		default:
			return fmt.Sprintf("Unknown match type %d.", c.MatchType)
		}
	}
	if seen["ip"] && (seen["user"] || seen["client-id"]) {
		return "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component."
	}
	return ""
}
