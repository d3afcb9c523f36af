package broker

// DescribeGroups: v0-6
//
// Behavior:
// * Classic groups: state, protocol type, selected protocol and members
//   (metadata once a protocol is selected, assignment when Stable). A
//   group that only holds committed offsets is Empty.
// * An unknown group, or one of another type (consumer, share): v6 answers
//   GROUP_ID_NOT_FOUND with "Group g not found." / "Group g is not a
//   classic group."; older versions a Dead group without error, as Kafka.
//
// Version notes:
// * v1-2: throttle; v3: authorized operations; v4: instance ids;
//   v5: flexible; v6: error message and the GROUP_ID_NOT_FOUND above.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(15, 0, 6, handleDescribeGroups) }

func handleDescribeGroups(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group = id
		g.AuthorizedOperations = authorizedOperationsNotRequested
		if !r.authorize(resGroup, id, opDescribe) {
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		// As Kafka: a group answered with an error gets no operations.
		fillOps := func() {
			if req.IncludeAuthorizedOperations && g.ErrorCode == 0 {
				g.AuthorizedOperations = r.authorizedOperations(resGroup, id, groupAllOperations)
			}
		}
		d, err := r.s.coord.groups.DescribeClassic(id)
		if err != nil {
			g.State = "Dead"
			for _, o := range r.s.coord.others {
				if o.Owns(id) {
					msg := fmt.Sprintf("Group %s is not a classic group.", id)
					err = fmt.Errorf("%s", msg)
					if r.version >= 6 {
						g.ErrorCode, g.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
					}
				}
			}
			if r.version >= 6 && g.ErrorCode == 0 {
				g.ErrorCode, g.ErrorMessage = groupError(err)
			}
			fillOps()
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g.State, g.ProtocolType, g.Protocol = d.State, d.ProtocolType, d.Protocol
		for _, m := range d.Members {
			gm := kmsg.NewDescribeGroupsResponseGroupMember()
			gm.MemberID, gm.ClientID, gm.ClientHost = m.MemberID, m.ClientID, m.ClientHost
			if m.InstanceID != "" {
				id := m.InstanceID
				gm.InstanceID = &id
			}
			gm.ProtocolMetadata, gm.MemberAssignment = m.Metadata, m.Assignment
			if gm.ProtocolMetadata == nil {
				gm.ProtocolMetadata = []byte{}
			}
			if gm.MemberAssignment == nil {
				gm.MemberAssignment = []byte{}
			}
			g.Members = append(g.Members, gm)
		}
		fillOps()
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}
