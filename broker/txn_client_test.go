package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"sharq/broker/brokertest"
	"sharq/config"
)

// Tests in this file drive transactions with franz-go's transactional
// producer (transaction version 2: implicit partition adds on Produce v12+,
// EndTxn v5 epoch bumps) and read_committed consumers.

func txnProducer(t *testing.T, b *brokertest.Broker, id string, opts ...kgo.Opt) *kgo.Client {
	return newClient(t, b, append([]kgo.Opt{kgo.TransactionalID(id), kgo.TransactionTimeout(60 * time.Second)}, opts...)...)
}

// consumeAll reads topic from the start until n records came or the
// context ends; it returns the values in order per partition.
func consumeAll(t *testing.T, b *brokertest.Broker, topic string, committed bool, n int) []string {
	t.Helper()
	opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl := newClient(t, b, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if errs := fs.Errors(); len(errs) > 0 {
			t.Fatalf("fetch: %v", errs)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

func TestTxnCommitAbortReadCommitted(t *testing.T) {
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "tx", 1, nil)
	p := txnProducer(t, b, "tx-1", kgo.DefaultProduceTopic("tx"))
	ctx := testCtx(t)
	run := func(prefix string, n int, commit bool) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := p.ProduceSync(ctx, kgo.StringRecord(prefix+strconv.Itoa(i))).FirstErr(); err != nil {
				t.Fatalf("produce in txn: %v", err)
			}
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end txn (commit=%v): %v", commit, err)
		}
	}
	run("c1-", 3, true)
	run("a1-", 4, false)
	run("c2-", 2, true)
	run("a2-", 1, false)
	// read_uncommitted sees everything (10 records), read_committed only the
	// committed ones, in order
	if got := consumeAll(t, b, "tx", false, 10); len(got) != 10 {
		t.Fatalf("read_uncommitted got %d records: %v", len(got), got)
	}
	want := []string{"c1-0", "c1-1", "c1-2", "c2-0", "c2-1"}
	got := consumeAll(t, b, "tx", true, len(want))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read_committed = %v, want %v", got, want)
	}

	// An open transaction holds the LSO: read_committed sees nothing of it,
	// ListOffsets latest with read_committed stops before it.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("open")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	lso, hw := listLatest(t, b, "tx", 1), listLatest(t, b, "tx", 0)
	// 10 records + 4 markers = 14; the open record at 14
	if lso != 14 || hw != 15 {
		t.Fatalf("with a transaction open: LSO %d HW %d, want 14 and 15", lso, hw)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if lso := listLatest(t, b, "tx", 1); lso != 16 {
		t.Fatalf("LSO after commit %d, want 16", lso)
	}
}

// listLatest is ListOffsets latest with an isolation level.
func listLatest(t *testing.T, b *brokertest.Broker, topic string, isolation int8) int64 {
	t.Helper()
	cl := newClient(t, b)
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	sp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
		t.Fatal(err)
	}
	return sp.Offset
}

// A second producer with the same transactional id fences the first: the
// zombie's next transactional call fails with a fatal fencing error, and
// its open transaction was aborted (never visible to read_committed).
func TestTxnZombieFenced(t *testing.T) {
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "fence", 1, nil)
	ctx := testCtx(t)
	zombie := txnProducer(t, b, "fence-id", kgo.DefaultProduceTopic("fence"))
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, kgo.StringRecord("zombie")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := txnProducer(t, b, "fence-id", kgo.DefaultProduceTopic("fence"))
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.ProduceSync(ctx, kgo.StringRecord("fresh")).FirstErr(); err != nil {
		t.Fatalf("fresh producer: %v", err)
	}
	if err := fresh.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	err := zombie.ProduceSync(ctx, kgo.StringRecord("zombie-2")).FirstErr()
	if err == nil {
		err = zombie.EndTransaction(ctx, kgo.TryCommit)
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie: %v, want a fencing error", err)
	}
	if got := consumeAll(t, b, "fence", true, 1); fmt.Sprint(got) != "[fresh]" {
		t.Fatalf("read_committed = %v", got)
	}
}

