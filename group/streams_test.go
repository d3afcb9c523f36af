package group

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"sharq/log/clock"
)

// streamsFixture is a coordinator over a topic map the test edits (as
// internal topics get created).
type streamsFixture struct {
	c      *Coordinator
	clk    *clock.Fake
	topics map[string]TopicInfo
	st     Settings
}

func newStreamsFixture(t *testing.T, topics map[string]int32) *streamsFixture {
	t.Helper()
	f := &streamsFixture{clk: clock.NewFake(time.Unix(1_700_000_000, 0)), topics: map[string]TopicInfo{}, st: DefaultSettings()}
	f.st.StreamsSessionTimeout = 10 * time.Second
	f.st.StreamsInitialRebalanceDelay = 0
	for n, p := range topics {
		f.addTopic(n, p)
	}
	c, err := New(Config{Store: NewMemStore(), Clock: f.clk,
		Settings: func(string) Settings { return f.st },
		Topics: func() map[string]TopicInfo {
			out := make(map[string]TopicInfo, len(f.topics))
			for k, v := range f.topics {
				out[k] = v
			}
			return out
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f.c = c
	return f
}

func (f *streamsFixture) addTopic(name string, partitions int32) {
	f.topics[name] = TopicInfo{ID: TopicID{byte(len(f.topics) + 1)}, Partitions: partitions}
}

// create makes the internal topics a heartbeat asked for, as the broker
// does.
func (f *streamsFixture) create(res StreamsHeartbeatResult) {
	for _, it := range res.CreateTopics {
		f.addTopic(it.Name, it.Partitions)
	}
}

func wordCount() *StreamsTopology {
	compact := []StreamsTopicConfig{{"cleanup.policy", "compact"}}
	return &StreamsTopology{Epoch: 0, Subtopologies: []StreamsSubtopology{
		{ID: "0", SourceTopics: []string{"in"}, RepartitionSinkTopics: []string{"app-rep"},
			StateChangelogTopics: []StreamsTopicInfo{{Name: "app-a-changelog", Configs: compact}}},
		{ID: "1", RepartitionSourceTopics: []StreamsTopicInfo{{Name: "app-rep"}},
			StateChangelogTopics: []StreamsTopicInfo{{Name: "app-b-changelog", Configs: compact}}},
	}}
}

func streamsJoin(id, process string, t *StreamsTopology) StreamsHeartbeatRequest {
	return StreamsHeartbeatRequest{Group: "app", MemberID: id, MemberEpoch: 0, RebalanceTimeout: time.Minute,
		Topology: t, ProcessID: &process, Active: map[string][]int32{}, Standby: map[string][]int32{}, Warmup: map[string][]int32{}}
}

func beat(id string, epoch int32) StreamsHeartbeatRequest {
	return StreamsHeartbeatRequest{Group: "app", MemberID: id, MemberEpoch: epoch, RebalanceTimeout: -1}
}

func count(m map[string][]int32) int {
	n := 0
	for _, ps := range m {
		n += len(ps)
	}
	return n
}

func TestConfigureTopology(t *testing.T) {
	for _, tc := range []struct {
		name   string
		topics map[string]int32
		topo   *StreamsTopology
		ready  bool
		code   int8
		detail string
		create map[string]int32
		tasks  map[string]int32
	}{
		{name: "missing source", topics: map[string]int32{}, topo: wordCount(),
			code: StreamsStatusMissingSourceTopics, detail: "Source topics in are missing."},
		{name: "internal topics to create", topics: map[string]int32{"in": 3}, topo: wordCount(),
			code: StreamsStatusMissingInternalTopics, detail: "Internal topics are missing: app-a-changelog, app-b-changelog, app-rep",
			create: map[string]int32{"app-a-changelog": 3, "app-b-changelog": 3, "app-rep": 3}},
		{name: "ready", topics: map[string]int32{"in": 3, "app-rep": 3, "app-a-changelog": 3, "app-b-changelog": 3}, topo: wordCount(),
			ready: true, tasks: map[string]int32{"0": 3, "1": 3}},
		{name: "changelog partitioned wrong", topics: map[string]int32{"in": 3, "app-rep": 3, "app-a-changelog": 5, "app-b-changelog": 3}, topo: wordCount(),
			code: StreamsStatusIncorrectlyPartitionedTopics, detail: "Existing topic app-a-changelog has different number of partitions: expected 3, found 5"},
		{name: "not co-partitioned", topics: map[string]int32{"l": 2, "r": 3},
			topo: &StreamsTopology{Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"l", "r"}, CopartitionGroups: [][]string{{"l", "r"}}}}},
			code: StreamsStatusIncorrectlyPartitionedTopics, detail: "Topics not co-partitioned: [{l=2, r=3}]"},
		{name: "fixed repartition count", topics: map[string]int32{"in": 2},
			topo: &StreamsTopology{Subtopologies: []StreamsSubtopology{
				{ID: "0", SourceTopics: []string{"in"}, RepartitionSinkTopics: []string{"rep"}},
				{ID: "1", RepartitionSourceTopics: []StreamsTopicInfo{{Name: "rep", Partitions: 7}}}}},
			code: StreamsStatusMissingInternalTopics, detail: "Internal topics are missing: rep", create: map[string]int32{"rep": 7}},
		{name: "more than three missing", topics: map[string]int32{},
			topo: &StreamsTopology{Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"a", "b", "c", "d", "e"}}}},
			code: StreamsStatusMissingSourceTopics, detail: "Source topics a, b, c and 2 additional topics are missing."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topics := map[string]TopicInfo{}
			for n, p := range tc.topics {
				topics[n] = TopicInfo{Partitions: p}
			}
			ct := configureTopology(tc.topo, topics)
			if ct.ready != tc.ready {
				t.Fatalf("ready %v, want %v (%+v)", ct.ready, tc.ready, ct.status)
			}
			if !tc.ready && (ct.status == nil || ct.status.Code != tc.code || ct.status.Detail != tc.detail) {
				t.Fatalf("status %+v, want %d %q", ct.status, tc.code, tc.detail)
			}
			got := map[string]int32{}
			for _, it := range ct.create {
				got[it.Name] = it.Partitions
			}
			if fmt.Sprint(got) != fmt.Sprint(orEmpty(tc.create)) {
				t.Fatalf("create %v, want %v", got, tc.create)
			}
			if tc.ready && fmt.Sprint(ct.tasks) != fmt.Sprint(tc.tasks) {
				t.Fatalf("tasks %v, want %v", ct.tasks, tc.tasks)
			}
		})
	}
}

