package broker_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestGroupErrorPaths drives the coordinator with raw requests and checks
// the error code a client acts on for each misuse.
func TestGroupErrorPaths(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.GroupInitialRebalanceDelayMs = 0
		c.GroupMaxSize = 1
		c.GroupConsumerMaxSize = 1
	}))
	cl := newClient(t, b)
	ctx := testCtx(t)
	mustCreateTopic(t, newAdmin(t, b), "errs", 2, nil)
	tds, err := newAdmin(t, b).ListTopics(ctx, "errs")
	if err != nil {
		t.Fatal(err)
	}
	errsID = tds["errs"].ID
	req := func(r kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := cl.Request(ctx, r)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		return resp
	}
	want := func(what string, got int16, w *kerr.Error) {
		t.Helper()
		if got != w.Code {
			t.Errorf("%s: error %v, want %v", what, kerr.ErrorForCode(got), w)
		}
	}
	join := func(member, instance string) *kmsg.JoinGroupResponse {
		j := kmsg.NewPtrJoinGroupRequest()
		j.Group, j.MemberID, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis, j.ProtocolType = "ge", member, 10000, 10000, "consumer"
		if instance != "" {
			j.InstanceID = &instance
		}
		j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0}}}
		return req(j).(*kmsg.JoinGroupResponse)
	}
	// KIP-394: the first join gets an id to retry with.
	r := join("", "")
	want("first join", r.ErrorCode, kerr.MemberIDRequired)
	r = join(r.MemberID, "")
	want("second join", r.ErrorCode, nil0)
	leader, gen := r.MemberID, r.Generation
	want("unknown member join", join("nobody", "").ErrorCode, kerr.UnknownMemberID)
	want("group full", join("", "").ErrorCode, kerr.GroupMaxSizeReached)

	hb := func(member string, gen int32) int16 {
		h := kmsg.NewPtrHeartbeatRequest()
		h.Group, h.MemberID, h.Generation = "ge", member, gen
		return req(h).(*kmsg.HeartbeatResponse).ErrorCode
	}
	sync := func(member string, gen int32) int16 {
		s := kmsg.NewPtrSyncGroupRequest()
		s.Group, s.MemberID, s.Generation = "ge", member, gen
		s.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: member, MemberAssignment: []byte{0, 0}}}
		return req(s).(*kmsg.SyncGroupResponse).ErrorCode
	}
	want("sync wrong generation", sync(leader, gen+1), kerr.IllegalGeneration)
	want("sync unknown member", sync("nobody", gen), kerr.UnknownMemberID)
	want("commit while completing", commit(t, cl, "ge", leader, gen), kerr.RebalanceInProgress)
	want("sync", sync(leader, gen), nil0)
	want("heartbeat", hb(leader, gen), nil0)
	want("heartbeat wrong generation", hb(leader, gen-1), kerr.IllegalGeneration)
	want("heartbeat unknown member", hb("nobody", gen), kerr.UnknownMemberID)
	want("commit wrong generation", commit(t, cl, "ge", leader, gen+5), kerr.IllegalGeneration)
	want("commit", commit(t, cl, "ge", leader, gen), nil0)
	want("admin commit to a live group", commit(t, cl, "ge", "", -1), kerr.UnknownMemberID)

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"ge"}
	want("delete live group", req(del).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, kerr.NonEmptyGroup)

	// A KIP-848 heartbeat against the live classic group.
	ch := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	ch.Group, ch.MemberID, ch.RebalanceTimeoutMillis, ch.SubscribedTopicNames = "ge", "m848", 10000, []string{"errs"}
	want("848 join of a classic group", req(ch).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode, kerr.GroupIDNotFound)

	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Group = "ge"
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: leader}, {MemberID: "nobody"}}
	lr := req(lv).(*kmsg.LeaveGroupResponse)
	want("leave", lr.Members[0].ErrorCode, nil0)
	want("leave unknown", lr.Members[1].ErrorCode, kerr.UnknownMemberID)
	want("heartbeat after leave", hb(leader, gen), kerr.UnknownMemberID)

	// Static members: a replaced instance is fenced.
	s1 := join("", "inst")
	want("static join", s1.ErrorCode, nil0)
	s2 := join("", "inst")
	want("static rejoin", s2.ErrorCode, nil0)
	h := kmsg.NewPtrHeartbeatRequest()
	inst := "inst"
	h.Group, h.MemberID, h.Generation, h.InstanceID = "ge", s1.MemberID, s1.Generation, &inst
	want("fenced static member", req(h).(*kmsg.HeartbeatResponse).ErrorCode, kerr.FencedInstanceID)

	// KIP-848 consumer group errors.
	hb848 := func(member string, epoch int32, instance string) *kmsg.ConsumerGroupHeartbeatResponse {
		c := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		c.Group, c.MemberID, c.MemberEpoch = "g848", member, epoch
		if epoch == 0 {
			c.RebalanceTimeoutMillis, c.SubscribedTopicNames = 10000, []string{"errs"}
		}
		if instance != "" {
			c.InstanceID = &instance
		}
		return req(c).(*kmsg.ConsumerGroupHeartbeatResponse)
	}
	j := hb848("a", 0, "i1")
	want("848 join", j.ErrorCode, nil0)
	// A new group's first member gets epoch 2, as on Kafka 4.4.
	if j.MemberEpoch != 2 || j.Assignment == nil || len(j.Assignment.Topics) != 1 || len(j.Assignment.Topics[0].Partitions) != 2 {
		t.Fatalf("848 join: epoch %d assignment %+v, want epoch 2 with both partitions", j.MemberEpoch, j.Assignment)
	}
	want("848 future epoch", hb848("a", 7, "").ErrorCode, kerr.FencedMemberEpoch)
	want("848 unknown member", hb848("zz", 1, "").ErrorCode, kerr.UnknownMemberID)
	want("848 instance in use", hb848("b", 0, "i1").ErrorCode, kerr.UnreleasedInstanceID)
	want("848 group full", hb848("c", 0, "").ErrorCode, kerr.GroupMaxSizeReached)
	want("848 stale commit", commit(t, cl, "g848", "a", 0), kerr.StaleMemberEpoch)
	want("848 commit", commit(t, cl, "g848", "a", j.MemberEpoch), nil0)
	bad := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	re := "("
	bad.Group, bad.MemberID, bad.RebalanceTimeoutMillis, bad.SubscribedTopicRegex = "g848r", "x", 1000, &re
	want("848 bad regex", req(bad).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode, kerr.InvalidRegularExpression)
	asg := "nope"
	bad.SubscribedTopicRegex, bad.SubscribedTopicNames, bad.ServerAssignor = nil, []string{"errs"}, &asg
	want("848 bad assignor", req(bad).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode, kerr.UnsupportedAssignor)
	// Static temporary leave, then a replacement takes over the instance.
	want("848 static leave", hb848("a", -2, "i1").ErrorCode, nil0)
	j2 := hb848("b", 0, "i1")
	want("848 static replacement", j2.ErrorCode, nil0)
	if j2.MemberEpoch != j.MemberEpoch {
		t.Errorf("static replacement epoch %d, want the old member's %d", j2.MemberEpoch, j.MemberEpoch)
	}
	want("848 leave", hb848("b", -1, "").ErrorCode, nil0)
	del.Groups = []string{"g848", "missing"}
	dr := req(del).(*kmsg.DeleteGroupsResponse)
	want("delete empty 848 group", dr.Groups[0].ErrorCode, nil0)
	want("delete missing group", dr.Groups[1].ErrorCode, kerr.GroupIDNotFound)
}

