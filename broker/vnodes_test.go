package broker_test

import (
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"sharq/broker/brokertest"
	"sharq/config"
)

// Tests of virtual brokers (sharq.virtual.brokers, docs/virtual-brokers.md)
// with franz-go: what clients see of the nodes, the answers of the wrong
// node, and clients carried through moves and outages.

func newVirtual(t *testing.T, n int) *brokertest.Broker {
	t.Helper()
	return brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.VirtualBrokers = int32(n) }))
}

// onNode sends req to one node, whatever kgo would route it to.
func onNode(t *testing.T, cl *kgo.Client, node int32, req kmsg.Request) kmsg.Response {
	t.Helper()
	resp, err := cl.Broker(int(node)).Request(testCtx(t), req)
	if err != nil {
		t.Fatalf("%s on node %d: %v", kmsg.NameForKey(req.Key()), node, err)
	}
	return resp
}

// clientLog sends a client's log to the test log at SHARQ_TEST_CLIENT_LOG.
func clientLog(t *testing.T) kgo.Opt {
	lvl := kgo.LogLevelNone
	if os.Getenv("SHARQ_TEST_CLIENT_LOG") != "" {
		lvl = kgo.LogLevelDebug
	}
	return kgo.WithLogger(kgo.BasicLogger(os.Stderr, lvl, nil))
}

func metadata(t *testing.T, cl *kgo.Client, topic string) *kmsg.MetadataResponse {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestVirtualBrokersWhatClientsSee(t *testing.T) {
	t.Parallel()
	b := newVirtual(t, 3)
	adm := newAdmin(t, b)
	const topic = "spread"
	mustCreateTopic(t, adm, topic, 6, nil)
	cl := newClient(t, b)
	md := metadata(t, cl, topic)
	if len(md.Brokers) != 3 {
		t.Fatalf("brokers %+v", md.Brokers)
	}
	ports := map[int32]bool{}
	for i, br := range md.Brokers {
		if br.NodeID != int32(i+1) || ports[br.Port] {
			t.Fatalf("broker %d: %+v", i, br)
		}
		ports[br.Port] = true
	}
	for _, p := range md.Topics[0].Partitions {
		if want := p.Partition%3 + 1; p.Leader != want || len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Errorf("partition %d: leader %d replicas %v isr %v, want leader %d over all 3", p.Partition, p.Leader, p.Replicas, p.ISR, want)
		}
	}

	// Produce to a node that does not lead: NOT_LEADER_OR_FOLLOWER with
	// the leader and its endpoint (KIP-951).
	preq := kmsg.NewPtrProduceRequest()
	preq.Acks, preq.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic, pt.TopicID = topic, md.Topics[0].TopicID
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = 0 // led by node 1
	pp.Records = oneBatch(t)
	pt.Partitions = append(pt.Partitions, pp)
	preq.Topics = append(preq.Topics, pt)
	presp := onNode(t, cl, 2, preq).(*kmsg.ProduceResponse)
	got := presp.Topics[0].Partitions[0]
	if got.ErrorCode != kerr.NotLeaderForPartition.Code || got.CurrentLeader.LeaderID != 1 || len(presp.Brokers) != 1 || presp.Brokers[0].NodeID != 1 || presp.Brokers[0].Port != md.Brokers[0].Port {
		t.Fatalf("produce to node 2: %+v brokers %+v", got, presp.Brokers)
	}

	// Coordinators: FindCoordinator names the leader of the group's
	// __consumer_offsets partition, and another node refuses the group.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g1"
	fcr, err := fc.RequestWith(testCtx(t), cl)
	if err != nil || fcr.ErrorCode != 0 {
		t.Fatalf("find coordinator: %+v %v", fcr, err)
	}
	if want := b.Server.CoordinatorOf("group", "g1"); fcr.NodeID != want {
		t.Fatalf("coordinator %d, want %d", fcr.NodeID, want)
	}
	other := fcr.NodeID%3 + 1
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g1", "m", 1
	if hbr := onNode(t, cl, other, hb).(*kmsg.HeartbeatResponse); hbr.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat on node %d: %+v", other, hbr)
	}

	// A stopped node: its open connection drops, its port refuses, and
	// Metadata no longer lists it but for its replicas (offline, out of
	// the ISR); started again it listens on the same port.
	addr2 := net.JoinHostPort(md.Brokers[1].Host, fmt.Sprint(md.Brokers[1].Port))
	open, err := net.Dial("tcp", addr2)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := b.Server.StopNode(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	open.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection to the stopped node stayed open")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a connection to the stopped node was not closed")
	}
	if c, err := net.Dial("tcp", addr2); err == nil {
		c.Close()
		t.Fatal("the stopped node's port accepts connections")
	}
	md = metadata(t, cl, topic)
	if len(md.Brokers) != 2 {
		t.Fatalf("brokers with node 2 stopped: %+v", md.Brokers)
	}
	for _, p := range md.Topics[0].Partitions {
		if p.Leader == 2 || len(p.ISR) != 2 || len(p.OfflineReplicas) != 1 || p.OfflineReplicas[0] != 2 {
			t.Errorf("partition %d with node 2 stopped: leader %d isr %v offline %v", p.Partition, p.Leader, p.ISR, p.OfflineReplicas)
		}
	}
	for _, fenced := range []bool{false, true} {
		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.IncludeFencedBrokers = fenced
		resp, err := dc.RequestWith(testCtx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int32
		for _, br := range resp.Brokers {
			if br.IsFenced != (br.NodeID == 2) {
				t.Errorf("DescribeCluster (fenced %v): %+v", fenced, br)
			}
			ids = append(ids, br.NodeID)
		}
		if want := map[bool]string{false: "[1 3]", true: "[1 2 3]"}[fenced]; fmt.Sprint(ids) != want {
			t.Errorf("DescribeCluster (fenced %v): brokers %v, want %s", fenced, ids, want)
		}
	}
	// A topic created meanwhile is placed on every node, the stopped one
	// fenced: out of the ISR, leading nothing.
	mustCreateTopic(t, adm, "while-down", 3, nil)
	for _, p := range metadata(t, cl, "while-down").Topics[0].Partitions {
		if p.Leader == 2 || len(p.Replicas) != 3 || len(p.ISR) != 2 {
			t.Errorf("while-down-%d: leader %d replicas %v isr %v", p.Partition, p.Leader, p.Replicas, p.ISR)
		}
	}
	if err := b.Server.StartNode(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	for _, p := range metadata(t, cl, "while-down").Topics[0].Partitions {
		if len(p.ISR) != 3 {
			t.Errorf("while-down-%d after node 2 started: isr %v", p.Partition, p.ISR)
		}
	}
	c, err := net.Dial("tcp", addr2)
	if err != nil {
		t.Fatalf("node 2 started again: %v", err)
	}
	c.Close()
}

// oneBatch is one record as a v2 batch.
func oneBatch(t *testing.T) []byte {
	t.Helper()
	rec := kmsg.Record{Key: []byte("k"), Value: []byte("v")}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	now := time.Now().UnixMilli()
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1, Records: rec.AppendTo(nil),
	}
	batch.Length = int32(len(batch.AppendTo(nil)) - 12)
	raw := batch.AppendTo(nil)
	batch.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return batch.AppendTo(nil)
}

