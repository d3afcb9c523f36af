package group

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"sharq/log/clock"
)

func newTestCoordinator(t *testing.T) (*Coordinator, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	st := DefaultSettings()
	st.InitialRebalanceDelay = 3 * time.Second
	st.ConsumerSessionTimeout = 10 * time.Second
	c, err := New(Config{Store: NewMemStore(), Clock: clk, Settings: func(string) Settings { return st },
		Topics: func() map[string]TopicInfo { return map[string]TopicInfo{"t": {ID: TopicID{1}, Partitions: 4}} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, clk
}

func joinReq(member string) JoinRequest {
	return JoinRequest{Group: "g", MemberID: member, ClientID: "c", ProtocolType: "consumer", RequireKnownMemberID: true,
		Protocols: []Protocol{{Name: "range"}}, SessionTimeout: 10 * time.Second, RebalanceTimeout: 20 * time.Second}
}

// TestClassicLifecycle walks a classic group through its states with the
// fake clock: initial delay, stable, session expiry, rebalance, empty.
func TestClassicLifecycle(t *testing.T) {
	c, clk := newTestCoordinator(t)
	ch1 := make(chan JoinResult, 1)
	c.joinGroup(joinReq(""), ch1)
	id1 := (<-ch1).MemberID
	c.joinGroup(joinReq(id1), ch1)
	select {
	case r := <-ch1:
		t.Fatalf("join answered before the initial delay: %+v", r)
	default:
	}
	if s := c.ListGroups()[0].State; s != "PreparingRebalance" {
		t.Fatalf("state %s, want PreparingRebalance", s)
	}
	clk.Advance(3 * time.Second)
	r1 := <-ch1
	if r1.Err != nil || r1.Generation != 1 || r1.LeaderID != id1 || len(r1.Members) != 1 {
		t.Fatalf("join: %+v", r1)
	}
	sch := make(chan SyncResult, 1)
	c.syncGroup(SyncRequest{Group: "g", MemberID: id1, Generation: 1, Assignments: map[string][]byte{id1: {1}}}, sch)
	if s := <-sch; s.Err != nil || string(s.Assignment) != "\x01" {
		t.Fatalf("sync: %+v", s)
	}
	// A second member joins: the first must rejoin.
	ch2 := make(chan JoinResult, 1)
	c.joinGroup(joinReq(""), ch2)
	id2 := (<-ch2).MemberID
	c.joinGroup(joinReq(id2), ch2)
	if err := c.Heartbeat("g", id1, "", 1); !errors.Is(err, ErrRebalanceInProgress) {
		t.Fatalf("heartbeat during rebalance: %v", err)
	}
	c.joinGroup(joinReq(id1), ch1)
	r1, r2 := <-ch1, <-ch2
	if r1.Generation != 2 || r2.Generation != 2 || len(r1.Members) != 2 {
		t.Fatalf("rejoin: %+v / %+v", r1, r2)
	}
	c.syncGroup(SyncRequest{Group: "g", MemberID: id1, Generation: 2}, sch)
	<-sch
	sch2 := make(chan SyncResult, 1)
	c.syncGroup(SyncRequest{Group: "g", MemberID: id2, Generation: 2}, sch2)
	<-sch2
	// id2 stops heartbeating: its session expires, id1 is told to rejoin.
	clk.Advance(6 * time.Second)
	if err := c.Heartbeat("g", id1, "", 2); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Second)
	if err := c.Heartbeat("g", id1, "", 2); !errors.Is(err, ErrRebalanceInProgress) {
		t.Fatalf("after id2 expired: %v", err)
	}
	if err := c.Heartbeat("g", id2, "", 2); !errors.Is(err, ErrUnknownMemberID) {
		t.Fatalf("expired member heartbeat: %v", err)
	}
	// id1 does not rejoin within the rebalance timeout: removed, Empty.
	clk.Advance(25 * time.Second)
	if s := c.ListGroups()[0].State; s != "Empty" {
		t.Fatalf("state %s, want Empty", s)
	}
}

// TestConsumerReconciliation: revoke before assign across two members.
func TestConsumerReconciliation(t *testing.T) {
	c, clk := newTestCoordinator(t)
	join := func(id string) ConsumerHeartbeatResult {
		return c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: id, SubscribedTopicNames: []string{"t"}, RebalanceTimeout: time.Minute})
	}
	a := join("a")
	if a.Err != nil || a.MemberEpoch != 2 || len(a.Assignment[TopicID{1}]) != 4 {
		t.Fatalf("a joins: %+v", a)
	}
	b := join("b")
	if b.Err != nil || b.MemberEpoch != 3 || len(b.Assignment[TopicID{1}]) != 0 {
		t.Fatalf("b joins: %+v (its partitions are still a's)", b)
	}
	// a learns it must give two up; it keeps epoch 2 until it does (a new
	// group starts at epoch 1, as Kafka's: its first member gets 2).
	a = c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 2, RebalanceTimeout: -1})
	if a.MemberEpoch != 2 || len(a.Assignment[TopicID{1}]) != 2 {
		t.Fatalf("a revoking: %+v", a)
	}
	a = c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 2, RebalanceTimeout: -1, Owned: a.Assignment})
	if a.MemberEpoch != 3 {
		t.Fatalf("a after revoking: %+v", a)
	}
	b = c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "b", MemberEpoch: 3, RebalanceTimeout: -1})
	if len(b.Assignment[TopicID{1}]) != 2 {
		t.Fatalf("b after release: %+v", b)
	}
	if d, _ := c.DescribeConsumer("g"); d.State != "Stable" {
		t.Fatalf("state %s, want Stable", d.State)
	}
	// b stops heartbeating: a gets everything back at a new epoch.
	for i := 0; i < 3; i++ {
		clk.Advance(4 * time.Second)
		c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 3, RebalanceTimeout: -1})
	}
	a = c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 3, RebalanceTimeout: -1})
	if a.Err != nil || a.MemberEpoch != 4 || len(a.Assignment[TopicID{1}]) != 4 {
		t.Fatalf("a after b expired: %+v", a)
	}
	if r := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "b", MemberEpoch: 3}); !errors.Is(r.Err, ErrUnknownMemberID) {
		t.Fatalf("expired member: %v", r.Err)
	}
}

