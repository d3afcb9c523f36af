package broker_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

func strp(s string) *string { return &s }

func TestTopicAdmin(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	ctx := testCtx(t)

	mustCreateTopic(t, adm, "admin-a", 3, map[string]*string{"retention.ms": strp("3600000")})

	cases := []struct {
		name       string
		topic      string
		partitions int32
		configs    map[string]*string
		want       error
	}{
		{"exists", "admin-a", 1, nil, kerr.TopicAlreadyExists},
		{"bad name", "bad/name", 1, nil, kerr.InvalidTopicException},
		{"dot", ".", 1, nil, kerr.InvalidTopicException},
		{"zero partitions", "admin-zero", 0, nil, kerr.InvalidPartitions},
		{"unknown config", "admin-cfg", 1, map[string]*string{"no.such.config": strp("1")}, kerr.InvalidConfig},
		{"bad config value", "admin-cfg2", 1, map[string]*string{"retention.ms": strp("soon")}, kerr.InvalidConfig},
	}
	for _, c := range cases {
		resp, err := adm.CreateTopics(ctx, c.partitions, 1, c.configs, c.topic)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := resp[c.topic].Err; !errors.Is(got, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, got, c.want)
		}
	}
	// Replication factor beyond the one broker.
	resp, err := adm.CreateTopics(ctx, 1, 3, nil, "admin-rf")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(resp["admin-rf"].Err, kerr.InvalidReplicationFactor) {
		t.Errorf("rf 3 on one broker: %v", resp["admin-rf"].Err)
	}

	// Describe: 3 partitions led by this node, a real topic id.
	md, err := adm.Metadata(ctx, "admin-a")
	if err != nil {
		t.Fatal(err)
	}
	td := md.Topics["admin-a"]
	if len(td.Partitions) != 3 {
		t.Fatalf("partitions %d, want 3", len(td.Partitions))
	}
	for _, p := range td.Partitions {
		if p.Leader != b.Config.NodeID || len(p.Replicas) != 1 || len(p.ISR) != 1 {
			t.Errorf("partition %d: leader %d replicas %v isr %v", p.Partition, p.Leader, p.Replicas, p.ISR)
		}
	}
	topicIDs(t, adm, "admin-a")

	// Grow to 5 partitions; shrinking is refused.
	cp, err := adm.CreatePartitions(ctx, 2, "admin-a")
	if err != nil || cp["admin-a"].Err != nil {
		t.Fatalf("create partitions: %v %v", err, cp["admin-a"].Err)
	}
	set, err := adm.UpdatePartitions(ctx, 4, "admin-a")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(set["admin-a"].Err, kerr.InvalidPartitions) {
		t.Errorf("shrink: %v", set["admin-a"].Err)
	}
	if n := len(freshTopic(t, b, "admin-a").Partitions); n != 5 {
		t.Fatalf("after grow: %d partitions", n)
	}
	// The new partitions take records.
	cl := newClient(t, b, kgo.DefaultProduceTopic("admin-a"))
	produceSync(t, cl, &kgo.Record{Partition: 4, Value: []byte("p4")})

	// Configs: the override shows as a dynamic topic config.
	rc, err := adm.DescribeTopicConfigs(ctx, "admin-a")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rc.On("admin-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, kv := range c.Configs {
		if kv.Key == "retention.ms" {
			found = true
			if kv.MaybeValue() != "3600000" || kv.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("retention.ms = %q source %v", kv.MaybeValue(), kv.Source)
			}
		}
	}
	if !found || len(c.Configs) < 20 {
		t.Errorf("describe configs: %d configs, retention.ms found %v", len(c.Configs), found)
	}
	alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: strp("1048576")}, {Op: kadm.DeleteConfig, Name: "retention.ms"}}, "admin-a")
	if err != nil || alter[0].Err != nil {
		t.Fatalf("alter configs: %v %v", err, alter)
	}
	bad, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: strp("-5")}}, "admin-a")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(bad[0].Err, kerr.InvalidConfig) {
		t.Errorf("invalid segment.bytes: %v", bad[0].Err)
	}
	rc, _ = adm.DescribeTopicConfigs(ctx, "admin-a")
	c, _ = rc.On("admin-a", nil)
	for _, kv := range c.Configs {
		switch kv.Key {
		case "segment.bytes":
			if kv.MaybeValue() != "1048576" {
				t.Errorf("segment.bytes = %q after alter", kv.MaybeValue())
			}
		case "retention.ms":
			if kv.Source == kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("retention.ms still a topic override after delete")
			}
		}
	}

	// Delete; the topic disappears and its name can be reused with a new id.
	oldID := topicIDs(t, adm, "admin-a")
	del, err := adm.DeleteTopics(ctx, "admin-a")
	if err != nil || del["admin-a"].Err != nil {
		t.Fatalf("delete: %v %v", err, del["admin-a"].Err)
	}
	if code := freshTopic(t, b, "admin-a").ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("deleted topic described with error code %d", code)
	}
	mustCreateTopic(t, adm, "admin-a", 1, nil)
	if freshTopic(t, b, "admin-a").TopicID == oldID {
		t.Error("recreated topic kept the old id")
	}
	end, _ := adm.ListEndOffsets(ctx, "admin-a")
	if lo, _ := end.Lookup("admin-a", 0); lo.Offset != 0 {
		t.Errorf("recreated topic has data: end offset %d", lo.Offset)
	}
}