var errsID [16]byte

var nil0 = &kerr.Error{Message: "NONE", Code: 0}

func commit(t *testing.T, cl *kgo.Client, grp, member string, gen int32) int16 {
	t.Helper()
	c := kmsg.NewPtrOffsetCommitRequest()
	c.Group, c.MemberID, c.Generation = grp, member, gen
	c.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "errs", TopicID: errsID, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
	resp, err := c.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// TestGroupConfigs: GROUP resources through IncrementalAlterConfigs and
// DescribeConfigs, and the override reaching KIP-848 members.
func TestGroupConfigs(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	cl := newClient(t, b)
	ctx := testCtx(t)
	alter := func(name, value string) int16 {
		t.Helper()
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "cfg-group"
		rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: name, Value: &value}}
		r.Resources = append(r.Resources, rr)
		resp, err := cl.Request(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
	}
	if code := alter("consumer.heartbeat.interval.ms", "6000"); code != 0 {
		t.Fatalf("alter: %v", kerr.ErrorForCode(code))
	}
	if code := alter("consumer.session.timeout.ms", "1000"); code != kerr.InvalidConfig.Code {
		t.Fatalf("out-of-range session timeout: %v, want INVALID_CONFIG", kerr.ErrorForCode(code))
	}
	if code := alter("no.such.config", "1"); code != kerr.InvalidConfig.Code {
		t.Fatalf("unknown group config: %v, want INVALID_CONFIG", kerr.ErrorForCode(code))
	}
	d := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "cfg-group"
	d.Resources = append(d.Resources, dr)
	resp, err := cl.Request(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range resp.(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
		if c.Name == "consumer.heartbeat.interval.ms" {
			found = true
			if c.Value == nil || *c.Value != "6000" || c.Source != kmsg.ConfigSourceGroupConfig {
				t.Fatalf("described %+v, want 6000 from GROUP_CONFIG", c)
			}
		}
	}
	if !found {
		t.Fatal("consumer.heartbeat.interval.ms not described")
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = "cfg-group", "m", 1000, []string{}
	hr, err := cl.Request(ctx, hb)
	if err != nil {
		t.Fatal(err)
	}
	if got := hr.(*kmsg.ConsumerGroupHeartbeatResponse).HeartbeatIntervalMillis; got != 6000 {
		t.Fatalf("heartbeat interval %d, want the group's 6000", got)
	}
}

// TestListDescribeGroups: ListGroups filters (case-insensitive, as the
// Java admin sends "Consumer", "Stable"), DescribeGroups and
// ConsumerGroupDescribe for each other's group types.
func TestListDescribeGroups(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	cl := newClient(t, b)
	ctx := testCtx(t)
	mustCreateTopic(t, newAdmin(t, b), "lg", 1, nil)
	tds, err := newAdmin(t, b).ListTopics(ctx, "lg")
	if err != nil {
		t.Fatal(err)
	}
	req := func(r kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := cl.Request(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// An offsets-only (classic, Empty) group and a live consumer group.
	c := kmsg.NewPtrOffsetCommitRequest()
	c.Group, c.Generation = "offsets-only", -1
	c.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "lg", TopicID: tds["lg"].ID, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3, LeaderEpoch: -1}}}}
	if code := req(c).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(code))
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = "modern", "m", 1000, []string{"lg"}
	if code := req(hb).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode; code != 0 {
		t.Fatalf("heartbeat: %v", kerr.ErrorForCode(code))
	}
	list := func(states, types []string) []string {
		l := kmsg.NewPtrListGroupsRequest()
		l.StatesFilter, l.TypesFilter = states, types
		var out []string
		for _, g := range req(l).(*kmsg.ListGroupsResponse).Groups {
			out = append(out, g.Group+"/"+g.GroupType+"/"+g.GroupState)
		}
		return out
	}
	for _, tc := range []struct {
		states, types []string
		want          string
	}{
		{nil, nil, "[modern/consumer/Stable offsets-only/classic/Empty]"},
		{nil, []string{"Consumer"}, "[modern/consumer/Stable]"},
		{[]string{"empty"}, nil, "[offsets-only/classic/Empty]"},
		{[]string{"Stable"}, []string{"classic"}, "[]"},
	} {
		if got := fmt.Sprint(list(tc.states, tc.types)); got != tc.want {
			t.Errorf("ListGroups states %v types %v = %s, want %s", tc.states, tc.types, got, tc.want)
		}
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"offsets-only", "modern"}
	groups := req(dg).(*kmsg.DescribeGroupsResponse).Groups
	if groups[0].ErrorCode != 0 || groups[0].State != "Empty" {
		t.Errorf("describe offsets-only: %+v", groups[0])
	}
	if groups[1].ErrorCode != kerr.GroupIDNotFound.Code || groups[1].ErrorMessage == nil || *groups[1].ErrorMessage != "Group modern is not a classic group." {
		t.Errorf("describe consumer group as classic: %+v", groups[1])
	}
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = []string{"modern", "offsets-only", "nope"}
	cgs := req(cd).(*kmsg.ConsumerGroupDescribeResponse).Groups
	if cgs[0].ErrorCode != 0 || cgs[0].State != "Stable" || len(cgs[0].Members) != 1 || cgs[0].Members[0].Assignment.TopicPartitions[0].Topic != "lg" {
		t.Errorf("describe modern: %+v", cgs[0])
	}
	if cgs[1].ErrorMessage == nil || *cgs[1].ErrorMessage != "Group offsets-only is not a consumer group." {
		t.Errorf("describe classic group as consumer: %+v", cgs[1])
	}
	if cgs[2].ErrorMessage == nil || *cgs[2].ErrorMessage != "Group nope not found." {
		t.Errorf("describe missing group: %+v", cgs[2])
	}
}
