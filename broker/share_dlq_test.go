package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
	"sharq/config"
)

// dlqHeaders renders a record's headers as "k=v" in order.
func dlqHeaders(r *kgo.Record) string {
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, h.Key+"="+string(h.Value))
	}
	return strings.Join(hs, " ")
}

// TestShareDLQReject: a franz-go share consumer REJECTs a record; the
// group's dead-letter topic then holds one record with Kafka 4.4's headers
// in Kafka's order, the key and value copied (copy enabled; the original
// headers are not, as in Kafka), a CreateTime timestamp of the write, in
// partition source % DLQ partitions (2 % 2 = 0). The record never comes
// back, and the SPSO passes it once its write settled.
func TestShareDLQReject(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	adm := newAdmin(t, b)
	const topic, group, dlq = "orders", "dlq-reject", "dlq.orders"
	mustCreateTopic(t, adm, topic, 3, nil)
	mustCreateTopic(t, adm, dlq, 2, map[string]*string{"errors.deadletterqueue.group.enable": strp("true")})
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "errors.deadletterqueue.topic.name", dlq)
	setGroupConfig(t, b, group, "errors.deadletterqueue.copy.record.enable", "true")

	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, producer,
		&kgo.Record{Partition: 2, Key: []byte("k1"), Value: []byte("bad"), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}},
		&kgo.Record{Partition: 2, Key: []byte("k2"), Value: []byte("good")})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	before := time.Now().Add(-time.Second).UnixMilli()
	seen := 0
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		seen++
		if string(r.Value) == "bad" {
			cl.MarkAcks(kgo.AckReject, r)
		} else {
			cl.MarkAcks(kgo.AckAccept, r)
		}
		return seen == 2
	})
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatalf("flush acks: %v", err)
	}
	recs := consumeN(t, b, dlq, 2, 1)
	r := recs[0]
	want := "__dlq.errors.topic=orders __dlq.errors.partition=2 __dlq.errors.offset=0 __dlq.errors.group=dlq-reject " +
		"__dlq.errors.delivery.count=1 __dlq.errors.message=Offset rejected by client."
	if got := dlqHeaders(r); got != want {
		t.Errorf("DLQ headers\n got %s\nwant %s", got, want)
	}
	if r.Partition != 0 || string(r.Key) != "k1" || string(r.Value) != "bad" {
		t.Errorf("DLQ record partition %d key %q value %q, want 0 k1 bad", r.Partition, r.Key, r.Value)
	}
	if ts := r.Timestamp.UnixMilli(); ts < before || ts > time.Now().UnixMilli() || r.Attrs.TimestampType() != 0 {
		t.Errorf("DLQ record timestamp %d (type %d), want CreateTime of the write after %d", ts, r.Attrs.TimestampType(), before)
	}
	// The SPSO passes the record once its write settled (Archiving ->
	// Archived): both records are done.
	waitSPSO(t, ctx, b, group, topic, 2, 2)
	page := scrapeMetrics(t, b)
	labels := `{group="` + group + `",topic="` + topic + `"}`
	for series, want := range map[string]float64{
		"sharq_share_dlq_records_total" + labels:  1,
		"sharq_share_dlq_failures_total" + labels: 0,
		"sharq_share_partition_archiving_records" + `{group="` + group + `",partition="2",topic="` + topic + `"}`: 0,
	} {
		if got, ok := metricValue(page, series); !ok || got != want {
			t.Errorf("%s = %v (found %v), want %v", series, got, ok, want)
		}
	}
}

// TestShareDLQReleaseToLimit: a record released on its last permitted
// delivery (share.delivery.count.limit=2) is dead-lettered with
// "Offset delivery count exceeded the threshold." and its delivery count;
// with copy off the DLQ record has no key or value; the DLQ topic is
// auto-created (errors.deadletterqueue.auto.create.topics.enable) with
// errors.deadletterqueue.group.enable=true.
func TestShareDLQReleaseToLimit(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.ErrorsDLQAutoCreateTopicsEnable = true }))
	adm := newAdmin(t, b)
	const topic, group, dlq = "jobs", "dlq-limit", "dlq.jobs"
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "share.delivery.count.limit", "2")
	setGroupConfig(t, b, group, "errors.deadletterqueue.topic.name", dlq)
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	produceSync(t, producer, &kgo.Record{Key: []byte("k"), Value: []byte("poison")})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	deliveries := 0
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		deliveries++
		cl.MarkAcks(kgo.AckRelease, r)
		return deliveries == 2
	})
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatalf("flush acks: %v", err)
	}
	recs := consumeN(t, b, dlq, 1, 1)
	r := recs[0]
	want := "__dlq.errors.topic=jobs __dlq.errors.partition=0 __dlq.errors.offset=0 __dlq.errors.group=dlq-limit " +
		"__dlq.errors.delivery.count=2 __dlq.errors.message=Offset delivery count exceeded the threshold."
	if got := dlqHeaders(r); got != want {
		t.Errorf("DLQ headers\n got %s\nwant %s", got, want)
	}
	if r.Key != nil || r.Value != nil {
		t.Errorf("copy off: DLQ record key %q value %q, want null", r.Key, r.Value)
	}
	cfgs, err := adm.DescribeTopicConfigs(testCtx(t), dlq)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range cfgs {
		for _, c := range rc.Configs {
			if c.Key == "errors.deadletterqueue.group.enable" && (c.Value == nil || *c.Value != "true") {
				t.Errorf("auto-created DLQ topic: %s = %v, want true", c.Key, c.Value)
			}
		}
	}
	waitSPSO(t, ctx, b, group, topic, 0, 1)
}

// waitSPSO waits until the live SPSO of a partition is want
// (DescribeShareGroupOffsets shows the persisted one, which lags it by a
// write, as on Kafka).
func waitSPSO(t *testing.T, ctx context.Context, b *brokertest.Broker, group, topic string, partition int32, want int64) {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		if o, ok := b.Server.ShareStartOffset(group, topic, partition); ok {
			last = fmt.Sprint(o)
			if o == want {
				return
			}
		}
		waitALittle(ctx)
	}
	t.Fatalf("SPSO of %s %s-%d never reached %d (last %s)", group, topic, partition, want, last)
}
