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
// * Transactions are not supported yet: a transactional produce is refused.
//
// Version notes:
// * v8: per-record errors and error message; v13: topics by id (KIP-516).

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/raftmeta"
)

func init() { regKey(0, 0, 13, handleProduce) }

func handleProduce(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	img := r.s.meta.Image()
	badAcks := req.Acks != -1 && req.Acks != 0 && req.Acks != 1
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
			case req.TransactionID != nil:
				sp.ErrorCode = errTransactionalIDAuthFailed
				r.setProduceMessage(&sp, "sharq does not support transactions yet")
			case topic == nil && r.version >= 13:
				sp.ErrorCode = errUnknownTopicID
			case !allowed:
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case topic != nil && isInternalTopic(topic.Name):
				sp.ErrorCode = errInvalidTopic
				r.setProduceMessage(&sp, "Cannot append to internal topic "+topic.Name)
			case p == nil:
				sp.ErrorCode = errUnknownTopicOrPartition
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
	const headerLen = 61
	if len(records) < headerLen {
		return fmt.Sprintf("Produce requests with version %d must have exactly one record batch per partition (found a truncated or empty one of %d bytes).", version, len(records))
	}
	batchLen := int64(int32(binary.BigEndian.Uint32(records[8:])))
	if batchLen+12 != int64(len(records)) {
		return fmt.Sprintf("Produce requests with version %d are only allowed to contain exactly one record batch.", version)
	}
	if magic := records[16]; magic != 2 {
		return fmt.Sprintf("Produce requests with version %d are only allowed to contain record batches with magic version 2.", version)
	}
	return ""
}
