package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestShareRedeliveryBackoff: with sharq.share.redelivery.backoff.ms a
// record released by a franz-go share consumer comes back only after the
// backoff (200 ms, then 400 ms), while a record produced behind it is
// delivered at once.
func TestShareRedeliveryBackoff(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	adm := newAdmin(t, b)
	const topic, group = "retry", "backoff"
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "share.delivery.count.limit", "3")
	setGroupConfig(t, b, group, "sharq.share.redelivery.backoff.ms", "200")
	setGroupConfig(t, b, group, "sharq.share.redelivery.backoff.multiplier", "2")
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	produceSync(t, producer, &kgo.Record{Value: []byte("poison")})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	var at []time.Time
	otherAt := time.Time{}
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		switch string(r.Value) {
		case "poison":
			at = append(at, time.Now())
			cl.MarkAcks(kgo.AckRelease, r)
			if len(at) == 1 {
				if err := cl.FlushAcks(ctx); err != nil {
					t.Errorf("flush acks: %v", err)
				}
				produceSync(t, producer, &kgo.Record{Value: []byte("other")})
			}
		default:
			otherAt = time.Now()
			cl.MarkAcks(kgo.AckAccept, r)
		}
		return len(at) == 3
	})
	for i, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} {
		if gap := at[i+1].Sub(at[i]); gap < want {
			t.Errorf("delivery %d came %v after delivery %d, backoff %v", i+2, gap, i+1, want)
		}
	}
	if otherAt.IsZero() || !otherAt.Before(at[1]) {
		t.Errorf("the record behind the waiting one was delivered at %v, the redelivery at %v", otherAt, at[1])
	}
	// Two releases waited (the third, at the limit, archived the record).
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	waitSPSO(t, ctx, b, group, topic, 0, 2)
	page := scrapeMetrics(t, b)
	sl := `{group="` + group + `",partition="0",topic="` + topic + `"}`
	for series, want := range map[string]float64{"sharq_share_partition_backoffs_total" + sl: 2, "sharq_share_partition_backoff_records" + sl: 0} {
		if got, ok := metricValue(page, series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
}

// TestShareKeyOrdered: with sharq.share.key.ordered.enable three franz-go
// share consumers on one partition never process two records of one key at
// once, and each key's records arrive in produce order, also when a record
// is released and redelivered: every delivery of key k is k's lowest
// record not accepted yet.
func TestShareKeyOrdered(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, group = "orders", "keyed"
	const keys, perKey = 6, 30
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "sharq.share.key.ordered.enable", "true")
	// Multi-key batches, compressed: keys are read from the records.
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(20*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < perKey; i++ {
		for k := 0; k < keys; k++ {
			producer.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint("k", k)), Value: []byte(fmt.Sprint(i))}, nil)
		}
	}
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	next := map[string]int{}      // per key: the lowest value not accepted yet
	busy := map[string]string{}   // per key: the consumer processing it
	released := map[string]bool{} // key/value released once already
	accepted := 0
	var failures []string
	fail := func(format string, args ...any) {
		if len(failures) < 5 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	var wg sync.WaitGroup
	for c := 0; c < 3; c++ {
		name := fmt.Sprint("c", c)
		cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(50*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				done := accepted == keys*perKey
				mu.Unlock()
				if done {
					cl.FlushAcks(ctx)
					return
				}
				pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
				fs := cl.PollFetches(pctx)
				pcancel()
				fs.EachRecord(func(r *kgo.Record) {
					k, v := string(r.Key), string(r.Value)
					mu.Lock()
					if other, ok := busy[k]; ok {
						fail("%s got %s=%s while %s processes key %s", name, k, v, other, k)
					}
					if want := fmt.Sprint(next[k]); v != want {
						fail("%s got %s=%s, want %s=%s (per-key order)", name, k, v, k, want)
					}
					busy[k] = name
					mu.Unlock()
					time.Sleep(time.Millisecond) // processing
					mu.Lock()
					delete(busy, k)
					if id := k + "/" + v; !released[id] && (len(v)%2 == 0) {
						released[id] = true
						mu.Unlock()
						cl.MarkAcks(kgo.AckRelease, r)
						return
					}
					next[k]++
					accepted++
					mu.Unlock()
					cl.MarkAcks(kgo.AckAccept, r)
				})
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if accepted != keys*perKey {
		t.Fatalf("accepted %d of %d records: %v", accepted, keys*perKey, ctx.Err())
	}
}

// TestShareDeliveryCountPersisted: with sharq.share.delivery.count.persist
// a record a franz-go consumer held when the broker went down comes back
// with the next delivery count, not the same one (Kafka's), and at the
// limit it is not delivered again.
func TestShareDeliveryCountPersisted(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, group = "held", "persisted"
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "share.delivery.count.limit", "2")
	setGroupConfig(t, b, group, "sharq.share.delivery.count.persist", "true")
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	produceSync(t, producer, &kgo.Record{Value: []byte("held")})
	producer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for attempt := int32(1); attempt <= 2; attempt++ {
		cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
		var count int32
		shareConsume(t, ctx, cl, func(r *kgo.Record) bool { count = r.DeliveryCount(); return true })
		if count != attempt {
			t.Fatalf("delivery %d came with count %d", attempt, count)
		}
		cl.Close()
		b.Restart()
	}
	producer = newClient(t, b, kgo.DefaultProduceTopic(topic))
	produceSync(t, producer, &kgo.Record{Value: []byte("marker")})
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		if string(r.Value) == "held" {
			t.Errorf("held record delivered a 3rd time (count %d), limit 2", r.DeliveryCount())
		}
		cl.MarkAcks(kgo.AckAccept, r)
		return string(r.Value) == "marker"
	})
}
