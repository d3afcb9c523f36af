package broker

// AlterShareGroupOffsets: v0
//
// Behavior:
// * Sets the start offset (SPSO) of share-partitions of a group with no
//   members (else NON_EMPTY_GROUP); the group is created if absent. The
//   in-flight state is dropped and the state epoch moves on, durably.
//   Unknown topics or partitions: UNKNOWN_TOPIC_OR_PARTITION; an offset
//   outside [log start, high watermark]: OFFSET_OUT_OF_RANGE.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/share"
)

func init() { regKey(91, 0, 0, handleAlterShareGroupOffsets) }

func handleAlterShareGroupOffsets(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if !r.s.shareGroupsEnabled() {
		resp.ErrorCode = errUnsupportedVersion
		return resp, nil
	}
	if !r.authorize(resGroup, req.GroupID, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	if err := r.s.share.PrepareReset(req.GroupID); err != nil {
		resp.ErrorCode = share.ErrorCode(err)
		msg := fmt.Sprintf("Share group %s is not empty.", req.GroupID)
		resp.ErrorMessage = &msg
		return resp, nil
	}
	img := r.s.meta.Image()
	for _, t := range req.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		topic := img.Topics[t.Topic]
		if topic != nil {
			rt.TopicID = topic.ID
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			if !r.authorize(resTopic, t.Topic, opRead) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			var pt *partition
			if topic != nil {
				pt = r.s.partitionFor(topic.Name, p.Partition)
			}
			if pt == nil {
				rp.ErrorCode = errUnknownTopicOrPartition
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			l, err := pt.acquire()
			if err != nil {
				rp.ErrorCode = log.ErrorCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			outside := p.StartOffset < l.LogStartOffset() || p.StartOffset > l.HighWatermark()
			pt.release()
			if outside {
				rp.ErrorCode = errOffsetOutOfRange
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			rp.ErrorCode = r.s.share.ResetOffset(share.Key{Group: req.GroupID, TopicID: topic.ID, Partition: p.Partition}, p.StartOffset)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
