package broker

// OffsetFetch: v1-10
//
// Behavior:
// * Committed offsets of the asked partitions (-1 with empty metadata for
//   none), or with null topics (v2+) every partition the group committed.
//   An unknown group is not an error: it simply has no offsets.
// * v8+: several groups in one request, an error code per group. v9+: a
//   member of a consumer group sends its member id and epoch
//   (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH).
// * RequireStable (v7+): a partition with offsets staged by an open
//   transaction (TxnOffsetCommit) answers UNSTABLE_OFFSET_COMMIT with
//   offset -1, and the client retries; without it the last committed
//   offset is returned.
//
// Version notes:
// * v0 is gone in Kafka 4 (KIP-896); v2: top-level error code, null topics
//   = all; v5: leader epoch; v6: flexible; v7: require stable; v8: groups
//   array; v9: member id and epoch; v10: topic ids (unknown id:
//   UNKNOWN_TOPIC_ID per partition).

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
	"sharq/raftmeta"
)

func init() { regKey(9, 1, 10, handleOffsetFetch) }

// fetchTopic is one asked topic, by name or (v10) id.
type fetchTopic struct {
	name       string
	id         [16]byte
	partitions []int32
}

// fetchedPartition is one answered partition.
type fetchedPartition struct {
	partition   int32
	offset      int64
	leaderEpoch int32
	metadata    string
	errCode     int16
}

type fetchedTopic struct {
	name       string
	id         [16]byte
	partitions []fetchedPartition
}

