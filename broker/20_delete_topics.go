package broker

// DeleteTopics: v1-6
//
// Behavior:
// * Deletes through the metadata store, then removes the partition logs and
//   wakes any long-poll parked on them. delete.topic.enable=false answers
//   TOPIC_DELETION_DISABLED.
// * v6 names topics by name or by id (unknown id: UNKNOWN_TOPIC_ID).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(20, 1, 6, handleDeleteTopics) }

func handleDeleteTopics(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type target struct {
		name *string
		id   [16]byte
	}
	var targets []target
	if r.version < 6 {
		for i := range req.TopicNames {
			targets = append(targets, target{name: &req.TopicNames[i]})
		}
	} else {
		for _, t := range req.Topics {
			targets = append(targets, target{name: t.Topic, id: t.TopicID})
		}
	}
	changed := false
	for _, t := range targets {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = t.name, t.id
		img := r.s.meta.Image()
		var topic *raftmeta.Topic
		if t.name != nil {
			topic = img.Topics[*t.name]
			if !r.authorize(resTopic, *t.name, opDelete) {
				rt.ErrorCode, topic = kerr.TopicAuthorizationFailed.Code, nil
			} else if topic == nil {
				rt.ErrorCode = errUnknownTopicOrPartition
			}
		} else {
			topic = img.TopicsByID[raftmeta.UUID(t.id)]
			switch {
			case topic == nil:
				rt.ErrorCode = errUnknownTopicID
			case !r.authorize(resTopic, topic.Name, opDescribe):
				// The name stays hidden from who may not describe it.
				rt.ErrorCode, topic = kerr.TopicAuthorizationFailed.Code, nil
			case !r.authorize(resTopic, topic.Name, opDelete):
				name := topic.Name
				rt.Topic = &name
				rt.ErrorCode, topic = kerr.TopicAuthorizationFailed.Code, nil
			default:
				name := topic.Name
				rt.Topic = &name
			}
		}
		if topic != nil {
			rt.TopicID = topic.ID
			if !r.s.cfg.DeleteTopicEnable {
				rt.ErrorCode = errTopicDeletionDisabled
			} else if _, err := r.s.meta.DeleteTopic(r.ctx, topic.Name); err != nil {
				code, msg := metaErrorCode(err)
				rt.ErrorCode = code
				rt.ErrorMessage = &msg
			} else {
				changed = true
			}
		}
		if rt.ErrorCode != 0 && rt.ErrorMessage == nil && r.version >= 5 {
			msg := errorMessage(rt.ErrorCode)
			rt.ErrorMessage = &msg
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if changed {
		if err := r.s.syncPartitions(); err != nil {
			r.s.logger.Error("apply topic deletion", "err", err)
		}
	}
	return resp, nil
}
