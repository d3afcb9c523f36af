package raftmeta

import (
	"errors"
	"reflect"
	"testing"
)

// placementImage has brokers 1-3 and 5 registered, and topic "t" whose
// partitions are in every situation an election can meet.
func placementImage() *Image {
	img := emptyImage()
	img.Brokers = map[int32]Broker{1: {NodeID: 1}, 2: {NodeID: 2}, 3: {NodeID: 3}, 5: {NodeID: 5}}
	t := &Topic{Name: "t", ID: UUID{9}, Partitions: []Partition{
		{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},                  // 0: preferred leads
		{Leader: 2, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, LeaderEpoch: 4},  // 1: preferred in ISR, not leading
		{Leader: 2, Replicas: []int32{1, 2}, ISR: []int32{2}},                     // 2: preferred out of the ISR
		{Leader: -1, Replicas: []int32{3, 1}, ISR: []int32{}, PartitionEpoch: 2},  // 3: no leader, empty ISR
		{Leader: -1, Replicas: []int32{4}, ISR: []int32{4}},                       // 4: no leader, replica not registered
		{Leader: -1, Replicas: []int32{1, 3}, ISR: []int32{3}, PartitionEpoch: 1}, // 5: no leader, ISR has 3
	}}
	img.Topics = map[string]*Topic{"t": t}
	img.TopicsByID = map[UUID]*Topic{t.ID: t}
	return img
}

