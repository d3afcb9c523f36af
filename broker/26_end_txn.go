package broker

// EndTxn: v0-5
//
// Behavior:
// * Commits or aborts the producer's transaction (txn.EndTxn): COMMIT or
//   ABORT markers go to every partition of the transaction and the staged
//   offsets of its groups are applied or dropped before the answer.
// * v5+ is transaction version 2 (KIP-890): the epoch is bumped and the
//   answer carries the producer id and epoch to use next; an abort without
//   a transaction is allowed (it bumps the epoch). Before v5, EndTxn without
//   a transaction is INVALID_TXN_STATE.
// * ACLs: WRITE on the transactional id.
//
// Version notes:
// * v2: PRODUCER_FENCED instead of INVALID_PRODUCER_EPOCH; v3: flexible;
//   v5: ProducerId/ProducerEpoch in the answer.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(26, 0, 5, handleEndTxn) }

func handleEndTxn(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if !r.authorize(resTransactionalID, req.TransactionalID, opWrite) {
		resp.ErrorCode = errTransactionalIDAuthFailed
		return resp, nil
	}
	pe, err := r.s.coord.txn.EndTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit, r.version >= 5)
	resp.ErrorCode = txnErrorCode(r, err, 2)
	resp.ProducerID, resp.ProducerEpoch = pe.ProducerID, pe.Epoch
	return resp, nil
}