// TestVirtualIdempotentProducerThroughMoves produces with an idempotent
// producer while a leader moves, a node stops and starts again, then
// reads everything back: nothing lost, nothing twice.
func TestVirtualIdempotentProducerThroughMoves(t *testing.T) {
	t.Parallel()
	b := newVirtual(t, 3)
	adm := newAdmin(t, b)
	const topic, parts = "moves", 3
	mustCreateTopic(t, adm, topic, parts, nil)
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), clientLog(t))
	ctx := testCtx(t)

	var produced atomic.Int64
	var failed atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var recs []*kgo.Record
			for j := 0; j < 20; j++ {
				recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprint(i*20 + j))})
			}
			if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				failed.Store(err)
				return
			}
			produced.Add(int64(len(recs)))
		}
	}()
	waitProduced := func(n int64) {
		t.Helper()
		for produced.Load() < n {
			if err := failed.Load(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatal("timed out producing")
			}
			time.Sleep(time.Millisecond) // polling a counter the producer goroutine advances
		}
	}
	waitProduced(200)
	if moved, err := b.Server.MoveLeader(ctx, topic, 0, 2); err != nil || !moved {
		t.Fatalf("move leader: %v %v", moved, err)
	}
	waitProduced(produced.Load() + 200)
	changes, err := b.Server.StopNode(ctx, 3)
	if err != nil || len(changes) == 0 {
		t.Fatalf("stop node 3: %+v %v", changes, err)
	}
	waitProduced(produced.Load() + 200)
	if err := b.Server.StartNode(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Server.MoveLeader(ctx, topic, 2, 3); err != nil {
		t.Fatal(err)
	}
	waitProduced(produced.Load() + 200)
	close(stop)
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	md := metadata(t, newClient(t, b), topic)
	for _, p := range md.Topics[0].Partitions {
		if len(p.ISR) != 3 {
			t.Errorf("partition %d isr %v after the node came back", p.Partition, p.ISR)
		}
	}
	if p := md.Topics[0].Partitions[0]; p.Leader != 2 || p.LeaderEpoch < 1 {
		t.Errorf("partition 0: leader %d epoch %d", p.Leader, p.LeaderEpoch)
	}

	n := int(produced.Load())
	recs := consumeN(t, b, topic, parts, n)
	seen := make(map[string]int, n)
	for _, r := range recs {
		seen[string(r.Value)]++
	}
	for i := 0; i < n; i++ {
		if c := seen[fmt.Sprint(i)]; c != 1 {
			t.Fatalf("record %d read %d times (of %d produced)", i, c, n)
		}
	}
}