// Consume-transform-produce with GroupTransactSession: the output is
// exactly the input, each record once, and the group's offsets move only
// with committed transactions; an aborted round leaves no trace.
func TestTxnGroupTransactSession(t *testing.T) {
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "in", 2, nil)
	mustCreateTopic(t, adm, "out", 2, nil)
	src := newClient(t, b)
	const n = 50
	for i := 0; i < n; i++ {
		produceSync(t, src, &kgo.Record{Topic: "in", Partition: int32(i % 2), Value: []byte(strconv.Itoa(i))})
	}
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(b.Addr), kgo.TransactionalID("ctp"), kgo.TransactionTimeout(60*time.Second),
		kgo.ConsumerGroup("ctp-group"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RetryTimeout(20*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	ctx := testCtx(t)
	seen := 0
	aborted := false
	for seen < n {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("timed out after %d records", seen)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			t.Fatalf("poll: %v", errs)
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		k := 0
		fs.EachRecord(func(r *kgo.Record) {
			k++
			sess.Produce(ctx, &kgo.Record{Topic: "out", Partition: r.Partition, Value: append([]byte("x"), r.Value...)}, nil)
		})
		// the first round with data is aborted: its input comes again
		try := kgo.TryCommit
		if !aborted && k > 0 {
			try, aborted = kgo.TryAbort, true
		}
		committed, err := sess.End(ctx, try)
		if err != nil {
			t.Fatalf("end: %v", err)
		}
		if committed {
			seen += k
		}
	}
	got := consumeAll(t, b, "out", true, n)
	if len(got) != n {
		t.Fatalf("out has %d committed records, want %d: %v", len(got), n, got)
	}
	uniq := map[string]bool{}
	for _, v := range got {
		uniq[v] = true
	}
	if len(uniq) != n {
		t.Fatalf("duplicates in output: %v", got)
	}
	offs, err := adm.FetchOffsets(ctx, "ctp-group")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != n {
		t.Fatalf("committed group offsets sum to %d, want %d", sum, n)
	}
}

// The admin view of an open transaction: DescribeTransactions,
// ListTransactions (state, producer id, duration filters) and
// DescribeProducers agree with what the producer did.
func TestTxnAdmin(t *testing.T) {
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "adm", 2, nil)
	ctx := testCtx(t)
	p := txnProducer(t, b, "adm-id", kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Topic: "adm", Partition: 1, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b)
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{"adm-id", "nope"}
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	st := dresp.TransactionStates[0]
	if st.ErrorCode != 0 || st.State != "Ongoing" || st.TimeoutMillis != 60000 || st.StartTimestamp <= 0 ||
		len(st.Topics) != 1 || st.Topics[0].Topic != "adm" || fmt.Sprint(st.Topics[0].Partitions) != "[1]" {
		t.Fatalf("describe = %+v", st)
	}
	if code := dresp.TransactionStates[1].ErrorCode; code != kerr.TransactionalIDNotFound.Code {
		t.Fatalf("describe unknown: %d", code)
	}
	list := func(states []string, pids []int64, durMs int64) []string {
		t.Helper()
		req := kmsg.NewPtrListTransactionsRequest()
		req.StateFilters, req.ProducerIDFilters, req.DurationFilterMillis = states, pids, durMs
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("list: %v %d", err, resp.ErrorCode)
		}
		var out []string
		for _, s := range resp.TransactionStates {
			out = append(out, s.TransactionalID+":"+s.TransactionState)
		}
		return out
	}
	if got := list(nil, nil, -1); fmt.Sprint(got) != "[adm-id:Ongoing]" {
		t.Fatalf("list all = %v", got)
	}
	if got := list([]string{"CompleteCommit"}, nil, -1); len(got) != 0 {
		t.Fatalf("list CompleteCommit = %v", got)
	}
	if got := list(nil, []int64{st.ProducerID + 1}, -1); len(got) != 0 {
		t.Fatalf("list other pid = %v", got)
	}
	if got := list(nil, nil, 3_600_000); len(got) != 0 {
		t.Fatalf("list older than an hour = %v", got)
	}
	preq := kmsg.NewPtrDescribeProducersRequest()
	preq.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "adm", Partitions: []int32{0, 1}}}
	presp, err := preq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	parts := presp.Topics[0].Partitions
	if len(parts[0].ActiveProducers) != 0 || len(parts[1].ActiveProducers) != 1 {
		t.Fatalf("producers = %+v", parts)
	}
	ap := parts[1].ActiveProducers[0]
	if ap.ProducerID != st.ProducerID || ap.CurrentTxnStartOffset != 0 || ap.LastSequence != 0 {
		t.Fatalf("active producer = %+v", ap)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := list([]string{"CompleteCommit"}, nil, -1); fmt.Sprint(got) != "[adm-id:CompleteCommit]" {
		t.Fatalf("after commit = %v", got)
	}
}

