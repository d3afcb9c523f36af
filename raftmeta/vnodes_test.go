package raftmeta

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// TestNodeOutage drives what a 3-node controller does to a replication
// factor 3 topic when a node goes away and comes back, and direct leader
// moves, on three node ids over the same logs.
func TestNodeOutage(t *testing.T) {
	ctx := context.Background()
	v := newStore(t, Config{NodeID: 1, LocalNodes: []int32{1, 2, 3}})
	for id := int32(1); id <= 3; id++ {
		if err := v.RegisterBroker(ctx, Broker{NodeID: id, Host: "h", Port: 9000 + id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.CreateTopic(ctx, "t", 3, []int32{1, 2, 3}, nil); err != nil {
		t.Fatal(err)
	}
	parts := func() []Partition { return v.Image().Topics["t"].Partitions }
	check := func(step string, want []Partition) {
		t.Helper()
		if got := parts(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", step, got, want)
		}
	}
	check("created", []Partition{
		{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
		{Leader: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3, 1}},
		{Leader: 3, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1, 2}},
	})

	moved, err := v.NodeDown(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []LeaderChange{{Topic: "t", Partition: 1, From: 2, To: 3, ToEpoch: 1, ISR: []int32{3, 1}}}; !reflect.DeepEqual(moved, want) {
		t.Fatalf("moved %+v, want %+v", moved, want)
	}
	// The leader epoch moves only where the leader did.
	check("node 2 down", []Partition{
		{Leader: 1, PartitionEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}},
		{Leader: 3, LeaderEpoch: 1, PartitionEpoch: 1, Replicas: []int32{2, 3, 1}, ISR: []int32{3, 1}},
		{Leader: 3, PartitionEpoch: 1, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1}},
	})
	var pe *PartitionError
	if _, err := v.MoveLeader(ctx, "t", 0, 2); !errors.As(err, &pe) || pe.Code != codeInvalidReplicaAssignment {
		t.Fatalf("move to a stopped node: %v", err)
	}
	if err := v.NodeUp(ctx, 2); err != nil {
		t.Fatal(err)
	}
	check("node 2 up", []Partition{
		{Leader: 1, PartitionEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
		{Leader: 3, LeaderEpoch: 1, PartitionEpoch: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3, 1}},
		{Leader: 3, PartitionEpoch: 2, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1, 2}},
	})
	if moved, err := v.MoveLeader(ctx, "t", 1, 2); err != nil || !moved {
		t.Fatalf("move back: %v %v", moved, err)
	}
	if moved, err := v.MoveLeader(ctx, "t", 1, 2); err != nil || moved {
		t.Fatalf("move to the leader: %v %v", moved, err)
	}
	if p := parts()[1]; p.Leader != 2 || p.LeaderEpoch != 2 {
		t.Fatalf("after the move: %+v", p)
	}
	for _, c := range []struct {
		topic string
		part  int32
		node  int32
		code  int16
	}{
		{"nope", 0, 1, codeUnknownTopicOrPartition},
		{"t", 3, 1, codeUnknownTopicOrPartition},
		{"t", 0, 4, codeInvalidReplicaAssignment},
	} {
		if _, err := v.MoveLeader(ctx, c.topic, c.part, c.node); !errors.As(err, &pe) || pe.Code != c.code {
			t.Errorf("move %s-%d to %d: %v, want code %d", c.topic, c.part, c.node, err, c.code)
		}
	}

	// Two nodes down: the last in-sync replica keeps every partition.
	if _, err := v.NodeDown(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := v.NodeDown(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for i, p := range parts() {
		if p.Leader != 2 || !reflect.DeepEqual(p.ISR, []int32{2}) {
			t.Fatalf("partition %d with only node 2 up: %+v", i, p)
		}
	}

	// A process that now serves four node ids spreads every partition
	// over them, all in sync, leaders kept.
	v2 := newStore(t, Config{NodeID: 1, LocalNodes: []int32{1, 2, 3, 4}})
	if _, err := v2.CreateTopic(ctx, "u", 2, []int32{1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := v2.SpreadReplicas(ctx, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	want := []Partition{
		{Leader: 1, PartitionEpoch: 1, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3, 4}},
		{Leader: 1, LeaderEpoch: 0, PartitionEpoch: 1, Replicas: []int32{2, 3, 4, 1}, ISR: []int32{2, 3, 4, 1}},
	}
	if got := v2.Image().Topics["u"].Partitions; !reflect.DeepEqual(got, want) {
		t.Fatalf("spread:\n got %+v\nwant %+v", got, want)
	}
	if err := v2.SpreadReplicas(ctx, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if got := v2.Image().Topics["u"].Partitions; !reflect.DeepEqual(got, want) {
		t.Fatalf("spread twice changed it: %+v", got)
	}
}