func handleOffsetFetch(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if r.version < 8 {
		var topics []fetchTopic
		for _, t := range req.Topics {
			topics = append(topics, fetchTopic{name: t.Topic, partitions: t.Partitions})
		}
		out, code := r.fetchGroupOffsets(req.Group, "", -1, topics, req.Topics == nil && r.version >= 2)
		if req.RequireStable {
			r.markUnstable(req.Group, out)
		}
		resp.ErrorCode = code
		for _, t := range out {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.name
			for _, p := range t.partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p.partition, p.offset, p.leaderEpoch, p.errCode
				md := p.metadata
				rp.Metadata = &md
				if code != 0 {
					rp.ErrorCode = code
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	for _, g := range req.Groups {
		var topics []fetchTopic
		for _, t := range g.Topics {
			topics = append(topics, fetchTopic{name: t.Topic, id: t.TopicID, partitions: t.Partitions})
		}
		epoch := g.MemberEpoch
		out, code := r.fetchGroupOffsets(g.Group, strOr(g.MemberID), epoch, topics, g.Topics == nil)
		if req.RequireStable {
			r.markUnstable(g.Group, out)
		}
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, code
		for _, t := range out {
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.Topic, rt.TopicID = t.name, t.id
			for _, p := range t.partitions {
				rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p.partition, p.offset, p.leaderEpoch, p.errCode
				md := p.metadata
				rp.Metadata = &md
				rt.Partitions = append(rt.Partitions, rp)
			}
			rg.Topics = append(rg.Topics, rt)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

// markUnstable answers UNSTABLE_OFFSET_COMMIT for the partitions with
// offsets staged by an open transaction.
func (r *request) markUnstable(groupID string, out []fetchedTopic) {
	pending := r.s.coord.groups.PendingTxnPartitions(groupID)
	if len(pending) == 0 {
		return
	}
	img := r.s.meta.Image()
	for i := range out {
		name := out[i].name
		if name == "" {
			name = topicNameByID(img, out[i].id)
		}
		for j := range out[i].partitions {
			fp := &out[i].partitions[j]
			if pending[group.TopicPartition{Topic: name, Partition: fp.partition}] {
				fp.offset, fp.leaderEpoch, fp.metadata, fp.errCode = -1, -1, "", kerr.UnstableOffsetCommit.Code
			}
		}
	}
}

// fetchGroupOffsets answers one group. A group-level error comes back as
// the code with no topics (v8+) or, before v8, with the topics as asked.
func (r *request) fetchGroupOffsets(groupID, memberID string, memberEpoch int32, topics []fetchTopic, all bool) ([]fetchedTopic, int16) {
	img := r.s.meta.Image()
	byID := r.version >= 10
	if !r.authorize(resGroup, groupID, opDescribe) {
		code := kerr.GroupAuthorizationFailed.Code
		if r.version >= 8 {
			return nil, code
		}
		return fetchedAsAsked(topics, make([]string, len(topics)), nil, false), code
	}
	out, code := r.fetchAuthorizedOffsets(img, groupID, memberID, memberEpoch, topics, all, byID)
	// Kafka answers TOPIC_AUTHORIZATION_FAILED for asked topics the
	// principal may not describe and leaves them out of "all".
	kept := out[:0]
	for _, t := range out {
		name := t.name
		if byID {
			name = topicNameByID(img, t.id)
		}
		if name == "" || r.authorize(resTopic, name, opDescribe) {
			kept = append(kept, t)
			continue
		}
		if all {
			continue
		}
		for i := range t.partitions {
			t.partitions[i] = fetchedPartition{partition: t.partitions[i].partition, offset: -1, leaderEpoch: -1, errCode: kerr.TopicAuthorizationFailed.Code}
		}
		kept = append(kept, t)
	}
	return kept, code
}

func (r *request) fetchAuthorizedOffsets(img *raftmeta.Image, groupID, memberID string, memberEpoch int32, topics []fetchTopic, all, byID bool) ([]fetchedTopic, int16) {
	var tps []group.TopicPartition
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.name
		if byID {
			names[i] = topicNameByID(img, t.id)
		}
		for _, p := range t.partitions {
			tps = append(tps, group.TopicPartition{Topic: names[i], Partition: p})
		}
	}
	offs, err := r.s.coord.groups.FetchOffsets(groupID, memberID, memberEpoch, tps, all)
	if err != nil {
		code, _ := groupError(err)
		if r.version >= 8 {
			return nil, code
		}
		return fetchedAsAsked(topics, names, nil, byID), code
	}
	if !all {
		return fetchedAsAsked(topics, names, offs, byID), 0
	}
	// Every committed partition, topics by name, partitions in order.
	byTopic := map[string][]fetchedPartition{}
	for tp, o := range offs {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], fetchedPartition{partition: tp.Partition, offset: o.Offset, leaderEpoch: o.LeaderEpoch, metadata: o.Metadata})
	}
	var out []fetchedTopic
	for name, ps := range byTopic {
		sort.Slice(ps, func(i, j int) bool { return ps[i].partition < ps[j].partition })
		ft := fetchedTopic{name: name, partitions: ps}
		if t := img.Topics[name]; t != nil {
			ft.id = t.ID
		}
		if byID {
			if img.Topics[name] == nil {
				continue // a topic without id cannot be named in v10
			}
			ft.name = ""
		}
		out = append(out, ft)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].name < out[j].name || (out[i].name == out[j].name && string(out[i].id[:]) < string(out[j].id[:]))
	})
	return out, 0
}

// fetchedAsAsked answers the asked partitions: the committed offset, or
// -1 when there is none.
func fetchedAsAsked(topics []fetchTopic, names []string, offs map[group.TopicPartition]group.Offset, byID bool) []fetchedTopic {
	var out []fetchedTopic
	for i, t := range topics {
		ft := fetchedTopic{name: t.name, id: t.id}
		for _, p := range t.partitions {
			fp := fetchedPartition{partition: p, offset: -1, leaderEpoch: -1}
			if byID && names[i] == "" {
				fp.errCode = errUnknownTopicID
			} else if o, ok := offs[group.TopicPartition{Topic: names[i], Partition: p}]; ok {
				fp.offset, fp.leaderEpoch, fp.metadata = o.Offset, o.LeaderEpoch, o.Metadata
			}
			ft.partitions = append(ft.partitions, fp)
		}
		out = append(out, ft)
	}
	return out
}
