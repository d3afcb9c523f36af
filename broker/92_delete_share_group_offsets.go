package broker

// DeleteShareGroupOffsets: v0
//
// Behavior:
// * Removes a group's share-partition state for whole topics; the group
//   must exist (GROUP_ID_NOT_FOUND) and have no members (NON_EMPTY_GROUP).
//   A topic the group has no state for: UNKNOWN_TOPIC_OR_PARTITION for that
//   topic. The share-partitions start afresh (share.auto.offset.reset) on
//   the next fetch.

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/share"
)

func init() { regKey(92, 0, 0, handleDeleteShareGroupOffsets) }

func handleDeleteShareGroupOffsets(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	if !r.s.shareGroupsEnabled() {
		resp.ErrorCode = errUnsupportedVersion
		return resp, nil
	}
	if !r.authorize(resGroup, req.GroupID, opDelete) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	st := r.s.share
	keys, err := st.StoredKeys(req.GroupID)
	if err != nil {
		resp.ErrorCode = errKafkaStorage
		return resp, nil
	}
	if err := st.PrepareDelete(req.GroupID, len(keys)); err != nil {
		resp.ErrorCode = share.ErrorCode(err)
		msg := fmt.Sprintf("Group %s not found.", req.GroupID)
		if errors.Is(err, share.ErrNonEmptyGroup) {
			msg = fmt.Sprintf("Share group %s is not empty.", req.GroupID)
		}
		resp.ErrorMessage = &msg
		return resp, nil
	}
	img := r.s.meta.Image()
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		topic := img.Topics[t.Topic]
		if topic != nil {
			rt.TopicID = topic.ID
		}
		deleted := 0
		if !r.authorize(resTopic, t.Topic, opRead) {
			rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if topic != nil {
			for _, k := range keys {
				if k.TopicID != [16]byte(topic.ID) {
					continue
				}
				if code := st.DeleteState(k); code != 0 {
					rt.ErrorCode = code
				}
				deleted++
			}
		}
		if deleted == 0 && rt.ErrorCode == 0 {
			rt.ErrorCode = errUnknownTopicOrPartition
			msg := fmt.Sprintf("The group has no offset information for topic %s.", t.Topic)
			rt.ErrorMessage = &msg
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