// TestVirtualWrongNodeAnswers: each API sent to a node that neither leads
// nor coordinates what it names, next to the same request on the right
// node.
func TestVirtualWrongNodeAnswers(t *testing.T) {
	t.Parallel()
	b := newVirtual(t, 3)
	adm := newAdmin(t, b)
	const topic = "wrong"
	mustCreateTopic(t, adm, topic, 3, nil)
	cl := newClient(t, b)
	md := metadata(t, cl, topic)
	topicID := md.Topics[0].TopicID
	notLeader, notCoord := kerr.NotLeaderForPartition.Code, kerr.NotCoordinator.Code
	// Partition 0 is led by node 1; node 2 is the wrong one.
	listOffsets := func(node int32) int16 {
		req := kmsg.NewPtrListOffsetsRequest()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = 0, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return onNode(t, cl, node, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode
	}
	epochFor := func(node int32) int16 {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, -1, 0
		req.ReplicaID = -1 // a consumer's (kmsg defaults to the debugging id)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return onNode(t, cl, node, req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
	}
	// kgo sends the highest version both sides know: a client capped at
	// Kafka 2.1's versions sends Fetch v10.
	old := newClient(t, b, kgo.MaxVersions(kversion.V2_1_0()))
	fetch := func(node int32, version int16) int16 {
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = 0, 1<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = 0, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		c := cl
		if version < 11 {
			c = old
		}
		resp, err := c.Broker(int(node)).Request(testCtx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetVersion(); got < 11 != (version < 11) {
			t.Fatalf("Fetch sent as v%d, wanted v%d", got, version)
		}
		return resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode
	}
	g1Node := b.Server.CoordinatorOf("group", "g1")
	txNode := b.Server.CoordinatorOf("txn", "tx1")
	endTxn := func(node int32) int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = "tx1", 1, 0
		return onNode(t, cl, node, req).(*kmsg.EndTxnResponse).ErrorCode
	}
	initPID := func(node int32) int16 {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("tx1"), 60000
		return onNode(t, cl, node, req).(*kmsg.InitProducerIDResponse).ErrorCode
	}
	describeGroups := func(node int32) map[string]int16 {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{"g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9"}
		out := map[string]int16{}
		for _, g := range onNode(t, cl, node, req).(*kmsg.DescribeGroupsResponse).Groups {
			out[g.Group] = g.ErrorCode
		}
		return out
	}
	findTxn := func() int32 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKeys = 1, []string{"tx1"}
		return onNode(t, cl, 3, req).(*kmsg.FindCoordinatorResponse).Coordinators[0].NodeID
	}

	for _, c := range []struct {
		name      string
		got, want int16
	}{
		{"ListOffsets on the leader", listOffsets(1), 0},
		{"ListOffsets elsewhere", listOffsets(2), notLeader},
		{"OffsetForLeaderEpoch on the leader", epochFor(1), 0},
		{"OffsetForLeaderEpoch elsewhere", epochFor(2), notLeader},
		{"Fetch v10 elsewhere", fetch(2, 10), notLeader},
		{"Fetch v12 from a follower (KIP-392)", fetch(2, 12), 0},
		{"InitProducerId on the coordinator", initPID(txNode), 0},
		{"InitProducerId elsewhere", initPID(otherNode(txNode)), notCoord},
		{"EndTxn elsewhere", endTxn(otherNode(txNode)), notCoord},
	} {
		if c.got != c.want {
			t.Errorf("%s: error %d, want %d", c.name, c.got, c.want)
		}
	}
	if got := findTxn(); got != txNode {
		t.Errorf("FindCoordinator for tx1: node %d, want %d", got, txNode)
	}
	// Batched: the groups of node g1Node answered, the others refused.
	kinds := map[bool]int{}
	for g, code := range describeGroups(g1Node) {
		kinds[b.Server.CoordinatorOf("group", g) == g1Node]++
		if mine := b.Server.CoordinatorOf("group", g) == g1Node; mine && code == notCoord || !mine && code != notCoord {
			t.Errorf("DescribeGroups on node %d: %s error %d", g1Node, g, code)
		}
	}
	if kinds[true] == 0 || kinds[false] == 0 {
		t.Fatalf("DescribeGroups: groups here and elsewhere %v: the test needs both", kinds)
	}

	// ShareFetch: the partition answers NOT_LEADER_OR_FOLLOWER with its
	// leader and the leader's endpoint.
	sf := kmsg.NewPtrShareFetchRequest()
	sf.GroupID, sf.MemberID = kmsg.StringPtr("sg"), kmsg.StringPtr("AAAAAAAAAAAAAAAAAAAAAA")
	sf.ShareSessionEpoch, sf.MaxWaitMillis, sf.MaxBytes, sf.MaxRecords, sf.BatchSize = 0, 0, 1<<20, 100, 100
	st := kmsg.NewShareFetchRequestTopic()
	st.TopicID = topicID
	sp := kmsg.NewShareFetchRequestTopicPartition()
	sp.Partition = 0
	st.Partitions = append(st.Partitions, sp)
	sf.Topics = append(sf.Topics, st)
	sresp := onNode(t, cl, 2, sf).(*kmsg.ShareFetchResponse)
	if sresp.ErrorCode != 0 || len(sresp.Topics) != 1 || len(sresp.Topics[0].Partitions) != 1 {
		t.Fatalf("ShareFetch on node 2: %+v", sresp)
	}
	spr := sresp.Topics[0].Partitions[0]
	if spr.ErrorCode != notLeader || spr.CurrentLeader.LeaderID != 1 || len(sresp.NodeEndpoints) != 1 || sresp.NodeEndpoints[0].NodeID != 1 || sresp.NodeEndpoints[0].Port != md.Brokers[0].Port {
		t.Fatalf("ShareFetch partition on node 2: %+v endpoints %+v", spr, sresp.NodeEndpoints)
	}
}

