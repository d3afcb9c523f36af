package broker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"sharq/broker/brokertest"
)

// pinnedClient is a client that sends key at most at version max.
func pinnedClient(t *testing.T, b *brokertest.Broker, key kmsg.Key, max int16) *kgo.Client {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(int16(key), max)
	return newClient(t, b, kgo.MaxVersions(vs))
}

// classicMember joins group as one member with a 60 s session (longer than
// the test) and, with sync set, syncs so the group is Stable; without it
// the group stays in CompletingRebalance. It returns the member id and
// generation.
func classicMember(t *testing.T, ctx context.Context, cl *kgo.Client, group string, sync bool) (string, int32) {
	t.Helper()
	member := ""
	var gen int32
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
			gen = r.Generation
			break
		}
	}
	if sync {
		sg := kmsg.NewPtrSyncGroupRequest()
		sg.Group, sg.MemberID, sg.Generation = group, member, gen
		sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
		sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: member, MemberAssignment: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
		if r, err := sg.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
			t.Fatalf("SyncGroup %s: %v %+v", group, err, r)
		}
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{group}
	want := "CompletingRebalance"
	if sync {
		want = "Stable"
	}
	if r, err := dg.RequestWith(ctx, cl); err != nil || r.Groups[0].State != want || len(r.Groups[0].Members) != 1 {
		t.Fatalf("DescribeGroups %s: %v %+v, want %s with one member", group, err, r, want)
	}
	return member, gen
}

// TestTxnOffsetCommitWithoutMember sends TxnOffsetCommit at every version
// (v0-v6) to groups with live members, as a transactional producer does
// that knows only the group id: v0-2 carry no member fields, v3+ send
// generation -1 and no member id (Kafka's producer for
// sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(groupId)),
// what the removed String overload did). Kafka 4.4 accepts such a commit
// whatever the group's members and state (ClassicGroup, ConsumerGroup and
// StreamsGroup validateOffsetCommit with isTransactional), and never answers
// a transactional commit REBALANCE_IN_PROGRESS: a member committing with
// its generation while its group completes a rebalance is accepted too.
// The commits must then apply when the transaction commits.
func TestTxnOffsetCommitWithoutMember(t *testing.T) {
	b := brokertest.New(t, brokertest.WithSetting("group.initial.rebalance.delay.ms", "0"))
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "nm", 1, nil)
	tds, err := adm.ListTopics(ctx, "nm")
	if err != nil {
		t.Fatal(err)
	}
	topicID := tds["nm"].ID
	cl := newClient(t, b)

	const stable, rebalancing, consumer = "nm-classic-stable", "nm-classic-rebalancing", "nm-consumer"
	classicMember(t, ctx, cl, stable, true)
	rbMember, rbGen := classicMember(t, ctx, cl, rebalancing, false)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = consumer, "nm-member-0000000001", 0, 60000
	hb.SubscribedTopicNames = []string{"nm"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if r, err := hb.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("ConsumerGroupHeartbeat: %v %+v", err, r)
	}

	for v := int16(0); v <= 6; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			pc := pinnedClient(t, b, kmsg.TxnOffsetCommit, v)
			txnID := fmt.Sprintf("nm-txn-%d", v)
			ip := kmsg.NewPtrInitProducerIDRequest()
			ip.TransactionalID, ip.TransactionTimeoutMillis = &txnID, 60000
			ipr, err := ip.RequestWith(ctx, pc)
			if err != nil || ipr.ErrorCode != 0 {
				t.Fatalf("InitProducerId: %v %+v", err, ipr)
			}
			groups := []string{stable, rebalancing, consumer}
			if v < 5 {
				// Before v5 (transaction version 2) the producer adds the
				// group to its transaction itself.
				for _, g := range groups {
					ao := kmsg.NewPtrAddOffsetsToTxnRequest()
					ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txnID, ipr.ProducerID, ipr.ProducerEpoch, g
					if r, err := ao.RequestWith(ctx, pc); err != nil || r.ErrorCode != 0 {
						t.Fatalf("AddOffsetsToTxn %s: %v %+v", g, err, r)
					}
				}
			}
			offset := int64(100 + v)
			commit := func(group, member string, gen int32) int16 {
				t.Helper()
				oc := kmsg.NewPtrTxnOffsetCommitRequest()
				oc.TransactionalID, oc.Group, oc.ProducerID, oc.ProducerEpoch = txnID, group, ipr.ProducerID, ipr.ProducerEpoch
				oc.MemberID, oc.Generation = member, gen
				oc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "nm", TopicID: topicID,
					Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: offset, LeaderEpoch: -1}}}}
				resp, err := oc.RequestWith(ctx, pc)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Version != v {
					t.Fatalf("TxnOffsetCommit went out as v%d, want v%d", resp.Version, v)
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}
			for _, g := range groups {
				if code := commit(g, "", -1); code != 0 {
					t.Errorf("commit without member to %s: %v, want accepted (Kafka: a transactional commit without member id and generation -1 skips the member checks)", g, kerr.ErrorForCode(code))
				}
			}
			if v >= 3 {
				if code := commit(rebalancing, rbMember, rbGen); code != 0 {
					t.Errorf("member commit to a group completing its rebalance: %v, want accepted (Kafka answers REBALANCE_IN_PROGRESS to OffsetCommit only)", kerr.ErrorForCode(code))
				}
				if code := commit(rebalancing, rbMember, rbGen+1); code != kerr.IllegalGeneration.Code {
					t.Errorf("member commit with a wrong generation: %v, want ILLEGAL_GENERATION", kerr.ErrorForCode(code))
				}
			}
			et := kmsg.NewPtrEndTxnRequest()
			et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = txnID, ipr.ProducerID, ipr.ProducerEpoch, true
			if r, err := et.RequestWith(ctx, pc); err != nil || r.ErrorCode != 0 {
				t.Fatalf("EndTxn: %v %+v", err, r)
			}
			for _, g := range groups {
				offs, err := adm.FetchOffsets(ctx, g)
				if err != nil {
					t.Fatalf("FetchOffsets %s: %v", g, err)
				}
				if o, ok := offs.Lookup("nm", 0); !ok || o.At != offset {
					t.Errorf("%s after the commit: %+v (found %v), want offset %d", g, o, ok, offset)
				}
			}
		})
	}
}
