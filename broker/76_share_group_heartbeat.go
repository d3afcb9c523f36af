package broker

// ShareGroupHeartbeat: v1
//
// Behavior:
// * Joins (epoch 0, with SubscribedTopicNames), heartbeats and leaves (-1)
//   share groups through share.Coordinator: client-generated member ids,
//   fenced and previous epochs, group.share.max.size, session timeouts
//   (share.session.timeout.ms), the simple assignor. Partitions are assigned
//   at once (no empty first assignment: share-partitions initialise on the
//   first fetch).
// * The assignment (topic ids) is sent on join, on a full request and when
//   it changed; HeartbeatIntervalMs is share.heartbeat.interval.ms.
// * share.version must be finalized at >= 1, else UNSUPPORTED_VERSION.
//
// Version notes:
// * v0 existed only in Kafka 4.0's early access and is not served.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/share"
)

func init() { regKey(76, 1, 1, handleShareGroupHeartbeat) }

func handleShareGroupHeartbeat(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	if !r.s.shareGroupsEnabled() {
		resp.ErrorCode = errUnsupportedVersion
		return resp, nil
	}
	if code := r.groupHeartbeatAuth(req.GroupID, req.SubscribedTopicNames); code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	img := r.s.meta.Image()
	lookup := func(name string) (share.TopicInfo, bool) {
		t := img.Topics[name]
		if t == nil {
			return share.TopicInfo{}, false
		}
		return share.TopicInfo{ID: t.ID, Partitions: int32(len(t.Partitions))}, true
	}
	hb, err := r.s.share.Heartbeat(share.HeartbeatRequest{
		GroupID: req.GroupID, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch,
		RackID: req.RackID, Subscribed: req.SubscribedTopicNames,
		ClientID: r.clientID, ClientHost: r.c.clientHost(),
	}, lookup, r.s.isOtherGroupType(req.GroupID))
	if err != nil {
		resp.ErrorCode = share.ErrorCode(err)
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp, nil
	}
	if hb.Sent && len(hb.Assignment) > 0 {
		// Kafka's share coordinator creates its state topic when the
		// first assignment's share-partitions are initialised.
		if err := r.s.ensureInternalTopic(r.ctx, "__share_group_state"); err != nil {
			r.s.logger.Warn("internal topic", "err", err)
		}
	}
	memberID := req.MemberID
	resp.MemberID = &memberID
	resp.MemberEpoch = hb.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(hb.HeartbeatInterval / time.Millisecond)
	if hb.Sent {
		a := &kmsg.ShareGroupHeartbeatResponseAssignment{TopicPartitions: []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}}
		for _, id := range sortedShareTopics(hb.Assignment) {
			tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			tp.TopicID = id
			tp.Partitions = hb.Assignment[id]
			a.TopicPartitions = append(a.TopicPartitions, tp)
		}
		resp.Assignment = a
	}
	return resp, nil
}
