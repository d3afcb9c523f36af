package broker_test

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
)

// TestInternalTopics: __consumer_offsets appears in Metadata once a group
// coordinator was looked up, with offsets.topic.num.partitions partitions
// and is_internal set; producing to it is refused as on Kafka and reading it
// answers TOPIC_AUTHORIZATION_FAILED (sharq keeps offsets in its state
// store, not in Kafka's record formats); a client-side regex consumer skips
// it.
func TestInternalTopics(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	cl := newClient(t, b)
	adm := newAdmin(t, b)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "user-topic"); err != nil {
		t.Fatal(err)
	}
	metadata := func() map[string]kmsg.MetadataResponseTopic {
		req := kmsg.NewPtrMetadataRequest()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]kmsg.MetadataResponseTopic{}
		for _, mt := range resp.Topics {
			out[*mt.Topic] = mt
		}
		return out
	}
	if _, ok := metadata()["__consumer_offsets"]; ok {
		t.Fatal("__consumer_offsets listed before any group coordinator lookup")
	}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g"
	if resp, err := fc.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %v %+v", err, resp)
	}
	md := metadata()
	co, ok := md["__consumer_offsets"]
	if !ok {
		t.Fatalf("__consumer_offsets not listed after FindCoordinator: %v", md)
	}
	if !co.IsInternal || len(co.Partitions) != 50 || md["user-topic"].IsInternal {
		t.Errorf("__consumer_offsets internal=%v with %d partitions (want true, 50: offsets.topic.num.partitions); user-topic internal=%v",
			co.IsInternal, len(co.Partitions), md["user-topic"].IsInternal)
	}
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.ResponsePartitionLimit = 100
	dtp.Topics = append(dtp.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: "__consumer_offsets"})
	if resp, err := dtp.RequestWith(ctx, cl); err != nil || len(resp.Topics) != 1 || !resp.Topics[0].IsInternal {
		t.Errorf("DescribeTopicPartitions: %v %+v", err, resp)
	}

	// Producing is refused with Kafka's error and message.
	res := cl.ProduceSync(ctx, &kgo.Record{Topic: "__consumer_offsets", Value: []byte("x")})
	if err := res.FirstErr(); !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("produce to __consumer_offsets: %v, want INVALID_TOPIC_EXCEPTION", err)
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "__consumer_offsets"
	lt.Partitions = append(lt.Partitions, kmsg.ListOffsetsRequestTopicPartition{Partition: 0, Timestamp: -2, CurrentLeaderEpoch: -1})
	lo.Topics = append(lo.Topics, lt)
	if resp, err := lo.RequestWith(ctx, cl); err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("ListOffsets on __consumer_offsets: %v %+v, want TOPIC_AUTHORIZATION_FAILED", err, resp)
	}
	f := kmsg.NewPtrFetchRequest()
	f.ReplicaID, f.MaxBytes, f.SessionEpoch = -1, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "__consumer_offsets", co.TopicID
	ft.Partitions = append(ft.Partitions, kmsg.FetchRequestTopicPartition{Partition: 0, PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LogStartOffset: -1})
	f.Topics = append(f.Topics, ft)
	if resp, err := f.RequestWith(ctx, cl); err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("Fetch of __consumer_offsets: %v %+v, want TOPIC_AUTHORIZATION_FAILED", err, resp)
	}

	// Creating it is refused; it stays listed after a restart.
	if resp, err := adm.CreateTopic(ctx, 1, 1, nil, "__consumer_offsets"); err == nil && resp.Err == nil {
		t.Error("CreateTopics __consumer_offsets succeeded")
	}

	// A regex consumer (client side, franz-go) reads the user topic and
	// never the internal one.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "user-topic", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rc := newClient(t, b, kgo.ConsumeRegex(), kgo.ConsumeTopics(".*"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := rc.PollFetches(ctx)
	fs.EachError(func(topic string, p int32, err error) { t.Errorf("regex consumer: %s/%d: %v", topic, p, err) })
	for _, r := range fs.Records() {
		if r.Topic != "user-topic" {
			t.Errorf("regex consumer got a record of %s", r.Topic)
		}
	}
	for _, topic := range rc.GetConsumeTopics() {
		if topic == "__consumer_offsets" {
			t.Error("regex consumer subscribed __consumer_offsets")
		}
	}

	b.Restart()
	cl2 := newClient(t, b)
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("__consumer_offsets")
	req.Topics = append(req.Topics, rt)
	if resp, err := req.RequestWith(ctx, cl2); err != nil || resp.Topics[0].ErrorCode != 0 || !resp.Topics[0].IsInternal {
		t.Errorf("after restart: %v %+v", err, resp)
	}
}

