package broker

// InitProducerId: v0-5
//
// Behavior:
// * Idempotent producers (no transactional id) get a fresh producer id with
//   epoch 0 from the id allocator (blocks reserved through the metadata
//   store, so an id is never reused, even across restarts).
// * Transactional ids go to the transaction coordinator (txn): a new id gets
//   a producer id, a known one an epoch bump that fences older producers;
//   an open transaction is aborted first. Empty id: INVALID_REQUEST; a
//   timeout above transaction.max.timeout.ms: INVALID_TRANSACTION_TIMEOUT.
// * ACLs: WRITE on the transactional id (else
//   TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer needs
//   IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
// * v3+: ProducerId/ProducerEpoch (KIP-360) name the producer's current
//   identity; only one of them set is INVALID_REQUEST.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/txn"
)

func init() { regKey(22, 0, 5, handleInitProducerID) }

func handleInitProducerID(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID == nil {
		// An idempotent producer needs IDEMPOTENT_WRITE on the cluster or
		// WRITE on some topic (Kafka's authorizeByResourceType).
		if !r.authorizeCluster(opIdempotentWrite) && !r.authorizeAnyOfType(resTopic, opWrite) {
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return resp, nil
		}
		id, err := r.s.producerIDs.Next(r.ctx)
		if err != nil {
			r.s.logger.Warn("allocate producer id", "err", err)
			resp.ErrorCode, _ = metaErrorCode(err)
			return resp, nil
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
		return resp, nil
	}
	if !r.authorize(resTransactionalID, *req.TransactionalID, opWrite) {
		resp.ErrorCode = errTransactionalIDAuthFailed
		return resp, nil
	}
	var expected *txn.ProducerIDAndEpoch
	switch {
	case req.ProducerID == -1 && req.ProducerEpoch == -1:
	case req.ProducerID == -1 || req.ProducerEpoch == -1:
		resp.ErrorCode = errInvalidRequest
		return resp, nil
	default:
		expected = &txn.ProducerIDAndEpoch{ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
	}
	pe, err := r.s.coord.txn.InitProducerID(r.ctx, *req.TransactionalID, req.TransactionTimeoutMillis, expected)
	if err != nil {
		resp.ErrorCode = txnErrorCode(r, err, 4)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = pe.ProducerID, pe.Epoch
	return resp, nil
}