func TestAssignors(t *testing.T) {
	topics := map[string]TopicInfo{"t": {ID: TopicID{1}, Partitions: 6}, "u": {ID: TopicID{2}, Partitions: 3}}
	for _, tc := range []struct {
		name string
		fn   assignorFunc
	}{{"uniform", assignUniform}, {"range", assignRange}} {
		t.Run(tc.name, func(t *testing.T) {
			ms := []assignMember{
				{id: "a", topics: map[string]bool{"t": true, "u": true}},
				{id: "b", topics: map[string]bool{"t": true, "u": true}},
				{id: "c", topics: map[string]bool{"t": true, "u": true}},
			}
			out := tc.fn(ms, topics)
			seen := partSet{}
			for _, ps := range out {
				if len(ps) != 3 {
					t.Errorf("member has %d partitions, want 3: %v", len(ps), out)
				}
				for k := range ps {
					if _, dup := seen[k]; dup {
						t.Fatalf("partition %v assigned twice", k)
					}
					seen[k] = struct{}{}
				}
			}
			if len(seen) != 9 {
				t.Fatalf("%d partitions assigned, want 9", len(seen))
			}
		})
	}
}

func TestOffsetsExpireForEmptyGroups(t *testing.T) {
	c, clk := newTestCoordinator(t)
	if _, err := c.CommitOffsets(CommitRequest{Group: "g", Generation: -1, Offsets: map[TopicPartition]Offset{{"t", 0}: {Offset: 5}}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(7*24*time.Hour - time.Second)
	if n := c.ExpireOffsets(); n != 0 {
		t.Fatalf("expired %d before retention", n)
	}
	clk.Advance(time.Second)
	if n := c.ExpireOffsets(); n != 1 || c.Exists("g") {
		t.Fatalf("expired %d, group exists %v", n, c.Exists("g"))
	}
}

// RunExpiry expires the offsets of an empty group on its own interval, on
// the coordinator's clock, and returns once its context is done.
func TestRunExpiryOnClock(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	logged := make(chan string, 1024)
	c, err := New(Config{Store: NewMemStore(), Clock: clk, Logger: slog.New(notifyHandler(logged)),
		Topics: func() map[string]TopicInfo { return map[string]TopicInfo{"t": {ID: TopicID{1}, Partitions: 4}} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if _, err := c.CommitOffsets(CommitRequest{Group: "g", Generation: -1, Offsets: map[TopicPartition]Offset{{"t", 0}: {Offset: 5}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.RunExpiry(ctx, time.Hour)
	}()
	clk.BlockUntil(1)
	clk.Advance(7*24*time.Hour + time.Hour) // retention, then one more tick
	for msg := range logged {
		if msg == "expired committed offsets" {
			break
		}
	}
	if c.Exists("g") {
		t.Fatal("group still exists after its offsets expired")
	}
	cancel()
	<-done
}

// notifyHandler is a slog handler that sends each record's message to
// the channel, dropping it when the channel is full (a test that stopped
// reading must not block the logger).
type notifyHandler chan string

func (h notifyHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h notifyHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h <- r.Message:
	default:
	}
	return nil
}
func (h notifyHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h notifyHandler) WithGroup(string) slog.Handler      { return h }

func TestJoinWaitsForContext(t *testing.T) {
	c, _ := newTestCoordinator(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := c.JoinGroup(ctx, joinReq("unknown"))
	if r.Err == nil {
		t.Fatal("join of an unknown member succeeded")
	}
}

func FuzzDecodeOffset(f *testing.F) {
	f.Add(EncodeOffset(Offset{Offset: 42, LeaderEpoch: -1, Metadata: "m", CommitTime: 1}))
	f.Add([]byte{})
	f.Add([]byte{'o', 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeOffset(b)
		if err != nil {
			return
		}
		o2, err := DecodeOffset(EncodeOffset(o))
		if err != nil || o2 != o {
			t.Fatalf("round trip: %+v -> %+v (%v)", o, o2, err)
		}
	})
}

func FuzzDecodeOffsetKey(f *testing.F) {
	f.Add(offsetKey("g", TopicPartition{"t", 3}))
	f.Add([]byte("g/"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, tp, err := DecodeOffsetKey(b)
		if err != nil {
			return
		}
		if string(offsetKey(g, tp)) != string(b) {
			t.Fatalf("key round trip differs")
		}
	})
}

func TestRemoveTopic(t *testing.T) {
	c, _ := newTestCoordinator(t)
	offs := map[TopicPartition]Offset{{"t", 0}: {Offset: 1}, {"gone", 0}: {Offset: 2}}
	if _, err := c.CommitOffsets(CommitRequest{Group: "g", Generation: -1, Offsets: offs}); err != nil {
		t.Fatal(err)
	}
	c.removeMissingTopics() // "gone" is not among the coordinator's topics
	got, err := c.FetchOffsets("g", "", -1, nil, true)
	if err != nil || len(got) != 1 || got[TopicPartition{"t", 0}].Offset != 1 {
		t.Fatalf("after removing the deleted topic: %v %v", got, err)
	}
	if err := c.RemoveTopic("t"); err != nil || c.Exists("g") {
		t.Fatalf("group with no offsets left still exists (%v)", err)
	}
}

// TestClassicTimers covers the timers of the join and sync phases.
func TestClassicTimers(t *testing.T) {
	t.Run("pending member id expires", func(t *testing.T) {
		c, clk := newTestCoordinator(t)
		ch := make(chan JoinResult, 1)
		c.joinGroup(joinReq(""), ch)
		id := (<-ch).MemberID
		clk.Advance(10 * time.Second) // the session timeout of the request
		c.joinGroup(joinReq(id), ch)
		if r := <-ch; !errors.Is(r.Err, ErrUnknownMemberID) {
			t.Fatalf("join with an expired pending id: %v", r.Err)
		}
	})
	t.Run("initial delay extends while members arrive", func(t *testing.T) {
		c, clk := newTestCoordinator(t)
		ch1, ch2 := make(chan JoinResult, 1), make(chan JoinResult, 1)
		c.joinGroup(joinReq(""), ch1)
		c.joinGroup(joinReq((<-ch1).MemberID), ch1)
		clk.Advance(2 * time.Second)
		c.joinGroup(joinReq(""), ch2)
		c.joinGroup(joinReq((<-ch2).MemberID), ch2)
		clk.Advance(time.Second) // first delay ends, a member came: wait again
		select {
		case r := <-ch1:
			t.Fatalf("answered while members were still joining: %+v", r)
		default:
		}
		clk.Advance(3 * time.Second)
		if r1, r2 := <-ch1, <-ch2; r1.Generation != 1 || r2.Generation != 1 {
			t.Fatalf("generations %d %d, want one rebalance", r1.Generation, r2.Generation)
		}
	})
	t.Run("member that does not sync is removed", func(t *testing.T) {
		c, clk := newTestCoordinator(t)
		ch := make(chan JoinResult, 1)
		c.joinGroup(joinReq(""), ch)
		id := (<-ch).MemberID
		c.joinGroup(joinReq(id), ch)
		clk.Advance(3 * time.Second)
		<-ch
		clk.Advance(20 * time.Second) // rebalance timeout without SyncGroup
		if err := c.Heartbeat("g", id, "", 1); !errors.Is(err, ErrUnknownMemberID) {
			t.Fatalf("heartbeat of a member that never synced: %v", err)
		}
	})
	t.Run("static member replaced in a stable group", func(t *testing.T) {
		c, clk := newTestCoordinator(t)
		req := joinReq("")
		req.InstanceID = "i"
		req.SupportsSkipAssignment = true
		ch := make(chan JoinResult, 1)
		c.joinGroup(req, ch)
		clk.Advance(3 * time.Second)
		r := <-ch
		sch := make(chan SyncResult, 1)
		c.syncGroup(SyncRequest{Group: "g", MemberID: r.MemberID, InstanceID: "i", Generation: r.Generation, Assignments: map[string][]byte{r.MemberID: {7}}}, sch)
		<-sch
		c.joinGroup(req, ch)
		r2 := <-ch
		if r2.Err != nil || r2.Generation != r.Generation || r2.MemberID == r.MemberID {
			t.Fatalf("static rejoin: %+v, want same generation %d and a new member id", r2, r.Generation)
		}
		c.syncGroup(SyncRequest{Group: "g", MemberID: r2.MemberID, InstanceID: "i", Generation: r2.Generation}, sch)
		if s := <-sch; s.Err != nil || string(s.Assignment) != "\x07" {
			t.Fatalf("static member's assignment after rejoin: %+v", s)
		}
		if err := c.Heartbeat("g", r.MemberID, "i", r.Generation); !errors.Is(err, ErrFencedInstanceID) {
			t.Fatalf("old member id: %v, want FENCED_INSTANCE_ID", err)
		}
	})
}

// TestConsumerRevocationTimeout: a member that keeps partitions past its
// rebalance timeout is fenced and its partitions go to the other member.
func TestConsumerRevocationTimeout(t *testing.T) {
	c, clk := newTestCoordinator(t)
	c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "a", SubscribedTopicNames: []string{"t"}, RebalanceTimeout: 5 * time.Second})
	c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "b", SubscribedTopicNames: []string{"t"}, RebalanceTimeout: 5 * time.Second})
	a := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 2, RebalanceTimeout: -1})
	if len(a.Assignment[TopicID{1}]) != 2 {
		t.Fatalf("a must revoke two: %+v", a)
	}
	clk.Advance(5 * time.Second)
	if r := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 2}); !errors.Is(r.Err, ErrUnknownMemberID) {
		t.Fatalf("a after the revocation timeout: %v", r.Err)
	}
	b := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g", MemberID: "b", MemberEpoch: 3, RebalanceTimeout: -1})
	if b.Err != nil || len(b.Assignment[TopicID{1}]) != 4 {
		t.Fatalf("b after a was fenced: %+v", b)
	}
}

