package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"sharq/broker/brokertest"
)

// TestAuthorizedOperationsWithoutAuthorizer: with no authorizer every
// principal may do everything, and the *AuthorizedOperations fields carry
// the operations Kafka 4.4 answers (checked against it by the interop
// scenario authorized-ops): a group has DESCRIBE_CONFIGS and ALTER_CONFIGS,
// the cluster CREATE (not WRITE), and DescribeTopicPartitions fills its
// topics' operations without being asked, unknown topics included.
func TestAuthorizedOperationsWithoutAuthorizer(t *testing.T) {
	const (
		topicOps   = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11 // READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
		groupOps   = 1<<3 | 1<<6 | 1<<8 | 1<<10 | 1<<11                      // READ DELETE DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
		clusterOps = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12       // CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE
		notAsked   = -2147483648
	)
	b := brokertest.New(t)
	ctx := testCtx(t)
	cl := newClient(t, b)
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, "ops"); err != nil {
		t.Fatal(err)
	}
	// A classic group with a member (JoinGroup v5: the member id first).
	member := ""
	for i := 0; ; i++ {
		jg := kmsg.NewPtrJoinGroupRequest()
		jg.Version = 5
		jg.Group, jg.MemberID, jg.ProtocolType = "ops-classic", member, "consumer"
		jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 30000, 30000
		jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0, 0, 0}}}
		r, err := jg.RequestWith(ctx, cl)
		if err != nil || i == 2 {
			t.Fatalf("JoinGroup: %v %+v", err, r)
		}
		if r.ErrorCode == 0 {
			break
		}
		member = r.MemberID
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = "ops-cg", "opsmember00000000000001", 30000, []string{"ops"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if r, err := hb.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("ConsumerGroupHeartbeat: %v %+v", err, r)
	}
	shb := kmsg.NewPtrShareGroupHeartbeatRequest()
	shb.GroupID, shb.MemberID, shb.SubscribedTopicNames = "ops-sg", "opsmember00000000000002", []string{"ops"}
	if r, err := shb.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("ShareGroupHeartbeat: %v %+v", err, r)
	}
	v10 := kversion.Stable()
	v10.SetMaxKeyVersion(3, 10)
	cl10 := newClient(t, b, kgo.MaxVersions(v10))

	tests := []struct {
		name string
		ask  func(include bool) (int32, error)
		want int32
	}{
		{"Metadata v10 cluster", func(include bool) (int32, error) {
			r := kmsg.NewPtrMetadataRequest()
			r.IncludeClusterAuthorizedOperations = include
			resp, err := r.RequestWith(ctx, cl10)
			if err != nil {
				return 0, err
			}
			if resp.Version != 10 {
				t.Fatalf("Metadata v%d, want v10", resp.Version)
			}
			return resp.AuthorizedOperations, nil
		}, clusterOps},
		{"Metadata topic", func(include bool) (int32, error) {
			r := kmsg.NewPtrMetadataRequest()
			r.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("ops")}}
			r.IncludeTopicAuthorizedOperations = include
			resp, err := r.RequestWith(ctx, cl)
			if err != nil {
				return 0, err
			}
			return resp.Topics[0].AuthorizedOperations, nil
		}, topicOps},
		{"DescribeCluster", func(include bool) (int32, error) {
			r := kmsg.NewPtrDescribeClusterRequest()
			r.IncludeClusterAuthorizedOperations = include
			resp, err := r.RequestWith(ctx, cl)
			if err != nil {
				return 0, err
			}
			return resp.ClusterAuthorizedOperations, nil
		}, clusterOps},
		{"DescribeGroups", func(include bool) (int32, error) {
			r := kmsg.NewPtrDescribeGroupsRequest()
			r.Groups, r.IncludeAuthorizedOperations = []string{"ops-classic"}, include
			resp, err := r.RequestWith(ctx, cl)
			if err != nil {
				return 0, err
			}
			return resp.Groups[0].AuthorizedOperations, nil
		}, groupOps},
		{"DescribeGroups of a consumer group (GROUP_ID_NOT_FOUND)", func(include bool) (int32, error) {
			r := kmsg.NewPtrDescribeGroupsRequest()
			r.Groups, r.IncludeAuthorizedOperations = []string{"ops-cg"}, include
			resp, err := r.RequestWith(ctx, cl)
			if err != nil {
				return 0, err
			}
			return resp.Groups[0].AuthorizedOperations, nil
		}, notAsked},
		{"ConsumerGroupDescribe", func(include bool) (int32, error) {
			r := kmsg.NewPtrConsumerGroupDescribeRequest()
			r.Groups, r.IncludeAuthorizedOperations = []string{"ops-cg"}, include
			resp, err := r.RequestWith(ctx, cl)
			if err != nil {
				return 0, err
			}
			return resp.Groups[0].AuthorizedOperations, nil
		}, groupOps},
		{"ConsumerGroupDescribe of an unknown group", func(include bool) (int32, error) {
			r := kmsg.NewPtrConsumerGroupDescribeRequest()
			r.Groups, r.IncludeAuthorizedOperations = []string{"ops-none"}, include
			resp, err := r.RequestWith(ctx, cl)
			if err != nil {
				return 0, err
			}
			return resp.Groups[0].AuthorizedOperations, nil
		}, notAsked},
		{"ShareGroupDescribe", func(include bool) (int32, error) {
			r := kmsg.NewPtrShareGroupDescribeRequest()
			r.GroupIDs, r.IncludeAuthorizedOperations = []string{"ops-sg"}, include
			resp, err := r.RequestWith(ctx, cl)
			if err != nil {
				return 0, err
			}
			return resp.Groups[0].AuthorizedOperations, nil
		}, groupOps},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, include := range []bool{true, false} {
				got, err := tc.ask(include)
				want := tc.want
				if !include {
					want = notAsked
				}
				if err != nil || got != want {
					t.Errorf("include %v: %v %b, want %b", include, err, got, want)
				}
			}
		})
	}
	t.Run("DescribeTopicPartitions", func(t *testing.T) {
		r := kmsg.NewPtrDescribeTopicPartitionsRequest()
		r.ResponsePartitionLimit = 10
		r.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "ops"}, {Topic: "ops-none"}}
		resp, err := r.RequestWith(ctx, cl)
		if err != nil || len(resp.Topics) != 2 {
			t.Fatalf("%v %+v", err, resp)
		}
		for _, rt := range resp.Topics {
			if rt.AuthorizedOperations != topicOps {
				t.Errorf("%s (error %d): %b, want %b", *rt.Topic, rt.ErrorCode, rt.AuthorizedOperations, int32(topicOps))
			}
		}
	})
}
