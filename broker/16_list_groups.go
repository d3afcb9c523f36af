package broker

// ListGroups: v0-5
//
// Behavior:
// * Every group of this node: classic groups (including groups that only
//   hold committed offsets), KIP-848 consumer groups and the groups of any
//   other registered directory (share groups).
// * StatesFilter (v4+) and TypesFilter (v5+) compare case-insensitively,
//   as Kafka does (the admin client sends "Stable", "Consumer", ...).
//
// Version notes:
// * v3: flexible; v4: states filter and group state; v5: types filter and
//   group type.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(16, 0, 5, handleListGroups) }

func handleListGroups(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	all := r.s.coord.groups.ListGroups()
	for _, o := range r.s.coord.others {
		all = append(all, o.ListGroups()...)
	}
	match := func(filter []string, v string) bool {
		if len(filter) == 0 {
			return true
		}
		for _, f := range filter {
			if strings.EqualFold(f, v) {
				return true
			}
		}
		return false
	}
	resp.Groups = []kmsg.ListGroupsResponseGroup{}
	// Kafka lists every group to a principal that may describe the
	// cluster, and otherwise only the groups it may describe.
	everything := r.authorizeCluster(opDescribe)
	for _, g := range all {
		if !match(req.StatesFilter, g.State) || !match(req.TypesFilter, g.Type) || (!everything && !r.authorize(resGroup, g.ID, opDescribe)) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.ID, g.ProtocolType, g.State, g.Type
		resp.Groups = append(resp.Groups, lg)
	}
	return resp, nil
}
