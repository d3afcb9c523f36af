package group

import (
	"bytes"
	"context"
	"time"
)

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
