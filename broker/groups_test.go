package broker_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// Consumer group tests with franz-go consumers: classic groups with the
// client-side balancers and KIP-848 groups with the server-side assignor.

func newGroupBroker(t *testing.T) *brokertest.Broker {
	return brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.GroupInitialRebalanceDelayMs = 0
		c.GroupMinSessionTimeoutMs = 500
		c.GroupConsumerMinHeartbeatIntervalMs = 100
		c.GroupConsumerHeartbeatIntervalMs = 200
		c.GroupConsumerMinSessionTimeoutMs = 1000
		c.GroupConsumerSessionTimeoutMs = 2000
	}))
}

// groupConsumer is one member under test: it records what it read and
// commits after every poll.
type groupConsumer struct {
	cl   *kgo.Client
	mu   sync.Mutex
	read map[int32]int // records per partition
	stop chan struct{}
	done chan struct{}
}

type tally struct {
	mu     sync.Mutex
	counts map[string]int
	total  int
}

func (ta *tally) add(v string) {
	ta.mu.Lock()
	ta.counts[v]++
	ta.total++
	ta.mu.Unlock()
}

func (ta *tally) get() int {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	return ta.total
}

func startGroupConsumer(t *testing.T, b *brokertest.Broker, ta *tally, topic, grp string, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	opts = append([]kgo.Opt{
		kgo.ConsumerGroup(grp), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(3 * time.Second), kgo.HeartbeatInterval(200 * time.Millisecond),
		kgo.FetchMaxWait(200 * time.Millisecond),
	}, opts...)
	gc := &groupConsumer{cl: newClient(t, b, opts...), read: map[int32]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(gc.done)
		for {
			select {
			case <-gc.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			fs := gc.cl.PollFetches(ctx)
			cancel()
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				gc.mu.Lock()
				gc.read[r.Partition]++
				gc.mu.Unlock()
				ta.add(string(r.Value))
			})
			if err := gc.cl.CommitUncommittedOffsets(context.Background()); err != nil {
				t.Logf("commit: %v", err)
			}
			gc.cl.AllowRebalance()
		}
	}()
	return gc
}

func (gc *groupConsumer) close() {
	close(gc.stop)
	<-gc.done
	gc.cl.Close()
}

func (gc *groupConsumer) partitionsRead() []int32 {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	var out []int32
	for p := range gc.read {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func produceRound(t *testing.T, b *brokertest.Broker, topic string, round, perPartition int) {
	t.Helper()
	cl := newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := int32(0); p < 6; p++ {
		for i := 0; i < perPartition; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("r%d-p%d-%d", round, p, i))})
		}
	}
	produceSync(t, cl, recs...)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assignedCounts asks the broker how many partitions each member holds.
func assignedCounts(t *testing.T, adm *kadm.Client, grp string) []int {
	ctx := testCtx(t)
	var out []int
	if dg, err := adm.DescribeGroups(ctx, grp); err == nil {
		if g, ok := dg[grp]; ok && g.Err == nil && g.State == "Stable" {
			for _, m := range g.Members {
				if ca, ok := m.Assigned.AsConsumer(); ok {
					n := 0
					for _, tp := range ca.Topics {
						n += len(tp.Partitions)
					}
					out = append(out, n)
				}
			}
			sort.Ints(out)
		}
	}
	return out
}

func runThreeConsumers(t *testing.T, grp string, classic bool, opts ...kgo.Opt) {
	b := newGroupBroker(t)
	adm := newAdmin(t, b)
	const topic = "groups6"
	mustCreateTopic(t, adm, topic, 6, nil)
	ta := &tally{counts: map[string]int{}}
	var cons []*groupConsumer
	for i := 0; i < 3; i++ {
		cons = append(cons, startGroupConsumer(t, b, ta, topic, grp, opts...))
	}
	defer func() {
		for _, c := range cons {
			if c != nil {
				c.close()
			}
		}
	}()
	// All three hold two partitions before any record exists.
	waitFor(t, "three members with two partitions each", func() bool {
		if classic {
			got := assignedCounts(t, adm, grp)
			return len(got) == 3 && got[0] == 2 && got[2] == 2
		}
		d, err := adm.DescribeConsumerGroups(testCtx(t), grp)
		if err != nil {
			return false
		}
		g := d[grp]
		if g.State != "Stable" || len(g.Members) != 3 {
			return false
		}
		for _, m := range g.Members {
			if n := len(m.Assignment.Sorted()); n != 1 || len(m.Assignment.Sorted()[0].Partitions) != 2 {
				return false
			}
		}
		return true
	})
	produceRound(t, b, topic, 1, 50)
	waitFor(t, "300 records", func() bool { return ta.get() >= 300 })
	for i, c := range cons {
		if got := c.partitionsRead(); len(got) != 2 {
			t.Errorf("consumer %d read partitions %v, want two", i, got)
		}
	}
	// One member leaves: the other two take over its partitions.
	cons[0].close()
	cons[0] = nil
	produceRound(t, b, topic, 2, 50)
	waitFor(t, "600 records", func() bool { return ta.get() >= 600 })
	// Give a duplicate a chance to show up before checking.
	time.Sleep(300 * time.Millisecond)
	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.total != 600 || len(ta.counts) != 600 {
		t.Fatalf("read %d records, %d distinct, want 600 exactly once", ta.total, len(ta.counts))
	}
	for v, n := range ta.counts {
		if n != 1 {
			t.Errorf("record %s read %d times", v, n)
		}
	}
}

