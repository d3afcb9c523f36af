package broker

// What the ACL APIs (29_describe_acls.go, 30_create_acls.go,
// 31_delete_acls.go) share: the answer without an authorizer and the
// filter of a describe or delete.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta/acl"
)

const noAuthorizer = "No Authorizer is configured."

// filterOf is a DescribeAcls or DeleteAcls filter (version 0 knew only
// LITERAL patterns).
func filterOf(version int16, rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) acl.Filter {
	f := acl.Filter{ResourceType: int8(rt), Name: name, PatternType: int8(pt), Principal: principal, Host: host, Operation: int8(op), Permission: int8(perm)}
	if version == 0 {
		f.PatternType = acl.PatternLiteral
	}
	return f
}
