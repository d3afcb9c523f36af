package broker

// StreamsGroupHeartbeat: v0-1
//
// Behavior:
// * KIP-1071 streams groups (group.Coordinator.StreamsHeartbeat): member
//   epoch 0 joins with the application's topology, -1 leaves, -2 leaves a
//   static member temporarily; tasks are assigned by the broker ("sticky":
//   balanced active tasks kept with their owners, standby replicas per
//   group.streams.num.standby.replicas / streams.num.standby.replicas on
//   other processes) and handed over only once revoked.
// * Status list as Kafka: MISSING_SOURCE_TOPICS, MISSING_INTERNAL_TOPICS,
//   INCORRECTLY_PARTITIONED_TOPICS, STALE_TOPOLOGY, SHUTDOWN_APPLICATION.
// * Internal topics (repartition and changelog topics with the partition
//   counts and configs the topology asks for) are created here after the
//   heartbeat, as Kafka's KafkaApis does: with CREATE on the cluster, or
//   else on every one of the topics; otherwise the MISSING_INTERNAL_TOPICS
//   detail says "Unauthorized to CREATE on topics ...". The topics exist
//   for the member's next heartbeat.
// * UNSUPPORTED_VERSION unless streams.version >= 1 is finalized and
//   group.coordinator.rebalance.protocols names streams.
// * STREAMS_INVALID_TOPOLOGY before the coordinator sees the topology, as
//   Kafka: "Use of Kafka internal topics ... in a Kafka Streams topology is
//   prohibited." and "Topic names ... are not valid topic names."
// * ACLs: READ on the group; DESCRIBE on every topic of a joining
//   member's topology (TOPIC_AUTHORIZATION_FAILED).
//
// Version notes:
// * v1: AcceptableRecoveryLag (int64) replaces the v0 int32 field;
//   TopologyDescriptionRequired is never set (sharq has no topology
//   description plugin, as a Kafka broker without one).

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(88, 0, 1, handleStreamsGroupHeartbeat) }

// streamsGroupsEnabled: StreamsGroupHeartbeat answers UNSUPPORTED_VERSION
// unless group.coordinator.rebalance.protocols names streams and
// streams.version is finalized at 1 or more, as Kafka 4.4's KafkaApis
// checks (kafka-features.sh disable --feature streams.version turns them
// off).
func (s *Server) streamsGroupsEnabled() bool {
	if s.meta.Image().Features["streams.version"] < 1 {
		return false
	}
	for _, p := range s.effectiveConfig().GroupCoordinatorRebalanceProtocols {
		if p == "streams" {
			return true
		}
	}
	return false
}

