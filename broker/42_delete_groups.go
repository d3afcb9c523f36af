package broker

// DeleteGroups: v0-3
//
// Behavior:
// * Deletes empty groups with their committed offsets (classic, consumer
//   and groups of other directories such as share groups).
//   NON_EMPTY_GROUP while a group has members, GROUP_ID_NOT_FOUND for an
//   unknown group, INVALID_GROUP_ID for "".
//
// Version notes:
// * v2: flexible; v3: no change on the broker side (KIP-1043 client
//   handling).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(42, 0, 3, handleDeleteGroups) }

func handleDeleteGroups(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		handled := false
		if !r.authorize(resGroup, id, opDelete) {
			rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		for _, o := range r.s.coord.others {
			if o.Owns(id) {
				rg.ErrorCode = o.ErrorCode(o.DeleteGroup(id))
				handled = true
				break
			}
		}
		if !handled {
			rg.ErrorCode, _ = groupError(r.s.coord.groups.DeleteGroups([]string{id})[id])
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
