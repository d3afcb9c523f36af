package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
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