func TestJoinValidation(t *testing.T) {
	c, clk := newTestCoordinator(t)
	ch := make(chan JoinResult, 1)
	c.joinGroup(joinReq(""), ch)
	id := (<-ch).MemberID
	c.joinGroup(joinReq(id), ch)
	clk.Advance(3 * time.Second)
	<-ch
	for _, tc := range []struct {
		name string
		mod  func(*JoinRequest)
		want error
	}{
		{"session timeout too small", func(r *JoinRequest) { r.SessionTimeout = time.Second }, ErrInvalidSessionTimeout},
		{"session timeout too large", func(r *JoinRequest) { r.SessionTimeout = time.Hour }, ErrInvalidSessionTimeout},
		{"other protocol type", func(r *JoinRequest) { r.ProtocolType = "connect" }, ErrInconsistentProtocol},
		{"no common protocol", func(r *JoinRequest) { r.Protocols = []Protocol{{Name: "roundrobin"}} }, ErrInconsistentProtocol},
		{"no protocols", func(r *JoinRequest) { r.Protocols = nil }, ErrInconsistentProtocol},
		{"unknown member", func(r *JoinRequest) { r.MemberID = "nobody" }, ErrUnknownMemberID},
		{"empty group id", func(r *JoinRequest) { r.Group = "" }, ErrInvalidGroupID},
		{"instance id unknown to the group", func(r *JoinRequest) { r.MemberID = id; r.InstanceID = "x" }, ErrUnknownMemberID},
	} {
		req := joinReq("")
		tc.mod(&req)
		c.joinGroup(req, ch)
		if r := <-ch; !errors.Is(r.Err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, r.Err, tc.want)
		}
	}
}

