package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The franz-go clients run with franz-go's defaults (acks=all, idempotent,
// its own batching), the same for every broker.

// createTopic creates topic with the given partitions and one replica; an
// existing topic is fine.
func createTopic(ctx context.Context, addr, topic string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopics(ctx, partitions, 1, nil, topic)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for _, t := range resp {
		if t.Err != nil && !errors.Is(t.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", topic, t.Err)
		}
	}
	return nil
}

// setShareEarliest sets share.auto.offset.reset=earliest on group, so that a
// new share group reads the pre-filled topic from its start (the default,
// latest, would see nothing).
func setShareEarliest(ctx context.Context, addr, group string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name = "share.auto.offset.reset"
	c.Op = kmsg.IncrementalAlterConfigOpSet
	v := "earliest"
	c.Value = &v
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("set share.auto.offset.reset of %s: %w", group, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("set share.auto.offset.reset of %s: %w", group, err)
		}
	}
	return nil
}

// payload is random bytes from which values are sliced at varying offsets,
// so values are incompressible and not all alike.
func payload(size int) ([]byte, error) {
	b := make([]byte, size+4096)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("random payload: %w", err)
	}
	return b, nil
}

// produceResult is one franz-go producer run.
type produceResult struct {
	RecordsPerSec float64
	MBPerSec      float64 // 2^20 bytes of values per second
	P50, P99      float64 // ms from Produce to its acknowledgement
	Avg           float64
}

