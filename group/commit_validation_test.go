package group

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// commitFixture holds one group of each kind and state a committer can
// meet, in one coordinator.
type commitFixture struct {
	f *streamsFixture
	// classic groups: member id and generation of their (first) member
	stableMember, staticMember, completingMember, preparingMember string
	stableGen, staticGen, completingGen, preparingGen             int32
	emptyGen                                                      int32
	consumerEpoch, streamsEpoch                                   int32
}

func newCommitFixture(t *testing.T) *commitFixture {
	t.Helper()
	f := newStreamsFixture(t, map[string]int32{"t": 4, "in": 1, "app-rep": 1, "app-a-changelog": 1, "app-b-changelog": 1})
	c, clk := f.c, f.clk
	c.SetForeignGroups(func(id string) bool { return id == "share" })
	cf := &commitFixture{f: f}
	// join makes member join group (asking for an id first) and returns
	// the join result once the initial rebalance delay passed.
	join := func(group, member, instance string, advance bool) JoinResult {
		ch := make(chan JoinResult, 1)
		req := joinReq(member)
		// Sessions outlive the clock steps of the other groups' joins.
		req.Group, req.InstanceID, req.SessionTimeout = group, instance, 20*time.Minute
		if member == "" && instance == "" {
			c.joinGroup(req, ch)
			req.MemberID = (<-ch).MemberID
		}
		c.joinGroup(req, ch)
		if advance {
			clk.Advance(f.st.InitialRebalanceDelay)
		}
		r := <-ch
		if r.Err != nil {
			t.Fatalf("join %s: %v", group, r.Err)
		}
		return r
	}
	sync := func(group string, r JoinResult) {
		ch := make(chan SyncResult, 1)
		c.syncGroup(SyncRequest{Group: group, MemberID: r.MemberID, Generation: r.Generation, Assignments: map[string][]byte{r.MemberID: {1}}}, ch)
		if s := <-ch; s.Err != nil {
			t.Fatalf("sync %s: %v", group, s.Err)
		}
	}
	r := join("stable", "", "", true)
	sync("stable", r)
	cf.stableMember, cf.stableGen = r.MemberID, r.Generation
	r = join("static", "", "inst-1", true)
	sync("static", r)
	cf.staticMember, cf.staticGen = r.MemberID, r.Generation
	r = join("completing", "", "", true)
	cf.completingMember, cf.completingGen = r.MemberID, r.Generation
	r = join("preparing", "", "", true)
	sync("preparing", r)
	cf.preparingMember, cf.preparingGen = r.MemberID, r.Generation
	// A second member joins: the group waits for the first to rejoin.
	ch := make(chan JoinResult, 1)
	req := joinReq("")
	req.Group, req.SessionTimeout = "preparing", 20*time.Minute
	c.joinGroup(req, ch)
	req.MemberID = (<-ch).MemberID
	c.joinGroup(req, ch)
	r = join("empty", "", "", true)
	sync("empty", r)
	if _, err := c.LeaveGroup("empty", []LeaveMember{{MemberID: r.MemberID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CommitOffsets(CommitRequest{Group: "simple", Generation: -1, Offsets: map[TopicPartition]Offset{{"t", 0}: {Offset: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TxnCommitOffsets(TxnCommitRequest{Group: "pending", ProducerID: 9, Generation: -1, Offsets: map[TopicPartition]Offset{{"t", 0}: {Offset: 1}}}); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, g := range c.ListGroups() {
		states[g.ID] = g.State
	}
	for g, want := range map[string]string{"stable": "Stable", "static": "Stable", "completing": "CompletingRebalance", "preparing": "PreparingRebalance", "empty": "Empty", "simple": "Empty"} {
		if states[g] != want {
			t.Fatalf("fixture group %s is %s, want %s", g, states[g], want)
		}
	}
	cr := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "consumer", MemberID: "cm", SubscribedTopicNames: []string{"t"}, RebalanceTimeout: time.Minute})
	if cr.Err != nil {
		t.Fatal(cr.Err)
	}
	cf.consumerEpoch = cr.MemberEpoch
	lr := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "consumer-empty", MemberID: "gone", SubscribedTopicNames: []string{"t"}, RebalanceTimeout: time.Minute})
	if lr.Err != nil {
		t.Fatal(lr.Err)
	}
	if lr = c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "consumer-empty", MemberID: "gone", MemberEpoch: LeaveEpoch}); lr.Err != nil {
		t.Fatal(lr.Err)
	}
	sr := c.StreamsHeartbeat(streamsJoin("sm", "p1", wordCount()))
	if sr.Err != nil {
		t.Fatal(sr.Err)
	}
	cf.streamsEpoch = sr.MemberEpoch
	return cf
}

// TestCommitValidation is the table of Kafka 4.4's committer checks
// (group-coordinator OffsetMetadataManager.validateTransactionalOffsetCommit
// and validateOffsetCommit, then ClassicGroup / ConsumerGroup /
// StreamsGroup / ShareGroup validateOffsetCommit), for TxnOffsetCommit
// before and from v6 (KIP-1319 errors) and for OffsetCommit before and
// from v9 (KIP-848 errors). v0-2 of TxnOffsetCommit carry no member
// fields: they decode to member "", no instance id, generation -1, the
// rows marked "v0-2 shape".
func TestCommitValidation(t *testing.T) {
	cf := newCommitFixture(t)
	inst := func(s string) *string { return &s }
	type row struct {
		name       string
		group      string
		member     string
		instance   *string
		generation int32
		txn, v6v9  bool // TxnOffsetCommit (else OffsetCommit); v6+ resp. v9+
		want       error
		rule       string
	}
	// every (txn, version) pair for rows that do not depend on them
	all := func(r row) []row {
		var out []row
		for _, txn := range []bool{true, false} {
			for _, nv := range []bool{false, true} {
				r.txn, r.v6v9 = txn, nv
				out = append(out, r)
			}
		}
		return out
	}
	txnBoth := func(r row) []row {
		a, b := r, r
		a.txn, b.txn, b.v6v9 = true, true, true
		return []row{a, b}
	}
	var rows []row
	add := func(rs ...row) { rows = append(rows, rs...) }
	addAll := func(rs []row) { rows = append(rows, rs...) }

	// Classic groups.
	addAll(txnBoth(row{name: "stable, no member (v0-2 shape)", group: "stable", generation: -1,
		rule: "ClassicGroup: gen<0, member \"\", no instance id: a transactional commit skips the member checks"}))
	add(row{name: "stable, no member, OffsetCommit", group: "stable", generation: -1, want: ErrUnknownMemberID,
		rule: "ClassicGroup: without member, a non-transactional commit only while Empty"})
	addAll(all(row{name: "stable, member at its generation", group: "stable", member: cf.stableMember, generation: cf.stableGen}))
	addAll(all(row{name: "stable, member at a wrong generation", group: "stable", member: cf.stableMember, generation: cf.stableGen + 1, want: ErrIllegalGeneration,
		rule: "ClassicGroup: generationId != group generation"}))
	addAll(all(row{name: "stable, unknown member", group: "stable", member: "ghost", generation: cf.stableGen, want: ErrUnknownMemberID,
		rule: "ClassicGroup.validateMember: !hasMember"}))
	addAll(all(row{name: "stable, member id with generation -1", group: "stable", member: cf.stableMember, generation: -1, want: ErrIllegalGeneration,
		rule: "ClassicGroup: a member id makes it a member commit, checked against the generation"}))
	addAll(all(row{name: "stable, instance id without member id", group: "stable", instance: inst("inst-1"), generation: -1, want: ErrUnknownMemberID,
		rule: "ClassicGroup.validateMember: no static member with that instance id"}))
	addAll(all(row{name: "stable, empty instance id", group: "stable", instance: inst(""), generation: -1, want: ErrUnknownMemberID,
		rule: "ClassicGroup: a non-null instance id (even \"\") is a member commit"}))
	addAll(all(row{name: "static member", group: "static", member: cf.staticMember, instance: inst("inst-1"), generation: cf.staticGen}))
	addAll(all(row{name: "static instance, other member id", group: "static", member: "other", instance: inst("inst-1"), generation: cf.staticGen, want: ErrFencedInstanceID,
		rule: "ClassicGroup.validateMember: the instance id belongs to another member"}))
	addAll(all(row{name: "static member without its instance id", group: "static", member: cf.staticMember, generation: cf.staticGen}))
	addAll(txnBoth(row{name: "completing rebalance, no member", group: "completing", generation: -1,
		rule: "ClassicGroup: the rebalance state is not enforced for transactional commits"}))
	addAll(txnBoth(row{name: "completing rebalance, member", group: "completing", member: cf.completingMember, generation: cf.completingGen,
		rule: "ClassicGroup: REBALANCE_IN_PROGRESS is for OffsetCommit only"}))
	add(row{name: "completing rebalance, member, OffsetCommit", group: "completing", member: cf.completingMember, generation: cf.completingGen, want: ErrRebalanceInProgress,
		rule: "ClassicGroup: !isTransactional && CompletingRebalance"},
		row{name: "completing rebalance, member, OffsetCommit v9", group: "completing", member: cf.completingMember, generation: cf.completingGen, v6v9: true, want: ErrRebalanceInProgress,
			rule: "ClassicGroup: !isTransactional && CompletingRebalance"})
	addAll(all(row{name: "completing rebalance, unknown member", group: "completing", member: "ghost", generation: cf.completingGen, want: ErrUnknownMemberID,
		rule: "ClassicGroup: the member is checked before the state"}))
	addAll(txnBoth(row{name: "preparing rebalance, no member", group: "preparing", generation: -1}))
	addAll(all(row{name: "preparing rebalance, member at the old generation", group: "preparing", member: cf.preparingMember, generation: cf.preparingGen,
		rule: "ClassicGroup: only CompletingRebalance is refused, PreparingRebalance commits with the current generation"}))
	addAll(all(row{name: "empty, no member", group: "empty", generation: -1,
		rule: "ClassicGroup: gen<0 && Empty"}))
	addAll(all(row{name: "empty, departed member id with generation -1", group: "empty", member: "whoever", generation: -1,
		rule: "ClassicGroup: gen<0 && Empty is accepted before any member check"}))
	addAll(all(row{name: "empty, member generation", group: "empty", member: "whoever", generation: 1, want: ErrUnknownMemberID}))
	addAll(all(row{name: "offsets only, no member", group: "simple", generation: -1,
		rule: "a group with only offsets is an Empty classic group (OffsetMetadataManager.replay creates it)"}))
	addAll(all(row{name: "offsets only, member generation", group: "simple", member: "m", generation: 0, want: ErrUnknownMemberID}))
	addAll(all(row{name: "staged offsets only, member generation", group: "pending", member: "m", generation: 0, want: ErrUnknownMemberID,
		rule: "the transactional commit that staged them created the simple group"}))

	// Groups that do not exist.
	// "fresh" rows get a group of their own: their commit creates it.
	addAll(all(row{name: "no group, no member", group: "fresh", generation: -1,
		rule: "group not found, gen<0: a simple group is created"}))
	addAll(all(row{name: "no group, member id with generation -1", group: "fresh", member: "m", instance: inst("i"), generation: -1,
		rule: "group not found, gen<0: created whatever the member id"}))
	add(row{name: "no group, member generation, TxnOffsetCommit v0-5", group: "none", member: "m", generation: 3, txn: true, want: ErrIllegalGeneration,
		rule: "group not found, gen>=0, !supportsGroupIdNotFoundError(version<6)"},
		row{name: "no group, member generation, TxnOffsetCommit v6", group: "none", member: "m", generation: 3, txn: true, v6v9: true, want: ErrGroupIDNotFound,
			rule: "group not found, gen>=0, version>=6"},
		row{name: "no group, member generation, OffsetCommit v8", group: "none", member: "m", generation: 3, want: ErrIllegalGeneration},
		row{name: "no group, member generation, OffsetCommit v9", group: "none", member: "m", generation: 3, v6v9: true, want: ErrGroupIDNotFound})
	addAll(all(row{name: "a share group's id", group: "share", generation: -1, want: ErrGroupIDNotFound,
		rule: "ShareGroup.validateOffsetCommit: \"Group %s is not a consumer group.\" (not converted by either API)"}))

	// KIP-848 consumer groups.
	addAll(txnBoth(row{name: "consumer, no member", group: "consumer", generation: -1,
		rule: "ConsumerGroup: isTransactional && epoch -1 && member \"\" && no instance id"}))
	add(row{name: "consumer, no member, OffsetCommit", group: "consumer", generation: -1, v6v9: true, want: ErrUnknownMemberID,
		rule: "ConsumerGroup: members present, member \"\" unknown"})
	addAll(txnBoth(row{name: "consumer, generation -2 without member", group: "consumer", generation: -2, want: ErrUnknownMemberID,
		rule: "ConsumerGroup: the no-member shortcut is for epoch -1 exactly"}))
	addAll(txnBoth(row{name: "consumer, instance id without member", group: "consumer", instance: inst("i"), generation: -1, want: ErrUnknownMemberID,
		rule: "ConsumerGroup: an instance id disables the shortcut"}))
	add(row{name: "consumer, member at its epoch, TxnOffsetCommit", group: "consumer", member: "cm", generation: cf.consumerEpoch, txn: true},
		row{name: "consumer, member at its epoch, TxnOffsetCommit v6", group: "consumer", member: "cm", generation: cf.consumerEpoch, txn: true, v6v9: true},
		row{name: "consumer, member at its epoch, OffsetCommit v9", group: "consumer", member: "cm", generation: cf.consumerEpoch, v6v9: true},
		row{name: "consumer, member, OffsetCommit v8", group: "consumer", member: "cm", generation: cf.consumerEpoch, want: ErrUnsupportedVersion,
			rule: "ConsumerGroup: OffsetCommit version 9 or above must be used by members using the consumer group protocol"},
		row{name: "consumer, newer epoch, TxnOffsetCommit v0-5", group: "consumer", member: "cm", generation: cf.consumerEpoch + 1, txn: true, want: ErrIllegalGeneration,
			rule: "STALE_MEMBER_EPOCH becomes ILLEGAL_GENERATION when !supportsStaleMemberEpochError(version<6)"},
		row{name: "consumer, newer epoch, TxnOffsetCommit v6", group: "consumer", member: "cm", generation: cf.consumerEpoch + 1, txn: true, v6v9: true, want: ErrStaleMemberEpoch},
		row{name: "consumer, newer epoch, OffsetCommit v9", group: "consumer", member: "cm", generation: cf.consumerEpoch + 1, v6v9: true, want: ErrStaleMemberEpoch})
	addAll(all(row{name: "consumer, unknown member", group: "consumer", member: "ghost", generation: 1, want: ErrUnknownMemberID}))
	addAll(all(row{name: "consumer, no members left", group: "consumer-empty", member: "gone", generation: -1,
		rule: "ConsumerGroup: epoch<0 && no members"}))
	addAll(all(row{name: "consumer, no members left, member epoch", group: "consumer-empty", member: "gone", generation: 3, want: ErrUnknownMemberID}))

	// Streams groups (KIP-1071).
	addAll(txnBoth(row{name: "streams, no member", group: "app", generation: -1,
		rule: "StreamsGroup: isTransactional && epoch -1 && member \"\" && no instance id"}))
	add(row{name: "streams, no member, OffsetCommit", group: "app", generation: -1, v6v9: true, want: ErrUnknownMemberID},
		row{name: "streams, member at its epoch, TxnOffsetCommit", group: "app", member: "sm", generation: cf.streamsEpoch, txn: true},
		row{name: "streams, member, OffsetCommit v8", group: "app", member: "sm", generation: cf.streamsEpoch, want: ErrUnsupportedVersion},
		row{name: "streams, newer epoch, TxnOffsetCommit v0-5", group: "app", member: "sm", generation: cf.streamsEpoch + 1, txn: true, want: ErrIllegalGeneration},
		row{name: "streams, newer epoch, TxnOffsetCommit v6", group: "app", member: "sm", generation: cf.streamsEpoch + 1, txn: true, v6v9: true, want: ErrStaleMemberEpoch})
	addAll(all(row{name: "streams, unknown member", group: "app", member: "ghost", generation: 1, want: ErrUnknownMemberID}))

	// A Dead group (Kafka keeps none in its map for long; sharq removes it
	// at once) refuses every commit.
	dead := &classicGroup{state: StateDead, members: map[string]*classicMember{}}
	for _, txn := range []bool{true, false} {
		if err := dead.validateOffsetCommitLocked(commitCheck{group: "dead", generation: -1, txn: txn}); !errors.Is(err, ErrCoordinatorNotAvailable) {
			t.Errorf("dead group, txn %v: %v, want COORDINATOR_NOT_AVAILABLE (ClassicGroup: isInState(DEAD))", txn, err)
		}
	}
	c := cf.f.c
	tp := TopicPartition{"t", 1}
	for i, r := range rows {
		if r.group == "fresh" {
			r.group = fmt.Sprintf("fresh-%d", i)
		}
		api := "OffsetCommit v<9"
		switch {
		case r.txn && r.v6v9:
			api = "TxnOffsetCommit v6"
		case r.txn:
			api = "TxnOffsetCommit v0-5"
		case r.v6v9:
			api = "OffsetCommit v9+"
		}
		t.Run(fmt.Sprintf("%s/%s", r.name, api), func(t *testing.T) {
			offs := map[TopicPartition]Offset{tp: {Offset: 7, LeaderEpoch: -1}}
			var err error
			if r.txn {
				_, err = c.TxnCommitOffsets(TxnCommitRequest{Group: r.group, ProducerID: 1, MemberID: r.member, InstanceID: r.instance,
					Generation: r.generation, Offsets: offs, KIP1319Errors: r.v6v9})
			} else {
				_, err = c.CommitOffsets(CommitRequest{Group: r.group, MemberID: r.member, InstanceID: r.instance,
					Generation: r.generation, Offsets: offs, StaleEpochError: r.v6v9})
			}
			if r.want == nil && err != nil || r.want != nil && !errors.Is(err, r.want) {
				t.Errorf("got %v, want %v (Kafka 4.4: %s)", err, r.want, r.rule)
			}
		})
	}
}
