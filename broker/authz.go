package broker

// Authorization: the calls handlers make, Kafka's AuthHelper. With no
// authorizer configured (authorizer.class.name empty) everything is allowed,
// as in Kafka; with StandardAuthorizer the rules of raftmeta/acl decide over
// the ACL bindings in the metadata image.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/raftmeta"
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
	if r.c == nil {
		return ""
	}
	if r.c.auth.host == "" && r.c.nc != nil {
		r.c.auth.host = r.c.remoteHost()
	}
	return r.c.auth.host
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

// Without an authorizer a principal may do every operation Kafka's ACL
// table lists for the resource type (AclEntry.supportedOperations), and
// that is the bit set Kafka answers:
//   - topic: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
//   - group: READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
//   - cluster: CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE
//
// One table (acl.Operations) serves both cases, so the two cannot drift.
var (
	topicAllOperations   = allOperations(resTopic)
	groupAllOperations   = allOperations(resGroup)
	clusterAllOperations = allOperations(resCluster)
)

func allOperations(resourceType int8) int32 {
	var bits int32
	for _, op := range acl.Operations(resourceType) {
		bits |= 1 << op
	}
	return bits
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

// configAuthError is Kafka's config-resource authorization: a topic needs
// op on the topic, a group on the group, brokers, broker loggers and client
// metrics on the cluster. It returns the error code, or 0.
func (r *request) configAuthError(t kmsg.ConfigResourceType, name string, op int8) int16 {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		if !r.authorize(resTopic, name, op) {
			return kerr.TopicAuthorizationFailed.Code
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !r.authorize(resGroup, name, op) {
			return kerr.GroupAuthorizationFailed.Code
		}
	default:
		if !r.authorizeCluster(op) {
			return kerr.ClusterAuthorizationFailed.Code
		}
	}
	return 0
}

// groupHeartbeatAuth is the check of ConsumerGroupHeartbeat and
// ShareGroupHeartbeat: READ on the group, then DESCRIBE on every subscribed
// topic name (a client may not learn of topics it cannot describe).
func (r *request) groupHeartbeatAuth(group string, topics []string) int16 {
	if !r.authorize(resGroup, group, opRead) {
		return kerr.GroupAuthorizationFailed.Code
	}
	for _, t := range topics {
		if !r.authorize(resTopic, t, opDescribe) {
			return kerr.TopicAuthorizationFailed.Code
		}
	}
	return 0
}

const describedTopicsDenied = "The group has described topic(s) that the client is not authorized to describe."

// describedTopicsAllowed reports whether the principal may describe every
// topic in the members' assignments, as Kafka requires before it answers a
// ConsumerGroupDescribe.
func (r *request) describedTopicsAllowed(members []kmsg.ConsumerGroupDescribeResponseGroupMember) bool {
	if r.s.authz == nil {
		return true
	}
	for _, m := range members {
		for _, a := range []kmsg.Assignment{m.Assignment, m.TargetAssignment} {
			for _, tp := range a.TopicPartitions {
				if !r.authorize(resTopic, tp.Topic, opDescribe) {
					return false
				}
			}
		}
	}
	return true
}

// shareTopicReader answers, per topic id, whether the principal may READ
// the topic; unknown ids pass (the share code answers them). Without an
// authorizer it always says yes without looking anything up.
func (r *request) shareTopicReader() func(id [16]byte) bool {
	if r.s.authz == nil {
		return func([16]byte) bool { return true }
	}
	img := r.s.meta.Image()
	memo := map[[16]byte]bool{}
	return func(id [16]byte) bool {
		ok, seen := memo[id]
		if !seen {
			ok = true
			if t := img.TopicsByID[raftmeta.UUID(id)]; t != nil {
				ok = r.authorize(resTopic, t.Name, opRead)
			}
			memo[id] = ok
		}
		return ok
	}
}