func TestGroupClassicCooperativeSticky(t *testing.T) {
	t.Parallel()
	runThreeConsumers(t, "classic-coop", true, kgo.Balancers(kgo.CooperativeStickyBalancer()))
}

func TestGroupClassicRange(t *testing.T) {
	t.Parallel()
	runThreeConsumers(t, "classic-range", true, kgo.Balancers(kgo.RangeBalancer()))
}

func TestGroupConsumerProtocol(t *testing.T) {
	t.Parallel()
	runThreeConsumers(t, "kip848", false, kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()))
}

func TestGroupConsumerProtocolRange(t *testing.T) {
	t.Parallel()
	runThreeConsumers(t, "kip848-range", false, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
}

// TestGroupOffsetsSurviveRestart commits through a group consumer, restarts
// the broker and reads the offsets back.
func TestGroupOffsetsSurviveRestart(t *testing.T) {
	t.Parallel()
	b := newGroupBroker(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "durable", 6, nil)
	produceRound(t, b, "durable", 1, 10)
	ta := &tally{counts: map[string]int{}}
	gc := startGroupConsumer(t, b, ta, "durable", "g-durable")
	waitFor(t, "60 records", func() bool { return ta.get() >= 60 })
	waitFor(t, "committed offsets", func() bool {
		offs, err := adm.FetchOffsets(testCtx(t), "g-durable")
		if err != nil {
			return false
		}
		n := 0
		offs.Each(func(o kadm.OffsetResponse) {
			if o.At == 10 {
				n++
			}
		})
		return n == 6
	})
	gc.close()
	b.Restart()
	adm = newAdmin(t, b)
	offs, err := adm.FetchOffsets(testCtx(t), "g-durable")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At != 10 {
			t.Errorf("after restart %s-%d: offset %d err %v, want 10", o.Topic, o.Partition, o.At, o.Err)
		}
		n++
	})
	if n != 6 {
		t.Fatalf("after restart %d partitions have offsets, want 6", n)
	}
	// A new member of the group starts where the old one committed.
	produceRound(t, b, "durable", 2, 1)
	ta2 := &tally{counts: map[string]int{}}
	gc2 := startGroupConsumer(t, b, ta2, "durable", "g-durable")
	defer gc2.close()
	waitFor(t, "6 new records", func() bool { return ta2.get() >= 6 })
	time.Sleep(200 * time.Millisecond)
	if got := ta2.get(); got != 6 {
		t.Fatalf("after restart the group read %d records, want only the 6 new ones", got)
	}
	// Deleting the group drops its offsets; a non-empty group refuses.
	dr, err := adm.DeleteGroups(testCtx(t), "g-durable")
	if err != nil {
		t.Fatal(err)
	}
	if e := dr["g-durable"].Err; e == nil || e.Error() == "" {
		t.Fatalf("delete of a group with a member: %v, want NON_EMPTY_GROUP", e)
	}
}

