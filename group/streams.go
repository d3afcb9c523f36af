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

// StreamsEndpointPartitions is one member's partitions for Interactive
// Queries (PartitionsByUserEndpoint).
type StreamsEndpointPartitions struct {
	Endpoint StreamsEndpoint
	Active   map[string][]int32 // topic -> partitions
	Standby  map[string][]int32
}

type streamsMember struct {
	memberCore
	process        string
	endpoint       *StreamsEndpoint
	clientTags     map[string]string
	taskOffsets    []StreamsTaskOffset
	taskEndOffsets []StreamsTaskOffset
	topologyEpoch  int32
	// active/standby/warmup are what the member was given and holds;
	// revokingActive/revokingStandby what it must still give up.
	active, standby, warmup         taskSet
	revokingActive, revokingStandby taskSet
}

type streamsGroup struct {
	epochGroup[*streamsMember, streamsTarget]
	topology   *StreamsTopology
	configured *configuredTopology
	// shutdown is set once a member asked the whole application to stop
	// (SHUTDOWN_APPLICATION for every member until the group empties).
	shutdown      bool
	endpointEpoch int32
	// delayUntil is when a new group's first assignment may be computed
	// (group.streams.initial.rebalance.delay.ms); zero once done.
	delayUntil time.Time
}

func newStreamsGroup(c *Coordinator, id string) *streamsGroup {
	g := &streamsGroup{}
	g.epochGroup = newEpochGroup[*streamsMember, streamsTarget](c, id, streamsKind, g)
	return g
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
	case g.reconcilingLocked():
		return "Reconciling"
	}
	return "Stable"
}

// errNotStreamsGroup is Kafka's answer for a group of another type.
func errNotStreamsGroup(id string) error {
	return withMsg(ErrGroupIDNotFound, fmt.Sprintf("Group %s is not a streams group.", id))
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

// removeMemberLocked forgets m as epochGroup.removeMemberLocked does, and
// tells the other members that the endpoint map changed.
func (g *streamsGroup) removeMemberLocked(m *streamsMember) {
	g.epochGroup.removeMemberLocked(m)
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
	for _, mid := range g.memberIDsLocked() {
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
