package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Issue 25 item 1: a classic group kept its members' JoinGroup metadata
// and the leader's SyncGroup assignments as slices of the request frame,
// which the connection reuses for the frame after next. These tests make
// the members' connections carry more requests after the ones the group
// kept, then check every place the group answers those bytes from.

// handMember is one classic-protocol member driven by hand over a kgo
// client: its JoinGroup and SyncGroup requests share the client's group
// connection (kgo's cxnGroup), as a Java consumer's do with its heartbeats
// and commits on the coordinator connection.
type handMember struct {
	cl       *kgo.Client
	group    string // the group it is a member of; joins of others start afresh
	id       string
	metadata []byte
}

func (m *handMember) join(ctx context.Context, grp string, metadata []byte) (*kmsg.JoinGroupResponse, error) {
	id := m.id
	if grp != m.group {
		id = ""
	}
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = grp, id, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 60000, 10000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", metadata
		req.Protocols = append(req.Protocols, p)
		kresp, err := req.RequestWith(ctx, m.cl)
		if err != nil {
			return nil, fmt.Errorf("join %s: %w", grp, err)
		}
		if kresp.ErrorCode == kerr.MemberIDRequired.Code {
			id = kresp.MemberID
			continue
		}
		if err := kerr.ErrorForCode(kresp.ErrorCode); err != nil {
			return nil, fmt.Errorf("join %s: %w", grp, err)
		}
		if grp == m.group {
			m.id, m.metadata = kresp.MemberID, metadata
		}
		return kresp, nil
	}
}

func (m *handMember) sync(ctx context.Context, t *testing.T, grp, member string, gen int32, assignments map[string][]byte) []byte {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = grp, member, gen
	req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	for id, a := range assignments {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatalf("sync %s: %v", grp, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("sync %s as %s: %v", grp, member, err)
	}
	return resp.MemberAssignment
}

// memberMetadata is a subscription to topic whose user data (size bytes)
// is tagged by seed, so that two members' bytes differ everywhere.
func memberMetadata(topic string, seed byte, size int) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 1
	m.Topics = []string{topic}
	m.UserData = bytes.Repeat([]byte{seed}, size)
	return m.AppendTo(nil)
}

// brief shows bytes in a failure: their length and first 24.
func brief(b []byte) string {
	if len(b) > 24 {
		return fmt.Sprintf("%d bytes %x...", len(b), b[:24])
	}
	return fmt.Sprintf("%d bytes %x", len(b), b)
}

func memberAssignment(topic string, seed byte, partitions ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = 1
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: partitions}}
	a.UserData = bytes.Repeat([]byte{seed}, 200)
	return a.AppendTo(nil)
}

