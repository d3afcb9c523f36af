package group

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
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
	memberCore
	names    []string
	regex    string
	re       *regexp.Regexp
	assignor string
	assigned partSet
	revoking partSet
}

type consumerGroup struct {
	epochGroup[*consumerMember, partSet]
	topicsHash string
	assignor   string
}

// newConsumerGroup is an empty group. Kafka 4.4 spends two group epochs
// on a new group's first member (measured: a first consumer sees epoch 2,
// each later join or leave one more), so the new group starts one epoch
// ahead.
func newConsumerGroup(c *Coordinator, id string) *consumerGroup {
	g := &consumerGroup{}
	g.epochGroup = newEpochGroup[*consumerMember, partSet](c, id, consumerKind, g)
	g.epoch, g.assignmentEpoch = 1, 1
	return g
}

// stateLocked is the KIP-848 group state.
func (g *consumerGroup) stateLocked() string {
	if len(g.members) == 0 {
		return "Empty"
	}
	if g.epoch != g.assignmentEpoch {
		return "Assigning"
	}
	if g.reconcilingLocked() {
		return "Reconciling"
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
	re, err := checkConsumerHeartbeat(&req)
	if err != nil {
		return ConsumerHeartbeatResult{}, err
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
	g, err := c.consumerGroupForLocked(req)
	if err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	topics := c.topics()
	m := g.members[req.MemberID]
	bump := false
	switch {
	case req.MemberEpoch == LeaveEpoch || req.MemberEpoch == StaticLeaveEpoch:
		return g.leaveLocked(m, req, topics, st)
	case req.MemberEpoch == JoinEpoch:
		if m, bump, err = g.joinLocked(m, req, st); err != nil {
			return ConsumerHeartbeatResult{}, err
		}
	default:
		if m, err = g.memberAtEpochLocked(req.MemberID, req.MemberEpoch, func(m *consumerMember) bool {
			return req.Owned == nil || fromMap(req.Owned).subsetOf(m.assigned)
		}); err != nil {
			return ConsumerHeartbeatResult{}, err
		}
	}
	if m.updateLocked(req, re) || bump || g.hashLocked(topics) != g.topicsHash {
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

// checkConsumerHeartbeat checks the request's fields as Kafka does before
// it looks at the group, and compiles the subscribed regex. A v0 join
// without a member id gets one here.
func checkConsumerHeartbeat(req *ConsumerHeartbeatRequest) (*regexp.Regexp, error) {
	if req.Group == "" {
		return nil, withMsg(ErrInvalidGroupID, "GroupId can't be empty.")
	}
	if req.MemberID == "" {
		if !(req.GenerateMemberID && req.MemberEpoch == JoinEpoch) {
			return nil, invalid("MemberId can't be empty.")
		}
		req.MemberID = newUUID()
	}
	if req.MemberEpoch < StaticLeaveEpoch {
		return nil, invalid(fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch))
	}
	if req.MemberEpoch == JoinEpoch {
		if req.RebalanceTimeout < 0 {
			return nil, invalid("RebalanceTimeoutMs must be provided in first request.")
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return nil, invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
		}
		if len(req.Owned) > 0 {
			return nil, invalid("TopicPartitions must be empty when (re-)joining.")
		}
	}
	if req.MemberEpoch == StaticLeaveEpoch && req.InstanceID == "" {
		return nil, invalid("InstanceId can't be null.")
	}
	if req.SubscribedTopicRegex == nil || *req.SubscribedTopicRegex == "" {
		return nil, nil
	}
	re, err := regexp.Compile("^(?:" + *req.SubscribedTopicRegex + ")$")
	if err != nil {
		return nil, withMsg(ErrInvalidRegularExpression, fmt.Sprintf("SubscribedTopicRegex %s is invalid: %v", *req.SubscribedTopicRegex, err))
	}
	return re, nil
}

// consumerGroupForLocked is the consumer group a heartbeat is for: an
// empty classic group becomes one (its offsets kept), a new one is
// created for a joining member.
func (c *Coordinator) consumerGroupForLocked(req ConsumerHeartbeatRequest) (*consumerGroup, error) {
	if cg := c.mu.classic[req.Group]; cg != nil {
		if cg.state != StateEmpty {
			// Kafka converts a classic group whose members all use the
			// consumer protocol (online upgrade); sharq does not yet.
			return nil, withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", req.Group))
		}
		cg.shutdownLocked()
		delete(c.mu.classic, req.Group)
	}
	if c.streamsHeldLocked(req.Group) {
		return nil, errNotConsumerGroup(req.Group)
	}
	g := c.mu.consumer[req.Group]
	if g == nil {
		if req.MemberEpoch != JoinEpoch {
			return nil, errUnknownMember(req.MemberID, req.Group)
		}
		g = newConsumerGroup(c, req.Group)
		c.mu.consumer[req.Group] = g
	}
	return g, nil
}

// leaveLocked serves a heartbeat with LeaveEpoch or StaticLeaveEpoch.
func (g *consumerGroup) leaveLocked(m *consumerMember, req ConsumerHeartbeatRequest, topics map[string]TopicInfo, st Settings) (ConsumerHeartbeatResult, error) {
	if m == nil {
		return ConsumerHeartbeatResult{}, ErrUnknownMemberID
	}
	if req.MemberEpoch == StaticLeaveEpoch {
		// The assignment stays with the instance id for a replacement
		// to take over; the session timeout removes it otherwise.
		m.prevEpoch, m.epoch = m.epoch, StaticLeaveEpoch
		return ConsumerHeartbeatResult{MemberID: req.MemberID, MemberEpoch: StaticLeaveEpoch}, nil
	}
	g.removeMemberLocked(m)
	g.bumpLocked(topics, st)
	return ConsumerHeartbeatResult{MemberID: req.MemberID, MemberEpoch: LeaveEpoch}, nil
}

// joinLocked serves a heartbeat with JoinEpoch: a static member taking
// over its instance's place, a new member, or a dynamic member rejoining
// (it owns nothing any more). bump is whether the group needs a new
// epoch.
func (g *consumerGroup) joinLocked(m *consumerMember, req ConsumerHeartbeatRequest, st Settings) (_ *consumerMember, bump bool, _ error) {
	if req.InstanceID != "" {
		old, ok, err := g.takeOverStaticLocked(req.InstanceID, req.MemberID)
		if err != nil {
			return nil, false, err
		}
		if ok {
			m = old
		}
	}
	switch {
	case m == nil:
		if len(g.members) >= st.ConsumerMaxSize {
			return nil, false, withMsg(ErrGroupMaxSizeReached, fmt.Sprintf("The consumer group has reached its maximum capacity of %d members.", st.ConsumerMaxSize))
		}
		m = &consumerMember{memberCore: memberCore{id: req.MemberID, instanceID: req.InstanceID}, assigned: partSet{}, revoking: partSet{}}
		g.members[m.id] = m
		if req.InstanceID != "" {
			g.static[req.InstanceID] = m.id
		}
		bump = true
	case m.epoch != JoinEpoch && m.instanceID == "":
		m.assigned, m.revoking = partSet{}, partSet{}
		m.epoch, m.prevEpoch, m.state = JoinEpoch, JoinEpoch, memberStable
		bump = true
	}
	return m, bump, nil
}

// updateLocked takes the member details and subscription the heartbeat
// carries, and reports whether the subscription changed.
func (m *consumerMember) updateLocked(req ConsumerHeartbeatRequest, re *regexp.Regexp) (changed bool) {
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
			changed = true
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.regex {
		m.regex, m.re = *req.SubscribedTopicRegex, re
		changed = true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.assignor {
		m.assignor = *req.ServerAssignor
		changed = true
	}
	return changed
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
	for _, mid := range g.memberIDsLocked() {
		m := g.members[mid]
		d.Members = append(d.Members, ConsumerMemberDescription{
			MemberID: m.id, InstanceID: m.instanceID, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
			Epoch: m.epoch, SubscribedTopicNames: append([]string(nil), m.names...), SubscribedTopicRegex: m.regex,
			Assignment: m.assigned.toMap(), Target: g.target[m.id].toMap(),
		})
	}
	return d, nil
}
