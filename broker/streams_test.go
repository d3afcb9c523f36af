package broker_test

import (
	"net"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// Streams groups (KIP-1071) at the wire: franz-go has no streams client,
// so these tests speak StreamsGroupHeartbeat and StreamsGroupDescribe with
// raw kmsg requests, as the Kafka Streams 4.4 client sends them.

// streamsTopology is a word-count shape: subtopology 0 reads "in", keeps a
// store and writes a repartition topic; subtopology 1 reads it and keeps
// the counts.
func streamsTopology(app, source string) *kmsg.StreamsGroupHeartbeatRequestTopology {
	compact := []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	t.Epoch = 0
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID = "0"
	s0.SourceTopics = []string{source}
	s0.RepartitionSinkTopics = []string{app + "-rep-repartition"}
	s0.StateChangelogTopics = []kmsg.TopicInfo{{Topic: app + "-dedup-changelog", Configs: compact}}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	s1.RepartitionSourceTopics = []kmsg.TopicInfo{{Topic: app + "-rep-repartition", Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "delete"}}}}
	s1.StateChangelogTopics = []kmsg.TopicInfo{{Topic: app + "-counts-changelog", Configs: compact}}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return &t
}

// streamsConn sends requests kgo does not know how to route (it has no
// streams group client): frame, header v2, the body; response header v1.
type streamsConn struct {
	t    *testing.T
	c    net.Conn
	corr atomic.Int32
}

func newStreamsConn(t *testing.T, b *brokertest.Broker) *streamsConn {
	return &streamsConn{t: t, c: dial(t, b.Addr)}
}

