// Package acl is the authorizer: Kafka's StandardAuthorizer rules over the
// ACL bindings held in raft metadata. It is pure: Authorize reads a binding
// list and a request's principal, host, resource and operation, and decides.
//
// The rules (StandardAuthorizerData):
//   - super.users are allowed everything;
//   - the bindings that apply to a resource are the LITERAL ones naming it,
//     the LITERAL wildcard "*", and the PREFIXED ones whose prefix starts
//     the name;
//   - among those whose principal (exact or User:*) and host (exact or *)
//     match, a DENY for the operation (or ALL) wins over any ALLOW;
//   - an ALLOW matches the operation itself, ALL, or an operation implying
//     it: READ, WRITE, DELETE and ALTER imply DESCRIBE, ALTER_CONFIGS
//     implies DESCRIBE_CONFIGS;
//   - with no binding at all for the resource,
//     allow.everyone.if.no.acl.found decides; otherwise it is denied.
package acl

import (
	"fmt"
	"strings"

	"sharq/raftmeta"
)

// Resource types (Kafka's ResourceType).
const (
	ResourceUnknown         int8 = 0
	ResourceAny             int8 = 1
	ResourceTopic           int8 = 2
	ResourceGroup           int8 = 3
	ResourceCluster         int8 = 4
	ResourceTransactionalID int8 = 5
	ResourceDelegationToken int8 = 6
	ResourceUser            int8 = 7
)

// Pattern types (Kafka's PatternType).
const (
	PatternUnknown  int8 = 0
	PatternAny      int8 = 1
	PatternMatch    int8 = 2
	PatternLiteral  int8 = 3
	PatternPrefixed int8 = 4
)

// Operations (Kafka's AclOperation).
const (
	OpUnknown         int8 = 0
	OpAny             int8 = 1
	OpAll             int8 = 2
	OpRead            int8 = 3
	OpWrite           int8 = 4
	OpCreate          int8 = 5
	OpDelete          int8 = 6
	OpAlter           int8 = 7
	OpDescribe        int8 = 8
	OpClusterAction   int8 = 9
	OpDescribeConfigs int8 = 10
	OpAlterConfigs    int8 = 11
	OpIdempotentWrite int8 = 12
	OpCreateTokens    int8 = 13
	OpDescribeTokens  int8 = 14
	OpTwoPhaseCommit  int8 = 15
)

// Permissions (Kafka's AclPermissionType).
const (
	PermUnknown int8 = 0
	PermAny     int8 = 1
	PermDeny    int8 = 2
	PermAllow   int8 = 3
)

// Wildcard is the LITERAL resource name and the host matching all.
const Wildcard = "*"

// ClusterName is the one name of the CLUSTER resource.
const ClusterName = "kafka-cluster"

// Authorizer decides with a fixed configuration over a binding list.
type Authorizer struct {
	SuperUsers           map[string]bool
	AllowEveryoneIfNoACL bool
}

// New builds an authorizer from super.users and allow.everyone.if.no.acl.found.
func New(superUsers []string, allowEveryone bool) *Authorizer {
	a := &Authorizer{SuperUsers: map[string]bool{}, AllowEveryoneIfNoACL: allowEveryone}
	for _, u := range superUsers {
		a.SuperUsers[u] = true
	}
	return a
}

// Action is one thing a request wants to do.
type Action struct {
	ResourceType int8
	Name         string
	Operation    int8
}

// Authorize decides one action for a principal ("User:alice") connecting
// from host (an IP address).
func (a *Authorizer) Authorize(acls []raftmeta.ACL, principal, host string, act Action) bool {
	if a.SuperUsers[principal] {
		return true
	}
	found, allowed := false, false
	for i := range acls {
		b := &acls[i]
		if b.ResourceType != act.ResourceType || !resourceMatches(b, act.Name) {
			continue
		}
		found = true
		if (b.Principal != principal && b.Principal != "User:*") || (b.Host != host && b.Host != Wildcard) {
			continue
		}
		switch b.Permission {
		case PermDeny:
			if b.Operation == OpAll || b.Operation == act.Operation {
				return false
			}
		case PermAllow:
			if !allowed && implies(b.Operation, act.Operation) {
				allowed = true
			}
		}
	}
	if !found {
		return a.AllowEveryoneIfNoACL
	}
	return allowed
}

