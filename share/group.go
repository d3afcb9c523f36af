package share

// The share group coordinator: membership, member epochs and the simple
// assignor (KIP-932), as Kafka 4.4's group coordinator does it for
// ShareGroupHeartbeat and ShareGroupDescribe. Like SharePartition it takes
// the clock as an argument and does no I/O; the broker serialises calls and
// arms one timer for NextSessionDeadline. Member state is not persisted: after
// a restart heartbeats with epoch > 0 get UNKNOWN_MEMBER_ID and clients rejoin
// with epoch 0 (what Kafka clients do after a coordinator move).

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// TopicInfo is what the assignor needs of a subscribed topic.
type TopicInfo struct {
	ID         [16]byte
	Partitions int32
}

// TopicLookup resolves subscribed topic names (a metadata snapshot).
type TopicLookup func(name string) (TopicInfo, bool)

// GroupConfig holds the effective settings of one share group.
type GroupConfig struct {
	SessionTimeout    time.Duration // share.session.timeout.ms (45 s)
	HeartbeatInterval time.Duration // share.heartbeat.interval.ms (5 s)
	MaxSize           int           // group.share.max.size (200)
}

func (c GroupConfig) withDefaults() GroupConfig {
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 45 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.MaxSize <= 0 {
		c.MaxSize = 200
	}
	return c
}

// Assignment is a member's partitions by topic id, partitions sorted.
type Assignment map[[16]byte][]int32

