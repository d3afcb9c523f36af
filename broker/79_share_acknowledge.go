package broker

// ShareAcknowledge: v1-2
//
// Behavior:
// * Needs an open share session: epoch 0 is INVALID_SHARE_SESSION_EPOCH, a
//   missing session SHARE_SESSION_NOT_FOUND, a wrong epoch
//   INVALID_SHARE_SESSION_EPOCH (all top level); success advances the epoch
//   like ShareFetch. Never adds partitions to the session.
// * Each partition's batches are validated (ordered, non-overlapping, one
//   type or one per offset, known types; RENEW only with IsRenewAck) and
//   applied atomically; INVALID_RECORD_STATE for offsets the member does not
//   hold. Accepted, rejected and archived records are durable before the
//   answer.
// * Epoch -1 applies the acks, closes the session and releases what the
//   member still holds.
//
// Version notes:
// * v2: IsRenewAck and RENEW (KIP-1222); AcquisitionLockTimeoutMs.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/share"
)

func init() { regKey(79, 1, 2, handleShareAcknowledge) }

func handleShareAcknowledge(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareAcknowledgeRequest)
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	top := func(code int16) (kmsg.Response, error) {
		resp.ErrorCode = code
		return resp, nil
	}
	if !r.s.shareGroupsEnabled() {
		return top(errUnsupportedVersion)
	}
	if !validShareIDs(req.GroupID, req.MemberID) {
		return top(errInvalidRequest)
	}
	if !r.authorize(resGroup, *req.GroupID, opRead) {
		return top(kerr.GroupAuthorizationFailed.Code)
	}
	readable := r.shareTopicReader()
	group, member := *req.GroupID, *req.MemberID
	resp.AcquisitionLockTimeoutMillis = int32(r.s.shareSettings(group).lockDuration / time.Millisecond)
	st := r.s.share
	skey := shareSessionKey{group, member}
	st.mu.Lock()
	sess := st.sessions[skey]
	switch {
	case req.ShareSessionEpoch == shareEpochOpen:
		st.mu.Unlock()
		return top(kerr.InvalidShareSessionEpoch.Code)
	case sess == nil:
		st.mu.Unlock()
		return top(kerr.ShareSessionNotFound.Code)
	case req.ShareSessionEpoch != shareEpochClose && req.ShareSessionEpoch != sess.epoch:
		st.mu.Unlock()
		return top(kerr.InvalidShareSessionEpoch.Code)
	}
	closing := req.ShareSessionEpoch == shareEpochClose
	var held []sharePartKey
	if closing {
		delete(st.sessions, skey)
		held = append(held, sess.parts...)
	} else {
		sess.epoch = nextShareEpoch(sess.epoch)
	}
	st.mu.Unlock()

	for _, t := range req.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			k := sharePartKey{group: group, topicID: t.TopicID, partition: p.Partition}
			var batches []share.AckBatch
			for _, b := range p.AcknowledgementBatches {
				batches = append(batches, share.AckBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, Types: ackTypes(b.AcknowledgeTypes)})
			}
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			if !readable(t.TopicID) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			} else if len(batches) > 0 {
				rp.ErrorCode = r.s.shareAcknowledge(member, k, batches, req.IsRenewAck)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if closing {
		st.releaseMember(member, held)
	}
	return resp, nil
}