func (rc *streamsConn) do(req kmsg.Request) kmsg.Response {
	rc.t.Helper()
	body := append([]byte{0}, req.AppendTo(nil)...) // empty header tags
	corr := rc.corr.Add(1)
	if _, err := rc.c.Write(frame(req.Key(), req.GetVersion(), corr, body)); err != nil {
		rc.t.Fatal(err)
	}
	b, err := readResponse(rc.c)
	if err != nil {
		rc.t.Fatal(err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(b[5:]); err != nil {
		rc.t.Fatalf("decode %T: %v", resp, err)
	}
	return resp
}

type streamsMember struct {
	t       *testing.T
	cl      *streamsConn
	group   string
	id      string
	process string
	epoch   int32
	active  map[string][]int32
	standby int // standby tasks held
}

func (m *streamsMember) beat(mut func(*kmsg.StreamsGroupHeartbeatRequest)) *kmsg.StreamsGroupHeartbeatResponse {
	m.t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
	req.ProcessID = &m.process
	if mut != nil {
		mut(req)
	}
	resp := m.cl.do(req).(*kmsg.StreamsGroupHeartbeatResponse)
	if resp.ErrorCode == 0 {
		m.epoch = resp.MemberEpoch
		if resp.ActiveTasks != nil {
			m.active = map[string][]int32{}
			for _, ts := range resp.ActiveTasks {
				m.active[ts.SubtopologyID] = ts.Partitions
			}
			m.standby = 0
			for _, ts := range resp.StandbyTasks {
				m.standby += len(ts.Partitions)
			}
		}
	}
	return resp
}

// report heartbeats with what the member owns (after it revoked what it
// lost).
func (m *streamsMember) report() *kmsg.StreamsGroupHeartbeatResponse {
	return m.beat(func(r *kmsg.StreamsGroupHeartbeatRequest) {
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		for s, ps := range m.active {
			r.ActiveTasks = append(r.ActiveTasks, kmsg.TaskIDs{SubtopologyID: s, Partitions: ps})
		}
	})
}

func (m *streamsMember) join(app, source string) *kmsg.StreamsGroupHeartbeatResponse {
	return m.beat(func(r *kmsg.StreamsGroupHeartbeatRequest) {
		r.MemberEpoch = 0
		r.RebalanceTimeoutMillis = 30000
		r.Topology = streamsTopology(app, source)
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	})
}

func taskCount(ts map[string][]int32) int {
	n := 0
	for _, ps := range ts {
		n += len(ps)
	}
	return n
}

func statusCodes(r *kmsg.StreamsGroupHeartbeatResponse) []int8 {
	var out []int8
	for _, s := range r.Status {
		out = append(out, s.StatusCode)
	}
	return out
}

// TestStreamsGroupLifecycle: a join creates the internal topics (compacted
// changelogs with the source's partition count), tasks flow to the first
// member, a second member gets its share only after the first revoked it,
// offsets are committed with the member epoch, the group is described,
// listed and typed, and it can be deleted once both left.
func TestStreamsGroupLifecycle(t *testing.T) {
	t.Parallel()
	// No initial rebalance delay: the first assignment comes at once.
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.GroupStreamsInitialRebalanceDelayMs = 0 }))
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "words", 4, nil)
	cl := newClient(t, b)
	raw := newStreamsConn(t, b)
	a := &streamsMember{t: t, cl: raw, group: "wc", id: "member-a", process: "proc-a"}
	r := a.join("wc", "words")
	if r.ErrorCode != 0 || r.MemberEpoch != 1 {
		t.Fatalf("join: %d %v epoch %d", r.ErrorCode, r.ErrorMessage, r.MemberEpoch)
	}
	if codes := statusCodes(r); len(codes) != 1 || codes[0] != 3 {
		t.Fatalf("join status %+v, want MISSING_INTERNAL_TOPICS", r.Status)
	}
	if n := taskCount(a.active); n != 0 {
		t.Fatalf("tasks before the internal topics exist: %v", a.active)
	}
	// The internal topics exist now, with the partition counts and configs
	// the topology asked for.
	td, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"wc-dedup-changelog", "wc-counts-changelog", "wc-rep-repartition"} {
		if d, ok := td[n]; !ok || len(d.Partitions) != 4 {
			t.Fatalf("internal topic %s: %+v", n, td[n])
		}
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "wc-counts-changelog")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := rc.On("wc-counts-changelog", nil); true {
		found := false
		for _, c := range v.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil && *c.Value == "compact" {
				found = true
			}
		}
		if !found {
			t.Fatalf("changelog is not compacted: %+v", v.Configs)
		}
	}
	// Next heartbeat: ready, all 8 tasks.
	r = a.beat(nil)
	if r.ErrorCode != 0 || len(r.Status) != 0 || taskCount(a.active) != 8 {
		t.Fatalf("ready heartbeat: %d %+v tasks %v", r.ErrorCode, r.Status, a.active)
	}
	epochA := a.epoch

	// A second member: nothing until A revoked.
	bm := &streamsMember{t: t, cl: raw, group: "wc", id: "member-b", process: "proc-b"}
	r = bm.join("wc", "words")
	if r.ErrorCode != 0 || taskCount(bm.active) != 0 {
		t.Fatalf("b join: %d tasks %v", r.ErrorCode, bm.active)
	}
	r = a.beat(nil)
	if taskCount(a.active) != 4 || a.epoch != epochA {
		t.Fatalf("a revocation step: tasks %v epoch %d (was %d)", a.active, a.epoch, epochA)
	}
	// B still waits: A has not confirmed.
	if r = bm.beat(nil); taskCount(bm.active) != 0 {
		t.Fatalf("b got tasks A still holds: %v", bm.active)
	}
	// A confirms the revocation: its epoch moves on.
	if r = a.report(); a.epoch <= epochA || taskCount(a.active) != 4 {
		t.Fatalf("a after revoking: epoch %d tasks %v", a.epoch, a.active)
	}
	if r = bm.beat(nil); taskCount(bm.active) != 4 {
		t.Fatalf("b after a revoked: %v", bm.active)
	}
	for s, ps := range bm.active {
		for _, p := range ps {
			for _, q := range a.active[s] {
				if p == q {
					t.Fatalf("task %s-%d held by both members", s, p)
				}
			}
		}
	}
	bm.report()
	a.report()

	// Describe: Stable, both members, the topology.
	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Version = 1
	dreq.Groups = []string{"wc", "nope"}
	dresp := raw.do(dreq).(*kmsg.StreamsGroupDescribeResponse)
	g := dresp.Groups[0]
	if g.ErrorCode != 0 || g.State != "Stable" || len(g.Members) != 2 || g.Topology == nil || len(g.Topology.Subtopologies) != 2 || g.AssignorName == nil || *g.AssignorName != "sticky" {
		t.Fatalf("describe: %+v", g)
	}
	if dresp.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code || *dresp.Groups[1].ErrorMessage != "Group nope not found." {
		t.Fatalf("describe unknown: %+v", dresp.Groups[1])
	}

	// ListGroups: type streams.
	lg, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := lg["wc"]; !ok || d.ProtocolType != "streams" || d.State != "Stable" {
		t.Fatalf("list groups: %+v", lg["wc"])
	}
	// One id space: the consumer protocol cannot use the id.
	ch := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	ch.Version, ch.Group, ch.MemberID, ch.MemberEpoch = 1, "wc", "c1", 0
	ch.RebalanceTimeoutMillis, ch.SubscribedTopicNames = 30000, []string{"words"}
	if cr, err := ch.RequestWith(ctx, cl); err != nil || cr.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer heartbeat on a streams group: %v %+v", err, cr)
	}

	// Offsets: committed with the member epoch; a wrong epoch is stale.
	commit := func(epoch int32) int16 {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version = 9
		oc.Group, oc.MemberID, oc.Generation = "wc", a.id, epoch
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset = a.active["0"][0], 7
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "words", Partitions: []kmsg.OffsetCommitRequestTopicPartition{p}}}
		// Raw, so that v9 (topic names) is what goes out.
		resp := raw.do(oc).(*kmsg.OffsetCommitResponse)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(a.epoch); code != 0 {
		t.Fatalf("commit with the member epoch: %d", code)
	}
	if code := commit(a.epoch + 5); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit with a wrong epoch: %d", code)
	}
	offs, err := adm.FetchOffsets(ctx, "wc")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("words", a.active["0"][0]); !ok || o.At != 7 {
		t.Fatalf("fetched offsets: %+v", offs)
	}

	// Deleting a live group fails; after both leave it works.
	if res, _ := adm.DeleteGroups(ctx, "wc"); res["wc"].Err != kerr.NonEmptyGroup {
		t.Fatalf("delete live group: %+v", res["wc"])
	}
	for _, m := range []*streamsMember{a, bm} {
		if r := m.beat(func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = -1 }); r.ErrorCode != 0 || r.MemberEpoch != -1 {
			t.Fatalf("leave: %+v", r)
		}
	}
	if res, err := adm.DeleteGroups(ctx, "wc"); err != nil || res["wc"].Err != nil {
		t.Fatalf("delete empty group: %v %+v", err, res["wc"])
	}
}