func (a Assignment) equal(b Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

// Member is one share group member.
type Member struct {
	ID         string
	Epoch      int32
	PrevEpoch  int32
	RackID     *string
	ClientID   string
	ClientHost string
	Subscribed []string // sorted
	Assignment Assignment
	deadline   time.Time
}

// Group is one share group.
type Group struct {
	ID              string
	Epoch           int32
	AssignmentEpoch int32
	Members         map[string]*Member
	// topicsHash fingerprints the subscribed topics' ids and partition
	// counts, so a partition change or a re-created topic bumps the epoch.
	topicsHash string
	target     targetAssignment
	// topicInfo is what the subscribed topics looked like at the last
	// heartbeat, for recomputing the assignment when a member leaves.
	topicInfo map[string]TopicInfo
	// initialized counts the partitions of each topic whose share state
	// Kafka would have initialised for this group (see initEpochs).
	initialized map[[16]byte]int32
}

// State is Kafka's share group state: Empty or Stable.
func (g *Group) State() string {
	if len(g.Members) == 0 {
		return "Empty"
	}
	return "Stable"
}

// HeartbeatRequest is a ShareGroupHeartbeat in plain values.
type HeartbeatRequest struct {
	GroupID     string
	MemberID    string
	MemberEpoch int32
	RackID      *string
	Subscribed  []string // nil = unchanged
	ClientID    string
	ClientHost  string
}

// HeartbeatResponse is what the member is told.
type HeartbeatResponse struct {
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	// Assignment is nil when it is not sent (unchanged and not asked for).
	Assignment Assignment
	Sent       bool
}

// Coordinator holds every share group of this node. Not safe for concurrent
// use: the broker holds one mutex around it.
type Coordinator struct {
	groups map[string]*Group
}

// NewCoordinator returns an empty coordinator.
func NewCoordinator() *Coordinator { return &Coordinator{groups: map[string]*Group{}} }

// Group returns a group or nil.
func (c *Coordinator) Group(id string) *Group { return c.groups[id] }

// GroupIDs lists the groups, sorted.
func (c *Coordinator) GroupIDs() []string {
	out := make([]string, 0, len(c.groups))
	for id := range c.groups {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// EnsureGroup creates an empty group (AlterShareGroupOffsets creates one).
func (c *Coordinator) EnsureGroup(id string) *Group {
	g := c.groups[id]
	if g == nil {
		g = &Group{ID: id, Members: map[string]*Member{}}
		c.groups[id] = g
	}
	return g
}

// DeleteGroup removes an empty group.
func (c *Coordinator) DeleteGroup(id string) error {
	g := c.groups[id]
	switch {
	case g == nil:
		return fmt.Errorf("share group %s: %w", id, ErrGroupIDNotFound)
	case len(g.Members) > 0:
		return fmt.Errorf("share group %s has %d members: %w", id, len(g.Members), ErrNonEmptyGroup)
	}
	delete(c.groups, id)
	return nil
}

// validateHeartbeat applies ShareGroupHeartbeat's request checks.
func validateHeartbeat(req *HeartbeatRequest) error {
	switch {
	case strings.TrimSpace(req.GroupID) == "":
		return fmt.Errorf("%w: GroupId can't be empty", ErrInvalidHeartbeat)
	case strings.TrimSpace(req.MemberID) == "":
		return fmt.Errorf("%w: MemberId can't be empty", ErrInvalidHeartbeat)
	case len(req.MemberID) > 36:
		return fmt.Errorf("%w: MemberId can't be longer than 36 characters", ErrInvalidHeartbeat)
	case req.RackID != nil && strings.TrimSpace(*req.RackID) == "":
		return fmt.Errorf("%w: RackId can't be empty", ErrInvalidHeartbeat)
	case req.MemberEpoch < -1:
		return fmt.Errorf("%w: MemberEpoch is invalid", ErrInvalidHeartbeat)
	case req.MemberEpoch == 0 && len(req.Subscribed) == 0:
		return fmt.Errorf("%w: SubscribedTopicNames must be set in first request", ErrInvalidHeartbeat)
	}
	return nil
}

// Heartbeat handles one ShareGroupHeartbeat. isOtherGroup reports whether
// the id belongs to a group of another type (consumer, classic).
func (c *Coordinator) Heartbeat(now time.Time, req HeartbeatRequest, cfg GroupConfig, topics TopicLookup, isOtherGroup bool) (HeartbeatResponse, error) {
	cfg = cfg.withDefaults()
	if err := validateHeartbeat(&req); err != nil {
		return HeartbeatResponse{}, err
	}
	if isOtherGroup {
		return HeartbeatResponse{}, fmt.Errorf("%w: Group %s is not a share group.", ErrNotShareGroupError, req.GroupID)
	}
	g := c.groups[req.GroupID]
	if req.MemberEpoch == -1 {
		return c.leave(g, req)
	}
	if g == nil {
		if req.MemberEpoch != 0 {
			return HeartbeatResponse{}, fmt.Errorf("%w: Share group %s not found.", ErrGroupIDNotFound, req.GroupID)
		}
		g = c.EnsureGroup(req.GroupID)
	}
	m := g.Members[req.MemberID]
	sendAssignment := req.MemberEpoch == 0 || req.Subscribed != nil
	// Kafka bumps the group epoch at most once per heartbeat, whatever
	// changed (a new member, its subscription, the topics' metadata).
	bump := false
	switch {
	case m == nil && req.MemberEpoch != 0:
		return HeartbeatResponse{}, fmt.Errorf("%w: member %s is not in share group %s", ErrUnknownMemberID, req.MemberID, req.GroupID)
	case m == nil:
		if len(g.Members) >= cfg.MaxSize {
			return HeartbeatResponse{}, fmt.Errorf("%w: the share group has reached its maximum size of %d", ErrGroupMaxSize, cfg.MaxSize)
		}
		m = &Member{ID: req.MemberID}
		g.Members[req.MemberID] = m
		bump = true
	case req.MemberEpoch == 0:
		// A rejoin with the same id (KAFKA-19233): accepted.
	case req.MemberEpoch > m.Epoch:
		return HeartbeatResponse{}, fmt.Errorf("%w: member epoch %d is newer than %d", ErrFencedMemberEpoch, req.MemberEpoch, m.Epoch)
	case req.MemberEpoch < m.Epoch && req.MemberEpoch != m.PrevEpoch:
		return HeartbeatResponse{}, fmt.Errorf("%w: member epoch %d is older than %d", ErrFencedMemberEpoch, req.MemberEpoch, m.Epoch)
	}
	m.deadline = now.Add(cfg.SessionTimeout)
	if req.ClientID != "" {
		m.ClientID = req.ClientID
	}
	if req.ClientHost != "" {
		m.ClientHost = req.ClientHost
	}
	if req.RackID != nil {
		r := *req.RackID
		m.RackID = &r
	}
	if req.Subscribed != nil {
		subs := slices.Clone(req.Subscribed)
		sort.Strings(subs)
		subs = slices.Compact(subs)
		if !slices.Equal(subs, m.Subscribed) {
			m.Subscribed = subs
			bump = true
		}
	}
	if h := g.hashTopics(topics); h != g.topicsHash {
		g.topicsHash = h
		bump = true
	}
	if bump {
		g.Epoch++
	}
	g.Epoch += g.initEpochs(topics)
	if g.AssignmentEpoch < g.Epoch {
		g.assign(topics)
	}
	old := m.Assignment
	target := g.target[m.ID]
	changed := !old.equal(target) || m.Epoch != g.AssignmentEpoch
	if changed {
		m.PrevEpoch, m.Epoch = m.Epoch, g.AssignmentEpoch
		if !old.equal(target) {
			m.Assignment = target
			sendAssignment = true
		}
	}
	resp := HeartbeatResponse{MemberEpoch: m.Epoch, HeartbeatInterval: cfg.HeartbeatInterval}
	if sendAssignment {
		resp.Assignment, resp.Sent = m.Assignment, true
		if resp.Assignment == nil {
			resp.Assignment = Assignment{}
		}
	}
	return resp, nil
}

func (c *Coordinator) leave(g *Group, req HeartbeatRequest) (HeartbeatResponse, error) {
	if g == nil {
		return HeartbeatResponse{}, fmt.Errorf("%w: Share group %s not found.", ErrGroupIDNotFound, req.GroupID)
	}
	if g.Members[req.MemberID] == nil {
		return HeartbeatResponse{}, fmt.Errorf("%w: member %s is not in share group %s", ErrUnknownMemberID, req.MemberID, req.GroupID)
	}
	g.removeMember(req.MemberID)
	return HeartbeatResponse{MemberEpoch: -1}, nil
}

// removeMember fences a member: a new group epoch, and the target
// assignment recomputed for it at once, as Kafka's coordinator does (so an
// Empty group shows equal group and assignment epochs).
func (g *Group) removeMember(id string) {
	delete(g.Members, id)
	delete(g.target, id)
	g.Epoch++
	g.assign(func(name string) (TopicInfo, bool) {
		ti, ok := g.topicInfo[name]
		return ti, ok
	})
}

// initEpochs marks the subscribed partitions Kafka would initialise for
// this group now and returns the group epochs that costs: Kafka's
// coordinator assigns only partitions whose share state is initialised,
// and bumps the group epoch twice for each round of initialisation (when
// it records the partitions as initialising, and when the share
// coordinator has initialised them). sharq assigns them at once, with the
// same epochs.
func (g *Group) initEpochs(topics TopicLookup) int32 {
	grew := false
	for _, m := range g.Members {
		for _, name := range m.Subscribed {
			ti, ok := topics(name)
			if !ok || ti.Partitions <= 0 || g.initialized[ti.ID] >= ti.Partitions {
				continue
			}
			if g.initialized == nil {
				g.initialized = map[[16]byte]int32{}
			}
			g.initialized[ti.ID] = ti.Partitions
			grew = true
		}
	}
	if grew {
		return 2
	}
	return 0
}

// ForgetInitialized drops the initialisation marks of topic (its share
// offsets were deleted: Kafka initialises it again on the next use).
func (g *Group) ForgetInitialized(topicID [16]byte) { delete(g.initialized, topicID) }

// ExpireSessions fences members whose session timed out and returns them
// as (group, member) pairs.
func (c *Coordinator) ExpireSessions(now time.Time) [][2]string {
	var out [][2]string
	for _, gid := range c.GroupIDs() {
		g := c.groups[gid]
		for _, id := range g.memberIDs() {
			if m := g.Members[id]; !now.Before(m.deadline) {
				g.removeMember(id)
				out = append(out, [2]string{gid, id})
			}
		}
	}
	return out
}

// NextSessionDeadline is the earliest member session deadline.
func (c *Coordinator) NextSessionDeadline() (time.Time, bool) {
	var next time.Time
	found := false
	for _, g := range c.groups {
		for _, m := range g.Members {
			if !found || m.deadline.Before(next) {
				next, found = m.deadline, true
			}
		}
	}
	return next, found
}

func (g *Group) memberIDs() []string {
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (g *Group) hashTopics(topics TopicLookup) string {
	names := map[string]bool{}
	for _, m := range g.Members {
		for _, t := range m.Subscribed {
			names[t] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var b strings.Builder
	g.topicInfo = make(map[string]TopicInfo, len(sorted))
	for _, n := range sorted {
		if ti, ok := topics(n); ok {
			fmt.Fprintf(&b, "%s/%x/%d;", n, ti.ID, ti.Partitions)
			g.topicInfo[n] = ti
		}
	}
	return b.String()
}

// The target assignment lives on the group; members move to it in their
// next heartbeat (share groups have no revocation phase).
type targetAssignment = map[string]Assignment

// assign computes the target assignment with the simple assignor: for each
// topic, its partitions are spread over its subscribers so that every
// partition is held by ceil(subscribers/partitions) members and member loads
// differ by at most one, keeping current holdings where that stays balanced.
func (g *Group) assign(topics TopicLookup) {
	subscribers := map[string][]string{} // topic -> sorted member ids
	for _, id := range g.memberIDs() {
		for _, t := range g.Members[id].Subscribed {
			subscribers[t] = append(subscribers[t], id)
		}
	}
	target := targetAssignment{}
	for _, id := range g.memberIDs() {
		target[id] = Assignment{}
	}
	names := make([]string, 0, len(subscribers))
	for t := range subscribers {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		ti, ok := topics(t)
		if !ok || ti.Partitions <= 0 {
			continue
		}
		assignTopic(ti, subscribers[t], g.Members, target)
	}
	for id, a := range target {
		for tid, ps := range a {
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			a[tid] = ps
		}
		target[id] = a
	}
	g.target = target
	g.AssignmentEpoch = g.Epoch
}

func assignTopic(ti TopicInfo, members []string, current map[string]*Member, target targetAssignment) {
	p := int(ti.Partitions)
	share := (len(members) + p - 1) / p // members per partition
	if share < 1 {
		share = 1
	}
	slots := share * p
	quota := make(map[string]int, len(members))
	for i, id := range members {
		quota[id] = slots / len(members)
		if i < slots%len(members) {
			quota[id]++
		}
	}
	holders := make([]int, p)
	has := map[string]map[int32]bool{}
	give := func(id string, part int32) {
		target[id][ti.ID] = append(target[id][ti.ID], part)
		holders[part]++
		quota[id]--
		if has[id] == nil {
			has[id] = map[int32]bool{}
		}
		has[id][part] = true
	}
	// Sticky pass: keep what members hold while it stays balanced.
	for _, id := range members {
		if m := current[id]; m != nil {
			for _, part := range m.Assignment[ti.ID] {
				if int(part) < p && quota[id] > 0 && holders[part] < share {
					give(id, part)
				}
			}
		}
	}
	// Fill pass: least-held partitions to members with room, round robin.
	next := 0
	for part := 0; part < p; part++ {
		for holders[part] < share {
			given := false
			for tries := 0; tries < len(members); tries++ {
				id := members[next%len(members)]
				next++
				if quota[id] > 0 && !has[id][int32(part)] {
					give(id, int32(part))
					given = true
					break
				}
			}
			if !given {
				break
			}
		}
	}
}
