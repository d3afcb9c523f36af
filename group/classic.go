package group

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"
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
	hbTimer              Timer
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
	joinOrder    []string          // member ids in join order (leader choice)
	pending      map[string]Timer  // KIP-394 member ids handed out, not yet joined
	static       map[string]string // instance id -> member id
	rebTimer     Timer             // rebalance (join) or sync timeout
	rebSeq       uint64
	initialDelay bool // the initial delayed join is running
	newMember    bool // a member joined during the initial delay
	delayLeft    time.Duration
}

func (c *Coordinator) newClassicLocked(id string) *classicGroup {
	g := &classicGroup{c: c, id: id, members: map[string]*classicMember{}, pending: map[string]Timer{}, static: map[string]string{}}
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

// JoinGroup joins (or rejoins) a classic group and waits until the
// rebalance completes, ctx ends or the coordinator closes.
func (c *Coordinator) JoinGroup(ctx context.Context, req JoinRequest) JoinResult {
	ch := make(chan JoinResult, 1)
	c.joinGroup(req, ch)
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return JoinResult{Err: ErrNotCoordinator, MemberID: req.MemberID}
	}
}

func (c *Coordinator) joinGroup(req JoinRequest, ch chan JoinResult) {
	fail := func(err error) { ch <- JoinResult{Err: err, MemberID: req.MemberID, Generation: -1} }
	if req.Group == "" {
		fail(ErrInvalidGroupID)
		return
	}
	st := c.settings(req.Group)
	if req.SessionTimeout < st.MinSessionTimeout || req.SessionTimeout > st.MaxSessionTimeout {
		fail(ErrInvalidSessionTimeout)
		return
	}
	if req.ProtocolType == "" || len(req.Protocols) == 0 {
		fail(ErrInconsistentProtocol)
		return
	}
	if c.notOurs(req.Group) {
		// Kafka: a classic join to a group that is neither classic nor
		// consumer (a share group), with no member id.
		ch <- JoinResult{Err: ErrInconsistentProtocol, Generation: -1}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		fail(ErrNotCoordinator)
		return
	}
	if c.streamsHeldLocked(req.Group) {
		fail(ErrInconsistentProtocol)
		return
	}
	if kg := c.mu.consumer[req.Group]; kg != nil {
		if len(kg.members) > 0 {
			// Kafka would convert a consumer group to accept a classic
			// member (KIP-848 online downgrade); sharq does not yet.
			fail(ErrInconsistentProtocol)
			return
		}
		delete(c.mu.consumer, req.Group)
	}
	g := c.mu.classic[req.Group]
	if g == nil {
		if req.MemberID != "" {
			fail(ErrUnknownMemberID)
			return
		}
		g = c.newClassicLocked(req.Group)
	}
	if g.state == StateDead {
		fail(ErrCoordinatorNotAvailable)
		return
	}
	if len(g.members) > 0 && (g.protocolType != req.ProtocolType || !g.supportsProtocols(req.Protocols)) {
		fail(ErrInconsistentProtocol)
		return
	}
	if req.MemberID == "" {
		if req.InstanceID != "" {
			if old, ok := g.static[req.InstanceID]; ok {
				g.replaceStaticLocked(old, req, ch)
				return
			}
		}
		if len(g.members)+len(g.pending) >= st.MaxSize {
			fail(ErrGroupMaxSizeReached)
			return
		}
		id := newMemberID(req.ClientID)
		if req.RequireKnownMemberID && req.InstanceID == "" {
			g.addPendingLocked(id, req.SessionTimeout)
			ch <- JoinResult{Err: ErrMemberIDRequired, MemberID: id, Generation: -1}
			return
		}
		g.addMemberLocked(id, req, ch)
		return
	}
	if t, ok := g.pending[req.MemberID]; ok {
		t.Stop()
		delete(g.pending, req.MemberID)
		g.addMemberLocked(req.MemberID, req, ch)
		return
	}
	if err := g.validateMemberLocked(req.MemberID, req.InstanceID); err != nil {
		fail(err)
		return
	}
	m := g.members[req.MemberID]
	switch g.state {
	case StatePreparingRebalance:
		g.updateMemberLocked(m, req, ch)
		g.tryCompleteJoinLocked()
	case StateCompletingRebalance:
		if protocolsEqual(m.protocols, req.Protocols) {
			// A retried join: answer with the current generation.
			ch <- g.joinResultLocked(m, m.id == g.leader)
			return
		}
		g.updateMemberLocked(m, req, ch)
		g.prepareRebalanceLocked("member changed its protocols")
	case StateStable:
		if m.id == g.leader || !protocolsEqual(m.protocols, req.Protocols) {
			g.updateMemberLocked(m, req, ch)
			g.prepareRebalanceLocked("leader or changed member rejoined")
			return
		}
		ch <- g.joinResultLocked(m, false)
	default:
		fail(ErrUnknownMemberID)
	}
}

