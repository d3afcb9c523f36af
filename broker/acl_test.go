package broker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"sharq/broker/brokertest"
	"sharq/broker/security/sectest"
)

// aclBroker is a SASL_PLAINTEXT broker with StandardAuthorizer, admin as
// super user and alice, bob as plain users.
func aclBroker(t *testing.T, extra ...brokertest.Option) *brokertest.Broker {
	t.Helper()
	opts := []brokertest.Option{
		brokertest.WithListener("SASL_PLAINTEXT", "SASL_PLAINTEXT"),
		brokertest.WithSetting("sasl.enabled.mechanisms", "PLAIN"),
		brokertest.WithSetting("listener.name.sasl_plaintext.plain.sasl.jaas.config",
			`org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw";`),
		brokertest.WithSetting("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"),
		brokertest.WithSetting("super.users", "User:admin"),
	}
	return brokertest.New(t, append(opts, extra...)...)
}

func as(user string) kgo.Opt {
	return kgo.SASL(plain.Auth{User: user, Pass: user + "-pw"}.AsMechanism())
}

// codesOf collects the error codes a response carries, top-level first.
type apiCase struct {
	name  string
	req   func() kmsg.Request
	codes func(kmsg.Response) []int16
	want  int16
}

// TestEveryAPIUnauthorized walks every registered API as a principal
// without ACLs and checks Kafka's authorization error code.
func TestEveryAPIUnauthorized(t *testing.T) {
	b := aclBroker(t)
	adminCl := newClient(t, b, as("admin"))
	adm := kadm.NewClient(adminCl)
	mustCreateTopic(t, adm, "t", 1, nil)
	tid := topicIDs(t, adm, "t")
	cl := newClient(t, b, as("alice"))
	ctx := testCtx(t)
	if _, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest()); err != nil { // connect, authenticate
		t.Fatal(err)
	}
	br := cl.Broker(1)
	sp := kmsg.StringPtr
	taf, gaf, caf := kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code
	tiaf := kerr.TransactionalIDAuthorizationFailed.Code
	cases := []apiCase{
		{"Produce", func() kmsg.Request {
			r := kmsg.NewPtrProduceRequest()
			r.Version, r.Acks, r.TimeoutMillis = 9, 1, 1000
			r.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", TopicID: tid, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode}
		}, taf},
		{"Fetch", func() kmsg.Request {
			r := kmsg.NewPtrFetchRequest()
			r.Version, r.MaxBytes = 12, 1<<20
			r.Topics = []kmsg.FetchRequestTopic{{Topic: "t", TopicID: tid, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode}
		}, taf},
		{"ListOffsets", func() kmsg.Request {
			r := kmsg.NewPtrListOffsetsRequest()
			r.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1, CurrentLeaderEpoch: -1}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode}
		}, taf},
		{"Metadata", func() kmsg.Request {
			r := kmsg.NewPtrMetadataRequest()
			r.Topics = []kmsg.MetadataRequestTopic{{Topic: sp("t")}, {Topic: sp("auto-created?")}}
			r.AllowAutoTopicCreation = true
			return r
		}, func(r kmsg.Response) []int16 {
			m := r.(*kmsg.MetadataResponse)
			return []int16{m.Topics[0].ErrorCode, m.Topics[1].ErrorCode}
		}, taf},
		{"OffsetCommit", func() kmsg.Request {
			r := kmsg.NewPtrOffsetCommitRequest()
			r.Group, r.Generation = "g", -1
			r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode}
		}, gaf},
		{"OffsetFetch", func() kmsg.Request {
			r := kmsg.NewPtrOffsetFetchRequest()
			r.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.OffsetFetchResponse).Groups[0].ErrorCode} }, gaf},
		{"FindCoordinator", func() kmsg.Request {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.CoordinatorKeys = []string{"g"}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode}
		}, gaf},
		{"JoinGroup", func() kmsg.Request {
			r := kmsg.NewPtrJoinGroupRequest()
			r.Group, r.ProtocolType, r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = "g", "consumer", 10000, 10000
			r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.JoinGroupResponse).ErrorCode} }, gaf},
		{"Heartbeat", func() kmsg.Request {
			r := kmsg.NewPtrHeartbeatRequest()
			r.Group, r.MemberID = "g", "m"
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.HeartbeatResponse).ErrorCode} }, gaf},
		{"LeaveGroup", func() kmsg.Request {
			r := kmsg.NewPtrLeaveGroupRequest()
			r.Group, r.Members = "g", []kmsg.LeaveGroupRequestMember{{MemberID: "m"}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.LeaveGroupResponse).ErrorCode} }, gaf},
		{"SyncGroup", func() kmsg.Request {
			r := kmsg.NewPtrSyncGroupRequest()
			r.Group, r.MemberID, r.ProtocolType, r.Protocol = "g", "m", sp("consumer"), sp("range")
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.SyncGroupResponse).ErrorCode} }, gaf},
		{"DescribeGroups", func() kmsg.Request {
			r := kmsg.NewPtrDescribeGroupsRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode} }, gaf},
		{"ListGroups", func() kmsg.Request { return kmsg.NewPtrListGroupsRequest() },
			func(r kmsg.Response) []int16 {
				l := r.(*kmsg.ListGroupsResponse)
				return []int16{l.ErrorCode, int16(len(l.Groups))}
			}, 0},
		{"SaslHandshake", func() kmsg.Request {
			r := kmsg.NewPtrSASLHandshakeRequest()
			r.Mechanism = "PLAIN"
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.SASLHandshakeResponse).ErrorCode} }, kerr.IllegalSaslState.Code},
		{"ApiVersions", func() kmsg.Request {
			r := kmsg.NewPtrApiVersionsRequest()
			r.ClientSoftwareName, r.ClientSoftwareVersion = "test", "1"
			return r
		},
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ApiVersionsResponse).ErrorCode} }, 0},
		{"CreateTopics", func() kmsg.Request {
			r := kmsg.NewPtrCreateTopicsRequest()
			r.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: "new", NumPartitions: 1, ReplicationFactor: 1}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode} }, taf},
		{"DeleteTopics", func() kmsg.Request {
			r := kmsg.NewPtrDeleteTopicsRequest()
			r.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: sp("t")}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode} }, taf},
		{"DeleteRecords", func() kmsg.Request {
			r := kmsg.NewPtrDeleteRecordsRequest()
			r.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "t", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 0}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode}
		}, taf},
		{"InitProducerID", func() kmsg.Request { return kmsg.NewPtrInitProducerIDRequest() },
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.InitProducerIDResponse).ErrorCode} }, caf},
		{"OffsetForLeaderEpoch", func() kmsg.Request {
			r := kmsg.NewPtrOffsetForLeaderEpochRequest()
			r.ReplicaID = -1
			r.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode}
		}, taf},
		{"DescribeACLs", func() kmsg.Request {
			r := kmsg.NewPtrDescribeACLsRequest()
			r.ResourceType, r.ResourcePatternType, r.Operation, r.PermissionType = 1, 1, 1, 1
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeACLsResponse).ErrorCode} }, caf},
		{"CreateACLs", func() kmsg.Request {
			r := kmsg.NewPtrCreateACLsRequest()
			r.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: 2, ResourceName: "t", ResourcePatternType: 3, Principal: "User:alice", Host: "*", Operation: 2, PermissionType: 3}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreateACLsResponse).Results[0].ErrorCode} }, caf},
		{"DeleteACLs", func() kmsg.Request {
			r := kmsg.NewPtrDeleteACLsRequest()
			r.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: 1, ResourcePatternType: 1, Operation: 1, PermissionType: 1}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DeleteACLsResponse).Results[0].ErrorCode} }, caf},
		{"DescribeConfigs topic", func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			r.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode}
		}, taf},
		{"DescribeConfigs broker", func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			r.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode}
		}, caf},
		{"AlterConfigs", func() kmsg.Request {
			r := kmsg.NewPtrAlterConfigsRequest()
			r.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode} }, taf},
		{"DescribeClientQuotas", func() kmsg.Request { return kmsg.NewPtrDescribeClientQuotasRequest() },
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeClientQuotasResponse).ErrorCode} }, caf},
		{"AlterClientQuotas", func() kmsg.Request {
			r := kmsg.NewPtrAlterClientQuotasRequest()
			r.Entries = []kmsg.AlterClientQuotasRequestEntry{{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id", Name: sp("x")}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode}
		}, caf},
		{"DescribeQuorum", func() kmsg.Request {
			r := kmsg.NewPtrDescribeQuorumRequest()
			r.Topics = []kmsg.DescribeQuorumRequestTopic{{Topic: "__cluster_metadata", Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeQuorumResponse).ErrorCode} }, caf},
		{"ElectLeaders", func() kmsg.Request {
			r := kmsg.NewPtrElectLeadersRequest()
			r.TimeoutMillis = 5000
			r.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0}}}
			return r
		}, func(r kmsg.Response) []int16 {
			e := r.(*kmsg.ElectLeadersResponse)
			return []int16{e.ErrorCode, e.Topics[0].Partitions[0].ErrorCode}
		}, caf},
		{"AlterPartitionAssignments", func() kmsg.Request {
			r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			r.TimeoutMillis = 5000
			r.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "t", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{1}}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			a := r.(*kmsg.AlterPartitionAssignmentsResponse)
			return []int16{a.ErrorCode, a.Topics[0].Partitions[0].ErrorCode}
		}, caf},
		{"ListPartitionReassignments", func() kmsg.Request {
			return kmsg.NewPtrListPartitionReassignmentsRequest()
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode} }, caf},
		{"UpdateFeatures", func() kmsg.Request {
			r := kmsg.NewPtrUpdateFeaturesRequest()
			r.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{{Feature: "group.version", MaxVersionLevel: 1, UpgradeType: 1}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.UpdateFeaturesResponse).ErrorCode} }, caf},
		{"DescribeLogDirs", func() kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() },
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeLogDirsResponse).ErrorCode} }, caf},
		{"CreatePartitions", func() kmsg.Request {
			r := kmsg.NewPtrCreatePartitionsRequest()
			r.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 2}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode} }, taf},
		{"DeleteGroups", func() kmsg.Request {
			r := kmsg.NewPtrDeleteGroupsRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode} }, gaf},
		{"IncrementalAlterConfigs", func() kmsg.Request {
			r := kmsg.NewPtrIncrementalAlterConfigsRequest()
			r.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g"}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode}
		}, gaf},
		{"OffsetDelete", func() kmsg.Request {
			r := kmsg.NewPtrOffsetDeleteRequest()
			r.Group = "g"
			r.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.OffsetDeleteResponse).ErrorCode} }, gaf},
		{"DescribeClientQuotas", func() kmsg.Request { return kmsg.NewPtrDescribeClientQuotasRequest() },
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeClientQuotasResponse).ErrorCode} }, caf},
		{"SaslAuthenticate", func() kmsg.Request { return kmsg.NewPtrSASLAuthenticateRequest() },
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.SASLAuthenticateResponse).ErrorCode} }, kerr.IllegalSaslState.Code},
		{"DescribeUserSCRAMCredentials", func() kmsg.Request { return kmsg.NewPtrDescribeUserSCRAMCredentialsRequest() },
			func(r kmsg.Response) []int16 {
				return []int16{r.(*kmsg.DescribeUserSCRAMCredentialsResponse).ErrorCode}
			}, caf},
		{"AlterUserSCRAMCredentials", func() kmsg.Request {
			r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			r.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "bob", Mechanism: 1}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode}
		}, caf},
		{"DescribeCluster", func() kmsg.Request {
			r := kmsg.NewPtrDescribeClusterRequest()
			r.IncludeClusterAuthorizedOperations = true
			return r
		}, func(r kmsg.Response) []int16 {
			d := r.(*kmsg.DescribeClusterResponse)
			return []int16{d.ErrorCode, int16(d.ClusterAuthorizedOperations)}
		}, 0},
		{"ConsumerGroupHeartbeat", func() kmsg.Request {
			r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			r.Group, r.MemberID, r.RebalanceTimeoutMillis, r.SubscribedTopicNames = "g", "m1234567890", 10000, []string{"t"}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode} }, gaf},
		{"ConsumerGroupDescribe", func() kmsg.Request {
			r := kmsg.NewPtrConsumerGroupDescribeRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ConsumerGroupDescribeResponse).Groups[0].ErrorCode}
		}, gaf},
		{"ListConfigResources", func() kmsg.Request {
			r := kmsg.NewPtrListConfigResourcesRequest()
			r.Version = 1
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ListConfigResourcesResponse).ErrorCode} }, caf},
		{"DescribeTopicPartitions", func() kmsg.Request {
			r := kmsg.NewPtrDescribeTopicPartitionsRequest()
			r.ResponsePartitionLimit = 10
			r.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "t"}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeTopicPartitionsResponse).Topics[0].ErrorCode}
		}, taf},
		{"StreamsGroupHeartbeat", func() kmsg.Request {
			r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
			r.Group, r.MemberID, r.MemberEpoch = "stg", "m1234567890", 1
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode} }, gaf},
		{"StreamsGroupDescribe", func() kmsg.Request {
			r := kmsg.NewPtrStreamsGroupDescribeRequest()
			r.Groups = []string{"stg"}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.StreamsGroupDescribeResponse).Groups[0].ErrorCode}
		}, gaf},
		{"StreamsGroupTopologyDescriptionUpdate", func() kmsg.Request {
			r := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
			r.Group, r.MemberID = "stg", "m1234567890"
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse).ErrorCode}
		}, gaf},
		{"ShareGroupHeartbeat", func() kmsg.Request {
			r := kmsg.NewPtrShareGroupHeartbeatRequest()
			r.GroupID, r.MemberID, r.SubscribedTopicNames = "sg", "m1234567890", []string{"t"}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode} }, gaf},
		{"ShareGroupDescribe", func() kmsg.Request {
			r := kmsg.NewPtrShareGroupDescribeRequest()
			r.GroupIDs = []string{"sg"}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ShareGroupDescribeResponse).Groups[0].ErrorCode}
		}, gaf},
		{"ShareFetch", func() kmsg.Request {
			r := kmsg.NewPtrShareFetchRequest()
			r.GroupID, r.MemberID, r.ShareSessionEpoch = sp("sg"), sp("m1234567890"), 0
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ShareFetchResponse).ErrorCode} }, gaf},
		{"ShareAcknowledge", func() kmsg.Request {
			r := kmsg.NewPtrShareAcknowledgeRequest()
			r.GroupID, r.MemberID, r.ShareSessionEpoch = sp("sg"), sp("m1234567890"), 1
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ShareAcknowledgeResponse).ErrorCode} }, gaf},
		{"DescribeShareGroupOffsets", func() kmsg.Request {
			r := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
			r.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "sg"}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeShareGroupOffsetsResponse).Groups[0].ErrorCode}
		}, gaf},
		{"AlterShareGroupOffsets", func() kmsg.Request {
			r := kmsg.NewPtrAlterShareGroupOffsetsRequest()
			r.GroupID = "sg"
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.AlterShareGroupOffsetsResponse).ErrorCode} }, gaf},
		{"DeleteShareGroupOffsets", func() kmsg.Request {
			r := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
			r.GroupID = "sg"
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DeleteShareGroupOffsetsResponse).ErrorCode} }, gaf},
		// Transactions: alice may not use the transactional id "tx".
		{"AddPartitionsToTxn", func() kmsg.Request {
			// negotiated to v5, the broker-to-coordinator form
			r := kmsg.NewPtrAddPartitionsToTxnRequest()
			r.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: "tx"}}
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.AddPartitionsToTxnResponse).ErrorCode} }, caf},
		{"AddOffsetsToTxn", func() kmsg.Request {
			r := kmsg.NewPtrAddOffsetsToTxnRequest()
			r.TransactionalID, r.Group = "tx", "g"
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode} }, tiaf},
		{"EndTxn", func() kmsg.Request {
			r := kmsg.NewPtrEndTxnRequest()
			r.TransactionalID = "tx"
			return r
		}, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.EndTxnResponse).ErrorCode} }, tiaf},
		{"WriteTxnMarkers", func() kmsg.Request {
			r := kmsg.NewPtrWriteTxnMarkersRequest()
			r.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: 1, Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "t", Partitions: []int32{0}}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode}
		}, caf},
		{"TxnOffsetCommit", func() kmsg.Request {
			r := kmsg.NewPtrTxnOffsetCommitRequest()
			r.TransactionalID, r.Group, r.Generation = "tx", "g", -1
			r.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0}}}}
			return r
		}, func(r kmsg.Response) []int16 {
			// Kafka checks the transactional id before the topics.
			return []int16{r.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode}
		}, tiaf},
		{"DescribeProducers", func() kmsg.Request {
			r := kmsg.NewPtrDescribeProducersRequest()
			r.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0}}}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode}
		}, taf},
		{"DescribeTransactions", func() kmsg.Request {
			r := kmsg.NewPtrDescribeTransactionsRequest()
			r.TransactionalIDs = []string{"tx"}
			return r
		}, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeTransactionsResponse).TransactionStates[0].ErrorCode}
		}, tiaf},
		// Telemetry needs no ACL, as on Kafka: every client may ask.
		{"GetTelemetrySubscriptions", func() kmsg.Request { return kmsg.NewPtrGetTelemetrySubscriptionsRequest() },
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.GetTelemetrySubscriptionsResponse).ErrorCode} }, 0},
		{"PushTelemetry", func() kmsg.Request { return kmsg.NewPtrPushTelemetryRequest() },
			func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.PushTelemetryResponse).ErrorCode} }, kerr.InvalidRequest.Code},
		{"ListTransactions", func() kmsg.Request { return kmsg.NewPtrListTransactionsRequest() },
			func(r kmsg.Response) []int16 {
				l := r.(*kmsg.ListTransactionsResponse)
				return []int16{l.ErrorCode, int16(len(l.TransactionStates))}
			}, 0},
	}
	covered := map[int16]bool{}
	for _, tc := range cases {
		req := tc.req()
		covered[req.Key()] = true
		resp, err := br.Request(ctx, req)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for _, c := range tc.codes(resp) {
			if c != tc.want {
				t.Errorf("%s: code %d (%v), want %d (%v)", tc.name, c, kerr.ErrorForCode(c), tc.want, kerr.ErrorForCode(tc.want))
			}
		}
	}
	for _, key := range registeredKeys(t, b) {
		if !covered[key] {
			t.Errorf("API %d (%s) is registered but not walked by this test", key, kmsg.NameForKey(key))
		}
	}
	// Metadata for all topics leaves out what alice may not describe.
	md, err := br.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil || len(md.(*kmsg.MetadataResponse).Topics) != 0 {
		t.Errorf("all-topics metadata: %v %+v", err, md)
	}
}

