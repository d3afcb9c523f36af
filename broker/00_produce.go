package broker

// Produce: v0-13
//
// Behavior:
// * acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS). acks=0 gets no
//   response. On a single node acks=-1 and acks=1 are the same: the leader is
//   the whole ISR. With log.flush.interval.messages=1 the answer waits for
//   the fsync (group commit).
// * v0-2 are advertised, as Kafka 4.x does for librdkafka (KAFKA-18659),
//   but only with magic 2 batches: old message formats are INVALID_RECORD.
// * Each partition must carry exactly one v2 record batch (Kafka's rule for
//   v3+, applied to every version here); the log validates size, magic, CRC and offsets, assigns offsets in
//   place and stores the bytes as produced (any compression codec passes
//   through untouched).
// * Idempotent producers: duplicates are answered with the original offsets,
//   gaps with OUT_OF_ORDER_SEQUENCE_NUMBER, stale epochs with
//   INVALID_PRODUCER_EPOCH (per-partition producer state in the log).
// * Appends wake Fetch long-polls parked on the partition.
// * Transactional batches need the request's TransactionalId (else
//   TRANSACTIONAL_ID_AUTHORIZATION_FAILED). v12+ (transaction version 2)
//   adds the partitions to the producer's transaction implicitly; before
//   v12, with transaction.partition.verification.enable, the partitions
//   must already be in it. Coordinator errors: PRODUCER_FENCED is answered
//   INVALID_PRODUCER_EPOCH and TRANSACTION_ABORTABLE INVALID_TXN_STATE
//   below v11, as Kafka's AddPartitionsToTxnManager does.
//
// Version notes:
// * v8: per-record errors and error message; v13: topics by id (KIP-516).

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/log/recordbatch"
	"sharq/raftmeta"
	"sharq/txn"
)

func init() { regKey(0, 0, 13, handleProduce, coordinatorFree) }

