package group

// Streams groups (KIP-1071): Kafka Streams applications with
// group.protocol=streams. The members declare their topology when they
// join; the coordinator checks it against the cluster's topics (missing
// source topics, internal topics to create, co-partitioning), assigns
// tasks (subtopology, partition) with its sticky assignor, and moves each
// member towards its target step by step as KIP-848 does for partitions: a
// member first revokes the tasks it loses (keeping its epoch until it
// reports, by what it owns, that it did), and a task becomes another
// member's only once nobody else holds it.
//
// Offsets are committed with OffsetCommit and the member epoch, as by a
// KIP-848 consumer; they live in the same offset store as every group's.

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Streams errors (StreamsGroupHeartbeat).
var (
	ErrStreamsInvalidTopology      = &Error{130, "the supplied topology is invalid"}
	ErrStreamsInvalidTopologyEpoch = &Error{131, "the supplied topology epoch is invalid"}
	ErrStreamsTopologyFenced       = &Error{132, "the supplied topology epoch is outdated"}
)

// TypeStreams is the group type of a streams group (ListGroups).
const TypeStreams = "streams"

// StreamsEndpoint is a member's Interactive Queries endpoint.
type StreamsEndpoint struct {
	Host string
	Port uint16
}

// StreamsTaskOffset is a changelog offset a member reports for a task.
type StreamsTaskOffset struct {
	Subtopology string
	Partition   int32
	Offset      int64
}

// StreamsHeartbeatRequest is a StreamsGroupHeartbeat. Pointers and nil
// slices/maps mean "unchanged since the last heartbeat", as on the wire.
type StreamsHeartbeatRequest struct {
	Group       string
	MemberID    string
	MemberEpoch int32
	InstanceID  *string
	RackID      *string
	// RebalanceTimeout < 0 = unchanged.
	RebalanceTimeout time.Duration
	Topology         *StreamsTopology
	// Active, Standby and Warmup are the tasks the member owns now; all
	// three nil = unchanged.
	Active, Standby, Warmup map[string][]int32
	ProcessID               *string
	UserEndpoint            *StreamsEndpoint
	ClientTags              map[string]string
	TaskOffsets             []StreamsTaskOffset
	TaskEndOffsets          []StreamsTaskOffset
	ShutdownApplication     bool
	ClientID, ClientHost    string
}

// StreamsEndpointPartitions is one member's partitions for Interactive
// Queries (PartitionsByUserEndpoint).
type StreamsEndpointPartitions struct {
	Endpoint StreamsEndpoint
	Active   map[string][]int32 // topic -> partitions
	Standby  map[string][]int32
}

// StreamsHeartbeatResult answers a StreamsGroupHeartbeat.
type StreamsHeartbeatResult struct {
	Err                   error
	MemberID              string
	MemberEpoch           int32
	HeartbeatInterval     time.Duration
	TaskOffsetInterval    time.Duration
	AcceptableRecoveryLag int64
	Status                []StreamsStatus
	// Active, Standby and Warmup are the member's current tasks; nil when
	// the member left.
	Active, Standby, Warmup  map[string][]int32
	EndpointInformationEpoch int32
	// PartitionsByEndpoint is set when the member's endpoint epoch is
	// behind the group's.
	PartitionsByEndpoint []StreamsEndpointPartitions
	// CreateTopics are internal topics the broker should create (Kafka's
	// KafkaApis creates them after the heartbeat, if allowed).
	CreateTopics []StreamsInternalTopic
}

type streamsMember struct {
	id, instanceID, rackID string
	clientID, clientHost   string
	process                string
	endpoint               *StreamsEndpoint
	clientTags             map[string]string
	taskOffsets            []StreamsTaskOffset
	taskEndOffsets         []StreamsTaskOffset
	epoch, prevEpoch       int32
	topologyEpoch          int32
	state                  memberState
	rebalanceTimeout       time.Duration
	// active/standby/warmup are what the member was given and holds;
	// revokingActive/revokingStandby what it must still give up.
	active, standby, warmup         taskSet
	revokingActive, revokingStandby taskSet
	memberTimers
}