func orEmpty(m map[string]int32) map[string]int32 {
	if m == nil {
		return map[string]int32{}
	}
	return m
}

func TestStreamsAssignorBalancedAndSticky(t *testing.T) {
	tasks := map[string]int32{"0": 4, "1": 3}
	for _, tc := range []struct {
		name    string
		members []streamsAssignMember
		standby int
	}{
		{"one member", []streamsAssignMember{{id: "a", process: "p1"}}, 0},
		{"three members", []streamsAssignMember{{id: "a", process: "p1"}, {id: "b", process: "p2"}, {id: "c", process: "p3"}}, 0},
		{"more members than tasks", []streamsAssignMember{{id: "a"}, {id: "b"}, {id: "c"}, {id: "d"}, {id: "e"}, {id: "f"}, {id: "g"}, {id: "h"}}, 0},
		{"standbys on other processes", []streamsAssignMember{{id: "a", process: "p1"}, {id: "b", process: "p1"}, {id: "c", process: "p2"}}, 1},
		{"more standbys than processes", []streamsAssignMember{{id: "a", process: "p1"}, {id: "b", process: "p2"}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.members {
				tc.members[i].prevActive, tc.members[i].prevStandby = taskSet{}, taskSet{}
			}
			out := assignStreamsSticky(tc.members, tasks, tc.standby)
			checkAssignment(t, tc.members, out, tasks, tc.standby)
			// Stickiness: a new member takes only what balance requires.
			prev := map[string]taskSet{}
			members := append([]streamsAssignMember(nil), tc.members...)
			for i := range members {
				members[i].prevActive = out[members[i].id].active
				prev[members[i].id] = out[members[i].id].active
			}
			members = append(members, streamsAssignMember{id: "new", process: "pn", prevActive: taskSet{}, prevStandby: taskSet{}})
			out2 := assignStreamsSticky(members, tasks, tc.standby)
			checkAssignment(t, members, out2, tasks, tc.standby)
			moved := 0
			for id, ts := range prev {
				for k := range ts {
					if !out2[id].active.has(k) {
						moved++
					}
				}
			}
			if want := len(out2["new"].active); moved != want {
				t.Errorf("%d tasks moved, the new member got %d: only its share should move", moved, want)
			}
		})
	}
}

