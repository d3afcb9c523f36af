package acl

import (
	"testing"

	"sharq/raftmeta"
)

func b(rt int8, name string, pt int8, principal, host string, op, perm int8) raftmeta.ACL {
	return raftmeta.ACL{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: host, Operation: op, Permission: perm}
}

func TestAuthorize(t *testing.T) {
	acls := []raftmeta.ACL{
		b(ResourceTopic, "orders", PatternLiteral, "User:alice", "*", OpRead, PermAllow),
		b(ResourceTopic, "pay-", PatternPrefixed, "User:alice", "*", OpWrite, PermAllow),
		b(ResourceTopic, "pay-secret", PatternLiteral, "User:alice", "*", OpAll, PermDeny),
		b(ResourceTopic, "*", PatternLiteral, "User:*", "10.0.0.1", OpDescribe, PermAllow),
		b(ResourceTopic, "conf", PatternLiteral, "User:bob", "*", OpAlterConfigs, PermAllow),
		b(ResourceGroup, "g", PatternLiteral, "User:bob", "*", OpRead, PermAllow),
		b(ResourceGroup, "g", PatternLiteral, "User:bob", "10.0.0.9", OpRead, PermDeny),
		b(ResourceCluster, ClusterName, PatternLiteral, "User:ops", "*", OpAll, PermAllow),
	}
	a := New([]string{"User:admin"}, false)
	open := New(nil, true)
	tests := []struct {
		a         *Authorizer
		principal string
		host      string
		act       Action
		want      bool
	}{
		{a, "User:alice", "1.1.1.1", Action{ResourceTopic, "orders", OpRead}, true},
		{a, "User:alice", "1.1.1.1", Action{ResourceTopic, "orders", OpDescribe}, true}, // READ implies DESCRIBE
		{a, "User:alice", "1.1.1.1", Action{ResourceTopic, "orders", OpWrite}, false},
		{a, "User:bob", "1.1.1.1", Action{ResourceTopic, "orders", OpRead}, false},
		{a, "User:alice", "1.1.1.1", Action{ResourceTopic, "pay-in", OpWrite}, true},      // prefixed
		{a, "User:alice", "1.1.1.1", Action{ResourceTopic, "pay-secret", OpWrite}, false}, // deny before allow
		{a, "User:alice", "1.1.1.1", Action{ResourceTopic, "pay-secret", OpDescribe}, false},
		{a, "User:carol", "10.0.0.1", Action{ResourceTopic, "anything", OpDescribe}, true}, // wildcard name, principal, host
		{a, "User:carol", "10.0.0.2", Action{ResourceTopic, "anything", OpDescribe}, false},
		{a, "User:bob", "1.1.1.1", Action{ResourceTopic, "conf", OpDescribeConfigs}, true}, // ALTER_CONFIGS implies DESCRIBE_CONFIGS
		{a, "User:bob", "1.1.1.1", Action{ResourceTopic, "conf", OpDescribe}, false},
		{a, "User:bob", "1.1.1.1", Action{ResourceGroup, "g", OpRead}, true},
		{a, "User:bob", "10.0.0.9", Action{ResourceGroup, "g", OpRead}, false}, // host deny
		{a, "User:ops", "1.1.1.1", Action{ResourceCluster, ClusterName, OpAlter}, true},
		{a, "User:admin", "1.1.1.1", Action{ResourceCluster, ClusterName, OpAlter}, true}, // super user
		{a, "User:admin", "1.1.1.1", Action{ResourceTopic, "pay-secret", OpWrite}, true},
		{a, "User:alice", "1.1.1.1", Action{ResourceGroup, "none", OpRead}, false},   // no ACL: denied
		{open, "User:alice", "1.1.1.1", Action{ResourceGroup, "none", OpRead}, true}, // allow.everyone.if.no.acl.found
		{open, "User:alice", "1.1.1.1", Action{ResourceGroup, "g", OpRead}, false},   // ACLs exist for g
		{a, "User:alice", "1.1.1.1", Action{ResourceTransactionalID, "tx", OpWrite}, false},
	}
	for _, tc := range tests {
		if got := tc.a.Authorize(acls, tc.principal, tc.host, tc.act); got != tc.want {
			t.Errorf("%s@%s %+v: %v, want %v", tc.principal, tc.host, tc.act, got, tc.want)
		}
	}
	if !a.AuthorizeAny(acls, "User:alice", "1.1.1.1", ResourceTopic, OpWrite) || a.AuthorizeAny(acls, "User:bob", "1.1.1.1", ResourceTopic, OpWrite) {
		t.Error("AuthorizeAny")
	}
	if ops := a.AuthorizedOperations(acls, "User:alice", "1.1.1.1", ResourceTopic, "orders"); ops != 1<<OpRead|1<<OpDescribe {
		t.Errorf("authorized operations %b", ops)
	}
}

func TestFilter(t *testing.T) {
	lit := b(ResourceTopic, "orders", PatternLiteral, "User:alice", "*", OpRead, PermAllow)
	pre := b(ResourceTopic, "ord", PatternPrefixed, "User:alice", "*", OpRead, PermAllow)
	star := b(ResourceTopic, "*", PatternLiteral, "User:bob", "*", OpWrite, PermDeny)
	name := "orders"
	alice := "User:alice"
	tests := []struct {
		f    Filter
		want []bool // lit, pre, star
	}{
		{Filter{ResourceAny, nil, PatternAny, nil, nil, OpAny, PermAny}, []bool{true, true, true}},
		{Filter{ResourceTopic, &name, PatternLiteral, nil, nil, OpAny, PermAny}, []bool{true, false, false}},
		{Filter{ResourceTopic, &name, PatternMatch, nil, nil, OpAny, PermAny}, []bool{true, true, true}},
		{Filter{ResourceTopic, &name, PatternAny, nil, nil, OpAny, PermAny}, []bool{true, false, false}},
		{Filter{ResourceTopic, nil, PatternPrefixed, nil, nil, OpAny, PermAny}, []bool{false, true, false}},
		{Filter{ResourceAny, nil, PatternAny, &alice, nil, OpRead, PermAllow}, []bool{true, true, false}},
		{Filter{ResourceGroup, nil, PatternAny, nil, nil, OpAny, PermAny}, []bool{false, false, false}},
	}
	for _, tc := range tests {
		for i, acl := range []raftmeta.ACL{lit, pre, star} {
			if got := tc.f.Matches(acl); got != tc.want[i] {
				t.Errorf("filter %+v on %+v: %v", tc.f, acl, got)
			}
		}
	}
}

func TestValidateBinding(t *testing.T) {
	good := b(ResourceTopic, "t", PatternLiteral, "User:a", "*", OpRead, PermAllow)
	if err := ValidateBinding(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []raftmeta.ACL{
		b(ResourceAny, "t", PatternLiteral, "User:a", "*", OpRead, PermAllow),
		b(ResourceTopic, "t", PatternMatch, "User:a", "*", OpRead, PermAllow),
		b(ResourceTopic, "t", PatternLiteral, "User:a", "*", OpAny, PermAllow),
		b(ResourceTopic, "t", PatternLiteral, "User:a", "*", OpRead, PermAny),
		b(ResourceTopic, "", PatternLiteral, "User:a", "*", OpRead, PermAllow),
		b(ResourceCluster, "c", PatternLiteral, "User:a", "*", OpRead, PermAllow),
		b(ResourceTopic, "t", PatternLiteral, "alice", "*", OpRead, PermAllow),
	} {
		if ValidateBinding(bad) == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