// registeredKeys asks the broker which APIs it serves.
func registeredKeys(t *testing.T, b *brokertest.Broker) []int16 {
	cl := newClient(t, b, as("admin"))
	resp, err := cl.Request(testCtx(t), kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	var keys []int16
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		keys = append(keys, k.ApiKey)
	}
	return keys
}

// TestACLs: kadm creates, describes and deletes bindings; they decide what
// alice may do, literal and prefixed, deny before allow.
func TestACLs(t *testing.T) {
	b := aclBroker(t)
	adm := kadm.NewClient(newClient(t, b, as("admin")))
	ctx := testCtx(t)
	mustCreateTopic(t, adm, "orders", 1, nil)
	mustCreateTopic(t, adm, "pay-in", 1, nil)
	mustCreateTopic(t, adm, "pay-secret", 1, nil)
	secretID := topicIDs(t, adm, "pay-secret")
	create := func(bld *kadm.ACLBuilder) {
		t.Helper()
		res, err := adm.CreateACLs(ctx, bld)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create acl: %v %s", r.Err, r.ErrMessage)
			}
		}
	}
	create(kadm.NewACLs().Topics("orders").Groups("readers").Allow("User:alice").Operations(kadm.OpRead, kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	create(kadm.NewACLs().Topics("pay-").Allow("User:alice").Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternPrefixed))
	create(kadm.NewACLs().Topics("pay-secret").Deny("User:alice").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))

	alice := newClient(t, b, as("alice"), kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("orders"))
	produceSync(t, alice, &kgo.Record{Topic: "orders", Value: []byte("o")}, &kgo.Record{Topic: "pay-in", Value: []byte("p")})
	fs := alice.PollFetches(ctx)
	if err := fs.Err(); err != nil || fs.NumRecords() != 1 {
		t.Fatalf("alice consumes orders: %v, %d records", err, fs.NumRecords())
	}
	if err := alice.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	aliceAdm := kadm.NewClient(newClient(t, b, as("alice")))
	// Metadata: alice sees the topics she may describe (READ/WRITE/ALL imply it).
	topics, err := aliceAdm.ListTopics(ctx)
	if err != nil || len(topics) != 3 {
		t.Fatalf("alice lists %v: %v", topics.Names(), err)
	}
	bobAdm := kadm.NewClient(newClient(t, b, as("bob")))
	if topics, _ := bobAdm.ListTopics(ctx); len(topics) != 0 {
		t.Fatalf("bob lists %v", topics.Names())
	}
	// Deny before allow: the prefixed ALL does not let alice read pay-secret.
	offs, err := aliceAdm.ListEndOffsets(ctx, "pay-secret")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("pay-secret", 0); o.Err != nil {
		t.Fatalf("describe pay-secret (ALL allows DESCRIBE, the deny is for READ only): %v", o.Err)
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxBytes = 12, 1<<20
	fetch.Topics = []kmsg.FetchRequestTopic{{Topic: "pay-secret", TopicID: secretID, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}}}}
	fr, err := newClient(t, b, as("alice")).Broker(1).Request(ctx, fetch)
	if err != nil || fr.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("fetch pay-secret: %v %+v", err, fr)
	}
	// Authorized operations in Metadata and DescribeGroups.
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("orders")}}
	mreq.IncludeTopicAuthorizedOperations = true
	mr, err := newClient(t, b, as("alice")).Request(ctx, mreq)
	if want := int32(1<<3 | 1<<4 | 1<<8); err != nil || mr.(*kmsg.MetadataResponse).Topics[0].AuthorizedOperations != want {
		t.Fatalf("authorized operations on orders: %v %b, want %b", err, mr.(*kmsg.MetadataResponse).Topics[0].AuthorizedOperations, want)
	}

	// DescribeACLs with filters, DeleteACLs.
	adminCl := newClient(t, b, as("admin"))
	if n := describeACLs(t, adminCl, 1, nil, 1); n != 6 {
		t.Fatalf("describe all: %d bindings", n)
	}
	if n := describeACLs(t, adminCl, 2, kmsg.StringPtr("pay-secret"), 2); n != 2 {
		t.Fatalf("describe MATCH pay-secret (the prefixed and the literal binding): %d", n)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: 2, ResourceName: kmsg.StringPtr("pay-secret"), ResourcePatternType: 3, Operation: 1, PermissionType: 2}}
	deleted, err := del.RequestWith(ctx, adminCl)
	if err != nil || len(deleted.Results) != 1 || len(deleted.Results[0].MatchingACLs) != 1 || deleted.Results[0].MatchingACLs[0].Principal != "User:alice" {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
	fr, err = newClient(t, b, as("alice")).Broker(1).Request(ctx, fetch)
	if err != nil || fr.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch pay-secret after the deny is gone: %v %+v", err, fr)
	}
	// ACLs are in raft metadata: they survive a restart.
	b.Restart()
	adm = kadm.NewClient(newClient(t, b, as("admin")))
	if n := describeACLs(t, newClient(t, b, as("admin")), 1, nil, 1); n != 5 {
		t.Fatalf("after restart: %d bindings", n)
	}
	// Invalid bindings get INVALID_REQUEST with Kafka's message.
	bad := kmsg.NewPtrCreateACLsRequest()
	bad.Creations = []kmsg.CreateACLsRequestCreation{
		{ResourceType: 4, ResourceName: "other", ResourcePatternType: 3, Principal: "User:x", Host: "*", Operation: 7, PermissionType: 3},
		{ResourceType: 2, ResourceName: "", ResourcePatternType: 3, Principal: "User:x", Host: "*", Operation: 7, PermissionType: 3},
		{ResourceType: 2, ResourceName: "t", ResourcePatternType: 2, Principal: "User:x", Host: "*", Operation: 7, PermissionType: 3},
		{ResourceType: 2, ResourceName: "t", ResourcePatternType: 3, Principal: "x", Host: "*", Operation: 7, PermissionType: 3},
	}
	bres, err := bad.RequestWith(ctx, newClient(t, b, as("admin")))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"The only valid name for the CLUSTER resource is kafka-cluster", "Invalid empty resource name", "Invalid patternType MATCH", "Invalid principal"} {
		r := bres.Results[i]
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, want) {
			t.Errorf("creation %d: %d %v, want INVALID_REQUEST %q", i, r.ErrorCode, r.ErrorMessage, want)
		}
	}
}

