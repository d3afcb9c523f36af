package broker

// ListPartitionReassignments: v0
//
// Behavior:
// * Lists the reassignments in progress (raftmeta.ListPartitionReassignments)
//   of the given partitions, or of all with topics null. sharq completes a
//   reassignment when it accepts it, so the list is empty, which is
//   Kafka's answer when nothing moves; unknown topics and partitions are
//   left out as Kafka leaves them out.
// * ACLs: DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED at the top
//   level, every requested topic listed without partitions, as Kafka's
//   getErrorResponse).
//
// Version notes:
// * v0 is flexible; it is the only version.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(46, 0, 0, handleListPartitionReassignments) }

func handleListPartitionReassignments(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListPartitionReassignmentsRequest)
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !r.authorizeCluster(opDescribe) {
		msg := "Request ListPartitionReassignments needs DESCRIBE permission."
		resp.ErrorCode, resp.ErrorMessage = errClusterAuthorizationFailed, &msg
		for _, t := range req.Topics {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = t.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	var topics []raftmeta.TopicPartitions
	if req.Topics != nil {
		topics = make([]raftmeta.TopicPartitions, 0, len(req.Topics))
		for _, t := range req.Topics {
			topics = append(topics, raftmeta.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	for _, o := range r.s.meta.ListPartitionReassignments(topics) {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != o.Topic {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = o.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition, rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = o.Partition, o.Replicas, o.Adding, o.Removing
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return resp, nil
}
