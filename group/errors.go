package group

import (
	"errors"
)

// Error is a coordinator failure with the Kafka error code it maps to.
type Error struct {
	Code int16
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Sentinel errors; compare with errors.Is, map with ErrorCode.
var (
	ErrNotCoordinator           = &Error{16, "group coordinator is shutting down"}
	ErrCoordinatorNotAvailable  = &Error{15, "group coordinator not available"}
	ErrIllegalGeneration        = &Error{22, "illegal generation"}
	ErrInconsistentProtocol     = &Error{23, "inconsistent group protocol"}
	ErrInvalidGroupID           = &Error{24, "invalid group id"}
	ErrUnknownMemberID          = &Error{25, "unknown member id"}
	ErrInvalidSessionTimeout    = &Error{26, "invalid session timeout"}
	ErrRebalanceInProgress      = &Error{27, "rebalance in progress"}
	ErrOffsetMetadataTooLarge   = &Error{12, "offset metadata too large"}
	ErrUnsupportedVersion       = &Error{35, "unsupported version"}
	ErrInvalidRequest           = &Error{42, "invalid request"}
	ErrNonEmptyGroup            = &Error{68, "the group is not empty"}
	ErrGroupIDNotFound          = &Error{69, "group id not found"}
	ErrMemberIDRequired         = &Error{79, "member id required"}
	ErrGroupMaxSizeReached      = &Error{81, "group max size reached"}
	ErrFencedInstanceID         = &Error{82, "fenced instance id"}
	ErrGroupSubscribedToTopic   = &Error{86, "group subscribed to topic"}
	ErrFencedMemberEpoch        = &Error{110, "fenced member epoch"}
	ErrUnreleasedInstanceID     = &Error{111, "unreleased instance id"}
	ErrUnsupportedAssignor      = &Error{112, "unsupported assignor"}
	ErrStaleMemberEpoch         = &Error{113, "stale member epoch"}
	ErrInvalidRegularExpression = &Error{128, "invalid regular expression"}
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

// wrapped lets a sentinel carry a Kafka-style message while errors.Is
// still matches the sentinel.
type wrapped struct {
	sentinel *Error
	msg      string
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.sentinel }

// withMsg returns sentinel with the message clients print.
func withMsg(sentinel *Error, msg string) error { return &wrapped{sentinel, msg} }

// Message returns the text to send with the error code ("" for a bare
// sentinel, which the broker answers with Kafka's default text).
func Message(err error) string {
	var w *wrapped
	if errors.As(err, &w) {
		return w.msg
	}
	return ""
}
