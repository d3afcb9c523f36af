package broker_test

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"sharq/broker/brokertest"
)

// TestPartitionPlacementAdmin drives ElectLeaders, AlterPartitionReassignments
// and ListPartitionReassignments through franz-go's admin client (before
// sharq registered them, it closed the connection: "unsupported API key
// 45"). One node holds and leads every replica: elections are not needed,
// a move to the node itself is accepted, to another broker refused, and
// nothing is in progress; interop's placement scenarios hold the same
// answers against Kafka 4.4.
func TestPartitionPlacementAdmin(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "placed", 2, nil)
	node := b.Config.NodeID

	for _, how := range []kadm.ElectLeadersHow{kadm.ElectPreferredReplica, kadm.ElectLiveReplica} {
		res, err := adm.ElectLeaders(ctx, how, kadm.TopicsSet{"placed": {0: {}, 1: {}}, "absent": {0: {}}})
		if err != nil {
			t.Fatalf("ElectLeaders %v: %v", how, err)
		}
		for p := int32(0); p < 2; p++ {
			if r := res["placed"][p]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				t.Errorf("ElectLeaders %v placed-%d: %v %q, want ELECTION_NOT_NEEDED", how, p, r.Err, r.ErrMessage)
			}
		}
		if r := res["absent"][0]; !errors.Is(r.Err, kerr.UnknownTopicOrPartition) || r.ErrMessage != "No such topic as absent" {
			t.Errorf("ElectLeaders %v of an unknown topic: %v %q", how, r.Err, r.ErrMessage)
		}
	}

	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("placed", 0, []int32{node})
	req.Assign("placed", 1, []int32{node + 1})
	res, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatalf("AlterPartitionAssignments: %v", err)
	}
	if r := res["placed"][0]; r.Err != nil {
		t.Errorf("move to the node itself: %v %q", r.Err, r.ErrMessage)
	}
	if r := res["placed"][1]; !errors.Is(r.Err, kerr.InvalidReplicaAssignment) ||
		r.ErrMessage != "The manual partition assignment includes broker 2, but no such broker is registered." {
		t.Errorf("move to an unknown broker: %v %q", r.Err, r.ErrMessage)
	}
	var cancel kadm.AlterPartitionAssignmentsReq
	cancel.CancelAssign("placed", 0)
	if res, err = adm.AlterPartitionAssignments(ctx, cancel); err != nil || !errors.Is(res["placed"][0].Err, kerr.NoReassignmentInProgress) {
		t.Errorf("cancel: %v %+v", err, res)
	}
	list, err := adm.ListPartitionReassignments(ctx, nil)
	if err != nil || len(list) != 0 {
		t.Errorf("ListPartitionReassignments: %v %+v", err, list)
	}
	md, err := adm.Metadata(ctx, "placed")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range md.Topics["placed"].Partitions {
		if p.Leader != node || p.LeaderEpoch != 0 || len(p.Replicas) != 1 {
			t.Errorf("placed-%d after the no-op requests: leader %d epoch %d replicas %v", p.Partition, p.Leader, p.LeaderEpoch, p.Replicas)
		}
	}
}
