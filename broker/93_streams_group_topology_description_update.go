package broker

// StreamsGroupTopologyDescriptionUpdate: v0
//
// Behavior:
// * KIP-1331: a streams client sends its full topology description when a
//   heartbeat answer sets TopologyDescriptionRequired, for a broker-side
//   topology description plugin to store. sharq has no such plugin and
//   never asks, so the request is answered as a Kafka 4.4 broker without
//   one answers it: UNSUPPORTED_VERSION "The broker has no streams group
//   topology description plugin configured." (after the checks Kafka's
//   KafkaApis makes first: streams groups enabled, READ on the group).
// * Nothing is stored.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(93, 0, 0, handleStreamsGroupTopologyDescriptionUpdate) }

func handleStreamsGroupTopologyDescriptionUpdate(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.StreamsGroupTopologyDescriptionUpdateRequest)
	resp := req.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	switch {
	case !r.s.streamsGroupsEnabled():
		resp.ErrorCode = errUnsupportedVersion
	case !r.authorize(resGroup, req.Group, opRead):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	default:
		resp.ErrorCode = errUnsupportedVersion
		resp.ErrorMessage = kmsg.StringPtr("The broker has no streams group topology description plugin configured.")
	}
	return resp, nil
}