// TestStreamsGroupStatusAndErrors: missing source topics are a status, not
// an error; Kafka's request validation and fencing errors.
func TestStreamsGroupStatusAndErrors(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	cl := newClient(t, b)
	raw := newStreamsConn(t, b)
	m := &streamsMember{t: t, cl: raw, group: "app", id: "m1", process: "p1"}
	r := m.join("app", "absent")
	// A new group also waits out group.streams.initial.rebalance.delay.ms.
	if r.ErrorCode != 0 || len(r.Status) != 2 || r.Status[0].StatusCode != 5 || r.Status[1].StatusCode != 1 || r.Status[1].StatusDetail != "Source topics absent are missing." {
		t.Fatalf("missing source: %d %+v", r.ErrorCode, r.Status)
	}
	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Groups = []string{"app"}
	if d := raw.do(dreq).(*kmsg.StreamsGroupDescribeResponse); d.Groups[0].State != "NotReady" {
		t.Fatalf("describe not ready: %+v", d)
	}
	for _, tc := range []struct {
		name string
		mut  func(*kmsg.StreamsGroupHeartbeatRequest)
		code int16
		msg  string
	}{
		{"no member id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest.Code, "MemberId can't be empty."},
		{"join without topology", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch, r.RebalanceTimeoutMillis = 0, 1000 }, kerr.InvalidRequest.Code, "Topology must be non-null when (re-)joining."},
		{"fenced epoch", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = 99 }, kerr.FencedMemberEpoch.Code, ""},
		{"unknown member", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberID = "ghost" }, kerr.UnknownMemberID.Code, ""},
		{"topology after join", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Topology = streamsTopology("app", "absent") }, kerr.InvalidRequest.Code, "Topology can only be provided when (re-)joining."},
		{"internal topic in topology", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.MemberEpoch, r.RebalanceTimeoutMillis, r.Topology = 0, 1000, streamsTopology("app", "__consumer_offsets")
		}, kerr.StreamsInvalidTopology.Code, "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited."},
		{"invalid topic name", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.MemberEpoch, r.RebalanceTimeoutMillis, r.Topology = 0, 1000, streamsTopology("app", "bad name")
		}, kerr.StreamsInvalidTopology.Code, "Topic names bad name are not valid topic names."},
	} {
		saved := m.epoch
		r := m.beat(tc.mut)
		m.epoch = saved
		if r.ErrorCode != tc.code || (tc.msg != "" && (r.ErrorMessage == nil || *r.ErrorMessage != tc.msg)) {
			t.Errorf("%s: %d %v", tc.name, r.ErrorCode, r.ErrorMessage)
		}
	}
	// A share of the id space: a classic join on the streams group.
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.ProtocolType, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = "app", "consumer", 10000, 10000
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0}}}
	if jr, err := jg.RequestWith(testCtx(t), cl); err != nil || jr.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join on a streams group: %v %+v", err, jr)
	}
	// DescribeGroups answers it as Kafka does for a non-classic group.
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"app"}
	if d, err := dg.RequestWith(testCtx(t), cl); err != nil || d.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code || *d.Groups[0].ErrorMessage != "Group app is not a classic group." {
		t.Fatalf("describe groups: %v %+v", err, d)
	}
	got := []string{}
	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.Version = 5
	lreq.TypesFilter = []string{"streams"}
	lr, err := lreq.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range lr.Groups {
		got = append(got, g.Group+"/"+g.GroupType+"/"+g.GroupState)
	}
	sort.Strings(got)
	if len(got) != 1 || got[0] != "app/streams/NotReady" {
		t.Fatalf("list streams groups: %v", got)
	}
	// Without streams.version the protocol is off, as on Kafka.
	uf := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType, u.AllowDowngrade = "streams.version", 0, 2, true
	uf.FeatureUpdates = append(uf.FeatureUpdates, u)
	if ur, err := uf.RequestWith(testCtx(t), cl); err != nil || ur.ErrorCode != 0 {
		t.Fatalf("disable streams.version: %v %+v", err, ur)
	}
	if r := m.beat(nil); r.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("heartbeat with streams.version disabled: %d", r.ErrorCode)
	}
}

