package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestTxnKill9 kills sharq with SIGKILL while a transactional producer
// commits transactions over three partitions: after a restart
// read_committed sees every acknowledged transaction, each transaction all
// or nothing, and the last stable offset reaches the high watermark once
// the transaction open at the crash has timed out and been aborted.
func TestTxnKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startSharq(t, dir, "--override", "transaction.abort.timed.out.transaction.cleanup.interval.ms=100")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const topic, perTxn = "txn-crash", 30

	adminCl, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(adminCl).CreateTopics(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	adminCl.Close()

	prod, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic), kgo.TransactionalID("crash-txn"),
		kgo.TransactionTimeout(2*time.Second), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.RecordRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[int]bool{}
	done := make(chan struct{})
	open := make(chan struct{}) // transaction 10 is flushed but not ended
	go func() {
		defer close(done)
		for k := 0; ctx.Err() == nil; k++ {
			if err := prod.BeginTransaction(); err != nil {
				return
			}
			for i := 0; i < perTxn; i++ {
				prod.Produce(ctx, kgo.StringRecord(fmt.Sprintf("%d-%d", k, i)), nil)
			}
			if err := prod.Flush(ctx); err != nil {
				return
			}
			if k == 10 {
				close(open)
				return
			}
			if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
				return
			}
			mu.Lock()
			acked[k] = true
			mu.Unlock()
		}
	}()
	select {
	case <-open:
	case <-done:
		t.Fatal("the producer stopped before transaction 10")
	}
	p.cmd.Process.Kill()
	<-p.exited
	prod.Close()
	<-done
	mu.Lock()
	t.Logf("%d transactions acknowledged when sharq was killed", len(acked))
	mu.Unlock()

	b := brokertest.New(t, brokertest.WithDir(dir), brokertest.WithConfig(func(c *config.Config) {
		c.TransactionAbortTimedOutIntervalMs = 100
	}))
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The LSO must reach the high watermark on every partition (the open
	// transaction times out after 2 s and is aborted).
	var hw map[int32]int64
	for {
		lso := latest(t, cl, topic, 1)
		hw = latest(t, cl, topic, 0)
		if fmt.Sprint(lso) == fmt.Sprint(hw) {
			t.Logf("LSO %v reached the high watermark", lso)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("LSO %v stuck below the high watermark %v", lso, hw)
		}
		time.Sleep(50 * time.Millisecond) // waiting for the coordinator's abort timer
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	counts := map[int]int{}
	reached := map[int32]bool{}
	for len(reached) < 3 && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			var k, i int
			fmt.Sscanf(string(r.Value), "%d-%d", &k, &i)
			counts[k]++
		})
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			if fp.HighWatermark == hw[fp.Partition] && fp.LastStableOffset == fp.HighWatermark {
				reached[fp.Partition] = true
			}
		})
		for part, end := range hw {
			if end == 0 {
				reached[part] = true
			}
		}
	}
	var partial []string
	for k, n := range counts {
		if n != perTxn {
			partial = append(partial, fmt.Sprintf("txn %d: %d of %d records", k, n, perTxn))
		}
	}
	if len(partial) > 0 {
		t.Errorf("read_committed saw partial transactions: %s", strings.Join(partial, "; "))
	}
	for k := range acked {
		if counts[k] != perTxn {
			t.Errorf("acknowledged transaction %d: %d records after restart", k, counts[k])
		}
	}
}

func latest(t *testing.T, cl *kgo.Client, topic string, isolation int8) map[int32]int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := int32(0); p < 3; p++ {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, p := range resp.Topics[0].Partitions {
		out[p.Partition] = p.Offset
	}
	return out
}
