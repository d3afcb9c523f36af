package share

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sentinel errors of the share-partitions and the share group
// coordinator; compare with errors.Is, map with ErrorCode
// (docs/errors.md). ErrCorruptJournal, ErrStateLost and
// ErrInvalidOffsetReset are beside the code that returns them.
var (
	ErrInvalidRequest     = errors.New("share: invalid acknowledgement request")
	ErrInvalidRecordState = errors.New("share: invalid record state")
	ErrNotInitialised     = errors.New("share: share-partition not initialised")
	ErrCorruptState       = errors.New("share: corrupt persisted state")
	ErrInvalidKey         = errors.New("share: invalid state key")

	// The share group coordinator (group.go).
	ErrGroupIDNotFound    = errors.New("group id not found")
	ErrUnknownMemberID    = errors.New("unknown member id")
	ErrFencedMemberEpoch  = errors.New("fenced member epoch")
	ErrGroupMaxSize       = errors.New("group max size reached")
	ErrNonEmptyGroup      = errors.New("group is not empty")
	ErrInvalidHeartbeat   = errors.New("invalid heartbeat")
	ErrNotShareGroupError = errors.New("not a share group")
)

// ErrorCode maps an error from this package (wrapped or not) to the Kafka
// error code the broker answers with (a partition's (Acknowledge)ErrorCode,
// or a group API's ErrorCode): 0 for nil, UNKNOWN_SERVER_ERROR for anything
// else (a store failure).
func ErrorCode(err error) int16 {
	switch {
	case err == nil:
		return codeNone
	case errors.Is(err, ErrInvalidRequest), errors.Is(err, ErrInvalidHeartbeat):
		return codeInvalidRequest
	case errors.Is(err, ErrInvalidRecordState):
		return codeInvalidRecordState
	case errors.Is(err, ErrNotInitialised):
		// Kafka answers a share-partition it has not loaded with this.
		return codeUnknownTopicOrPart
	case errors.Is(err, ErrGroupIDNotFound), errors.Is(err, ErrNotShareGroupError):
		return kerr.GroupIDNotFound.Code
	case errors.Is(err, ErrUnknownMemberID):
		return kerr.UnknownMemberID.Code
	case errors.Is(err, ErrFencedMemberEpoch):
		return kerr.FencedMemberEpoch.Code
	case errors.Is(err, ErrGroupMaxSize):
		return kerr.GroupMaxSizeReached.Code
	case errors.Is(err, ErrNonEmptyGroup):
		return kerr.NonEmptyGroup.Code
	}
	return codeUnknownServerError
}

// The Kafka error codes the Manager answers with, by the names its hot
// paths compare them under.
var (
	codeNone                int16 = 0
	codeUnknownServerError        = kerr.UnknownServerError.Code
	codeUnknownTopicOrPart        = kerr.UnknownTopicOrPartition.Code
	codeNotLeaderOrFollower       = kerr.NotLeaderForPartition.Code
	codeInvalidRequest            = kerr.InvalidRequest.Code
	codeInvalidRecordState        = kerr.InvalidRecordState.Code
	codeNotLeader                 = kerr.NotLeaderForPartition.Code
	codeTopicAuthFailed           = kerr.TopicAuthorizationFailed.Code
	codeKafkaStorage              = kerr.KafkaStorageError.Code
	codeUnknownTopicID            = kerr.UnknownTopicID.Code
	codeSessionNotFound           = kerr.ShareSessionNotFound.Code
	codeInvalidSessionEpch        = kerr.InvalidShareSessionEpoch.Code
	codeSessionLimit              = kerr.ShareSessionLimitReached.Code
)
