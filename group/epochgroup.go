package group

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"sharq/log/clock"
)

// Consumer groups (KIP-848) and streams groups (KIP-1071) run the same
// member machinery: members with an epoch that trails the group's
// assignment epoch, static members that take over a departed instance's
// place, a session timer and a revocation deadline per member, fencing by
// epoch, and commits checked by member epoch. epochGroup and memberCore
// are that machinery, once; consumerGroup and streamsGroup embed them and
// add what they assign (partitions, or tasks of a topology).

// memberCore is what a consumer group member and a streams group member
// share.
type memberCore struct {
	id, instanceID, rackID string
	clientID, clientHost   string
	epoch, prevEpoch       int32
	state                  memberState
	rebalanceTimeout       time.Duration
	memberTimers
}

func (m *memberCore) core() *memberCore { return m }

// epochMember is a member type of an epochGroup (*consumerMember,
// *streamsMember).
type epochMember interface {
	comparable
	core() *memberCore
}

// epochOwner is the group an epochGroup is part of: the timers remove an
// expired member through it (a streams group has more to forget) and
// start its next epoch with its own assignor.
type epochOwner[M epochMember] interface {
	removeMemberLocked(m M)
	bumpLocked(topics map[string]TopicInfo, st Settings)
}

// epochKind is what differs between the two group types in the shared
// machinery's words: Kafka's protocol name in messages and the log lines.
type epochKind struct {
	protocol    string // "consumer", "streams"
	revokedLate string // logged when a member misses its revocation deadline
	expired     string // logged when a member's session expires
}

var (
	consumerKind = &epochKind{protocol: "consumer",
		revokedLate: "member did not revoke partitions in time", expired: "member session expired"}
	streamsKind = &epochKind{protocol: "streams",
		revokedLate: "streams member did not revoke tasks in time", expired: "streams member session expired"}
)

// epochGroup holds the members of a consumer or streams group. M is the
// member type, T a member's target assignment.
type epochGroup[M epochMember, T any] struct {
	c               *Coordinator
	id              string
	kind            *epochKind
	owner           epochOwner[M]
	epoch           int32
	assignmentEpoch int32
	members         map[string]M
	static          map[string]string // instance id -> member id
	target          map[string]T
}

func newEpochGroup[M epochMember, T any](c *Coordinator, id string, kind *epochKind, owner epochOwner[M]) epochGroup[M, T] {
	return epochGroup[M, T]{c: c, id: id, kind: kind, owner: owner,
		members: map[string]M{}, static: map[string]string{}, target: map[string]T{}}
}

func (g *epochGroup[M, T]) shutdownLocked() {
	for _, m := range g.members {
		stopTimer(m.core().hbTimer)
		stopTimer(m.core().revTimer)
	}
}

