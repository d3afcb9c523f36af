package raftmeta

import (
	"errors"
	"fmt"
	"maps"
	"math"
)

// Errors the FSM uses internally; never returned by the Store methods.
var (
	// errAlreadyBootstrapped rejects a second bootstrap command (two
	// proposers raced on first start); the first one wins everywhere.
	errAlreadyBootstrapped = errors.New("cluster already bootstrapped")
	// errStaleProposal means the image changed between the proposer reading
	// it and the command being applied; the proposer re-reads and retries.
	errStaleProposal = errors.New("stale proposal")
	// errTopicIDTaken: the random id collided with an existing topic's id.
	errTopicIDTaken = errors.New("topic id already in use")
)

// builder derives the next image from a published one by copy-on-write: the
// first change to a map clones that map (and only that map), so an apply
// costs the size of the maps it touches, and readers of the old image never
// see a write. Nested values (*Topic, inner config maps) are replaced, never
// mutated.
type builder struct {
	img *Image

	brokersOwned, topicsOwned, byIDOwned       bool
	brokerCfgOwned, groupCfgOwned, quotasOwned bool
	clientMetricsOwned                         bool
	featuresOwned                              bool
}

func newBuilder(base *Image) *builder {
	next := *base
	return &builder{img: &next}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return make(map[K]V)
	}
	return maps.Clone(m)
}

func (b *builder) brokers() map[int32]Broker {
	if !b.brokersOwned {
		b.img.Brokers = cloneMap(b.img.Brokers)
		b.brokersOwned = true
	}
	return b.img.Brokers
}

func (b *builder) topics() map[string]*Topic {
	if !b.topicsOwned {
		b.img.Topics = cloneMap(b.img.Topics)
		b.topicsOwned = true
	}
	return b.img.Topics
}

func (b *builder) topicsByID() map[UUID]*Topic {
	if !b.byIDOwned {
		b.img.TopicsByID = cloneMap(b.img.TopicsByID)
		b.byIDOwned = true
	}
	return b.img.TopicsByID
}

func (b *builder) features() map[string]int16 {
	if !b.featuresOwned {
		b.img.Features = cloneMap(b.img.Features)
		b.featuresOwned = true
	}
	return b.img.Features
}

func (b *builder) brokerConfigs() map[string]map[string]string {
	if !b.brokerCfgOwned {
		b.img.BrokerConfigs = cloneMap(b.img.BrokerConfigs)
		b.brokerCfgOwned = true
	}
	return b.img.BrokerConfigs
}

func (b *builder) clientQuotas() map[string]map[string]string {
	if !b.quotasOwned {
		b.img.ClientQuotas = cloneMap(b.img.ClientQuotas)
		b.quotasOwned = true
	}
	return b.img.ClientQuotas
}

func (b *builder) clientMetrics() map[string]map[string]string {
	if !b.clientMetricsOwned {
		b.img.ClientMetrics = cloneMap(b.img.ClientMetrics)
		b.clientMetricsOwned = true
	}
	return b.img.ClientMetrics
}

func (b *builder) groupConfigs() map[string]map[string]string {
	if !b.groupCfgOwned {
		b.img.GroupConfigs = cloneMap(b.img.GroupConfigs)
		b.groupCfgOwned = true
	}
	return b.img.GroupConfigs
}

// putTopic installs t (a fresh value) under its name and id.
func (b *builder) putTopic(t *Topic) {
	b.topics()[t.Name] = t
	b.topicsByID()[t.ID] = t
}

// validAssignment checks a per-partition replica assignment.
func validAssignment(a [][]int32) error {
	for p, replicas := range a {
		if len(replicas) == 0 {
			return fmt.Errorf("partition %d has no replicas: %w", p, ErrInvalidReplicationFactor)
		}
		for i, r := range replicas {
			if r < 0 {
				return fmt.Errorf("partition %d replica %d: %w", p, r, ErrInvalidReplicaAssignment)
			}
			for _, o := range replicas[:i] {
				if o == r {
					return fmt.Errorf("partition %d lists replica %d twice: %w", p, r, ErrInvalidReplicaAssignment)
				}
			}
		}
	}
	return nil
}

