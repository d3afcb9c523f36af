package group

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sentinel errors; compare with errors.Is, map with ErrorCode
// (docs/errors.md).
var (
	ErrNotCoordinator           = errors.New("group coordinator is shutting down")
	ErrCoordinatorNotAvailable  = errors.New("group coordinator not available")
	ErrIllegalGeneration        = errors.New("illegal generation")
	ErrInconsistentProtocol     = errors.New("inconsistent group protocol")
	ErrInvalidGroupID           = errors.New("invalid group id")
	ErrUnknownMemberID          = errors.New("unknown member id")
	ErrInvalidSessionTimeout    = errors.New("invalid session timeout")
	ErrRebalanceInProgress      = errors.New("rebalance in progress")
	ErrOffsetMetadataTooLarge   = errors.New("offset metadata too large")
	ErrUnsupportedVersion       = errors.New("unsupported version")
	ErrInvalidRequest           = errors.New("invalid request")
	ErrNonEmptyGroup            = errors.New("the group is not empty")
	ErrGroupIDNotFound          = errors.New("group id not found")
	ErrMemberIDRequired         = errors.New("member id required")
	ErrGroupMaxSizeReached      = errors.New("group max size reached")
	ErrFencedInstanceID         = errors.New("fenced instance id")
	ErrGroupSubscribedToTopic   = errors.New("group subscribed to topic")
	ErrFencedMemberEpoch        = errors.New("fenced member epoch")
	ErrUnreleasedInstanceID     = errors.New("unreleased instance id")
	ErrUnsupportedAssignor      = errors.New("unsupported assignor")
	ErrStaleMemberEpoch         = errors.New("stale member epoch")
	ErrInvalidRegularExpression = errors.New("invalid regular expression")

	// Streams groups (StreamsGroupHeartbeat).
	ErrStreamsInvalidTopology      = errors.New("the supplied topology is invalid")
	ErrStreamsInvalidTopologyEpoch = errors.New("the supplied topology epoch is invalid")
	ErrStreamsTopologyFenced       = errors.New("the supplied topology epoch is outdated")
)

// ErrorCode maps an error from this package (wrapped or not) to its Kafka
// error code: 0 for nil, UNKNOWN_SERVER_ERROR for anything else (a store
// failure).
func ErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotCoordinator):
		return kerr.NotCoordinator.Code
	case errors.Is(err, ErrCoordinatorNotAvailable):
		return kerr.CoordinatorNotAvailable.Code
	case errors.Is(err, ErrIllegalGeneration):
		return kerr.IllegalGeneration.Code
	case errors.Is(err, ErrInconsistentProtocol):
		return kerr.InconsistentGroupProtocol.Code
	case errors.Is(err, ErrInvalidGroupID):
		return kerr.InvalidGroupID.Code
	case errors.Is(err, ErrUnknownMemberID):
		return kerr.UnknownMemberID.Code
	case errors.Is(err, ErrInvalidSessionTimeout):
		return kerr.InvalidSessionTimeout.Code
	case errors.Is(err, ErrRebalanceInProgress):
		return kerr.RebalanceInProgress.Code
	case errors.Is(err, ErrOffsetMetadataTooLarge):
		return kerr.OffsetMetadataTooLarge.Code
	case errors.Is(err, ErrUnsupportedVersion):
		return kerr.UnsupportedVersion.Code
	case errors.Is(err, ErrInvalidRequest):
		return kerr.InvalidRequest.Code
	case errors.Is(err, ErrNonEmptyGroup):
		return kerr.NonEmptyGroup.Code
	case errors.Is(err, ErrGroupIDNotFound):
		return kerr.GroupIDNotFound.Code
	case errors.Is(err, ErrMemberIDRequired):
		return kerr.MemberIDRequired.Code
	case errors.Is(err, ErrGroupMaxSizeReached):
		return kerr.GroupMaxSizeReached.Code
	case errors.Is(err, ErrFencedInstanceID):
		return kerr.FencedInstanceID.Code
	case errors.Is(err, ErrGroupSubscribedToTopic):
		return kerr.GroupSubscribedToTopic.Code
	case errors.Is(err, ErrFencedMemberEpoch):
		return kerr.FencedMemberEpoch.Code
	case errors.Is(err, ErrUnreleasedInstanceID):
		return kerr.UnreleasedInstanceID.Code
	case errors.Is(err, ErrUnsupportedAssignor):
		return kerr.UnsupportedAssignor.Code
	case errors.Is(err, ErrStaleMemberEpoch):
		return kerr.StaleMemberEpoch.Code
	case errors.Is(err, ErrInvalidRegularExpression):
		return kerr.InvalidRegularExpression.Code
	case errors.Is(err, ErrStreamsInvalidTopology):
		return kerr.StreamsInvalidTopology.Code
	case errors.Is(err, ErrStreamsInvalidTopologyEpoch):
		return kerr.StreamsInvalidTopologyEpoch.Code
	case errors.Is(err, ErrStreamsTopologyFenced):
		return kerr.StreamsTopologyFenced.Code
	}
	return kerr.UnknownServerError.Code
}

// wrapped lets a sentinel carry a Kafka-style message while errors.Is
// still matches the sentinel.
type wrapped struct {
	sentinel error
	msg      string
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.sentinel }

// withMsg returns sentinel with the message clients print.
func withMsg(sentinel error, msg string) error { return &wrapped{sentinel, msg} }

// Message returns the text to send with the error code ("" for a bare
// sentinel, which the broker answers with Kafka's default text).
func Message(err error) string {
	var w *wrapped
	if errors.As(err, &w) {
		return w.msg
	}
	return ""
}
