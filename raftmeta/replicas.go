package raftmeta

// Partition leadership and replica placement: Kafka's ElectLeaders and
// partition reassignments (ReplicationControlManager.electLeaders,
// alterPartitionReassignments, listPartitionReassignments in Kafka 4.4),
// decided on the metadata image by plan* functions and applied as one
// alter-partitions command.
//
// sharq keeps one log per partition, in one process. A replica set may
// therefore only name node ids that this process serves over those logs
// (Config.LocalNodes: this node alone, or the virtual brokers that share its
// logs); for them every replica is in sync by construction, so a
// reassignment completes when it is accepted and an election never waits
// for a replica to catch up. A node that is registered but runs elsewhere
// would need the data copied, which sharq does not do: such a target is
// refused. With a single node every valid request is a no-op (the node
// already holds and leads every replica): elections answer
// ELECTION_NOT_NEEDED, a reassignment to the node itself is accepted with
// nothing to change, and no reassignment is ever in progress.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ElectionType is ElectLeaders' election type.
type ElectionType int8

const (
	PreferredElection ElectionType = 0
	UncleanElection   ElectionType = 1
)

// PartitionError is a per-partition (or per-request) refusal with the Kafka
// error code and the message Kafka's controller gives; "" is no message
// (Kafka sends none where the exception carries only the code's default
// text).
type PartitionError struct {
	Code int16
	Msg  string
}

func (e *PartitionError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("kafka error code %d", e.Code)
	}
	return e.Msg
}

// Kafka error codes of the partition placement APIs.
var (
	codeUnknownTopicOrPartition     = kerr.UnknownTopicOrPartition.Code
	codeInvalidReplicationFactor    = kerr.InvalidReplicationFactor.Code
	codeInvalidReplicaAssignment    = kerr.InvalidReplicaAssignment.Code
	codeInvalidRequest              = kerr.InvalidRequest.Code
	codePreferredLeaderNotAvailable = kerr.PreferredLeaderNotAvailable.Code
	codeEligibleLeadersNotAvailable = kerr.EligibleLeadersNotAvailable.Code
	codeElectionNotNeeded           = kerr.ElectionNotNeeded.Code
	codeNoReassignmentInProgress    = kerr.NoReassignmentInProgress.Code
)

func partitionError(code int16, format string, args ...any) *PartitionError {
	return &PartitionError{code, fmt.Sprintf(format, args...)}
}

// TopicPartitions names partitions of one topic.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// PartitionResult is one partition's outcome; Err is nil when the
// election or reassignment is done, else a *PartitionError.
type PartitionResult struct {
	Partition int32
	Err       error
}

// TopicResults are the outcomes for one topic of a request, in request
// order.
type TopicResults struct {
	Topic      string
	Partitions []PartitionResult
}

// Reassignment is a target replica list for one partition; nil Replicas
// cancels the partition's reassignment in progress.
type Reassignment struct {
	Partition int32
	Replicas  []int32
}

// TopicReassignments are the reassignments of one topic.
type TopicReassignments struct {
	Topic      string
	Partitions []Reassignment
}

// OngoingReassignment is a partition whose replicas are moving.
type OngoingReassignment struct {
	Topic            string
	Partition        int32
	Replicas         []int32
	Adding, Removing []int32
}

// localNodes is the set of node ids whose replicas share this process's
// partition logs.
func (s *Store) localNodes() []int32 {
	if len(s.cfg.LocalNodes) > 0 {
		return s.cfg.LocalNodes
	}
	return []int32{s.cfg.NodeID}
}

// ElectLeaders runs leader elections (ElectLeaders). topics nil means every
// partition of every topic; then, as Kafka does, every topic gets an entry
// but partitions whose leader is already the one asked for are left out.
// An unknown election type fails the whole request (a *PartitionError
// with INVALID_REQUEST).
func (s *Store) ElectLeaders(ctx context.Context, typ ElectionType, topics []TopicPartitions) ([]TopicResults, error) {
	if typ != PreferredElection && typ != UncleanElection {
		return nil, partitionError(codeInvalidRequest, "Unknown election type %d", typ)
	}
	return s.planAndApply(ctx, func(img *Image) ([]TopicResults, []partitionChange) {
		return planElections(img, s.localNodes(), typ, topics)
	})
}