// TestMinInsyncReplicasClusterDefault: a new cluster carries
// min.insync.replicas as a cluster-wide dynamic default, as Kafka 4.4's
// controller writes it (with eligible leader replicas), so broker and topic
// describes show it with source DYNAMIC_DEFAULT_BROKER_CONFIG; the other
// defaults stay DEFAULT_CONFIG (checked against Kafka 4.4: it is the only one).
func TestMinInsyncReplicasClusterDefault(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "mir"); err != nil {
		t.Fatal(err)
	}
	check := func(rc kadm.ResourceConfigs, err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, r := range rc {
			for _, c := range r.Configs {
				dynDefault := c.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig
				if dynDefault != (c.Key == "min.insync.replicas") {
					t.Errorf("%s: %s source %v", what, c.Key, c.Source)
				}
				if c.Key == "min.insync.replicas" && c.MaybeValue() != "1" {
					t.Errorf("%s: min.insync.replicas=%s", what, c.MaybeValue())
				}
			}
		}
	}
	rc, err := adm.DescribeBrokerConfigs(ctx, 1)
	check(rc, err, "broker 1")
	rc, err = adm.DescribeBrokerConfigs(ctx)
	check(rc, err, "cluster default")
	rc, err = adm.DescribeTopicConfigs(ctx, "mir")
	check(rc, err, "topic")
	b.Restart()
	rc, err = newAdmin(t, b).DescribeBrokerConfigs(ctx)
	check(rc, err, "cluster default after restart")
}

// TestCompactionPolicy: cleanup.policy=compact is accepted, stored and
// described, and the CreateTopics and AlterConfigs answers carry no
// message (sharq compacts, as Kafka).
func TestCompactionPolicy(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	cl := newClient(t, b)
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "compacted", 1, 1
	rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "cleanup.policy", Value: kmsg.StringPtr("compact")}}
	ct.Topics = append(ct.Topics, rt)
	resp, err := ct.RequestWith(ctx, cl)
	if err != nil || resp.Topics[0].ErrorCode != 0 || resp.Topics[0].ErrorMessage != nil {
		t.Fatalf("create: %v %+v", err, resp.Topics)
	}
	plain := kmsg.NewPtrCreateTopicsRequest()
	plain.TimeoutMillis = 10000
	pt := kmsg.NewCreateTopicsRequestTopic()
	pt.Topic, pt.NumPartitions, pt.ReplicationFactor = "not-compacted", 1, 1
	plain.Topics = append(plain.Topics, pt)
	if resp, err := plain.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorMessage != nil {
		t.Errorf("plain create carries a message: %v %+v", err, resp.Topics)
	}
	ia := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ir := kmsg.NewIncrementalAlterConfigsRequestResource()
	ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, "not-compacted"
	ir.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr("compact,delete")}}
	ia.Resources = append(ia.Resources, ir)
	iresp, err := ia.RequestWith(ctx, cl)
	if err != nil || iresp.Resources[0].ErrorCode != 0 || iresp.Resources[0].ErrorMessage != nil {
		t.Fatalf("alter: %v %+v", err, iresp.Resources)
	}
	rc, err := newAdmin(t, b).DescribeTopicConfigs(ctx, "not-compacted")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := rc.On("not-compacted", nil)
	stored := ""
	for _, c := range v.Configs {
		if c.Key == "cleanup.policy" {
			stored = c.MaybeValue()
		}
	}
	if v.Err != nil || stored != "compact,delete" {
		t.Errorf("cleanup.policy %q, want compact,delete stored (%v)", stored, v.Err)
	}
}