func checkAssignment(t *testing.T, members []streamsAssignMember, out map[string]streamsTarget, tasks map[string]int32, standby int) {
	t.Helper()
	owner := map[taskKey]string{}
	lo, hi := 1<<30, -1
	for _, m := range members {
		n := len(out[m.id].active)
		lo, hi = min(lo, n), max(hi, n)
		for k := range out[m.id].active {
			if o, dup := owner[k]; dup {
				t.Fatalf("task %v active on %s and %s", k, o, m.id)
			}
			owner[k] = m.id
		}
	}
	total := 0
	for _, n := range tasks {
		total += int(n)
	}
	if len(owner) != total || hi-lo > 1 {
		t.Fatalf("%d of %d tasks assigned, loads %d..%d", len(owner), total, lo, hi)
	}
	process := map[string]string{}
	processes := map[string]bool{}
	for _, m := range members {
		process[m.id] = m.process
		processes[m.process] = true
	}
	for k, o := range owner {
		used := map[string]bool{process[o]: true}
		n := 0
		for _, m := range members {
			if out[m.id].standby.has(k) {
				if used[m.process] {
					t.Fatalf("standby of %v on process %s, which already has it", k, m.process)
				}
				used[m.process] = true
				n++
			}
		}
		if want := min(standby, len(processes)-1); n != want {
			t.Fatalf("task %v has %d standbys, want %d", k, n, want)
		}
	}
}

// streamsClient is a member as the Streams client keeps it: the tasks it
// holds change only when a heartbeat answer carries them.
type streamsClient struct {
	t               *testing.T
	c               *Coordinator
	id, process     string
	epoch           int32
	active, standby map[string][]int32
	last            StreamsHeartbeatResult
}

func (m *streamsClient) apply(r StreamsHeartbeatResult) StreamsHeartbeatResult {
	m.last = r
	if r.Err != nil {
		return r
	}
	m.epoch = r.MemberEpoch
	if r.Active != nil {
		m.active, m.standby = r.Active, r.Standby
	}
	return r
}

func (m *streamsClient) join(topo *StreamsTopology) StreamsHeartbeatResult {
	return m.apply(m.c.StreamsHeartbeat(streamsJoin(m.id, m.process, topo)))
}

// beat is a heartbeat that reports nothing new.
func (m *streamsClient) beat() StreamsHeartbeatResult {
	return m.apply(m.c.StreamsHeartbeat(beat(m.id, m.epoch)))
}

// report is a heartbeat with the tasks the member holds (it revoked what
// it was told to give up).
func (m *streamsClient) report() StreamsHeartbeatResult {
	r := beat(m.id, m.epoch)
	r.Active, r.Standby, r.Warmup = orEmptyTasks(m.active), orEmptyTasks(m.standby), map[string][]int32{}
	return m.apply(m.c.StreamsHeartbeat(r))
}

func orEmptyTasks(m map[string][]int32) map[string][]int32 {
	if m == nil {
		return map[string][]int32{}
	}
	return m
}

