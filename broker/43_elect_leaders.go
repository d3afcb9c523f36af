package broker

// ElectLeaders: v0-2
//
// Behavior:
// * Elects leaders through raftmeta.ElectLeaders (Kafka 4.4's controller
//   rules): a preferred election is not needed while the first replica
//   leads, an unclean one while the partition has a leader
//   (ELECTION_NOT_NEEDED); otherwise the leader moves, between the node ids
//   that share this process's partition logs only. A single node leads
//   every partition it holds, so every election is ELECTION_NOT_NEEDED.
// * Topics null: every partition of every topic, leaving out those whose
//   leader is already the one asked for (each topic still gets an entry);
//   an empty list: nothing to do, an empty answer.
// * Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION ("No such topic
//   as t", "No such partition as t-9"). An unknown election type fails the
//   request (INVALID_REQUEST) as a timeout of 0 or less does
//   (REQUEST_TIMED_OUT, the controller's deadline has passed): every
//   requested partition carries the error, v1+ also the top level.
// * ACLs: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED, the same
//   whole-request form).
//
// Version notes:
// * v0: preferred elections only, no top-level error code; v1: election
//   type (KIP-460), top-level error code; v2: flexible.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(43, 0, 2, handleElectLeaders) }

func handleElectLeaders(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	if !r.authorizeCluster(opAlter) {
		return electLeadersError(req, resp, errClusterAuthorizationFailed, kmsg.StringPtr("Request ElectLeaders needs ALTER permission.")), nil
	}
	if req.Topics != nil && len(req.Topics) == 0 {
		return resp, nil
	}
	typ := raftmeta.PreferredElection
	if r.version >= 1 {
		typ = raftmeta.ElectionType(req.ElectionType)
	}
	var topics []raftmeta.TopicPartitions
	if req.Topics != nil {
		topics = make([]raftmeta.TopicPartitions, 0, len(req.Topics))
		for _, t := range req.Topics {
			topics = append(topics, raftmeta.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	ctx, cancel, ok := controllerDeadline(r.ctx, req.TimeoutMillis)
	if !ok {
		return electLeadersError(req, resp, errRequestTimedOut, nil), nil
	}
	defer cancel()
	before := r.s.meta.Image()
	res, err := r.s.meta.ElectLeaders(ctx, typ, topics)
	if r.s.virtual {
		r.s.placementChanged(before) // vnodes_moves.go
	}
	if err != nil {
		code, msg := placementError(err)
		return electLeadersError(req, resp, code, msg), nil
	}
	for _, t := range res {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ElectLeadersResponseTopicPartition, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
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

// electLeadersError is Kafka's ElectLeadersRequest.getErrorResponse: the
// error on every requested partition and at the top level.
func electLeadersError(req *kmsg.ElectLeadersRequest, resp *kmsg.ElectLeadersResponse, code int16, msg *string) *kmsg.ElectLeadersResponse {
	resp.ErrorCode = code
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ElectLeadersResponseTopicPartition, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// controllerDeadline is Kafka's ControllerRequestContext deadline: now +
// timeoutMs. A deadline that has already passed (0 or less) fails the
// request before it runs (REQUEST_TIMED_OUT without a message, measured on
// Kafka 4.4); ok is false then.
func controllerDeadline(parent context.Context, timeoutMs int32) (context.Context, context.CancelFunc, bool) {
	if timeoutMs <= 0 {
		return nil, nil, false
	}
	ctx, cancel := context.WithTimeout(parent, time.Duration(timeoutMs)*time.Millisecond)
	return ctx, cancel, true
}

// placementError maps an error of raftmeta's placement calls to the code
// and message Kafka sends (nil where Kafka sends none).
func placementError(err error) (int16, *string) {
	var pe *raftmeta.PartitionError
	if errors.As(err, &pe) {
		if pe.Msg == "" {
			return pe.Code, nil
		}
		return pe.Code, &pe.Msg
	}
	code, msg := metaErrorCode(err)
	if code == errRequestTimedOut {
		return code, nil
	}
	return code, &msg
}
