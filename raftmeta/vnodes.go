package raftmeta

// Virtual brokers (sharq.virtual.brokers): the placement changes a 3-node
// Kafka controller makes when a broker goes away or comes back, and the
// direct leader moves a test asks for, planned on the image (plan*: pure
// functions) and applied as one alter-partitions command each, so the
// leader epoch is bumped exactly where Kafka bumps it (a new leader) and an
// ISR change bumps only the partition epoch (Kafka 3.6+ does not bump the
// leader epoch on an ISR shrink or expansion).
//
// Every replica shares the partition's one log, so a replica that is up is
// in sync by construction: the ISR of a partition is its replicas that are
// up, and a leader can move to any of them without losing an acknowledged
// record.

import (
	"context"
	"errors"
	"slices"
)

// LeaderChange is one partition whose leader a node change moved.
type LeaderChange struct {
	Topic      string
	Partition  int32
	From, To   int32
	ToEpoch    int32 // the new leader epoch
	ISR        []int32
	Unassigned bool // no replica left to lead: the leader stayed (see NodeDown)
}

// NodeDown takes node out of every ISR and moves each leadership it holds
// to the first replica (in replica order) that is still in the ISR, as
// Kafka's controller does when a broker's registration is fenced. A
// partition with no other replica in its ISR keeps its leader (sharq never
// leaves a partition without one); it is reported Unassigned.
func (s *Store) NodeDown(ctx context.Context, node int32) ([]LeaderChange, error) {
	return s.applyNodeChanges(ctx, func(img *Image) []partitionChange { return planNodeDown(img, node) })
}

// NodeUp puts node back into the ISR of every partition it is a replica
// of. Leadership stays where it is, as on Kafka until a preferred leader
// election (auto.leader.rebalance.enable's periodic one, or ElectLeaders)
// moves it back.
func (s *Store) NodeUp(ctx context.Context, node int32) error {
	_, err := s.applyNodeChanges(ctx, func(img *Image) []partitionChange { return planNodeUp(img, node) })
	return err
}

// MoveLeader makes node the leader of topic's partition. It must be an
// in-sync replica (a *PartitionError otherwise, with Kafka's codes:
// UNKNOWN_TOPIC_OR_PARTITION, or INVALID_REPLICA_ASSIGNMENT naming why).
// Moving to the current leader changes nothing and reports moved false.
func (s *Store) MoveLeader(ctx context.Context, topic string, partition, node int32) (moved bool, err error) {
	var planErr error
	ch, err := s.applyNodeChanges(ctx, func(img *Image) []partitionChange {
		var c []partitionChange
		c, planErr = planMoveLeader(img, topic, partition, node)
		return c
	})
	if planErr != nil {
		return false, planErr
	}
	return len(ch) > 0, err
}

// SpreadReplicas makes every partition's replicas exactly nodes (rotated by
// the partition index, as CreateTopic places them), all in sync: what a
// process serving nodes starts with, whichever node count it had before.
// A leader that is still one of nodes keeps its leadership.
func (s *Store) SpreadReplicas(ctx context.Context, nodes []int32) error {
	_, err := s.applyNodeChanges(ctx, func(img *Image) []partitionChange { return planSpread(img, nodes) })
	return err
}

// applyNodeChanges plans on the current image and applies the changes as
// one command, planning again if the image moved underneath.
func (s *Store) applyNodeChanges(ctx context.Context, plan func(*Image) []partitionChange) ([]LeaderChange, error) {
	for attempt := 0; ; attempt++ {
		img := s.Image()
		changes := plan(img)
		if len(changes) == 0 {
			return nil, nil
		}
		_, err := s.propose(ctx, &alterPartitionsCmd{Changes: changes})
		if isStale(err) && attempt < proposeRetries {
			continue
		}
		if err != nil {
			return nil, err
		}
		var out []LeaderChange
		after := s.Image()
		for _, c := range changes {
			prev := img.Topics[c.Topic].Partitions[c.Partition]
			if prev.Leader == c.Leader {
				continue
			}
			lc := LeaderChange{Topic: c.Topic, Partition: c.Partition, From: prev.Leader, To: c.Leader, ISR: c.ISR}
			if t := after.Topics[c.Topic]; t != nil && int(c.Partition) < len(t.Partitions) {
				lc.ToEpoch = t.Partitions[c.Partition].LeaderEpoch
			}
			out = append(out, lc)
		}
		return out, nil
	}
}

