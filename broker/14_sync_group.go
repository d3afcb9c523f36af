package broker

// SyncGroup: v0-5
//
// Behavior:
// * The leader's assignment goes to every member; a follower that syncs
//   first waits for it. REBALANCE_IN_PROGRESS while a rebalance is being
//   prepared, ILLEGAL_GENERATION for a stale generation, UNKNOWN_MEMBER_ID,
//   FENCED_INSTANCE_ID, and INCONSISTENT_GROUP_PROTOCOL when v5's protocol
//   type or name differ from the group's.
//
// Version notes:
// * v3: instance id; v4: flexible; v5: protocol type and name.

import (
	"bytes"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(14, 0, 5, handleSyncGroup, waitsInHandler) }

func handleSyncGroup(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SyncGroupRequest)
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	if !r.authorize(resGroup, req.Group, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	sr := group.SyncRequest{
		Group:        req.Group,
		MemberID:     req.MemberID,
		InstanceID:   strOr(req.InstanceID),
		Generation:   req.Generation,
		ProtocolType: strOr(req.ProtocolType),
		ProtocolName: strOr(req.Protocol),
	}
	if len(req.GroupAssignment) > 0 {
		sr.Assignments = make(map[string][]byte, len(req.GroupAssignment))
		for _, a := range req.GroupAssignment {
			// Kept by the group until the next rebalance, answered to
			// members that sync later and to DescribeGroups: a copy
			// (request memory: conn.go).
			sr.Assignments[a.MemberID] = bytes.Clone(a.MemberAssignment)
		}
	}
	res := r.s.coord.groups.SyncGroup(r.ctx, sr)
	resp.ErrorCode, _ = groupError(res.Err)
	if res.Err == nil {
		pt, pn := res.ProtocolType, res.ProtocolName
		resp.ProtocolType, resp.Protocol = &pt, &pn
		resp.MemberAssignment = res.Assignment
		if resp.MemberAssignment == nil {
			resp.MemberAssignment = []byte{}
		}
	}
	return resp, nil
}
