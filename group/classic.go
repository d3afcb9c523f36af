package group

import (
	"context"
	"fmt"
	"sort"
	"time"

	"sharq/log/clock"
)

// ClassicState is a classic group's state.
type ClassicState int

// The classic group states (Kafka's ClassicGroupState).
const (
	StateEmpty ClassicState = iota
	StatePreparingRebalance
	StateCompletingRebalance
	StateStable
	StateDead
)

func (s ClassicState) String() string {
	return [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}[s]
}

// Protocol is one (name, metadata) a member supports, in its preference
// order. The group keeps Metadata (the leader's input, DescribeGroups):
// the caller must not reuse its memory.
type Protocol struct {
	Name     string
	Metadata []byte
}

// JoinRequest is a JoinGroup.
type JoinRequest struct {
	Group            string
	MemberID         string
	InstanceID       string // "" = dynamic member
	ClientID         string
	ClientHost       string
	ProtocolType     string
	Protocols        []Protocol
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	// RequireKnownMemberID is KIP-394 (JoinGroup v4+): a first join
	// without member id gets MEMBER_ID_REQUIRED and an id to retry with.
	RequireKnownMemberID bool
	// SupportsSkipAssignment is JoinGroup v9+: a static leader that
	// rejoins a stable group gets the members without a new rebalance.
	SupportsSkipAssignment bool
	// SubscribedTopics is what the broker parsed from a "consumer"
	// protocol's metadata (for OffsetDelete); nil if unknown.
	SubscribedTopics []string
}

// JoinMember is one member as the leader sees it.
type JoinMember struct {
	MemberID   string
	InstanceID string
	Metadata   []byte
}

// JoinResult answers a JoinGroup. MemberID is set even with
// ErrMemberIDRequired.
type JoinResult struct {
	Err            error
	Generation     int32
	ProtocolType   string
	ProtocolName   string
	LeaderID       string
	MemberID       string
	Members        []JoinMember // leader only
	SkipAssignment bool
}

// SyncRequest is a SyncGroup.
type SyncRequest struct {
	Group        string
	MemberID     string
	InstanceID   string
	Generation   int32
	ProtocolType string // "" = not checked (v0-4)
	ProtocolName string
	Assignments  map[string][]byte // leader only; kept by the group, as Protocol.Metadata
}

// SyncResult answers a SyncGroup.
type SyncResult struct {
	Err          error
	ProtocolType string
	ProtocolName string
	Assignment   []byte
}

type classicMember struct {
	id, instanceID       string
	clientID, clientHost string
	sessionTimeout       time.Duration
	rebalanceTimeout     time.Duration
	protocolType         string
	protocols            []Protocol
	subscribedTopics     []string
	assignment           []byte
	joinCh               chan JoinResult // set while awaiting a join answer
	syncCh               chan SyncResult // set while awaiting a sync answer
	supportsSkip         bool
	hbTimer              clock.Timer
	hbSeq                uint64
}

type classicGroup struct {
	c            *Coordinator
	id           string
	state        ClassicState
	generation   int32
	protocolType string
	protocolName string
	leader       string
	members      map[string]*classicMember
	joinOrder    []string               // member ids in join order (leader choice)
	pending      map[string]clock.Timer // KIP-394 member ids handed out, not yet joined
	static       map[string]string      // instance id -> member id
	rebTimer     clock.Timer            // rebalance (join) or sync timeout
	rebSeq       uint64
	initialDelay bool // the initial delayed join is running
	newMember    bool // a member joined during the initial delay
	delayLeft    time.Duration
}

func (c *Coordinator) newClassicLocked(id string) *classicGroup {
	g := &classicGroup{c: c, id: id, members: map[string]*classicMember{}, pending: map[string]clock.Timer{}, static: map[string]string{}}
	c.mu.classic[id] = g
	return g
}

func (g *classicGroup) shutdownLocked() {
	if g.rebTimer != nil {
		g.rebTimer.Stop()
	}
	for _, t := range g.pending {
		t.Stop()
	}
	for _, m := range g.members {
		if m.hbTimer != nil {
			m.hbTimer.Stop()
		}
		g.answerJoin(m, JoinResult{Err: ErrNotCoordinator, MemberID: m.id})
		g.answerSync(m, SyncResult{Err: ErrNotCoordinator})
	}
}

func (g *classicGroup) answerJoin(m *classicMember, r JoinResult) {
	if m.joinCh != nil {
		m.joinCh <- r
		m.joinCh = nil
	}
}

func (g *classicGroup) answerSync(m *classicMember, r SyncResult) {
	if m.syncCh != nil {
		m.syncCh <- r
		m.syncCh = nil
	}
}

