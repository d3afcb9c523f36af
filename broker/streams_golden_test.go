package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStreamsGoldenWire pins the streams group APIs on their deterministic
// paths: a heartbeat from a member the group does not know, a describe of
// a group that does not exist, and a topology description update (no
// plugin, as on a Kafka broker without one).
func TestStreamsGoldenWire(t *testing.T) {
	s := goldenServer(t)
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch = 1, "app", "m", 5
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Version, d.Groups, d.IncludeTopologyDescription = 1, []string{"no-such-group"}, true
	tu := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	tu.Group, tu.MemberID = "app", "m"
	runGoldenCases(t, s, []goldenCase{
		{"88_streams_group_heartbeat_unknown_v1", hb},
		{"89_streams_group_describe_unknown_v1", d},
		{"93_streams_group_topology_description_update_no_plugin_v0", tu},
	})
}
