package broker

// DeleteAcls: v1-3
//
// Behavior (Kafka's AclApis with StandardAuthorizer):
// * Without an authorizer every filter is answered SECURITY_DISABLED "No
//   Authorizer is configured.".
// * Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED otherwise).
// * Each filter is validated (INVALID_REQUEST with Kafka's message) and
//   matched as in DescribeAcls; the answer names, per filter, every
//   binding it removed. The union is removed in one raft command, whose
//   failure is answered for every filter.
//
// Version notes:
// * v0 (LITERAL patterns only) was removed in Kafka 4.0 (KIP-896):
//   ApiVersions advertises 1-3 as Kafka 4.4 does.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
	"sharq/raftmeta/acl"
)

func init() { regKey(31, 1, 3, handleDeleteAcls, coordinatorFree) }

func handleDeleteAcls(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
	}
	fail := func(code int16, msg string) (kmsg.Response, error) {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].MatchingACLs = code, nil
			if msg != "" {
				resp.Results[i].ErrorMessage = kmsg.StringPtr(msg)
			}
		}
		return resp, nil
	}
	switch {
	case r.s.authz == nil:
		return fail(kerr.SecurityDisabled.Code, noAuthorizer)
	case !r.authorizeCluster(opAlter):
		return fail(kerr.ClusterAuthorizationFailed.Code, "")
	}
	acls := r.s.meta.Image().ACLs
	var remove []raftmeta.ACL
	taken := map[raftmeta.ACL]bool{}
	for i, fr := range req.Filters {
		f := filterOf(r.version, fr.ResourceType, fr.ResourceName, fr.ResourcePatternType, fr.Principal, fr.Host, fr.Operation, fr.PermissionType)
		if err := acl.ValidateFilter(f); err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
			continue
		}
		for _, b := range acls {
			if !f.Matches(b) {
				continue
			}
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(b.ResourceType), b.ResourceName, kmsg.ACLResourcePatternType(b.PatternType)
			m.Principal, m.Host, m.Operation, m.PermissionType = b.Principal, b.Host, kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			if !taken[b] {
				taken[b] = true
				remove = append(remove, b)
			}
		}
	}
	if len(remove) > 0 {
		if err := r.s.meta.DeleteACLs(r.ctx, remove); err != nil {
			code, msg := metaErrorCode(err)
			return fail(code, msg)
		}
	}
	return resp, nil
}
