package broker

// OffsetForLeaderEpoch: v2-4
//
// Behavior:
// * For each partition: the largest epoch <= LeaderEpoch the log has seen
//   and the end offset of that epoch (the start of the next one, or the log
//   end for the current epoch); UNDEFINED (-1, -1) when the log has no such
//   epoch. CurrentLeaderEpoch is checked like Fetch (FENCED_LEADER_EPOCH /
//   UNKNOWN_LEADER_EPOCH).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
)

func init() { regKey(23, 2, 4, handleOffsetForLeaderEpoch, coordinatorFree) }

func handleOffsetForLeaderEpoch(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	img := r.s.meta.Image()
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			topic := img.Topics[rt.Topic]
			p := r.s.partitionFor(rt.Topic, rp.Partition)
			switch {
			case !r.epochAllowed(req, rt.Topic):
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case topic == nil || p == nil:
				sp.ErrorCode = errUnknownTopicOrPartition
			case rp.CurrentLeaderEpoch >= 0 && rp.CurrentLeaderEpoch < topic.Partitions[rp.Partition].LeaderEpoch:
				sp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case rp.CurrentLeaderEpoch > topic.Partitions[rp.Partition].LeaderEpoch:
				sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
			case r.s.virtual && req.ReplicaID != -2 && r.notLeader(topic.Partitions[rp.Partition]):
				sp.ErrorCode = errNotLeaderOrFollower
			default:
				l, err := p.acquire()
				if err != nil {
					sp.ErrorCode = log.ErrorCode(err)
					break
				}
				sp.LeaderEpoch, sp.EndOffset = l.EndOffsetForEpoch(rp.LeaderEpoch)
				p.release()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// epochAllowed: a follower (replica id set) needs CLUSTER_ACTION, a
// consumer DESCRIBE on the topic, as in Kafka.
func (r *request) epochAllowed(req *kmsg.OffsetForLeaderEpochRequest, topic string) bool {
	if r.version >= 3 && req.ReplicaID >= 0 {
		return r.authorizeCluster(opClusterAction)
	}
	return r.authorize(resTopic, topic, opDescribe)
}