func isStale(err error) bool { return errors.Is(err, errStaleProposal) }

// eachPartition calls f for every partition of every topic in name order.
func eachPartition(img *Image, f func(t *Topic, p int32, cur Partition)) {
	for _, name := range sortedKeys(img.Topics) {
		t := img.Topics[name]
		for i, p := range t.Partitions {
			f(t, int32(i), p)
		}
	}
}

func planNodeDown(img *Image, node int32) []partitionChange {
	var changes []partitionChange
	eachPartition(img, func(t *Topic, p int32, cur Partition) {
		if !slices.Contains(cur.ISR, node) && cur.Leader != node {
			return
		}
		isr := slices.DeleteFunc(slices.Clone(cur.ISR), func(id int32) bool { return id == node })
		leader := cur.Leader
		if leader == node {
			leader = -1
			for _, r := range cur.Replicas {
				if slices.Contains(isr, r) {
					leader = r
					break
				}
			}
		}
		if leader < 0 || len(isr) == 0 {
			return // the last in-sync replica: it keeps the partition
		}
		changes = append(changes, partitionChange{Topic: t.Name, ID: t.ID, Partition: p, PartitionEpoch: cur.PartitionEpoch,
			Leader: leader, Replicas: cur.Replicas, ISR: isr})
	})
	return changes
}

func planNodeUp(img *Image, node int32) []partitionChange {
	var changes []partitionChange
	eachPartition(img, func(t *Topic, p int32, cur Partition) {
		if !slices.Contains(cur.Replicas, node) || slices.Contains(cur.ISR, node) {
			return
		}
		// The ISR in replica order, as it was before the node left.
		var isr []int32
		for _, r := range cur.Replicas {
			if r == node || slices.Contains(cur.ISR, r) {
				isr = append(isr, r)
			}
		}
		changes = append(changes, partitionChange{Topic: t.Name, ID: t.ID, Partition: p, PartitionEpoch: cur.PartitionEpoch,
			Leader: cur.Leader, Replicas: cur.Replicas, ISR: isr})
	})
	return changes
}

func planMoveLeader(img *Image, topic string, partition, node int32) ([]partitionChange, error) {
	t := img.Topics[topic]
	if t == nil {
		return nil, partitionError(codeUnknownTopicOrPartition, "No such topic as %s", topic)
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return nil, partitionError(codeUnknownTopicOrPartition, "No such partition as %s-%d", topic, partition)
	}
	cur := t.Partitions[partition]
	switch {
	case !slices.Contains(cur.Replicas, node):
		return nil, partitionError(codeInvalidReplicaAssignment, "Node %d is not a replica of %s-%d (replicas %v).", node, topic, partition, cur.Replicas)
	case !slices.Contains(cur.ISR, node):
		return nil, partitionError(codeInvalidReplicaAssignment, "Node %d is not in the ISR of %s-%d (isr %v): it is stopped.", node, topic, partition, cur.ISR)
	case cur.Leader == node:
		return nil, nil
	}
	return []partitionChange{{Topic: t.Name, ID: t.ID, Partition: partition, PartitionEpoch: cur.PartitionEpoch,
		Leader: node, Replicas: cur.Replicas, ISR: cur.ISR}}, nil
}

func planSpread(img *Image, nodes []int32) []partitionChange {
	want := slices.Clone(nodes)
	slices.Sort(want)
	var changes []partitionChange
	eachPartition(img, func(t *Topic, p int32, cur Partition) {
		have := slices.Clone(cur.Replicas)
		slices.Sort(have)
		isr := slices.Clone(cur.ISR)
		slices.Sort(isr)
		if slices.Equal(have, want) && slices.Equal(isr, want) {
			return
		}
		replicas := cur.Replicas
		if !slices.Equal(have, want) {
			replicas = rotate(want, int(p))
		}
		leader := cur.Leader
		if !slices.Contains(replicas, leader) {
			leader = replicas[0]
		}
		changes = append(changes, partitionChange{Topic: t.Name, ID: t.ID, Partition: p, PartitionEpoch: cur.PartitionEpoch,
			Leader: leader, Replicas: replicas, ISR: slices.Clone(replicas)})
	})
	return changes
}