func stopTimer(t clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// reconcilingLocked reports whether a member is behind the assignment
// epoch or still moving towards its target.
func (g *epochGroup[M, T]) reconcilingLocked() bool {
	for _, m := range g.members {
		if m.core().epoch != g.assignmentEpoch || m.core().state != memberStable {
			return true
		}
	}
	return false
}

// memberIDsLocked are the member ids in order, for descriptions.
func (g *epochGroup[M, T]) memberIDsLocked() []string {
	return slices.Sorted(maps.Keys(g.members))
}

// errUnknownMember is Kafka's UNKNOWN_MEMBER_ID for a member id the group
// does not hold.
func errUnknownMember(member, group string) error {
	return withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", member, group))
}

// takeOverStaticLocked lets a member joining with the instance id of a
// static member that left (StaticLeaveEpoch) take its place under the new
// member id, epoch, assignment and target included, without a rebalance.
// ok is false when there is nothing to take over; an instance id still
// held by a live member is UNRELEASED_INSTANCE_ID.
func (g *epochGroup[M, T]) takeOverStaticLocked(instanceID, memberID string) (_ M, ok bool, _ error) {
	var none M
	cur, held := g.static[instanceID]
	if !held || cur == memberID {
		return none, false, nil
	}
	old := g.members[cur]
	oc := old.core()
	if oc.epoch != StaticLeaveEpoch {
		return none, false, withMsg(ErrUnreleasedInstanceID, fmt.Sprintf("Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", memberID, instanceID, cur))
	}
	stopTimer(oc.hbTimer)
	stopTimer(oc.revTimer)
	delete(g.members, cur)
	oc.id = memberID
	oc.epoch = oc.prevEpoch
	if oc.epoch <= 0 {
		oc.epoch = g.assignmentEpoch
	}
	g.members[memberID] = old
	g.static[instanceID] = memberID
	g.target[memberID] = g.target[cur]
	delete(g.target, cur)
	return old, true, nil
}

// memberAtEpochLocked is the member a heartbeat with a member epoch
// (neither joining nor leaving) comes from. It fences an epoch that is
// not the member's: a newer one, or an older one that is not the member's
// previous epoch or comes with owned partitions (tasks) outside its
// assignment (ownsOnlyAssigned, asked only then).
func (g *epochGroup[M, T]) memberAtEpochLocked(memberID string, epoch int32, ownsOnlyAssigned func(M) bool) (M, error) {
	m, ok := g.members[memberID]
	if !ok {
		return m, errUnknownMember(memberID, g.id)
	}
	mc := m.core()
	if epoch > mc.epoch {
		return m, withMsg(ErrFencedMemberEpoch, fmt.Sprintf("The %s group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", g.kind.protocol, epoch, mc.epoch))
	}
	if epoch < mc.epoch && (epoch != mc.prevEpoch || !ownsOnlyAssigned(m)) {
		return m, withMsg(ErrFencedMemberEpoch, fmt.Sprintf("The %s group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", g.kind.protocol, epoch, mc.epoch))
	}
	return m, nil
}

// armRevocationLocked removes a member that has not given up what it
// must revoke within its rebalance timeout, and starts a new epoch.
func (g *epochGroup[M, T]) armRevocationLocked(m M) {
	mc := m.core()
	mc.armRevocationLocked(g.c, mc.rebalanceTimeout, func() {
		if g.members[mc.id] != m || mc.state != memberUnrevoked {
			return
		}
		g.expireLocked(m, g.kind.revokedLate)
	})
}

// scheduleSessionLocked (re)arms the member's session: without a
// heartbeat within d it is removed and a new epoch starts.
func (g *epochGroup[M, T]) scheduleSessionLocked(m M, d time.Duration) {
	mc := m.core()
	mc.armSessionLocked(g.c, d, func() {
		if g.members[mc.id] != m {
			return
		}
		g.expireLocked(m, g.kind.expired)
	})
}

func (g *epochGroup[M, T]) expireLocked(m M, why string) {
	g.c.logger.Info(why, "group", g.id, "member", m.core().id)
	g.owner.removeMemberLocked(m)
	g.owner.bumpLocked(g.c.topics(), g.c.settings(g.id))
}

// removeMemberLocked forgets m: its timers, its target, its instance id.
func (g *epochGroup[M, T]) removeMemberLocked(m M) {
	mc := m.core()
	mc.stopLocked()
	delete(g.members, mc.id)
	delete(g.target, mc.id)
	if mc.instanceID != "" && g.static[mc.instanceID] == mc.id {
		delete(g.static, mc.instanceID)
	}
}

// validateCommitLocked is Kafka 4.4's ConsumerGroup.validateOffsetCommit
// (for a group whose members all use the consumer protocol: sharq has no
// classic-protocol members in consumer groups) and
// StreamsGroup.validateOffsetCommit: a commit by member epoch. A member
// epoch older than the member's is refused: Kafka 4.4 accepts it when each
// committed partition (task) was assigned to the member at that epoch or
// earlier, and sharq keeps no per-partition assignment epochs.
func (g *epochGroup[M, T]) validateCommitLocked(req commitCheck) error {
	if req.generation < 0 && len(g.members) == 0 {
		return nil
	}
	if req.txn && req.generation == -1 && req.memberID == "" && req.instanceID == nil {
		// A producer that sends no member (TxnOffsetCommit v0-2, or
		// sendOffsetsToTransaction with only the group id).
		return nil
	}
	m, ok := g.members[req.memberID]
	if !ok {
		return errUnknownMember(req.memberID, g.id)
	}
	if !req.txn && !req.newErrors {
		return withMsg(ErrUnsupportedVersion, fmt.Sprintf("OffsetCommit version 9 or above must be used by members using the %s group protocol", g.kind.protocol))
	}
	epoch := m.core().epoch
	switch {
	case req.generation == epoch:
		return nil
	case req.generation > epoch:
		return withMsg(ErrStaleMemberEpoch, fmt.Sprintf("Received member epoch %d is newer than current member epoch %d.", req.generation, epoch))
	}
	return withMsg(ErrStaleMemberEpoch, fmt.Sprintf("Received member epoch %d is older than current member epoch %d.", req.generation, epoch))
}

// validateFetchLocked checks the member of an OffsetFetch v9+.
func (g *epochGroup[M, T]) validateFetchLocked(memberID string, epoch int32) error {
	m, ok := g.members[memberID]
	if !ok {
		return ErrUnknownMemberID
	}
	if epoch != m.core().epoch {
		return ErrStaleMemberEpoch
	}
	return nil
}

// memberTimers are the two timers of a member of a KIP-848-style group
// (consumer and streams groups): its session, and its deadline to give up
// what was taken from it. Each arming bumps a sequence number, so a timer
// that fires after it was re-armed or stopped does nothing (Stop cannot
// recall a callback already started).
type memberTimers struct {
	hbTimer, revTimer clock.Timer
	hbSeq, revSeq     uint64
}

// armSessionLocked (re)arms the session timer for d. expire runs under
// the coordinator's lock unless the timer was re-armed or stopped since,
// or the coordinator closed.
func (t *memberTimers) armSessionLocked(c *Coordinator, d time.Duration, expire func()) {
	stopTimer(t.hbTimer)
	t.hbSeq++
	seq := t.hbSeq
	t.hbTimer = c.clock.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.hbSeq != seq || c.mu.closed {
			return
		}
		expire()
	})
}

// armRevocationLocked (re)arms the revocation deadline: the member's
// rebalance timeout, or 5 minutes when it gave none. expire runs as for
// armSessionLocked.
func (t *memberTimers) armRevocationLocked(c *Coordinator, rebalanceTimeout time.Duration, expire func()) {
	stopTimer(t.revTimer)
	t.revSeq++
	seq := t.revSeq
	d := rebalanceTimeout
	if d <= 0 {
		d = 5 * time.Minute
	}
	t.revTimer = c.clock.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.revSeq != seq || c.mu.closed {
			return
		}
		expire()
	})
}

// stopRevocationLocked ends the revocation deadline: the member gave up
// what it had to.
func (t *memberTimers) stopRevocationLocked() {
	stopTimer(t.revTimer)
	t.revSeq++
}

// stopLocked stops both timers for good (the member left or was removed).
func (t *memberTimers) stopLocked() {
	stopTimer(t.hbTimer)
	stopTimer(t.revTimer)
	t.hbSeq++
	t.revSeq++
}
