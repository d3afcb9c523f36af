package group

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"sharq/log/clock"
)

// Member epochs with a meaning (KIP-848).
const (
	JoinEpoch        int32 = 0
	LeaveEpoch       int32 = -1
	StaticLeaveEpoch int32 = -2
)

// ConsumerHeartbeatRequest is a ConsumerGroupHeartbeat.
type ConsumerHeartbeatRequest struct {
	Group       string
	MemberID    string
	InstanceID  string
	RackID      string
	MemberEpoch int32
	ClientID    string
	ClientHost  string
	// RebalanceTimeout < 0 = unchanged.
	RebalanceTimeout time.Duration
	// SubscribedTopicNames nil = unchanged.
	SubscribedTopicNames []string
	// SubscribedTopicRegex nil = unchanged; "" clears it.
	SubscribedTopicRegex *string
	ServerAssignor       *string
	// Owned is what the member owns now (nil = unchanged/not sent).
	Owned map[TopicID][]int32
	// GenerateMemberID: v0 lets the coordinator pick the member id.
	GenerateMemberID bool
}

// ConsumerHeartbeatResult answers a ConsumerGroupHeartbeat.
type ConsumerHeartbeatResult struct {
	Err               error
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	// Assignment is the member's current assignment; nil when the
	// member is leaving.
	Assignment map[TopicID][]int32
}

type memberState int

const (
	memberStable     memberState = iota
	memberUnrevoked              // waiting for the member to revoke partitions
	memberUnreleased             // waiting for other members to release partitions
)

type consumerMember struct {
	id, instanceID, rackID string
	clientID, clientHost   string
	epoch, prevEpoch       int32
	state                  memberState
	rebalanceTimeout       time.Duration
	names                  []string
	regex                  string
	re                     *regexp.Regexp
	assignor               string
	assigned               partSet
	revoking               partSet
	memberTimers
}

type consumerGroup struct {
	c               *Coordinator
	id              string
	epoch           int32
	assignmentEpoch int32
	members         map[string]*consumerMember
	static          map[string]string
	target          map[string]partSet
	topicsHash      string
	assignor        string
}

func (g *consumerGroup) shutdownLocked() {
	for _, m := range g.members {
		stopTimer(m.hbTimer)
		stopTimer(m.revTimer)
	}
}

