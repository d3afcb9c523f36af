package broker

// DescribeAcls: v1-3
//
// Behavior (Kafka's AclApis with StandardAuthorizer):
// * Without an authorizer the answer is SECURITY_DISABLED "No Authorizer
//   is configured.".
// * Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED
//   otherwise).
// * The filter (INVALID_REQUEST with Kafka's message if invalid): ANY
//   matches every value; pattern type MATCH selects the bindings that apply
//   to the named resource (literal, "*" and prefixes). Matches are
//   answered in the metadata image's order, consecutive bindings of one
//   resource under one resource entry.
//
// Version notes:
// * v0 (LITERAL patterns only) was removed in Kafka 4.0 (KIP-896):
//   ApiVersions advertises 1-3 as Kafka 4.4 does.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta/acl"
)

func init() { regKey(29, 1, 3, handleDescribeAcls, coordinatorFree) }

func handleDescribeAcls(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	f := filterOf(r.version, req.ResourceType, req.ResourceName, req.ResourcePatternType, req.Principal, req.Host, req.Operation, req.PermissionType)
	switch {
	case r.s.authz == nil:
		resp.ErrorCode, resp.ErrorMessage = kerr.SecurityDisabled.Code, kmsg.StringPtr(noAuthorizer)
		return resp, nil
	case !r.authorizeCluster(opDescribe):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	if err := acl.ValidateFilter(f); err != nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
		return resp, nil
	}
	for _, b := range r.s.meta.Image().ACLs {
		if !f.Matches(b) {
			continue
		}
		n := len(resp.Resources)
		if n == 0 || int8(resp.Resources[n-1].ResourceType) != b.ResourceType || resp.Resources[n-1].ResourceName != b.ResourceName ||
			int8(resp.Resources[n-1].ResourcePatternType) != b.PatternType {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName, res.ResourcePatternType = kmsg.ACLResourceType(b.ResourceType), b.ResourceName, kmsg.ACLResourcePatternType(b.PatternType)
			resp.Resources = append(resp.Resources, res)
			n++
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = b.Principal, b.Host, kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, a)
	}
	return resp, nil
}
