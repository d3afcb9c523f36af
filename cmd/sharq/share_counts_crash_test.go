package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareKill9DeliveryCountPersisted: with the group config
// sharq.share.delivery.count.persist=true a record that "crashes" the
// broker each time it is delivered (sharq is killed with SIGKILL while a
// consumer holds it) is delivered at most share.delivery.count.limit (2)
// times: after the second kill it is archived, where Kafka would deliver it
// again with the count it had before.
func TestShareKill9DeliveryCountPersisted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const topic, group = "poison", "counted"

	p := startSharq(t, dir)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for k, v := range map[string]string{"share.delivery.count.limit": "2", "sharq.share.delivery.count.persist": "true", "share.auto.offset.reset": "earliest"} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		t.Fatalf("group configs: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("poison")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	// Two deliveries, each ended by kill -9 while the consumer holds it.
	for attempt := int32(1); attempt <= 2; attempt++ {
		if attempt > 1 {
			p = startSharq(t, dir)
		}
		consumer, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		var got *kgo.Record
		for got == nil && ctx.Err() == nil {
			consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = r })
		}
		if got == nil || string(got.Value) != "poison" || got.DeliveryCount() != attempt {
			t.Fatalf("attempt %d: got %+v", attempt, got)
		}
		// The acquisition was durable before the record was returned.
		p.cmd.Process.Kill()
		<-p.exited
		consumer.Close()
	}

	p = startSharq(t, dir)
	cl, err = kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("marker")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for done := false; !done && ctx.Err() == nil; {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "poison" {
				t.Errorf("poison record delivered a 3rd time (count %d) with the limit at 2", r.DeliveryCount())
			}
			consumer.MarkAcks(kgo.AckAccept, r)
			done = done || string(r.Value) == "marker"
		})
	}
	if ctx.Err() != nil {
		t.Fatal("marker never delivered")
	}
}