func (g *classicGroup) removeMemberLocked(m *classicMember) {
	if m.hbTimer != nil {
		m.hbTimer.Stop()
	}
	m.hbSeq++
	g.answerJoin(m, JoinResult{Err: ErrUnknownMemberID, MemberID: m.id, Generation: -1})
	g.answerSync(m, SyncResult{Err: ErrUnknownMemberID})
	delete(g.members, m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	for i, id := range g.joinOrder {
		if id == m.id {
			g.joinOrder = append(g.joinOrder[:i], g.joinOrder[i+1:]...)
			break
		}
	}
	if g.leader == m.id {
		g.leader = ""
		if len(g.joinOrder) > 0 {
			g.leader = g.joinOrder[0]
		}
	}
}

// memberLeftLocked reacts to a member leaving or expiring.
func (g *classicGroup) memberLeftLocked(m *classicMember, reason string) {
	g.removeMemberLocked(m)
	switch g.state {
	case StateStable, StateCompletingRebalance:
		g.prepareRebalanceLocked(reason)
	case StatePreparingRebalance:
		g.tryCompleteJoinLocked()
	}
}

func (g *classicGroup) scheduleHeartbeatLocked(m *classicMember) {
	if m.hbTimer != nil {
		m.hbTimer.Stop()
	}
	m.hbSeq++
	seq := m.hbSeq
	m.hbTimer = g.c.clock.AfterFunc(m.sessionTimeout, func() {
		g.c.mu.Lock()
		defer g.c.mu.Unlock()
		if m.hbSeq != seq || g.c.mu.closed || g.members[m.id] != m {
			return
		}
		if m.joinCh != nil || m.syncCh != nil {
			// A member parked in JoinGroup or SyncGroup is alive.
			g.scheduleHeartbeatLocked(m)
			return
		}
		g.c.logger.Info("member session expired", "group", g.id, "member", m.id)
		g.memberLeftLocked(m, "session timeout of "+m.id)
	})
}

// validateMemberLocked is Kafka's ClassicGroup.validateMember: a static
// member is checked by instance id first (FENCED_INSTANCE_ID when another
// member id holds it), then the member id.
func (g *classicGroup) validateMemberLocked(memberID, instanceID string) error {
	if instanceID != "" {
		cur, ok := g.static[instanceID]
		if !ok {
			return ErrUnknownMemberID
		}
		if cur != memberID {
			return ErrFencedInstanceID
		}
	}
	if g.members[memberID] == nil {
		return ErrUnknownMemberID
	}
	return nil
}

// SyncGroup hands the leader's assignment to every member; it waits for
// the leader when a follower syncs first.
func (c *Coordinator) SyncGroup(ctx context.Context, req SyncRequest) SyncResult {
	ch := make(chan SyncResult, 1)
	c.syncGroup(req, ch)
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return SyncResult{Err: ErrNotCoordinator}
	}
}

func (c *Coordinator) syncGroup(req SyncRequest, ch chan SyncResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fail := func(err error) { ch <- SyncResult{Err: err} }
	if c.mu.closed {
		fail(ErrNotCoordinator)
		return
	}
	g := c.mu.classic[req.Group]
	if g == nil {
		fail(ErrUnknownMemberID)
		return
	}
	m := g.members[req.MemberID]
	if g.state == StateDead {
		fail(ErrCoordinatorNotAvailable)
		return
	}
	if err := g.validateMemberLocked(req.MemberID, req.InstanceID); err != nil {
		fail(err)
		return
	}
	switch {
	case req.Generation != g.generation:
		fail(ErrIllegalGeneration)
		return
	case req.ProtocolType != "" && req.ProtocolType != g.protocolType,
		req.ProtocolName != "" && req.ProtocolName != g.protocolName:
		fail(ErrInconsistentProtocol)
		return
	}
	switch g.state {
	case StateEmpty:
		fail(ErrUnknownMemberID)
	case StatePreparingRebalance:
		fail(ErrRebalanceInProgress)
	case StateCompletingRebalance:
		m.syncCh = ch
		g.scheduleHeartbeatLocked(m)
		if m.id != g.leader {
			return
		}
		for _, mm := range g.members {
			mm.assignment = req.Assignments[mm.id]
		}
		g.stopRebalanceTimer()
		g.state = StateStable
		for _, mm := range g.members {
			g.answerSync(mm, SyncResult{ProtocolType: g.protocolType, ProtocolName: g.protocolName, Assignment: mm.assignment})
		}
	case StateStable:
		g.scheduleHeartbeatLocked(m)
		ch <- SyncResult{ProtocolType: g.protocolType, ProtocolName: g.protocolName, Assignment: m.assignment}
	}
}

// Heartbeat keeps a classic member alive and tells it about rebalances.
func (c *Coordinator) Heartbeat(group, memberID, instanceID string, generation int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return ErrNotCoordinator
	}
	g := c.mu.classic[group]
	if g == nil {
		return ErrUnknownMemberID
	}
	m := g.members[memberID]
	if g.state == StateDead {
		return ErrCoordinatorNotAvailable
	}
	if err := g.validateMemberLocked(memberID, instanceID); err != nil {
		return err
	}
	if generation != g.generation {
		return ErrIllegalGeneration
	}
	g.scheduleHeartbeatLocked(m)
	if g.state == StatePreparingRebalance {
		return ErrRebalanceInProgress
	}
	return nil
}