func codeOf(err error) int16 {
	var pe *PartitionError
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestPlanElections: Kafka 4.4's ReplicationControlManager.electLeader on
// the partitions of placementImage, with brokers 1-3 sharing the logs.
func TestPlanElections(t *testing.T) {
	local := []int32{1, 2, 3}
	img := placementImage()
	all := []int32{0, 1, 2, 3, 4, 5, 9}
	pref, changes := planElections(img, local, PreferredElection, []TopicPartitions{{"t", all}, {"nope", []int32{0}}})
	wantPref := []int16{codeElectionNotNeeded, 0, codePreferredLeaderNotAvailable, codePreferredLeaderNotAvailable,
		codePreferredLeaderNotAvailable, codePreferredLeaderNotAvailable, codeUnknownTopicOrPartition}
	for i, r := range pref[0].Partitions {
		if codeOf(r.Err) != wantPref[i] || r.Partition != all[i] {
			t.Errorf("preferred election of t-%d: %d %v, want code %d", all[i], r.Partition, r.Err, wantPref[i])
		}
	}
	if pref[1].Topic != "nope" || codeOf(pref[1].Partitions[0].Err) != codeUnknownTopicOrPartition || pref[1].Partitions[0].Err.Error() != "No such topic as nope" {
		t.Errorf("unknown topic: %+v", pref[1])
	}
	if pref[0].Partitions[6].Err.Error() != "No such partition as t-9" {
		t.Errorf("unknown partition message: %v", pref[0].Partitions[6].Err)
	}
	want := []partitionChange{{Topic: "t", ID: UUID{9}, Partition: 1, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("preferred changes %+v, want %+v", changes, want)
	}

	unclean, changes := planElections(img, local, UncleanElection, []TopicPartitions{{"t", all}})
	wantUnclean := []int16{codeElectionNotNeeded, codeElectionNotNeeded, codeElectionNotNeeded, 0, codeEligibleLeadersNotAvailable, 0, codeUnknownTopicOrPartition}
	for i, r := range unclean[0].Partitions {
		if codeOf(r.Err) != wantUnclean[i] {
			t.Errorf("unclean election of t-%d: %v, want code %d", all[i], r.Err, wantUnclean[i])
		}
	}
	want = []partitionChange{
		// nothing in the ISR: the first replica that can lead, alone in the ISR
		{Topic: "t", ID: UUID{9}, Partition: 3, PartitionEpoch: 2, Leader: 3, Replicas: []int32{3, 1}, ISR: []int32{3}},
		// the first of the ISR that can lead, ISR unchanged
		{Topic: "t", ID: UUID{9}, Partition: 5, PartitionEpoch: 1, Leader: 3, Replicas: []int32{1, 3}, ISR: []int32{3}},
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("unclean changes %+v, want %+v", changes, want)
	}

	// Only the node itself shares the logs: 2 cannot take over.
	if _, changes := planElections(img, []int32{1}, UncleanElection, []TopicPartitions{{"t", []int32{5}}}); len(changes) != 1 || changes[0].Leader != 1 {
		t.Errorf("unclean election with only node 1 local: %+v", changes)
	}

	// Every partition: not-needed ones are left out, every topic listed.
	res, _ := planElections(img, local, PreferredElection, nil)
	if len(res) != 1 || res[0].Topic != "t" || len(res[0].Partitions) != 5 {
		t.Fatalf("all partitions: %+v", res)
	}
	for _, r := range res[0].Partitions {
		if r.Partition == 0 {
			t.Errorf("partition 0 needs no election but is listed: %+v", r)
		}
	}
}

// TestPlanReassignments: Kafka 4.4's alterPartitionReassignment and
// validateManualPartitionAssignment, in their order, plus sharq's refusal
// of a registered node that does not share the logs (broker 5).
func TestPlanReassignments(t *testing.T) {
	local := []int32{1, 2, 3}
	img := placementImage()
	req := []TopicReassignments{
		{"nope", []Reassignment{{0, []int32{1}}}},
		{"t", []Reassignment{
			{9, []int32{1}},
			{0, nil},
			{0, []int32{}},
			{0, []int32{9, 1}},
			{0, []int32{5}},
			{0, []int32{2, 2}},
			{0, []int32{1, 2}},
			{1, []int32{2, 1}},
			{2, []int32{3}},
		}},
	}
	type want struct {
		code int16
		msg  string
	}
	wants := [][]want{
		{{codeUnknownTopicOrPartition, "Unable to find a topic named nope."}},
		{
			{codeUnknownTopicOrPartition, "Unable to find partition t:9."},
			{codeNoReassignmentInProgress, "kafka error code 85"},
			{codeInvalidReplicaAssignment, "The manual partition assignment includes an empty replica list."},
			{codeInvalidReplicaAssignment, "The manual partition assignment includes broker 9, but no such broker is registered."},
			{codeInvalidReplicaAssignment, "The manual partition assignment includes broker 5, which does not serve this node's partition logs: sharq moves leadership between the node ids of one process, it does not copy partitions between processes."},
			{codeInvalidReplicaAssignment, "The manual partition assignment includes the broker 2 more than once."},
			{0, ""}, // the current replicas: accepted, nothing to do
			{0, ""}, // reordered: the leader stays
			{0, ""}, // moved away from the leader
		},
	}
	res, changes := planReassignments(img, local, req, true)
	for i, tr := range res {
		for j, r := range tr.Partitions {
			w := wants[i][j]
			msg := ""
			if r.Err != nil {
				msg = r.Err.Error()
			}
			if codeOf(r.Err) != w.code || msg != w.msg {
				t.Errorf("%s-%d: %d %q, want %d %q", tr.Topic, r.Partition, codeOf(r.Err), msg, w.code, w.msg)
			}
		}
	}
	wantChanges := []partitionChange{
		{Topic: "t", ID: UUID{9}, Partition: 1, Leader: 2, Replicas: []int32{2, 1}, ISR: []int32{2, 1}},
		{Topic: "t", ID: UUID{9}, Partition: 2, Leader: 3, Replicas: []int32{3}, ISR: []int32{3}},
	}
	if !reflect.DeepEqual(changes, wantChanges) {
		t.Errorf("changes %+v, want %+v", changes, wantChanges)
	}

	// v1 without replication factor changes (KIP-860).
	res, changes = planReassignments(img, local, []TopicReassignments{{"t", []Reassignment{{0, []int32{3}}, {0, []int32{2, 3}}}}}, false)
	if codeOf(res[0].Partitions[0].Err) != codeInvalidReplicationFactor || res[0].Partitions[0].Err.Error() != "The replication factor is changed from 2 to 1" ||
		res[0].Partitions[1].Err != nil || len(changes) != 1 {
		t.Errorf("allowRFChange=false: %+v %+v", res, changes)
	}
}

// TestAlterPartitionsApply: the command bumps the partition epoch on every
// change and the leader epoch when the leader changes or a replica goes,
// refuses a plan made against an older epoch, and applies all or nothing.
func TestAlterPartitionsApply(t *testing.T) {
	img := placementImage()
	b := newBuilder(img)
	c := &alterPartitionsCmd{Changes: []partitionChange{
		{Topic: "t", ID: UUID{9}, Partition: 1, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
		{Topic: "t", ID: UUID{9}, Partition: 0, Leader: 1, Replicas: []int32{2, 1}, ISR: []int32{2, 1}},
		{Topic: "t", ID: UUID{9}, Partition: 2, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
	}}
	if err := c.apply(b); err != nil {
		t.Fatal(err)
	}
	got := b.img.Topics["t"].Partitions
	for p, w := range []Partition{
		{Leader: 1, Replicas: []int32{2, 1}, ISR: []int32{2, 1}, PartitionEpoch: 1},                 // reordered: leader epoch kept
		{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, LeaderEpoch: 5, PartitionEpoch: 1}, // new leader
		{Leader: 1, Replicas: []int32{1}, ISR: []int32{1}, LeaderEpoch: 1, PartitionEpoch: 1},       // 2 removed, new leader
	} {
		if !reflect.DeepEqual(got[p], w) {
			t.Errorf("partition %d: %+v, want %+v", p, got[p], w)
		}
	}
	if img.Topics["t"].Partitions[1].Leader != 2 {
		t.Error("the base image changed")
	}
	stale := &alterPartitionsCmd{Changes: []partitionChange{
		{Topic: "t", ID: UUID{9}, Partition: 4, Leader: 4, Replicas: []int32{4}, ISR: []int32{4}},
		{Topic: "t", ID: UUID{9}, Partition: 3, PartitionEpoch: 1, Leader: 3, Replicas: []int32{3}, ISR: []int32{3}},
	}}
	b = newBuilder(img)
	if err := stale.apply(b); err != errStaleProposal || b.img.Topics["t"].Partitions[4].Leader != -1 {
		t.Errorf("stale plan: %v, partition 4 %+v", err, b.img.Topics["t"].Partitions[4])
	}
	other := &alterPartitionsCmd{Changes: []partitionChange{{Topic: "t", ID: UUID{8}, Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}}
	if err := other.apply(newBuilder(img)); err != errStaleProposal {
		t.Errorf("plan for a recreated topic: %v", err)
	}
	bad := &alterPartitionsCmd{Changes: []partitionChange{{Topic: "t", ID: UUID{9}, Partition: 0, Leader: 3, Replicas: []int32{1}, ISR: []int32{1}}}}
	if err := bad.apply(newBuilder(img)); !errors.Is(err.(error), ErrInvalidReplicaAssignment) {
		t.Errorf("leader outside the replicas: %v", err)
	}
}

// TestStorePlacement drives the Store calls: on a single node every valid
// request is a no-op (elections not needed, a reassignment to the node
// itself accepted without a change); with node ids that share the logs a
// reassignment and an election move leadership through raft.
func TestStorePlacement(t *testing.T) {
	ctx := testCtx(t)
	s := newStore(t, Config{NodeID: 1})
	if err := s.RegisterBroker(ctx, Broker{NodeID: 1, Host: "h", Port: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTopic(ctx, "one", 2, []int32{1}, nil); err != nil {
		t.Fatal(err)
	}
	before := s.Image().AppliedIndex
	res, err := s.ElectLeaders(ctx, PreferredElection, []TopicPartitions{{"one", []int32{0, 1}}})
	if err != nil || len(res) != 1 || codeOf(res[0].Partitions[0].Err) != codeElectionNotNeeded || codeOf(res[0].Partitions[1].Err) != codeElectionNotNeeded {
		t.Fatalf("elect: %+v %v", res, err)
	}
	if res, err = s.ElectLeaders(ctx, UncleanElection, nil); err != nil || len(res) != 1 || len(res[0].Partitions) != 0 {
		t.Fatalf("elect all: %+v %v", res, err)
	}
	if _, err := s.ElectLeaders(ctx, 2, nil); codeOf(err) != codeInvalidRequest || err.Error() != "Unknown election type 2" {
		t.Fatalf("unknown election type: %v", err)
	}
	ar, err := s.AlterPartitionReassignments(ctx, []TopicReassignments{{"one", []Reassignment{{0, []int32{1}}, {1, []int32{2}}}}}, true)
	if err != nil || ar[0].Partitions[0].Err != nil || codeOf(ar[0].Partitions[1].Err) != codeInvalidReplicaAssignment {
		t.Fatalf("reassign: %+v %v", ar, err)
	}
	if s.Image().AppliedIndex != before {
		t.Errorf("no-op requests wrote to the metadata log (index %d -> %d)", before, s.Image().AppliedIndex)
	}
	if l := s.ListPartitionReassignments(nil); len(l) != 0 {
		t.Errorf("reassignments in progress: %+v", l)
	}

	// Three node ids over the same logs (virtual brokers).
	v := newStore(t, Config{NodeID: 1, LocalNodes: []int32{1, 2, 3}})
	for id := int32(1); id <= 3; id++ {
		if err := v.RegisterBroker(ctx, Broker{NodeID: id, Host: "h", Port: 9000 + id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.CreateTopic(ctx, "three", 1, []int32{1, 2, 3}, nil); err != nil {
		t.Fatal(err)
	}
	if ar, err := v.AlterPartitionReassignments(ctx, []TopicReassignments{{"three", []Reassignment{{0, []int32{3, 2}}}}}, true); err != nil || ar[0].Partitions[0].Err != nil {
		t.Fatalf("reassign to 3,2: %+v %v", ar, err)
	}
	p := v.Image().Topics["three"].Partitions[0]
	if want := (Partition{Leader: 3, LeaderEpoch: 1, PartitionEpoch: 1, Replicas: []int32{3, 2}, ISR: []int32{3, 2}}); !reflect.DeepEqual(p, want) {
		t.Fatalf("after reassignment: %+v, want %+v", p, want)
	}
	// Reordered with the leader kept: the preferred replica (2) is then
	// elected.
	if _, err := v.AlterPartitionReassignments(ctx, []TopicReassignments{{"three", []Reassignment{{0, []int32{2, 3}}}}}, false); err != nil {
		t.Fatal(err)
	}
	if res, err := v.ElectLeaders(ctx, PreferredElection, []TopicPartitions{{"three", []int32{0}}}); err != nil || res[0].Partitions[0].Err != nil {
		t.Fatalf("preferred election: %+v %v", res, err)
	}
	p = v.Image().Topics["three"].Partitions[0]
	if want := (Partition{Leader: 2, LeaderEpoch: 2, PartitionEpoch: 3, Replicas: []int32{2, 3}, ISR: []int32{2, 3}}); !reflect.DeepEqual(p, want) {
		t.Fatalf("after election: %+v, want %+v", p, want)
	}
}
