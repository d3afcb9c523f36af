package broker

// ConsumerGroupHeartbeat: v0-1
//
// Behavior:
// * KIP-848 consumer groups (group.Coordinator.ConsumerHeartbeat): member
//   epoch 0 joins, -1 leaves, -2 leaves a static member temporarily;
//   subscriptions by topic names or (v1) RE2 regex; server-side assignors
//   uniform (default) and range (group.consumer.assignors); incremental
//   reconciliation: partitions are revoked before they are assigned to
//   another member, and a member's epoch moves on once it holds its
//   target.
// * Errors: FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, UNRELEASED_INSTANCE_ID,
//   GROUP_MAX_SIZE_REACHED (group.consumer.max.size), UNSUPPORTED_ASSIGNOR,
//   INVALID_REGULAR_EXPRESSION, INVALID_REQUEST for missing join fields;
//   GROUP_ID_NOT_FOUND for a classic group that still has members (Kafka
//   would convert it; an empty one is converted, offsets kept).
// * The answer always carries the member's current assignment.
//
// Version notes:
// * v0: the coordinator generates a member id when none is sent;
//   v1: member id required from the client, regex subscriptions.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(68, 0, 1, handleConsumerGroupHeartbeat) }

func handleConsumerGroupHeartbeat(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	if code := r.groupHeartbeatAuth(req.Group, req.SubscribedTopicNames); code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	hr := group.ConsumerHeartbeatRequest{
		Group:                req.Group,
		MemberID:             req.MemberID,
		InstanceID:           strOr(req.InstanceID),
		RackID:               strOr(req.RackID),
		MemberEpoch:          req.MemberEpoch,
		ClientID:             r.clientID,
		ClientHost:           r.clientHost(),
		RebalanceTimeout:     time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		SubscribedTopicNames: req.SubscribedTopicNames,
		SubscribedTopicRegex: req.SubscribedTopicRegex,
		ServerAssignor:       req.ServerAssignor,
		GenerateMemberID:     r.version == 0,
	}
	if req.RebalanceTimeoutMillis < 0 {
		hr.RebalanceTimeout = -1
	}
	if req.Topics != nil {
		hr.Owned = make(map[group.TopicID][]int32, len(req.Topics))
		for _, t := range req.Topics {
			hr.Owned[group.TopicID(t.TopicID)] = append(hr.Owned[group.TopicID(t.TopicID)], t.Partitions...)
		}
	}
	res := r.s.coord.groups.ConsumerHeartbeat(hr)
	resp.ErrorCode, resp.ErrorMessage = groupError(res.Err)
	if res.Err != nil {
		return resp, nil
	}
	id := res.MemberID
	resp.MemberID = &id
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval / time.Millisecond)
	if res.MemberEpoch > 0 {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
		for _, t := range sortedTopicIDs(res.Assignment) {
			at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			at.TopicID, at.Partitions = t, res.Assignment[t]
			a.Topics = append(a.Topics, at)
		}
		resp.Assignment = &a
	}
	return resp, nil
}

// sortedTopicIDs orders an assignment's topics for a stable answer.
func sortedTopicIDs(m map[group.TopicID][]int32) []group.TopicID {
	out := make([]group.TopicID, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && string(out[j][:]) < string(out[j-1][:]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
