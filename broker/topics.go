package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"sharq/config"
	"sharq/raftmeta"
)

// maxTopicNameLength is Kafka's limit (255 minus room for the partition
// suffix and the deletion marker of a log directory name).
const maxTopicNameLength = 249

// validateTopicName applies Kafka's Topic.validate rules.
func validateTopicName(name string) error {
	switch {
	case name == "":
		return errors.New("topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return errors.New("topic name cannot be \".\" or \"..\"")
	case len(name) > maxTopicNameLength:
		return fmt.Errorf("topic name is illegal, it can't be longer than %d characters, topic name: %s", maxTopicNameLength, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic name %s is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// isInternalTopic reports Kafka's internal topic names. sharq keeps group
// and share state outside the log, so these never exist, but their names
// stay reserved as in Kafka.
func isInternalTopic(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state" || name == "__share_group_state"
}

// topicCreateError is a per-topic Kafka error with its message.
type topicCreateError struct {
	code int16
	msg  string
}

func (e *topicCreateError) Error() string { return e.msg }

// createTopic validates and creates a topic through the metadata store and
// opens its partition logs. numPartitions/replicationFactor of -1 take the
// broker defaults. validateOnly stops after validation.
func (s *Server) createTopic(ctx context.Context, name string, numPartitions int32, replicationFactor int16, configs map[string]string, validateOnly bool) (*raftmeta.Topic, error) {
	if err := validateTopicName(name); err != nil {
		return nil, &topicCreateError{errInvalidTopic, err.Error()}
	}
	if isInternalTopic(name) {
		return nil, &topicCreateError{errInvalidRequest, fmt.Sprintf("Creation of internal topic %s is not supported by sharq.", name)}
	}
	if numPartitions == -1 {
		numPartitions = s.cfg.NumPartitions
	}
	if replicationFactor == -1 {
		replicationFactor = s.cfg.DefaultReplicationFactor
	}
	if numPartitions <= 0 {
		return nil, &topicCreateError{errInvalidPartitions, "Number of partitions was set to an invalid non-positive value."}
	}
	if replicationFactor <= 0 {
		return nil, &topicCreateError{errInvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value."}
	}
	img := s.meta.Image()
	if _, ok := img.Topics[name]; ok {
		return nil, &topicCreateError{errTopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", name)}
	}
	brokers := sortedBrokerIDs(img)
	if int(replicationFactor) > len(brokers) {
		return nil, &topicCreateError{errInvalidReplicationFactor,
			fmt.Sprintf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.", replicationFactor, replicationFactor, len(brokers))}
	}
	for k, v := range configs {
		if err := config.ValidateTopicConfig(k, v); err != nil {
			return nil, &topicCreateError{errInvalidConfig, err.Error()}
		}
	}
	if err := s.checkPartitionLimit(img, name, int64(numPartitions)); err != nil {
		return nil, err
	}
	if validateOnly {
		return &raftmeta.Topic{Name: name, Partitions: make([]raftmeta.Partition, numPartitions), Configs: configs}, nil
	}
	replicas := brokers[:replicationFactor]
	t, err := s.meta.CreateTopic(ctx, name, numPartitions, replicas, configs)
	if err != nil {
		return nil, err
	}
	if err := s.syncPartitions(); err != nil {
		return nil, err
	}
	return t, nil
}

// checkPartitionLimit refuses, up front, growing the cluster past
// sharq.max.partitions partitions, as a CreateTopicPolicy would
// (POLICY_VIOLATION), with a message naming the limit: a request the broker
// cannot provide is never half done.
func (s *Server) checkPartitionLimit(img *raftmeta.Image, topic string, add int64) error {
	limit := int64(s.cfg.MaxPartitions)
	if limit <= 0 {
		return nil
	}
	have := int64(0)
	for _, t := range img.Topics {
		have += int64(len(t.Partitions))
	}
	if have+add <= limit {
		return nil
	}
	return &topicCreateError{errPolicyViolation, fmt.Sprintf(
		"Adding %d partition(s) to topic %s would bring the cluster to %d partitions, more than sharq.max.partitions=%d (%d exist).",
		add, topic, have+add, limit, have)}
}

func sortedBrokerIDs(img *raftmeta.Image) []int32 {
	var ids []int32
	for id := range img.Brokers {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

// metaErrorCode maps metadata store errors to Kafka codes.
func metaErrorCode(err error) (int16, string) {
	var tce *topicCreateError
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &tce):
		return tce.code, tce.msg
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return errRequestTimedOut, err.Error()
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EIO), errors.Is(err, syscall.EROFS):
		// the metadata log could not be written: a disk fault, not a bug
		return errKafkaStorage, err.Error()
	}
	return raftmeta.ErrorCode(err), err.Error()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
