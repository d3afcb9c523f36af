package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// Batches larger than the group's record-lock window keep the window full
// while a member works through one, so the other member's fetches (and the
// holder's own fetch-ahead) find nothing to take and skip the log read
// (SharePartition.Full). Two franz-go share consumers must still get every
// record exactly once between them.
func TestShareBatchesLargerThanTheLockWindow(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, group = "over-window", "over-window-readers"
	mustCreateTopic(t, adm, topic, 1, nil)
	setShareGroupEarliest(t, b, group)
	setGroupConfig(t, b, group, "share.partition.max.record.locks", "100")

	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	const batches, perBatch = 6, 300
	for i := 0; i < batches; i++ {
		recs := make([]*kgo.Record, perBatch)
		for j := range recs {
			recs[j] = &kgo.Record{Value: []byte(fmt.Sprintf("%d-%d", i, j))}
		}
		produceSync(t, producer, recs...)
	}
	const total = batches * perBatch

	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		per  [2]int
		wg   sync.WaitGroup
	)
	for i := range per {
		cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				fs.EachRecord(func(r *kgo.Record) {
					r.Ack(kgo.AckAccept)
					mu.Lock()
					seen[string(r.Value)]++
					per[i]++
					if len(seen) == total {
						cancel()
					}
					mu.Unlock()
				})
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != total {
		t.Fatalf("%d distinct records delivered, want %d (per consumer %v)", len(seen), total, per)
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("record %s delivered %d times; every record was accepted within its lock", v, n)
		}
	}
}
