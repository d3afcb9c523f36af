package share

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"
)

func topicsOf(m map[string]int32) TopicLookup {
	return func(name string) (TopicInfo, bool) {
		n, ok := m[name]
		if !ok {
			return TopicInfo{}, false
		}
		var id [16]byte
		copy(id[:], name)
		return TopicInfo{ID: id, Partitions: n}, true
	}
}

func tid(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	return id
}

var t0 = time.Unix(1_800_000_000, 0)

func join(t *testing.T, c *Coordinator, topics TopicLookup, group, member string, subs ...string) HeartbeatResponse {
	t.Helper()
	resp, err := c.Heartbeat(t0, HeartbeatRequest{GroupID: group, MemberID: member, MemberEpoch: 0, Subscribed: subs}, GroupConfig{}, topics, false)
	if err != nil {
		t.Fatalf("join %s: %v", member, err)
	}
	return resp
}

func beat(c *Coordinator, topics TopicLookup, group, member string, epoch int32) (HeartbeatResponse, error) {
	return c.Heartbeat(t0, HeartbeatRequest{GroupID: group, MemberID: member, MemberEpoch: epoch}, GroupConfig{}, topics, false)
}

// settle heartbeats every member until nobody's epoch changes, returning
// each member's assignment of one topic.
func settle(t *testing.T, c *Coordinator, topics TopicLookup, group, topic string) map[string][]int32 {
	t.Helper()
	g := c.Group(group)
	for round := 0; round < 5; round++ {
		for _, id := range g.memberIDs() {
			if _, err := beat(c, topics, group, id, g.Members[id].Epoch); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := map[string][]int32{}
	for id, m := range g.Members {
		if m.Epoch != g.AssignmentEpoch {
			t.Fatalf("member %s at epoch %d, assignment epoch %d", id, m.Epoch, g.AssignmentEpoch)
		}
		out[id] = m.Assignment[tid(topic)]
	}
	return out
}

func TestSimpleAssignorBalance(t *testing.T) {
	cases := []struct {
		partitions int32
		members    int
		wantLoads  []int // sorted
		perPart    int   // holders of every partition
	}{
		{3, 2, []int{1, 2}, 1},
		{1, 3, []int{1, 1, 1}, 3},
		{2, 3, []int{1, 1, 2}, 2},
		{6, 3, []int{2, 2, 2}, 1},
		{2, 2, []int{1, 1}, 1},
		{4, 10, []int{1, 1, 1, 1, 1, 1, 1, 1, 2, 2}, 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dp-%dm", tc.partitions, tc.members), func(t *testing.T) {
			c := NewCoordinator()
			topics := topicsOf(map[string]int32{"t": tc.partitions})
			for i := 0; i < tc.members; i++ {
				join(t, c, topics, "g", fmt.Sprintf("m%d", i), "t")
			}
			as := settle(t, c, topics, "g", "t")
			var loads []int
			holders := map[int32]int{}
			for _, ps := range as {
				loads = append(loads, len(ps))
				seen := map[int32]bool{}
				for _, p := range ps {
					if seen[p] {
						t.Fatalf("partition %d twice in one member: %v", p, as)
					}
					seen[p] = true
					holders[p]++
				}
			}
			sort.Ints(loads)
			if fmt.Sprint(loads) != fmt.Sprint(tc.wantLoads) {
				t.Errorf("loads %v, want %v (%v)", loads, tc.wantLoads, as)
			}
			for p := int32(0); p < tc.partitions; p++ {
				if holders[p] != tc.perPart {
					t.Errorf("partition %d held by %d members, want %d (%v)", p, holders[p], tc.perPart, as)
				}
			}
		})
	}
}

func TestHeartbeatEpochsAndErrors(t *testing.T) {
	c := NewCoordinator()
	topics := topicsOf(map[string]int32{"t": 2, "u": 1})
	r := join(t, c, topics, "g", "a", "t")
	if r.MemberEpoch < 1 || !r.Sent || len(r.Assignment[tid("t")]) != 2 {
		t.Fatalf("first join: %+v", r)
	}
	// A plain heartbeat with nothing new sends no assignment.
	r2, err := beat(c, topics, "g", "a", r.MemberEpoch)
	if err != nil || r2.Sent || r2.MemberEpoch != r.MemberEpoch {
		t.Fatalf("steady heartbeat: %+v %v", r2, err)
	}
	// A second member moves the group: a gets a new assignment and epoch.
	join(t, c, topics, "g", "b", "t")
	r3, err := beat(c, topics, "g", "a", r.MemberEpoch)
	if err != nil || !r3.Sent || r3.MemberEpoch <= r.MemberEpoch || len(r3.Assignment[tid("t")]) != 1 {
		t.Fatalf("after b joined: %+v %v", r3, err)
	}
	// The previous epoch is still accepted (a lost response), older is not.
	if _, err := beat(c, topics, "g", "a", r.MemberEpoch); err != nil {
		t.Fatalf("previous epoch: %v", err)
	}
	errCases := []struct {
		name string
		req  HeartbeatRequest
		want error
	}{
		{"newer epoch", HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: 99}, ErrFencedMemberEpoch},
		{"unknown member", HeartbeatRequest{GroupID: "g", MemberID: "zz", MemberEpoch: 3}, ErrUnknownMemberID},
		{"unknown group", HeartbeatRequest{GroupID: "nope", MemberID: "a", MemberEpoch: 3}, ErrGroupIDNotFound},
		{"empty member", HeartbeatRequest{GroupID: "g", MemberID: " ", MemberEpoch: 0, Subscribed: []string{"t"}}, ErrInvalidHeartbeat},
		{"long member", HeartbeatRequest{GroupID: "g", MemberID: "0123456789012345678901234567890123456", MemberEpoch: 0, Subscribed: []string{"t"}}, ErrInvalidHeartbeat},
		{"join without topics", HeartbeatRequest{GroupID: "g", MemberID: "c", MemberEpoch: 0}, ErrInvalidHeartbeat},
		{"epoch -2", HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: -2}, ErrInvalidHeartbeat},
		{"leave unknown", HeartbeatRequest{GroupID: "g", MemberID: "zz", MemberEpoch: -1}, ErrUnknownMemberID},
	}
	for _, ec := range errCases {
		if _, err := c.Heartbeat(t0, ec.req, GroupConfig{}, topics, false); !errors.Is(err, ec.want) {
			t.Errorf("%s: %v, want %v", ec.name, err, ec.want)
		}
	}
	if _, err := c.Heartbeat(t0, HeartbeatRequest{GroupID: "g", MemberID: "x", MemberEpoch: 0, Subscribed: []string{"t"}}, GroupConfig{}, topics, true); !errors.Is(err, ErrNotShareGroupError) || ErrorCode(err) != 69 {
		t.Errorf("other group type: %v", err)
	}
	// Max size.
	if _, err := c.Heartbeat(t0, HeartbeatRequest{GroupID: "g", MemberID: "c", MemberEpoch: 0, Subscribed: []string{"t"}}, GroupConfig{MaxSize: 2}, topics, false); !errors.Is(err, ErrGroupMaxSize) {
		t.Errorf("max size: %v", err)
	}
	// Leave: -1 echoed, the group can be deleted once empty.
	if err := c.DeleteGroup("g"); !errors.Is(err, ErrNonEmptyGroup) {
		t.Errorf("delete non-empty: %v", err)
	}
	for _, id := range []string{"a", "b"} {
		lr, err := c.Heartbeat(t0, HeartbeatRequest{GroupID: "g", MemberID: id, MemberEpoch: -1}, GroupConfig{}, topics, false)
		if err != nil || lr.MemberEpoch != -1 {
			t.Fatalf("leave %s: %+v %v", id, lr, err)
		}
	}
	if c.Group("g").State() != "Empty" {
		t.Errorf("state after leaving: %s", c.Group("g").State())
	}
	if err := c.DeleteGroup("g"); err != nil {
		t.Errorf("delete empty: %v", err)
	}
	// Rejoin with the same id at epoch 0 is accepted.
	join(t, c, topics, "h", "a", "t")
	join(t, c, topics, "h", "a", "t")
}

