package interop

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Kafka 4.4's authorized-operations bit sets on a broker without an
// authorizer: every operation its ACL table supports on the resource type
// (bit n = AclOperation code n). Run against Kafka 4.4 they are what it
// answers; sharq must answer the same.
const (
	// READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
	kafkaTopicOps = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	// READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
	kafkaGroupOps = 1<<3 | 1<<6 | 1<<8 | 1<<10 | 1<<11
	// CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE
	kafkaClusterOps = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
	// The marker of a field nobody asked for.
	opsNotRequested = -2147483648
)

// scenarioAuthorizedOps asks every API that carries authorized operations
// for them (and once without asking), with franz-go's raw requests, on a
// broker without an authorizer: Metadata (cluster and topic), DescribeCluster,
// DescribeTopicPartitions (which has no flag: Kafka always fills it),
// DescribeGroups, ConsumerGroupDescribe and ShareGroupDescribe.
func scenarioAuthorizedOps(t *testing.T, tg Target) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const topic, cgroup, sgroup, clgroup = "authops", "authops-cg", "authops-sg", "authops-classic"
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	// A member each, so that both groups exist. The first heartbeats may
	// find the coordinator still loading (Kafka creates its offsets topic
	// on first use): retried until the deadline.
	join := func(name string, send func() (int16, error)) {
		for {
			code, err := send()
			if err == nil && code == 0 {
				return
			}
			if err == nil && !kerr.IsRetriable(kerr.ErrorForCode(code)) && code != kerr.RebalanceInProgress.Code || ctx.Err() != nil {
				t.Fatalf("%s: %v %v", name, err, kerr.ErrorForCode(code))
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	join("ConsumerGroupHeartbeat", func() (int16, error) {
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = cgroup, "authopsmember0000000001", 30000, []string{topic}
		hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{} // non-null when joining
		r, err := hb.RequestWith(ctx, cl)
		if err != nil {
			return 0, err
		}
		return r.ErrorCode, nil
	})
	join("ShareGroupHeartbeat", func() (int16, error) {
		shb := kmsg.NewPtrShareGroupHeartbeatRequest()
		shb.GroupID, shb.MemberID, shb.SubscribedTopicNames = sgroup, "authopsmember0000000002", []string{topic}
		r, err := shb.RequestWith(ctx, cl)
		if err != nil {
			return 0, err
		}
		return r.ErrorCode, nil
	})

	// A classic group for DescribeGroups (Kafka answers GROUP_ID_NOT_FOUND
	// for a consumer-protocol group there): JoinGroup v5 asks for a member
	// id first, then takes the member in.
	memberID := ""
	join("JoinGroup", func() (int16, error) {
		jg := kmsg.NewPtrJoinGroupRequest()
		jg.Version = 5
		jg.Group, jg.MemberID, jg.ProtocolType = clgroup, memberID, "consumer"
		jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 30000, 30000
		jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
		r, err := jg.RequestWith(ctx, cl)
		if err != nil {
			return 0, err
		}
		if r.ErrorCode == kerr.MemberIDRequired.Code {
			memberID = r.MemberID
			return kerr.RebalanceInProgress.Code, nil // retriable: join again with the id
		}
		return r.ErrorCode, nil
	})

	// kgo sends the highest version both sides support, whatever the
	// request says; a client capped at Metadata v10 (the last version that
	// can ask for the cluster's operations) sends that.
	v10 := kversion.Stable()
	v10.SetMaxKeyVersion(3, 10)
	cl28, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap), kgo.MaxVersions(v10))
	if err != nil {
		t.Fatal(err)
	}
	defer cl28.Close()

	got := map[string]int32{}
	for _, include := range []bool{true, false} {
		sfx := map[bool]string{true: "", false: " (not asked)"}[include]
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 10 // the last version with the cluster's operations
		md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
		md.IncludeClusterAuthorizedOperations, md.IncludeTopicAuthorizedOperations = include, include
		mr, err := md.RequestWith(ctx, cl28)
		if err == nil && mr.Version != 10 {
			t.Fatalf("Metadata sent as v%d, want v10", mr.Version)
		}
		if err != nil || len(mr.Topics) != 1 {
			t.Fatalf("Metadata: %v %+v", err, mr)
		}
		got["Metadata v10 cluster"+sfx], got["Metadata v10 topic"+sfx] = mr.AuthorizedOperations, mr.Topics[0].AuthorizedOperations

		md12 := kmsg.NewPtrMetadataRequest()
		md12.Version = 12 // kgo sends the highest both support: 12 or 13
		md12.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
		md12.IncludeTopicAuthorizedOperations = include
		mr12, err := md12.RequestWith(ctx, cl)
		if err != nil || len(mr12.Topics) != 1 {
			t.Fatalf("Metadata v12: %v %+v", err, mr12)
		}
		got["Metadata v12+ topic"+sfx] = mr12.Topics[0].AuthorizedOperations

		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.IncludeClusterAuthorizedOperations = include
		dcr, err := dc.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("DescribeCluster: %v", err)
		}
		got["DescribeCluster"+sfx] = dcr.ClusterAuthorizedOperations

		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups, dg.IncludeAuthorizedOperations = []string{clgroup, cgroup}, include
		dgr, err := dg.RequestWith(ctx, cl)
		if err != nil || len(dgr.Groups) != 2 {
			t.Fatalf("DescribeGroups: %v %+v", err, dgr)
		}
		for _, g := range dgr.Groups {
			t.Logf("DescribeGroups %s: error %d state %q protocol type %q ops %d", g.Group, g.ErrorCode, g.State, g.ProtocolType, g.AuthorizedOperations)
			switch g.Group {
			case clgroup:
				got["DescribeGroups"+sfx] = g.AuthorizedOperations
			case cgroup: // not a classic group: GROUP_ID_NOT_FOUND, no operations
				got["DescribeGroups of a consumer group"+sfx] = g.AuthorizedOperations
			}
		}

		cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
		cgd.Groups, cgd.IncludeAuthorizedOperations = []string{cgroup}, include
		cgr, err := cgd.RequestWith(ctx, cl)
		if err != nil || len(cgr.Groups) != 1 || cgr.Groups[0].ErrorCode != 0 {
			t.Fatalf("ConsumerGroupDescribe: %v %+v", err, cgr)
		}
		got["ConsumerGroupDescribe"+sfx] = cgr.Groups[0].AuthorizedOperations

		sgd := kmsg.NewPtrShareGroupDescribeRequest()
		sgd.GroupIDs, sgd.IncludeAuthorizedOperations = []string{sgroup}, include
		sgr, err := sgd.RequestWith(ctx, cl)
		if err != nil || len(sgr.Groups) != 1 || sgr.Groups[0].ErrorCode != 0 {
			t.Fatalf("ShareGroupDescribe: %v %+v", err, sgr)
		}
		got["ShareGroupDescribe"+sfx] = sgr.Groups[0].AuthorizedOperations
	}
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.ResponsePartitionLimit = 10
	dtp.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: topic}, {Topic: "authops-none"}}
	dtr, err := dtp.RequestWith(ctx, cl)
	if err != nil || len(dtr.Topics) != 2 {
		t.Fatalf("DescribeTopicPartitions: %v %+v", err, dtr)
	}
	for _, rt := range dtr.Topics {
		switch {
		case rt.Topic != nil && *rt.Topic == topic && rt.ErrorCode == 0:
			got["DescribeTopicPartitions"] = rt.AuthorizedOperations
		case rt.Topic != nil && *rt.Topic == "authops-none" && rt.ErrorCode == kerr.UnknownTopicOrPartition.Code:
			got["DescribeTopicPartitions of an unknown topic"] = rt.AuthorizedOperations
		default:
			t.Errorf("DescribeTopicPartitions: unexpected topic %+v", rt)
		}
	}

	want := map[string]int32{
		"Metadata v10 cluster": kafkaClusterOps, "Metadata v10 topic": kafkaTopicOps, "Metadata v12+ topic": kafkaTopicOps,
		"DescribeCluster": kafkaClusterOps, "DescribeGroups": kafkaGroupOps, "ConsumerGroupDescribe": kafkaGroupOps,
		"ShareGroupDescribe": kafkaGroupOps, "DescribeTopicPartitions": kafkaTopicOps,
	}
	// Kafka fills a topic's operations even when the topic is unknown:
	// every topic the metadata cache answers gets them, only one the
	// principal may not describe does not.
	want["DescribeTopicPartitions of an unknown topic"] = kafkaTopicOps
	want["DescribeGroups of a consumer group"] = opsNotRequested
	for _, k := range slices.Collect(maps.Keys(want)) {
		if !strings.HasPrefix(k, "DescribeTopicPartitions") {
			want[k+" (not asked)"] = opsNotRequested
		}
	}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		w := want[k]
		if got[k] != w {
			t.Errorf("%s: authorized operations %d (%s), want %d (%s)", k, got[k], opNames(got[k]), w, opNames(w))
		}
		lines = append(lines, fmt.Sprintf("%s: %s", k, opNames(got[k])))
	}
	t.Logf("%s:\n%s", tg.Name, strings.Join(lines, "\n"))
}

// opNames spells a bit set with Kafka's AclOperation names.
func opNames(bits int32) string {
	if bits == opsNotRequested {
		return "not requested"
	}
	names := []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}
	var out []string
	for i, n := range names {
		if bits&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}