// TestStreamsGroupACLs: as Kafka's KafkaApis, READ on the group, DESCRIBE on
// every topic of a joining member's topology, and CREATE (cluster, else on
// each topic) before the internal topics are created; without CREATE the
// MISSING_INTERNAL_TOPICS detail says which topics were refused.
func TestStreamsGroupACLs(t *testing.T) {
	t.Parallel()
	b := aclBroker(t, brokertest.WithConfig(func(c *config.Config) { c.GroupStreamsInitialRebalanceDelayMs = 0 }))
	ctx := testCtx(t)
	adm := kadm.NewClient(newClient(t, b, as("admin")))
	mustCreateTopic(t, adm, "words", 2, nil)
	allow := func(bld *kadm.ACLBuilder) {
		t.Helper()
		res, err := adm.CreateACLs(ctx, bld)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	alice := newClient(t, b, as("alice"))
	if _, err := alice.Request(ctx, kmsg.NewPtrMetadataRequest()); err != nil {
		t.Fatal(err)
	}
	br := alice.Broker(1)
	join := func() *kmsg.StreamsGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "sg", "m1", 0
		req.RebalanceTimeoutMillis = 30000
		req.Topology = streamsTopology("sg", "words")
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		resp, err := br.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.StreamsGroupHeartbeatResponse)
	}
	if r := join(); r.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("no READ on the group: %d", r.ErrorCode)
	}
	allow(kadm.NewACLs().Groups("sg").Allow("User:alice").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	allow(kadm.NewACLs().Topics("words").Allow("User:alice").Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral))
	if r := join(); r.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("no DESCRIBE on the internal topics: %d", r.ErrorCode)
	}
	allow(kadm.NewACLs().Topics("sg-").Allow("User:alice").Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternPrefixed))
	r := join()
	if r.ErrorCode != 0 || len(r.Status) != 1 || r.Status[0].StatusCode != 3 ||
		r.Status[0].StatusDetail != "Internal topics are missing: sg-counts-changelog, sg-dedup-changelog, sg-rep-repartition; Unauthorized to CREATE on topics sg-counts-changelog, sg-dedup-changelog, sg-rep-repartition." {
		t.Fatalf("no CREATE: %d %+v", r.ErrorCode, r.Status)
	}
	if td, _ := adm.ListTopics(ctx); td.Has("sg-rep-repartition") {
		t.Fatal("internal topic created without CREATE")
	}
	allow(kadm.NewACLs().Topics("sg-").Allow("User:alice").Operations(kadm.OpCreate).ResourcePatternType(kadm.ACLPatternPrefixed))
	if r = join(); r.ErrorCode != 0 || len(r.Status) != 1 || r.Status[0].StatusDetail != "Internal topics are missing: sg-counts-changelog, sg-dedup-changelog, sg-rep-repartition" {
		t.Fatalf("with CREATE: %d %+v", r.ErrorCode, r.Status)
	}
	// A new client: kgo answers a repeated Metadata request from its cache.
	fresh := kadm.NewClient(newClient(t, b, as("admin")))
	if td, err := fresh.ListTopics(ctx); err != nil || !td.Has("sg-rep-repartition") || !td.Has("sg-counts-changelog") {
		t.Fatalf("internal topics not created: %v %v", td.Names(), err)
	}
}

