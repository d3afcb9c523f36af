package broker

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/raftmeta"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/wire golden files")

// goldenServer is a broker with fixed identity (cluster id, node, address)
// so that responses that do not involve random topic ids are byte-stable.
func goldenServer(t *testing.T) *Server {
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	cfg.ClusterID = "c2hhcnEtZ29sZGVuLTAwMQ"
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	s.advertised = []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}
	if err := s.meta.RegisterBroker(context.Background(), raftmeta.Broker{NodeID: cfg.NodeID, Host: "127.0.0.1", Port: 9092}); err != nil {
		t.Fatal(err)
	}
	return s
}

// roundTrip runs one request frame (without the size prefix) through a
// connection and returns the response frame (without the size prefix).
func roundTrip(t *testing.T, s *Server, frame []byte) []byte {
	a, peer := net.Pipe()
	defer a.Close()
	defer peer.Close()
	c := s.newConn(a, 0)
	got := make(chan []byte, 1)
	go func() {
		var hdr [4]byte
		if _, err := io.ReadFull(peer, hdr[:]); err != nil {
			got <- nil
			return
		}
		b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		io.ReadFull(peer, b)
		got <- b
	}()
	if err := c.handleFrame(frame); err != nil {
		t.Fatalf("handle: %v", err)
	}
	return <-got
}