// TestConcurrentCommits: commits of many groups in parallel with
// heartbeats and listings; run under -race. Each group ends with its last
// commit in memory and in the store.
func TestConcurrentCommits(t *testing.T) {
	store := NewMemStore()
	c, err := New(Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			id := string(rune('a' + g))
			for i := int64(1); i <= 50; i++ {
				if _, err := c.CommitOffsets(CommitRequest{Group: id, Generation: -1, Offsets: map[TopicPartition]Offset{{"t", 0}: {Offset: i}}}); err != nil {
					t.Error(err)
					return
				}
				c.ListGroups()
				c.Heartbeat(id, "m", "", 1)
			}
		}(g)
	}
	for g := 0; g < 8; g++ {
		<-done
	}
	loaded, _ := store.Load()
	for g := 0; g < 8; g++ {
		id := string(rune('a' + g))
		got, _ := c.FetchOffsets(id, "", -1, nil, true)
		if got[TopicPartition{"t", 0}].Offset != 50 || loaded[id][TopicPartition{"t", 0}].Offset != 50 {
			t.Fatalf("group %s: memory %v store %v, want 50", id, got, loaded[id])
		}
	}
}

// TestConsumerRegexMatchesInternalTopics: a KIP-848 regular expression
// resolves against every topic, internal ones included, as Kafka 4.4's
// coordinator does; it is matched in full.
func TestConsumerRegexMatchesInternalTopics(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	st := DefaultSettings()
	topics := map[string]TopicInfo{
		"t":                  {ID: TopicID{1}, Partitions: 2},
		"__consumer_offsets": {ID: TopicID{2}, Partitions: 50},
	}
	c, err := New(Config{Store: NewMemStore(), Clock: clk, Settings: func(string) Settings { return st },
		Topics: func() map[string]TopicInfo { return topics }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for _, tc := range []struct {
		re               string
		internal, userTp bool
	}{
		{".*", true, true},
		{"__.*", true, false},
		{"t|__consumer_offsets", true, true},
		{"__consumer", false, false},
	} {
		re := tc.re
		r := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "g-" + re, MemberID: "m", SubscribedTopicRegex: &re, RebalanceTimeout: time.Minute})
		if r.Err != nil {
			t.Fatalf("%s: %v", re, r.Err)
		}
		if got := len(r.Assignment[TopicID{2}]) == 50; got != tc.internal {
			t.Errorf("regex %q: __consumer_offsets assigned %v, want %v (%v)", re, got, tc.internal, r.Assignment)
		}
		if got := len(r.Assignment[TopicID{1}]) == 2; got != tc.userTp {
			t.Errorf("regex %q: t assigned %v, want %v (%v)", re, got, tc.userTp, r.Assignment)
		}
	}
}

