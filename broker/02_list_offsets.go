package broker

// ListOffsets: v1-11
//
// Behavior:
// * Timestamp -2 = earliest (log start offset), -1 = latest (high
//   watermark; the last stable offset for read_committed, IsolationLevel
//   1), -3 = the record with the largest
//   timestamp (v7+), -4 = earliest local (= earliest, no tiered storage),
//   -5 = latest tiered and -6 = earliest pending upload (no tiered storage:
//   offset -1). Any other value: the first offset whose timestamp is >= it,
//   or offset -1 when there is none; as in Kafka, a timestamp lookup (and -3)
//   finds only offsets below the latest offset of the isolation level.
// * CurrentLeaderEpoch (v4+) is checked like Fetch.
// * A partition named twice in one request: INVALID_REQUEST for both.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
)

func init() { regKey(2, 1, 11, handleListOffsets, coordinatorFree) }

const (
	listOffsetsLatest             = -1
	listOffsetsEarliest           = -2
	listOffsetsMaxTimestamp       = -3
	listOffsetsEarliestLocal      = -4
	listOffsetsLatestTiered       = -5
	listOffsetsEarliestPendUpload = -6
)

func handleListOffsets(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	img := r.s.meta.Image()
	type tp struct {
		t string
		p int32
	}
	seen := make(map[tp]int)
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			seen[tp{rt.Topic, rp.Partition}]++
		}
	}
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		topic := img.Topics[rt.Topic]
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			var p *partition
			if topic != nil {
				p = r.s.partitionFor(rt.Topic, rp.Partition)
			}
			switch {
			case seen[tp{rt.Topic, rp.Partition}] > 1:
				sp.ErrorCode = errInvalidRequest
			case !r.authorize(resTopic, rt.Topic, opDescribe):
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case topic != nil && isInternalTopic(rt.Topic):
				sp.ErrorCode = r.s.internalTopicRead("ListOffsets", rt.Topic)
			case p == nil:
				sp.ErrorCode = errUnknownTopicOrPartition
			default:
				meta := topic.Partitions[rp.Partition]
				if e := rp.CurrentLeaderEpoch; r.version >= 4 && e >= 0 && e != meta.LeaderEpoch {
					sp.ErrorCode = kerr.FencedLeaderEpoch.Code
					if e > meta.LeaderEpoch {
						sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
					}
					break
				}
				if r.s.virtual && req.ReplicaID != -2 && r.notLeader(meta) {
					// Only the debugging replica id (-2) may read a follower.
					sp.ErrorCode = errNotLeaderOrFollower
					break
				}
				l, err := p.acquire()
				if err != nil {
					sp.ErrorCode = log.ErrorCode(err)
					break
				}
				sp.LeaderEpoch = meta.LeaderEpoch
				listOffset(l, rp.Timestamp, req.IsolationLevel, &sp)
				p.release()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// listOffset answers one partition of ListOffsets from its pinned log.
func listOffset(l *log.Log, timestamp int64, isolation int8, sp *kmsg.ListOffsetsResponseTopicPartition) {
	fetchable := l.HighWatermark()
	if isolation == 1 {
		fetchable = l.LastStableOffset()
	}
	// As Kafka: a lookup finds only offsets below the isolation level's end.
	hide := func() {
		if sp.Offset >= fetchable {
			sp.Offset, sp.Timestamp, sp.LeaderEpoch = -1, -1, -1
		}
	}
	switch timestamp {
	case listOffsetsLatest:
		sp.Offset = fetchable
	case listOffsetsEarliest, listOffsetsEarliestLocal:
		sp.Offset = l.LogStartOffset()
	case listOffsetsMaxTimestamp:
		off, ts, err := l.MaxTimestamp()
		if err != nil {
			sp.ErrorCode = log.ErrorCode(err)
			return
		}
		sp.Offset, sp.Timestamp = off, ts
		if sp.Offset < 0 {
			sp.LeaderEpoch = -1
		}
		hide()
	case listOffsetsLatestTiered, listOffsetsEarliestPendUpload:
		sp.LeaderEpoch = -1
	default:
		off, ts, err := l.OffsetForTimestamp(timestamp)
		if err != nil {
			sp.ErrorCode = log.ErrorCode(err)
			return
		}
		sp.Offset, sp.Timestamp = off, ts
		if off < 0 {
			sp.LeaderEpoch = -1
		}
		hide()
	}
}
