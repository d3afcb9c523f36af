package broker

// AlterShareGroupOffsets: v0
//
// Behavior:
// * Sets the start offset (SPSO) of share-partitions of a group with no
//   members (else NON_EMPTY_GROUP); the group is created if absent. The
//   in-flight state is dropped and the state epoch moves on, durably.
//   Unknown topics or partitions: UNKNOWN_TOPIC_OR_PARTITION; an offset
//   outside [log start, high watermark]: OFFSET_OUT_OF_RANGE.

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/share"
)

func init() { regKey(91, 0, 0, handleAlterShareGroupOffsets) }

func handleAlterShareGroupOffsets(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if !r.s.shareGroupsEnabled() {
		resp.ErrorCode = errUnsupportedVersion
		return resp, nil
	}
	if !r.authorize(resGroup, req.GroupID, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	st := r.s.share
	st.mu.Lock()
	g := st.coord.Group(req.GroupID)
	if g != nil && len(g.Members) > 0 {
		st.mu.Unlock()
		resp.ErrorCode = share.GroupErrorCode(share.ErrNonEmptyGroup)
		msg := fmt.Sprintf("Share group %s is not empty.", req.GroupID)
		resp.ErrorMessage = &msg
		return resp, nil
	}
	st.coord.EnsureGroup(req.GroupID)
	st.mu.Unlock()
	img := r.s.meta.Image()
	for _, t := range req.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		topic := img.Topics[t.Topic]
		if topic != nil {
			rt.TopicID = topic.ID
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			if !r.authorize(resTopic, t.Topic, opRead) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			var pt *partition
			if topic != nil {
				pt = r.s.partitionFor(topic.Name, p.Partition)
			}
			if pt == nil {
				rp.ErrorCode = errUnknownTopicOrPartition
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			l, err := pt.acquire()
			if err != nil {
				rp.ErrorCode = log.ErrorCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			outside := p.StartOffset < l.LogStartOffset() || p.StartOffset > l.HighWatermark()
			pt.release()
			if outside {
				rp.ErrorCode = errOffsetOutOfRange
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			rp.ErrorCode = st.resetOffset(sharePartKey{group: req.GroupID, topicID: topic.ID, partition: p.Partition}, p.StartOffset)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// resetOffset moves a share-partition's start offset, durably.
func (st *shareState) resetOffset(k sharePartKey, offset int64) int16 {
	p, err := st.part(k)
	if errors.Is(err, share.ErrStateLost) {
		// A share-partition whose state was lost to journal corruption is
		// refused until an operator resets it, which is this.
		if c, ok := st.persister.(interface{ ClearLost(share.Key) error }); ok {
			if err = c.ClearLost(k.persistKey()); err == nil {
				p, err = st.part(k)
			}
		}
	}
	if err != nil {
		st.s.logger.Error("share-partition", "err", err)
		return errKafkaStorage
	}
	p.mu.Lock()
	var eff share.Effects
	if p.sp.Initialised() {
		eff = p.sp.Reset(offset)
	} else {
		eff = p.sp.Initialise(offset, 0)
	}
	eff.Durable = true
	w := p.stageLocked(eff)
	st.afterLocked(p, eff)
	p.mu.Unlock()
	if err := st.commit(p, w); err != nil {
		st.s.logger.Error("persist share offset reset", "err", err)
		return errKafkaStorage
	}
	return 0
}