// LeaveMember names a member leaving: by member id, or by instance id for
// a static member (LeaveGroup v3+).
type LeaveMember struct {
	MemberID   string
	InstanceID string
}

// LeaveGroup removes members and starts a rebalance. The top-level error
// is for an unknown group; per-member errors come in the slice.
func (c *Coordinator) LeaveGroup(group string, members []LeaveMember) ([]error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, ErrNotCoordinator
	}
	g := c.mu.classic[group]
	if g == nil {
		return nil, ErrUnknownMemberID
	}
	if g.state == StateDead {
		return nil, ErrCoordinatorNotAvailable
	}
	errs := make([]error, len(members))
	left := false
	for i, lm := range members {
		id := lm.MemberID
		if lm.InstanceID != "" {
			cur, ok := g.static[lm.InstanceID]
			switch {
			case !ok:
				errs[i] = ErrUnknownMemberID
				continue
			case id != "" && id != cur:
				errs[i] = ErrFencedInstanceID
				continue
			}
			id = cur
		}
		if t, ok := g.pending[id]; ok {
			t.Stop()
			delete(g.pending, id)
			continue
		}
		m := g.members[id]
		if m == nil {
			errs[i] = ErrUnknownMemberID
			continue
		}
		g.removeMemberLocked(m)
		left = true
	}
	if left || g.state == StatePreparingRebalance {
		switch g.state {
		case StateStable, StateCompletingRebalance:
			g.prepareRebalanceLocked("members left")
		case StatePreparingRebalance:
			g.tryCompleteJoinLocked()
		}
	}
	return errs, nil
}

// validateOffsetCommitLocked is Kafka 4.4's ClassicGroup.validateOffsetCommit.
func (g *classicGroup) validateOffsetCommitLocked(req commitCheck) error {
	if g.state == StateDead {
		return ErrCoordinatorNotAvailable
	}
	if req.generation < 0 && g.state == StateEmpty {
		// The admin client or a consumer outside group management: any
		// commit is accepted while the group is empty.
		return nil
	}
	if req.generation >= 0 || req.memberID != "" || req.instanceID != nil {
		if req.instanceID != nil {
			cur, ok := g.static[*req.instanceID]
			if !ok {
				return ErrUnknownMemberID
			}
			if cur != req.memberID {
				return ErrFencedInstanceID
			}
		}
		if g.members[req.memberID] == nil {
			return ErrUnknownMemberID
		}
		if req.generation != g.generation {
			return ErrIllegalGeneration
		}
	} else if !req.txn && g.state != StateEmpty {
		// An OffsetCommit without member (v0-1 style) only while the group
		// is empty; a transactional one may come from a producer that
		// never sends the member (TxnOffsetCommit v0-2).
		return ErrUnknownMemberID
	}
	if !req.txn && g.state == StateCompletingRebalance {
		// The member has the new generation from JoinGroup but no
		// assignment yet; transactional commits do not look at the state.
		return ErrRebalanceInProgress
	}
	return nil
}

// ClassicDescription describes a classic group (DescribeGroups).
type ClassicDescription struct {
	ID           string
	State        string
	ProtocolType string
	Protocol     string
	Members      []ClassicMemberDescription
}

// ClassicMemberDescription is one member of a classic group.
type ClassicMemberDescription struct {
	MemberID   string
	InstanceID string
	ClientID   string
	ClientHost string
	Metadata   []byte
	Assignment []byte
}

// DescribeClassic describes a classic group. A group that only holds
// offsets is Empty; an unknown one is ErrGroupIDNotFound, a consumer group
// ErrGroupIDNotFound with "is not a classic group".
func (c *Coordinator) DescribeClassic(id string) (ClassicDescription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.consumer[id] != nil || c.mu.streams[id] != nil {
		return ClassicDescription{ID: id, State: StateDead.String()}, withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s is not a classic group.", id))
	}
	g := c.mu.classic[id]
	if g == nil {
		if c.mu.offsets[id] != nil {
			return ClassicDescription{ID: id, State: StateEmpty.String()}, nil
		}
		return ClassicDescription{ID: id, State: StateDead.String()}, withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s not found.", id))
	}
	d := ClassicDescription{ID: id, State: g.state.String(), ProtocolType: g.protocolType}
	if g.state == StateCompletingRebalance || g.state == StateStable {
		d.Protocol = g.protocolName
	}
	ids := append([]string(nil), g.joinOrder...)
	sort.Strings(ids)
	for _, mid := range ids {
		m := g.members[mid]
		md := ClassicMemberDescription{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost}
		if d.Protocol != "" {
			md.Metadata = m.metadataFor(d.Protocol)
		}
		if g.state == StateStable {
			md.Assignment = m.assignment
		}
		d.Members = append(d.Members, md)
	}
	return d, nil
}
