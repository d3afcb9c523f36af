package group

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"sharq/log/clock"
)

// CommitRequest is an OffsetCommit for one group. Generation is the classic
// generation or the consumer member epoch; -1 with an empty MemberID is a
// commit from outside the group (admin tools, simple consumers).
type CommitRequest struct {
	Group    string
	MemberID string
	// InstanceID is the static member's group.instance.id; nil is Kafka's
	// null (an empty string is an id, and no static member has it).
	InstanceID *string
	Generation int32
	Offsets    map[TopicPartition]Offset
	// StaleEpochError is OffsetCommit v9+ (KIP-848): a wrong consumer or
	// streams member epoch is STALE_MEMBER_EPOCH and a member's commit to
	// a group that does not exist GROUP_ID_NOT_FOUND, where earlier
	// versions answer ILLEGAL_GENERATION; a consumer or streams group
	// member may not commit with an earlier version (UNSUPPORTED_VERSION).
	StaleEpochError bool
}

// CommitOffsets validates the committer and stores the offsets durably. A
// group-level error fails every partition; per-partition errors (metadata
// too large) come in the map.
func (c *Coordinator) CommitOffsets(req CommitRequest) (map[TopicPartition]error, error) {
	if req.Group == "" {
		return nil, ErrInvalidGroupID
	}
	if c.notOurs(req.Group) {
		return nil, errNotConsumerGroup(req.Group)
	}
	io := c.ioLock(req.Group)
	io.Lock()
	defer io.Unlock()
	ok, perr, err := c.acceptOffsets(commitCheck{group: req.Group, memberID: req.MemberID, instanceID: req.InstanceID,
		generation: req.Generation, newErrors: req.StaleEpochError}, req.Offsets)
	if err != nil || len(ok) == 0 {
		return perr, err
	}
	// The write happens outside mu (see Coordinator.io); the stripe keeps
	// this group's store writes and in-memory updates in the same order.
	if err := c.store.Commit(req.Group, ok); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	offs := c.mu.offsets[req.Group]
	if offs == nil {
		offs = map[TopicPartition]Offset{}
		c.mu.offsets[req.Group] = offs
	}
	for tp, o := range ok {
		offs[tp] = o
	}
	return perr, nil
}

// acceptOffsets validates the committer of an OffsetCommit or a
// TxnOffsetCommit and splits its offsets into those to write, stamped
// with the commit time, and the partitions refused (metadata too large).
// The caller holds the group's io stripe.
func (c *Coordinator) acceptOffsets(chk commitCheck, offsets map[TopicPartition]Offset) (ok map[TopicPartition]Offset, perr map[TopicPartition]error, _ error) {
	st := c.settings(chk.group)
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, nil, ErrNotCoordinator
	}
	if err := c.validateCommitLocked(chk); err != nil {
		c.mu.Unlock()
		return nil, nil, err
	}
	c.mu.Unlock()
	perr = map[TopicPartition]error{}
	ok = make(map[TopicPartition]Offset, len(offsets))
	now := c.clock.Now().UnixMilli()
	for tp, o := range offsets {
		if len(o.Metadata) > st.OffsetMetadataMaxBytes {
			perr[tp] = ErrOffsetMetadataTooLarge
			continue
		}
		o.CommitTime = now
		ok[tp] = o
	}
	return ok, perr, nil
}

// commitCheck is who commits offsets, as Kafka 4.4's group coordinator
// validates it (OffsetMetadataManager.validateOffsetCommit and
// validateTransactionalOffsetCommit, then the group type's
// validateOffsetCommit).
type commitCheck struct {
	group      string
	memberID   string
	instanceID *string
	generation int32
	// txn is a TxnOffsetCommit: it may come from a producer that sends no
	// member (v0-2 have no member fields; the Java producer's
	// sendOffsetsToTransaction(offsets, groupId) sends none either), and
	// the group's rebalance state is not enforced for it.
	txn bool
	// newErrors: OffsetCommit v9+ or TxnOffsetCommit v6+ (see
	// CommitRequest.StaleEpochError and TxnCommitRequest.KIP1319Errors).
	newErrors bool
}

