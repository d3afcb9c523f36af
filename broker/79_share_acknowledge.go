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
)

func init() {
	regKey(79, 1, 2, handleShareAcknowledge, servedInline, decodedBy(decodeShareAcknowledge))
}

func handleShareAcknowledge(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareAcknowledgeRequest)
	sc := r.c.shareScratch()
	// The connection's last answer is written: its slices are reused.
	resp := &sc.ack
	*resp = kmsg.ShareAcknowledgeResponse{Version: req.Version, Topics: resp.Topics[:0], NodeEndpoints: resp.NodeEndpoints[:0]}
	if !r.s.shareGroupsEnabled() {
		resp.ErrorCode = errUnsupportedVersion
		return resp, nil
	}
	if !validShareIDs(req.GroupID, req.MemberID) {
		resp.ErrorCode = errInvalidRequest
		return resp, nil
	}
	if !r.authorize(resGroup, *req.GroupID, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	in := sc.Reset()
	in.Group, in.Member, in.Conn = *req.GroupID, *req.MemberID, r.c
	if r.s.authz != nil {
		in.Readable = r.shareTopicReader()
	}
	if r.s.virtual {
		in.NotLeader = r.c.shareNotLeader()
	}
	in.Epoch, in.RenewOnly = req.ShareSessionEpoch, req.IsRenewAck
	for ti := range req.Topics {
		t := &req.Topics[ti]
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			sc.AddPartition(t.TopicID, p.Partition)
			for _, b := range p.AcknowledgementBatches {
				sc.AddAck(b.FirstOffset, b.LastOffset, b.AcknowledgeTypes)
			}
		}
	}
	res := r.s.share.Acknowledge(&sc.Scratch)
	resp.AcquisitionLockTimeoutMillis = int32(res.LockDuration / time.Millisecond)
	if res.ErrorCode != 0 {
		resp.ErrorCode = res.ErrorCode
		return resp, nil
	}
	// Every partition of the request is answered, under its topic as the
	// request grouped them.
	i := 0
	topics := grow(resp.Topics, len(req.Topics))
	for ti := range req.Topics {
		rt := &topics[ti]
		parts := grow(rt.Partitions, len(req.Topics[ti].Partitions))
		*rt = kmsg.ShareAcknowledgeResponseTopic{TopicID: req.Topics[ti].TopicID}
		for pi := range parts {
			pr := &res.Partitions[i]
			i++
			rp := &parts[pi]
			*rp = kmsg.ShareAcknowledgeResponseTopicPartition{Partition: pr.Partition, ErrorCode: pr.Code}
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			if r.s.virtual && pr.Code == errNotLeaderOrFollower {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = r.shareNotLeaderHint(pr.TopicID, pr.Partition, func(id int32, host string, port int32, rack *string) {
					for _, e := range resp.NodeEndpoints {
						if e.NodeID == id {
							return
						}
					}
					resp.NodeEndpoints = append(resp.NodeEndpoints, kmsg.ShareAcknowledgeResponseNodeEndpoint{NodeID: id, Host: host, Port: port, Rack: rack})
				})
			}
		}
		rt.Partitions = parts
	}
	resp.Topics = topics
	return resp, nil
}
