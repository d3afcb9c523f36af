package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// More sentinel errors (the contract's are in api.go); ErrorCode maps
// them.
var (
	ErrInvalidTopic             = errors.New("invalid topic name")
	ErrInvalidReplicationFactor = errors.New("invalid replication factor")
	ErrInvalidReplicaAssignment = errors.New("invalid replica assignment")
	ErrInvalidRequest           = errors.New("invalid metadata request")
	ErrTimeout                  = errors.New("metadata operation timed out")
)

// MaxPartitions bounds one topic's partition count: a guard against a typo
// (or a hostile request) allocating gigabytes of metadata on every node.
const MaxPartitions = 100_000

// maxTopicNameLen is Kafka's limit (Topic.MAX_NAME_LENGTH).
const maxTopicNameLen = 249

// validTopicName applies Kafka's rules (Topic.validate): 1-249 characters
// from [a-zA-Z0-9._-], and not "." or "..".
// CollidingTopic returns an existing topic whose name differs from name only
// in '.' versus '_' (the smallest, when several), or "". Kafka refuses such
// a topic: its metric names would be the same as the existing one's.
func CollidingTopic(img *Image, name string) string {
	if !strings.ContainsAny(name, "._") {
		return ""
	}
	norm := strings.ReplaceAll(name, ".", "_")
	found := ""
	for other := range img.Topics {
		if other != name && strings.ContainsAny(other, "._") && strings.ReplaceAll(other, ".", "_") == norm && (found == "" || other < found) {
			found = other
		}
	}
	return found
}

func validTopicName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > maxTopicNameLen {
		return fmt.Errorf("topic name %q: %w", name, ErrInvalidTopic)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic name %q has illegal character %q: %w", name, c, ErrInvalidTopic)
		}
	}
	return nil
}

// ErrorCode maps an error from this package to the Kafka error code the
// broker puts in a response: 0 for nil, UNKNOWN_SERVER_ERROR for anything
// else.
func ErrorCode(err error) int16 {
	var pe *PartitionError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &pe):
		return pe.Code
	case errors.Is(err, ErrUnknownTopic):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	case errors.Is(err, ErrInvalidTopic):
		return kerr.InvalidTopicException.Code
	case errors.Is(err, ErrTopicExists):
		return kerr.TopicAlreadyExists.Code
	case errors.Is(err, ErrInvalidPartitions):
		return kerr.InvalidPartitions.Code
	case errors.Is(err, ErrInvalidReplicationFactor):
		return kerr.InvalidReplicationFactor.Code
	case errors.Is(err, ErrInvalidReplicaAssignment):
		return kerr.InvalidReplicaAssignment.Code
	case errors.Is(err, ErrNotController), errors.Is(err, ErrClosed):
		// A closing node is no longer the controller; clients retry elsewhere.
		return kerr.NotController.Code
	case errors.Is(err, ErrInvalidRequest):
		return kerr.InvalidRequest.Code
	}
	return kerr.UnknownServerError.Code
}
