package broker

// CreateAcls: v1-3
//
// Behavior (Kafka's AclApis with StandardAuthorizer):
// * Without an authorizer every creation is answered SECURITY_DISABLED
//   "No Authorizer is configured.".
// * Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED otherwise).
// * Creations are validated one by one (INVALID_REQUEST with Kafka's
//   message); the valid ones are stored in raft metadata in one command,
//   whose failure is answered for each of them.
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

func init() { regKey(30, 1, 3, handleCreateAcls, coordinatorFree) }

func handleCreateAcls(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	fail := func(code int16, msg string) {
		for range req.Creations {
			res := kmsg.NewCreateACLsResponseResult()
			res.ErrorCode = code
			if msg != "" {
				res.ErrorMessage = kmsg.StringPtr(msg)
			}
			resp.Results = append(resp.Results, res)
		}
	}
	switch {
	case r.s.authz == nil:
		fail(kerr.SecurityDisabled.Code, noAuthorizer)
		return resp, nil
	case !r.authorizeCluster(opAlter):
		fail(kerr.ClusterAuthorizationFailed.Code, "")
		return resp, nil
	}
	var valid []raftmeta.ACL
	idx := make([]int, 0, len(req.Creations))
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	for i, c := range req.Creations {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
		b := raftmeta.ACL{ResourceType: int8(c.ResourceType), ResourceName: c.ResourceName, PatternType: int8(c.ResourcePatternType),
			Principal: c.Principal, Host: c.Host, Operation: int8(c.Operation), Permission: int8(c.PermissionType)}
		if r.version == 0 {
			b.PatternType = acl.PatternLiteral
		}
		if err := acl.ValidateBinding(b); err != nil {
			resp.Results[i].ErrorCode = kerr.InvalidRequest.Code
			resp.Results[i].ErrorMessage = kmsg.StringPtr(err.Error())
			continue
		}
		valid = append(valid, b)
		idx = append(idx, i)
	}
	if len(valid) > 0 {
		if err := r.s.meta.CreateACLs(r.ctx, valid); err != nil {
			code, msg := metaErrorCode(err)
			for _, i := range idx {
				resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, kmsg.StringPtr(msg)
			}
		}
	}
	return resp, nil
}
