package txn

import "errors"

// Error is a coordinator failure with the Kafka error code it maps to.
type Error struct {
	Code int16
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Sentinel errors; compare with errors.Is, map with ErrorCode.
var (
	ErrUnknownTopicOrPartition   = &Error{3, "unknown topic or partition"}
	ErrNotCoordinator            = &Error{16, "transaction coordinator is shutting down"}
	ErrInvalidRequest            = &Error{42, "invalid request"}
	ErrInvalidProducerEpoch      = &Error{47, "invalid producer epoch"}
	ErrInvalidTxnState           = &Error{48, "invalid transaction state"}
	ErrInvalidProducerIDMapping  = &Error{49, "invalid producer id mapping"}
	ErrInvalidTransactionTimeout = &Error{50, "invalid transaction timeout"}
	ErrConcurrentTransactions    = &Error{51, "concurrent transactions"}
	ErrOperationNotAttempted     = &Error{55, "operation not attempted"}
	ErrTransactionalIDNotFound   = &Error{105, "transactional id not found"}
	ErrProducerFenced            = &Error{90, "producer fenced"}
	ErrTransactionAbortable      = &Error{120, "transaction abortable"}
)

// ErrorCode maps an error from this package to its Kafka error code; 0 for
// nil, UNKNOWN_SERVER_ERROR (-1) for anything else (a store failure).
func ErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return -1
}
