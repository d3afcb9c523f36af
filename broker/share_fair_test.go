package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker"
	"sharq/broker/brokertest"
	"sharq/share"
)

// TestShareFairAcquisition: four franz-go share consumers of one partition,
// all parked on it, then one log batch of 400 records. Each consumer, once
// it has records, holds them without polling again (franz-go accepts the
// records of a poll at the next one) until the broker has handed out every
// record, as a slow consumer does, so the broker alone decides the split.
// With fair acquisition (the default) every consumer gets a quarter,
// ranges inside the one batch; with sharq.share.fair.acquisition.enable=false
// the first member takes the whole batch, as Kafka's batch-optimised
// acquisition does. Either way every record is delivered once and none
// twice while it is locked.
func TestShareFairAcquisition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fair string // group config value, "" to leave the default
	}{
		{"default", ""},
		{"off", "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n, consumers = 400, 4
			if tc.fair == "false" {
				by := runFairGroup(t, tc.fair, consumers, n)
				most := 0
				for _, c := range by {
					most = max(most, c)
				}
				if most != n {
					t.Fatalf("without fair acquisition one member should take the batch: by consumer %v", by)
				}
				return
			}
			// Every consumer fetched before the records existed, so
			// each counts: the split is exact, however slow the
			// machine.
			by := runFairGroup(t, tc.fair, consumers, n)
			for _, c := range by {
				if c != n/consumers {
					t.Fatalf("no fair split of %d records over %d consumers: by consumer %v", n, consumers, by)
				}
			}
		})
	}
}

// runFairGroup runs consumers share consumers on a new one-partition
// topic, waits until all of them are parked on the share-partition,
// produces n records in one batch and returns how many each consumer got.
func runFairGroup(t *testing.T, fair string, consumers, n int) []int {
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	topic, group := "fair-"+t.Name()[len("TestShareFairAcquisition/"):], "fair-group"
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	if fair != "" {
		setGroupConfig(t, b, group, share.FairAcquisitionKey, fair)
	}
	id := topicIDs(t, adm, topic)
	key := share.Key{Group: group, TopicID: id, Partition: 0}
	mgr := broker.ShareManager(b.Server)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu        sync.Mutex
		owner     = map[int64]int{} // offset -> consumer that got it
		by        = make([]int, consumers)
		dups      []string
		delivered int
	)
	all := make(chan struct{})       // every record polled by a consumer
	handedOut := make(chan struct{}) // every record acquired at the broker
	var wg sync.WaitGroup
	for i := 0; i < consumers; i++ {
		cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(time.Second))
		wg.Add(1)
		go func() {
			defer wg.Done()
			held := false
			for ctx.Err() == nil {
				if held {
					// A slow consumer busy with its records: no poll
					// (which would accept them) until the broker has
					// handed out everything.
					select {
					case <-handedOut:
					case <-ctx.Done():
						return
					}
				}
				pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
				fs := cl.PollFetches(pctx)
				pcancel()
				fs.EachRecord(func(r *kgo.Record) {
					held = true
					mu.Lock()
					if o, ok := owner[r.Offset]; ok {
						dups = append(dups, fmt.Sprintf("offset %d to consumer %d, held by %d", r.Offset, i, o))
					} else {
						owner[r.Offset] = i
						by[i]++
						delivered++
						if delivered == n {
							close(all)
						}
					}
					mu.Unlock()
				})
				select {
				case <-all:
					// Everything is out: the work is done, acknowledge.
					cl.MarkAcks(kgo.AckAccept)
					if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
						t.Errorf("consumer %d: flush acks: %v", i, err)
					}
					return
				default:
				}
			}
		}()
	}
	t0 := time.Now()
	// Every consumer's ShareFetch is parked on the share-partition before
	// the records exist.
	for mgr.Parked(key) < consumers {
		if ctx.Err() != nil {
			t.Fatalf("only %d of %d consumers parked", mgr.Parked(key), consumers)
		}
		waitALittle(ctx)
	}
	t.Logf("parked after %v", time.Since(t0))
	// One v2 batch in one Produce request (a client producer may send
	// the first records before the rest while it learns the topic).
	cl := newClient(t, b)
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batchWithCodec(0, int32(n), plainRecords(n))
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("produce: error %d", code)
	}
	// Handed out: every record acquired, or polled already (then the
	// consumer that polled the last one may have acknowledged its own).
	for mgr.Held(key) < int64(n) {
		select {
		case <-all:
		case <-ctx.Done():
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%d of %d records acquired (polled by consumer %v)", mgr.Held(key), n, by)
		default:
			waitALittle(ctx)
			continue
		}
		break
	}
	close(handedOut)
	select {
	case <-all:
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d of %d records delivered (by consumer %v)", delivered, n, by)
	}
	t.Logf("delivered after %v", time.Since(t0))
	wg.Wait()
	t.Logf("acked after %v", time.Since(t0))
	mu.Lock()
	defer mu.Unlock()
	if len(dups) > 0 {
		t.Fatalf("delivered twice while locked: %v", dups)
	}
	for off := int64(0); off < int64(n); off++ {
		if _, ok := owner[off]; !ok {
			t.Fatalf("offset %d never delivered", off)
		}
	}
	t.Logf("by consumer %v", by)
	return by
}