// validateCommitLocked checks the committer of an OffsetCommit or a
// TxnOffsetCommit against the group, Kafka 4.4's rules (the table in
// commit_validation_test.go cites them case by case).
func (c *Coordinator) validateCommitLocked(req commitCheck) error {
	var err error
	switch {
	case c.mu.streams[req.group] != nil:
		err = c.mu.streams[req.group].validateCommitLocked(req)
	case c.mu.consumer[req.group] != nil:
		err = c.mu.consumer[req.group].validateCommitLocked(req)
	case c.mu.classic[req.group] != nil:
		err = c.mu.classic[req.group].validateOffsetCommitLocked(req)
	case c.mu.offsets[req.group] != nil || len(c.mu.pending[req.group]) > 0:
		// Kafka keeps a group that only holds offsets as an Empty classic
		// group without members ("simple group"): anyone may commit
		// with generation -1, and nobody is a member.
		if req.generation < 0 {
			return nil
		}
		return ErrUnknownMemberID
	default:
		// A group that does not exist: generation -1 creates a simple
		// group (whatever member id comes with it); a member's commit
		// is refused.
		if req.generation < 0 {
			return nil
		}
		if req.newErrors {
			return withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s not found.", req.group))
		}
		return ErrIllegalGeneration
	}
	// Kafka converts STALE_MEMBER_EPOCH for the versions that predate it
	// (TxnOffsetCommit v0-5; OffsetCommit v0-8 never get this far with a
	// consumer or streams member).
	if errors.Is(err, ErrStaleMemberEpoch) && !req.newErrors {
		return ErrIllegalGeneration
	}
	return err
}

// FetchOffsets returns the committed offsets of tps (all of the group's
// offsets when all is set). memberID/memberEpoch (OffsetFetch v9+) are
// checked against a consumer group when given. Missing
// partitions are simply absent.
func (c *Coordinator) FetchOffsets(group, memberID string, memberEpoch int32, tps []TopicPartition, all bool) (map[TopicPartition]Offset, error) {
	if c.notOurs(group) {
		return nil, errNotConsumerGroup(group)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, ErrNotCoordinator
	}
	// Only consumer group members are checked (Kafka's classic groups
	// ignore the member id and epoch of OffsetFetch v9+).
	if kg := c.mu.consumer[group]; kg != nil && (memberID != "" || memberEpoch >= 0) {
		if err := kg.validateFetchLocked(memberID, memberEpoch); err != nil {
			return nil, err
		}
	}
	if sg := c.mu.streams[group]; sg != nil && (memberID != "" || memberEpoch >= 0) {
		if err := sg.validateFetchLocked(memberID, memberEpoch); err != nil {
			return nil, err
		}
	}
	offs := c.mu.offsets[group]
	out := map[TopicPartition]Offset{}
	if all {
		for tp, o := range offs {
			out[tp] = o
		}
		return out, nil
	}
	for _, tp := range tps {
		if o, ok := offs[tp]; ok {
			out[tp] = o
		}
	}
	return out, nil
}

// DeleteOffsets removes committed offsets of partitions the group is not
// subscribed to (OffsetDelete).
func (c *Coordinator) DeleteOffsets(group string, tps []TopicPartition) (map[TopicPartition]error, error) {
	if c.notOurs(group) {
		return nil, errNotConsumerGroup(group)
	}
	io := c.ioLock(group)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, ErrNotCoordinator
	}
	cg, kg, sg := c.mu.classic[group], c.mu.consumer[group], c.mu.streams[group]
	if cg == nil && kg == nil && sg == nil && c.mu.offsets[group] == nil {
		return nil, ErrGroupIDNotFound
	}
	subscribed := map[string]bool{}
	switch {
	case cg != nil && cg.state != StateEmpty:
		if cg.protocolType != "consumer" {
			return nil, ErrNonEmptyGroup
		}
		for _, m := range cg.members {
			for _, t := range m.subscribedTopics {
				subscribed[t] = true
			}
		}
	case kg != nil:
		for t := range kg.subscribedTopicsLocked(c.topics()) {
			subscribed[t] = true
		}
	case sg != nil && len(sg.members) > 0:
		subscribed = sg.sourceTopicsLocked()
	}
	perr := map[TopicPartition]error{}
	var del []TopicPartition
	for _, tp := range tps {
		if subscribed[tp.Topic] {
			perr[tp] = ErrGroupSubscribedToTopic
			continue
		}
		del = append(del, tp)
	}
	if len(del) > 0 {
		if err := c.store.Delete(group, del); err != nil {
			return nil, err
		}
		offs := c.mu.offsets[group]
		for _, tp := range del {
			delete(offs, tp)
		}
		if offs != nil && len(offs) == 0 {
			delete(c.mu.offsets, group)
		}
	}
	return perr, nil
}

