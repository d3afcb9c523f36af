package broker

// DescribeShareGroupOffsets: v0-1
//
// Behavior:
// * Per group: the share-partition start offset (SPSO) of the named
//   partitions, or with Topics null of every initialised share-partition of
//   the group; an unknown group yields no topics, not an error.
// * A partition with no state: StartOffset -1, LeaderEpoch 0, Lag -1. An
//   unknown topic: StartOffset -1 and a zero topic id.
// * StartOffset is the persisted start offset as Kafka shows it: Kafka
//   writes the state with the SPSO from before each acknowledgement, so it
//   lags the live SPSO by one write and is -1 ("-" in kafka-share-groups)
//   for a share-partition never acknowledged (share.Manager.KafkaOffsets).
//   The live SPSO is in /ui and sharq_share_partition_start_offset.
// * v1: Lag (KIP-1226) = high watermark - SPSO - records already delivered
//   past SPSO.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
	"sharq/share"
)

func init() { regKey(90, 0, 1, handleDescribeShareGroupOffsets) }

func handleDescribeShareGroupOffsets(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	img := r.s.meta.Image()
	for _, rg := range req.Groups {
		g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		g.GroupID = rg.GroupID
		if !r.s.shareGroupsEnabled() {
			g.ErrorCode = errUnsupportedVersion
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if !r.authorize(resGroup, rg.GroupID, opDescribe) {
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		type want struct {
			topic string
			parts []int32
		}
		var wants []want
		if rg.Topics == nil {
			keys, err := r.s.share.StoredKeys(rg.GroupID)
			if err != nil {
				g.ErrorCode = errKafkaStorage
				resp.Groups = append(resp.Groups, g)
				continue
			}
			byTopic := map[string][]int32{}
			for _, k := range keys {
				if t := img.TopicsByID[raftmeta.UUID(k.TopicID)]; t != nil {
					byTopic[t.Name] = append(byTopic[t.Name], k.Partition)
				}
			}
			for name, ps := range byTopic {
				if !r.authorize(resTopic, name, opDescribe) {
					continue // left out of "all", as Kafka does
				}
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				wants = append(wants, want{name, ps})
			}
			sort.Slice(wants, func(i, j int) bool { return wants[i].topic < wants[j].topic })
		} else {
			for _, t := range rg.Topics {
				wants = append(wants, want{t.Topic, t.Partitions})
			}
		}
		for _, w := range wants {
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic = w.topic
			t := img.Topics[w.topic]
			if t != nil {
				rt.TopicID = t.ID
			}
			for _, part := range w.parts {
				rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				rp.Partition = part
				rp.StartOffset, rp.LeaderEpoch, rp.Lag = -1, 0, -1
				// A partition the topic does not have (negative included)
				// has no state: Kafka answers it as such, not as an error.
				if !r.authorize(resTopic, w.topic, opDescribe) {
					rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				} else if t != nil && part >= 0 && int(part) < len(t.Partitions) {
					rp.LeaderEpoch = t.Partitions[part].LeaderEpoch
					spso, lag, ok := r.s.share.KafkaOffsets(share.Key{Group: rg.GroupID, TopicID: t.ID, Partition: part})
					if ok {
						rp.StartOffset, rp.Lag = spso, lag
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			g.Topics = append(g.Topics, rt)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}