func (g *classicGroup) supportsProtocols(ps []Protocol) bool {
	if len(g.members) == 0 {
		return true
	}
	for _, cand := range g.candidateProtocols() {
		for _, p := range ps {
			if p.Name == cand {
				return true
			}
		}
	}
	return false
}

// candidateProtocols are the protocols every member supports.
func (g *classicGroup) candidateProtocols() []string {
	var out []string
	first := true
	for _, m := range g.members {
		names := map[string]bool{}
		for _, p := range m.protocols {
			names[p.Name] = true
		}
		if first {
			for _, p := range m.protocols {
				out = append(out, p.Name)
			}
			first = false
			continue
		}
		kept := out[:0]
		for _, n := range out {
			if names[n] {
				kept = append(kept, n)
			}
		}
		out = kept
	}
	return out
}

func protocolsEqual(a, b []Protocol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Metadata, b[i].Metadata) {
			return false
		}
	}
	return true
}

func (g *classicGroup) addPendingLocked(id string, timeout time.Duration) {
	g.pending[id] = g.c.clock.AfterFunc(timeout, func() {
		g.c.mu.Lock()
		defer g.c.mu.Unlock()
		if _, ok := g.pending[id]; !ok || g.c.mu.closed {
			return
		}
		delete(g.pending, id)
		if g.state == StatePreparingRebalance {
			g.tryCompleteJoinLocked()
		}
	})
}

func (g *classicGroup) addMemberLocked(id string, req JoinRequest, ch chan JoinResult) {
	m := &classicMember{id: id}
	if len(g.members) == 0 {
		// The first member sets the protocol type (Kafka's group.add).
		g.protocolType = req.ProtocolType
	}
	g.members[id] = m
	g.joinOrder = append(g.joinOrder, id)
	if req.InstanceID != "" {
		g.static[req.InstanceID] = id
	}
	if g.leader == "" {
		g.leader = id
	}
	g.updateMemberLocked(m, req, ch)
	g.newMember = true
	switch g.state {
	case StateEmpty, StateStable, StateCompletingRebalance:
		g.prepareRebalanceLocked("new member joined")
	default:
		g.tryCompleteJoinLocked()
	}
}

func (g *classicGroup) updateMemberLocked(m *classicMember, req JoinRequest, ch chan JoinResult) {
	m.instanceID = req.InstanceID
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	m.sessionTimeout, m.rebalanceTimeout = req.SessionTimeout, req.RebalanceTimeout
	m.protocolType = req.ProtocolType
	m.protocols = req.Protocols
	m.subscribedTopics = req.SubscribedTopics
	m.supportsSkip = req.SupportsSkipAssignment
	if m.joinCh != nil && m.joinCh != ch {
		// A second join from the same member replaces the first (Kafka
		// answers the old one with UNKNOWN_MEMBER_ID).
		g.answerJoin(m, JoinResult{Err: ErrUnknownMemberID, MemberID: m.id, Generation: -1})
	}
	m.joinCh = ch
}

