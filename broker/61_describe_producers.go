package broker

// DescribeProducers: v0
//
// Behavior:
// * The producer state of each partition (log.Producers): producer id,
//   epoch, last sequence, last timestamp and the first offset of its open
//   transaction (-1 if none), sorted by producer id. CoordinatorEpoch is
//   that of the producer's last marker (0 for this node's coordinator; -1
//   before any marker). Unknown partition: UNKNOWN_TOPIC_OR_PARTITION.
// * ACLs: READ on the topic (TOPIC_AUTHORIZATION_FAILED).

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
)

func init() { regKey(61, 0, 0, handleDescribeProducers) }

func handleDescribeProducers(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, part := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = part
			p := r.s.partitionFor(t.Topic, part)
			var l *log.Log
			var err error
			if !r.authorize(resTopic, t.Topic, opRead) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			} else if p == nil && r.s.internalPartition(t.Topic, part) {
				// Internal topics have no log here and no producer can write
				// to them (Produce refuses it): no active producers, as Kafka
				// answers for a partition nobody produced to. An error would
				// make the admin client retry until it times out
				// (kafka-transactions.sh find-hanging).
			} else if p == nil {
				rp.ErrorCode = errUnknownTopicOrPartition
			} else if r.s.virtual && r.notLeaderOf(t.Topic, part) {
				rp.ErrorCode = errNotLeaderOrFollower
			} else if l, err = p.acquire(); err != nil {
				rp.ErrorCode = log.ErrorCode(err)
			} else {
				ps := l.Producers()
				p.release()
				sort.Slice(ps, func(i, j int) bool { return ps[i].ProducerID < ps[j].ProducerID })
				for _, pi := range ps {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = pi.ProducerID, int32(pi.Epoch), pi.LastSequence
					ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = pi.LastTimestamp, pi.CoordinatorEpoch, pi.CurrentTxnFirstOff
					rp.ActiveProducers = append(rp.ActiveProducers, ap)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