func handleProduce(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	img := r.s.meta.Image()
	badAcks := req.Acks != -1 && req.Acks != 0 && req.Acks != 1
	txnCodes := r.produceTxnCheck(req, img, badAcks)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var topic *raftmeta.Topic
		if r.version >= 13 {
			topic = img.TopicsByID[raftmeta.UUID(rt.TopicID)]
		} else {
			topic = img.Topics[rt.Topic]
		}
		name := rt.Topic
		if topic != nil {
			name = topic.Name
		}
		allowed := r.authorize(resTopic, name, opWrite)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = -1, -1
			var p *partition
			if topic != nil {
				p = r.s.partitionFor(topic.Name, rp.Partition)
			}
			switch {
			case badAcks:
				sp.ErrorCode = errInvalidRequiredAcks
			case req.TransactionID != nil && !r.authorize(resTransactionalID, *req.TransactionID, opWrite):
				sp.ErrorCode = errTransactionalIDAuthFailed
			case topic == nil && r.version >= 13:
				sp.ErrorCode = errUnknownTopicID
			case !allowed:
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case topic != nil && isInternalTopic(topic.Name):
				sp.ErrorCode = errInvalidTopic
				r.setProduceMessage(&sp, "Cannot append to internal topic "+topic.Name)
			case p == nil:
				sp.ErrorCode = errUnknownTopicOrPartition
			case r.s.virtual && r.notLeader(topic.Partitions[rp.Partition]):
				r.produceNotLeader(resp, &sp, topic.Partitions[rp.Partition])
			case txnCodes != nil && txnCodes[txn.TopicPartition{Topic: topic.Name, Partition: rp.Partition}] != 0:
				sp.ErrorCode = txnCodes[txn.TopicPartition{Topic: topic.Name, Partition: rp.Partition}]
			default:
				r.appendPartition(p, topic, rp.Records, &sp)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if req.Acks == 0 {
		return nil, nil
	}
	return resp, nil
}

func (r *request) appendPartition(p *partition, topic *raftmeta.Topic, records []byte, sp *kmsg.ProduceResponseTopicPartition) {
	if msg := checkSingleBatch(records, r.version); msg != "" {
		sp.ErrorCode = errInvalidRecord
		r.setProduceMessage(sp, msg)
		return
	}
	epoch := topic.Partitions[p.index].LeaderEpoch
	l, err := p.acquire()
	if err != nil {
		sp.ErrorCode = log.ErrorCode(err)
		r.setProduceMessage(sp, err.Error())
		return
	}
	defer p.release()
	res, err := l.Append(records, epoch)
	if err != nil {
		sp.ErrorCode = log.ErrorCode(err)
		r.setProduceMessage(sp, err.Error())
		sp.LogStartOffset = l.LogStartOffset()
		return
	}
	sp.BaseOffset = res.BaseOffset
	sp.LogAppendTime = res.LogAppendTime
	sp.LogStartOffset = res.LogStartOffset
	if !res.Duplicate {
		p.wake()
	}
}

func (r *request) setProduceMessage(sp *kmsg.ProduceResponseTopicPartition, msg string) {
	if r.version >= 8 {
		sp.ErrorMessage = &msg
	}
}

// checkSingleBatch enforces Kafka's rule that a v3+ produce carries exactly
// one v2 record batch per partition.
func checkSingleBatch(records []byte, version int16) string {
	if len(records) < recordbatch.HeaderSize {
		return fmt.Sprintf("Produce requests with version %d must have exactly one record batch per partition (found a truncated or empty one of %d bytes).", version, len(records))
	}
	h := recordbatch.Parse(records)
	if int64(h.Size) != int64(len(records)) {
		return fmt.Sprintf("Produce requests with version %d are only allowed to contain exactly one record batch.", version)
	}
	if h.Magic != recordbatch.MagicV2 {
		return fmt.Sprintf("Produce requests with version %d are only allowed to contain record batches with magic version 2.", version)
	}
	return ""
}

// produceTxnCheck adds (v12+) or verifies the transactional partitions of a
// produce in the coordinator, once for the whole request. It returns the
// error code per partition that must not be appended, nil if none.
func (r *request) produceTxnCheck(req *kmsg.ProduceRequest, img *raftmeta.Image, badAcks bool) map[txn.TopicPartition]int16 {
	if badAcks || req.TransactionID != nil && !r.authorize(resTransactionalID, *req.TransactionID, opWrite) {
		return nil // answered per partition by handleProduce
	}
	var tps []txn.TopicPartition
	var codes map[txn.TopicPartition]int16
	pid, epoch := int64(-1), int16(-1)
	for _, rt := range req.Topics {
		var topic *raftmeta.Topic
		if r.version >= 13 {
			topic = img.TopicsByID[raftmeta.UUID(rt.TopicID)]
		} else {
			topic = img.Topics[rt.Topic]
		}
		if topic == nil || !r.authorize(resTopic, topic.Name, opWrite) {
			continue
		}
		for _, rp := range rt.Partitions {
			b := rp.Records
			if len(b) < recordbatch.HeaderSize {
				continue // too short for a batch (refused on append)
			}
			h := recordbatch.Parse(b)
			if h.Magic != recordbatch.MagicV2 || !h.Transactional() {
				continue // not a transactional v2 batch (checked on append)
			}
			tp := txn.TopicPartition{Topic: topic.Name, Partition: rp.Partition}
			if req.TransactionID == nil {
				if codes == nil {
					codes = map[txn.TopicPartition]int16{}
				}
				codes[tp] = errTransactionalIDAuthFailed
				continue
			}
			pid, epoch = h.ProducerID, h.ProducerEpoch
			tps = append(tps, tp)
		}
	}
	if len(tps) == 0 {
		return codes
	}
	if codes == nil {
		codes = map[txn.TopicPartition]int16{}
	}
	// Produce runs before the coordinators have loaded; a transactional
	// one waits for them (milliseconds at start-up).
	if err := r.s.awaitCoordinators(r.ctx); err != nil {
		for _, tp := range tps {
			codes[tp] = kerr.CoordinatorNotAvailable.Code
		}
		return codes
	}
	tc := r.s.coord.txn
	var perr map[txn.TopicPartition]error
	var err error
	switch {
	case r.version >= 12:
		perr, err = tc.AddPartitions(*req.TransactionID, pid, epoch, tps, true)
	case r.s.effectiveConfig().TransactionPartitionVerificationEnable:
		perr, err = tc.VerifyPartitions(*req.TransactionID, pid, epoch, tps)
	default:
		return codes
	}
	for _, tp := range tps {
		e := err
		if e == nil {
			e = perr[tp]
		}
		code := txnErrorCode(r, e, 0)
		switch {
		case code == kerr.ProducerFenced.Code:
			code = kerr.InvalidProducerEpoch.Code
		case code == kerr.TransactionAbortable.Code && r.version <= 10:
			code = kerr.InvalidTxnState.Code
		}
		if code != 0 {
			codes[tp] = code
		}
	}
	return codes
}