// newPartitions builds fresh partitions: leader = first replica, epochs 0,
// ISR = all replicas (a new partition has no data to be behind on).
func newPartitions(dst []Partition, a [][]int32) []Partition {
	for _, replicas := range a {
		r := append([]int32(nil), replicas...)
		dst = append(dst, Partition{
			Leader:   r[0],
			Replicas: r,
			ISR:      append([]int32(nil), r...),
		})
	}
	return dst
}

// applyConfigChange returns cur with set applied then del removed, as a new
// map (nil when empty). cur is never modified.
func applyConfigChange(cur, set map[string]string, del []string) map[string]string {
	next := make(map[string]string, len(cur)+len(set))
	maps.Copy(next, cur)
	maps.Copy(next, set)
	for _, k := range del {
		delete(next, k)
	}
	if len(next) == 0 {
		return nil
	}
	return next
}

func validConfigKeys(set map[string]string, del []string) error {
	for k := range set {
		if k == "" {
			return fmt.Errorf("empty config name: %w", ErrInvalidRequest)
		}
	}
	for _, k := range del {
		if k == "" {
			return fmt.Errorf("empty config name: %w", ErrInvalidRequest)
		}
	}
	return nil
}

func (c *bootstrapCmd) apply(b *builder) any {
	if b.img.ClusterID != "" {
		return errAlreadyBootstrapped
	}
	if c.ClusterID == "" {
		return fmt.Errorf("bootstrap without cluster id: %w", ErrInvalidRequest)
	}
	for name, lvl := range c.Features {
		if name == "" || lvl < 0 {
			return fmt.Errorf("feature %q level %d: %w", name, lvl, ErrInvalidRequest)
		}
	}
	b.img.ClusterID = c.ClusterID
	f := b.features()
	for name, lvl := range c.Features {
		if lvl == 0 {
			delete(f, name)
		} else {
			f[name] = lvl
		}
	}
	return nil
}

func (c *registerBrokerCmd) apply(b *builder) any {
	if c.Broker.NodeID < 0 || c.Broker.Port < 0 || c.Broker.Port > math.MaxUint16 {
		return fmt.Errorf("register broker %d port %d: %w", c.Broker.NodeID, c.Broker.Port, ErrInvalidRequest)
	}
	b.brokers()[c.Broker.NodeID] = c.Broker
	return nil
}

func (c *createTopicCmd) apply(b *builder) any {
	if err := validTopicName(c.Name); err != nil {
		return err
	}
	if c.ID == (UUID{}) {
		return fmt.Errorf("create topic %s with zero id: %w", c.Name, ErrInvalidRequest)
	}
	if _, ok := b.img.Topics[c.Name]; ok {
		return fmt.Errorf("create topic %s: %w", c.Name, ErrTopicExists)
	}
	if _, ok := b.img.TopicsByID[c.ID]; ok {
		return errTopicIDTaken
	}
	if len(c.Assignment) == 0 || len(c.Assignment) > MaxPartitions {
		return fmt.Errorf("create topic %s with %d partitions: %w", c.Name, len(c.Assignment), ErrInvalidPartitions)
	}
	if err := validAssignment(c.Assignment); err != nil {
		return fmt.Errorf("create topic %s: %w", c.Name, err)
	}
	if err := validConfigKeys(c.Configs, nil); err != nil {
		return fmt.Errorf("create topic %s: %w", c.Name, err)
	}
	t := &Topic{
		Name:       c.Name,
		ID:         c.ID,
		Partitions: newPartitions(make([]Partition, 0, len(c.Assignment)), c.Assignment),
		Configs:    applyConfigChange(nil, c.Configs, nil),
	}
	b.putTopic(t)
	return t
}

