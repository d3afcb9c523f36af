package broker

// ConsumerGroupDescribe: v0-1
//
// Behavior:
// * KIP-848 consumer groups: state (Empty, Assigning, Reconciling,
//   Stable), group and assignment epochs, assignor, members with their
//   subscriptions, current and target assignments. Topic names in the
//   assignments come from the metadata image.
// * An unknown group: GROUP_ID_NOT_FOUND "Group g not found."; a classic
//   group: GROUP_ID_NOT_FOUND "Group g is not a consumer group." (the admin
//   client then falls back to DescribeGroups).
//
// Version notes:
// * v1: member type (1 = consumer protocol).

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
	"sharq/raftmeta"
)

func init() { regKey(69, 0, 1, handleConsumerGroupDescribe) }

func handleConsumerGroupDescribe(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	img := r.s.meta.Image()
	for _, id := range req.Groups {
		g := kmsg.NewConsumerGroupDescribeResponseGroup()
		g.Group = id
		g.AuthorizedOperations = authorizedOperationsNotRequested
		if !r.authorize(resGroup, id, opDescribe) {
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		d, err := r.s.coord.groups.DescribeConsumer(id)
		// As Kafka: a group answered with an error gets no operations.
		if req.IncludeAuthorizedOperations && err == nil {
			g.AuthorizedOperations = r.authorizedOperations(resGroup, id, groupAllOperations)
		}
		if err != nil {
			g.ErrorCode, g.ErrorMessage = groupError(err)
			for _, o := range r.s.coord.others {
				if o.Owns(id) {
					msg := fmt.Sprintf("Group %s is not a consumer group.", id)
					g.ErrorCode, g.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
				}
			}
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g.State, g.Epoch, g.AssignmentEpoch, g.AssignorName = d.State, d.Epoch, d.AssignmentEpoch, d.Assignor
		for _, m := range d.Members {
			gm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			gm.MemberID, gm.MemberEpoch, gm.ClientID, gm.ClientHost = m.MemberID, m.Epoch, m.ClientID, m.ClientHost
			if m.InstanceID != "" {
				v := m.InstanceID
				gm.InstanceID = &v
			}
			if m.RackID != "" {
				v := m.RackID
				gm.RackID = &v
			}
			gm.SubscribedTopics = m.SubscribedTopicNames
			if gm.SubscribedTopics == nil {
				gm.SubscribedTopics = []string{}
			}
			if m.SubscribedTopicRegex != "" {
				v := m.SubscribedTopicRegex
				gm.SubscribedTopicRegex = &v
			}
			gm.Assignment = toWireAssignment(img, m.Assignment)
			gm.TargetAssignment = toWireAssignment(img, m.Target)
			gm.MemberType = 1
			g.Members = append(g.Members, gm)
		}
		if !r.describedTopicsAllowed(g.Members) {
			g.ErrorCode, g.ErrorMessage = kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr(describedTopicsDenied)
			g.Members = nil
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

func toWireAssignment(img *raftmeta.Image, m map[group.TopicID][]int32) kmsg.Assignment {
	a := kmsg.NewAssignment()
	a.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	for _, t := range sortedTopicIDs(m) {
		tp := kmsg.NewAssignmentTopicPartition()
		tp.TopicID, tp.Partitions = t, m[t]
		tp.Topic = topicNameByID(img, t)
		a.TopicPartitions = append(a.TopicPartitions, tp)
	}
	return a
}
