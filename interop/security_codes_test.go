package interop

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// unauthorizedCodes sends one request of each API as bob, a SCRAM user
// without ACLs, and returns a line per API with the error codes of the
// answer; the golden comparison holds it against Kafka's.
func unauthorizedCodes(t *testing.T, secure, caFile string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	dial := kgo.DialTLSConfig(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	admin, err := kgo.NewClient(kgo.SeedBrokers(secure), dial, kgo.SASL(scram.Auth{User: "admin", Pass: "admin-secret"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-secret"}}); err != nil {
		t.Fatalf("create bob: %v", err)
	}
	md, err := adm.Metadata(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	tid := md.Topics["orders"].ID
	bobCl, err := kgo.NewClient(kgo.SeedBrokers(secure), dial, kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer bobCl.Close()
	if _, err := bobCl.Request(ctx, kmsg.NewPtrApiVersionsRequest()); err != nil {
		t.Fatalf("bob connects: %v", err)
	}
	bob := bobCl.Broker(1)
	sp := kmsg.StringPtr
	type apiCase struct {
		name  string
		req   kmsg.Request
		codes func(kmsg.Response) []int16
	}
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks, produce.TimeoutMillis = 1, 1000
	produce.Topics = []kmsg.ProduceRequestTopic{{Topic: "orders", TopicID: tid, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxBytes = 1 << 20
	fetch.Topics = []kmsg.FetchRequestTopic{{Topic: "orders", TopicID: tid, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}}}}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "orders", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1, CurrentLeaderEpoch: -1}}}}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: sp("orders")}, {Topic: sp("no-such-topic")}}
	metaAll := kmsg.NewPtrMetadataRequest()
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "g", -1
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "orders", TopicID: tid, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	ofetch := kmsg.NewPtrOffsetFetchRequest()
	ofetch.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "g", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID = "g", "m"
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group, leave.Members = "g", []kmsg.LeaveGroupRequestMember{{MemberID: "m"}}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.ProtocolType, sync.Protocol = "g", "m", sp("consumer"), sp("range")
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"g"}
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: "new", NumPartitions: 1, ReplicationFactor: 1}}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: sp("orders")}}
	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "orders", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 0}}}}
	ole := kmsg.NewPtrOffsetForLeaderEpochRequest()
	ole.ReplicaID = -1
	ole.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "orders", Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1}}}}
	da := kmsg.NewPtrDescribeACLsRequest()
	da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = 1, 1, 1, 1
	ca := kmsg.NewPtrCreateACLsRequest()
	ca.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: 2, ResourceName: "orders", ResourcePatternType: 3, Principal: "User:bob", Host: "*", Operation: 2, PermissionType: 3}}
	dla := kmsg.NewPtrDeleteACLsRequest()
	dla.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: 1, ResourcePatternType: 1, Operation: 1, PermissionType: 1}}
	dcT := kmsg.NewPtrDescribeConfigsRequest()
	dcT.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "orders"}}
	dcB := kmsg.NewPtrDescribeConfigsRequest()
	dcB.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"}}
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "orders"}}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "orders", Count: 2}}
	delg := kmsg.NewPtrDeleteGroupsRequest()
	delg.Groups = []string{"g"}
	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g"}}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "g"
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "orders", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	dus := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	aus := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	aus.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "admin", Mechanism: 1}}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgh.Group, cgh.MemberID, cgh.RebalanceTimeoutMillis, cgh.SubscribedTopicNames = "g2", "m1234567890", 10000, []string{"orders"}
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{"g"}
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.ResponsePartitionLimit = 10
	dtp.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "orders"}}
	sgh := kmsg.NewPtrShareGroupHeartbeatRequest()
	sgh.GroupID, sgh.MemberID, sgh.SubscribedTopicNames = "sg", "m1234567890", []string{"orders"}
	sgd := kmsg.NewPtrShareGroupDescribeRequest()
	sgd.GroupIDs = []string{"sg"}
	sf := kmsg.NewPtrShareFetchRequest()
	sf.GroupID, sf.MemberID, sf.ShareSessionEpoch = sp("sg"), sp("m1234567890"), 0
	dso := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	dso.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "sg"}}
	aso := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	aso.GroupID = "sg"
	delso := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	delso.GroupID = "sg"
	cases := []apiCase{
		{"Produce", produce, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode}
		}},
		{"Fetch", fetch, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode}
		}},
		{"ListOffsets", lo, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode}
		}},
		{"Metadata", meta, func(r kmsg.Response) []int16 {
			m := r.(*kmsg.MetadataResponse)
			return []int16{m.Topics[0].ErrorCode, m.Topics[1].ErrorCode}
		}},
		{"Metadata all topics (count)", metaAll, func(r kmsg.Response) []int16 { return []int16{int16(len(r.(*kmsg.MetadataResponse).Topics))} }},
		{"OffsetCommit", commit, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode}
		}},
		{"OffsetFetch", ofetch, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.OffsetFetchResponse).Groups[0].ErrorCode} }},
		{"FindCoordinator", fc, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode}
		}},
		{"JoinGroup", join, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.JoinGroupResponse).ErrorCode} }},
		{"Heartbeat", hb, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.HeartbeatResponse).ErrorCode} }},
		{"LeaveGroup", leave, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.LeaveGroupResponse).ErrorCode} }},
		{"SyncGroup", sync, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.SyncGroupResponse).ErrorCode} }},
		{"DescribeGroups", dg, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode} }},
		{"ListGroups (count)", kmsg.NewPtrListGroupsRequest(), func(r kmsg.Response) []int16 {
			l := r.(*kmsg.ListGroupsResponse)
			return []int16{l.ErrorCode, int16(len(l.Groups))}
		}},
		{"CreateTopics", ct, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode} }},
		{"DeleteTopics", dt, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode} }},
		{"DeleteRecords", dr, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode}
		}},
		{"InitProducerID", kmsg.NewPtrInitProducerIDRequest(), func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.InitProducerIDResponse).ErrorCode} }},
		{"OffsetForLeaderEpoch", ole, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode}
		}},
		{"DescribeACLs", da, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeACLsResponse).ErrorCode} }},
		{"CreateACLs", ca, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreateACLsResponse).Results[0].ErrorCode} }},
		{"DeleteACLs", dla, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DeleteACLsResponse).Results[0].ErrorCode} }},
		{"DescribeConfigs topic", dcT, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode}
		}},
		{"DescribeConfigs broker", dcB, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode}
		}},
		{"AlterConfigs", ac, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode} }},
		{"DescribeLogDirs", kmsg.NewPtrDescribeLogDirsRequest(), func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeLogDirsResponse).ErrorCode} }},
		{"CreatePartitions", cp, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode} }},
		{"DeleteGroups", delg, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode} }},
		{"IncrementalAlterConfigs group", iac, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode}
		}},
		{"OffsetDelete", od, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.OffsetDeleteResponse).ErrorCode} }},
		{"DescribeClientQuotas", kmsg.NewPtrDescribeClientQuotasRequest(), func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeClientQuotasResponse).ErrorCode}
		}},
		{"DescribeUserSCRAMCredentials", dus, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeUserSCRAMCredentialsResponse).ErrorCode}
		}},
		{"AlterUserSCRAMCredentials", aus, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode}
		}},
		{"DescribeCluster (code, ops)", dc, func(r kmsg.Response) []int16 {
			d := r.(*kmsg.DescribeClusterResponse)
			return []int16{d.ErrorCode, int16(d.ClusterAuthorizedOperations)}
		}},
		{"ConsumerGroupHeartbeat", cgh, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode} }},
		{"ConsumerGroupDescribe", cgd, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ConsumerGroupDescribeResponse).Groups[0].ErrorCode}
		}},
		{"DescribeTopicPartitions", dtp, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeTopicPartitionsResponse).Topics[0].ErrorCode}
		}},
		{"ShareGroupHeartbeat", sgh, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode} }},
		{"ShareGroupDescribe", sgd, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ShareGroupDescribeResponse).Groups[0].ErrorCode}
		}},
		{"ShareFetch", sf, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ShareFetchResponse).ErrorCode} }},
		{"DescribeShareGroupOffsets", dso, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DescribeShareGroupOffsetsResponse).Groups[0].ErrorCode}
		}},
		{"AlterShareGroupOffsets", aso, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.AlterShareGroupOffsetsResponse).ErrorCode} }},
		{"DeleteShareGroupOffsets", delso, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.DeleteShareGroupOffsetsResponse).ErrorCode}
		}},
	}
	el := kmsg.NewPtrElectLeadersRequest()
	el.TimeoutMillis = 5000
	el.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "orders", Partitions: []int32{0}}}
	apr := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	apr.TimeoutMillis = 5000
	apr.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "orders", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{1}}}}}
	lpr := kmsg.NewPtrListPartitionReassignmentsRequest()
	lpr.TimeoutMillis = 5000
	cases = append(cases,
		apiCase{"ElectLeaders (top, partition)", el, func(r kmsg.Response) []int16 {
			e := r.(*kmsg.ElectLeadersResponse)
			return []int16{e.ErrorCode, e.Topics[0].Partitions[0].ErrorCode}
		}},
		apiCase{"AlterPartitionReassignments (top, partition)", apr, func(r kmsg.Response) []int16 {
			a := r.(*kmsg.AlterPartitionAssignmentsResponse)
			return []int16{a.ErrorCode, a.Topics[0].Partitions[0].ErrorCode}
		}},
		apiCase{"ListPartitionReassignments", lpr, func(r kmsg.Response) []int16 {
			return []int16{r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode}
		}},
	)
	var b strings.Builder
	for _, c := range cases {
		resp, err := bob.Request(ctx, c.req)
		if err != nil {
			fmt.Fprintf(&b, "%s v%d: error %v\n", c.name, c.req.GetVersion(), err)
			continue
		}
		fmt.Fprintf(&b, "%s: %v\n", c.name, c.codes(resp))
	}
	return b.String()
}
