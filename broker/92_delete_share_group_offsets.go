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
	keys, err := st.persister.Keys(req.GroupID, nil)
	if err != nil {
		resp.ErrorCode = errKafkaStorage
		return resp, nil
	}
	st.mu.Lock()
	g := st.coord.Group(req.GroupID)
	switch {
	case g == nil && len(keys) == 0:
		st.mu.Unlock()
		resp.ErrorCode = share.GroupErrorCode(share.ErrGroupIDNotFound)
		msg := fmt.Sprintf("Group %s not found.", req.GroupID)
		resp.ErrorMessage = &msg
		return resp, nil
	case g != nil && len(g.Members) > 0:
		st.mu.Unlock()
		resp.ErrorCode = share.GroupErrorCode(share.ErrNonEmptyGroup)
		msg := fmt.Sprintf("Share group %s is not empty.", req.GroupID)
		resp.ErrorMessage = &msg
		return resp, nil
	}
	st.mu.Unlock()
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
				pk := sharePartKey{group: req.GroupID, topicID: topic.ID, partition: k.Partition}
				if code := st.deleteState(pk); code != 0 {
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

// deleteState forgets a share-partition: memory and persisted state.
func (st *shareState) deleteState(k sharePartKey) int16 {
	st.mu.Lock()
	p := st.parts[k]
	delete(st.parts, k)
	st.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		if p.timer != nil {
			p.timer.Stop()
		}
		p.mu.Unlock()
	}
	if err := st.persister.Delete(k.persistKey()); err != nil {
		st.s.logger.Error("delete share-partition state", "err", err)
		return errKafkaStorage
	}
	return 0
}
