package broker

// DescribeAcls (29), CreateAcls (30), DeleteAcls (31): v0-3
//
// Behavior (Kafka's AclApis with StandardAuthorizer):
// * Without an authorizer every answer is SECURITY_DISABLED "No
//   Authorizer is configured." (per creation, per filter, or top-level).
// * Describe needs DESCRIBE on the cluster, Create and Delete need ALTER
//   (CLUSTER_AUTHORIZATION_FAILED otherwise).
// * Creations are validated one by one (INVALID_REQUEST with Kafka's
//   message); the valid ones are stored in raft metadata in one command.
// * Filters: ANY matches every value; pattern type MATCH selects the
//   bindings that apply to the named resource (literal, "*" and prefixes).
// * Delete answers, per filter, every binding it removed.
// * v0 knows only LITERAL patterns.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
	"sharq/raftmeta/acl"
)

const noAuthorizer = "No Authorizer is configured."

// Version 0 of the three was removed in Kafka 4.0 (KIP-896); ApiVersions
// advertises 1 to 3 as Kafka 4.4 does.
func init() {
	regKey(29, 1, 3, handleDescribeAcls)
	regKey(30, 1, 3, handleCreateAcls)
	regKey(31, 1, 3, handleDeleteAcls)
}

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

func filterOf(version int16, rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) acl.Filter {
	f := acl.Filter{ResourceType: int8(rt), Name: name, PatternType: int8(pt), Principal: principal, Host: host, Operation: int8(op), Permission: int8(perm)}
	if version == 0 {
		f.PatternType = acl.PatternLiteral
	}
	return f
}

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