// RemoveTopic drops every group's offsets of a deleted topic.
func (c *Coordinator) RemoveTopic(topic string) error {
	c.mu.Lock()
	var groups []string
	for g, offs := range c.mu.offsets {
		for tp := range offs {
			if tp.Topic == topic {
				groups = append(groups, g)
				break
			}
		}
	}
	c.mu.Unlock()
	var errs []string
	for _, g := range groups {
		if err := c.removeTopicOffsets(g, topic); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if errs != nil {
		return fmt.Errorf("remove offsets of topic %s: %s", topic, strings.Join(errs, "; "))
	}
	return nil
}

func (c *Coordinator) removeTopicOffsets(g, topic string) error {
	io := c.ioLock(g)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if offs := c.mu.offsets[g]; offs != nil {
		var tps []TopicPartition
		for tp := range offs {
			if tp.Topic == topic {
				tps = append(tps, tp)
			}
		}
		if len(tps) == 0 {
			return nil
		}
		if err := c.store.Delete(g, tps); err != nil {
			return err
		}
		for _, tp := range tps {
			delete(offs, tp)
		}
		if len(offs) == 0 {
			delete(c.mu.offsets, g)
		}
	}
	return nil
}

// removeMissingTopics drops offsets of topics that no longer exist, in case
// a deletion was not reported through RemoveTopic (a topic deleted through
// another node).
func (c *Coordinator) removeMissingTopics() {
	topics := c.topics()
	c.mu.Lock()
	gone := map[string]bool{}
	for _, offs := range c.mu.offsets {
		for tp := range offs {
			if _, ok := topics[tp.Topic]; !ok {
				gone[tp.Topic] = true
			}
		}
	}
	c.mu.Unlock()
	for t := range gone {
		if err := c.RemoveTopic(t); err != nil {
			c.logger.Warn("remove offsets of deleted topic", "topic", t, "err", err)
		}
	}
}

// ExpireOffsets applies offsets.retention.minutes: the offsets of a group
// without members expire once retention has passed since both their
// commit and the moment the group became empty; a group left with neither
// members nor offsets is removed. It returns how many offsets expired.
func (c *Coordinator) ExpireOffsets() int {
	c.mu.Lock()
	// Kafka's periodic cleanup also deletes groups that are empty and
	// have no offsets at all (kafka-console-consumer's console-consumer-N
	// groups), which nothing below would reach.
	for id, cg := range c.mu.classic {
		if cg.state == StateEmpty && c.mu.offsets[id] == nil {
			cg.state = StateDead
			delete(c.mu.classic, id)
			delete(c.mu.emptySince, id)
		}
	}
	for id, sg := range c.mu.streams {
		if len(sg.members) == 0 && c.mu.offsets[id] == nil {
			delete(c.mu.streams, id)
			delete(c.mu.emptySince, id)
		}
	}
	for id, kg := range c.mu.consumer {
		if len(kg.members) == 0 && c.mu.offsets[id] == nil {
			delete(c.mu.consumer, id)
			delete(c.mu.emptySince, id)
		}
	}
	groups := make([]string, 0, len(c.mu.offsets))
	for g := range c.mu.offsets {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	n := 0
	for _, g := range groups {
		n += c.expireGroupOffsets(g)
	}
	return n
}

func (c *Coordinator) expireGroupOffsets(g string) int {
	io := c.ioLock(g)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	n := 0
	if offs := c.mu.offsets[g]; offs != nil {
		if cg := c.mu.classic[g]; cg != nil && cg.state != StateEmpty {
			return 0
		}
		if kg := c.mu.consumer[g]; kg != nil && len(kg.members) > 0 {
			return 0
		}
		if sg := c.mu.streams[g]; sg != nil && len(sg.members) > 0 {
			return 0
		}
		ret := c.settings(g).OffsetsRetention
		base := c.mu.emptySince[g]
		var tps []TopicPartition
		for tp, o := range offs {
			t := time.UnixMilli(o.CommitTime)
			if base.After(t) {
				t = base
			}
			if !now.Before(t.Add(ret)) {
				tps = append(tps, tp)
			}
		}
		if len(tps) == 0 {
			return 0
		}
		if err := c.store.Delete(g, tps); err != nil {
			c.logger.Warn("expire offsets", "group", g, "err", err)
			return 0
		}
		for _, tp := range tps {
			delete(offs, tp)
		}
		n += len(tps)
		if len(offs) == 0 {
			delete(c.mu.offsets, g)
			if cg := c.mu.classic[g]; cg != nil {
				cg.state = StateDead
				delete(c.mu.classic, g)
			}
			delete(c.mu.consumer, g)
			delete(c.mu.streams, g)
			delete(c.mu.emptySince, g)
		}
	}
	return n
}

// RunExpiry calls ExpireOffsets every interval, on the coordinator's
// clock, until ctx is done.
func (c *Coordinator) RunExpiry(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := clock.NewTicker(c.clock, interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.removeMissingTopics()
			if n := c.ExpireOffsets(); n > 0 {
				c.logger.Info("expired committed offsets", "count", n)
			}
		}
	}
}