// describeACLs counts the bindings a DescribeAcls filter returns.
func describeACLs(t *testing.T, cl *kgo.Client, rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType) int {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourceName, req.ResourcePatternType, req.Operation, req.PermissionType = rt, name, pt, 1, 1
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("describe acls: %v %+v", err, resp)
	}
	n := 0
	for _, r := range resp.Resources {
		n += len(r.ACLs)
	}
	return n
}

// TestAllowEveryoneIfNoACL: with allow.everyone.if.no.acl.found a resource
// without bindings is open, one with bindings is not.
func TestAllowEveryoneIfNoACL(t *testing.T) {
	b := aclBroker(t, brokertest.WithSetting("allow.everyone.if.no.acl.found", "true"))
	adm := kadm.NewClient(newClient(t, b, as("admin")))
	ctx := context.Background()
	mustCreateTopic(t, adm, "open", 1, nil)
	mustCreateTopic(t, adm, "closed", 1, nil)
	if _, err := adm.CreateACLs(ctx, kadm.NewACLs().Topics("closed").Allow("User:bob").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral)); err != nil {
		t.Fatal(err)
	}
	alice := newClient(t, b, as("alice"))
	produceSync(t, alice, &kgo.Record{Topic: "open", Value: []byte("x")})
	if err := alice.ProduceSync(testCtx(t), &kgo.Record{Topic: "closed", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce to a topic with bindings for someone else: %v", err)
	}
}

