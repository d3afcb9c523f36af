package broker

// OffsetCommit: v2-10
//
// Behavior:
// * Stores offsets durably (group.OffsetStore, pebble with Sync) before
//   answering. Members of a classic group commit with their generation
//   (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS while
//   completing a rebalance, FENCED_INSTANCE_ID); members of a consumer
//   group with their member epoch (STALE_MEMBER_EPOCH; before v9
//   UNSUPPORTED_VERSION, Kafka's rule for consumer-protocol members).
//   Generation -1 commits from outside the group, allowed while the group
//   is empty; a member's commit to a group that does not exist is
//   GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before.
// * Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION (v10 by topic
//   id: UNKNOWN_TOPIC_ID). Metadata longer than offset.metadata.max.bytes:
//   OFFSET_METADATA_TOO_LARGE.
// * The retention time of v2-4 is ignored (Kafka ignores it since 2.1).
//
// Version notes:
// * v0-1 are gone in Kafka 4 (KIP-896); v6: leader epoch; v7: instance id;
//   v8: flexible; v9: KIP-848 member epochs (STALE_MEMBER_EPOCH);
//   v10: topic ids.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(8, 2, 10, handleOffsetCommit) }

func handleOffsetCommit(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	img := r.s.meta.Image()
	codes := make([][]int16, len(req.Topics))
	names := make([]string, len(req.Topics))
	cr := group.CommitRequest{
		Group:           req.Group,
		MemberID:        req.MemberID,
		InstanceID:      req.InstanceID,
		Generation:      req.Generation,
		Offsets:         map[group.TopicPartition]group.Offset{},
		StaleEpochError: r.version >= 9,
	}
	for i, t := range req.Topics {
		codes[i] = make([]int16, len(t.Partitions))
		name := t.Topic
		unknown := errUnknownTopicOrPartition
		if r.version >= 10 {
			name = topicNameByID(img, t.TopicID)
			unknown = errUnknownTopicID
		}
		names[i] = name
		groupOK := r.authorize(resGroup, req.Group, opRead)
		topicOK := name == "" || r.authorize(resTopic, name, opRead)
		for j, p := range t.Partitions {
			if !groupOK {
				codes[i][j] = kerr.GroupAuthorizationFailed.Code
				continue
			}
			if !topicOK {
				codes[i][j] = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if name == "" || !partitionExists(img, name, p.Partition) {
				codes[i][j] = unknown
				if name != "" {
					codes[i][j] = errUnknownTopicOrPartition
				}
				continue
			}
			epoch := p.LeaderEpoch
			if r.version < 6 {
				epoch = -1
			}
			cr.Offsets[group.TopicPartition{Topic: name, Partition: p.Partition}] = group.Offset{Offset: p.Offset, LeaderEpoch: epoch, Metadata: strOr(p.Metadata)}
		}
	}
	var perr map[group.TopicPartition]error
	var gerr error
	if req.Group == "" {
		gerr = group.ErrInvalidGroupID
	} else if len(cr.Offsets) > 0 {
		perr, gerr = r.s.coord.groups.CommitOffsets(cr)
	}
	if gerr != nil && group.ErrorCode(gerr) == kerr.UnknownServerError.Code {
		r.s.logger.Error("commit offsets", "group", req.Group, "err", gerr)
		gerr = nil
		perr = nil
		for i := range codes {
			for j := range codes[i] {
				if codes[i][j] == 0 {
					codes[i][j] = kerr.KafkaStorageError.Code
				}
			}
		}
	}
	for i, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for j, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = codes[i][j]
			if rp.ErrorCode == 0 {
				if gerr != nil {
					rp.ErrorCode, _ = groupError(gerr)
				} else if e := perr[group.TopicPartition{Topic: names[i], Partition: p.Partition}]; e != nil {
					rp.ErrorCode, _ = groupError(e)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