func compareGolden(t *testing.T, name string, data []byte) {
	t.Helper()
	path := filepath.Join("..", "testdata", "wire", name)
	enc := hex.EncodeToString(data) + "\n"
	if *updateGolden {
		if err := os.WriteFile(path, []byte(enc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./broker -run Golden -update)", err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(enc) {
		t.Errorf("%s differs from the golden bytes:\n got %s\nwant %s", name, strings.TrimSpace(enc), strings.TrimSpace(string(want)))
	}
}

// TestGoldenWire pins the exact bytes of deterministic responses. Each case
// stores its request and response as hex under testdata/wire, named
// <key>_<api>_v<version>.
func TestGoldenWire(t *testing.T) {
	s := goldenServer(t)
	type tc = goldenCase
	var cases []tc
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "sharq-golden", "1.0"
		cases = append(cases, tc{"18_api_versions_v" + itoa(int32(v)), req})
	}
	for _, v := range []int16{0, 4, 9, 12, 13} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		req.Topics = []kmsg.MetadataRequestTopic{}
		if v == 0 {
			// v0 has no "no topics" form: an empty list means all, and the
			// golden broker has none.
			req.Topics = nil
		}
		cases = append(cases, tc{"03_metadata_no_topics_v" + itoa(int32(v)), req})
	}
	for _, v := range []int16{0, 2} {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = v
		req.EndpointType = 1
		cases = append(cases, tc{"60_describe_cluster_v" + itoa(int32(v)), req})
	}
	{
		lc := kmsg.NewPtrListConfigResourcesRequest()
		lc.Version, lc.ResourceTypes = 1, []int8{32}
		cases = append(cases, tc{"74_list_config_resources_groups_v1", lc})
		// Telemetry: a given instance id (no subscription: the default
		// interval, no metrics), and a push without one (INVALID_REQUEST).
		gt := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
		gt.ClientInstanceID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		cases = append(cases, tc{"71_get_telemetry_subscriptions_v0", gt})
		cases = append(cases, tc{"72_push_telemetry_no_instance_v0", kmsg.NewPtrPushTelemetryRequest()})
		dt := kmsg.NewPtrDescribeTopicPartitionsRequest()
		dt.ResponsePartitionLimit = 2000
		dt.Topics = append(dt.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: "no-such-topic"})
		cases = append(cases, tc{"75_describe_topic_partitions_unknown_v0", dt})
	}
	// Share group APIs, on their deterministic error paths.
	{
		hb := kmsg.NewPtrShareGroupHeartbeatRequest()
		hb.Version, hb.GroupID, hb.MemberID, hb.MemberEpoch = 1, "g", "", 0
		cases = append(cases, tc{"76_share_group_heartbeat_invalid_v1", hb})
		d := kmsg.NewPtrShareGroupDescribeRequest()
		d.Version, d.GroupIDs = 1, []string{"no-such-group"}
		cases = append(cases, tc{"77_share_group_describe_unknown_v1", d})
		f := kmsg.NewPtrShareFetchRequest()
		f.Version, f.MemberID = 2, kmsg.StringPtr("m")
		cases = append(cases, tc{"78_share_fetch_no_group_v2", f})
		a := kmsg.NewPtrShareAcknowledgeRequest()
		a.Version, a.GroupID, a.MemberID, a.ShareSessionEpoch = 2, kmsg.StringPtr("g"), kmsg.StringPtr("m"), 3
		cases = append(cases, tc{"79_share_acknowledge_no_session_v2", a})
		o := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		o.Version = 1
		og := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		og.GroupID = "no-such-group"
		o.Groups = append(o.Groups, og)
		cases = append(cases, tc{"90_describe_share_group_offsets_unknown_v1", o})
		al := kmsg.NewPtrAlterShareGroupOffsetsRequest()
		al.GroupID = "g"
		at := kmsg.NewAlterShareGroupOffsetsRequestTopic()
		at.Topic = "no-such-topic"
		at.Partitions = append(at.Partitions, kmsg.AlterShareGroupOffsetsRequestTopicPartition{Partition: 0, StartOffset: 0})
		al.Topics = append(al.Topics, at)
		cases = append(cases, tc{"91_alter_share_group_offsets_unknown_topic_v0", al})
		dl := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		dl.GroupID = "no-such-group"
		dl.Topics = append(dl.Topics, kmsg.DeleteShareGroupOffsetsRequestTopic{Topic: "t"})
		cases = append(cases, tc{"92_delete_share_group_offsets_unknown_v0", dl})
	}
	{
		uf := kmsg.NewPtrUpdateFeaturesRequest()
		uf.Version = 2
		uf.FeatureUpdates = append(uf.FeatureUpdates, kmsg.UpdateFeaturesRequestFeatureUpdate{Feature: "no.such.feature", MaxVersionLevel: 1, UpgradeType: 1})
		cases = append(cases, tc{"57_update_features_unknown_v2", uf})
		dq := kmsg.NewPtrDescribeQuorumRequest()
		dq.Version = 2
		dq.Topics = append(dq.Topics, kmsg.DescribeQuorumRequestTopic{Topic: "not-metadata", Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}})
		cases = append(cases, tc{"55_describe_quorum_unknown_v2", dq})
		dcq := kmsg.NewPtrDescribeClientQuotasRequest()
		dcq.Version = 1
		dcq.Components = append(dcq.Components, kmsg.DescribeClientQuotasRequestComponent{EntityType: "client-id", MatchType: 2})
		cases = append(cases, tc{"48_describe_client_quotas_any_client_v1", dcq})
		acq := kmsg.NewPtrAlterClientQuotasRequest()
		acq.Version, acq.ValidateOnly = 1, true
		acq.Entries = append(acq.Entries, kmsg.AlterClientQuotasRequestEntry{
			Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id", Name: kmsg.StringPtr("app")}},
			Ops:    []kmsg.AlterClientQuotasRequestEntryOp{{Key: "no_such_quota", Value: 1}},
		})
		cases = append(cases, tc{"49_alter_client_quotas_bad_key_v1", acq})
	}
	// Transaction APIs for an unknown transactional id.
	{
		ap := kmsg.NewPtrAddPartitionsToTxnRequest()
		ap.Version, ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = 3, "no-such-txn", 1, 0
		ap.Topics = append(ap.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: "t", Partitions: []int32{0}})
		cases = append(cases, tc{"24_add_partitions_to_txn_unknown_topic_v3", ap})
		ap4 := kmsg.NewPtrAddPartitionsToTxnRequest()
		ap4.Version = 5
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.VerifyOnly = "no-such-txn", 1, true
		tx.Topics = append(tx.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: "t", Partitions: []int32{0}})
		ap4.Transactions = append(ap4.Transactions, tx)
		cases = append(cases, tc{"24_add_partitions_to_txn_verify_unknown_v5", ap4})
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.Version, ao.TransactionalID, ao.ProducerID, ao.Group = 4, "no-such-txn", 1, "g"
		cases = append(cases, tc{"25_add_offsets_to_txn_unknown_v4", ao})
		for _, v := range []int16{1, 5} {
			et := kmsg.NewPtrEndTxnRequest()
			et.Version, et.TransactionalID, et.ProducerID, et.Commit = v, "no-such-txn", 1, true
			cases = append(cases, tc{"26_end_txn_unknown_v" + itoa(int32(v)), et})
		}
		wm := kmsg.NewPtrWriteTxnMarkersRequest()
		wm.Version = 1
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.Committed = 1, false
		m.Topics = append(m.Topics, kmsg.WriteTxnMarkersRequestMarkerTopic{Topic: "no-such-topic", Partitions: []int32{0}})
		wm.Markers = append(wm.Markers, m)
		cases = append(cases, tc{"27_write_txn_markers_unknown_topic_v1", wm})
		oc := kmsg.NewPtrTxnOffsetCommitRequest()
		oc.Version, oc.TransactionalID, oc.Group, oc.ProducerID, oc.Generation = 5, "no-such-txn", "g", 1, -1
		cases = append(cases, tc{"28_txn_offset_commit_unknown_v5", oc})
		dp := kmsg.NewPtrDescribeProducersRequest()
		dp.Topics = append(dp.Topics, kmsg.DescribeProducersRequestTopic{Topic: "no-such-topic", Partitions: []int32{0}})
		cases = append(cases, tc{"61_describe_producers_unknown_v0", dp})
		dt := kmsg.NewPtrDescribeTransactionsRequest()
		dt.TransactionalIDs = []string{"no-such-txn", ""}
		cases = append(cases, tc{"65_describe_transactions_unknown_v0", dt})
		for _, v := range []int16{0, 2} {
			lt := kmsg.NewPtrListTransactionsRequest()
			lt.Version, lt.StateFilters = v, []string{"Ongoing", "NoSuchState"}
			cases = append(cases, tc{"66_list_transactions_v" + itoa(int32(v)), lt})
		}
	}
	// SASL APIs on a PLAINTEXT listener: ILLEGAL_SASL_STATE, as KafkaApis.
	{
		h := kmsg.NewPtrSASLHandshakeRequest()
		h.Version, h.Mechanism = 1, "PLAIN"
		cases = append(cases, tc{"17_sasl_handshake_plaintext_v1", h})
		a := kmsg.NewPtrSASLAuthenticateRequest()
		a.Version, a.SASLAuthBytes = 2, []byte("\x00u\x00p")
		cases = append(cases, tc{"36_sasl_authenticate_plaintext_v2", a})
		d := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		d.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "nobody"}, {Name: "twice"}, {Name: "twice"}}
		cases = append(cases, tc{"50_describe_user_scram_credentials_unknown_v0", d})
		al := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		al.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "nobody", Mechanism: 1}}
		al.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "few", Mechanism: 2, Iterations: 1, Salt: []byte("s"), SaltedPassword: []byte("p")}}
		cases = append(cases, tc{"51_alter_user_scram_credentials_invalid_v0", al})
	}
	// ACL APIs without an authorizer: SECURITY_DISABLED, as Kafka.
	{
		d := kmsg.NewPtrDescribeACLsRequest()
		d.Version, d.ResourceType, d.ResourcePatternType, d.Operation, d.PermissionType = 3, 1, 1, 1, 1
		cases = append(cases, tc{"29_describe_acls_no_authorizer_v3", d})
		c := kmsg.NewPtrCreateACLsRequest()
		c.Version = 3
		c.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: 2, ResourceName: "t", ResourcePatternType: 3, Principal: "User:a", Host: "*", Operation: 3, PermissionType: 3}}
		cases = append(cases, tc{"30_create_acls_no_authorizer_v3", c})
		dl := kmsg.NewPtrDeleteACLsRequest()
		dl.Version = 3
		dl.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: 1, ResourcePatternType: 1, Operation: 1, PermissionType: 1}}
		cases = append(cases, tc{"31_delete_acls_no_authorizer_v3", dl})
		q := kmsg.NewPtrDescribeClientQuotasRequest()
		q.Version = 1
		q.Components = []kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: kmsg.QuotasMatchTypeExact, Match: kmsg.StringPtr("alice")}}
		cases = append(cases, tc{"48_describe_client_quotas_none_v1", q})
	}
	// Partition placement on a broker without topics.
	{
		for _, v := range []int16{0, 2} {
			el := kmsg.NewPtrElectLeadersRequest()
			el.Version, el.TimeoutMillis = v, 30000
			el.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "no-such-topic", Partitions: []int32{0, 1}}}
			cases = append(cases, tc{"43_elect_leaders_unknown_v" + itoa(int32(v)), el})
		}
		all := kmsg.NewPtrElectLeadersRequest()
		all.Version, all.ElectionType, all.TimeoutMillis = 2, 1, 30000
		cases = append(cases, tc{"43_elect_leaders_all_unclean_v2", all})
		bad := kmsg.NewPtrElectLeadersRequest()
		bad.Version, bad.ElectionType, bad.TimeoutMillis = 1, 7, 30000
		bad.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0}}}
		cases = append(cases, tc{"43_elect_leaders_bad_type_v1", bad})
		for _, v := range []int16{0, 1} {
			ar := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			ar.Version, ar.TimeoutMillis, ar.AllowReplicationFactorChange = v, 30000, false
			ar.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "no-such-topic", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{
				{Partition: 0, Replicas: []int32{1}}, {Partition: 1}}}}
			cases = append(cases, tc{"45_alter_partition_reassignments_unknown_v" + itoa(int32(v)), ar})
		}
		lr := kmsg.NewPtrListPartitionReassignmentsRequest()
		lr.TimeoutMillis = 30000
		cases = append(cases, tc{"46_list_partition_reassignments_all_v0", lr})
		lu := kmsg.NewPtrListPartitionReassignmentsRequest()
		lu.TimeoutMillis = 30000
		lu.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{{Topic: "no-such-topic", Partitions: []int32{0}}}
		cases = append(cases, tc{"46_list_partition_reassignments_unknown_v0", lu})
	}
	runGoldenCases(t, s, cases)
	t.Run("18_api_versions_unsupported", func(t *testing.T) {
		frame := []byte{0, 18, 0, 99, 0, 0, 0, 7, 0, 0, 0, 0, 0}
		compareGolden(t, "18_api_versions_v99.req.hex", frame)
		compareGolden(t, "18_api_versions_v99.resp.hex", roundTrip(t, s, frame))
	})
}

