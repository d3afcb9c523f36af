package broker

// FindCoordinator: v0-6
//
// Behavior:
// * GROUP keys (type 0): this node, which coordinates every group.
// * TRANSACTION keys (type 1): this node, which coordinates every
//   transactional id (txn).
// * With sharq.virtual.brokers > 1: the leader of the key's partition of
//   __consumer_offsets / __transaction_state (vnodes.go), as Kafka.
// * The first lookup creates the internal topic Kafka would create:
//   __consumer_offsets for a group, __transaction_state for a
//   transactional id (listed with is_internal; see ensureInternalTopic).
// * SHARE keys (type 2) are broker-internal in Kafka (share state
//   coordinator): INVALID_REQUEST.
// * An empty key: INVALID_REQUEST.
//
// Version notes:
// * v1: key type; v2: error message; v3: flexible; v4: batched
//   CoordinatorKeys with a Coordinators array in the answer (KIP-699);
//   v6: share key type (KIP-932).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(10, 0, 6, handleFindCoordinator, coordinatorFree) }

func handleFindCoordinator(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	find := func(key string) kmsg.FindCoordinatorResponseCoordinator {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port = key, -1, -1
		fail := func(code int16, msg string) kmsg.FindCoordinatorResponseCoordinator {
			c.ErrorCode = code
			c.ErrorMessage = &msg
			return c
		}
		switch {
		case req.CoordinatorType == 0 && key != "" && !r.authorize(resGroup, key, opDescribe):
			c.ErrorCode = kerr.GroupAuthorizationFailed.Code
			return c
		case req.CoordinatorType == 1 && key != "" && !r.authorize(resTransactionalID, key, opDescribe):
			c.ErrorCode = errTransactionalIDAuthFailed
			return c
		case req.CoordinatorType == 1 && key == "":
			return fail(errInvalidRequest, "Transactional id can't be empty.")
		case req.CoordinatorType != 0 && req.CoordinatorType != 1:
			return fail(errInvalidRequest, "Unsupported key type "+itoa(int32(req.CoordinatorType))+".")
		case key == "":
			return fail(errInvalidRequest, "Group id can't be empty.")
		}
		// Kafka creates __consumer_offsets on the first lookup of a group
		// coordinator and __transaction_state on the first of a
		// transaction coordinator; sharq's coordinators do not need them,
		// so a failure only leaves them unlisted.
		internal := "__consumer_offsets"
		if req.CoordinatorType == 1 {
			internal = "__transaction_state"
		}
		if err := r.s.ensureInternalTopic(r.ctx, internal); err != nil {
			r.s.logger.Warn("internal topic", "err", err)
		}
		c.NodeID = r.s.cfg.NodeID
		adv := r.s.advertised[0]
		if r.c != nil && r.c.listener < len(r.s.advertised) {
			adv = r.s.advertised[r.c.listener]
		}
		if r.s.virtual {
			// The leader of the key's partition of the internal topic.
			c.NodeID, _ = r.s.coordinatorOf(coordinatorTopic(internal), key)
			adv, _, _ = r.listedBroker(c.NodeID)
		}
		c.Host, c.Port = adv.Host, int32(adv.Port)
		return c
	}
	if r.version >= 4 {
		for _, k := range req.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, find(k))
		}
		return resp, nil
	}
	c := find(req.CoordinatorKey)
	resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
	resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
	return resp, nil
}