// TestGroupStaticMemberRejoins: a static member that restarts gets its
// partitions back without a rebalance of the others.
func TestGroupStaticMemberRejoins(t *testing.T) {
	t.Parallel()
	b := newGroupBroker(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "static", 6, nil)
	ta := &tally{counts: map[string]int{}}
	var cons []*groupConsumer
	for i := 0; i < 3; i++ {
		cons = append(cons, startGroupConsumer(t, b, ta, "static", "g-static", kgo.InstanceID(fmt.Sprintf("inst-%d", i)), kgo.SessionTimeout(20*time.Second),
			// Eager: a cooperative balancer's follow-up rebalance would
			// race with the generation check below.
			kgo.Balancers(kgo.RangeBalancer())))
	}
	defer func() {
		for _, c := range cons {
			c.close()
		}
	}()
	waitFor(t, "three static members in one generation", func() bool {
		got := assignedCounts(t, adm, "g-static")
		_, g0 := cons[0].cl.GroupMetadata()
		_, g1 := cons[1].cl.GroupMetadata()
		_, g2 := cons[2].cl.GroupMetadata()
		return len(got) == 3 && got[0] == 2 && got[2] == 2 && g0 == g1 && g1 == g2
	})
	_, gen := cons[1].cl.GroupMetadata()
	cons[0].close()
	cons[0] = startGroupConsumer(t, b, ta, "static", "g-static", kgo.InstanceID("inst-0"), kgo.SessionTimeout(20*time.Second), kgo.Balancers(kgo.RangeBalancer()))
	waitFor(t, "the static member back", func() bool {
		m, _ := cons[0].cl.GroupMetadata()
		return m != ""
	})
	produceRound(t, b, "static", 1, 5)
	waitFor(t, "30 records", func() bool { return ta.get() >= 30 })
	if _, gen2 := cons[1].cl.GroupMetadata(); gen2 != gen {
		t.Fatalf("generation moved from %d to %d: the static rejoin caused a rebalance", gen, gen2)
	}
	if got := cons[0].partitionsRead(); len(got) != 2 {
		t.Fatalf("the rejoined static member read partitions %v, want its two", got)
	}
}

// TestGroupSilentMemberExpires: a member that stops heartbeating (a raw
// client that joins and goes quiet) loses its partitions to a live kgo
// consumer once its session times out, in both protocols.
func TestGroupSilentMemberExpires(t *testing.T) {
	t.Parallel()
	b := newGroupBroker(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "silent", 6, nil)
	raw := newClient(t, b)
	ctx := testCtx(t)

	t.Run("consumer protocol", func(t *testing.T) {
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = "silent-848", "quiet", 5000, []string{"silent"}
		resp, err := raw.Request(ctx, hb)
		if err != nil || resp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode != 0 {
			t.Fatalf("raw join: %v %+v", err, resp)
		}
		ta := &tally{counts: map[string]int{}}
		gc := startGroupConsumer(t, b, ta, "silent", "silent-848", kgo.ServerSideBalancer())
		defer gc.close()
		produceRound(t, b, "silent", 1, 3)
		// The quiet member held all six partitions; after its session
		// (2s) expires the live consumer reads every partition.
		waitFor(t, "all 18 records", func() bool { return ta.get() >= 18 })
		if got := gc.partitionsRead(); len(got) != 6 {
			t.Fatalf("live consumer read %v, want all six partitions", got)
		}
	})
	t.Run("classic", func(t *testing.T) {
		join := func(member string) *kmsg.JoinGroupResponse {
			j := kmsg.NewPtrJoinGroupRequest()
			j.Group, j.MemberID, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis, j.ProtocolType = "silent-classic", member, 1000, 3000, "consumer"
			meta := kmsg.NewConsumerMemberMetadata()
			meta.Topics = []string{"silent"}
			j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta.AppendTo(nil)}}
			resp, err := raw.Request(ctx, j)
			if err != nil {
				t.Fatal(err)
			}
			return resp.(*kmsg.JoinGroupResponse)
		}
		r := join("")
		r = join(r.MemberID)
		if r.ErrorCode != 0 {
			t.Fatalf("raw join: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		asg := kmsg.NewConsumerMemberAssignment()
		asg.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "silent", Partitions: []int32{0, 1, 2, 3, 4, 5}}}
		s := kmsg.NewPtrSyncGroupRequest()
		s.Group, s.MemberID, s.Generation = "silent-classic", r.MemberID, r.Generation
		s.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: r.MemberID, MemberAssignment: asg.AppendTo(nil)}}
		if resp, err := raw.Request(ctx, s); err != nil || resp.(*kmsg.SyncGroupResponse).ErrorCode != 0 {
			t.Fatalf("raw sync: %v %+v", err, resp)
		}
		ta := &tally{counts: map[string]int{}}
		gc := startGroupConsumer(t, b, ta, "silent", "silent-classic", kgo.Balancers(kgo.RangeBalancer()))
		defer gc.close()
		waitFor(t, "all 18 records", func() bool { return ta.get() >= 18 })
		if got := gc.partitionsRead(); len(got) != 6 {
			t.Fatalf("live consumer read %v, want all six partitions", got)
		}
	})
}

