package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestOffsetsKill9: committed offsets and transactionally staged offsets
// go through the state journal without an fsync. After SIGKILL:
//   - every acknowledged OffsetCommit is there (200 commits, one at a time);
//   - offsets of a committed transaction (TxnOffsetCommit, then EndTxn) are
//     committed;
//   - offsets staged by the transaction open at the crash stay invisible
//     (require_stable answers UNSTABLE_OFFSET_COMMIT) until it times out,
//     and are then dropped, leaving the committed transaction's offsets.
func TestOffsetsKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startSharq(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, plain, txg = "offs-crash", "plain-group", "txn-group"

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	created, err := adm.CreateTopics(ctx, 4, 1, nil, topic)
	if err == nil {
		err = created.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	topicID := created[topic].ID
	want := map[int32]int64{}
	for i := 0; i < 200; i++ {
		part, off := int32(i%4), int64(i)
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: topic, Partition: part, At: off, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, plain, os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		want[part] = off
	}

	txnReq := func(req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		return resp
	}
	// FindCoordinator creates __transaction_state as a producer does first.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{"offs-txn"}
	txnReq(fc)
	ip := kmsg.NewPtrInitProducerIDRequest()
	id := "offs-txn"
	ip.TransactionalID, ip.TransactionTimeoutMillis = &id, 1500
	ipr := txnReq(ip).(*kmsg.InitProducerIDResponse)
	if err := kerr.ErrorForCode(ipr.ErrorCode); err != nil {
		t.Fatalf("InitProducerID: %v", err)
	}
	pid, epoch := ipr.ProducerID, ipr.ProducerEpoch
	// stage commits offset at on every partition of topic in txg within
	// the producer's open transaction.
	stage := func(at int64) {
		t.Helper()
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = id, pid, epoch, txg
		if err := kerr.ErrorForCode(txnReq(ao).(*kmsg.AddOffsetsToTxnResponse).ErrorCode); err != nil {
			t.Fatalf("AddOffsetsToTxn: %v", err)
		}
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = id, txg, pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID // v6 names topics by id
		for part := int32(0); part < 4; part++ {
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = part, at, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		tc.Topics = append(tc.Topics, rt)
		for _, tt := range txnReq(tc).(*kmsg.TxnOffsetCommitResponse).Topics {
			for _, tp := range tt.Partitions {
				if err := kerr.ErrorForCode(tp.ErrorCode); err != nil {
					t.Fatalf("TxnOffsetCommit partition %d: %v", tp.Partition, err)
				}
			}
		}
	}
	stage(42)
	et := kmsg.NewPtrEndTxnRequest()
	et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = id, pid, epoch, true
	etr := txnReq(et).(*kmsg.EndTxnResponse)
	if err := kerr.ErrorForCode(etr.ErrorCode); err != nil {
		t.Fatalf("EndTxn: %v", err)
	}
	if etr.ProducerID >= 0 && etr.ProducerEpoch >= 0 && etr.ProducerID == pid {
		epoch = etr.ProducerEpoch // transaction version 2 bumps the epoch
	}
	stage(99) // left open: the crash comes before its EndTxn
	cl.Close()
	p.cmd.Process.Kill()
	<-p.exited

	b := brokertest.New(t, brokertest.WithDir(dir), brokertest.WithConfig(func(c *config.Config) {
		c.TransactionAbortTimedOutIntervalMs = 100
	}))
	cl2, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	adm2 := kadm.NewClient(cl2)
	got, err := adm2.FetchOffsets(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	for part, off := range want {
		if o, ok := got.Lookup(topic, part); !ok || o.At != off {
			t.Errorf("partition %d: committed offset %v after kill -9, want %d", part, o.At, off)
		}
	}

	fetch := func(stable bool) *kmsg.OffsetFetchResponseGroup {
		t.Helper()
		of := kmsg.NewPtrOffsetFetchRequest()
		of.RequireStable = stable
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = txg
		g.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0, 1, 2, 3}}}
		of.Groups = append(of.Groups, g)
		resp, err := of.RequestWith(ctx, cl2)
		if err != nil {
			t.Fatal(err)
		}
		return &resp.Groups[0]
	}
	offsetsOf := func(g *kmsg.OffsetFetchResponseGroup) map[int32]int64 {
		out := map[int32]int64{}
		for _, tt := range g.Topics {
			for _, tp := range tt.Partitions {
				out[tp.Partition] = tp.Offset
			}
		}
		return out
	}
	// The open transaction's offsets never show; its partitions are
	// unstable until the coordinator aborts it (1.5 s timeout).
	sawUnstable := false
	for {
		g := fetch(true)
		unstable := false
		for _, tt := range g.Topics {
			for _, tp := range tt.Partitions {
				if tp.ErrorCode == kerr.UnstableOffsetCommit.Code {
					unstable = true
				}
			}
		}
		if !unstable && g.ErrorCode == 0 {
			break
		}
		sawUnstable = true
		for part, off := range offsetsOf(fetch(false)) {
			if off != 42 {
				t.Fatalf("partition %d shows %d while the open transaction is pending, want the committed 42", part, off)
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the transaction open at the crash was never aborted")
		}
		time.Sleep(50 * time.Millisecond) // waiting for the coordinator's abort timer
	}
	if !sawUnstable {
		t.Error("the offsets staged by the open transaction did not survive the crash (never unstable)")
	}
	for part, off := range offsetsOf(fetch(true)) {
		if off != 42 {
			t.Errorf("partition %d: offset %d after the open transaction was aborted, want 42", part, off)
		}
	}
}