func stopTimer(t clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// stateLocked is the KIP-848 group state.
func (g *consumerGroup) stateLocked() string {
	if len(g.members) == 0 {
		return "Empty"
	}
	if g.epoch != g.assignmentEpoch {
		return "Assigning"
	}
	for _, m := range g.members {
		if m.epoch != g.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// ConsumerHeartbeat serves a ConsumerGroupHeartbeat: joins, leaves,
// subscription changes and the step-by-step reconciliation of the
// member's assignment (revocations first, then partitions other members
// have released).
func (c *Coordinator) ConsumerHeartbeat(req ConsumerHeartbeatRequest) ConsumerHeartbeatResult {
	res, err := c.consumerHeartbeat(req)
	if err != nil {
		return ConsumerHeartbeatResult{Err: err, MemberID: req.MemberID}
	}
	return res
}

func invalid(msg string) error { return withMsg(ErrInvalidRequest, msg) }

func (c *Coordinator) consumerHeartbeat(req ConsumerHeartbeatRequest) (ConsumerHeartbeatResult, error) {
	if req.Group == "" {
		return ConsumerHeartbeatResult{}, withMsg(ErrInvalidGroupID, "GroupId can't be empty.")
	}
	if req.MemberID == "" {
		if !(req.GenerateMemberID && req.MemberEpoch == JoinEpoch) {
			return ConsumerHeartbeatResult{}, invalid("MemberId can't be empty.")
		}
		req.MemberID = newUUID()
	}
	if req.MemberEpoch < StaticLeaveEpoch {
		return ConsumerHeartbeatResult{}, invalid(fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch))
	}
	if req.MemberEpoch == JoinEpoch {
		if req.RebalanceTimeout < 0 {
			return ConsumerHeartbeatResult{}, invalid("RebalanceTimeoutMs must be provided in first request.")
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return ConsumerHeartbeatResult{}, invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
		}
		if len(req.Owned) > 0 {
			return ConsumerHeartbeatResult{}, invalid("TopicPartitions must be empty when (re-)joining.")
		}
	}
	if req.MemberEpoch == StaticLeaveEpoch && req.InstanceID == "" {
		return ConsumerHeartbeatResult{}, invalid("InstanceId can't be null.")
	}
	var re *regexp.Regexp
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		var err error
		re, err = regexp.Compile("^(?:" + *req.SubscribedTopicRegex + ")$")
		if err != nil {
			return ConsumerHeartbeatResult{}, withMsg(ErrInvalidRegularExpression, fmt.Sprintf("SubscribedTopicRegex %s is invalid: %v", *req.SubscribedTopicRegex, err))
		}
	}
	st := c.settings(req.Group)
	if req.ServerAssignor != nil && *req.ServerAssignor != "" && !contains(st.ConsumerAssignors, *req.ServerAssignor) {
		return ConsumerHeartbeatResult{}, withMsg(ErrUnsupportedAssignor, fmt.Sprintf("ServerAssignor %s is not supported. Supported assignors: %s.", *req.ServerAssignor, strings.Join(st.ConsumerAssignors, ", ")))
	}

	if c.notOurs(req.Group) {
		return ConsumerHeartbeatResult{}, errNotConsumerGroup(req.Group)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return ConsumerHeartbeatResult{}, ErrNotCoordinator
	}
	if cg := c.mu.classic[req.Group]; cg != nil {
		if cg.state != StateEmpty {
			// Kafka converts a classic group whose members all use the
			// consumer protocol (online upgrade); sharq does not yet.
			return ConsumerHeartbeatResult{}, withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", req.Group))
		}
		cg.shutdownLocked()
		delete(c.mu.classic, req.Group)
	}
	if c.streamsHeldLocked(req.Group) {
		return ConsumerHeartbeatResult{}, errNotConsumerGroup(req.Group)
	}
	g := c.mu.consumer[req.Group]
	if g == nil {
		if req.MemberEpoch != JoinEpoch {
			return ConsumerHeartbeatResult{}, withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		}
		// Kafka 4.4 spends two group epochs on a new group's first
		// member (measured: a first consumer sees epoch 2, each later join
		// or leave one more), so the new group starts one epoch ahead.
		g = &consumerGroup{c: c, id: req.Group, members: map[string]*consumerMember{}, static: map[string]string{}, target: map[string]partSet{},
			epoch: 1, assignmentEpoch: 1}
		c.mu.consumer[req.Group] = g
	}
	topics := c.topics()
	m := g.members[req.MemberID]
	bump := false
	switch {
	case req.MemberEpoch == LeaveEpoch:
		if m == nil {
			return ConsumerHeartbeatResult{}, ErrUnknownMemberID
		}
		g.removeMemberLocked(m)
		g.bumpLocked(topics, st)
		return ConsumerHeartbeatResult{MemberID: req.MemberID, MemberEpoch: LeaveEpoch}, nil
	case req.MemberEpoch == StaticLeaveEpoch:
		if m == nil {
			return ConsumerHeartbeatResult{}, ErrUnknownMemberID
		}
		// The assignment stays with the instance id for a replacement
		// to take over; the session timeout removes it otherwise.
		m.prevEpoch, m.epoch = m.epoch, StaticLeaveEpoch
		return ConsumerHeartbeatResult{MemberID: req.MemberID, MemberEpoch: StaticLeaveEpoch}, nil
	case req.MemberEpoch == JoinEpoch:
		if req.InstanceID != "" {
			if cur, ok := g.static[req.InstanceID]; ok && cur != req.MemberID {
				old := g.members[cur]
				if old.epoch != StaticLeaveEpoch {
					return ConsumerHeartbeatResult{}, withMsg(ErrUnreleasedInstanceID, fmt.Sprintf("Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", req.MemberID, req.InstanceID, cur))
				}
				// The new member takes the old one's place, epoch and
				// assignment included, without a rebalance.
				stopTimer(old.hbTimer)
				stopTimer(old.revTimer)
				delete(g.members, cur)
				old.id = req.MemberID
				old.epoch = old.prevEpoch
				if old.epoch <= 0 {
					old.epoch = g.assignmentEpoch
				}
				g.members[req.MemberID] = old
				g.static[req.InstanceID] = req.MemberID
				g.target[req.MemberID] = g.target[cur]
				delete(g.target, cur)
				m = old
			}
		}
		if m == nil {
			if len(g.members) >= st.ConsumerMaxSize {
				return ConsumerHeartbeatResult{}, withMsg(ErrGroupMaxSizeReached, fmt.Sprintf("The consumer group has reached its maximum capacity of %d members.", st.ConsumerMaxSize))
			}
			m = &consumerMember{id: req.MemberID, instanceID: req.InstanceID, assigned: partSet{}, revoking: partSet{}}
			g.members[m.id] = m
			if req.InstanceID != "" {
				g.static[req.InstanceID] = m.id
			}
			bump = true
		} else if m.epoch != JoinEpoch && m.instanceID == "" {
			// A dynamic member rejoining owns nothing any more.
			m.assigned, m.revoking = partSet{}, partSet{}
			m.epoch, m.prevEpoch, m.state = JoinEpoch, JoinEpoch, memberStable
			bump = true
		}
	default:
		if m == nil {
			return ConsumerHeartbeatResult{}, withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		}
		if req.MemberEpoch > m.epoch {
			return ConsumerHeartbeatResult{}, withMsg(ErrFencedMemberEpoch, fmt.Sprintf("The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.epoch))
		}
		if req.MemberEpoch < m.epoch {
			if req.MemberEpoch != m.prevEpoch || (req.Owned != nil && !fromMap(req.Owned).subsetOf(m.assigned)) {
				return ConsumerHeartbeatResult{}, withMsg(ErrFencedMemberEpoch, fmt.Sprintf("The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.epoch))
			}
		}
	}
	// Subscription and member details.
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	if req.RackID != "" {
		m.rackID = req.RackID
	}
	if req.RebalanceTimeout >= 0 {
		m.rebalanceTimeout = req.RebalanceTimeout
	}
	if req.SubscribedTopicNames != nil {
		names := append([]string(nil), req.SubscribedTopicNames...)
		sort.Strings(names)
		if strings.Join(names, "\x00") != strings.Join(m.names, "\x00") {
			m.names = names
			bump = true
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.regex {
		m.regex, m.re = *req.SubscribedTopicRegex, re
		bump = true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.assignor {
		m.assignor = *req.ServerAssignor
		bump = true
	}
	if bump || g.hashLocked(topics) != g.topicsHash {
		g.bumpLocked(topics, st)
	}
	var owned partSet
	if req.Owned != nil {
		owned = fromMap(req.Owned)
	}
	g.reconcileLocked(m, owned)
	g.scheduleSessionLocked(m, st.ConsumerSessionTimeout)
	return ConsumerHeartbeatResult{MemberID: m.id, MemberEpoch: m.epoch, HeartbeatInterval: st.ConsumerHeartbeatInterval, Assignment: m.assigned.toMap()}, nil
}

func (s partSet) subsetOf(o partSet) bool {
	for k := range s {
		if _, ok := o[k]; !ok {
			return false
		}
	}
	return true
}

// memberTopicsLocked resolves a member's subscription against the topics.
func (m *consumerMember) topicsFor(topics map[string]TopicInfo) map[string]bool {
	out := map[string]bool{}
	for _, n := range m.names {
		out[n] = true
	}
	if m.re != nil {
		// Internal topics are candidates too: Kafka 4.4's coordinator
		// matches every topic of the metadata image (only an authorizer
		// filters), so a member naming __consumer_offsets in its regex is
		// assigned it. Skipping internal topics is the clients' rule for
		// their own pattern subscriptions.
		for n := range topics {
			if m.re.MatchString(n) {
				out[n] = true
			}
		}
	}
	return out
}

func (g *consumerGroup) subscribedTopicsLocked(topics map[string]TopicInfo) map[string]bool {
	out := map[string]bool{}
	for _, m := range g.members {
		for t := range m.topicsFor(topics) {
			out[t] = true
		}
	}
	return out
}

// hashLocked summarises the metadata of the subscribed topics, so that a
// created topic (regex), a recreated topic or added partitions start a new
// group epoch.
func (g *consumerGroup) hashLocked(topics map[string]TopicInfo) string {
	sub := g.subscribedTopicsLocked(topics)
	names := make([]string, 0, len(sub))
	for n := range sub {
		if _, ok := topics[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		ti := topics[n]
		fmt.Fprintf(&b, "%s/%x/%d;", n, ti.ID, ti.Partitions)
	}
	return b.String()
}

// bumpLocked starts a new group epoch and computes the target assignment
// for it at once (sharq assigns synchronously, so the assignment epoch
// follows the group epoch).
func (g *consumerGroup) bumpLocked(topics map[string]TopicInfo, st Settings) {
	g.epoch++
	g.topicsHash = g.hashLocked(topics)
	name := ""
	votes := map[string]int{}
	for _, m := range g.members {
		if m.assignor != "" {
			votes[m.assignor]++
		}
	}
	for a, n := range votes {
		if name == "" || n > votes[name] || (n == votes[name] && a < name) {
			name = a
		}
	}
	if name == "" && len(st.ConsumerAssignors) > 0 {
		name = st.ConsumerAssignors[0]
	}
	fn := assignors[name]
	if fn == nil {
		name, fn = AssignorUniform, assignUniform
	}
	g.assignor = name
	members := make([]assignMember, 0, len(g.members))
	for _, m := range g.members {
		members = append(members, assignMember{id: m.id, topics: m.topicsFor(topics), prev: g.target[m.id]})
	}
	g.target = fn(members, topics)
	g.assignmentEpoch = g.epoch
	if len(g.members) == 0 {
		g.c.noteEmptyLocked(g.id)
	}
}

// ownerLocked is the member that holds k (assigned or still revoking).
func (g *consumerGroup) ownerLocked(k partKey, except string) string {
	for id, m := range g.members {
		if id == except {
			continue
		}
		if _, ok := m.assigned[k]; ok {
			return id
		}
		if _, ok := m.revoking[k]; ok {
			return id
		}
	}
	return ""
}

// reconcileLocked moves the member one step towards its target
// assignment: first it must revoke what it loses (it keeps its epoch
// until it reports, by what it owns, that it did), then it gets the new
// partitions that no other member still holds.
func (g *consumerGroup) reconcileLocked(m *consumerMember, owned partSet) {
	if m.state == memberUnrevoked {
		if owned == nil {
			return
		}
		for k := range m.revoking {
			if _, still := owned[k]; still {
				return
			}
		}
		m.revoking = partSet{}
		m.state = memberStable
		m.stopRevocationLocked()
	}
	if m.epoch == g.assignmentEpoch && m.state == memberStable {
		return
	}
	target := g.target[m.id]
	keep, revoke := partSet{}, partSet{}
	for k := range m.assigned {
		if _, ok := target[k]; ok {
			keep[k] = struct{}{}
		} else {
			revoke[k] = struct{}{}
		}
	}
	if len(revoke) > 0 {
		m.assigned, m.revoking = keep, revoke
		m.state = memberUnrevoked
		g.armRevocationLocked(m)
		return
	}
	unreleased := false
	for k := range target {
		if _, ok := keep[k]; ok {
			continue
		}
		if g.ownerLocked(k, m.id) != "" {
			unreleased = true
			continue
		}
		keep[k] = struct{}{}
	}
	m.assigned = keep
	if m.epoch != g.assignmentEpoch {
		m.prevEpoch, m.epoch = m.epoch, g.assignmentEpoch
	}
	m.state = memberStable
	if unreleased {
		m.state = memberUnreleased
	}
}

// armRevocationLocked fences a member that does not revoke within its
// rebalance timeout.
func (g *consumerGroup) armRevocationLocked(m *consumerMember) {
	m.armRevocationLocked(g.c, m.rebalanceTimeout, func() {
		if g.members[m.id] != m || m.state != memberUnrevoked {
			return
		}
		g.c.logger.Info("member did not revoke partitions in time", "group", g.id, "member", m.id)
		g.removeMemberLocked(m)
		g.bumpLocked(g.c.topics(), g.c.settings(g.id))
	})
}

func (g *consumerGroup) scheduleSessionLocked(m *consumerMember, d time.Duration) {
	m.armSessionLocked(g.c, d, func() {
		if g.members[m.id] != m {
			return
		}
		g.c.logger.Info("member session expired", "group", g.id, "member", m.id)
		g.removeMemberLocked(m)
		g.bumpLocked(g.c.topics(), g.c.settings(g.id))
	})
}

func (g *consumerGroup) removeMemberLocked(m *consumerMember) {
	m.stopLocked()
	delete(g.members, m.id)
	delete(g.target, m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
}

// ConsumerDescription describes a consumer group (ConsumerGroupDescribe).
type ConsumerDescription struct {
	ID              string
	State           string
	Epoch           int32
	AssignmentEpoch int32
	Assignor        string
	Members         []ConsumerMemberDescription
}

// ConsumerMemberDescription is one member of a consumer group.
type ConsumerMemberDescription struct {
	MemberID             string
	InstanceID           string
	RackID               string
	ClientID             string
	ClientHost           string
	Epoch                int32
	SubscribedTopicNames []string
	SubscribedTopicRegex string
	Assignment           map[TopicID][]int32
	Target               map[TopicID][]int32
}

// DescribeConsumer describes a consumer group; ErrGroupIDNotFound (with
// Kafka's message) for an unknown or a classic group.
func (c *Coordinator) DescribeConsumer(id string) (ConsumerDescription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.mu.consumer[id]
	if g == nil {
		if c.mu.classic[id] != nil || c.mu.streams[id] != nil || c.mu.offsets[id] != nil {
			return ConsumerDescription{}, withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", id))
		}
		return ConsumerDescription{}, withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s not found.", id))
	}
	d := ConsumerDescription{ID: id, State: g.stateLocked(), Epoch: g.epoch, AssignmentEpoch: g.assignmentEpoch, Assignor: g.assignor}
	if d.Assignor == "" {
		if as := c.settings(id).ConsumerAssignors; len(as) > 0 {
			d.Assignor = as[0]
		}
	}
	ids := make([]string, 0, len(g.members))
	for mid := range g.members {
		ids = append(ids, mid)
	}
	sort.Strings(ids)
	for _, mid := range ids {
		m := g.members[mid]
		d.Members = append(d.Members, ConsumerMemberDescription{
			MemberID: m.id, InstanceID: m.instanceID, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
			Epoch: m.epoch, SubscribedTopicNames: append([]string(nil), m.names...), SubscribedTopicRegex: m.regex,
			Assignment: m.assigned.toMap(), Target: g.target[m.id].toMap(),
		})
	}
	return d, nil
}