// TestGroupConsumerProtocolRegexInternalTopic: a broker-resolved (KIP-848)
// regex matches internal topics too, as Kafka 4.4's coordinator does (it
// matches every topic of its metadata image; franz-go's
// Test848RegexBrokerResolves passes against Kafka 4.4 only so): the member is
// assigned all of __consumer_offsets beside the user topic, and franz-go
// adopts it. Skipping internal topics is the clients' rule for their own
// pattern subscriptions.
func TestGroupConsumerProtocolRegexInternalTopic(t *testing.T) {
	t.Parallel()
	b := newGroupBroker(t)
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "rxi-orders", 1, nil)
	mustCreateTopic(t, adm, "rxi-orders-v2", 1, nil)
	produceSync(t, newClient(t, b), &kgo.Record{Topic: "rxi-orders", Value: []byte("o")})
	cl := newClient(t, b, kgo.ConsumerGroup("rxi-group"), kgo.ConsumeRegex(), kgo.ServerSideBalancer(),
		kgo.ConsumeTopics("rxi-orders", "__consumer_offsets"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.MetadataMinAge(100*time.Millisecond), kgo.FetchMaxWait(200*time.Millisecond))
	for got := false; !got; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("no record of rxi-orders before the deadline")
		}
		fs.EachRecord(func(r *kgo.Record) { got = got || r.Topic == "rxi-orders" })
	}
	assigned := func() map[string]int {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"rxi-group"}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Groups) != 1 || len(resp.Groups[0].Members) != 1 {
			t.Fatalf("ConsumerGroupDescribe: %v %+v", err, resp)
		}
		out := map[string]int{}
		for _, tp := range resp.Groups[0].Members[0].Assignment.TopicPartitions {
			out[tp.Topic] += len(tp.Partitions)
		}
		return out
	}
	waitFor(t, "__consumer_offsets assigned and consumed", func() bool {
		return assigned()["__consumer_offsets"] == 50 && slices.Contains(cl.GetConsumeTopics(), "__consumer_offsets")
	})
	// franz-go sends ".*(?:(?:__consumer_offsets)|(?:rxi-orders)).*", which
	// rxi-orders-v2 matches too.
	if a := assigned(); len(a) != 3 || a["rxi-orders"] != 1 || a["rxi-orders-v2"] != 1 {
		t.Errorf("assignment %v, want rxi-orders/1, rxi-orders-v2/1 and __consumer_offsets/50", a)
	}
}

// TestGroupConsumerProtocolRegex: a KIP-848 regex subscription picks up
// matching topics, including one created after the member joined.
func TestGroupConsumerProtocolRegex(t *testing.T) {
	t.Parallel()
	b := newGroupBroker(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "rx-a", 2, nil)
	mustCreateTopic(t, adm, "other", 1, nil)
	ta := &tally{counts: map[string]int{}}
	gc := startGroupConsumer(t, b, ta, "rx-.*", "rx-group", kgo.ConsumeRegex(), kgo.ServerSideBalancer(),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(200*time.Millisecond))
	defer gc.close()
	mustCreateTopic(t, adm, "rx-b", 2, nil)
	cl := newClient(t, b)
	produceSync(t, cl, &kgo.Record{Topic: "rx-a", Value: []byte("a")}, &kgo.Record{Topic: "other", Value: []byte("o")})
	waitFor(t, "the record of rx-a", func() bool { return ta.get() >= 1 })
	d, err := adm.DescribeConsumerGroups(testCtx(t), "rx-group")
	if err != nil {
		t.Fatal(err)
	}
	if m := d["rx-group"].Members; len(m) != 1 || m[0].SubscribedTopicRegex == nil || !strings.Contains(*m[0].SubscribedTopicRegex, "rx-.*") {
		t.Fatalf("members %+v, want one subscribed by a regex with rx-.*", m)
	}
	produceSync(t, cl, &kgo.Record{Topic: "rx-b", Value: []byte("b")})
	waitFor(t, "the record of rx-b", func() bool { return ta.get() >= 2 })
	time.Sleep(200 * time.Millisecond)
	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.counts["o"] != 0 || ta.counts["a"] != 1 || ta.counts["b"] != 1 {
		t.Fatalf("read %v, want a and b once and nothing of other", ta.counts)
	}
}