// TestStreamsReconciliation walks a group through internal topic creation,
// a second member joining (revocation before reassignment, member epochs),
// fencing, a session timeout and a leave.
func TestStreamsReconciliation(t *testing.T) {
	f := newStreamsFixture(t, map[string]int32{"in": 2})
	c := f.c
	a := &streamsClient{t: t, c: c, id: "a", process: "pa"}
	b := &streamsClient{t: t, c: c, id: "b", process: "pb"}
	r := a.join(wordCount())
	if r.Err != nil || r.MemberEpoch != 1 || count(r.Active) != 0 || len(r.Status) != 1 || r.Status[0].Code != StreamsStatusMissingInternalTopics || len(r.CreateTopics) != 3 {
		t.Fatalf("a joins: %+v", r)
	}
	if d, _ := c.DescribeStreams("app"); d.State != "NotReady" {
		t.Fatalf("state %s, want NotReady", d.State)
	}
	for _, it := range r.CreateTopics {
		if it.Name == "app-a-changelog" && (it.Configs["cleanup.policy"] != "compact" || it.Partitions != 2 || it.ReplicationFactor != -1) {
			t.Fatalf("changelog to create: %+v", it)
		}
	}
	f.create(r)
	if r = a.beat(); r.Err != nil || r.MemberEpoch != 2 || count(a.active) != 4 || len(r.Status) != 0 {
		t.Fatalf("a once the topics exist: %+v", r)
	}
	// Unchanged: the answer leaves the tasks out.
	if r = a.beat(); r.Active != nil || r.MemberEpoch != 2 {
		t.Fatalf("a unchanged: %+v", r)
	}
	if r = b.join(wordCount()); r.Err != nil || r.MemberEpoch != 3 || count(b.active) != 0 {
		t.Fatalf("b joins: %+v (its tasks are still a's)", r)
	}
	if d, _ := c.DescribeStreams("app"); d.State != "Reconciling" {
		t.Fatalf("state %s, want Reconciling", d.State)
	}
	if r = a.beat(); a.epoch != 2 || count(a.active) != 2 {
		t.Fatalf("a revoking: %+v", r)
	}
	// Without a's report nothing moves.
	if b.beat(); count(b.active) != 0 {
		t.Fatalf("b got unrevoked tasks: %v", b.active)
	}
	if r = a.report(); a.epoch != 3 || count(a.active) != 2 {
		t.Fatalf("a after revoking: %+v", r)
	}
	if b.beat(); count(b.active) != 2 {
		t.Fatalf("b after release: %v", b.active)
	}
	if d, _ := c.DescribeStreams("app"); d.State != "Stable" || d.Epoch != 3 || d.AssignmentEpoch != 3 || len(d.Members) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	// A member ahead of the coordinator is fenced; one a step behind with
	// tasks it was given is not.
	if r := c.StreamsHeartbeat(beat("a", 9)); !errors.Is(r.Err, ErrFencedMemberEpoch) {
		t.Fatalf("epoch ahead: %v", r.Err)
	}
	behind := beat("a", 2)
	behind.Active, behind.Standby, behind.Warmup = a.active, map[string][]int32{}, map[string][]int32{}
	if r := c.StreamsHeartbeat(behind); r.Err != nil {
		t.Fatalf("previous epoch with owned tasks: %v", r.Err)
	}
	// b stops heartbeating: a gets everything back.
	for i := 0; i < 3; i++ {
		f.clk.Advance(4 * time.Second)
		a.beat()
	}
	if a.epoch != 4 || count(a.active) != 4 {
		t.Fatalf("a after b expired: epoch %d tasks %v", a.epoch, a.active)
	}
	if r := b.beat(); !errors.Is(r.Err, ErrUnknownMemberID) {
		t.Fatalf("expired member: %v", r.Err)
	}
	if r := c.StreamsHeartbeat(beat("a", LeaveEpoch)); r.Err != nil || r.MemberEpoch != LeaveEpoch {
		t.Fatalf("leave: %+v", r)
	}
	if d, _ := c.DescribeStreams("app"); d.State != "Empty" {
		t.Fatalf("state %s, want Empty", d.State)
	}
	if errs := c.DeleteGroups([]string{"app"}); errs["app"] != nil {
		t.Fatalf("delete: %v", errs["app"])
	}
}

