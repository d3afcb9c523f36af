package broker

// AlterPartitionReassignments: v0-1
//
// Behavior:
// * Moves partitions to target replica lists through
//   raftmeta.AlterPartitionReassignments, with Kafka 4.4's checks and
//   messages in Kafka's order: unknown topic or partition
//   (UNKNOWN_TOPIC_OR_PARTITION "Unable to find a topic named t." /
//   "Unable to find partition t:9."), null replicas cancel a reassignment
//   in progress (NO_REASSIGNMENT_IN_PROGRESS: sharq completes every
//   reassignment when it accepts it), an empty list, a broker that is not
//   registered or named twice (INVALID_REPLICA_ASSIGNMENT), and, v1 with
//   AllowReplicationFactorChange false, a different replica count
//   (INVALID_REPLICATION_FACTOR "The replication factor is changed from 1
//   to 2"). A target may only name the node ids that share this process's
//   partition logs (a registered node elsewhere: INVALID_REPLICA_ASSIGNMENT
//   saying so); on a single node that is the node itself, which already
//   holds the replica: accepted, nothing changes.
// * The accepted changes are applied together (one metadata command). No
//   topics: an empty answer. A timeout of 0 or less fails the request with
//   REQUEST_TIMED_OUT on every partition and at the top level.
// * ACLs: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED in the same
//   form).
//
// Version notes:
// * v0 is flexible; v1 adds AllowReplicationFactorChange (KIP-860),
//   echoed in the answer (an answer without results, for no topics or a
//   request-level error, says true: Kafka's default).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(45, 0, 1, handleAlterPartitionReassignments) }

func handleAlterPartitionReassignments(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	allowRF := r.version < 1 || req.AllowReplicationFactorChange
	if !r.authorizeCluster(opAlter) {
		return alterReassignmentsError(req, resp, errClusterAuthorizationFailed, kmsg.StringPtr("Request AlterPartitionReassignments needs ALTER permission.")), nil
	}
	if len(req.Topics) == 0 {
		// Kafka answers a fresh response: an empty (not null) message.
		resp.ErrorMessage = kmsg.StringPtr("")
		return resp, nil
	}
	topics := make([]raftmeta.TopicReassignments, 0, len(req.Topics))
	for _, t := range req.Topics {
		tr := raftmeta.TopicReassignments{Topic: t.Topic, Partitions: make([]raftmeta.Reassignment, 0, len(t.Partitions))}
		for _, p := range t.Partitions {
			tr.Partitions = append(tr.Partitions, raftmeta.Reassignment{Partition: p.Partition, Replicas: p.Replicas})
		}
		topics = append(topics, tr)
	}
	ctx, cancel, ok := controllerDeadline(r.ctx, req.TimeoutMillis)
	if !ok {
		return alterReassignmentsError(req, resp, errRequestTimedOut, nil), nil
	}
	defer cancel()
	before := r.s.meta.Image()
	res, err := r.s.meta.AlterPartitionReassignments(ctx, topics, allowRF)
	if r.s.virtual {
		r.s.placementChanged(before) // vnodes_moves.go
	}
	if err != nil {
		code, msg := placementError(err)
		return alterReassignmentsError(req, resp, code, msg), nil
	}
	resp.AllowReplicationFactorChange = allowRF
	for _, t := range res {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			if p.Err != nil {
				rp.ErrorCode, rp.ErrorMessage = placementError(p.Err)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// alterReassignmentsError is Kafka's
// AlterPartitionReassignmentsRequest.getErrorResponse (a fresh response:
// AllowReplicationFactorChange keeps its default, true).
func alterReassignmentsError(req *kmsg.AlterPartitionAssignmentsRequest, resp *kmsg.AlterPartitionAssignmentsResponse, code int16, msg *string) *kmsg.AlterPartitionAssignmentsResponse {
	resp.ErrorCode, resp.ErrorMessage = code, msg
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
