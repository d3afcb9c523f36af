package broker

// Metadata: v0-13
//
// Behavior:
// * Brokers: every registered broker; this node is described by the
//   advertised address of the listener the request arrived on.
// * Topics null (v1+) or empty (v0) = all topics. Topics can be named or,
//   v10+, given by id (unknown id: UNKNOWN_TOPIC_ID).
// * Unknown topics are created when auto.create.topics.enable is on and the
//   request allows it (v4+; always for v0-3), with num.partitions and
//   default.replication.factor. Creation is synchronous here, so the topic is
//   answered at once rather than with LEADER_NOT_AVAILABLE.
// * Topic ids are real, non-zero UUIDs (share consumers key on them).
//
// Version notes:
// * v7: leader epoch; v8-v10: authorized operations; v10: topic ids;
//   v13: top-level error code (KIP-1102 rebootstrap).

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(3, 0, 13, handleMetadata, coordinatorFree) }

// authorizedOperationsNotRequested is Kafka's marker for "not asked for".
const authorizedOperationsNotRequested = -2147483648

func handleMetadata(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	s := r.s
	img := s.meta.Image()

	resp.Brokers = r.brokerList(img)
	clusterID := img.ClusterID
	resp.ClusterID = &clusterID
	resp.ControllerID = img.ControllerID
	resp.AuthorizedOperations = authorizedOperationsNotRequested
	if req.IncludeClusterAuthorizedOperations && r.version >= 8 && r.version <= 10 {
		resp.AuthorizedOperations = 0
		if r.authorizeCluster(opDescribe) {
			resp.AuthorizedOperations = r.authorizedOperations(resCluster, "kafka-cluster", clusterAllOperations)
		}
	}

	allTopics := req.Topics == nil || (r.version == 0 && len(req.Topics) == 0)
	if allTopics {
		names := make([]string, 0, len(img.Topics))
		for name := range img.Topics {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !r.authorize(resTopic, name, opDescribe) {
				continue // Kafka leaves out what the principal may not describe
			}
			resp.Topics = append(resp.Topics, r.describeTopic(img.Topics[name], req.IncludeTopicAuthorizedOperations))
		}
		return resp, nil
	}

	autoCreate := s.cfg.AutoCreateTopicsEnable && (r.version < 4 || req.AllowAutoTopicCreation)
	for _, rt := range req.Topics {
		if rt.Topic == nil {
			var zero [16]byte
			t := img.TopicsByID[raftmeta.UUID(rt.TopicID)]
			if t == nil || rt.TopicID == zero {
				mt := kmsg.NewMetadataResponseTopic()
				mt.ErrorCode = errUnknownTopicID
				mt.TopicID = rt.TopicID
				mt.AuthorizedOperations = authorizedOperationsNotRequested
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			if !r.authorize(resTopic, t.Name, opDescribe) {
				mt := kmsg.NewMetadataResponseTopic()
				mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
				mt.TopicID = rt.TopicID
				mt.AuthorizedOperations = authorizedOperationsNotRequested
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			resp.Topics = append(resp.Topics, r.describeTopic(t, req.IncludeTopicAuthorizedOperations))
			continue
		}
		name := *rt.Topic
		t := img.Topics[name]
		if !r.authorize(resTopic, name, opDescribe) || (t == nil && autoCreate && !r.authorizeCluster(opCreate) && !r.authorize(resTopic, name, opCreate)) {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = &name
			mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
			mt.AuthorizedOperations = authorizedOperationsNotRequested
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		if t == nil && autoCreate && validateTopicName(name) == nil && !isInternalTopic(name) {
			created, err := s.createTopic(r.ctx, name, -1, -1, nil, false)
			if err == nil {
				t = created
			} else if code, _ := metaErrorCode(err); code == errTopicAlreadyExists {
				t = s.meta.Image().Topics[name] // lost a race with another creator
			} else {
				s.logger.Warn("auto-create topic failed", "topic", name, "err", err)
			}
		}
		if t == nil {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = &name
			mt.ErrorCode = errUnknownTopicOrPartition
			if validateTopicName(name) != nil {
				mt.ErrorCode = errInvalidTopic
			}
			mt.AuthorizedOperations = authorizedOperationsNotRequested
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		resp.Topics = append(resp.Topics, r.describeTopic(t, req.IncludeTopicAuthorizedOperations))
	}
	return resp, nil
}

// brokerList describes every registered broker, this one by the address of
// the listener the client used.
func (r *request) brokerList(img *raftmeta.Image) []kmsg.MetadataResponseBroker {
	ids := sortedBrokerIDs(img)
	out := make([]kmsg.MetadataResponseBroker, 0, len(ids))
	for _, id := range ids {
		b := img.Brokers[id]
		adv, ours, listed := r.listedBroker(id)
		if !listed || ours && r.s.virtual && !r.s.nodeUp(id) {
			continue // left over from more virtual brokers, or stopped (fenced)
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID = id
		mb.Host, mb.Port = b.Host, b.Port
		if ours {
			mb.Host, mb.Port = adv.Host, int32(adv.Port)
		}
		if b.Rack != "" {
			rack := b.Rack
			mb.Rack = &rack
		}
		out = append(out, mb)
	}
	return out
}

func (r *request) describeTopic(t *raftmeta.Topic, includeOps bool) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic = &name
	mt.TopicID = t.ID
	mt.IsInternal = isInternalTopic(name)
	mt.AuthorizedOperations = authorizedOperationsNotRequested
	if includeOps {
		mt.AuthorizedOperations = r.authorizedOperations(resTopic, t.Name, topicAllOperations)
	}
	for i, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = int32(i)
		mp.Leader = p.Leader
		mp.LeaderEpoch = p.LeaderEpoch
		mp.Replicas = p.Replicas
		mp.ISR = p.ISR
		mp.OfflineReplicas = r.s.offlineReplicas(p.Replicas)
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}