func TestSessionExpiryAndPartitionChange(t *testing.T) {
	c := NewCoordinator()
	parts := map[string]int32{"t": 2}
	topics := topicsOf(parts)
	join(t, c, topics, "g", "a", "t")
	b := join(t, c, topics, "g", "b", "t")
	if d, ok := c.NextSessionDeadline(); !ok || !d.Equal(t0.Add(45*time.Second)) {
		t.Fatalf("next deadline %v %v", d, ok)
	}
	if gone := c.ExpireSessions(t0.Add(44 * time.Second)); len(gone) != 0 {
		t.Fatalf("expired early: %v", gone)
	}
	// a keeps heartbeating, b goes silent.
	if _, err := c.Heartbeat(t0.Add(30*time.Second), HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: c.Group("g").Members["a"].Epoch}, GroupConfig{}, topics, false); err != nil {
		t.Fatal(err)
	}
	gone := c.ExpireSessions(t0.Add(46 * time.Second))
	if len(gone) != 1 || gone[0] != [2]string{"g", "b"} {
		t.Fatalf("expired %v, want b", gone)
	}
	if _, err := beat(c, topics, "g", "b", b.MemberEpoch); !errors.Is(err, ErrUnknownMemberID) {
		t.Errorf("fenced member heartbeat: %v", err)
	}
	as := settle(t, c, topics, "g", "t")
	if len(as["a"]) != 2 {
		t.Errorf("a after b expired: %v", as)
	}
	// More partitions: the epoch moves and a gets them.
	parts["t"] = 4
	as = settle(t, c, topics, "g", "t")
	if len(as["a"]) != 4 {
		t.Errorf("a after growing to 4 partitions: %v", as)
	}
}