// goldenCase is one request whose answer is pinned under testdata/wire.
type goldenCase struct {
	file string
	req  kmsg.Request
}

// runGoldenCases stores or compares each case's request and response.
func runGoldenCases(t *testing.T, s *Server, cases []goldenCase) {
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			frame := encodeFrame(c.req)
			compareGolden(t, c.file+".req.hex", frame)
			compareGolden(t, c.file+".resp.hex", roundTrip(t, s, frame))
		})
	}
}

// TestEveryAPIHasGolden: every registered API has at least one golden pair,
// or is listed here with the reason its answer is not byte-stable.
func TestEveryAPIHasGolden(t *testing.T) {
	nondeterministic := map[int16]string{
		0: "offsets and timestamps", 1: "record bytes carry timestamps", 2: "timestamps",
		19: "random topic ids", 20: "random topic ids", 21: "needs records", 22: "producer ids",
		23: "needs records", 32: "config set grows", 33: "needs topics", 35: "disk sizes",
		37: "needs topics", 44: "needs topics",
	}
	entries, _ := os.ReadDir(filepath.Join("..", "testdata", "wire"))
	have := map[string]bool{}
	for _, e := range entries {
		have[strings.SplitN(e.Name(), "_", 2)[0]] = true
	}
	for _, e := range registeredAPIs() {
		key := itoa(int32(e.key))
		if len(key) == 1 {
			key = "0" + key
		}
		if !have[key] && nondeterministic[e.key] == "" {
			t.Errorf("API %d (%s) has no golden file in testdata/wire", e.key, kmsg.NameForKey(e.key))
		}
	}
}
