package broker

// ListTransactions: v0-2
//
// Behavior:
// * Every transactional id with its producer id and state (txn.List),
//   filtered by state names (unknown names are returned in
//   UnknownStateFilters), producer ids, (v1+) DurationFilter: only
//   transactions running longer than it, measured from their start as
//   Kafka does, and (v2+) an RE2 pattern on the id (a bad pattern:
//   INVALID_REGULAR_EXPRESSION).
// * ACLs: only transactional ids the caller may DESCRIBE are listed.

import (
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/txn"
)

func init() { regKey(66, 0, 2, handleListTransactions) }

func handleListTransactions(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	f := txn.ListFilter{StateNames: req.StateFilters, ProducerIDs: req.ProducerIDFilters, MinDurationMs: -1}
	if r.version >= 1 {
		f.MinDurationMs = req.DurationFilterMillis
	}
	if r.version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile(*req.TransactionalIDPattern)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp, nil
		}
		f.Match = re.MatchString
	}
	list, unknown, err := r.s.coord.txn.List(f)
	if err != nil {
		resp.ErrorCode = txnErrorCode(r, err, 0)
		return resp, nil
	}
	resp.UnknownStateFilters = unknown
	for _, d := range list {
		if !r.authorize(resTransactionalID, d.ID, opDescribe) {
			continue // only what the caller may describe, as Kafka
		}
		resp.TransactionStates = append(resp.TransactionStates, kmsg.ListTransactionsResponseTransactionState{
			TransactionalID: d.ID, ProducerID: d.Metadata.ProducerID, TransactionState: d.Metadata.State.String(),
		})
	}
	return resp, nil
}