// TestDescribeProducersInternalTopic: an internal topic's partitions answer
// DescribeProducers with no producers and no error, as Kafka does for a
// partition nobody wrote to; an error made kafka-transactions.sh
// find-hanging retry until it timed out.
func TestDescribeProducersInternalTopic(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	cl := newClient(t, b)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g"
	if resp, err := fc.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %v %+v", err, resp)
	}
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic = "__consumer_offsets"
	rt.Partitions = []int32{0, 49}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("response %+v", resp)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 || len(p.ActiveProducers) != 0 {
			t.Errorf("partition %d: error %d, %d producers; want none", p.Partition, p.ErrorCode, len(p.ActiveProducers))
		}
	}
}

// TestTransactionStateTopic: __transaction_state appears once a
// transaction coordinator was looked up (here by franz-go's transactional
// producer), with transaction.state.log.num.partitions partitions and
// is_internal set, as on Kafka; a group lookup does not create it, nor does
// a transaction lookup create __consumer_offsets. Writing and reading it are
// refused like the other internal topics.
func TestTransactionStateTopic(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithSetting("transaction.state.log.num.partitions", "7"))
	ctx := testCtx(t)
	cl := newClient(t, b)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "ts", 1, nil)
	listed := func() map[string]kmsg.MetadataResponseTopic {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]kmsg.MetadataResponseTopic{}
		for _, mt := range resp.Topics {
			out[*mt.Topic] = mt
		}
		return out
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "a-group"
	if resp, err := fc.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %v %+v", err, resp)
	}
	if _, ok := listed()["__transaction_state"]; ok {
		t.Fatal("__transaction_state listed after a group coordinator lookup")
	}

	b2 := brokertest.New(t)
	p2 := newClient(t, b2, kgo.TransactionalID("ts-only"))
	if err := p2.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p2.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	md2, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, newClient(t, b2))
	if err != nil {
		t.Fatal(err)
	}
	for _, mt := range md2.Topics {
		if *mt.Topic == "__consumer_offsets" {
			t.Error("__consumer_offsets created by a transaction coordinator lookup")
		}
	}

	p := newClient(t, b, kgo.TransactionalID("ts-id"), kgo.DefaultProduceTopic("ts"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	ts, ok := listed()["__transaction_state"]
	if !ok || !ts.IsInternal || len(ts.Partitions) != 7 {
		t.Fatalf("__transaction_state listed=%v internal=%v partitions=%d, want true, true, 7 (transaction.state.log.num.partitions)",
			ok, ts.IsInternal, len(ts.Partitions))
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "__transaction_state", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("produce to __transaction_state: %v, want INVALID_TOPIC_EXCEPTION", err)
	}
	f := kmsg.NewPtrFetchRequest()
	f.ReplicaID, f.MaxBytes, f.SessionEpoch = -1, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "__transaction_state", ts.TopicID
	ft.Partitions = append(ft.Partitions, kmsg.FetchRequestTopicPartition{Partition: 0, PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LogStartOffset: -1})
	f.Topics = append(f.Topics, ft)
	if resp, err := f.RequestWith(ctx, cl); err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("Fetch of __transaction_state: %v %+v, want TOPIC_AUTHORIZATION_FAILED", err, resp)
	}
	// kafka-topics --list (ListTopics with internal topics) shows it.
	tds, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := tds["__transaction_state"]; !ok || !d.IsInternal {
		t.Errorf("admin topic list: %+v", d)
	}
}