// Transaction state, staged offsets and an open transaction survive a
// restart: the committed transaction stays committed, the offsets staged by
// the open one stay invisible, and a new producer with the same id aborts
// it so the LSO moves on.
func TestTxnRestart(t *testing.T) {
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "rs", 1, nil)
	ctx := testCtx(t)
	p := txnProducer(t, b, "rs-id", kgo.DefaultProduceTopic("rs"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("committed")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("open")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// stage an offset in the open transaction by hand (TxnOffsetCommit v6:
	// by topic id)
	cl := newClient(t, b)
	tds, err := adm.ListTopics(ctx, "rs")
	if err != nil {
		t.Fatal(err)
	}
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{"rs-id"}
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	st := dresp.TransactionStates[0]
	oc := kmsg.NewPtrTxnOffsetCommitRequest()
	oc.TransactionalID, oc.Group, oc.ProducerID, oc.ProducerEpoch, oc.Generation = "rs-id", "rs-group", st.ProducerID, st.ProducerEpoch, -1
	oc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "rs", TopicID: tds["rs"].ID, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7, LeaderEpoch: -1}}}}
	ocr, err := oc.RequestWith(ctx, cl)
	if err != nil || ocr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("txn offset commit: %v %+v", err, ocr)
	}
	p.Close()
	cl.Close()
	b.Restart()

	if lso := listLatest(t, b, "rs", 1); lso != 2 {
		t.Fatalf("LSO after restart %d, want 2 (the open transaction's first offset)", lso)
	}
	cl = newClient(t, b)
	fetchStable := func() int16 {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 7
		req.Group, req.RequireStable = "rs-group", true
		req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "rs", Partitions: []int32{0}}}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := fetchStable(); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable with staged offsets after restart: %d", code)
	}
	// a new incarnation aborts the open transaction
	p2 := txnProducer(t, b, "rs-id", kgo.DefaultProduceTopic("rs"))
	if err := p2.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p2.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p2.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if code := fetchStable(); code != 0 {
		t.Fatalf("require_stable after the abort: %d", code)
	}
	if got := consumeAll(t, b, "rs", true, 2); fmt.Sprint(got) != "[committed after]" {
		t.Fatalf("read_committed after restart = %v", got)
	}
}

// A transaction open longer than its transaction.timeout.ms is aborted by
// the coordinator (every transaction.abort.timed.out.transaction.cleanup.
// interval.ms) and its producer fenced: its commit fails, read_committed
// sees none of it, the LSO moves on.
func TestTxnTimeoutAborts(t *testing.T) {
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.TransactionAbortTimedOutIntervalMs = 20 }))
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "slow", 1, nil)
	ctx := testCtx(t)
	p := txnProducer(t, b, "slow-id", kgo.DefaultProduceTopic("slow"), kgo.TransactionTimeout(200*time.Millisecond))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("late")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b)
	for {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{"slow-id"}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if s := resp.TransactionStates[0].State; s == "CompleteAbort" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the transaction was never aborted")
		}
		time.Sleep(10 * time.Millisecond) // polling the coordinator's timer
	}
	err := p.EndTransaction(ctx, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("commit after the timeout: %v, want a fencing error", err)
	}
	if lso, hw := listLatest(t, b, "slow", 1), listLatest(t, b, "slow", 0); lso != 2 || hw != 2 {
		t.Fatalf("LSO %d HW %d, want 2 (the record and the abort marker)", lso, hw)
	}
}

