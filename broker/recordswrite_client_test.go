package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
)

// Fetch and ShareFetch answers carrying tens of KB of records are written
// with writev (broker/recordswrite.go). franz-go must read every record
// back intact through both, from batches far over that threshold.
func TestLargeRecordsThroughFetchAndShareFetch(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "large"
	mustCreateTopic(t, adm, topic, 2, nil)
	rng := rand.New(rand.NewSource(7))
	want := map[string][]byte{}
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for batch := 0; batch < 3; batch++ {
		var recs []*kgo.Record
		for i := 0; i < 40; i++ {
			v := make([]byte, 4096)
			rng.Read(v)
			k := fmt.Sprintf("%d-%d", batch, i)
			want[k] = v
			recs = append(recs, &kgo.Record{Key: []byte(k), Value: v})
		}
		produceSync(t, producer, recs...) // ~80 KB per partition per call
	}

	check := func(what string, got map[string][]byte) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%s: record %s differs from what was produced", what, k)
			}
		}
	}
	ctx := testCtx(t)

	consumer := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string][]byte{}
	for len(got) < len(want) && ctx.Err() == nil {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r.Value })
	}
	check("Fetch", got)

	const group = "large-readers"
	setShareGroupEarliest(t, b, group)
	share := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
	got = map[string][]byte{}
	for len(got) < len(want) && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := share.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			got[string(r.Key)] = r.Value
			r.Ack(kgo.AckAccept)
		})
	}
	check("ShareFetch", got)
}

func setShareGroupEarliest(t *testing.T, b *brokertest.Broker, group string) {
	t.Helper()
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
}

// setGroupConfig sets one group config with IncrementalAlterConfigs.
func setGroupConfig(t *testing.T, b *brokertest.Broker, group, name, value string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name = name
	c.Value = &value
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(testCtx(t), newClient(t, b))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("set %s of group %s: %v", name, group, err)
		}
	}
}
