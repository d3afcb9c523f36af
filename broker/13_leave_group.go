package broker

// LeaveGroup: v0-5
//
// Behavior:
// * Removes classic members and starts a rebalance. v3+ leaves a batch,
//   static members by instance id (FENCED_INSTANCE_ID if the member id
//   does not match, UNKNOWN_MEMBER_ID per unknown member). An unknown
//   group: UNKNOWN_MEMBER_ID at the top level.
//
// Version notes:
// * v3: batch of members with instance ids (KIP-345); v4: flexible;
//   v5: reason.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(13, 0, 5, handleLeaveGroup) }

func handleLeaveGroup(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if !r.authorize(resGroup, req.Group, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	var members []group.LeaveMember
	if r.version < 3 {
		members = []group.LeaveMember{{MemberID: req.MemberID}}
	} else {
		for _, m := range req.Members {
			members = append(members, group.LeaveMember{MemberID: m.MemberID, InstanceID: strOr(m.InstanceID)})
		}
	}
	errs, err := r.s.coord.groups.LeaveGroup(req.Group, members)
	if err != nil {
		resp.ErrorCode, _ = groupError(err)
		return resp, nil
	}
	if r.version < 3 {
		resp.ErrorCode, _ = groupError(errs[0])
		return resp, nil
	}
	for i, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID = m.MemberID, m.InstanceID
		rm.ErrorCode, _ = groupError(errs[i])
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}