// TestStreamsInitialRebalanceDelay: a new group's first assignment waits
// for the delay (ASSIGNMENT_DELAYED, member epoch held), then comes with a
// new group epoch, as on Kafka 4.4.
func TestStreamsInitialRebalanceDelay(t *testing.T) {
	f := newStreamsFixture(t, map[string]int32{"in": 2})
	f.st.StreamsInitialRebalanceDelay = 3 * time.Second
	a := &streamsClient{t: t, c: f.c, id: "a", process: "pa"}
	r := a.join(wordCount())
	codes := func(r StreamsHeartbeatResult) string {
		var out []string
		for _, s := range r.Status {
			out = append(out, fmt.Sprint(s.Code))
		}
		return fmt.Sprint(out)
	}
	if r.MemberEpoch != 1 || codes(r) != "[5 3]" || r.Status[0].Detail != "Assignment delayed due to the configured initial rebalance delay." {
		t.Fatalf("join: epoch %d status %+v", r.MemberEpoch, r.Status)
	}
	f.create(r)
	f.clk.Advance(time.Second)
	if r = a.beat(); r.MemberEpoch != 1 || codes(r) != "[5]" || count(a.active) != 0 {
		t.Fatalf("topics made, still delayed: %+v", r)
	}
	if d, _ := f.c.DescribeStreams("app"); d.Epoch != 2 || d.AssignmentEpoch != 1 {
		t.Fatalf("group epoch %d assignment epoch %d, want 2 and 1", d.Epoch, d.AssignmentEpoch)
	}
	f.clk.Advance(2 * time.Second)
	if r = a.beat(); r.MemberEpoch != 3 || len(r.Status) != 0 || count(a.active) != 4 {
		t.Fatalf("after the delay: %+v", r)
	}
}

// TestStreamsStandbyAndProcesses: standby tasks (streams.num.standby.replicas)
// go to another process than the active one.
func TestStreamsStandbyAndProcesses(t *testing.T) {
	f := newStreamsFixture(t, map[string]int32{"in": 2, "app-rep": 2, "app-a-changelog": 2, "app-b-changelog": 2})
	f.st.StreamsNumStandbyReplicas = 1
	a := &streamsClient{t: t, c: f.c, id: "a", process: "p1"}
	b := &streamsClient{t: t, c: f.c, id: "b", process: "p2"}
	a.join(wordCount())
	if count(a.active) != 4 || count(a.standby) != 0 {
		t.Fatalf("a alone: %v %v", a.active, a.standby)
	}
	b.join(wordCount())
	for i := 0; i < 3; i++ {
		a.beat()
		a.report()
		b.report()
	}
	if count(a.active) != 2 || count(b.active) != 2 || count(a.standby) != 2 || count(b.standby) != 2 {
		t.Fatalf("a %v %v / b %v %v", a.active, a.standby, b.active, b.standby)
	}
	for s, ps := range a.active {
		for _, p := range ps {
			for _, q := range a.standby[s] {
				if p == q {
					t.Fatalf("task %s-%d active and standby on one process", s, p)
				}
			}
		}
	}
	if d, _ := f.c.DescribeStreams("app"); d.State != "Stable" {
		t.Fatalf("state %s", d.State)
	}
}

// TestStreamsTopologyAndTypes: a topology with a newer epoch replaces the
// group's; a member behind gets STALE_TOPOLOGY; shutdown requests reach
// every member; the id space is shared with consumer and classic groups.
func TestStreamsTopologyAndTypes(t *testing.T) {
	f := newStreamsFixture(t, map[string]int32{"in": 2, "app-rep": 2, "app-a-changelog": 2, "app-b-changelog": 2})
	c := f.c
	a := c.StreamsHeartbeat(streamsJoin("a", "p1", wordCount()))
	newer := wordCount()
	newer.Epoch = 1
	b := c.StreamsHeartbeat(streamsJoin("b", "p2", newer))
	if b.Err != nil || len(b.Status) != 0 {
		t.Fatalf("b with a newer topology: %+v", b)
	}
	a = c.StreamsHeartbeat(beat("a", a.MemberEpoch))
	if len(a.Status) != 1 || a.Status[0].Code != StreamsStatusStaleTopology || a.Status[0].Detail != "The member's topology epoch 0 is behind the group's topology epoch 1." {
		t.Fatalf("a behind: %+v", a.Status)
	}
	r := beat("b", b.MemberEpoch)
	r.ShutdownApplication = true
	c.StreamsHeartbeat(r)
	a = c.StreamsHeartbeat(beat("a", a.MemberEpoch))
	codes := []int{}
	for _, s := range a.Status {
		codes = append(codes, int(s.Code))
	}
	sort.Ints(codes)
	if fmt.Sprint(codes) != "[0 4]" {
		t.Fatalf("statuses after a shutdown request: %+v", a.Status)
	}
	if r := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "app", MemberID: "x", SubscribedTopicNames: []string{"in"}, RebalanceTimeout: time.Minute}); !errors.Is(r.Err, ErrGroupIDNotFound) {
		t.Fatalf("consumer heartbeat on a streams group: %v", r.Err)
	}
	if _, err := c.DescribeConsumer("app"); Message(err) != "Group app is not a consumer group." {
		t.Fatalf("describe consumer: %v", err)
	}
	c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "cg", MemberID: "x", SubscribedTopicNames: []string{"in"}, RebalanceTimeout: time.Minute})
	if r := c.StreamsHeartbeat(StreamsHeartbeatRequest{Group: "cg", MemberID: "y", RebalanceTimeout: time.Minute, Topology: wordCount()}); Message(r.Err) != "Group cg is not a streams group." {
		t.Fatalf("streams heartbeat on a consumer group: %v", r.Err)
	}
	if _, err := c.DescribeStreams("cg"); Message(err) != "Group cg is not a streams group." {
		t.Fatalf("describe streams on a consumer group: %v", err)
	}
	var kinds []string
	for _, o := range c.ListGroups() {
		kinds = append(kinds, o.ID+"/"+o.Type)
	}
	if fmt.Sprint(kinds) != "[app/streams cg/consumer]" {
		t.Fatalf("list: %v", kinds)
	}
}