// TestACLsWithoutAuthorizer: the ACL APIs say SECURITY_DISABLED.
func TestACLsWithoutAuthorizer(t *testing.T) {
	b := brokertest.New(t)
	adm := kadm.NewClient(newClient(t, b))
	res, err := adm.CreateACLs(testCtx(t), kadm.NewACLs().Topics("t").Allow("User:a").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || !errors.Is(res[0].Err, kerr.SecurityDisabled) || res[0].ErrMessage != "No Authorizer is configured." {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestMutualTLSPrincipal: the principal of an SSL connection is the client
// certificate's DN mapped by ssl.principal.mapping.rules, and ACLs and
// super.users apply to it.
func TestMutualTLSPrincipal(t *testing.T) {
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	adminCert := ca.Issue(t, pkix.Name{CommonName: "Admin", Organization: []string{"Org"}})
	aliceCert := ca.Issue(t, pkix.Name{CommonName: "Alice", Organization: []string{"Org"}})
	b := brokertest.New(t, brokertest.WithListener("SSL", "SSL"),
		brokertest.WithSetting("ssl.keystore.type", "PEM"),
		brokertest.WithSetting("ssl.keystore.certificate.chain", srv.CertPEM),
		brokertest.WithSetting("ssl.keystore.key", srv.KeyPEM),
		brokertest.WithSetting("ssl.truststore.type", "PEM"),
		brokertest.WithSetting("ssl.truststore.certificates", ca.PEM),
		brokertest.WithSetting("ssl.client.auth", "required"),
		brokertest.WithSetting("ssl.principal.mapping.rules", "RULE:^CN=(.*?),O=Org$/$1/L,DEFAULT"),
		brokertest.WithSetting("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"),
		brokertest.WithSetting("super.users", "User:admin"))
	tlsFor := func(c *sectest.Pair) kgo.Opt {
		return kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", Certificates: []tls.Certificate{c.TLS()}})
	}
	admin := newClient(t, b, tlsFor(adminCert))
	adm := kadm.NewClient(admin)
	mustCreateTopic(t, adm, "m", 1, nil)
	alice := newClient(t, b, tlsFor(aliceCert), kgo.RecordRetries(0))
	if err := alice.ProduceSync(testCtx(t), &kgo.Record{Topic: "m", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice without ACLs: %v", err)
	}
	res, err := adm.CreateACLs(testCtx(t), kadm.NewACLs().Topics("m").Allow("User:alice").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || res[0].Err != nil {
		t.Fatalf("create acl: %v %+v", err, res)
	}
	alice2 := newClient(t, b, tlsFor(aliceCert))
	produceSync(t, alice2, &kgo.Record{Topic: "m", Value: []byte("x")})
}
