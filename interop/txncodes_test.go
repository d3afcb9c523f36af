package interop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// scenarioTxnCommitCodes sends TxnOffsetCommit at every version (v0-v6,
// franz-go raw requests with the version pinned) with every combination of
// member id, generation and instance id a committer can send, to a classic
// group that is Stable, one that completes a rebalance (joined, not
// synced), a KIP-848 consumer group with a member, a group holding only
// offsets and one that does not exist, and records the error codes for the
// golden diff: the coordinator's rules are Kafka's or the lines differ.
// Member ids and generations are written symbolically (they differ
// between brokers).
func scenarioTxnCommitCodes(t *testing.T, tg Target) {
	const topic = "interop-txn-codes"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.TimeoutMillis = 30000
	ct.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}}
	ctr, err := ct.RequestWith(ctx, cl)
	if err != nil || ctr.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %v %+v", topic, err, ctr)
	}
	topicID := ctr.Topics[0].TopicID

	join := func(group string, sync bool) (string, int32) {
		member := ""
		for i := 0; ; i++ {
			jg := kmsg.NewPtrJoinGroupRequest()
			jg.Group, jg.MemberID, jg.ProtocolType = group, member, "consumer"
			jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 60000, 60000
			jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
			r, err := jg.RequestWith(ctx, cl)
			if err != nil || i == 2 {
				t.Fatalf("JoinGroup %s: %v %+v", group, err, r)
			}
			member = r.MemberID
			if r.ErrorCode == 0 {
				if sync {
					sg := kmsg.NewPtrSyncGroupRequest()
					sg.Group, sg.MemberID, sg.Generation = group, member, r.Generation
					sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
					sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: member, MemberAssignment: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
					if s, err := sg.RequestWith(ctx, cl); err != nil || s.ErrorCode != 0 {
						t.Fatalf("SyncGroup %s: %v %+v", group, err, s)
					}
				}
				return member, r.Generation
			}
		}
	}
	stableMember, stableGen := join("txn-codes-stable", true)
	rbMember, rbGen := join("txn-codes-rebalancing", false)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "txn-codes-consumer", "txncodesmember00000001", 0, 60000
	hb.SubscribedTopicNames = []string{topic}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	hr, err := hb.RequestWith(ctx, cl)
	if err != nil || hr.ErrorCode != 0 {
		t.Fatalf("ConsumerGroupHeartbeat: %v %+v", err, hr)
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "txn-codes-simple", -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, TopicID: topicID, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
	if r, err := oc.RequestWith(ctx, cl); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("OffsetCommit: %v %+v", err, r)
	}

	type committer struct {
		label    string
		member   string
		gen      int32
		instance *string
		minV     int16 // the fields exist from v3
	}
	inst := kmsg.StringPtr
	type target struct {
		name string
		who  []committer
	}
	groups := []target{
		{"txn-codes-stable", []committer{
			{"none", "", -1, nil, 0},
			{"member at its generation", stableMember, stableGen, nil, 3},
			{"member at generation+1", stableMember, stableGen + 1, nil, 3},
			{"member with generation -1", stableMember, -1, nil, 3},
			{"unknown member", "ghost", stableGen, nil, 3},
			{"generation -1 with an instance id", "", -1, inst("i-1"), 3},
			{"generation -1 with an empty instance id", "", -1, inst(""), 3},
		}},
		{"txn-codes-rebalancing", []committer{
			{"none", "", -1, nil, 0},
			{"member at its generation", rbMember, rbGen, nil, 3},
			{"member at generation+1", rbMember, rbGen + 1, nil, 3},
			{"unknown member", "ghost", rbGen, nil, 3},
		}},
		{"txn-codes-consumer", []committer{
			{"none", "", -1, nil, 0},
			{"generation -2", "", -2, nil, 3},
			{"member at its epoch", *hr.MemberID, hr.MemberEpoch, nil, 3},
			{"member at epoch+1", *hr.MemberID, hr.MemberEpoch + 1, nil, 3},
			{"unknown member", "ghost", hr.MemberEpoch, nil, 3},
			{"generation -1 with an instance id", "", -1, inst("i-1"), 3},
		}},
		{"txn-codes-simple", []committer{
			{"none", "", -1, nil, 0},
			{"member generation 0", "m", 0, nil, 3},
		}},
	}
	var b strings.Builder
	for v := int16(0); v <= 6; v++ {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(int16(kmsg.TxnOffsetCommit), v)
		pc, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap), kgo.MaxVersions(vs))
		if err != nil {
			t.Fatal(err)
		}
		txnID := fmt.Sprintf("txn-codes-%d", v)
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.TransactionalID, ip.TransactionTimeoutMillis = &txnID, 60000
		ipr, err := ip.RequestWith(ctx, pc)
		if err != nil || ipr.ErrorCode != 0 {
			t.Fatalf("InitProducerId: %v %+v", err, ipr)
		}
		// A group of its own per version: the member's commit comes first,
		// before a commit without member creates the group.
		absent := target{fmt.Sprintf("txn-codes-absent-%d", v), []committer{
			{"member generation 3", "m", 3, nil, 3},
			{"none", "", -1, nil, 0},
		}}
		for _, g := range append(groups, absent) {
			if v < 5 {
				ao := kmsg.NewPtrAddOffsetsToTxnRequest()
				ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txnID, ipr.ProducerID, ipr.ProducerEpoch, g.name
				if r, err := ao.RequestWith(ctx, pc); err != nil || r.ErrorCode != 0 {
					t.Fatalf("AddOffsetsToTxn %s: %v %+v", g.name, err, r)
				}
			}
			for _, w := range g.who {
				if v < w.minV {
					continue
				}
				req := kmsg.NewPtrTxnOffsetCommitRequest()
				req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = txnID, g.name, ipr.ProducerID, ipr.ProducerEpoch
				req.MemberID, req.Generation, req.InstanceID = w.member, w.gen, w.instance
				req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: topic, TopicID: topicID,
					Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: int64(10 + v), LeaderEpoch: -1}}}}
				resp, err := req.RequestWith(ctx, pc)
				if err != nil {
					t.Fatalf("TxnOffsetCommit v%d %s %s: %v", v, g.name, w.label, err)
				}
				if resp.Version != v {
					t.Fatalf("TxnOffsetCommit went out as v%d, want v%d", resp.Version, v)
				}
				code := resp.Topics[0].Partitions[0].ErrorCode
				name := "NONE"
				if e := kerr.ErrorForCode(code); e != nil {
					name = e.(*kerr.Error).Message
				}
				label := strings.TrimSuffix(strings.TrimPrefix(g.name, "txn-codes-"), fmt.Sprintf("-%d", v))
				fmt.Fprintf(&b, "v%d %s %s: %s\n", v, label, w.label, name)
			}
		}
		et := kmsg.NewPtrEndTxnRequest()
		et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = txnID, ipr.ProducerID, ipr.ProducerEpoch, false
		if r, err := et.RequestWith(ctx, pc); err != nil || r.ErrorCode != 0 {
			t.Fatalf("EndTxn: %v %+v", err, r)
		}
		pc.Close()
	}
	t.Logf("%s", b.String())
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "txn-commit-codes/codes", b.String()); err != nil {
			t.Error(err)
		}
	}
}