func TestStreamsHeartbeatValidation(t *testing.T) {
	f := newStreamsFixture(t, map[string]int32{"in": 1})
	empty := ""
	for _, tc := range []struct {
		name string
		req  StreamsHeartbeatRequest
		err  error
		msg  string
	}{
		{"no member id", StreamsHeartbeatRequest{Group: "g", RebalanceTimeout: -1}, ErrInvalidRequest, "MemberId can't be empty."},
		{"no group", StreamsHeartbeatRequest{MemberID: "m", RebalanceTimeout: -1}, ErrInvalidRequest, "GroupId can't be empty."},
		{"empty instance id", StreamsHeartbeatRequest{Group: "g", MemberID: "m", InstanceID: &empty, RebalanceTimeout: -1}, ErrInvalidRequest, "InstanceId can't be empty."},
		{"join without rebalance timeout", StreamsHeartbeatRequest{Group: "g", MemberID: "m", RebalanceTimeout: -1, Topology: wordCount()}, ErrInvalidRequest, "RebalanceTimeoutMs must be provided in first request."},
		{"join owning tasks", StreamsHeartbeatRequest{Group: "g", MemberID: "m", Topology: wordCount(), Active: map[string][]int32{"0": {0}}, Standby: map[string][]int32{}, Warmup: map[string][]int32{}}, ErrInvalidRequest, "ActiveTasks must be empty when (re-)joining."},
		{"partial task lists", StreamsHeartbeatRequest{Group: "g", MemberID: "m", MemberEpoch: 3, RebalanceTimeout: -1, Active: map[string][]int32{}}, ErrInvalidRequest, "If one task-type is non-null, all must be non-null."},
		{"epoch below -2", StreamsHeartbeatRequest{Group: "g", MemberID: "m", MemberEpoch: -3, RebalanceTimeout: -1}, ErrInvalidRequest, "MemberEpoch is -3, but must be greater than or equal to -2."},
		{"regex source", StreamsHeartbeatRequest{Group: "g", MemberID: "m", Topology: &StreamsTopology{Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopicRegex: []string{"a.*"}}}}}, ErrInvalidRequest, "Regular expressions for source topics are not supported yet."},
		{"changelog with partitions", StreamsHeartbeatRequest{Group: "g", MemberID: "m", Topology: &StreamsTopology{Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"in"}, StateChangelogTopics: []StreamsTopicInfo{{Name: "c", Partitions: 2}}}}}}, ErrStreamsInvalidTopology, "Changelog topic c must have an undefined partition count, but it is set to 2."},
		{"static leave without instance", StreamsHeartbeatRequest{Group: "g", MemberID: "m", MemberEpoch: -2, RebalanceTimeout: -1}, ErrInvalidRequest, "InstanceId can't be null."},
		{"unknown group", StreamsHeartbeatRequest{Group: "g", MemberID: "m", MemberEpoch: 4, RebalanceTimeout: -1}, ErrUnknownMemberID, "Member m is not a member of group g."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.c.StreamsHeartbeat(tc.req)
			if !errors.Is(r.Err, tc.err) || Message(r.Err) != tc.msg {
				t.Fatalf("got %v (%q), want %v %q", r.Err, Message(r.Err), tc.err, tc.msg)
			}
		})
	}
}

