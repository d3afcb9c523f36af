package broker

// OffsetDelete: v0
//
// Behavior:
// * Deletes committed offsets of partitions the group does not consume:
//   GROUP_SUBSCRIBED_TO_TOPIC per partition of a subscribed topic (classic
//   members' subscriptions parsed from their "consumer" protocol
//   metadata; consumer group subscriptions incl. regexes),
//   NON_EMPTY_GROUP for a non-empty classic group of another protocol
//   type, GROUP_ID_NOT_FOUND for an unknown group, UNKNOWN_TOPIC_OR_PARTITION
//   per unknown partition.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(47, 0, 0, handleOffsetDelete) }

func handleOffsetDelete(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	img := r.s.meta.Image()
	if !r.authorize(resGroup, req.Group, opDelete) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	var tps []group.TopicPartition
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if r.authorize(resTopic, t.Topic, opRead) && partitionExists(img, t.Topic, p.Partition) {
				tps = append(tps, group.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			}
		}
	}
	perr, err := r.s.coord.groups.DeleteOffsets(req.Group, tps)
	if err != nil {
		resp.ErrorCode, _ = groupError(err)
		return resp, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if !r.authorize(resTopic, t.Topic, opRead) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			} else if !partitionExists(img, t.Topic, p.Partition) {
				rp.ErrorCode = errUnknownTopicOrPartition
			} else {
				rp.ErrorCode, _ = groupError(perr[group.TopicPartition{Topic: t.Topic, Partition: p.Partition}])
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