// TestStreamsGroupAfterRestart: membership is not stored, so after a broker
// restart a member's next heartbeat gets UNKNOWN_MEMBER_ID; it rejoins with
// its topology (as the Streams client does), gets its tasks back, and the
// offsets it committed before the restart are still there.
func TestStreamsGroupAfterRestart(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.GroupStreamsInitialRebalanceDelayMs = 0 }))
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "words", 2, nil)
	m := &streamsMember{t: t, cl: newStreamsConn(t, b), group: "rs", id: "m1", process: "p1"}
	m.join("rs", "words")
	if r := m.beat(nil); r.ErrorCode != 0 || taskCount(m.active) != 4 {
		t.Fatalf("before restart: %d %v", r.ErrorCode, m.active)
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.MemberID, oc.Generation = 9, "rs", m.id, m.epoch
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "words", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 1, Offset: 42}}}}
	if resp := m.cl.do(oc).(*kmsg.OffsetCommitResponse); resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit: %d", resp.Topics[0].Partitions[0].ErrorCode)
	}

	b.Restart()
	m.cl = newStreamsConn(t, b)
	if r := m.beat(nil); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat after restart: %d, want UNKNOWN_MEMBER_ID", r.ErrorCode)
	}
	if r := m.join("rs", "words"); r.ErrorCode != 0 || taskCount(m.active) != 4 || len(r.Status) != 0 {
		t.Fatalf("rejoin: %d %+v %v", r.ErrorCode, r.Status, m.active)
	}
	offs, err := newAdmin(t, b).FetchOffsets(testCtx(t), "rs")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("words", 1); !ok || o.At != 42 {
		t.Fatalf("offsets after restart: %+v", offs)
	}
}

// TestStreamsGroupConfigs: the group configs streams.num.standby.replicas,
// streams.heartbeat.interval.ms and streams.task.offset.interval.ms
// (kafka-configs --entity-type groups) apply to the group, within the
// broker's group.streams.* bounds; group.streams.acceptable.recovery.lag
// reaches the members as the broker's default.
func TestStreamsGroupConfigs(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.GroupStreamsInitialRebalanceDelayMs = 0
		c.GroupStreamsAcceptableRecoveryLag = 5000
	}))
	cl := newClient(t, b)
	ctx := testCtx(t)
	mustCreateTopic(t, newAdmin(t, b), "words", 2, nil)
	alter := func(name, value string) int16 {
		t.Helper()
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "sb"
		rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: name, Value: &value}}
		r.Resources = append(r.Resources, rr)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Resources[0].ErrorCode
	}
	if code := alter("streams.num.standby.replicas", "3"); code != kerr.InvalidConfig.Code {
		t.Fatalf("standby replicas above group.streams.max.standby.replicas: %d", code)
	}
	if code := alter("streams.heartbeat.interval.ms", "1000"); code != kerr.InvalidConfig.Code {
		t.Fatalf("heartbeat interval below group.streams.min.heartbeat.interval.ms: %d", code)
	}
	if code := alter("streams.task.offset.interval.ms", "10000"); code != kerr.InvalidConfig.Code {
		t.Fatalf("task offset interval below group.streams.min.task.offset.interval.ms: %d", code)
	}
	for name, v := range map[string]string{"streams.num.standby.replicas": "1", "streams.heartbeat.interval.ms": "7000", "streams.task.offset.interval.ms": "20000"} {
		if code := alter(name, v); code != 0 {
			t.Fatalf("%s=%s: %d", name, v, code)
		}
	}
	raw := newStreamsConn(t, b)
	members := []*streamsMember{
		{t: t, cl: raw, group: "sb", id: "a", process: "pa"},
		{t: t, cl: raw, group: "sb", id: "b", process: "pb"},
	}
	for _, m := range members {
		if r := m.join("sb", "words"); r.ErrorCode != 0 || r.HeartbeatIntervalMillis != 7000 || r.TaskOffsetIntervalMillis != 20000 || r.AcceptableRecoveryLag != 5000 {
			t.Fatalf("join %s: %d, heartbeat interval %d, task offset interval %d, acceptable recovery lag %d; want 7000, 20000, 5000",
				m.id, r.ErrorCode, r.HeartbeatIntervalMillis, r.TaskOffsetIntervalMillis, r.AcceptableRecoveryLag)
		}
	}
	// Let both reconcile; each ends with standbys of the other's tasks.
	for round := 0; round < 4; round++ {
		for _, m := range members {
			m.report()
		}
	}
	standbys := 0
	for _, m := range members {
		standbys += m.standby
		if taskCount(m.active) != 2 || m.standby != 2 {
			t.Fatalf("member %s: active %v, %d standbys", m.id, m.active, m.standby)
		}
	}
	if standbys != 4 {
		t.Fatalf("%d standby tasks, want one per task", standbys)
	}
}