// TestVirtualElectionsAndReassignments: after a node comes back a
// preferred election (kafka-leader-election.sh's) gives it its partitions
// back, and a reassignment never leaves a stopped node in an ISR.
func TestVirtualElectionsAndReassignments(t *testing.T) {
	t.Parallel()
	b := newVirtual(t, 3)
	adm := newAdmin(t, b)
	const topic = "elect"
	mustCreateTopic(t, adm, topic, 3, nil)
	ctx := testCtx(t)
	if _, err := b.Server.StopNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := b.Server.StartNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b)
	if p := metadata(t, cl, topic).Topics[0].Partitions[1]; p.Leader != 3 {
		t.Fatalf("partition 1 after node 2 came back: leader %d, want 3 until an election", p.Leader)
	}
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[topic][1]; r.Err != nil {
		t.Fatalf("preferred election: %v", r.Err)
	}
	if p := metadata(t, cl, topic).Topics[0].Partitions[1]; p.Leader != 2 || p.LeaderEpoch != 2 {
		t.Fatalf("partition 1 after the election: leader %d epoch %d, want 2 at epoch 2", p.Leader, p.LeaderEpoch)
	}

	if _, err := b.Server.StopNode(ctx, 3); err != nil {
		t.Fatal(err)
	}
	ar, err := adm.AlterPartitionAssignments(ctx, kadm.AlterPartitionAssignmentsReq{topic: {0: {3, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := ar[topic][0]; r.Err != nil {
		t.Fatalf("reassign: %v", r.Err)
	}
	p := metadata(t, cl, topic).Topics[0].Partitions[0]
	if fmt.Sprint(p.Replicas) != "[3 1 2]" || p.Leader == 3 || len(p.ISR) != 2 {
		t.Fatalf("partition 0 reassigned with node 3 stopped: leader %d replicas %v isr %v", p.Leader, p.Replicas, p.ISR)
	}
}
