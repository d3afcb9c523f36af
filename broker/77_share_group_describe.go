package broker

// ShareGroupDescribe: v1
//
// Behavior:
// * Per group: state (Empty/Stable), group and assignment epochs, assignor
//   "simple", and each member's id, rack, epoch, client id and host,
//   subscriptions and assignment (topic ids and names).
// * An unknown group, or a group of another type, is GROUP_ID_NOT_FOUND.

import (
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
	"sharq/share"
)

func init() { regKey(77, 1, 1, handleShareGroupDescribe) }

func handleShareGroupDescribe(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	img := r.s.meta.Image()
	for _, id := range req.GroupIDs {
		g := kmsg.NewShareGroupDescribeResponseGroup()
		g.GroupID = id
		g.AuthorizedOperations = authorizedOperationsNotRequested
		if !r.s.shareGroupsEnabled() {
			g.ErrorCode = errUnsupportedVersion
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if !r.authorize(resGroup, id, opDescribe) {
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		var found bool
		r.s.share.WithCoordinator(func(c *share.Coordinator) {
			grp := c.Group(id)
			if found = grp != nil; found {
				describeShareGroup(&g, grp, img, req.IncludeAuthorizedOperations)
			}
		})
		if !found {
			g.ErrorCode = share.ErrorCode(share.ErrGroupIDNotFound)
			msg := fmt.Sprintf("Group %s not found.", id)
			if r.s.isOtherGroupType(id) {
				msg = fmt.Sprintf("Group %s is not a share group.", id)
			}
			g.ErrorMessage = &msg
			g.GroupState = "Dead"
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if req.IncludeAuthorizedOperations {
			g.AuthorizedOperations = r.authorizedOperations(resGroup, id, groupAllOperations)
		}
		for _, m := range g.Members {
			for _, tp := range m.Assignment.TopicPartitions {
				if g.ErrorCode == 0 && !r.authorize(resTopic, tp.Topic, opDescribe) {
					g.ErrorCode, g.ErrorMessage = kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr(describedTopicsDenied)
				}
			}
		}
		if g.ErrorCode != 0 {
			g.Members = nil
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

// describeShareGroup fills g from grp; called with the coordinator locked.
func describeShareGroup(g *kmsg.ShareGroupDescribeResponseGroup, grp *share.Group, img *raftmeta.Image, includeOps bool) {
	g.GroupState = grp.State()
	g.GroupEpoch = grp.Epoch
	g.AssignmentEpoch = grp.AssignmentEpoch
	g.Assignor = "simple"
	if includeOps {
		g.AuthorizedOperations = groupAllOperations
	}
	ids := make([]string, 0, len(grp.Members))
	for mid := range grp.Members {
		ids = append(ids, mid)
	}
	sort.Strings(ids)
	for _, mid := range ids {
		m := grp.Members[mid]
		gm := kmsg.NewShareGroupDescribeResponseGroupMember()
		gm.MemberID, gm.RackID, gm.MemberEpoch = m.ID, m.RackID, m.Epoch
		gm.ClientID, gm.ClientHost = m.ClientID, m.ClientHost
		gm.SubscribedTopicNames = append([]string{}, m.Subscribed...)
		for _, tid := range sortedShareTopics(m.Assignment) {
			tp := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
			tp.TopicID = tid
			if t := resolveTopic(img, tid); t != nil {
				tp.Topic = t.Name
			}
			tp.Partitions = append([]int32{}, m.Assignment[tid]...)
			gm.Assignment.TopicPartitions = append(gm.Assignment.TopicPartitions, tp)
		}
		g.Members = append(g.Members, gm)
	}
}

// sortedShareTopics orders an assignment's topics for stable output.
func sortedShareTopics(a share.Assignment) [][16]byte {
	ids := make([][16]byte, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		for k := 0; k < 16; k++ {
			if ids[i][k] != ids[j][k] {
				return ids[i][k] < ids[j][k]
			}
		}
		return false
	})
	return ids
}
