package broker

// WriteTxnMarkers: v0-2
//
// Behavior:
// * Writes a COMMIT or ABORT marker for the producer into each named
//   partition (what a transaction coordinator sends partition leaders;
//   Kafka's admin abortTransaction, kafka-transactions.sh abort, sends it
//   directly). An unknown partition: UNKNOWN_TOPIC_OR_PARTITION; a marker
//   older than the producer's epoch: INVALID_PRODUCER_EPOCH.
// * ACLs: CLUSTER_ACTION (CLUSTER_AUTHORIZATION_FAILED for every partition).
//
// Version notes:
// * v1: flexible; v2: TransactionVersion (KIP-1228), not needed here.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
)

// Version 0 was removed in Kafka 4.0 (KIP-896): 1 to 2, as Kafka 4.4.
func init() { regKey(27, 1, 2, handleWriteTxnMarkers) }

func handleWriteTxnMarkers(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	denied := !r.authorizeCluster(opClusterAction)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, part := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = part
				p := r.s.partitionFor(t.Topic, part)
				topic := r.s.meta.Image().Topics[t.Topic]
				if denied {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				} else if p == nil || topic == nil || int(part) >= len(topic.Partitions) {
					rp.ErrorCode = errUnknownTopicOrPartition
				} else {
					epoch := topic.Partitions[part].LeaderEpoch
					if l, err := p.acquire(); err != nil {
						rp.ErrorCode = log.ErrorCode(err)
					} else {
						_, err := l.AppendMarker(m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, epoch)
						p.release()
						if err != nil {
							rp.ErrorCode = log.ErrorCode(err)
						} else {
							p.wake()
						}
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}
