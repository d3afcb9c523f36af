package broker_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// TestShareModesCost measures what sharq's opt-in share group modes cost
// against the default (unordered, Kafka's) delivery: 10 franz-go share
// consumers accepting everything on a 2-partition topic whose records carry
// 1,000 distinct keys, at 0 and 1 ms of processing per record. Runs are
// interleaved (each round runs every mode once) and the table gives the
// median and range of records/s and, at 1 ms, the parallel efficiency
// (ideal time records x 1 ms / consumers, over the time taken). It takes a
// minute or more, so it runs only with SHARQ_BENCH_MODES=1 (ROUNDS, RECORDS
// override the defaults 3 and 20000).
func TestShareModesCost(t *testing.T) {
	if os.Getenv("SHARQ_BENCH_MODES") == "" {
		t.Skip("set SHARQ_BENCH_MODES=1 to measure the share modes' cost")
	}
	rounds, records := 3, 20000
	fmt.Sscan(os.Getenv("ROUNDS"), &rounds)
	fmt.Sscan(os.Getenv("RECORDS"), &records)
	const consumers, keys = 10, 1000
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "modes"
	mustCreateTopic(t, adm, topic, 2, nil)
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchMaxBytes(16384), kgo.ProducerLinger(time.Millisecond))
	value := make([]byte, 100)
	var wg sync.WaitGroup
	for i := 0; i < records; i++ {
		wg.Add(1)
		producer.Produce(context.Background(), &kgo.Record{Key: []byte(fmt.Sprintf("key-%04d", i%keys)), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()

	type mode struct {
		name string
		cfg  map[string]string
	}
	modes := []mode{
		{"unordered (default)", nil},
		{"key-ordered", map[string]string{"sharq.share.key.ordered.enable": "true"}},
		{"delivery counts persisted", map[string]string{"sharq.share.delivery.count.persist": "true"}},
	}
	type row struct{ rate, eff []float64 }
	res := map[string]*row{}
	run := 0
	for round := 0; round < rounds; round++ {
		for _, proc := range []time.Duration{0, time.Millisecond} {
			n := records
			if proc > 0 {
				n = min(records, 5000)
			}
			for _, m := range modes {
				run++
				group := fmt.Sprintf("modes-%d", run)
				setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
				for k, v := range m.cfg {
					setGroupConfig(t, b, group, k, v)
				}
				secs := consumeShare(t, b, topic, group, consumers, n, proc)
				key := fmt.Sprintf("%s, %d ms per record", m.name, proc.Milliseconds())
				if res[key] == nil {
					res[key] = &row{}
				}
				r := res[key]
				r.rate = append(r.rate, float64(n)/secs)
				if proc > 0 {
					r.eff = append(r.eff, float64(n)*proc.Seconds()/consumers/secs)
				}
			}
		}
	}
	med := func(v []float64) (float64, float64, float64) {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		return s[len(s)/2], s[0], s[len(s)-1]
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%d consumers, 2 partitions, %d keys, %d rounds interleaved (machine shared, loaded)\n\n", consumers, keys, rounds)
	out.WriteString("| mode | records/s median (range) | vs unordered | efficiency median (range) |\n|---|---|---|---|\n")
	for _, proc := range []time.Duration{0, time.Millisecond} {
		base, _, _ := med(res[fmt.Sprintf("%s, %d ms per record", modes[0].name, proc.Milliseconds())].rate)
		for _, m := range modes {
			key := fmt.Sprintf("%s, %d ms per record", m.name, proc.Milliseconds())
			r := res[key]
			md, lo, hi := med(r.rate)
			eff := "n/a"
			if len(r.eff) > 0 {
				e, elo, ehi := med(r.eff)
				eff = fmt.Sprintf("%.2f (%.2f-%.2f)", e, elo, ehi)
			}
			fmt.Fprintf(&out, "| %s | %.0f (%.0f-%.0f) | %.2fx | %s |\n", key, md, lo, hi, md/base, eff)
		}
	}
	t.Log(out.String())
}

// consumeShare reads n records of topic with consumers franz-go share
// consumers spending proc on each, and returns the seconds from the first
// record received to the last.
func consumeShare(t *testing.T, b *brokertest.Broker, topic, group string, consumers, n int, proc time.Duration) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	offsets := kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}, 1: {Topic: topic, Partition: 1, At: 0}}}
	if _, err := newAdmin(t, b).AlterShareGroupOffsets(ctx, group, offsets); err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	var first atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < consumers; c++ {
		cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for got.Load() < int64(n) && ctx.Err() == nil {
				pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
				fs := cl.PollFetches(pctx)
				pcancel()
				fs.EachRecord(func(r *kgo.Record) {
					first.CompareAndSwap(0, time.Now().UnixNano())
					if proc > 0 {
						time.Sleep(proc)
					}
					cl.MarkAcks(kgo.AckAccept, r)
					got.Add(1)
				})
			}
		}()
	}
	wg.Wait()
	if got.Load() < int64(n) {
		t.Fatalf("%s consumed %d of %d", group, got.Load(), n)
	}
	return float64(time.Now().UnixNano()-first.Load()) / 1e9
}