// AlterPartitionReassignments moves partitions to target replica lists
// (AlterPartitionReassignments). The accepted changes are applied together
// or not at all. allowRFChange false refuses a target whose length differs
// from the partition's replication factor (v1, KIP-860).
func (s *Store) AlterPartitionReassignments(ctx context.Context, topics []TopicReassignments, allowRFChange bool) ([]TopicResults, error) {
	return s.planAndApply(ctx, func(img *Image) ([]TopicResults, []partitionChange) {
		return planReassignments(img, s.localNodes(), topics, allowRFChange)
	})
}

// ListPartitionReassignments returns the reassignments in progress of the
// given partitions (topics nil: of every partition). sharq completes a
// reassignment in the command that accepts it (every replica shares the
// log), so the image never holds one in progress and the answer is empty,
// which is Kafka's answer when nothing moves. A placement that moves data
// in the background would list its moves here.
func (s *Store) ListPartitionReassignments(topics []TopicPartitions) []OngoingReassignment {
	return nil
}

// partitionChange is the new placement of one partition, planned against
// PartitionEpoch of the image the proposer read.
type partitionChange struct {
	Topic          string
	ID             UUID
	Partition      int32
	PartitionEpoch int32 // the epoch the change was planned against
	Leader         int32
	Replicas       []int32
	ISR            []int32
}

// planElections decides the elections of a request on img. Kafka elects
// the preferred replica (the first) if it is in the ISR and can lead; an
// unclean election is only for a partition without leader and takes the
// first replica of the ISR that can lead, else the first replica that can.
func planElections(img *Image, local []int32, typ ElectionType, topics []TopicPartitions) ([]TopicResults, []partitionChange) {
	var changes []partitionChange
	elect := func(name string, p int32) error {
		t := img.Topics[name]
		if t == nil {
			return partitionError(codeUnknownTopicOrPartition, "No such topic as %s", name)
		}
		if p < 0 || int(p) >= len(t.Partitions) {
			return partitionError(codeUnknownTopicOrPartition, "No such partition as %s-%d", name, p)
		}
		cur := t.Partitions[p]
		canLead := func(id int32) bool { _, ok := img.Brokers[id]; return ok && slices.Contains(local, id) }
		if typ == PreferredElection && len(cur.Replicas) > 0 && cur.Leader == cur.Replicas[0] ||
			typ == UncleanElection && cur.Leader >= 0 {
			return &PartitionError{codeElectionNotNeeded, "Leader election not needed for topic partition."}
		}
		next := partitionChange{Topic: name, ID: t.ID, Partition: p, PartitionEpoch: cur.PartitionEpoch,
			Leader: -1, Replicas: cur.Replicas, ISR: cur.ISR}
		switch typ {
		case PreferredElection:
			if pref := cur.Replicas[0]; slices.Contains(cur.ISR, pref) && canLead(pref) {
				next.Leader = pref
			}
		case UncleanElection:
			for _, r := range cur.ISR {
				if canLead(r) {
					next.Leader = r
					break
				}
			}
			if next.Leader < 0 {
				for _, r := range cur.Replicas {
					if canLead(r) {
						next.Leader, next.ISR = r, []int32{r}
						break
					}
				}
			}
		}
		if next.Leader < 0 {
			if typ == PreferredElection {
				return &PartitionError{codePreferredLeaderNotAvailable, "The preferred leader was not available."}
			}
			return &PartitionError{codeEligibleLeadersNotAvailable, "Eligible topic partition leaders are not available."}
		}
		changes = putChange(changes, next)
		return nil
	}
	var res []TopicResults
	if topics == nil {
		for _, name := range sortedKeys(img.Topics) {
			tr := TopicResults{Topic: name, Partitions: []PartitionResult{}}
			for p := range img.Topics[name].Partitions {
				err := elect(name, int32(p))
				var pe *PartitionError
				if errors.As(err, &pe) && pe.Code == codeElectionNotNeeded {
					continue
				}
				tr.Partitions = append(tr.Partitions, PartitionResult{int32(p), err})
			}
			res = append(res, tr)
		}
		return res, changes
	}
	for _, tp := range topics {
		tr := TopicResults{Topic: tp.Topic, Partitions: make([]PartitionResult, 0, len(tp.Partitions))}
		for _, p := range tp.Partitions {
			tr.Partitions = append(tr.Partitions, PartitionResult{p, elect(tp.Topic, p)})
		}
		res = append(res, tr)
	}
	return res, changes
}