// TestTxnOffsetCommitV6: TxnOffsetCommit v6 (KIP-1319) names topics by id
// and answers GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH where v5 answers
// ILLEGAL_GENERATION, as Kafka 4.4 does (kmsg at both versions; franz-go's
// GroupTransactSession uses v6 in TestTxnGroupTransactSession).
func TestTxnOffsetCommitV6(t *testing.T) {
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "v6", 1, nil)
	ctx := testCtx(t)
	p := txnProducer(t, b, "v6-id", kgo.DefaultProduceTopic("v6"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tds, err := adm.ListTopics(ctx, "v6")
	if err != nil {
		t.Fatal(err)
	}
	id := tds["v6"].ID
	cl := newClient(t, b)
	v5 := kversion.Stable()
	v5.SetMaxKeyVersion(int16(kmsg.TxnOffsetCommit), 5)
	cl5 := newClient(t, b, kgo.MaxVersions(v5))
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{"v6-id"}
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	st := dresp.TransactionStates[0]

	// A KIP-848 consumer group with one member, joined by hand.
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "v6-cg", "v6-member", 0, 30000
	hb.SubscribedTopicNames = []string{"v6"}
	hresp, err := hb.RequestWith(ctx, cl)
	if err != nil || hresp.ErrorCode != 0 {
		t.Fatalf("consumer group heartbeat: %v %+v", err, hresp)
	}

	commit := func(c *kgo.Client, group, member string, gen int32, topicID [16]byte) (*kmsg.TxnOffsetCommitResponse, int16) {
		t.Helper()
		oc := kmsg.NewPtrTxnOffsetCommitRequest()
		oc.TransactionalID, oc.Group, oc.ProducerID, oc.ProducerEpoch = "v6-id", group, st.ProducerID, st.ProducerEpoch
		oc.MemberID, oc.Generation = member, gen
		oc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "v6", TopicID: topicID,
			Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
		resp, err := oc.RequestWith(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return resp, resp.Topics[0].Partitions[0].ErrorCode
	}
	for _, tc := range []struct {
		name          string
		c             *kgo.Client
		group, member string
		gen           int32
		topicID       [16]byte
		want          int16
	}{
		{"v6 by topic id", cl, "v6-g", "", -1, id, 0},
		{"v6 unknown topic id", cl, "v6-g", "", -1, [16]byte{1}, kerr.UnknownTopicID.Code},
		{"v6 member of a group that does not exist", cl, "v6-none", "m", 3, id, kerr.GroupIDNotFound.Code},
		{"v5 member of a group that does not exist", cl5, "v6-none", "m", 3, id, kerr.IllegalGeneration.Code},
		{"v6 stale member epoch", cl, "v6-cg", "v6-member", hresp.MemberEpoch + 5, id, kerr.StaleMemberEpoch.Code},
		{"v5 stale member epoch", cl5, "v6-cg", "v6-member", hresp.MemberEpoch + 5, id, kerr.IllegalGeneration.Code},
		{"v6 member at its epoch", cl, "v6-cg", "v6-member", hresp.MemberEpoch, id, 0},
	} {
		resp, code := commit(tc.c, tc.group, tc.member, tc.gen, tc.topicID)
		if code != tc.want {
			t.Errorf("%s: v%d code %d (%v), want %d (%v)", tc.name, resp.Version, code, kerr.ErrorForCode(code), tc.want, kerr.ErrorForCode(tc.want))
		}
		if tc.c == cl && (resp.Version != 6 || resp.Topics[0].TopicID != tc.topicID) {
			t.Errorf("%s: answered v%d with topic id %x", tc.name, resp.Version, resp.Topics[0].TopicID)
		}
	}
	// The staged offsets of v6 are applied at commit.
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	offs, err := adm.FetchOffsets(ctx, "v6-g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("v6", 0); !ok || o.At != 1 {
		t.Fatalf("offset of v6-g after commit: %+v %v", o, ok)
	}
}
