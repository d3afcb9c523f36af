package broker

// CreatePartitions: v0-3
//
// Behavior:
// * Grows a topic's partition count through the metadata store; the new
//   partition logs are created on first use. Shrinking or keeping the count is INVALID_PARTITIONS,
//   an unknown topic UNKNOWN_TOPIC_OR_PARTITION, a topic named twice
//   INVALID_REQUEST. Manual assignments must name registered brokers.
//   Growing past sharq.max.partitions is POLICY_VIOLATION naming the limit.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(37, 0, 3, handleCreatePartitions) }

func handleCreatePartitions(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := make(map[string]int)
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	changed := false
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		fail := func(code int16, msg string) {
			rt.ErrorCode = code
			rt.ErrorMessage = &msg
		}
		img := r.s.meta.Image()
		topic := img.Topics[t.Topic]
		switch {
		case seen[t.Topic] > 1:
			fail(errInvalidRequest, "Duplicate topic in request.")
		case !r.authorize(resTopic, t.Topic, opAlter):
			fail(kerr.TopicAuthorizationFailed.Code, "The topic authorization is failed.")
		case topic == nil:
			fail(errUnknownTopicOrPartition, fmt.Sprintf("The topic '%s' does not exist.", t.Topic))
		case t.Count < int32(len(topic.Partitions)):
			fail(errInvalidPartitions, fmt.Sprintf("The topic %s currently has %d partition(s); %d would not be an increase.", t.Topic, len(topic.Partitions), t.Count))
		case t.Count == int32(len(topic.Partitions)):
			fail(errInvalidPartitions, fmt.Sprintf("Topic already has %d partition(s).", t.Count))
		case t.Assignment != nil && len(t.Assignment) != int(t.Count)-len(topic.Partitions):
			fail(kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", int(t.Count)-len(topic.Partitions), len(t.Assignment)))
		default:
			for _, a := range t.Assignment {
				for _, b := range a.Replicas {
					if _, ok := img.Brokers[b]; !ok && rt.ErrorCode == 0 {
						fail(kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", b))
					}
				}
			}
			if rt.ErrorCode == 0 {
				if err := r.s.checkPartitionLimit(img, t.Topic, int64(t.Count)-int64(len(topic.Partitions))); err != nil {
					code, msg := metaErrorCode(err)
					fail(code, msg)
				}
			}
			if rt.ErrorCode != 0 || req.ValidateOnly {
				break
			}
			if err := r.s.meta.CreatePartitions(r.ctx, t.Topic, t.Count); err != nil {
				code, msg := metaErrorCode(err)
				fail(code, msg)
				break
			}
			changed = true
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if changed {
		if err := r.s.syncPartitions(); err != nil {
			r.s.logger.Error("open new partitions", "err", err)
		}
	}
	return resp, nil
}
