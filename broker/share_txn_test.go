package broker_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// TestShareReadCommitted: a share group with share.isolation.level=
// read_committed gets a committed transaction's records, never an aborted
// one's, and nothing of an open transaction until it commits.
func TestShareReadCommitted(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, group = "share-tx", "share-rc"
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "share.isolation.level", "read_committed")
	ctx := testCtx(t)
	p := txnProducer(t, b, "share-tx-1", kgo.DefaultProduceTopic(topic))
	txn := func(prefix string, end bool, commit bool) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if err := p.ProduceSync(ctx, kgo.StringRecord(prefix+string(rune('0'+i)))).FirstErr(); err != nil {
				t.Fatalf("produce in txn: %v", err)
			}
		}
		if end {
			if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
				t.Fatalf("end txn (commit=%v): %v", commit, err)
			}
		}
	}
	txn("c-", true, true)
	txn("a-", true, false)
	txn("o-", false, false) // left open

	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	var committed atomic.Bool
	var got []string
	take := func(want int) {
		t.Helper()
		n := 0
		shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
			v := string(r.Value)
			switch {
			case strings.HasPrefix(v, "a-"):
				t.Fatalf("aborted record %q delivered", v)
			case strings.HasPrefix(v, "o-") && !committed.Load():
				t.Fatalf("record %q of the open transaction delivered", v)
			}
			got = append(got, v)
			cl.MarkAcks(kgo.AckAccept, r)
			n++
			return n == want
		})
	}
	take(3)
	committed.Store(true)
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit the open txn: %v", err)
	}
	take(3)
	if want := "c-0 c-1 c-2 o-0 o-1 o-2"; strings.Join(got, " ") != want {
		t.Fatalf("delivered %v, want %s", got, want)
	}
}
