package broker

// ShareFetch: v1-2
//
// Behavior:
// * Share sessions keyed by (GroupId, MemberId): epoch 0 opens one (acks
//   in it are INVALID_REQUEST; an old session of the key is replaced
//   without releasing its records), later epochs must be exactly the next
//   one (SHARE_SESSION_NOT_FOUND / INVALID_SHARE_SESSION_EPOCH, top level),
//   Topics adds partitions and ForgottenTopicsData removes them, -1 applies
//   the acks, fetches nothing, closes the session and releases what the
//   member holds. group.share.max.share.sessions bounds the sessions:
//   SHARE_SESSION_LIMIT_REACHED.
// * Piggy-backed acknowledgements are applied first, per partition, and
//   every partition that carried acks is answered with its
//   AcknowledgeErrorCode.
// * Records are acquired for the member from every partition of the
//   session (whole log batches in batch_optimized mode, at most MaxRecords
//   in record_limit mode), starting from the share-partition's next fetch
//   offset; share-partitions initialise on first use from the group's
//   share.auto.offset.reset (latest by default).
// * Nothing acquirable: the request parks until an append, a release or a
//   lock expiry wakes it, or MaxWaitMs passes.
// * AcquisitionLockTimeoutMs is the group's record lock duration.
// * IsRenewAck (v2) requests carry acks only: every fetch limit must be 0.
//
// Version notes:
// * v2: ShareAcquireMode (KIP-1206) and IsRenewAck / RENEW acks (KIP-1222).

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/share"
)

func init() { regKey(78, 1, 2, handleShareFetch, waitsInHandler, decodedBy(decodeShareFetch)) }

func validShareIDs(group, member *string) bool {
	return group != nil && strings.TrimSpace(*group) != "" &&
		member != nil && strings.TrimSpace(*member) != "" && len(*member) <= 36
}

// shareScratch is the connection's reused share request memory and
// response (the connection writes a response before it reads the next
// request, so both outlive the response they back).
type shareScratch struct {
	share.Scratch
	fetch kmsg.ShareFetchResponse
	ack   kmsg.ShareAcknowledgeResponse
}

func (c *conn) shareScratch() *shareScratch {
	if c.share == nil {
		c.share = &shareScratch{}
	}
	return c.share
}

func handleShareFetch(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareFetchRequest)
	sc := r.c.shareScratch()
	resp := &sc.fetch
	resetShareFetchResponse(resp, req.Version)
	top := func(code int16, msg string) (kmsg.Response, error) {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp, nil
	}
	if !r.s.shareGroupsEnabled() {
		return top(errUnsupportedVersion, "")
	}
	if !validShareIDs(req.GroupID, req.MemberID) {
		return top(errInvalidRequest, "GroupId and MemberId must be set; MemberId at most 36 characters")
	}
	if req.IsRenewAck && (req.MaxBytes != 0 || req.MinBytes != 0 || req.MaxRecords != 0 || req.MaxWaitMillis != 0) {
		return top(errInvalidRequest, "a renew-only request must have MaxBytes, MinBytes, MaxRecords and MaxWaitMs of 0")
	}
	if !r.authorize(resGroup, *req.GroupID, opRead) {
		return top(kerr.GroupAuthorizationFailed.Code, "")
	}
	in := sc.Reset()
	in.Group, in.Member, in.Conn = *req.GroupID, *req.MemberID, r.c
	if r.s.authz != nil {
		// Share groups need READ on every topic they fetch from or
		// acknowledge (Kafka: TOPIC_AUTHORIZATION_FAILED per partition).
		in.Readable = r.shareTopicReader()
	}
	if r.s.virtual {
		in.NotLeader = r.c.shareNotLeader()
	}
	in.Epoch, in.RenewOnly = req.ShareSessionEpoch, req.IsRenewAck
	in.MaxWait = time.Duration(req.MaxWaitMillis) * time.Millisecond
	in.MaxRecords, in.BatchSize, in.MaxBytes = int(req.MaxRecords), int(req.BatchSize), int(req.MaxBytes)
	in.Mode = share.AcquireMode(req.ShareAcquireMode)
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
	for _, f := range req.ForgottenTopicsData {
		for _, p := range f.Partitions {
			sc.AddForgotten(f.TopicID, p)
		}
	}
	res := r.s.share.Fetch(r.ctx, &sc.Scratch)
	resp.AcquisitionLockTimeoutMillis = int32(res.LockDuration / time.Millisecond)
	if res.ErrorCode != 0 {
		return top(res.ErrorCode, res.ErrorMessage)
	}

	// The answer: partitions with records, errors or acks, and those new
	// to the session, grouped by topic in the manager's order. The
	// response's slices are reused from the connection's last one.
	topics := resp.Topics[:0]
	var cur *kmsg.ShareFetchResponseTopic
	for i := range res.Partitions {
		pr := &res.Partitions[i]
		if !pr.Answer() {
			continue
		}
		if cur == nil || cur.TopicID != pr.TopicID {
			if len(topics) < cap(topics) {
				topics = topics[:len(topics)+1]
				t := &topics[len(topics)-1]
				*t = kmsg.ShareFetchResponseTopic{TopicID: pr.TopicID, Partitions: t.Partitions[:0]}
			} else {
				topics = append(topics, kmsg.ShareFetchResponseTopic{TopicID: pr.TopicID})
			}
			cur = &topics[len(topics)-1]
		}
		parts := cur.Partitions
		if len(parts) < cap(parts) {
			parts = parts[:len(parts)+1]
			p := &parts[len(parts)-1]
			*p = kmsg.ShareFetchResponseTopicPartition{AcquiredRecords: p.AcquiredRecords[:0]}
		} else {
			parts = append(parts, kmsg.ShareFetchResponseTopicPartition{})
		}
		cur.Partitions = parts
		p := &parts[len(parts)-1]
		p.Partition = pr.Partition
		p.ErrorCode = pr.Code
		p.AcknowledgeErrorCode = pr.AckCode
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
		if r.s.virtual && pr.Code == errNotLeaderOrFollower {
			p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = r.shareNotLeaderHint(pr.TopicID, pr.Partition, func(id int32, host string, port int32, rack *string) {
				for _, e := range resp.NodeEndpoints {
					if e.NodeID == id {
						return
					}
				}
				resp.NodeEndpoints = append(resp.NodeEndpoints, kmsg.ShareFetchResponseNodeEndpoint{NodeID: id, Host: host, Port: port, Rack: rack})
			})
		}
		p.Records = pr.Records
		if p.Records == nil {
			p.Records = []byte{}
		}
		for _, a := range pr.Acquired {
			p.AcquiredRecords = append(p.AcquiredRecords, kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{
				FirstOffset: a.FirstOffset, LastOffset: a.LastOffset, DeliveryCount: a.DeliveryCount,
			})
		}
	}
	resp.Topics = topics
	return resp, nil
}

// resetShareFetchResponse empties a reused response, keeping its slices.
func resetShareFetchResponse(resp *kmsg.ShareFetchResponse, version int16) {
	*resp = kmsg.ShareFetchResponse{Version: version, Topics: resp.Topics[:0], NodeEndpoints: resp.NodeEndpoints[:0]}
}