// AuthorizeAny reports whether the principal may do op on at least one
// resource of the type: Kafka's authorizeByResourceType, used where a
// request names no resource yet (InitProducerId for an idempotent producer
// that may write some topic, CreateTopics auto-creation checks).
func (a *Authorizer) AuthorizeAny(acls []raftmeta.ACL, principal, host string, resourceType, op int8) bool {
	if a.SuperUsers[principal] {
		return true
	}
	// Any ALLOW for the principal and operation on a resource of the type
	// that is not overridden by a DENY on the same or a wider pattern.
	anyACL := false
	for i := range acls {
		b := &acls[i]
		if b.ResourceType != resourceType {
			continue
		}
		anyACL = true
		if b.Permission != PermAllow || !implies(b.Operation, op) ||
			(b.Principal != principal && b.Principal != "User:*") || (b.Host != host && b.Host != Wildcard) {
			continue
		}
		name := b.ResourceName
		if b.PatternType == PatternLiteral && name == Wildcard || b.PatternType == PatternPrefixed {
			// A wildcard or prefix ALLOW holds unless a DENY covers it whole.
			if !a.deniedPattern(acls, principal, host, resourceType, op, b) {
				return true
			}
			continue
		}
		if a.Authorize(acls, principal, host, Action{resourceType, name, op}) {
			return true
		}
	}
	return !anyACL && a.AllowEveryoneIfNoACL
}

func (a *Authorizer) deniedPattern(acls []raftmeta.ACL, principal, host string, rt, op int8, allow *raftmeta.ACL) bool {
	for i := range acls {
		b := &acls[i]
		if b.ResourceType != rt || b.Permission != PermDeny || (b.Operation != OpAll && b.Operation != op) ||
			(b.Principal != principal && b.Principal != "User:*") || (b.Host != host && b.Host != Wildcard) {
			continue
		}
		if b.PatternType == PatternLiteral && b.ResourceName == Wildcard {
			return true
		}
		if b.PatternType == PatternPrefixed && allow.PatternType == PatternPrefixed && strings.HasPrefix(allow.ResourceName, b.ResourceName) {
			return true
		}
	}
	return false
}

func resourceMatches(b *raftmeta.ACL, name string) bool {
	switch b.PatternType {
	case PatternLiteral:
		return b.ResourceName == name || b.ResourceName == Wildcard
	case PatternPrefixed:
		return strings.HasPrefix(name, b.ResourceName)
	}
	return false
}

// implies reports whether an ALLOW binding of operation granted covers a
// request for op.
func implies(granted, op int8) bool {
	if granted == OpAll || granted == op {
		return true
	}
	switch op {
	case OpDescribe:
		return granted == OpRead || granted == OpWrite || granted == OpDelete || granted == OpAlter
	case OpDescribeConfigs:
		return granted == OpAlterConfigs
	}
	return false
}

// Filter selects bindings, as DescribeAcls and DeleteAcls do; nil strings
// match any value.
type Filter struct {
	ResourceType int8
	Name         *string
	PatternType  int8
	Principal    *string
	Host         *string
	Operation    int8
	Permission   int8
}

// Matches reports whether the filter selects the binding. PatternType
// MATCH selects the bindings that would apply to the named resource
// (LITERAL equal or "*", PREFIXED prefixes of the name).
func (f Filter) Matches(b raftmeta.ACL) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != b.ResourceType {
		return false
	}
	switch f.PatternType {
	case PatternAny:
		if f.Name != nil && *f.Name != b.ResourceName {
			return false
		}
	case PatternMatch:
		if f.Name != nil && !resourceMatches(&b, *f.Name) {
			return false
		}
	default:
		if f.PatternType != b.PatternType || (f.Name != nil && *f.Name != b.ResourceName) {
			return false
		}
	}
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != b.Operation {
		return false
	}
	return f.Permission == PermAny || f.Permission == b.Permission
}

