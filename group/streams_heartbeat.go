package group

import (
	"fmt"
	"time"
)

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
	g, err := c.streamsGroupForLocked(req, st)
	if err != nil {
		return StreamsHeartbeatResult{}, err
	}
	topics := c.topics()
	m := g.members[req.MemberID]
	bump := false
	switch {
	case req.MemberEpoch == LeaveEpoch || req.MemberEpoch == StaticLeaveEpoch:
		return g.leaveLocked(m, req, topics, st)
	case req.MemberEpoch == JoinEpoch:
		if m, bump, err = g.joinLocked(m, req, st); err != nil {
			return StreamsHeartbeatResult{}, err
		}
	default:
		if m, err = g.memberAtEpochLocked(req.MemberID, req.MemberEpoch, func(m *streamsMember) bool {
			return req.Active == nil || taskSetFrom(req.Active).subsetOf(m.active)
		}); err != nil {
			return StreamsHeartbeatResult{}, err
		}
	}
	if g.updateMemberLocked(m, req) {
		bump = true
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
	return g.heartbeatResultLocked(m, req, st, topics, changed), nil
}

// streamsGroupForLocked is the streams group a heartbeat is for. One id
// space: a classic or consumer group with members keeps its id; an empty
// one (offsets only) becomes a streams group, offsets kept. A new one is
// created for a joining member.
func (c *Coordinator) streamsGroupForLocked(req StreamsHeartbeatRequest, st Settings) (*streamsGroup, error) {
	if cg := c.mu.classic[req.Group]; cg != nil {
		if cg.state != StateEmpty {
			return nil, errNotStreamsGroup(req.Group)
		}
		cg.shutdownLocked()
		delete(c.mu.classic, req.Group)
	}
	if kg := c.mu.consumer[req.Group]; kg != nil {
		if len(kg.members) > 0 {
			return nil, errNotStreamsGroup(req.Group)
		}
		delete(c.mu.consumer, req.Group)
	}
	g := c.mu.streams[req.Group]
	if g == nil {
		if req.MemberEpoch != JoinEpoch {
			return nil, errUnknownMember(req.MemberID, req.Group)
		}
		g = newStreamsGroup(c, req.Group)
		if st.StreamsInitialRebalanceDelay > 0 {
			g.delayUntil = c.clock.Now().Add(st.StreamsInitialRebalanceDelay)
		}
		c.mu.streams[req.Group] = g
	}
	return g, nil
}

// leaveLocked serves a heartbeat with LeaveEpoch or StaticLeaveEpoch.
func (g *streamsGroup) leaveLocked(m *streamsMember, req StreamsHeartbeatRequest, topics map[string]TopicInfo, st Settings) (StreamsHeartbeatResult, error) {
	if m == nil {
		return StreamsHeartbeatResult{}, errUnknownMember(req.MemberID, req.Group)
	}
	if req.MemberEpoch == StaticLeaveEpoch {
		m.prevEpoch, m.epoch = m.epoch, StaticLeaveEpoch
		g.scheduleSessionLocked(m, st.StreamsSessionTimeout)
		return StreamsHeartbeatResult{MemberID: req.MemberID, MemberEpoch: StaticLeaveEpoch}, nil
	}
	g.removeMemberLocked(m)
	g.bumpLocked(topics, st)
	return StreamsHeartbeatResult{MemberID: req.MemberID, MemberEpoch: LeaveEpoch}, nil
}

// joinLocked serves a heartbeat with JoinEpoch: a static member taking
// over its instance's place and tasks, a new member, or a dynamic member
// rejoining (it owns nothing any more); the member's topology becomes the
// group's when it is the first, the only one or a newer one. bump is
// whether the group needs a new epoch.
func (g *streamsGroup) joinLocked(m *streamsMember, req StreamsHeartbeatRequest, st Settings) (_ *streamsMember, bump bool, _ error) {
	if req.InstanceID != nil {
		old, ok, err := g.takeOverStaticLocked(*req.InstanceID, req.MemberID)
		if err != nil {
			return nil, false, err
		}
		if ok {
			m = old
		}
	}
	switch {
	case m == nil:
		if len(g.members) >= st.StreamsMaxSize {
			return nil, false, withMsg(ErrGroupMaxSizeReached, fmt.Sprintf("The streams group has reached its maximum capacity of %d members.", st.StreamsMaxSize))
		}
		m = &streamsMember{memberCore: memberCore{id: req.MemberID}}
		m.resetTasks()
		if req.InstanceID != nil {
			m.instanceID = *req.InstanceID
			g.static[m.instanceID] = m.id
		}
		g.members[m.id] = m
		bump = true
	case m.epoch != JoinEpoch && m.instanceID == "":
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
	return m, bump, nil
}

// updateMemberLocked takes the member details the heartbeat carries, and
// reports whether the group needs a new epoch (the member moved to
// another process).
func (g *streamsGroup) updateMemberLocked(m *streamsMember, req StreamsHeartbeatRequest) (bump bool) {
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
	return bump
}

// heartbeatResultLocked is the answer to m's heartbeat once it is
// reconciled; changed is whether its tasks changed.
func (g *streamsGroup) heartbeatResultLocked(m *streamsMember, req StreamsHeartbeatRequest, st Settings, topics map[string]TopicInfo, changed bool) StreamsHeartbeatResult {
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
	return res
}
