package broker

// DeleteRecords: v0-2
//
// Behavior:
// * Moves a partition's log start offset forward to Offset (-1 = the high
//   watermark); whole segments below it are deleted. An offset above the
//   high watermark is OFFSET_OUT_OF_RANGE. Answers the new low watermark.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
)

func init() { regKey(21, 0, 2, handleDeleteRecords) }

func handleDeleteRecords(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			if !r.authorize(resTopic, rt.Topic, opDelete) {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p := r.s.partitionFor(rt.Topic, rp.Partition)
			if p == nil {
				sp.ErrorCode = errUnknownTopicOrPartition
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if r.s.virtual && r.notLeaderOf(rt.Topic, rp.Partition) {
				sp.ErrorCode = errNotLeaderOrFollower
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			l, err := p.acquire()
			if err != nil {
				sp.ErrorCode = log.ErrorCode(err)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			offset := rp.Offset
			if offset == -1 {
				offset = l.HighWatermark()
			}
			if offset < 0 || offset > l.HighWatermark() {
				p.release()
				sp.ErrorCode = errOffsetOutOfRange
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			low, err := l.DeleteRecordsBefore(offset)
			p.release()
			if err != nil {
				sp.ErrorCode = log.ErrorCode(err)
			} else {
				sp.LowWatermark = low
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