// TestClassicGroupKeepsMemberBytes: two classic members join and sync;
// then both send more requests on the same connections (joins of another
// group with as much metadata, which land in the frame buffers the group's
// bytes came from). DescribeGroups must still answer exactly the metadata
// each member sent and the assignment the leader sent it, both decodable,
// and a member that syncs again must get the assignment the leader sent.
// Before the fix the metadata answered was the other group's (and did not
// decode), and so was the assignment of a member that synced again.
func TestClassicGroupKeepsMemberBytes(t *testing.T) {
	t.Parallel()
	b := newGroupBroker(t)
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	const grp, topic = "classic-kept", "kept"
	mustCreateTopic(t, adm, topic, 4, nil)
	m1 := &handMember{cl: newClient(t, b), group: grp}
	m2 := &handMember{cl: newClient(t, b), group: grp}

	// m1 alone: generation 1, m1 leads.
	j1, err := m1.join(ctx, grp, memberMetadata(topic, 0x11, 300))
	if err != nil {
		t.Fatal(err)
	}
	m1.sync(ctx, t, grp, m1.id, j1.Generation, map[string][]byte{m1.id: memberAssignment(topic, 0x21, 0, 1, 2, 3)})

	// m2 joins; its join waits for m1 to rejoin: generation 2.
	type joined struct {
		resp *kmsg.JoinGroupResponse
		err  error
	}
	j2ch := make(chan joined, 1)
	go func() {
		resp, err := m2.join(ctx, grp, memberMetadata(topic, 0x12, 300))
		j2ch <- joined{resp, err}
	}()
	var lead *kmsg.JoinGroupResponse
	waitFor(t, "m2 pending in the group", func() bool {
		d, err := adm.DescribeGroups(ctx, grp)
		return err == nil && d[grp].State == "PreparingRebalance"
	})
	if lead, err = m1.join(ctx, grp, m1.metadata); err != nil {
		t.Fatal(err)
	}
	j2 := <-j2ch
	if j2.err != nil {
		t.Fatal(j2.err)
	}
	gen := lead.Generation
	if lead.LeaderID != m1.id || len(lead.Members) != 2 || j2.resp.Generation != gen {
		t.Fatalf("generation %d: leader %s with %d members, m2 in generation %d; want m1 (%s) leading both", gen, lead.LeaderID, len(lead.Members), j2.resp.Generation, m1.id)
	}
	sent := map[string][]byte{m1.id: m1.metadata, m2.id: m2.metadata}
	for _, jm := range lead.Members {
		if !bytes.Equal(jm.ProtocolMetadata, sent[jm.MemberID]) {
			t.Fatalf("the leader got %s's metadata as %s, the member sent %s", jm.MemberID, brief(jm.ProtocolMetadata), brief(sent[jm.MemberID]))
		}
	}
	assigned := map[string][]byte{
		m1.id: memberAssignment(topic, 0x31, 0, 1),
		m2.id: memberAssignment(topic, 0x32, 2, 3),
	}
	if got := m1.sync(ctx, t, grp, m1.id, gen, assigned); !bytes.Equal(got, assigned[m1.id]) {
		t.Fatalf("leader's sync answered %s, want %s", brief(got), brief(assigned[m1.id]))
	}
	if got := m2.sync(ctx, t, grp, m2.id, gen, nil); !bytes.Equal(got, assigned[m2.id]) {
		t.Fatalf("follower's sync answered %s, want %s", brief(got), brief(assigned[m2.id]))
	}

	// More requests on both members' group connections: two joins each
	// (MEMBER_ID_REQUIRED, then the join), one into each frame buffer,
	// with longer metadata than the frames the group kept bytes of.
	for i, m := range []*handMember{m1, m2} {
		if _, err := m.join(ctx, fmt.Sprintf("classic-junk%d", i), bytes.Repeat([]byte{0xff}, 1500)); err != nil {
			t.Fatal(err)
		}
	}

	// Exactly the bytes sent, as DescribeGroups answers them.
	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Groups = []string{grp}
	dresp, err := dreq.RequestWith(ctx, m1.cl)
	if err != nil {
		t.Fatal(err)
	}
	dg := dresp.Groups[0]
	if dg.ErrorCode != 0 || dg.State != "Stable" || len(dg.Members) != 2 {
		t.Fatalf("DescribeGroups: error %d, state %s, %d members; want Stable with 2", dg.ErrorCode, dg.State, len(dg.Members))
	}
	for _, dm := range dg.Members {
		if !bytes.Equal(dm.ProtocolMetadata, sent[dm.MemberID]) {
			t.Errorf("DescribeGroups: %s's metadata is %s, the member sent %s", dm.MemberID, brief(dm.ProtocolMetadata), brief(sent[dm.MemberID]))
		}
		if !bytes.Equal(dm.MemberAssignment, assigned[dm.MemberID]) {
			t.Errorf("DescribeGroups: %s's assignment is %s, the leader sent %s", dm.MemberID, brief(dm.MemberAssignment), brief(assigned[dm.MemberID]))
		}
	}
	// And decodable, as kadm (kafka-consumer-groups.sh alike) reads them.
	described, err := adm.DescribeGroups(ctx, grp)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{m1.id: "kept[0 1]", m2.id: "kept[2 3]"}
	for _, dm := range described[grp].Members {
		meta, ok := dm.Join.AsConsumer()
		if !ok || len(meta.Topics) != 1 || meta.Topics[0] != topic {
			t.Errorf("kadm: %s's metadata does not decode as a subscription to %s: %+v", dm.MemberID, topic, meta)
		}
		a, ok := dm.Assigned.AsConsumer()
		if !ok || len(a.Topics) != 1 || fmt.Sprint(a.Topics[0].Topic, a.Topics[0].Partitions) != want[dm.MemberID] {
			t.Errorf("kadm: %s's assignment does not decode as %s: %+v", dm.MemberID, want[dm.MemberID], a)
		}
	}

	// A member that syncs again in the same generation gets the
	// assignment the leader sent, not what its connection carried since.
	if got := m2.sync(ctx, t, grp, m2.id, gen, nil); !bytes.Equal(got, assigned[m2.id]) {
		t.Errorf("m2 syncing again got %s, the leader sent %s", brief(got), brief(assigned[m2.id]))
	}
	if got := m1.sync(ctx, t, grp, m1.id, gen, nil); !bytes.Equal(got, assigned[m1.id]) {
		t.Errorf("m1 syncing again got %s, the leader sent %s", brief(got), brief(assigned[m1.id]))
	}
}