// replaceStaticLocked lets a static member come back with a new member id
// (KIP-345): the old id is fenced and, in a stable group with unchanged
// protocols, the member gets its old assignment without a rebalance.
func (g *classicGroup) replaceStaticLocked(oldID string, req JoinRequest, ch chan JoinResult) {
	m := g.members[oldID]
	g.answerJoin(m, JoinResult{Err: ErrFencedInstanceID, MemberID: oldID, Generation: -1})
	g.answerSync(m, SyncResult{Err: ErrFencedInstanceID})
	newID := newMemberID(req.ClientID)
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	for i, id := range g.joinOrder {
		if id == oldID {
			g.joinOrder[i] = newID
		}
	}
	g.static[req.InstanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	// As Kafka: only a change of the protocol the group would select
	// forces a rebalance (the metadata, e.g. owned partitions, may differ
	// after a restart).
	oldProtocols := m.protocols
	m.protocols = req.Protocols
	changed := g.selectProtocol() != g.protocolName
	m.protocols = oldProtocols
	switch {
	case g.state == StateStable && !changed && (newID != g.leader || req.SupportsSkipAssignment):
		m.clientID, m.clientHost = req.ClientID, req.ClientHost
		m.sessionTimeout, m.rebalanceTimeout = req.SessionTimeout, req.RebalanceTimeout
		m.protocols = req.Protocols
		g.scheduleHeartbeatLocked(m)
		r := g.joinResultLocked(m, newID == g.leader)
		r.SkipAssignment = newID == g.leader
		ch <- r
	case g.state == StatePreparingRebalance:
		g.updateMemberLocked(m, req, ch)
		g.tryCompleteJoinLocked()
	default:
		g.updateMemberLocked(m, req, ch)
		g.prepareRebalanceLocked("static member rejoined with new protocols")
	}
}

func (g *classicGroup) joinResultLocked(m *classicMember, withMembers bool) JoinResult {
	r := JoinResult{Generation: g.generation, ProtocolType: g.protocolType, ProtocolName: g.protocolName, LeaderID: g.leader, MemberID: m.id}
	if withMembers {
		for _, id := range g.joinOrder {
			mm := g.members[id]
			r.Members = append(r.Members, JoinMember{MemberID: mm.id, InstanceID: mm.instanceID, Metadata: mm.metadataFor(g.protocolName)})
		}
	}
	return r
}

func (m *classicMember) metadataFor(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

func (g *classicGroup) stopRebalanceTimer() {
	if g.rebTimer != nil {
		g.rebTimer.Stop()
		g.rebTimer = nil
	}
	g.rebSeq++
}

// prepareRebalanceLocked moves to PreparingRebalance and arms the join
// timer: the initial delay for a group that was empty, otherwise the
// largest rebalance timeout of the members.
func (g *classicGroup) prepareRebalanceLocked(reason string) {
	g.c.logger.Debug("preparing rebalance", "group", g.id, "reason", reason, "generation", g.generation)
	if g.state == StateCompletingRebalance {
		for _, m := range g.members {
			m.assignment = nil
			g.answerSync(m, SyncResult{Err: ErrRebalanceInProgress})
		}
	}
	wasEmpty := g.state == StateEmpty
	g.state = StatePreparingRebalance
	g.stopRebalanceTimer()
	if wasEmpty {
		st := g.c.settings(g.id)
		g.initialDelay = true
		g.newMember = false
		delay := st.InitialRebalanceDelay
		g.delayLeft = g.maxRebalanceTimeout() - delay
		g.armInitialDelayLocked(delay)
		return
	}
	g.armRebalanceTimerLocked(g.maxRebalanceTimeout(), func() { g.completeJoinLocked() })
	g.tryCompleteJoinLocked()
}

func (g *classicGroup) armRebalanceTimerLocked(d time.Duration, f func()) {
	g.rebSeq++
	seq := g.rebSeq
	g.rebTimer = g.c.clock.AfterFunc(d, func() {
		g.c.mu.Lock()
		defer g.c.mu.Unlock()
		if g.rebSeq != seq || g.c.mu.closed {
			return
		}
		g.rebTimer = nil
		f()
	})
}

// armInitialDelayLocked is Kafka's InitialDelayedJoin: wait the delay; if
// members kept joining, wait again (up to the rebalance timeout) so that a
// group of consumers started together gets one rebalance, not one each.
func (g *classicGroup) armInitialDelayLocked(delay time.Duration) {
	g.armRebalanceTimerLocked(delay, func() {
		if g.newMember && g.delayLeft > 0 {
			g.newMember = false
			next := delay
			if g.delayLeft < next {
				next = g.delayLeft
			}
			g.delayLeft -= next
			g.armInitialDelayLocked(next)
			return
		}
		g.initialDelay = false
		g.completeJoinLocked()
	})
}

func (g *classicGroup) maxRebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		if m.rebalanceTimeout > d {
			d = m.rebalanceTimeout
		}
	}
	return d
}

func (g *classicGroup) tryCompleteJoinLocked() {
	if g.state != StatePreparingRebalance || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinCh == nil {
			return
		}
	}
	g.completeJoinLocked()
}

// completeJoinLocked ends the join phase: members that did not rejoin are
// removed, a new generation starts and every waiting member is answered.
func (g *classicGroup) completeJoinLocked() {
	g.stopRebalanceTimer()
	g.initialDelay = false
	for _, m := range g.members {
		if m.joinCh == nil {
			g.removeMemberLocked(m)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.state = StateEmpty
		g.protocolName = ""
		g.leader = ""
		g.c.noteEmptyLocked(g.id)
		return
	}
	if _, ok := g.members[g.leader]; !ok {
		g.leader = g.joinOrder[0]
	}
	g.protocolType = g.members[g.leader].protocolType
	g.protocolName = g.selectProtocol()
	g.state = StateCompletingRebalance
	for _, id := range append([]string(nil), g.joinOrder...) {
		m := g.members[id]
		g.answerJoin(m, g.joinResultLocked(m, id == g.leader))
		g.scheduleHeartbeatLocked(m)
	}
	// Members that do not sync within the rebalance timeout are removed.
	gen := g.generation
	g.armRebalanceTimerLocked(g.maxRebalanceTimeout(), func() {
		if g.state != StateCompletingRebalance || g.generation != gen {
			return
		}
		for _, m := range g.members {
			if m.syncCh == nil {
				g.removeMemberLocked(m)
			}
		}
		g.prepareRebalanceLocked("members did not sync in time")
	})
}

// selectProtocol is Kafka's vote: each member votes for its most preferred
// protocol that every member supports; the most votes win.
func (g *classicGroup) selectProtocol() string {
	cands := g.candidateProtocols()
	if len(cands) == 0 {
		return ""
	}
	ok := map[string]bool{}
	for _, c := range cands {
		ok[c] = true
	}
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if ok[p.Name] {
				votes[p.Name]++
				break
			}
		}
	}
	best := cands[0]
	for _, c := range cands {
		if votes[c] > votes[best] {
			best = c
		}
	}
	return best
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
