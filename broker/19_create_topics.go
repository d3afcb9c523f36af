package broker

// CreateTopics: v2-7
//
// Behavior:
// * Validates names, partition counts, replication factor and configs, then
//   creates through the metadata store; answers once the topic is applied
//   locally (partition logs are created on first use).
// * A request that would take the cluster past sharq.max.partitions is
//   refused up front with POLICY_VIOLATION naming the limit.
// * A topic named twice in one request fails with INVALID_REQUEST.
// * Manual replica assignments must name registered brokers and give every
//   partition the same replica list (sharq places all partitions of a topic
//   on one replica set).
// * ValidateOnly stops after validation.
//
// Version notes:
// * v5: the response describes the created topic (partitions, RF, configs).
// * v7: topic id in the response.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
)

func init() { regKey(19, 2, 7, handleCreateTopics) }

func handleCreateTopics(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := make(map[string]int, len(req.Topics))
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	createAllowed := r.authorizeCluster(opCreate)
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		fail := func(code int16, msg string) {
			rt.ErrorCode = code
			rt.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, rt)
		}
		if seen[t.Topic] > 1 {
			fail(errInvalidRequest, "Duplicate topic name.")
			continue
		}
		if !createAllowed && !r.authorize(resTopic, t.Topic, opCreate) {
			fail(kerr.TopicAuthorizationFailed.Code, "Authorization failed.")
			continue
		}
		configs := make(map[string]string, len(t.Configs))
		var cfgErr string
		for _, c := range t.Configs {
			if c.Value == nil {
				cfgErr = fmt.Sprintf("Null value not supported for topic configs: %s", c.Name)
				break
			}
			configs[c.Name] = *c.Value
		}
		if cfgErr != "" {
			fail(errInvalidConfig, cfgErr)
			continue
		}
		numPartitions, rf := t.NumPartitions, t.ReplicationFactor
		if len(t.ReplicaAssignment) > 0 {
			if numPartitions != -1 || rf != -1 {
				fail(errInvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
				continue
			}
			n, replicas, msg := checkAssignment(r, t.ReplicaAssignment)
			if msg != "" {
				fail(kerr.InvalidReplicaAssignment.Code, msg)
				continue
			}
			numPartitions, rf = n, int16(len(replicas))
		}
		created, err := r.s.createTopic(r.ctx, t.Topic, numPartitions, rf, configs, req.ValidateOnly)
		if err != nil {
			code, msg := metaErrorCode(err)
			fail(code, msg)
			continue
		}
		rt.TopicID = created.ID
		rt.NumPartitions = int32(len(created.Partitions))
		rt.ReplicationFactor = rf
		if rf == -1 {
			rt.ReplicationFactor = r.s.cfg.DefaultReplicationFactor
		}
		if !r.authorize(resTopic, t.Topic, opDescribeConfigs) {
			// Kafka withholds the configs of a topic the principal may
			// not describe the configs of.
			rt.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		for _, e := range config.TopicEntries(r.s.cfg, configs) {
			c := kmsg.NewCreateTopicsResponseTopicConfig()
			c.Name = e.Name
			v := e.Value
			c.Value = &v
			c.ReadOnly = e.ReadOnly
			c.Source = e.Source
			c.IsSensitive = e.Sensitive
			if e.Sensitive {
				c.Value = nil
			}
			rt.Configs = append(rt.Configs, c)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// checkAssignment validates a manual replica assignment and returns the
// partition count and the (common) replica list.
func checkAssignment(r *request, as []kmsg.CreateTopicsRequestTopicReplicaAssignment) (int32, []int32, string) {
	img := r.s.meta.Image()
	byPartition := make(map[int32][]int32, len(as))
	for _, a := range as {
		if _, dup := byPartition[a.Partition]; dup {
			return 0, nil, fmt.Sprintf("Partition %d is assigned twice.", a.Partition)
		}
		if len(a.Replicas) == 0 {
			return 0, nil, fmt.Sprintf("Partition %d has no replicas.", a.Partition)
		}
		for _, b := range a.Replicas {
			if _, ok := img.Brokers[b]; !ok {
				return 0, nil, fmt.Sprintf("Broker %d in the assignment of partition %d is not registered.", b, a.Partition)
			}
		}
		byPartition[a.Partition] = a.Replicas
	}
	first := byPartition[0]
	for p := int32(0); p < int32(len(as)); p++ {
		rs, ok := byPartition[p]
		if !ok {
			return 0, nil, "Partitions should be a consecutive 0-based integer sequence."
		}
		if !slices.Equal(rs, first) {
			return 0, nil, "sharq places every partition of a topic on the same replicas; give all partitions the same replica list."
		}
	}
	return int32(len(as)), first, ""
}