func TestClusterAndLogAdmin(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	ctx := testCtx(t)
	mustCreateTopic(t, adm, "logs", 1, nil)
	cl := newClient(t, b, kgo.DefaultProduceTopic("logs"))
	for i := 0; i < 5; i++ {
		produceSync(t, cl, &kgo.Record{Value: []byte{byte(i)}})
	}

	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if dc.ErrorCode != 0 || dc.ClusterID == "" || len(dc.Brokers) != 1 || dc.ControllerID != b.Config.NodeID {
		t.Errorf("describe cluster: %+v", dc)
	}

	// DeleteRecords moves the log start offset.
	drs, err := adm.DeleteRecords(ctx, kadm.Offsets{"logs": {0: {Topic: "logs", Partition: 0, At: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	dr, _ := drs.Lookup("logs", 0)
	if dr.Err != nil || dr.LowWatermark != 3 {
		t.Fatalf("delete records: %+v", dr)
	}
	start, _ := adm.ListStartOffsets(ctx, "logs")
	if lo, _ := start.Lookup("logs", 0); lo.Offset != 3 {
		t.Errorf("start offset after delete records: %d", lo.Offset)
	}
	drs, _ = adm.DeleteRecords(ctx, kadm.Offsets{"logs": {0: {Topic: "logs", Partition: 0, At: 99}}})
	if dr, _ := drs.Lookup("logs", 0); !errors.Is(dr.Err, kerr.OffsetOutOfRange) {
		t.Errorf("delete records beyond the end: %v", dr.Err)
	}

	// OffsetForLeaderEpoch: epoch 0 ends at the log end.
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "logs"
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.CurrentLeaderEpoch = -1
	rp.LeaderEpoch = 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LeaderEpoch != 0 || p.EndOffset != 5 {
		t.Errorf("offset for leader epoch: %+v", p)
	}

	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var size int64 = -1
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == "logs" {
				size = p.Size
			}
		})
	})
	if size <= 0 {
		t.Errorf("log dir size of logs-0: %d", size)
	}
}

func TestApiVersions(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	cl := newClient(t, b)
	ctx := testCtx(t)
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "sharq-test", "1.0"
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("v%d: error %d", v, resp.ErrorCode)
		}
		keys := map[int16]kmsg.ApiVersionsResponseApiKey{}
		for _, k := range resp.ApiKeys {
			keys[k.ApiKey] = k
		}
		for _, want := range []struct{ key, min, max int16 }{{0, 0, 13}, {1, 4, 18}, {3, 0, 13}, {18, 0, 5}} {
			k, ok := keys[want.key]
			if !ok || k.MinVersion != want.min || k.MaxVersion != want.max {
				t.Errorf("v%d: key %d = %+v, want %d-%d", v, want.key, k, want.min, want.max)
			}
		}
		if v >= 3 {
			found := false
			for _, f := range resp.FinalizedFeatures {
				if f.Name == "metadata.version" && f.MaxVersionLevel > 0 {
					found = true
				}
			}
			if !found {
				t.Errorf("v%d: metadata.version not finalized: %+v", v, resp.FinalizedFeatures)
			}
		}
	}
}

// freshTopic describes a topic with a direct Metadata request (kadm answers
// from the client's metadata cache).
func freshTopic(t testing.TB, b *brokertest.Broker, topic string) kmsg.MetadataResponseTopic {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t), newClient(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0]
}

func TestMetricsAndHealth(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "metered", 1, nil)
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic("metered")), &kgo.Record{Value: []byte("x")})
	// A share group whose partition starts at 0: one record of lag.
	if _, err := adm.AlterShareGroupOffsets(testCtx(t), "metered-sg", kadm.Offsets{"metered": {0: {Topic: "metered", Partition: 0, At: 0}}}); err != nil {
		t.Fatal(err)
	}
	base := "http://" + b.Server.AdminAddr()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz: %d", code)
	}
	code, body := get("/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`sharq_requests_total{api="Produce"} 1`,
		`sharq_partition_log_end_offset{partition="0",topic="metered"} 1`,
		`sharq_request_duration_seconds_bucket{api="Metadata"`,
		"sharq_connections ",
		`sharq_share_partition_lag{group="metered-sg",partition="0",topic="metered"} 1`,
		`sharq_share_partition_start_offset{group="metered-sg",partition="0",topic="metered"} 0`,
		`sharq_share_group_members{group="metered-sg"} 0`,
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	checkExposition(t, body)
}

func TestDescribeTopicPartitionsAndConfigResources(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	ctx := testCtx(t)
	mustCreateTopic(t, adm, "dtp-a", 3, nil)
	mustCreateTopic(t, adm, "dtp-b", 2, nil)
	cl := newClient(t, b)
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 4
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			got = append(got, fmt.Sprintf("%s-%d", *tp.Topic, p.Partition))
			if p.LeaderID != b.Config.NodeID || p.EligibleLeaderReplicas == nil {
				t.Errorf("%s-%d: %+v", *tp.Topic, p.Partition, p)
			}
		}
	}
	if fmt.Sprint(got) != "[dtp-a-0 dtp-a-1 dtp-a-2 dtp-b-0]" || resp.NextCursor == nil || resp.NextCursor.Topic != "dtp-b" || resp.NextCursor.Partition != 1 {
		t.Fatalf("first page %v, cursor %+v", got, resp.NextCursor)
	}
	req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-b", Partition: 1}
	resp, err = req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.NextCursor != nil {
		t.Fatalf("second page: %+v %v", resp, err)
	}
	lr := kmsg.NewPtrListConfigResourcesRequest()
	lr.ResourceTypes = []int8{2}
	lresp, err := lr.RequestWith(ctx, cl)
	if err != nil || lresp.ErrorCode != 0 || len(lresp.ConfigResources) != 2 || lresp.ConfigResources[0].Name != "dtp-a" {
		t.Fatalf("list config resources: %+v %v", lresp, err)
	}
	lr.ResourceTypes = []int8{99}
	if lresp, _ = lr.RequestWith(ctx, cl); lresp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("unknown resource type: error %d", lresp.ErrorCode)
	}
}
