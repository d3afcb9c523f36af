package txn

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sentinel errors; compare with errors.Is, map with ErrorCode
// (docs/errors.md).
var (
	ErrUnknownTopicOrPartition   = errors.New("unknown topic or partition")
	ErrNotCoordinator            = errors.New("transaction coordinator is shutting down")
	ErrInvalidRequest            = errors.New("invalid request")
	ErrInvalidProducerEpoch      = errors.New("invalid producer epoch")
	ErrInvalidTxnState           = errors.New("invalid transaction state")
	ErrInvalidProducerIDMapping  = errors.New("invalid producer id mapping")
	ErrInvalidTransactionTimeout = errors.New("invalid transaction timeout")
	ErrConcurrentTransactions    = errors.New("concurrent transactions")
	ErrOperationNotAttempted     = errors.New("operation not attempted")
	ErrTransactionalIDNotFound   = errors.New("transactional id not found")
	ErrProducerFenced            = errors.New("producer fenced")
	ErrTransactionAbortable      = errors.New("transaction abortable")
)

// ErrorCode maps an error from this package (wrapped or not) to its Kafka
// error code: 0 for nil, UNKNOWN_SERVER_ERROR for anything else (a store
// failure).
func ErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUnknownTopicOrPartition):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, ErrNotCoordinator):
		return kerr.NotCoordinator.Code
	case errors.Is(err, ErrInvalidRequest):
		return kerr.InvalidRequest.Code
	case errors.Is(err, ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, ErrInvalidProducerIDMapping):
		return kerr.InvalidProducerIDMapping.Code
	case errors.Is(err, ErrInvalidTransactionTimeout):
		return kerr.InvalidTransactionTimeout.Code
	case errors.Is(err, ErrConcurrentTransactions):
		return kerr.ConcurrentTransactions.Code
	case errors.Is(err, ErrOperationNotAttempted):
		return kerr.OperationNotAttempted.Code
	case errors.Is(err, ErrTransactionalIDNotFound):
		return kerr.TransactionalIDNotFound.Code
	case errors.Is(err, ErrProducerFenced):
		return kerr.ProducerFenced.Code
	case errors.Is(err, ErrTransactionAbortable):
		return kerr.TransactionAbortable.Code
	}
	return kerr.UnknownServerError.Code
}
