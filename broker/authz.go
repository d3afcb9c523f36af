package broker

// Authorization: the calls handlers make, Kafka's AuthHelper. With no
// authorizer configured (authorizer.class.name empty) everything is allowed,
// as in Kafka; with StandardAuthorizer the rules of raftmeta/acl decide over
// the ACL bindings in the metadata image.

import (
	"sharq/config"
	"sharq/raftmeta/acl"
)

// Operation and resource shorthands for handlers.
const (
	opRead            = acl.OpRead
	opWrite           = acl.OpWrite
	opCreate          = acl.OpCreate
	opDelete          = acl.OpDelete
	opAlter           = acl.OpAlter
	opDescribe        = acl.OpDescribe
	opClusterAction   = acl.OpClusterAction
	opDescribeConfigs = acl.OpDescribeConfigs
	opAlterConfigs    = acl.OpAlterConfigs
	opIdempotentWrite = acl.OpIdempotentWrite
	opTwoPhaseCommit  = acl.OpTwoPhaseCommit

	resTopic           = acl.ResourceTopic
	resGroup           = acl.ResourceGroup
	resCluster         = acl.ResourceCluster
	resTransactionalID = acl.ResourceTransactionalID
)

// Principal is the connection's authenticated principal, e.g. User:alice.
func (r *request) Principal() string {
	if r.c == nil || r.c.auth.principal == "" {
		return "User:ANONYMOUS"
	}
	return r.c.auth.principal
}

func (r *request) host() string {
	if r.c == nil || r.c.nc == nil {
		return ""
	}
	return r.c.remoteHost()
}

// authorize reports whether the request's principal may do op on the
// named resource. Handlers (including transactional ids: resTransactionalID)
// call it with Kafka's resource and operation for the API.
func (r *request) authorize(resourceType int8, name string, op int8) bool {
	a := r.s.authz
	if a == nil {
		return true
	}
	return a.Authorize(r.s.meta.Image().ACLs, r.Principal(), r.host(), acl.Action{ResourceType: resourceType, Name: name, Operation: op})
}

// authorizeCluster checks op on the cluster resource.
func (r *request) authorizeCluster(op int8) bool {
	return r.authorize(resCluster, acl.ClusterName, op)
}

// authorizeAnyOfType reports whether the principal may do op on some
// resource of the type (Kafka's authorizeByResourceType).
func (r *request) authorizeAnyOfType(resourceType, op int8) bool {
	a := r.s.authz
	if a == nil {
		return true
	}
	return a.AuthorizeAny(r.s.meta.Image().ACLs, r.Principal(), r.host(), resourceType, op)
}

// authorizedOperations is the *AuthorizedOperations bit set of a resource;
// all is the set without an authorizer.
func (r *request) authorizedOperations(resourceType int8, name string, all int32) int32 {
	a := r.s.authz
	if a == nil {
		return all
	}
	return a.AuthorizedOperations(r.s.meta.Image().ACLs, r.Principal(), r.host(), resourceType, name)
}

func newAuthorizer(cfg *config.Config) *acl.Authorizer {
	ac := cfg.AuthorizerConfig()
	if !ac.Enabled {
		return nil
	}
	return acl.New(ac.SuperUsers, ac.AllowEveryoneIfNoACL)
}
