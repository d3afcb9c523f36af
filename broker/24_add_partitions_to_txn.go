package broker

// AddPartitionsToTxn: v0-5
//
// Behavior:
// * v0-3 (clients): adds the partitions to the producer's transaction in
//   the coordinator (txn.AddPartitions). An unknown partition fails the
//   call: UNKNOWN_TOPIC_OR_PARTITION for it, OPERATION_NOT_ATTEMPTED for
//   the others. Coordinator errors (INVALID_PRODUCER_ID_MAPPING,
//   PRODUCER_FENCED, CONCURRENT_TRANSACTIONS, ...) go to every partition.
// * v4+ (batched, broker to coordinator): one result per transaction;
//   VerifyOnly (v4+) checks membership without adding
//   (TRANSACTION_ABORTABLE for a partition not in the transaction).
//
// * ACLs: v0-3 WRITE on the transactional id
//   (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and on each topic
//   (TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED); v4+
//   CLUSTER_ACTION (top-level CLUSTER_AUTHORIZATION_FAILED).
//
// Version notes:
// * v2: PRODUCER_FENCED instead of INVALID_PRODUCER_EPOCH; v3: flexible;
//   v4: batched transactions (KIP-890); v5: TRANSACTION_ABORTABLE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/txn"
)

func init() { regKey(24, 0, 5, handleAddPartitionsToTxn) }

func handleAddPartitionsToTxn(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	tc := r.s.coord.txn
	run := func(id string, pid int64, epoch int16, verify bool, tps []txn.TopicPartition) map[txn.TopicPartition]int16 {
		var perr map[txn.TopicPartition]error
		var err error
		if verify {
			perr, err = tc.VerifyPartitions(id, pid, epoch, tps)
		} else {
			perr, err = tc.AddPartitions(id, pid, epoch, tps, false)
		}
		out := make(map[txn.TopicPartition]int16, len(tps))
		for _, tp := range tps {
			if err != nil {
				out[tp] = txnErrorCode(r, err, 2)
			} else {
				out[tp] = txnErrorCode(r, perr[tp], 2)
			}
		}
		return out
	}
	if r.version < 4 {
		var tps []txn.TopicPartition
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, txn.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		var codes map[txn.TopicPartition]int16
		if !r.authorize(resTransactionalID, req.TransactionalID, opWrite) {
			codes = map[txn.TopicPartition]int16{}
			for _, tp := range tps {
				codes[tp] = errTransactionalIDAuthFailed
			}
		} else {
			// Kafka: topics without WRITE fail the call, the others are
			// OPERATION_NOT_ATTEMPTED.
			for _, tp := range tps {
				if !r.authorize(resTopic, tp.Topic, opWrite) {
					if codes == nil {
						codes = map[txn.TopicPartition]int16{}
					}
					codes[tp] = kerr.TopicAuthorizationFailed.Code
				}
			}
			if codes != nil {
				for _, tp := range tps {
					if codes[tp] == 0 {
						codes[tp] = kerr.OperationNotAttempted.Code
					}
				}
			} else {
				codes = run(req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, tps)
			}
		}
		for _, t := range req.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition = p
				rp.ErrorCode = codes[txn.TopicPartition{Topic: t.Topic, Partition: p}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	// v4+ is the broker-to-coordinator form: CLUSTER_ACTION.
	if !r.authorizeCluster(opClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	for _, tr := range req.Transactions {
		var tps []txn.TopicPartition
		for _, t := range tr.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, txn.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		codes := run(tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly, tps)
		rtx := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rtx.TransactionalID = tr.TransactionalID
		for _, t := range tr.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition = p
				rp.ErrorCode = codes[txn.TopicPartition{Topic: t.Topic, Partition: p}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			rtx.Topics = append(rtx.Topics, rt)
		}
		resp.Transactions = append(resp.Transactions, rtx)
	}
	return resp, nil
}
