package broker_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/share"
)

// BenchmarkE2E produces b.N 100-byte records with a franz-go producer to an
// in-process broker (3 partitions, acks=all, idempotent) and reads them back
// with a franz-go consumer; it reports records/s for each half.
func BenchmarkE2E(b *testing.B) {
	br := brokertest.New(b)
	mustCreateTopic(b, newAdmin(b, br), "e2e", 3, nil)
	producer := newClient(b, br, kgo.DefaultProduceTopic("e2e"), kgo.ProducerLinger(time.Millisecond))
	value := make([]byte, 100)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()

	start := time.Now()
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		producer.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	produceSecs := time.Since(start).Seconds()

	start = time.Now()
	consumeN(b, br, "e2e", 3, b.N)
	consumeSecs := time.Since(start).Seconds()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/produceSecs, "produced-records/s")
	b.ReportMetric(float64(b.N)/consumeSecs, "consumed-records/s")
}

// BenchmarkShareConsume reads b.N records (100 bytes, 2 partitions) with 1,
// 3 and 10 franz-go share consumers accepting everything, and reports
// records/s.
func BenchmarkShareConsume(b *testing.B) {
	for _, consumers := range []int{1, 3, 10} {
		b.Run(fmt.Sprintf("consumers=%d", consumers), func(b *testing.B) {
			br := brokertest.New(b)
			adm := newAdmin(b, br)
			mustCreateTopic(b, adm, "shared", 2, nil)
			producer := newClient(b, br, kgo.DefaultProduceTopic("shared"), kgo.ProducerLinger(time.Millisecond))
			value := make([]byte, 100)
			var wg sync.WaitGroup
			for i := 0; i < b.N; i++ {
				wg.Add(1)
				producer.Produce(context.Background(), &kgo.Record{Value: value}, func(*kgo.Record, error) { wg.Done() })
			}
			wg.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			offsets := kadm.Offsets{"shared": {0: {Topic: "shared", Partition: 0, At: 0}, 1: {Topic: "shared", Partition: 1, At: 0}}}
			if _, err := adm.AlterShareGroupOffsets(ctx, "bench", offsets); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var got atomic.Int64
			var cwg sync.WaitGroup
			for c := 0; c < consumers; c++ {
				cl := newClient(b, br, kgo.ShareGroup("bench"), kgo.ConsumeTopics("shared"), kgo.FetchMaxWait(100*time.Millisecond))
				cwg.Add(1)
				go func() {
					defer cwg.Done()
					for got.Load() < int64(b.N) && ctx.Err() == nil {
						pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
						fs := cl.PollFetches(pctx)
						pcancel()
						n := 0
						fs.EachRecord(func(r *kgo.Record) {
							cl.MarkAcks(kgo.AckAccept, r)
							n++
						})
						got.Add(int64(n))
					}
				}()
			}
			cwg.Wait()
			b.StopTimer()
			if got.Load() < int64(b.N) {
				b.Fatalf("consumed %d of %d", got.Load(), b.N)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
	}
}

// BenchmarkSharePoll100 is the bench harness's per-request row in process:
// 3 franz-go share consumers on 2 partitions written in 16 KB batches, each
// polling at most 100 records and flushing its acks every time, so every
// 100 records cost a ShareFetch and a ShareAcknowledge.
func BenchmarkSharePoll100(b *testing.B) {
	for _, fair := range []string{"true", "false"} {
		b.Run("fair="+fair, func(b *testing.B) { benchSharePoll100(b, fair) })
	}
}

func benchSharePoll100(b *testing.B, fair string) {
	br := brokertest.New(b)
	adm := newAdmin(b, br)
	mustCreateTopic(b, adm, "shared", 2, nil)
	producer := newClient(b, br, kgo.DefaultProduceTopic("shared"), kgo.ProducerLinger(time.Millisecond),
		kgo.ProducerBatchMaxBytes(16384), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	value := make([]byte, 100)
	var wg sync.WaitGroup
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		producer.Produce(context.Background(), &kgo.Record{Value: value}, func(*kgo.Record, error) { wg.Done() })
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	offsets := kadm.Offsets{"shared": {0: {Topic: "shared", Partition: 0, At: 0}, 1: {Topic: "shared", Partition: 1, At: 0}}}
	if _, err := adm.AlterShareGroupOffsets(ctx, "bench", offsets); err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "bench"
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = share.FairAcquisitionKey, &fair
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	if resp, err := req.RequestWith(ctx, newClient(b, br)); err != nil || resp.Resources[0].ErrorCode != 0 {
		b.Fatalf("set %s: %v %+v", share.FairAcquisitionKey, err, resp)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var got atomic.Int64
	var cwg sync.WaitGroup
	for c := 0; c < 3; c++ {
		cl := newClient(b, br, kgo.ShareGroup("bench"), kgo.ConsumeTopics("shared"), kgo.FetchMaxWait(100*time.Millisecond))
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for got.Load() < int64(b.N) && ctx.Err() == nil {
				pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
				fs := cl.PollRecords(pctx, 100)
				pcancel()
				n := 0
				fs.EachRecord(func(r *kgo.Record) {
					r.Ack(kgo.AckAccept)
					n++
				})
				got.Add(int64(n))
				if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
					b.Error(err)
				}
			}
		}()
	}
	cwg.Wait()
	b.StopTimer()
	if got.Load() < int64(b.N) {
		b.Fatalf("consumed %d of %d", got.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}
