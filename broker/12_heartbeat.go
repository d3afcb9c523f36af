package broker

// Heartbeat: v0-4
//
// Behavior:
// * Keeps a classic member's session alive. REBALANCE_IN_PROGRESS while
//   the group prepares a rebalance (the member must rejoin),
//   ILLEGAL_GENERATION for a stale generation, UNKNOWN_MEMBER_ID for an
//   unknown member or group, FENCED_INSTANCE_ID for a replaced static
//   member.
//
// Version notes:
// * v3: instance id; v4: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(12, 0, 4, handleHeartbeat) }

func handleHeartbeat(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if !r.authorize(resGroup, req.Group, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	resp.ErrorCode, _ = groupError(r.s.coord.groups.Heartbeat(req.Group, req.MemberID, strOr(req.InstanceID), req.Generation))
	return resp, nil
}
