package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

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

// internalPartition reports whether topic is an internal topic in the
// metadata with that partition.
func (s *Server) internalPartition(topic string, partition int32) bool {
	if !isInternalTopic(topic) {
		return false
	}
	t := s.meta.Image().Topics[topic]
	return t != nil && partition >= 0 && int(partition) < len(t.Partitions)
}

// isInternalTopic reports Kafka's internal topic names. They cannot be
// created, produced to or read by clients; sharq lists them in Metadata
// (is_internal) once Kafka would have created them (ensureInternalTopic).
func isInternalTopic(name string) bool {
	return internalTopicSpecs[name].partitionsKey != ""
}

// internalTopicSpec says how Kafka creates an internal topic: its partition
// count and replication factor keys and the topic configs it sets.
type internalTopicSpec struct {
	partitionsKey, replicationKey string
	configs                       map[string]string
}

var internalTopicSpecs = map[string]internalTopicSpec{
	// Created by the first FindCoordinator for a group.
	"__consumer_offsets": {"offsets.topic.num.partitions", "offsets.topic.replication.factor",
		map[string]string{"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"}},
	// Created by the first FindCoordinator for a transactional id.
	"__transaction_state": {"transaction.state.log.num.partitions", "transaction.state.log.replication.factor",
		map[string]string{"cleanup.policy": "compact", "compression.type": "uncompressed", "segment.bytes": "104857600", "unclean.leader.election.enable": "false"}},
	// Created when the share coordinator is first looked up, which a
	// share group's first heartbeat does.
	"__share_group_state": {"share.coordinator.state.topic.num.partitions", "share.coordinator.state.topic.replication.factor",
		map[string]string{"cleanup.policy": "delete", "compression.type": "producer", "retention.ms": "-1", "segment.bytes": "104857600"}},
}

// ensureInternalTopic creates the internal topic name in the metadata, as
// Kafka creates its log on first use. sharq keeps the state Kafka writes
// there in its state store, so no partition log is opened for it; the
// topic exists so that Metadata, kafka-topics and regex subscriptions see
// what they see on Kafka. Unlike Kafka, the replication factor is capped at
// the registered brokers instead of failing until enough have joined.
func (s *Server) ensureInternalTopic(ctx context.Context, name string) error {
	if s.meta.Image().Topics[name] != nil {
		return nil
	}
	spec := internalTopicSpecs[name]
	s.internalMu.Lock()
	defer s.internalMu.Unlock()
	img := s.meta.Image()
	if img.Topics[name] != nil {
		return nil
	}
	cfg := s.effectiveConfig()
	n, err := strconv.ParseInt(config.Value(cfg, spec.partitionsKey), 10, 32)
	if err != nil || n <= 0 {
		return fmt.Errorf("internal topic %s: %s=%q", name, spec.partitionsKey, config.Value(cfg, spec.partitionsKey))
	}
	rf, err := strconv.Atoi(config.Value(cfg, spec.replicationKey))
	brokers := s.nodeIDs(img)
	if err != nil || rf <= 0 || rf > len(brokers) || s.virtual {
		rf = len(brokers)
	}
	if rf == 0 {
		return fmt.Errorf("internal topic %s: no broker registered", name)
	}
	// Not the request's context: a client that gives up must not leave the
	// topic in the metadata without its partitions served here.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := s.meta.CreateTopic(ctx, name, int32(n), brokers[:rf], spec.configs); err != nil && !errors.Is(err, raftmeta.ErrTopicExists) {
		if s.meta.Image().Topics[name] == nil {
			return fmt.Errorf("create internal topic %s: %w", name, err)
		}
	}
	s.logger.Info("created internal topic", "topic", name, "partitions", n, "replication_factor", rf)
	return s.syncPartitions()
}

// internalTopicRead answers a client's read of an internal topic: sharq
// keeps that state in its state store, not in Kafka's record formats, so the
// read is refused with TOPIC_AUTHORIZATION_FAILED, the one error Kafka's
// consumers report at once instead of retrying, and the log says why.
func (s *Server) internalTopicRead(api, topic string) int16 {
	// At most one line a minute: a lag tool polls.
	now := time.Now().UnixNano()
	if last := s.internalWarned.Load(); now-last < int64(time.Minute) || !s.internalWarned.CompareAndSwap(last, now) {
		return errTopicAuthorizationFailed
	}
	s.logger.Warn(api+" of an internal topic refused: sharq keeps group offsets and share and transaction state in its state store, not in Kafka's record formats; use kafka-consumer-groups / kafka-share-groups --describe", "topic", topic)
	return errTopicAuthorizationFailed
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
		if _, ok := s.meta.Image().Topics[name]; ok {
			return nil, &topicCreateError{errTopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", name)}
		}
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
	if other := raftmeta.CollidingTopic(img, name); other != "" {
		// Kafka's message. Checked here, not in the metadata store's apply,
		// so that a log written before this check still replays whole.
		return nil, &topicCreateError{errInvalidTopic, fmt.Sprintf("Topic '%s' collides with existing topic: %s", name, other)}
	}
	brokers := s.nodeIDs(img)
	if int(replicationFactor) > len(brokers) {
		return nil, &topicCreateError{errInvalidReplicationFactor,
			fmt.Sprintf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered or some brokers have all their log directories cordoned.", replicationFactor, replicationFactor, len(brokers))}
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
	if s.virtual {
		// Every partition on every virtual node: they share its one log
		// (docs/virtual-brokers.md).
		replicas = brokers
	}
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