// TestStreamsOffsets: commits carry the member epoch; an empty group
// accepts admin commits; offset deletion refuses the topics it reads.
func TestStreamsOffsets(t *testing.T) {
	f := newStreamsFixture(t, map[string]int32{"in": 1, "app-rep": 1, "app-a-changelog": 1, "app-b-changelog": 1})
	c := f.c
	a := c.StreamsHeartbeat(streamsJoin("a", "p1", wordCount()))
	tp := TopicPartition{Topic: "in", Partition: 0}
	commit := func(member string, epoch int32) error {
		_, err := c.CommitOffsets(CommitRequest{Group: "app", MemberID: member, Generation: epoch, Offsets: map[TopicPartition]Offset{tp: {Offset: 5}}, StaleEpochError: true})
		return err
	}
	if err := commit("a", a.MemberEpoch); err != nil {
		t.Fatal(err)
	}
	if err := commit("a", a.MemberEpoch+1); !errors.Is(err, ErrStaleMemberEpoch) {
		t.Fatalf("wrong epoch: %v", err)
	}
	if err := commit("ghost", 1); !errors.Is(err, ErrUnknownMemberID) {
		t.Fatalf("unknown member: %v", err)
	}
	if _, err := c.FetchOffsets("app", "a", a.MemberEpoch+3, []TopicPartition{tp}, false); !errors.Is(err, ErrStaleMemberEpoch) {
		t.Fatalf("fetch with a stale epoch: %v", err)
	}
	perr, err := c.DeleteOffsets("app", []TopicPartition{tp})
	if err != nil || !errors.Is(perr[tp], ErrGroupSubscribedToTopic) {
		t.Fatalf("delete offsets of a source topic: %v %v", err, perr)
	}
	c.StreamsHeartbeat(beat("a", LeaveEpoch))
	if err := commit("", -1); err != nil {
		t.Fatalf("admin commit to an empty group: %v", err)
	}
	if perr, err := c.DeleteOffsets("app", []TopicPartition{tp}); err != nil || perr[tp] != nil {
		t.Fatalf("delete offsets of an empty group: %v %v", err, perr)
	}
}

