package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"sharq/txn"
)

// txnErrorCode maps a coordinator error; store failures are logged and
// answered COORDINATOR_NOT_AVAILABLE, which clients retry. PRODUCER_FENCED
// is INVALID_PRODUCER_EPOCH below fencedSince, the version from which the
// API knows it (KIP-588), as Kafka maps it.
func txnErrorCode(r *request, err error, fencedSince int16) int16 {
	code := txn.ErrorCode(err)
	switch {
	case code == kerr.UnknownServerError.Code:
		r.s.logger.Warn("transaction coordinator", "err", err)
		return kerr.CoordinatorNotAvailable.Code
	case code == kerr.ProducerFenced.Code && r.version < fencedSince:
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}