// goProduce sends n records of size bytes to topic as fast as the client
// allows, timing each from Produce to its promise. Extra options tune the
// producer (the share workloads' fill uses Kafka's default batch size).
func goProduce(ctx context.Context, addr, topic string, n, size int, opts ...kgo.Opt) (produceResult, error) {
	pl, err := payload(size)
	if err != nil {
		return produceResult{}, err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks())}, opts...)...)
	if err != nil {
		return produceResult{}, fmt.Errorf("producer client: %w", err)
	}
	defer cl.Close()
	lat := make([]float64, n)
	var (
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	wg.Add(n)
	start := time.Now()
	for i := 0; i < n; i++ {
		off := (i * 61) % 4096
		rec := &kgo.Record{Value: pl[off : off+size]}
		sent := time.Now()
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			lat[i] = float64(time.Since(sent)) / float64(time.Millisecond)
			if err != nil {
				firstErr.CompareAndSwap(nil, &err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if p := firstErr.Load(); p != nil {
		return produceResult{}, fmt.Errorf("produce to %s: %w", topic, *p)
	}
	var sum float64
	for _, l := range lat {
		sum += l
	}
	slices.Sort(lat)
	secs := elapsed.Seconds()
	return produceResult{
		RecordsPerSec: float64(n) / secs,
		MBPerSec:      float64(n) * float64(size) / (1 << 20) / secs,
		P50:           percentile(lat, 50),
		P99:           percentile(lat, 99),
		Avg:           sum / float64(n),
	}, nil
}

// goTxnProduce writes n records of size bytes with a transactional
// producer, perTxn records per transaction (round robin over the
// partitions), committing each; P50/P99 are the commit (EndTransaction)
// latencies in ms, the throughput counts from the first record to the last
// commit.
func goTxnProduce(ctx context.Context, addr, topic string, n, size, perTxn int) (produceResult, error) {
	pl, err := payload(size)
	if err != nil {
		return produceResult{}, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID(fmt.Sprintf("bench-txn-%d", time.Now().UnixNano())),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return produceResult{}, fmt.Errorf("transactional producer client: %w", err)
	}
	defer cl.Close()
	var commits []float64
	var firstErr atomic.Pointer[error]
	start := time.Now()
	for done := 0; done < n; done += perTxn {
		if err := cl.BeginTransaction(); err != nil {
			return produceResult{}, fmt.Errorf("begin transaction: %w", err)
		}
		for i := 0; i < perTxn; i++ {
			off := ((done + i) * 61) % 4096
			cl.Produce(ctx, &kgo.Record{Value: pl[off : off+size]}, func(_ *kgo.Record, err error) {
				if err != nil {
					firstErr.CompareAndSwap(nil, &err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			return produceResult{}, fmt.Errorf("flush transaction: %w", err)
		}
		if p := firstErr.Load(); p != nil {
			return produceResult{}, fmt.Errorf("produce to %s: %w", topic, *p)
		}
		t0 := time.Now()
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return produceResult{}, fmt.Errorf("commit transaction: %w", err)
		}
		commits = append(commits, float64(time.Since(t0))/float64(time.Millisecond))
	}
	secs := time.Since(start).Seconds()
	var sum float64
	for _, c := range commits {
		sum += c
	}
	slices.Sort(commits)
	return produceResult{
		RecordsPerSec: float64(n) / secs,
		MBPerSec:      float64(n) * float64(size) / (1 << 20) / secs,
		P50:           percentile(commits, 50),
		P99:           percentile(commits, 99),
		Avg:           sum / float64(len(commits)),
	}, nil
}

// goConsume reads n records of topic from its start without a group
// (partitions assigned directly), timed from client creation.
func goConsume(ctx context.Context, addr, topic string, n int, opts ...kgo.Opt) (recPerSec, mbPerSec float64, err error) {
	r, err := goConsumeTimed(ctx, addr, topic, n, opts...)
	return r.rate, r.mbPerSec, err
}

// consumeResult is what goConsumeTimed measured.
type consumeResult struct {
	rate, mbPerSec float64
	// fetchWaitMs is the time the client spent waiting for Fetch
	// responses, from each request written to its response read whole:
	// the broker's share of the run. The rest is the client's own work
	// (decoding, decompressing) while no fetch is outstanding: franz-go
	// sends a broker's next Fetch only once the previous one was polled.
	fetchWaitMs float64
}

// fetchWait sums franz-go's Fetch round trips (kgo.HookBrokerE2E).
type fetchWait struct{ nanos atomic.Int64 }

func (h *fetchWait) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key == 1 && e.ReadErr == nil {
		h.nanos.Add(int64(e.ReadWait + e.TimeToRead))
	}
}

// goConsumeTimed is goConsume that also times the Fetch round trips.
func goConsumeTimed(ctx context.Context, addr, topic string, n int, opts ...kgo.Opt) (consumeResult, error) {
	hook := &fetchWait{}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.WithHooks(hook),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		return consumeResult{}, fmt.Errorf("consumer client: %w", err)
	}
	defer cl.Close()
	start := time.Now()
	var count, bytes int64
	for count < int64(n) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return consumeResult{}, fmt.Errorf("consume %s: %d of %d records: %w", topic, count, n, err)
		}
		for _, fe := range fs.Errors() {
			return consumeResult{}, fmt.Errorf("consume %s partition %d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			count++
			bytes += int64(len(r.Key) + len(r.Value))
		})
	}
	secs := time.Since(start).Seconds()
	return consumeResult{
		rate:        float64(count) / secs,
		mbPerSec:    float64(bytes) / (1 << 20) / secs,
		fetchWaitMs: float64(hook.nanos.Load()) / float64(time.Millisecond),
	}, nil
}

// goShareConsume runs consumers share consumers of group on topic until n
// deliveries were accepted; each record costs proc of simulated work. The
// rate counts from the first record delivered to the n-th, so group join
// time is left out (the JVM tool's own figure includes it).
func goShareConsume(ctx context.Context, addr, topic, group string, consumers, n int, proc time.Duration) (float64, error) {
	r, err := goShareRun(ctx, addr, topic, group, shareRun{consumers: consumers, n: n, proc: proc})
	return r.rate, err
}

// shareRun shapes a run of franz-go share consumers (goShareRun).
type shareRun struct {
	consumers, n int
	proc         time.Duration // simulated work per record
	// poll > 0: each consumer polls at most poll records and flushes its
	// acks (FlushAcks) before the next poll.
	poll int
	// started, when set, runs once every consumer polls (e.g. waits until
	// they joined and produces the records); its error ends the run.
	started func(ctx context.Context) error
}

// shareResult is what goShareRun measured.
type shareResult struct {
	rate    float64       // records/s from the first record delivered to the n-th processed
	elapsed time.Duration // that interval
	per     []int64       // records processed by each consumer
	spans   []string      // each consumer's first..last record, from the first record delivered
}

// goShareRun runs share consumers of group on topic until n deliveries
// were accepted (see shareRun).
func goShareRun(ctx context.Context, addr, topic, group string, sr shareRun) (shareResult, error) {
	consumers, n, proc := sr.consumers, sr.n, sr.proc
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		total           atomic.Int64
		firstAt, doneAt atomic.Int64 // unix nanos
		lastErr         atomic.Pointer[error]
		wg              sync.WaitGroup
	)
	clients := make([]*kgo.Client, consumers)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic))
		if err != nil {
			for _, c := range clients[:i] {
				c.Close()
			}
			return shareResult{}, fmt.Errorf("share client: %w", err)
		}
		clients[i] = cl
	}
	per := make([]int64, consumers)
	starts, ends := make([]int64, consumers), make([]int64, consumers) // unix nanos of each consumer's first and last record
	for ci, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// due is when the work of the records so far is done: each
			// record moves it by proc and the consumer sleeps to it, so a
			// sleep's overshoot on a loaded machine is made up by the next
			// records of the poll instead of being charged to the broker.
			var due time.Time
			for ctx.Err() == nil {
				var fs kgo.Fetches
				if sr.poll > 0 {
					fs = cl.PollRecords(ctx, sr.poll)
				} else {
					fs = cl.PollFetches(ctx)
				}
				for _, fe := range fs.Errors() {
					if !errors.Is(fe.Err, context.Canceled) {
						err := fe.Err
						lastErr.Store(&err)
					}
				}
				if now := time.Now(); due.Before(now) {
					due = now // idle until these records came
				}
				fs.EachRecord(func(r *kgo.Record) {
					if proc > 0 {
						due = due.Add(proc)
						time.Sleep(time.Until(due))
					}
					r.Ack(kgo.AckAccept)
					atomic.AddInt64(&per[ci], 1)
					if atomic.LoadInt64(&starts[ci]) == 0 {
						atomic.StoreInt64(&starts[ci], time.Now().UnixNano())
					}
					atomic.StoreInt64(&ends[ci], time.Now().UnixNano())
					k := total.Add(1)
					now := time.Now().UnixNano()
					if k == 1 {
						firstAt.Store(now)
					}
					if k == int64(n) {
						doneAt.Store(now)
						cancel()
					}
				})
				if sr.poll > 0 && ctx.Err() == nil {
					if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
						lastErr.Store(&err)
					}
				}
			}
		}()
	}
	var startErr error
	if sr.started != nil {
		if startErr = sr.started(ctx); startErr != nil {
			cancel()
		}
	}
	wg.Wait()
	for _, cl := range clients {
		cl.Close()
	}
	if startErr != nil {
		return shareResult{}, startErr
	}
	if doneAt.Load() == 0 {
		err := fmt.Errorf("share group %s: %d of %d records", group, total.Load(), n)
		if p := lastErr.Load(); p != nil {
			err = fmt.Errorf("%w (last fetch error: %w)", err, *p)
		}
		return shareResult{}, err
	}
	elapsed := time.Duration(doneAt.Load() - firstAt.Load())
	if elapsed <= 0 {
		elapsed = time.Microsecond
	}
	// The first record starts the clock, so n-1 records fill the interval.
	span := make([]string, consumers)
	for i := range span {
		span[i] = fmt.Sprintf("%v..%v", time.Duration(starts[i]-firstAt.Load()).Round(time.Millisecond), time.Duration(ends[i]-firstAt.Load()).Round(time.Millisecond))
	}
	return shareResult{rate: float64(n-1) / elapsed.Seconds(), elapsed: elapsed, per: per, spans: span}, nil
}

// fillBytes produces records of size bytes to topic until total bytes of
// values are stored, for the start-up and memory with data stored.
// Uncompressed: the values are windows of one random buffer, which snappy
// (franz-go's default) would shrink to a fraction on disk.
// produceEachPartition writes one 100 B record to each of the topic's
// partitions.
func produceEachPartition(ctx context.Context, addr, topic string, parts int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return fmt.Errorf("producer client: %w", err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, parts)
	for i := range recs {
		recs[i] = &kgo.Record{Partition: int32(i), Value: make([]byte, 100)}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

func fillBytes(ctx context.Context, addr, topic string, total int64, size int) error {
	n := int(total / int64(size))
	_, err := goProduce(ctx, addr, topic, n, size, kgo.ProducerBatchCompression(kgo.NoCompression()))
	return err
}
