package broker

// DescribeQuorum: v0-2
//
// Behavior:
// * Answers for __cluster_metadata-0 from raftmeta: leader, epoch (the raft
//   term), high watermark (the commit index) and the voters; every node is
//   a voter, so there are no observers. Only this node's log end offset is
//   known (hashicorp/raft keeps the leader's view of followers private):
//   other voters show -1, as Kafka shows a replica it has not heard from.
// * Another topic or partition: UNKNOWN_TOPIC_OR_PARTITION, as Kafka.
//
// Version notes:
// * v2 adds the voters' endpoints (Nodes) and directory ids (this node's
//   is kept in <log.dirs>/meta/directory.id; other voters' are unknown, a
//   zero uuid). A single node has no controller listener: no endpoints.

import (
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(55, 0, 2, handleDescribeQuorum) }

const clusterMetadataTopic = "__cluster_metadata"

func handleDescribeQuorum(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeQuorumRequest)
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !r.authorizeCluster(opDescribe) {
		resp.ErrorCode = errClusterAuthorizationFailed
		return resp, nil
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != clusterMetadataTopic ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeQuorumResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeQuorumResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = p.Partition, errUnknownTopicOrPartition, -1, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	q, err := r.s.meta.Quorum()
	if err != nil {
		resp.ErrorCode = errUnknownServerError
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp, nil
	}
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = clusterMetadataTopic
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = q.LeaderID, q.LeaderEpoch, q.HighWatermark
	rp.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	rp.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	listener := "CONTROLLER"
	if names := strings.Split(r.s.cfg.ControllerListenerNames, ","); strings.TrimSpace(names[0]) != "" {
		listener = strings.TrimSpace(names[0])
	}
	for _, v := range q.Voters {
		rs := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		rs.ReplicaID, rs.ReplicaDirectoryID, rs.LogEndOffset, rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = v.NodeID, v.DirectoryID, v.LogEndOffset, v.LastFetchMs, v.LastCaughtUpMs
		rp.CurrentVoters = append(rp.CurrentVoters, rs)
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = v.NodeID
		n.Listeners = []kmsg.DescribeQuorumResponseNodeListener{}
		if host, port, err := net.SplitHostPort(v.Addr); err == nil {
			if p, err := strconv.ParseUint(port, 10, 16); err == nil {
				n.Listeners = append(n.Listeners, kmsg.DescribeQuorumResponseNodeListener{Name: listener, Host: host, Port: uint16(p)})
			}
		}
		resp.Nodes = append(resp.Nodes, n)
	}
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp, nil
}