// ValidateFilter rejects filters Kafka refuses (AclBindingFilter: UNKNOWN
// values anywhere).
func ValidateFilter(f Filter) error {
	if f.ResourceType == ResourceUnknown || f.ResourceType > ResourceUser || f.ResourceType < 0 {
		return fmt.Errorf("Invalid resource type %d", f.ResourceType)
	}
	if f.PatternType == PatternUnknown || f.PatternType > PatternPrefixed || f.PatternType < 0 {
		return fmt.Errorf("Invalid pattern type %d", f.PatternType)
	}
	if f.Operation == OpUnknown || f.Operation > OpTwoPhaseCommit || f.Operation < 0 {
		return fmt.Errorf("Invalid operation %d", f.Operation)
	}
	if f.Permission == PermUnknown || f.Permission > PermAllow || f.Permission < 0 {
		return fmt.Errorf("Invalid permission type %d", f.Permission)
	}
	return nil
}

// ValidateBinding checks a new binding as Kafka's AclControlManager and
// AclApis do; the message is Kafka's.
func ValidateBinding(b raftmeta.ACL) error {
	switch {
	case b.ResourceType <= ResourceAny || b.ResourceType > ResourceUser:
		return fmt.Errorf("Invalid resourceType %s", ResourceTypeName(b.ResourceType))
	case b.PatternType != PatternLiteral && b.PatternType != PatternPrefixed:
		return fmt.Errorf("Invalid patternType %s", PatternTypeName(b.PatternType))
	case b.Operation <= OpAny || b.Operation > OpTwoPhaseCommit:
		return fmt.Errorf("Invalid operation %s", OperationName(b.Operation))
	case b.Permission != PermDeny && b.Permission != PermAllow:
		return fmt.Errorf("Invalid permissionType %s", PermissionName(b.Permission))
	case b.ResourceType == ResourceCluster && b.ResourceName != ClusterName:
		return fmt.Errorf("The only valid name for the CLUSTER resource is %s", ClusterName)
	case b.ResourceName == "":
		return fmt.Errorf("Invalid empty resource name")
	}
	typ, name, ok := strings.Cut(b.Principal, ":")
	if !ok || typ == "" || name == "" {
		return fmt.Errorf("Invalid principal %q: expected a string in format principalType:principalName", b.Principal)
	}
	if b.Host == "" {
		return fmt.Errorf("Invalid host: must not be empty")
	}
	return nil
}

// ResourceTypeName is Kafka's enum name.
func ResourceTypeName(t int8) string {
	return name(t, []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"})
}

// PatternTypeName is Kafka's enum name.
func PatternTypeName(t int8) string {
	return name(t, []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"})
}

// OperationName is Kafka's enum name.
func OperationName(t int8) string {
	return name(t, []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"})
}

// PermissionName is Kafka's enum name.
func PermissionName(t int8) string { return name(t, []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}) }

func name(t int8, names []string) string {
	if t >= 0 && int(t) < len(names) {
		return names[t]
	}
	return "UNKNOWN"
}

// Operations lists the operations that apply to a resource type, in
// Kafka's order, for the authorized-operations bit sets.
func Operations(resourceType int8) []int8 {
	switch resourceType {
	case ResourceTopic:
		return []int8{OpRead, OpWrite, OpCreate, OpDelete, OpAlter, OpDescribe, OpDescribeConfigs, OpAlterConfigs}
	case ResourceGroup:
		return []int8{OpRead, OpDelete, OpDescribe, OpDescribeConfigs, OpAlterConfigs}
	case ResourceCluster:
		return []int8{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
	case ResourceTransactionalID:
		return []int8{OpDescribe, OpWrite, OpTwoPhaseCommit}
	}
	return nil
}

// AuthorizedOperations is the bit set of the operations on a resource the
// principal may do (bit n = operation n), as Kafka fills
// *AuthorizedOperations fields.
func (a *Authorizer) AuthorizedOperations(acls []raftmeta.ACL, principal, host string, resourceType int8, name string) int32 {
	var bits int32
	for _, op := range Operations(resourceType) {
		if a.Authorize(acls, principal, host, Action{resourceType, name, op}) {
			bits |= 1 << op
		}
	}
	return bits
}
