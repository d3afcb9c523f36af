package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// Clients carried through coordinator and leader moves on virtual brokers:
// each keeps going as it does on a Kafka cluster whose coordinator or
// leader moved, and nothing acknowledged is lost.

// produceValues produces values from..to-1 (as decimal strings) to topic.
func produceValues(t *testing.T, cl *kgo.Client, topic string, from, to int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))})
	}
	produceSync(t, cl, recs...)
}

// seedAll bootstraps a client from every node's address, as a client of a
// Kafka cluster lists several bootstrap servers.
func seedAll(t *testing.T, b *brokertest.Broker) kgo.Opt {
	t.Helper()
	var addrs []string
	for _, ns := range b.Server.Nodes() {
		addrs = append(addrs, strings.TrimPrefix(ns.Listeners[0], "PLAINTEXT://"))
	}
	return kgo.SeedBrokers(addrs...)
}

// otherNode is a node other than n among 1..3.
func otherNode(n int32) int32 { return n%3 + 1 }

// pollUntil polls cl until seen holds want distinct values, calling each
// for every record; it fails the test after a minute.
func pollUntil(t *testing.T, cl *kgo.Client, seen map[string]int, want int, each func(*kgo.Record)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(seen) < want {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d values", len(seen), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			if each != nil {
				each(r)
			}
		})
	}
}

func checkAllSeen(t *testing.T, seen map[string]int, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if seen[fmt.Sprint(i)] == 0 {
			t.Fatalf("value %d never read (of %d)", i, n)
		}
	}
}

func TestVirtualGroupThroughCoordinatorMove(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"classic", nil},
		{"kip848", []kgo.Opt{kgo.ServerSideBalancer()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newVirtual(t, 3)
			adm := newAdmin(t, b)
			topic, group := "gmove-"+c.name, "gm-"+c.name
			mustCreateTopic(t, adm, topic, 3, nil)
			producer := newClient(t, b)
			produceValues(t, producer, topic, 0, 300)
			opts := append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.FetchMaxWait(200 * time.Millisecond), kgo.DisableAutoCommit()}, c.opts...)
			cl := newClient(t, b, opts...)
			seen := map[string]int{}
			commit := func() {
				if err := cl.CommitUncommittedOffsets(testCtx(t)); err != nil {
					t.Fatalf("commit: %v", err)
				}
			}
			pollUntil(t, cl, seen, 150, nil)
			commit()

			from := b.Server.CoordinatorOf("group", group)
			to := otherNode(from)
			if _, err := b.Server.MoveCoordinator(testCtx(t), "group", group, to); err != nil {
				t.Fatal(err)
			}
			if got := b.Server.CoordinatorOf("group", group); got != to {
				t.Fatalf("coordinator %d after moving it from %d to %d", got, from, to)
			}
			produceValues(t, producer, topic, 300, 600)
			pollUntil(t, cl, seen, 600, nil)
			checkAllSeen(t, seen, 600)
			commit()

			// The commits after the move are on the new coordinator, which a
			// fresh admin client finds.
			offs, err := kadm.NewClient(newClient(t, b)).FetchOffsets(testCtx(t), group)
			if err != nil {
				t.Fatal(err)
			}
			total := int64(0)
			offs.Each(func(o kadm.OffsetResponse) { total += o.At })
			if total != 600 {
				t.Fatalf("committed offsets sum to %d, want 600: %+v", total, offs)
			}
		})
	}
}

func TestVirtualTransactionsThroughCoordinatorMove(t *testing.T) {
	t.Parallel()
	b := newVirtual(t, 3)
	adm := newAdmin(t, b)
	const topic, txid = "txmove", "tx-1"
	mustCreateTopic(t, adm, topic, 3, nil)
	producer := newClient(t, b, kgo.TransactionalID(txid), kgo.DefaultProduceTopic(topic), clientLog(t))
	ctx := testCtx(t)
	next := 0
	txn := func(commit bool) {
		t.Helper()
		if err := producer.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for i := 0; i < 10; i++ {
			v := fmt.Sprint(next + i)
			if !commit {
				v = "aborted"
			}
			recs = append(recs, &kgo.Record{Value: []byte(v)})
		}
		if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce in transaction: %v", err)
		}
		if err := producer.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction: %v", err)
		}
		if commit {
			next += 10
		}
	}
	for i := 0; i < 5; i++ {
		txn(true)
	}
	from := b.Server.CoordinatorOf("txn", txid)
	if _, err := b.Server.MoveCoordinator(ctx, "txn", txid, otherNode(from)); err != nil {
		t.Fatal(err)
	}
	txn(false)
	for i := 0; i < 5; i++ {
		txn(true)
	}
	// A node stop moves the leaders the transactions write to. (Not the
	// coordinator's node: a kgo client whose cached metadata still names
	// the stopped coordinator may dial it for FindCoordinator until its
	// retries run out, as it would against Kafka.)
	coord := b.Server.CoordinatorOf("txn", txid)
	stop := int32(3)
	if coord == 3 {
		stop = 2
	}
	if _, err := b.Server.StopNode(ctx, stop); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		txn(true)
	}
	// Bootstrapped from every node: the stopped one may be node.id's.
	recs := consumeN(t, b, topic, 3, next, kgo.FetchIsolationLevel(kgo.ReadCommitted()), seedAll(t, b))
	seen := map[string]int{}
	for _, r := range recs {
		seen[string(r.Value)]++
	}
	for i := 0; i < next; i++ {
		if seen[fmt.Sprint(i)] != 1 {
			t.Fatalf("value %d read %d times", i, seen[fmt.Sprint(i)])
		}
	}
	if seen["aborted"] != 0 {
		t.Fatalf("read %d aborted records", seen["aborted"])
	}
}

func TestVirtualShareConsumerThroughMoves(t *testing.T) {
	t.Parallel()
	b := newVirtual(t, 3)
	adm := newAdmin(t, b)
	const topic, group = "sharemove", "sm"
	mustCreateTopic(t, adm, topic, 2, nil)
	producer := newClient(t, b)
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
	var mu sync.Mutex
	seen := map[string]int{}
	ack := func(r *kgo.Record) { cl.MarkAcks(kgo.AckAccept, r) }
	// A share group starts at the latest offset: keep producing until the
	// consumer has joined and read something.
	n := 0
	for len(seen) == 0 {
		produceValues(t, producer, topic, n, n+10)
		n += 10
		pctx, cancel := context.WithTimeout(testCtx(t), 500*time.Millisecond)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; ack(r) })
		cancel()
	}
	first := 0
	for v := range seen {
		var i int
		fmt.Sscan(v, &i)
		if first == 0 || i < first {
			first = i
		}
	}
	first -= first % 10 // the batch the group started in
	produceValues(t, producer, topic, n, n+100)
	n += 100
	mu.Lock()
	pollUntil(t, cl, seen, 50, ack)
	mu.Unlock()

	ctx := testCtx(t)
	if _, err := b.Server.MoveLeader(ctx, topic, 0, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Server.MoveCoordinator(ctx, "share", group, otherNode(b.Server.CoordinatorOf("share", group))); err != nil {
		t.Fatal(err)
	}
	produceValues(t, producer, topic, n, n+100)
	n += 100
	pollUntil(t, cl, seen, n-first, ack)
	for i := first; i < n; i++ {
		if seen[fmt.Sprint(i)] == 0 {
			t.Fatalf("value %d never delivered (group from %d, %d produced)", i, first, n)
		}
	}
}
