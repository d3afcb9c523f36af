package broker

// AddOffsetsToTxn: v0-4
//
// Behavior:
// * Adds the consumer group's offsets to the producer's transaction
//   (txn.AddGroup): the TxnOffsetCommits that follow are staged in the group
//   and applied or dropped with the transaction. Errors as
//   AddPartitionsToTxn's coordinator errors. ACLs: WRITE on the
//   transactional id, READ on the group.
//
// Version notes:
// * v2: PRODUCER_FENCED instead of INVALID_PRODUCER_EPOCH; v3: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(25, 0, 4, handleAddOffsetsToTxn) }

func handleAddOffsetsToTxn(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp, nil
	}
	if !r.authorize(resTransactionalID, req.TransactionalID, opWrite) {
		resp.ErrorCode = errTransactionalIDAuthFailed
		return resp, nil
	}
	if !r.authorize(resGroup, req.Group, opRead) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	err := r.s.coord.txn.AddGroup(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group, false)
	resp.ErrorCode = txnErrorCode(r, err, 2)
	return resp, nil
}