// TestEmptyGroupWithoutOffsetsRemoved: a classic group whose last member
// left and that never committed (kafka-console-consumer's
// console-consumer-N) is removed by the periodic cleanup, as on Kafka; one
// with offsets stays until they expire.
func TestEmptyGroupWithoutOffsetsRemoved(t *testing.T) {
	c, clk := newTestCoordinator(t)
	join := func(group string) string {
		ch := make(chan JoinResult, 1)
		req := joinReq("")
		req.Group = group
		c.joinGroup(req, ch)
		id := (<-ch).MemberID
		req.MemberID = id
		c.joinGroup(req, ch)
		clk.Advance(3 * time.Second)
		if r := <-ch; r.Err != nil {
			t.Fatal(r.Err)
		}
		return id
	}
	id := join("console-consumer-1")
	if _, err := c.LeaveGroup("console-consumer-1", []LeaveMember{{MemberID: id}}); err != nil {
		t.Fatal(err)
	}
	if !c.Exists("console-consumer-1") {
		t.Fatal("group gone before the cleanup ran")
	}
	if _, err := c.CommitOffsets(CommitRequest{Group: "committed", Generation: -1, Offsets: map[TopicPartition]Offset{{"t", 0}: {Offset: 1}}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Second)
	c.ExpireOffsets()
	if c.Exists("console-consumer-1") {
		t.Error("empty group without offsets still listed after the cleanup")
	}
	if !c.Exists("committed") {
		t.Error("empty group with offsets removed before they expired")
	}
}