func handleStreamsGroupHeartbeat(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.StreamsGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	resp.MemberID = req.MemberID
	if !r.s.streamsGroupsEnabled() {
		resp.ErrorCode = errUnsupportedVersion
		return resp, nil
	}
	if !r.authorize(resGroup, req.Group, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	hr := group.StreamsHeartbeatRequest{
		Group:               req.Group,
		MemberID:            req.MemberID,
		MemberEpoch:         req.MemberEpoch,
		InstanceID:          req.InstanceID,
		RackID:              req.RackID,
		RebalanceTimeout:    time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		ProcessID:           req.ProcessID,
		TaskOffsets:         streamsTaskOffsets(req.TaskOffsets),
		TaskEndOffsets:      streamsTaskOffsets(req.TaskEndOffsets),
		ShutdownApplication: req.ShutdownApplication,
		ClientID:            r.clientID,
		ClientHost:          r.clientHost(),
	}
	if req.RebalanceTimeoutMillis < 0 {
		hr.RebalanceTimeout = -1
	}
	if req.ActiveTasks != nil {
		hr.Active = streamsTasksIn(req.ActiveTasks)
	}
	if req.StandbyTasks != nil {
		hr.Standby = streamsTasksIn(req.StandbyTasks)
	}
	if req.WarmupTasks != nil {
		hr.Warmup = streamsTasksIn(req.WarmupTasks)
	}
	if req.UserEndpoint != nil {
		hr.UserEndpoint = &group.StreamsEndpoint{Host: req.UserEndpoint.Host, Port: req.UserEndpoint.Port}
	}
	if req.ClientTags != nil {
		hr.ClientTags = make(map[string]string, len(req.ClientTags))
		for _, t := range req.ClientTags {
			hr.ClientTags[t.Key] = t.Value
		}
	}
	if req.Topology != nil {
		t, err := streamsTopologyIn(req.Topology)
		if err != nil {
			resp.ErrorCode, resp.ErrorMessage = kerr.StreamsInvalidTopology.Code, kmsg.StringPtr(err.Error())
			return resp, nil
		}
		topics := streamsTopologyTopics(t)
		var internal, bad []string
		for _, n := range topics {
			if isInternalTopic(n) {
				internal = append(internal, n)
			}
			if validateTopicName(n) != nil {
				bad = append(bad, n)
			}
		}
		if len(internal) > 0 {
			resp.ErrorCode = kerr.StreamsInvalidTopology.Code
			resp.ErrorMessage = kmsg.StringPtr("Use of Kafka internal topics " + strings.Join(internal, ", ") + " in a Kafka Streams topology is prohibited.")
			return resp, nil
		}
		if len(bad) > 0 {
			resp.ErrorCode = kerr.StreamsInvalidTopology.Code
			resp.ErrorMessage = kmsg.StringPtr("Topic names " + strings.Join(bad, ", ") + " are not valid topic names.")
			return resp, nil
		}
		for _, n := range topics {
			if !r.authorize(resTopic, n, opDescribe) {
				// Kafka answers without a message.
				resp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				return resp, nil
			}
		}
		hr.Topology = t
	}
	res := r.s.coord.groups.StreamsHeartbeat(hr)
	resp.ErrorCode, resp.ErrorMessage = groupError(res.Err)
	if res.Err != nil {
		return resp, nil
	}
	resp.MemberID = res.MemberID
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval / time.Millisecond)
	resp.TaskOffsetIntervalMillis = int32(res.TaskOffsetInterval / time.Millisecond)
	resp.AcceptableRecoveryLag = res.AcceptableRecoveryLag
	resp.AcceptableRecoveryLagLegacy = int32(min(res.AcceptableRecoveryLag, 1<<31-1))
	resp.EndpointInformationEpoch = res.EndpointInformationEpoch
	if res.MemberEpoch < 0 {
		return resp, nil
	}
	resp.ActiveTasks = streamsTasksOut(res.Active)
	resp.StandbyTasks = streamsTasksOut(res.Standby)
	resp.WarmupTasks = streamsTasksOut(res.Warmup)
	for _, s := range res.Status {
		st := kmsg.NewStreamsGroupHeartbeatResponseStatus()
		st.StatusCode, st.StatusDetail = s.Code, s.Detail
		resp.Status = append(resp.Status, st)
	}
	if len(res.CreateTopics) > 0 {
		if detail := r.createStreamsInternalTopics(res.CreateTopics); detail != "" {
			for i := range resp.Status {
				if resp.Status[i].StatusCode == group.StreamsStatusMissingInternalTopics {
					resp.Status[i].StatusDetail += "; " + detail
				}
			}
		}
	}
	if req.EndpointInformationEpoch < res.EndpointInformationEpoch {
		resp.PartitionsByUserEndpoint = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
		for _, e := range res.PartitionsByEndpoint {
			pe := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
			pe.UserEndpoint.Host, pe.UserEndpoint.Port = e.Endpoint.Host, e.Endpoint.Port
			for _, t := range sortedKeys(e.Active) {
				p := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition()
				p.Topic, p.Partitions = t, e.Active[t]
				pe.ActivePartitions = append(pe.ActivePartitions, p)
			}
			for _, t := range sortedKeys(e.Standby) {
				p := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition()
				p.Topic, p.Partitions = t, e.Standby[t]
				pe.StandbyPartitions = append(pe.StandbyPartitions, p)
			}
			resp.PartitionsByUserEndpoint = append(resp.PartitionsByUserEndpoint, pe)
		}
	}
	return resp, nil
}

// createStreamsInternalTopics creates the internal topics a streams group
// needs through the ordinary create-topic path. It returns what to add to
// the MISSING_INTERNAL_TOPICS detail ("" when every topic was asked for).
func (r *request) createStreamsInternalTopics(topics []group.StreamsInternalTopic) string {
	if !r.authorizeCluster(opCreate) {
		var denied []string
		for _, t := range topics {
			if !r.authorize(resTopic, t.Name, opCreate) {
				denied = append(denied, t.Name)
			}
		}
		if len(denied) > 0 {
			sort.Strings(denied)
			return "Unauthorized to CREATE on topics " + strings.Join(denied, ", ") + "."
		}
	}
	var failed []string
	for _, t := range topics {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := r.s.createTopic(ctx, t.Name, t.Partitions, t.ReplicationFactor, t.Configs, false)
		cancel()
		if err == nil {
			r.s.logger.Info("created streams internal topic", "topic", t.Name, "partitions", t.Partitions)
			continue
		}
		if code, _ := metaErrorCode(err); code == errTopicAlreadyExists {
			continue
		}
		r.s.logger.Warn("create streams internal topic", "topic", t.Name, "err", err)
		failed = append(failed, fmt.Sprintf("%s: %v", t.Name, err))
	}
	if len(failed) > 0 {
		return "Failed to create internal topics: " + strings.Join(failed, "; ") + "."
	}
	return ""
}

