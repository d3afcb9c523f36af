package broker

// ListConfigResources: v0-1
//
// Behavior:
// * v0 (ListClientMetricsResources) lists client-metrics subscriptions.
// * v1 lists resources by type (none given = every type): TOPIC (2) every
//   topic, BROKER (4) every broker, CLIENT_METRICS (16) every
//   client metrics subscription, GROUP (32)
//   the groups with dynamic configs (kafka-configs --entity-type groups
//   checks a group with it). Other types: INVALID_REQUEST.

import (
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(74, 0, 1, handleListConfigResources) }

func handleListConfigResources(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListConfigResourcesRequest)
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !r.authorizeCluster(opDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	types := req.ResourceTypes
	if r.version == 0 {
		types = []int8{16}
	}
	if len(types) == 0 {
		types = []int8{2, 4, 16, 32}
	}
	img := r.s.meta.Image()
	add := func(typ int8, names []string) {
		sort.Strings(names)
		for _, n := range names {
			resp.ConfigResources = append(resp.ConfigResources, kmsg.ListConfigResourcesResponseConfigResource{Name: n, Type: typ})
		}
	}
	for _, typ := range types {
		var names []string
		switch typ {
		case 2:
			for name := range img.Topics {
				names = append(names, name)
			}
		case 4:
			for id := range img.Brokers {
				names = append(names, strconv.Itoa(int(id)))
			}
		case 16:
			for name := range img.ClientMetrics {
				names = append(names, name)
			}
		case 32:
			for g, cfg := range img.GroupConfigs {
				if len(cfg) > 0 {
					names = append(names, g)
				}
			}
		default:
			resp.ErrorCode = errInvalidRequest
			resp.ConfigResources = nil
			return resp, nil
		}
		add(typ, names)
	}
	return resp, nil
}
