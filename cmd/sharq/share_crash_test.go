package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// TestShareKill9 kills sharq with SIGKILL while a share consumer holds
// unacknowledged records: after a restart no accepted record is delivered
// again and every unaccepted one is.
func TestShareKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startSharq(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const topic, group, n = "jobs", "crashers", 200

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Start the group at the beginning of the topic.
	if _, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}}); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	consumer, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	accepted := map[string]bool{}
	held := 0
	for held == 0 && ctx.Err() == nil {
		fs := consumer.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < n/2 {
				consumer.MarkAcks(kgo.AckAccept, r)
				accepted[string(r.Value)] = true
			} else {
				held++ // never acknowledged
			}
		})
		if err := consumer.FlushAcks(ctx); err != nil {
			t.Fatalf("flush acks: %v", err)
		}
	}
	// Every accept was answered, so it is durable: kill now.
	p.cmd.Process.Kill()
	<-p.exited
	consumer.Close()
	t.Logf("accepted %d records and held %d when sharq was killed", len(accepted), held)

	b := brokertest.New(t, brokertest.WithDir(dir))
	again, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got := map[string]bool{}
	for len(got)+len(accepted) < n && ctx.Err() == nil {
		fs := again.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if accepted[string(r.Value)] {
				t.Errorf("accepted record %s delivered again after kill -9", r.Value)
			}
			got[string(r.Value)] = true
			again.MarkAcks(kgo.AckAccept, r)
		})
	}
	if len(got)+len(accepted) != n {
		t.Fatalf("after restart: %d delivered + %d accepted before, want %d", len(got), len(accepted), n)
	}
}
