package broker

// JoinGroup: v0-9
//
// Behavior:
// * Classic group membership with Kafka's states and timers
//   (group.Coordinator.JoinGroup): the request waits until the rebalance
//   completes (all known members rejoined, or the largest rebalance
//   timeout passed; a new group first waits
//   group.initial.rebalance.delay.ms). The leader gets the members.
// * Session timeout outside group.min/max.session.timeout.ms:
//   INVALID_SESSION_TIMEOUT; no protocol in common: INCONSISTENT_GROUP_PROTOCOL;
//   group.max.size: GROUP_MAX_SIZE_REACHED.
// * Static members (group.instance.id, KIP-345) that come back to a stable
//   group get a new member id and their old assignment, no rebalance.
// * A non-empty KIP-848 consumer group refuses classic members with
//   INCONSISTENT_GROUP_PROTOCOL (Kafka converts it; not done yet); an
//   empty one is replaced by a classic group, offsets kept.
//
// Version notes:
// * v1: rebalance timeout (v0: the session timeout is used); v4: member id
//   required on first join (KIP-394, MEMBER_ID_REQUIRED); v5: instance id;
//   v7: protocol type in the answer; v8: reason; v9: skip assignment.

import (
	"bytes"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(11, 0, 9, handleJoinGroup, waitsInHandler) }

func handleJoinGroup(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.JoinGroupRequest)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	if !r.authorize(resGroup, req.Group, opRead) {
		resp.ErrorCode, resp.Generation, resp.MemberID = kerr.GroupAuthorizationFailed.Code, -1, req.MemberID
		return resp, nil
	}
	jr := group.JoinRequest{
		Group:                  req.Group,
		MemberID:               req.MemberID,
		InstanceID:             strOr(req.InstanceID),
		ClientID:               r.clientID,
		ClientHost:             r.clientHost(),
		ProtocolType:           req.ProtocolType,
		SessionTimeout:         time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		RebalanceTimeout:       time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		RequireKnownMemberID:   r.version >= 4,
		SupportsSkipAssignment: r.version >= 9,
	}
	if r.version == 0 {
		jr.RebalanceTimeout = jr.SessionTimeout
	}
	for _, p := range req.Protocols {
		// The group keeps the metadata (it is the leader's input and
		// what DescribeGroups answers): a copy, not the frame's bytes
		// (request memory: conn.go).
		jr.Protocols = append(jr.Protocols, group.Protocol{Name: p.Name, Metadata: bytes.Clone(p.Metadata)})
	}
	if req.ProtocolType == "consumer" && len(req.Protocols) > 0 {
		jr.SubscribedTopics = consumerSubscribedTopics(req.Protocols[0].Metadata)
	}
	res := r.s.coord.groups.JoinGroup(r.ctx, jr)
	resp.ErrorCode, _ = groupError(res.Err)
	resp.Generation = res.Generation
	resp.MemberID = res.MemberID
	resp.LeaderID = res.LeaderID
	resp.SkipAssignment = res.SkipAssignment
	if res.Err == nil {
		pt, pn := res.ProtocolType, res.ProtocolName
		resp.ProtocolType, resp.Protocol = &pt, &pn
	} else if r.version < 7 {
		// Before v7 the protocol name is not nullable.
		empty := ""
		resp.Protocol = &empty
	}
	for _, m := range res.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID = m.MemberID
		if m.InstanceID != "" {
			id := m.InstanceID
			rm.InstanceID = &id
		}
		rm.ProtocolMetadata = m.Metadata
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}