// TestClassicGroupDescribeAfterMoreRequests: two franz-go group consumers
// (classic protocol, range balancer) settle; then more requests travel on
// their group connections. DescribeGroups must still answer metadata that
// decodes as their subscriptions and assignments that split the topic
// between them. Before the fix neither decoded.
func TestClassicGroupDescribeAfterMoreRequests(t *testing.T) {
	t.Parallel()
	b := newGroupBroker(t)
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	const grp, topic = "classic-described", "described"
	mustCreateTopic(t, adm, topic, 4, nil)
	ta := &tally{counts: map[string]int{}}
	var cons []*groupConsumer
	for i := 0; i < 2; i++ {
		gc := startGroupConsumer(t, b, ta, topic, grp, kgo.Balancers(kgo.RangeBalancer()))
		defer gc.close()
		cons = append(cons, gc)
	}
	waitFor(t, "two members with two partitions each", func() bool {
		got := assignedCounts(t, adm, grp)
		return len(got) == 2 && got[0] == 2 && got[1] == 2
	})
	members := map[string]bool{}
	for i, gc := range cons {
		id, _ := gc.cl.GroupMetadata()
		members[id] = true
		// Two joins (MEMBER_ID_REQUIRED, then the join) of another group
		// on the consumer's group connection: one into each frame buffer.
		m := &handMember{cl: gc.cl}
		if _, err := m.join(ctx, fmt.Sprintf("classic-other%d", i), bytes.Repeat([]byte{0xff}, 1500)); err != nil {
			t.Fatal(err)
		}
	}
	described, err := adm.DescribeGroups(ctx, grp)
	if err != nil {
		t.Fatal(err)
	}
	g := described[grp]
	if g.Err != nil || g.State != "Stable" || len(g.Members) != 2 {
		t.Fatalf("DescribeGroups: %v, state %s, %d members; want Stable with 2", g.Err, g.State, len(g.Members))
	}
	owners := map[int32]string{}
	for _, dm := range g.Members {
		if !members[dm.MemberID] {
			t.Errorf("member %s is none of the consumers (%v)", dm.MemberID, members)
		}
		meta, ok := dm.Join.AsConsumer()
		if !ok || len(meta.Topics) != 1 || meta.Topics[0] != topic {
			t.Errorf("%s's metadata does not decode as a subscription to %s: %+v", dm.MemberID, topic, meta)
		}
		a, ok := dm.Assigned.AsConsumer()
		if !ok || len(a.Topics) != 1 || a.Topics[0].Topic != topic || len(a.Topics[0].Partitions) != 2 {
			t.Errorf("%s's assignment does not decode as two partitions of %s: %+v", dm.MemberID, topic, a)
			continue
		}
		for _, p := range a.Topics[0].Partitions {
			if prev, dup := owners[p]; dup {
				t.Errorf("partition %d assigned to %s and %s", p, prev, dm.MemberID)
			}
			owners[p] = dm.MemberID
		}
	}
	if len(owners) != 4 {
		t.Errorf("assigned partitions %v, want all 4", owners)
	}
}