func (c *deleteTopicCmd) apply(b *builder) any {
	t, ok := b.img.Topics[c.Name]
	if !ok || t.ID != c.ID {
		return fmt.Errorf("delete topic %s: %w", c.Name, ErrUnknownTopic)
	}
	delete(b.topics(), t.Name)
	delete(b.topicsByID(), t.ID)
	return t.ID
}

func (c *createPartitionsCmd) apply(b *builder) any {
	t, ok := b.img.Topics[c.Name]
	if !ok || t.ID != c.ID {
		return fmt.Errorf("create partitions for %s: %w", c.Name, ErrUnknownTopic)
	}
	cur := int64(len(t.Partitions))
	newCount := int64(c.From) + int64(len(c.Assignment))
	if newCount <= cur || newCount > MaxPartitions {
		return fmt.Errorf("topic %s has %d partitions, asked for %d: %w", c.Name, cur, newCount, ErrInvalidPartitions)
	}
	if int64(c.From) != cur {
		return errStaleProposal
	}
	if err := validAssignment(c.Assignment); err != nil {
		return fmt.Errorf("create partitions for %s: %w", c.Name, err)
	}
	next := *t
	next.Partitions = newPartitions(append(make([]Partition, 0, newCount), t.Partitions...), c.Assignment)
	b.putTopic(&next)
	return nil
}

func (c *alterConfigsCmd) apply(b *builder) any {
	if err := validConfigKeys(c.Set, c.Delete); err != nil {
		return err
	}
	switch c.Resource {
	case resourceTopic:
		t, ok := b.img.Topics[c.Entity]
		if !ok {
			return fmt.Errorf("alter configs of topic %s: %w", c.Entity, ErrUnknownTopic)
		}
		next := *t
		next.Configs = applyConfigChange(t.Configs, c.Set, c.Delete)
		b.putTopic(&next)
	case resourceBroker, resourceGroup, resourceClientQuota, resourceClientMetrics:
		var m map[string]map[string]string
		switch c.Resource {
		case resourceBroker:
			m = b.brokerConfigs()
		case resourceClientMetrics:
			if c.Entity == "" {
				return fmt.Errorf("alter an unnamed client metrics subscription: %w", ErrInvalidRequest)
			}
			m = b.clientMetrics()
		case resourceClientQuota:
			if c.Entity == "" {
				return fmt.Errorf("alter client quotas of no entity: %w", ErrInvalidRequest)
			}
			m = b.clientQuotas()
		default:
			if c.Entity == "" {
				return fmt.Errorf("alter configs of an unnamed group: %w", ErrInvalidRequest)
			}
			m = b.groupConfigs()
		}
		if next := applyConfigChange(m[c.Entity], c.Set, c.Delete); next == nil {
			delete(m, c.Entity)
		} else {
			m[c.Entity] = next
		}
	default:
		return fmt.Errorf("config resource %d: %w", c.Resource, ErrInvalidRequest)
	}
	return nil
}

func (c *setFeatureCmd) apply(b *builder) any {
	if c.Name == "" || c.Level < 0 {
		return fmt.Errorf("feature %q level %d: %w", c.Name, c.Level, ErrInvalidRequest)
	}
	// Kafka lists a finalized feature only while its level is above 0.
	if c.Level == 0 {
		delete(b.features(), c.Name)
	} else {
		b.features()[c.Name] = c.Level
	}
	return nil
}

func (c *allocateProducerIDsCmd) apply(b *builder) any {
	if c.Count <= 0 || c.Count > math.MaxInt64-b.img.NextProducerID {
		return fmt.Errorf("allocate %d producer ids after %d: %w", c.Count, b.img.NextProducerID, ErrInvalidRequest)
	}
	first := b.img.NextProducerID
	b.img.NextProducerID += c.Count
	return first
}
