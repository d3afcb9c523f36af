package broker

// DescribeTopicPartitions: v0
//
// Behavior:
// * Topics by name (empty = every topic), sorted by name, with every
//   partition's leader, epoch, replicas and ISR; eligible leader replicas
//   (KIP-966) are empty lists: with one replica per partition there are
//   none. kafka-topics --describe uses this API in Kafka 4.x.
// * At most ResponsePartitionLimit partitions are returned (default 2000);
//   NextCursor says where to continue, Cursor where to start. A cursor
//   with a negative partition, or naming a topic the request does not
//   list, is INVALID_REQUEST on every listed topic (as Kafka).
// * Unknown topics: UNKNOWN_TOPIC_OR_PARTITION.
// * TopicAuthorizedOperations is always filled (the request has no flag), as
//   Kafka does, except for a topic answered TOPIC_AUTHORIZATION_FAILED.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(75, 0, 0, handleDescribeTopicPartitions, coordinatorFree) }

func handleDescribeTopicPartitions(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	img := r.s.meta.Image()
	var names []string
	if len(req.Topics) == 0 {
		for name := range img.Topics {
			if r.authorize(resTopic, name, opDescribe) {
				names = append(names, name)
			}
		}
	} else {
		for _, t := range req.Topics {
			names = append(names, t.Topic)
		}
	}
	sort.Strings(names)
	limit := int(req.ResponsePartitionLimit)
	if limit <= 0 {
		limit = 2000
	}
	if c := req.Cursor; c != nil {
		// Kafka refuses a negative cursor partition, and a cursor topic that
		// is not among the topics asked for, with INVALID_REQUEST on every
		// topic asked for.
		invalid := c.Partition < 0
		if len(req.Topics) > 0 && !invalid {
			invalid = true
			for _, t := range req.Topics {
				if t.Topic == c.Topic {
					invalid = false
				}
			}
		}
		if invalid {
			for _, t := range req.Topics {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				n := t.Topic
				rt.Topic, rt.ErrorCode = &n, errInvalidRequest
				rt.AuthorizedOperations = authorizedOperationsNotRequested
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		}
	}
	startPartition := int32(0)
	if req.Cursor != nil {
		i := sort.SearchStrings(names, req.Cursor.Topic)
		names = names[i:]
		startPartition = req.Cursor.Partition
	}
	left := limit
	for ti, name := range names {
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		n := name
		rt.Topic = &n
		rt.AuthorizedOperations = authorizedOperationsNotRequested
		t := img.Topics[name]
		if !r.authorize(resTopic, name, opDescribe) {
			rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		// Kafka fills every topic's operations (there is no flag to ask),
		// an unknown topic's too; only one the principal may not describe
		// goes without.
		rt.AuthorizedOperations = r.authorizedOperations(resTopic, name, topicAllOperations)
		if t == nil {
			rt.ErrorCode = errUnknownTopicOrPartition
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		rt.TopicID = t.ID
		rt.IsInternal = isInternalTopic(t.Name)
		first := int32(0)
		if ti == 0 && req.Cursor != nil && req.Cursor.Topic == name {
			first = startPartition
		}
		for p := first; p < int32(len(t.Partitions)); p++ {
			if left == 0 {
				resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: p}
				break
			}
			meta := t.Partitions[p]
			rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
			rp.Partition = p
			rp.LeaderID, rp.LeaderEpoch = meta.Leader, meta.LeaderEpoch
			rp.Replicas, rp.ISR = meta.Replicas, meta.ISR
			rp.EligibleLeaderReplicas, rp.LastKnownELR, rp.OfflineReplicas = []int32{}, []int32{}, r.s.offlineReplicas(meta.Replicas)
			rt.Partitions = append(rt.Partitions, rp)
			left--
		}
		resp.Topics = append(resp.Topics, rt)
		if resp.NextCursor != nil {
			break
		}
	}
	return resp, nil
}