// FuzzStreamsHeartbeats drives a streams group with heartbeats built from
// the fuzz input (topologies over a few topic names, joins, leaves, owned
// task reports, epochs, clock steps) and checks that nothing panics and
// that no task is ever held active by two members at once.
func FuzzStreamsHeartbeats(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte{3, 3, 3, 0, 0, 0, 1, 1, 1, 2, 2, 2, 200, 100, 50, 25, 12, 6, 3, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		fx := newStreamsFixture(t, map[string]int32{"a": 3, "b": 2, "c": 3})
		pos := 0
		next := func() int {
			if pos >= len(data) {
				return 0
			}
			pos++
			return int(data[pos-1])
		}
		names := []string{"a", "b", "c", "r1", "r2", "x"}
		topo := func() *StreamsTopology {
			tp := &StreamsTopology{Epoch: int32(next() % 3)}
			for i := 0; i < 1+next()%3; i++ {
				s := StreamsSubtopology{ID: fmt.Sprint(i)}
				for k := 0; k < 1+next()%2; k++ {
					s.SourceTopics = append(s.SourceTopics, names[next()%len(names)])
				}
				if next()%2 == 0 {
					s.RepartitionSinkTopics = []string{names[3+next()%2]}
				}
				if next()%2 == 0 {
					s.RepartitionSourceTopics = []StreamsTopicInfo{{Name: names[3+next()%2], Partitions: int32(next()%3 - 1)}}
				}
				if next()%2 == 0 {
					s.StateChangelogTopics = []StreamsTopicInfo{{Name: fmt.Sprintf("cl%d", i)}}
				}
				if next()%3 == 0 {
					s.CopartitionGroups = [][]string{s.sourceNames()}
				}
				tp.Subtopologies = append(tp.Subtopologies, s)
			}
			return tp
		}
		members := []*streamsClient{
			{t: t, c: fx.c, id: "m0", process: "p0"}, {t: t, c: fx.c, id: "m1", process: "p0"}, {t: t, c: fx.c, id: "m2", process: "p1"},
		}
		fx.st.StreamsNumStandbyReplicas = next() % 2
		for steps := 0; steps < 40 && pos < len(data); steps++ {
			m := members[next()%len(members)]
			var r StreamsHeartbeatResult
			switch next() % 6 {
			case 0:
				r = m.join(topo())
				fx.create(r)
			case 1:
				r = m.beat()
			case 2:
				r = m.report()
			case 3:
				r = m.apply(fx.c.StreamsHeartbeat(beat(m.id, LeaveEpoch)))
			case 4:
				r = m.apply(fx.c.StreamsHeartbeat(beat(m.id, int32(next())-100)))
			case 5:
				fx.clk.Advance(time.Duration(next()) * 100 * time.Millisecond)
			}
			_ = r
			fx.c.mu.Lock()
			if g := fx.c.mu.streams["app"]; g != nil {
				held := map[taskKey]string{}
				for id, gm := range g.members {
					for k := range gm.active {
						if o, dup := held[k]; dup {
							fx.c.mu.Unlock()
							t.Fatalf("task %v active on %s and %s", k, o, id)
						}
						held[k] = id
					}
					for k := range gm.revokingActive {
						if o, dup := held[k]; dup {
							fx.c.mu.Unlock()
							t.Fatalf("task %v held by %s and %s (revoking)", k, o, id)
						}
						held[k] = id
					}
				}
			}
			fx.c.mu.Unlock()
			fx.c.DescribeStreams("app")
			fx.c.ListGroups()
		}
	})
}

// TestStreamsEndpoints: members with an Interactive Queries endpoint learn
// which partitions every endpoint serves whenever that map changes.
func TestStreamsEndpoints(t *testing.T) {
	f := newStreamsFixture(t, map[string]int32{"in": 2, "app-rep": 2, "app-a-changelog": 2, "app-b-changelog": 2})
	join := func(id, host string) StreamsHeartbeatResult {
		r := streamsJoin(id, "p-"+id, wordCount())
		r.UserEndpoint = &StreamsEndpoint{Host: host, Port: 8080}
		return f.c.StreamsHeartbeat(r)
	}
	a := join("a", "host-a")
	if a.EndpointInformationEpoch == 0 || len(a.PartitionsByEndpoint) != 1 || fmt.Sprint(a.PartitionsByEndpoint[0].Active) != "map[app-rep:[0 1] in:[0 1]]" {
		t.Fatalf("a alone: epoch %d %+v", a.EndpointInformationEpoch, a.PartitionsByEndpoint)
	}
	before := a.EndpointInformationEpoch
	join("b", "host-b")
	a = f.c.StreamsHeartbeat(beat("a", a.MemberEpoch))
	if a.EndpointInformationEpoch <= before || len(a.PartitionsByEndpoint) != 2 {
		t.Fatalf("after b joined: epoch %d %+v", a.EndpointInformationEpoch, a.PartitionsByEndpoint)
	}
}

// TestStreamsAssignorSpreadsSubtopologies: a fresh assignment gives every
// member a share of each subtopology.
func TestStreamsAssignorSpreadsSubtopologies(t *testing.T) {
	members := []streamsAssignMember{{id: "a", process: "p1", prevActive: taskSet{}, prevStandby: taskSet{}}, {id: "b", process: "p2", prevActive: taskSet{}, prevStandby: taskSet{}}}
	out := assignStreamsSticky(members, map[string]int32{"0": 2, "1": 2}, 0)
	for _, id := range []string{"a", "b"} {
		if got := fmt.Sprint(out[id].active.toMap()); len(out[id].active.toMap()) != 2 {
			t.Errorf("%s: %s, want one task of each subtopology", id, got)
		}
	}
}
