package broker_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// BenchmarkTxnProduce: a franz-go transactional producer writes
// transactions of 1,000 records of 100 bytes over 3 partitions; one op is
// one transaction (produce, flush, commit). It reports records/s and the
// commit (EndTransaction) latency p50/p99. Then a read_committed consumer
// reads everything back (read_committed_rec/s).
func BenchmarkTxnProduce(b *testing.B) {
	br := brokertest.New(b)
	adm := newAdmin(b, br)
	mustCreateTopic(b, adm, "bench-txn", 3, nil)
	p := newClient(b, br, kgo.TransactionalID("bench-txn"), kgo.DefaultProduceTopic("bench-txn"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	ctx := context.Background()
	val := bytes.Repeat([]byte("x"), 100)
	const perTxn = 1000
	commits := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := p.BeginTransaction(); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < perTxn; j++ {
			p.Produce(ctx, &kgo.Record{Value: val}, nil)
		}
		if err := p.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
			b.Fatal(err)
		}
		commits = append(commits, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(commits, func(i, j int) bool { return commits[i] < commits[j] })
	b.ReportMetric(float64(b.N*perTxn)/elapsed.Seconds(), "rec/s")
	b.ReportMetric(float64(commits[len(commits)/2].Microseconds()), "commit_p50_us")
	b.ReportMetric(float64(commits[len(commits)*99/100].Microseconds()), "commit_p99_us")

	c := newClient(b, br, kgo.ConsumeTopics("bench-txn"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n, want := 0, b.N*perTxn
	start = time.Now()
	for n < want && rctx.Err() == nil {
		fs := c.PollFetches(rctx)
		n += fs.NumRecords()
	}
	if n != want {
		b.Fatalf("read_committed read %d of %d records", n, want)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "read_committed_rec/s")
}

// BenchmarkTxnConsume: a topic written as the bench harness writes it (a
// franz-go transactional producer, 1,000-record transactions of 100 random
// bytes over 3 partitions) is read from the start by a new franz-go
// consumer per op, read_committed and read_uncommitted side by side. One
// op reads every record.
func BenchmarkTxnConsume(b *testing.B) {
	br := brokertest.New(b)
	adm := newAdmin(b, br)
	mustCreateTopic(b, adm, "bench-txn-read", 3, nil)
	p := newClient(b, br, kgo.TransactionalID("bench-txn-read"), kgo.DefaultProduceTopic("bench-txn-read"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	ctx := context.Background()
	pl := make([]byte, 100+4096)
	if _, err := rand.Read(pl); err != nil {
		b.Fatal(err)
	}
	const perTxn, txns = 1000, 200
	for i := 0; i < txns; i++ {
		if err := p.BeginTransaction(); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < perTxn; j++ {
			off := ((i*perTxn + j) * 61) % 4096
			p.Produce(ctx, &kgo.Record{Value: pl[off : off+100]}, nil)
		}
		if err := p.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
			b.Fatal(err)
		}
	}
	for _, iso := range []struct {
		name string
		lvl  kgo.IsolationLevel
	}{{"read_committed", kgo.ReadCommitted()}, {"read_uncommitted", kgo.ReadUncommitted()}} {
		b.Run(iso.name, func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				c := newClient(b, br, kgo.ConsumeTopics("bench-txn-read"), kgo.FetchIsolationLevel(iso.lvl),
					kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
				rctx, cancel := context.WithTimeout(ctx, time.Minute)
				n := 0
				for n < perTxn*txns && rctx.Err() == nil {
					n += c.PollFetches(rctx).NumRecords()
				}
				cancel()
				c.Close()
				if n != perTxn*txns {
					b.Fatalf("read %d of %d records", n, perTxn*txns)
				}
			}
			b.ReportMetric(float64(b.N*perTxn*txns)/time.Since(start).Seconds(), "rec/s")
		})
	}
}