// planReassignments decides a reassignment request on img, partition by
// partition in request order, as Kafka's alterPartitionReassignment and
// validateManualPartitionAssignment do (their checks and messages, in
// their order), plus sharq's own: every target replica must share this
// process's logs.
func planReassignments(img *Image, local []int32, topics []TopicReassignments, allowRFChange bool) ([]TopicResults, []partitionChange) {
	var changes []partitionChange
	reassign := func(name string, r Reassignment) error {
		t := img.Topics[name]
		if t == nil {
			return partitionError(codeUnknownTopicOrPartition, "Unable to find a topic named %s.", name)
		}
		if r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
			return partitionError(codeUnknownTopicOrPartition, "Unable to find partition %s:%d.", name, r.Partition)
		}
		cur := t.Partitions[r.Partition]
		if r.Replicas == nil {
			// Nothing is ever in progress (see the file comment). Kafka's
			// exception carries the code's default text: no message.
			return &PartitionError{Code: codeNoReassignmentInProgress}
		}
		if len(r.Replicas) == 0 {
			return &PartitionError{codeInvalidReplicaAssignment, "The manual partition assignment includes an empty replica list."}
		}
		sorted := slices.Clone(r.Replicas)
		slices.Sort(sorted)
		for i, id := range sorted {
			if _, ok := img.Brokers[id]; !ok {
				return partitionError(codeInvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", id)
			}
			if !slices.Contains(local, id) {
				return partitionError(codeInvalidReplicaAssignment, "The manual partition assignment includes broker %d, which does not serve this node's partition logs: sharq moves leadership between the node ids of one process, it does not copy partitions between processes.", id)
			}
			if i > 0 && sorted[i-1] == id {
				return partitionError(codeInvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", id)
			}
		}
		if !allowRFChange && len(r.Replicas) != len(cur.Replicas) {
			return partitionError(codeInvalidReplicationFactor, "The replication factor is changed from %d to %d", len(cur.Replicas), len(r.Replicas))
		}
		if slices.Equal(r.Replicas, cur.Replicas) {
			return nil
		}
		// Every target replica shares the log, so the reassignment is
		// complete at once: the replicas and the ISR are the target; the
		// leader stays if it is still a replica, else the first target
		// replica leads.
		next := partitionChange{Topic: name, ID: t.ID, Partition: r.Partition, PartitionEpoch: cur.PartitionEpoch,
			Leader: cur.Leader, Replicas: slices.Clone(r.Replicas), ISR: slices.Clone(r.Replicas)}
		if !slices.Contains(next.Replicas, next.Leader) {
			next.Leader = next.Replicas[0]
		}
		changes = putChange(changes, next)
		return nil
	}
	var res []TopicResults
	for _, tr := range topics {
		out := TopicResults{Topic: tr.Topic, Partitions: make([]PartitionResult, 0, len(tr.Partitions))}
		for _, r := range tr.Partitions {
			out.Partitions = append(out.Partitions, PartitionResult{r.Partition, reassign(tr.Topic, r)})
		}
		res = append(res, out)
	}
	return res, changes
}

// putChange adds c, replacing an earlier change of the same partition in
// the same request (the later one wins, as the later of Kafka's records
// does).
func putChange(changes []partitionChange, c partitionChange) []partitionChange {
	for i := range changes {
		if changes[i].ID == c.ID && changes[i].Partition == c.Partition {
			changes[i] = c
			return changes
		}
	}
	return append(changes, c)
}

// planAndApply plans a request on the current image and proposes its
// changes as one command; a plan that went stale before it applied is made
// again on the newer image.
func (s *Store) planAndApply(ctx context.Context, plan func(*Image) ([]TopicResults, []partitionChange)) ([]TopicResults, error) {
	for attempt := 0; ; attempt++ {
		res, changes := plan(s.Image())
		if len(changes) == 0 {
			return res, nil
		}
		_, err := s.propose(ctx, &alterPartitionsCmd{Changes: changes})
		if errors.Is(err, errStaleProposal) && attempt < proposeRetries {
			continue
		}
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// ---- alter partitions (command) ----

const cmdAlterPartitions cmdType = 21

func init() { registerCommand(cmdAlterPartitions, "alter-partitions", decodeAlterPartitions) }

// alterPartitionsCmd sets the leader, replicas and ISR of partitions. Each
// change names the partition epoch it was planned against; if any moved
// (or the topic was recreated) the whole command is refused with
// errStaleProposal and the proposer plans again. Applying bumps the
// partition epoch, and the leader epoch when the leader changes or a
// replica is removed (Kafka fences the removed replicas that way).
type alterPartitionsCmd struct {
	Changes []partitionChange
}

func (*alterPartitionsCmd) kind() cmdType { return cmdAlterPartitions }
func (*alterPartitionsCmd) version() byte { return 1 }
func (c *alterPartitionsCmd) appendPayload(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(c.Changes)))
	for _, ch := range c.Changes {
		b = appendString(b, ch.Topic)
		b = append(b, ch.ID[:]...)
		b = appendInt(b, int64(ch.Partition))
		b = appendInt(b, int64(ch.PartitionEpoch))
		b = appendInt(b, int64(ch.Leader))
		b = appendInt32s(b, ch.Replicas)
		b = appendInt32s(b, ch.ISR)
	}
	return b
}

func decodeAlterPartitions(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	n := r.count(24) // a change: a name, an id, five numbers, two lists
	c := &alterPartitionsCmd{}
	for i := 0; i < n && r.err == nil; i++ {
		c.Changes = append(c.Changes, partitionChange{Topic: r.string(), ID: r.uuid(), Partition: r.int32(),
			PartitionEpoch: r.int32(), Leader: r.int32(), Replicas: r.int32s(), ISR: r.int32s()})
	}
	return c, r.done()
}

func (c *alterPartitionsCmd) apply(b *builder) any {
	next := map[string]*Topic{}
	for _, ch := range c.Changes {
		t := next[ch.Topic]
		if t == nil {
			cur, ok := b.img.Topics[ch.Topic]
			if !ok || cur.ID != ch.ID {
				return errStaleProposal
			}
			cp := *cur
			cp.Partitions = slices.Clone(cur.Partitions)
			t = &cp
			next[ch.Topic] = t
		}
		if ch.Partition < 0 || int(ch.Partition) >= len(t.Partitions) {
			return fmt.Errorf("alter partition %s-%d: %w", ch.Topic, ch.Partition, ErrUnknownTopic)
		}
		p := t.Partitions[ch.Partition]
		if p.PartitionEpoch != ch.PartitionEpoch {
			return errStaleProposal
		}
		if err := validAssignment([][]int32{ch.Replicas}); err != nil {
			return fmt.Errorf("alter partition %s-%d: %w", ch.Topic, ch.Partition, err)
		}
		if !slices.Contains(ch.Replicas, ch.Leader) || len(ch.ISR) == 0 {
			return fmt.Errorf("alter partition %s-%d: leader %d, isr %v of replicas %v: %w", ch.Topic, ch.Partition, ch.Leader, ch.ISR, ch.Replicas, ErrInvalidReplicaAssignment)
		}
		removed := false
		for _, r := range p.Replicas {
			if !slices.Contains(ch.Replicas, r) {
				removed = true
			}
		}
		if ch.Leader != p.Leader || removed {
			p.LeaderEpoch++
		}
		p.PartitionEpoch++
		p.Leader = ch.Leader
		p.Replicas = slices.Clone(ch.Replicas)
		p.ISR = slices.Clone(ch.ISR)
		t.Partitions[ch.Partition] = p
	}
	for _, t := range next {
		b.putTopic(t)
	}
	return nil
}
