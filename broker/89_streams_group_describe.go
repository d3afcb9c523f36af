package broker

// StreamsGroupDescribe: v0-1
//
// Behavior:
// * KIP-1071 streams groups: state (Empty, NotReady, Assigning,
//   Reconciling, Stable), group and assignment epochs, the topology the
//   group runs (subtopologies with source, repartition and changelog
//   topics), members with process id, endpoint, client tags, task offsets,
//   current and target assignments.
// * An unknown group: GROUP_ID_NOT_FOUND "Group g not found."; a group of
//   another type: GROUP_ID_NOT_FOUND "Group g is not a streams group."
// * ACLs: DESCRIBE on the group; DESCRIBE on every topic of the topology,
//   else TOPIC_AUTHORIZATION_FAILED for the group.
//
// Version notes:
// * v1: AssignorName ("sticky"), TopologyDescriptionStatus: NOT_REQUESTED
//   (0) unless IncludeTopologyDescription, then NOT_STORED (1): sharq has
//   no topology description plugin, as a Kafka broker without one.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(89, 0, 1, handleStreamsGroupDescribe) }

func handleStreamsGroupDescribe(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.StreamsGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	for _, id := range req.Groups {
		g := kmsg.NewStreamsGroupDescribeResponseGroup()
		g.Group = id
		g.AuthorizedOperations = authorizedOperationsNotRequested
		if !r.authorize(resGroup, id, opDescribe) {
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if req.IncludeAuthorizedOperations {
			g.AuthorizedOperations = r.authorizedOperations(resGroup, id, groupAllOperations)
		}
		d, err := r.s.coord.groups.DescribeStreams(id)
		if err != nil {
			g.ErrorCode, g.ErrorMessage = groupError(err)
			for _, o := range r.s.coord.others {
				if o.Owns(id) {
					msg := fmt.Sprintf("Group %s is not a streams group.", id)
					g.ErrorCode, g.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
				}
			}
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g.State, g.Epoch, g.AssignmentEpoch = d.State, d.Epoch, d.AssignmentEpoch
		if r.version >= 1 {
			name := d.Assignor
			g.AssignorName = &name
			if req.IncludeTopologyDescription {
				g.TopologyDescriptionStatus = 1 // NOT_STORED
			}
		}
		if d.Topology != nil {
			if denied := r.streamsTopicsDenied(d.Topology); denied {
				g.ErrorCode = kerr.TopicAuthorizationFailed.Code
				g.ErrorMessage = kmsg.StringPtr("The described group uses topics that the client is not authorized to describe.")
				resp.Groups = append(resp.Groups, g)
				continue
			}
			g.Topology = streamsTopologyOut(d.Topology)
		}
		g.Members = []kmsg.StreamsGroupDescribeResponseGroupMember{}
		for _, m := range d.Members {
			gm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
			gm.MemberID, gm.MemberEpoch, gm.ClientID, gm.ClientHost = m.MemberID, m.Epoch, m.ClientID, m.ClientHost
			gm.TopologyEpoch, gm.ProcessID = m.TopologyEpoch, m.ProcessID
			if m.InstanceID != "" {
				v := m.InstanceID
				gm.InstanceID = &v
			}
			if m.RackID != "" {
				v := m.RackID
				gm.RackID = &v
			}
			if m.Endpoint != nil {
				e := kmsg.NewStreamsGroupDescribeResponseGroupMemberUserEndpoint()
				e.Host, e.Port = m.Endpoint.Host, m.Endpoint.Port
				gm.UserEndpoint = &e
			}
			gm.ClientTags = []kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{}
			for _, k := range sortedKeys(m.ClientTags) {
				t := kmsg.NewStreamsGroupDescribeResponseGroupMemberClientTag()
				t.Key, t.Value = k, m.ClientTags[k]
				gm.ClientTags = append(gm.ClientTags, t)
			}
			gm.TaskOffsets = streamsTaskOffsetsOut(m.TaskOffsets)
			gm.TaskEndOffsets = streamsTaskOffsetsOut(m.TaskEndOffsets)
			gm.Assignment.ActiveTasks = streamsTasksOut(m.Active)
			gm.Assignment.StandbyTasks = streamsTasksOut(m.Standby)
			gm.Assignment.WarmupTasks = streamsTasksOut(m.Warmup)
			gm.TargetAssignment.ActiveTasks = streamsTasksOut(m.TargetActive)
			gm.TargetAssignment.StandbyTasks = streamsTasksOut(m.TargetStandby)
			gm.TargetAssignment.WarmupTasks = []kmsg.TaskIDs{}
			g.Members = append(g.Members, gm)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

// streamsTopicsDenied reports whether the principal may not describe one
// of the topology's topics.
func (r *request) streamsTopicsDenied(t *group.StreamsTopology) bool {
	if r.s.authz == nil {
		return false
	}
	for _, n := range streamsTopologyTopics(t) {
		if !r.authorize(resTopic, n, opDescribe) {
			return true
		}
	}
	return false
}

func streamsTopologyOut(t *group.StreamsTopology) *kmsg.StreamsGroupDescribeResponseGroupTopology {
	out := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
	out.Epoch = t.Epoch
	out.Subtopologies = []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{}
	infos := func(in []group.StreamsTopicInfo) []kmsg.TopicInfo {
		res := make([]kmsg.TopicInfo, 0, len(in))
		for _, ti := range in {
			w := kmsg.NewTopicInfo()
			w.Topic, w.NumPartitions, w.ReplicationFactor = ti.Name, ti.Partitions, ti.ReplicationFactor
			w.Configs = []kmsg.TopicInfoConfig{}
			for _, c := range ti.Configs {
				kv := kmsg.NewTopicInfoConfig()
				kv.Key, kv.Value = c.Key, c.Value
				w.Configs = append(w.Configs, kv)
			}
			res = append(res, w)
		}
		return res
	}
	for _, s := range t.Subtopologies {
		ws := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
		ws.SubtopologyID = s.ID
		ws.SourceTopics = append([]string{}, s.SourceTopics...)
		ws.RepartitionSinkTopics = append([]string{}, s.RepartitionSinkTopics...)
		ws.StateChangelogTopics = infos(s.StateChangelogTopics)
		ws.RepartitionSourceTopics = infos(s.RepartitionSourceTopics)
		out.Subtopologies = append(out.Subtopologies, ws)
	}
	return &out
}

func streamsTaskOffsetsOut(in []group.StreamsTaskOffset) []kmsg.TaskOffset {
	out := make([]kmsg.TaskOffset, 0, len(in))
	for _, o := range in {
		w := kmsg.NewTaskOffset()
		w.SubtopologyID, w.Partition, w.Offset = o.Subtopology, o.Partition, o.Offset
		out = append(out, w)
	}
	return out
}
