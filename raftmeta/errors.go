package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// More sentinel errors (the contract's are in api.go).
var (
	ErrInvalidTopic             = errors.New("invalid topic name")           // INVALID_TOPIC_EXCEPTION (17)
	ErrInvalidReplicationFactor = errors.New("invalid replication factor")   // INVALID_REPLICATION_FACTOR (38)
	ErrInvalidReplicaAssignment = errors.New("invalid replica assignment")   // INVALID_REPLICA_ASSIGNMENT (39)
	ErrInvalidRequest           = errors.New("invalid metadata request")     // INVALID_REQUEST (42)
	ErrTimeout                  = errors.New("metadata operation timed out") // REQUEST_TIMED_OUT (7)
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
// broker puts in a response (0 for nil, -1 UNKNOWN_SERVER_ERROR otherwise).
func ErrorCode(err error) int16 {
	var pe *PartitionError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &pe):
		return pe.Code
	case errors.Is(err, ErrUnknownTopic):
		return 3 // UNKNOWN_TOPIC_OR_PARTITION
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return 7 // REQUEST_TIMED_OUT
	case errors.Is(err, ErrInvalidTopic):
		return 17 // INVALID_TOPIC_EXCEPTION
	case errors.Is(err, ErrTopicExists):
		return 36 // TOPIC_ALREADY_EXISTS
	case errors.Is(err, ErrInvalidPartitions):
		return 37 // INVALID_PARTITIONS
	case errors.Is(err, ErrInvalidReplicationFactor):
		return 38 // INVALID_REPLICATION_FACTOR
	case errors.Is(err, ErrInvalidReplicaAssignment):
		return 39 // INVALID_REPLICA_ASSIGNMENT
	case errors.Is(err, ErrNotController), errors.Is(err, ErrClosed):
		// A closing node is no longer the controller; clients retry elsewhere.
		return 41 // NOT_CONTROLLER
	case errors.Is(err, ErrInvalidRequest):
		return 42 // INVALID_REQUEST
	}
	return -1
}
