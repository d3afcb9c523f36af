package log

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrorCode maps an error from this package (wrapped or not) to a Kafka
// error code: 0 for nil, KAFKA_STORAGE_ERROR for anything unrecognised.
func ErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrCorruptMessage):
		return kerr.CorruptMessage.Code
	case errors.Is(err, ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	case errors.Is(err, ErrMessageTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, ErrInvalidTimestamp):
		return kerr.InvalidTimestamp.Code
	case errors.Is(err, ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, ErrUnknownProducerID):
		return kerr.UnknownProducerID.Code
	case errors.Is(err, ErrUnsupportedMagic):
		return kerr.UnsupportedForMessageFormat.Code
	case errors.Is(err, ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, ErrClosed):
		return kerr.NotLeaderForPartition.Code
	default:
		return kerr.KafkaStorageError.Code
	}
}