// TestKafkaEpochs pins the group and assignment epochs Kafka 4.4 showed in
// the interop golden run (kafka-share-groups --describe --state
// --verbose): a first member joining a topic nobody initialised yet costs
// 3 epochs (its join, then the two of share-state initialisation), leaving
// one more with the assignment recomputed (Empty at 4/4); a later
// join-and-leave costs 2 (6/6).
func TestKafkaEpochs(t *testing.T) {
	c := NewCoordinator()
	topics := topicsOf(map[string]int32{"t": 2})
	r := join(t, c, topics, "g", "a", "t")
	if r.MemberEpoch != 3 || len(r.Assignment[tid("t")]) != 2 {
		t.Fatalf("first join: %+v, want epoch 3 with both partitions", r)
	}
	if _, err := c.Heartbeat(t0, HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: -1}, GroupConfig{}, topics, false); err != nil {
		t.Fatal(err)
	}
	if g := c.Group("g"); g.Epoch != 4 || g.AssignmentEpoch != 4 || g.State() != "Empty" {
		t.Fatalf("after leaving: %d/%d %s, want 4/4 Empty", g.Epoch, g.AssignmentEpoch, g.State())
	}
	r = join(t, c, topics, "g", "b", "t")
	if r.MemberEpoch != 5 {
		t.Fatalf("rejoin: epoch %d, want 5", r.MemberEpoch)
	}
	if _, err := c.Heartbeat(t0, HeartbeatRequest{GroupID: "g", MemberID: "b", MemberEpoch: -1}, GroupConfig{}, topics, false); err != nil {
		t.Fatal(err)
	}
	if g := c.Group("g"); g.Epoch != 6 || g.AssignmentEpoch != 6 {
		t.Fatalf("after the second leave: %d/%d, want 6/6", g.Epoch, g.AssignmentEpoch)
	}
	// Two members, one leaves: the other gets its partitions at its next
	// heartbeat, without a new epoch.
	ra := join(t, c, topics, "g", "a", "t")
	rb := join(t, c, topics, "g", "b", "t")
	ra, _ = beat(c, topics, "g", "a", ra.MemberEpoch)
	if _, err := c.Heartbeat(t0, HeartbeatRequest{GroupID: "g", MemberID: "b", MemberEpoch: -1}, GroupConfig{}, topics, false); err != nil {
		t.Fatal(err)
	}
	_ = rb
	ra, err := beat(c, topics, "g", "a", ra.MemberEpoch)
	if err != nil || len(c.Group("g").Members["a"].Assignment[tid("t")]) != 2 || ra.MemberEpoch != c.Group("g").AssignmentEpoch {
		t.Fatalf("after b left: %v %+v, group %d/%d", err, ra, c.Group("g").Epoch, c.Group("g").AssignmentEpoch)
	}
}