// streamsTopologyIn converts the wire topology, resolving the copartition
// groups' indexes to topic names.
func streamsTopologyIn(wt *kmsg.StreamsGroupHeartbeatRequestTopology) (*group.StreamsTopology, error) {
	t := &group.StreamsTopology{Epoch: wt.Epoch}
	topicInfos := func(in []kmsg.TopicInfo) []group.StreamsTopicInfo {
		out := make([]group.StreamsTopicInfo, 0, len(in))
		for _, ti := range in {
			gi := group.StreamsTopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, ReplicationFactor: ti.ReplicationFactor}
			for _, c := range ti.Configs {
				gi.Configs = append(gi.Configs, group.StreamsTopicConfig{Key: c.Key, Value: c.Value})
			}
			out = append(out, gi)
		}
		return out
	}
	for _, s := range wt.Subtopologies {
		gs := group.StreamsSubtopology{
			ID:                      s.SubtopologyID,
			SourceTopics:            s.SourceTopics,
			SourceTopicRegex:        s.SourceTopicRegex,
			RepartitionSinkTopics:   s.RepartitionSinkTopics,
			StateChangelogTopics:    topicInfos(s.StateChangelogTopics),
			RepartitionSourceTopics: topicInfos(s.RepartitionSourceTopics),
		}
		for _, cg := range s.CopartitionGroups {
			var names []string
			for _, i := range cg.SourceTopics {
				if i < 0 || int(i) >= len(s.SourceTopics) {
					return nil, fmt.Errorf("Copartition group of subtopology %s refers to source topic index %d, out of range.", s.SubtopologyID, i)
				}
				names = append(names, s.SourceTopics[i])
			}
			for _, i := range cg.RepartitionSourceTopics {
				if i < 0 || int(i) >= len(s.RepartitionSourceTopics) {
					return nil, fmt.Errorf("Copartition group of subtopology %s refers to repartition source topic index %d, out of range.", s.SubtopologyID, i)
				}
				names = append(names, s.RepartitionSourceTopics[i].Topic)
			}
			gs.CopartitionGroups = append(gs.CopartitionGroups, names)
		}
		t.Subtopologies = append(t.Subtopologies, gs)
	}
	return t, nil
}

// streamsTopologyTopics are the topics a topology names (Kafka checks
// DESCRIBE on each of them).
func streamsTopologyTopics(t *group.StreamsTopology) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			add(n)
		}
		for _, n := range s.RepartitionSinkTopics {
			add(n)
		}
		for _, ti := range s.RepartitionSourceTopics {
			add(ti.Name)
		}
		for _, ti := range s.StateChangelogTopics {
			add(ti.Name)
		}
	}
	sort.Strings(out)
	return out
}

func streamsTasksIn(in []kmsg.TaskIDs) map[string][]int32 {
	out := make(map[string][]int32, len(in))
	for _, t := range in {
		out[t.SubtopologyID] = append(out[t.SubtopologyID], t.Partitions...)
	}
	return out
}

// streamsTasksOut encodes tasks by subtopology; nil (unchanged) stays nil,
// which the wire carries as null.
func streamsTasksOut(m map[string][]int32) []kmsg.TaskIDs {
	if m == nil {
		return nil
	}
	out := make([]kmsg.TaskIDs, 0, len(m))
	for _, s := range sortedKeys(m) {
		t := kmsg.NewTaskIDs()
		t.SubtopologyID, t.Partitions = s, m[s]
		out = append(out, t)
	}
	return out
}

func streamsTaskOffsets(in []kmsg.TaskOffset) []group.StreamsTaskOffset {
	if in == nil {
		return nil
	}
	out := make([]group.StreamsTaskOffset, 0, len(in))
	for _, o := range in {
		out = append(out, group.StreamsTaskOffset{Subtopology: o.SubtopologyID, Partition: o.Partition, Offset: o.Offset})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