type streamsGroup struct {
	c               *Coordinator
	id              string
	epoch           int32
	assignmentEpoch int32
	members         map[string]*streamsMember
	static          map[string]string
	target          map[string]streamsTarget
	topology        *StreamsTopology
	configured      *configuredTopology
	// shutdown is set once a member asked the whole application to stop
	// (SHUTDOWN_APPLICATION for every member until the group empties).
	shutdown      bool
	endpointEpoch int32
	// delayUntil is when a new group's first assignment may be computed
	// (group.streams.initial.rebalance.delay.ms); zero once done.
	delayUntil time.Time
}

func (g *streamsGroup) shutdownLocked() {
	for _, m := range g.members {
		stopTimer(m.hbTimer)
		stopTimer(m.revTimer)
	}
}

// stateLocked is Kafka's streams group state.
func (g *streamsGroup) stateLocked() string {
	switch {
	case len(g.members) == 0:
		return "Empty"
	case g.configured == nil || !g.configured.ready:
		return "NotReady"
	case g.epoch != g.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range g.members {
		if m.epoch != g.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// errNotStreamsGroup is Kafka's answer for a group of another type.
func errNotStreamsGroup(id string) error {
	return withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s is not a streams group.", id))
}

// StreamsHeartbeat serves a StreamsGroupHeartbeat.
func (c *Coordinator) StreamsHeartbeat(req StreamsHeartbeatRequest) StreamsHeartbeatResult {
	res, err := c.streamsHeartbeat(req)
	if err != nil {
		return StreamsHeartbeatResult{Err: err, MemberID: req.MemberID}
	}
	return res
}

func validateStreamsHeartbeat(req *StreamsHeartbeatRequest) error {
	switch {
	case req.MemberID == "":
		return invalid("MemberId can't be empty.")
	case req.Group == "":
		return invalid("GroupId can't be empty.")
	case req.InstanceID != nil && *req.InstanceID == "":
		return invalid("InstanceId can't be empty.")
	case req.RackID != nil && *req.RackID == "":
		return invalid("RackId can't be empty.")
	}
	if req.Topology != nil {
		for _, s := range req.Topology.Subtopologies {
			if len(s.SourceTopicRegex) > 0 {
				return invalid("Regular expressions for source topics are not supported yet.")
			}
		}
	}
	owned := req.Active != nil || req.Standby != nil || req.Warmup != nil
	switch {
	case req.MemberEpoch == JoinEpoch:
		if req.RebalanceTimeout < 0 {
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		}
		if len(req.Active) > 0 {
			return invalid("ActiveTasks must be empty when (re-)joining.")
		}
		if len(req.Standby) > 0 {
			return invalid("StandbyTasks must be empty when (re-)joining.")
		}
		if len(req.Warmup) > 0 {
			return invalid("WarmupTasks must be empty when (re-)joining.")
		}
		if req.Topology == nil {
			return invalid("Topology must be non-null when (re-)joining.")
		}
		if err := validateStreamsTopology(req.Topology); err != nil {
			return err
		}
	case req.MemberEpoch == StaticLeaveEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case req.MemberEpoch < StaticLeaveEpoch:
		return invalid(fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch))
	}
	if owned && (req.Active == nil || req.Standby == nil || req.Warmup == nil) {
		return invalid("If one task-type is non-null, all must be non-null.")
	}
	if req.MemberEpoch != JoinEpoch && req.Topology != nil {
		return invalid("Topology can only be provided when (re-)joining.")
	}
	return nil
}

func (c *Coordinator) streamsHeartbeat(req StreamsHeartbeatRequest) (StreamsHeartbeatResult, error) {
	if err := validateStreamsHeartbeat(&req); err != nil {
		return StreamsHeartbeatResult{}, err
	}
	if c.notOurs(req.Group) {
		return StreamsHeartbeatResult{}, errNotStreamsGroup(req.Group)
	}
	st := c.settings(req.Group)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return StreamsHeartbeatResult{}, ErrNotCoordinator
	}
	// One id space: a classic or consumer group with members keeps its
	// id; an empty one (offsets only) becomes a streams group, offsets
	// kept.
	if cg := c.mu.classic[req.Group]; cg != nil {
		if cg.state != StateEmpty {
			return StreamsHeartbeatResult{}, errNotStreamsGroup(req.Group)
		}
		cg.shutdownLocked()
		delete(c.mu.classic, req.Group)
	}
	if kg := c.mu.consumer[req.Group]; kg != nil {
		if len(kg.members) > 0 {
			return StreamsHeartbeatResult{}, errNotStreamsGroup(req.Group)
		}
		delete(c.mu.consumer, req.Group)
	}
	g := c.mu.streams[req.Group]
	if g == nil {
		if req.MemberEpoch != JoinEpoch {
			return StreamsHeartbeatResult{}, withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		}
		g = &streamsGroup{c: c, id: req.Group, members: map[string]*streamsMember{}, static: map[string]string{}, target: map[string]streamsTarget{}}
		if st.StreamsInitialRebalanceDelay > 0 {
			g.delayUntil = c.clock.Now().Add(st.StreamsInitialRebalanceDelay)
		}
		c.mu.streams[req.Group] = g
	}
	topics := c.topics()
	m := g.members[req.MemberID]
	bump := false
	switch {
	case req.MemberEpoch == LeaveEpoch:
		if m == nil {
			return StreamsHeartbeatResult{}, withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		}
		g.removeMemberLocked(m)
		g.bumpLocked(topics, st)
		return StreamsHeartbeatResult{MemberID: req.MemberID, MemberEpoch: LeaveEpoch}, nil
	case req.MemberEpoch == StaticLeaveEpoch:
		if m == nil {
			return StreamsHeartbeatResult{}, withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		}
		m.prevEpoch, m.epoch = m.epoch, StaticLeaveEpoch
		g.scheduleSessionLocked(m, st.StreamsSessionTimeout)
		return StreamsHeartbeatResult{MemberID: req.MemberID, MemberEpoch: StaticLeaveEpoch}, nil
	case req.MemberEpoch == JoinEpoch:
		if req.InstanceID != nil {
			if cur, ok := g.static[*req.InstanceID]; ok && cur != req.MemberID {
				old := g.members[cur]
				if old.epoch != StaticLeaveEpoch {
					return StreamsHeartbeatResult{}, withMsg(ErrUnreleasedInstanceID, fmt.Sprintf("Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", req.MemberID, *req.InstanceID, cur))
				}
				// The new member takes the old one's place and tasks.
				stopTimer(old.hbTimer)
				stopTimer(old.revTimer)
				delete(g.members, cur)
				old.id = req.MemberID
				old.epoch = old.prevEpoch
				if old.epoch <= 0 {
					old.epoch = g.assignmentEpoch
				}
				g.members[req.MemberID] = old
				g.static[*req.InstanceID] = req.MemberID
				g.target[req.MemberID] = g.target[cur]
				delete(g.target, cur)
				m = old
			}
		}
		if m == nil {
			if len(g.members) >= st.StreamsMaxSize {
				return StreamsHeartbeatResult{}, withMsg(ErrGroupMaxSizeReached, fmt.Sprintf("The streams group has reached its maximum capacity of %d members.", st.StreamsMaxSize))
			}
			m = &streamsMember{id: req.MemberID}
			m.resetTasks()
			if req.InstanceID != nil {
				m.instanceID = *req.InstanceID
				g.static[m.instanceID] = m.id
			}
			g.members[m.id] = m
			bump = true
		} else if m.epoch != JoinEpoch && m.instanceID == "" {
			// A dynamic member rejoining owns nothing any more.
			m.resetTasks()
			m.epoch, m.prevEpoch, m.state = JoinEpoch, JoinEpoch, memberStable
			bump = true
		}
		m.topologyEpoch = req.Topology.Epoch
		if g.topology == nil || len(g.members) == 1 || req.Topology.Epoch > g.topology.Epoch {
			if g.topology == nil || !sameTopology(g.topology, req.Topology) {
				t := *req.Topology
				g.topology = &t
				g.configured = nil
				bump = true
			}
		}
	default:
		if m == nil {
			return StreamsHeartbeatResult{}, withMsg(ErrUnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		}
		if req.MemberEpoch > m.epoch {
			return StreamsHeartbeatResult{}, withMsg(ErrFencedMemberEpoch, fmt.Sprintf("The streams group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.epoch))
		}
		if req.MemberEpoch < m.epoch {
			owned := req.Active != nil && taskSetFrom(req.Active).subsetOf(m.active)
			if req.MemberEpoch != m.prevEpoch || (req.Active != nil && !owned) {
				return StreamsHeartbeatResult{}, withMsg(ErrFencedMemberEpoch, fmt.Sprintf("The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.epoch))
			}
		}
	}
	// Member details.
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	if req.RackID != nil {
		m.rackID = *req.RackID
	}
	if req.RebalanceTimeout >= 0 {
		m.rebalanceTimeout = req.RebalanceTimeout
	}
	if req.ProcessID != nil && *req.ProcessID != m.process {
		m.process = *req.ProcessID
		bump = true
	}
	if req.UserEndpoint != nil && (m.endpoint == nil || *m.endpoint != *req.UserEndpoint) {
		e := *req.UserEndpoint
		m.endpoint = &e
		g.endpointEpoch++
	}
	if req.ClientTags != nil {
		m.clientTags = req.ClientTags
	}
	if req.TaskOffsets != nil {
		m.taskOffsets = req.TaskOffsets
	}
	if req.TaskEndOffsets != nil {
		m.taskEndOffsets = req.TaskEndOffsets
	}
	if req.ShutdownApplication {
		g.shutdown = true
	}
	if g.configured == nil || streamsTopicsHash(g.topology, topics) != g.configured.hash {
		g.configured = configureTopology(g.topology, topics)
		bump = true
	}
	if bump {
		g.bumpLocked(topics, st)
	}
	if !g.delayUntil.IsZero() && !c.clock.Now().Before(g.delayUntil) {
		// The initial delay is over: a new epoch with the first real
		// assignment (Kafka bumps the epoch here too).
		g.delayUntil = time.Time{}
		g.bumpLocked(topics, st)
	}
	prevActive, prevStandby, prevWarmup := m.active, m.standby, m.warmup
	var owned *streamsOwned
	if req.Active != nil {
		owned = &streamsOwned{active: taskSetFrom(req.Active), standby: taskSetFrom(req.Standby), warmup: taskSetFrom(req.Warmup)}
	}
	g.reconcileLocked(m, owned)
	g.scheduleSessionLocked(m, st.StreamsSessionTimeout)
	changed := !m.active.equal(prevActive) || !m.standby.equal(prevStandby) || !m.warmup.equal(prevWarmup)
	if changed && m.endpoint != nil {
		// Interactive Queries map endpoints to partitions: every member
		// learns the new map with its next heartbeat.
		g.endpointEpoch++
	}

	res := StreamsHeartbeatResult{
		MemberID: m.id, MemberEpoch: m.epoch,
		HeartbeatInterval:        st.StreamsHeartbeatInterval,
		TaskOffsetInterval:       st.StreamsTaskOffsetInterval,
		AcceptableRecoveryLag:    st.StreamsAcceptableRecoveryLag,
		EndpointInformationEpoch: g.endpointEpoch,
	}
	// As Kafka 4.4, the tasks are sent when the member joins or its tasks
	// changed; otherwise they are left out (null: unchanged), a new member
	// epoch included.
	if req.MemberEpoch == JoinEpoch || changed {
		res.Active, res.Standby, res.Warmup = m.active.toMap(), m.standby.toMap(), m.warmup.toMap()
	}
	if !g.delayUntil.IsZero() {
		res.Status = append(res.Status, StreamsStatus{Code: StreamsStatusAssignmentDelayed, Detail: "Assignment delayed due to the configured initial rebalance delay."})
	}
	if g.configured != nil && g.configured.status != nil {
		res.Status = append(res.Status, *g.configured.status)
		res.CreateTopics = g.configured.create
	}
	if g.topology != nil && m.topologyEpoch < g.topology.Epoch {
		res.Status = append(res.Status, StreamsStatus{Code: StreamsStatusStaleTopology,
			Detail: fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", m.topologyEpoch, g.topology.Epoch)})
	}
	if g.shutdown {
		res.Status = append(res.Status, StreamsStatus{Code: StreamsStatusShutdownApplication,
			Detail: "A KafkaStreams instance encountered a fatal error and requested a shutdown for the entire application."})
	}
	if g.endpointEpoch > 0 {
		res.PartitionsByEndpoint = g.endpointPartitionsLocked(topics)
	}
	return res, nil
}

func (s taskSet) subsetOf(o taskSet) bool {
	for k := range s {
		if !o.has(k) {
			return false
		}
	}
	return true
}

func (m *streamsMember) resetTasks() {
	m.active, m.standby, m.warmup = taskSet{}, taskSet{}, taskSet{}
	m.revokingActive, m.revokingStandby = taskSet{}, taskSet{}
}

// sameTopology compares two topologies (the epoch included).
func sameTopology(a, b *StreamsTopology) bool {
	return fmt.Sprintf("%+v", *a) == fmt.Sprintf("%+v", *b)
}

// bumpLocked starts a new group epoch and computes the target assignment
// at once: every task of a ready topology, none while it is not ready.
func (g *streamsGroup) bumpLocked(topics map[string]TopicInfo, st Settings) {
	g.epoch++
	if !g.delayUntil.IsZero() && g.assignmentEpoch > 0 {
		// Within the initial rebalance delay only the first epoch gets a
		// (task-less) assignment; the rest wait for the delay to end.
		return
	}
	if len(g.members) == 0 {
		// An empty group forgets the shutdown request and may take a new
		// topology from its next member.
		g.shutdown = false
		g.c.noteEmptyLocked(g.id)
	}
	if g.topology != nil && (g.configured == nil || streamsTopicsHash(g.topology, topics) != g.configured.hash) {
		g.configured = configureTopology(g.topology, topics)
	}
	var tasks map[string]int32
	if g.configured != nil && g.configured.ready && g.delayUntil.IsZero() {
		tasks = g.configured.tasks
	}
	members := make([]streamsAssignMember, 0, len(g.members))
	for _, m := range g.members {
		prevA, prevS := g.target[m.id].active, g.target[m.id].standby
		if prevA == nil {
			prevA = m.active
		}
		if prevS == nil {
			prevS = m.standby
		}
		members = append(members, streamsAssignMember{id: m.id, process: m.process, prevActive: prevA, prevStandby: prevS})
	}
	g.target = assignStreamsSticky(members, tasks, st.StreamsNumStandbyReplicas)
	g.assignmentEpoch = g.epoch
}

type streamsOwned struct{ active, standby, warmup taskSet }

// heldActiveLocked reports whether a member other than except holds t as
// an active task (given or still revoking).
func (g *streamsGroup) heldActiveLocked(t taskKey, except string) bool {
	for id, o := range g.members {
		if id != except && (o.active.has(t) || o.revokingActive.has(t)) {
			return true
		}
	}
	return false
}

// heldInProcessLocked reports whether another member of the same process
// holds t in any role: a process keeps one state directory per task, so a
// task moves between its threads only once released.
func (g *streamsGroup) heldInProcessLocked(t taskKey, m *streamsMember) bool {
	for id, o := range g.members {
		if id == m.id || o.process != m.process {
			continue
		}
		if o.active.has(t) || o.revokingActive.has(t) || o.standby.has(t) || o.revokingStandby.has(t) || o.warmup.has(t) {
			return true
		}
	}
	return false
}

// reconcileLocked moves the member one step towards its target.
func (g *streamsGroup) reconcileLocked(m *streamsMember, owned *streamsOwned) {
	if m.state == memberUnrevoked {
		if owned == nil {
			return
		}
		for t := range m.revokingActive {
			if owned.active.has(t) {
				return
			}
		}
		for t := range m.revokingStandby {
			if owned.standby.has(t) || owned.warmup.has(t) {
				return
			}
		}
		m.revokingActive, m.revokingStandby = taskSet{}, taskSet{}
		m.state = memberStable
		m.stopRevocationLocked()
	}
	if m.epoch == g.assignmentEpoch && m.state == memberStable {
		return
	}
	target := g.target[m.id]
	if target.active == nil {
		target = streamsTarget{active: taskSet{}, standby: taskSet{}}
	}
	keepA, revA := taskSet{}, taskSet{}
	for t := range m.active {
		if target.active.has(t) {
			keepA[t] = struct{}{}
		} else {
			revA[t] = struct{}{}
		}
	}
	keepS, revS := taskSet{}, taskSet{}
	for t := range m.standby {
		if target.standby.has(t) {
			keepS[t] = struct{}{}
		} else {
			revS[t] = struct{}{}
		}
	}
	for t := range m.warmup {
		revS[t] = struct{}{}
	}
	if len(revA) > 0 || len(revS) > 0 {
		m.active, m.standby, m.warmup = keepA, keepS, taskSet{}
		m.revokingActive, m.revokingStandby = revA, revS
		m.state = memberUnrevoked
		g.armRevocationLocked(m)
		return
	}
	unreleased := false
	for t := range target.active {
		if keepA.has(t) {
			continue
		}
		if g.heldActiveLocked(t, m.id) || g.heldInProcessLocked(t, m) {
			unreleased = true
			continue
		}
		keepA[t] = struct{}{}
	}
	for t := range target.standby {
		if keepS.has(t) {
			continue
		}
		if g.heldInProcessLocked(t, m) {
			unreleased = true
			continue
		}
		keepS[t] = struct{}{}
	}
	m.active, m.standby = keepA, keepS
	if m.epoch != g.assignmentEpoch {
		m.prevEpoch, m.epoch = m.epoch, g.assignmentEpoch
	}
	m.state = memberStable
	if unreleased {
		m.state = memberUnreleased
	}
}

// armRevocationLocked removes a member that does not revoke its tasks
// within its rebalance timeout.
func (g *streamsGroup) armRevocationLocked(m *streamsMember) {
	m.armRevocationLocked(g.c, m.rebalanceTimeout, func() {
		if g.members[m.id] != m || m.state != memberUnrevoked {
			return
		}
		g.c.logger.Info("streams member did not revoke tasks in time", "group", g.id, "member", m.id)
		g.removeMemberLocked(m)
		g.bumpLocked(g.c.topics(), g.c.settings(g.id))
	})
}

func (g *streamsGroup) scheduleSessionLocked(m *streamsMember, d time.Duration) {
	m.armSessionLocked(g.c, d, func() {
		if g.members[m.id] != m {
			return
		}
		g.c.logger.Info("streams member session expired", "group", g.id, "member", m.id)
		g.removeMemberLocked(m)
		g.bumpLocked(g.c.topics(), g.c.settings(g.id))
	})
}

func (g *streamsGroup) removeMemberLocked(m *streamsMember) {
	m.stopLocked()
	delete(g.members, m.id)
	delete(g.target, m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	if m.endpoint != nil {
		g.endpointEpoch++
	}
}

// endpointPartitionsLocked maps every member's endpoint to the source
// partitions of its tasks, for Interactive Queries.
func (g *streamsGroup) endpointPartitionsLocked(topics map[string]TopicInfo) []StreamsEndpointPartitions {
	if g.topology == nil {
		return nil
	}
	subs := map[string]*StreamsSubtopology{}
	for i := range g.topology.Subtopologies {
		s := &g.topology.Subtopologies[i]
		subs[s.ID] = s
	}
	parts := func(ts taskSet) map[string][]int32 {
		out := map[string][]int32{}
		for t := range ts {
			s := subs[t.sub]
			if s == nil {
				continue
			}
			for _, n := range s.sourceNames() {
				if ti, ok := topics[n]; ok && t.part < ti.Partitions {
					out[n] = append(out[n], t.part)
				}
			}
		}
		for _, ps := range out {
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		}
		return out
	}
	ids := make([]string, 0, len(g.members))
	for id, m := range g.members {
		if m.endpoint != nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	out := make([]StreamsEndpointPartitions, 0, len(ids))
	for _, id := range ids {
		m := g.members[id]
		sb := m.standby.clone()
		for t := range m.warmup {
			sb[t] = struct{}{}
		}
		out = append(out, StreamsEndpointPartitions{Endpoint: *m.endpoint, Active: parts(m.active), Standby: parts(sb)})
	}
	return out
}

// StreamsDescription describes a streams group (StreamsGroupDescribe).
type StreamsDescription struct {
	ID              string
	State           string
	Epoch           int32
	AssignmentEpoch int32
	Assignor        string
	Topology        *StreamsTopology
	Members         []StreamsMemberDescription
}

// StreamsMemberDescription is one member of a streams group.
type StreamsMemberDescription struct {
	MemberID, InstanceID, RackID string
	ClientID, ClientHost         string
	Epoch, TopologyEpoch         int32
	ProcessID                    string
	Endpoint                     *StreamsEndpoint
	ClientTags                   map[string]string
	TaskOffsets, TaskEndOffsets  []StreamsTaskOffset
	Active, Standby, Warmup      map[string][]int32
	TargetActive, TargetStandby  map[string][]int32
}

// StreamsAssignorName is the one assignor sharq's streams groups use.
const StreamsAssignorName = "sticky"

// DescribeStreams describes a streams group; ErrGroupIDNotFound with
// Kafka's messages for an unknown group or one of another type.
func (c *Coordinator) DescribeStreams(id string) (StreamsDescription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.mu.streams[id]
	if g == nil {
		if c.mu.classic[id] != nil || c.mu.consumer[id] != nil || c.mu.offsets[id] != nil {
			return StreamsDescription{}, errNotStreamsGroup(id)
		}
		return StreamsDescription{}, withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s not found.", id))
	}
	d := StreamsDescription{ID: id, State: g.stateLocked(), Epoch: g.epoch, AssignmentEpoch: g.assignmentEpoch, Assignor: StreamsAssignorName}
	if g.topology != nil {
		d.Topology = g.describedTopologyLocked()
	}
	ids := make([]string, 0, len(g.members))
	for mid := range g.members {
		ids = append(ids, mid)
	}
	sort.Strings(ids)
	for _, mid := range ids {
		m := g.members[mid]
		md := StreamsMemberDescription{
			MemberID: m.id, InstanceID: m.instanceID, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
			Epoch: m.epoch, TopologyEpoch: m.topologyEpoch, ProcessID: m.process, ClientTags: m.clientTags,
			TaskOffsets: m.taskOffsets, TaskEndOffsets: m.taskEndOffsets,
			Active: m.active.toMap(), Standby: m.standby.toMap(), Warmup: m.warmup.toMap(),
			TargetActive: g.target[m.id].active.toMap(), TargetStandby: g.target[m.id].standby.toMap(),
		}
		if m.endpoint != nil {
			e := *m.endpoint
			md.Endpoint = &e
		}
		d.Members = append(d.Members, md)
	}
	return d, nil
}

// streamsSourceTopicsLocked are the topics a streams group reads (its
// committed offsets belong to them: OffsetDelete refuses them).
func (g *streamsGroup) sourceTopicsLocked() map[string]bool {
	out := map[string]bool{}
	if g.topology == nil {
		return out
	}
	for _, s := range g.topology.Subtopologies {
		for _, n := range s.sourceNames() {
			out[n] = true
		}
	}
	return out
}

// String renders a task set for logs and test failures.
func (s taskSet) String() string {
	keys := make([]string, 0, len(s))
	for t := range s {
		keys = append(keys, fmt.Sprintf("%s-%d", t.sub, t.part))
	}
	sort.Strings(keys)
	return "[" + strings.Join(keys, " ") + "]"
}

// validateCommitLocked is Kafka 4.4's StreamsGroup.validateOffsetCommit.
func (g *streamsGroup) validateCommitLocked(req commitCheck) error {
	return validateMemberEpochCommit(req, g.id, "streams", len(g.members), func(id string) (int32, bool) {
		m := g.members[id]
		if m == nil {
			return 0, false
		}
		return m.epoch, true
	})
}

// validateFetchLocked checks the member of an OffsetFetch v9+.
func (g *streamsGroup) validateFetchLocked(memberID string, epoch int32) error {
	m := g.members[memberID]
	if m == nil {
		return ErrUnknownMemberID
	}
	if epoch != m.epoch {
		return ErrStaleMemberEpoch
	}
	return nil
}

// streamsHeldLocked reports whether a streams group holds id: as in
// Kafka, its id stays a streams group (members or not) until it is
// deleted or its offsets expire.
func (c *Coordinator) streamsHeldLocked(id string) bool {
	return c.mu.streams[id] != nil
}

// describedTopologyLocked is the group's topology as Kafka describes it:
// internal topics with the partition counts the coordinator decided.
func (g *streamsGroup) describedTopologyLocked() *StreamsTopology {
	t := &StreamsTopology{Epoch: g.topology.Epoch}
	decided := func(in []StreamsTopicInfo) []StreamsTopicInfo {
		out := make([]StreamsTopicInfo, len(in))
		copy(out, in)
		if g.configured == nil {
			return out
		}
		for i := range out {
			if p, ok := g.configured.internal[out[i].Name]; ok && out[i].Partitions == 0 {
				out[i].Partitions = p
			}
		}
		return out
	}
	for _, s := range g.topology.Subtopologies {
		s.StateChangelogTopics = decided(s.StateChangelogTopics)
		s.RepartitionSourceTopics = decided(s.RepartitionSourceTopics)
		t.Subtopologies = append(t.Subtopologies, s)
	}
	return t
}
