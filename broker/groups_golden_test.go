package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGroupGoldenWire pins the answers of the group APIs that do not
// depend on random ids: the error paths on an empty broker.
func TestGroupGoldenWire(t *testing.T) {
	s := goldenServer(t)
	type tc = goldenCase
	var cases []tc
	for _, v := range []int16{0, 3, 4, 6} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version = v
		req.CoordinatorKey = "g"
		req.CoordinatorKeys = []string{"g", ""}
		cases = append(cases, tc{"10_find_coordinator_v" + itoa(int32(v)), req})
	}
	txn := kmsg.NewPtrFindCoordinatorRequest()
	txn.Version, txn.CoordinatorType, txn.CoordinatorKeys = 4, 1, []string{"tx"}
	cases = append(cases, tc{"10_find_coordinator_txn_v4", txn})

	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.SessionTimeoutMillis, jg.ProtocolType = 9, "g", 10, "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0}}}
	cases = append(cases, tc{"11_join_group_bad_session_v9", jg})

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	cases = append(cases, tc{"12_heartbeat_unknown_v4", hb})

	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Version, lg.Group = 5, "g"
	lg.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m"}}
	cases = append(cases, tc{"13_leave_group_unknown_v5", lg})

	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.MemberID = 5, "g", "m"
	cases = append(cases, tc{"14_sync_group_unknown_v5", sg})

	for _, v := range []int16{5, 6} {
		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Version, dg.Groups = v, []string{"missing"}
		cases = append(cases, tc{"15_describe_groups_missing_v" + itoa(int32(v)), dg})
	}
	lsg := kmsg.NewPtrListGroupsRequest()
	lsg.Version = 5
	cases = append(cases, tc{"16_list_groups_empty_v5", lsg})

	dlg := kmsg.NewPtrDeleteGroupsRequest()
	dlg.Version, dlg.Groups = 2, []string{"missing"}
	cases = append(cases, tc{"42_delete_groups_missing_v2", dlg})

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 9, "g", -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "nope", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	cases = append(cases, tc{"08_offset_commit_unknown_topic_v9", oc})

	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 9
	of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "missing", MemberEpoch: -1, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}}}
	cases = append(cases, tc{"09_offset_fetch_missing_v9", of})

	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "missing"
	cases = append(cases, tc{"47_offset_delete_missing_v0", od})

	ch := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	ch.Version, ch.Group, ch.MemberID, ch.MemberEpoch = 1, "g", "m", 5
	cases = append(cases, tc{"68_consumer_group_heartbeat_unknown_v1", ch})

	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Version, cd.Groups = 1, []string{"missing"}
	cases = append(cases, tc{"69_consumer_group_describe_missing_v1", cd})

	runGoldenCases(t, s, cases)
}
