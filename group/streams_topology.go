package group

import (
	"fmt"
	"sort"
	"strings"
)

// Streams group status codes (StreamsGroupHeartbeatResponse Status).
const (
	StreamsStatusStaleTopology                int8 = 0
	StreamsStatusMissingSourceTopics          int8 = 1
	StreamsStatusIncorrectlyPartitionedTopics int8 = 2
	StreamsStatusMissingInternalTopics        int8 = 3
	StreamsStatusShutdownApplication          int8 = 4
	StreamsStatusAssignmentDelayed            int8 = 5
)

// StreamsStatus is one status of a streams group heartbeat answer.
type StreamsStatus struct {
	Code   int8
	Detail string
}

// StreamsTopicConfig is one topic config a topology asks for.
type StreamsTopicConfig struct{ Key, Value string }

// StreamsTopicInfo is an internal topic of a topology: its name, the
// partition count it insists on (0 = derived from the source topics) and
// its replication factor (0 = broker default) and configs.
type StreamsTopicInfo struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           []StreamsTopicConfig
}

// StreamsSubtopology is one subtopology of a streams application.
type StreamsSubtopology struct {
	ID                      string
	SourceTopics            []string
	SourceTopicRegex        []string
	RepartitionSinkTopics   []string
	StateChangelogTopics    []StreamsTopicInfo
	RepartitionSourceTopics []StreamsTopicInfo
	// CopartitionGroups are resolved to topic names (the wire carries
	// indexes into SourceTopics and RepartitionSourceTopics).
	CopartitionGroups [][]string
}

// StreamsTopology is what a joining member declares (KIP-1071).
type StreamsTopology struct {
	Epoch         int32
	Subtopologies []StreamsSubtopology
}

// StreamsInternalTopic is an internal topic the coordinator wants created:
// the broker creates it through its create-topic path.
type StreamsInternalTopic struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16 // -1 = broker default
	Configs           map[string]string
}

// configuredTopology is a topology checked against the cluster's topics,
// as Kafka's InternalTopicManager does: the number of tasks of every
// subtopology once every source and internal topic exists with the right
// partition count, or the status that says why not.
type configuredTopology struct {
	ready  bool
	tasks  map[string]int32 // subtopology -> number of tasks
	status *StreamsStatus
	create []StreamsInternalTopic
	// internal are the decided partition counts of the internal topics.
	internal map[string]int32
	// hash is the topic metadata the configuration was computed from.
	hash string
}

// summarizeTopics is Kafka's list of topics in status details: up to three
// names, then a count of the others.
func summarizeTopics(names []string) string {
	if len(names) == 0 {
		return "<none>"
	}
	sort.Strings(names)
	s := strings.Join(names[:min(3, len(names))], ", ")
	if len(names) > 3 {
		s += fmt.Sprintf(" and %d additional topics", len(names)-3)
	}
	return s
}

// topologyTopics lists every topic a topology reads or creates, for the
// metadata hash that tells when the configuration must be recomputed.
func (t *StreamsTopology) topologyTopics() []string {
	var out []string
	for _, s := range t.Subtopologies {
		out = append(out, s.SourceTopics...)
		for _, ti := range s.RepartitionSourceTopics {
			out = append(out, ti.Name)
		}
		for _, ti := range s.StateChangelogTopics {
			out = append(out, ti.Name)
		}
	}
	sort.Strings(out)
	return out
}

// streamsTopicsHash summarises the metadata of a topology's topics.
func streamsTopicsHash(t *StreamsTopology, topics map[string]TopicInfo) string {
	var b strings.Builder
	for _, n := range t.topologyTopics() {
		if ti, ok := topics[n]; ok {
			fmt.Fprintf(&b, "%s/%x/%d;", n, ti.ID, ti.Partitions)
		} else {
			fmt.Fprintf(&b, "%s/-;", n)
		}
	}
	return b.String()
}

// configureTopology decides the partition counts of the internal topics,
// checks co-partitioning and lists the internal topics to create, in
// Kafka's order: source topics, repartition topics, co-partition groups,
// then tasks and internal topics.
func configureTopology(t *StreamsTopology, topics map[string]TopicInfo) *configuredTopology {
	ct := &configuredTopology{hash: streamsTopicsHash(t, topics)}
	pc := newPartitionCounts(t, topics)
	if st := pc.missingSources(t); st != nil {
		return ct.fail(st)
	}
	if st := pc.decideRepartition(t); st != nil {
		return ct.fail(st)
	}
	if st := pc.copartition(t); st != nil {
		return ct.fail(st)
	}
	return pc.plan(t, ct)
}

// fail makes ct a configuration that cannot run: status says why, and no
// internal topic is created.
func (ct *configuredTopology) fail(st *StreamsStatus) *configuredTopology {
	ct.status = st
	ct.create = nil
	return ct
}

// partitionCounts are the partition counts configureTopology knows: the
// cluster's topics, then the repartition topics it decided.
type partitionCounts struct {
	topics      map[string]TopicInfo
	repartition map[string]bool // the topology's repartition topics
	decided     map[string]int32
}

func newPartitionCounts(t *StreamsTopology, topics map[string]TopicInfo) *partitionCounts {
	pc := &partitionCounts{topics: topics, repartition: map[string]bool{}, decided: map[string]int32{}}
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			pc.repartition[ti.Name] = true
		}
	}
	return pc
}

func (pc *partitionCounts) count(n string) (int32, bool) {
	if ti, ok := pc.topics[n]; ok {
		return ti.Partitions, true
	}
	p, ok := pc.decided[n]
	return p, ok
}

// missingSources checks the source topics first: nothing can be decided
// without them.
func (pc *partitionCounts) missingSources(t *StreamsTopology) *StreamsStatus {
	var missing []string
	seen := map[string]bool{}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			if _, ok := pc.topics[n]; !ok && !pc.repartition[n] && !seen[n] {
				seen[n] = true
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		return &StreamsStatus{Code: StreamsStatusMissingSourceTopics, Detail: "Source topics " + summarizeTopics(missing) + " are missing."}
	}
	return nil
}

// decideRepartition gives each repartition topic a fixed count, or the
// largest source count of the subtopologies writing into it, repeated
// until nothing changes (a repartition topic may be fed by a subtopology
// that itself reads a repartition topic).
func (pc *partitionCounts) decideRepartition(t *StreamsTopology) *StreamsStatus {
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Partitions > 0 {
				pc.decided[ti.Name] = ti.Partitions
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, s := range t.Subtopologies {
			for _, ti := range s.RepartitionSourceTopics {
				if _, ok := pc.decided[ti.Name]; ok {
					continue
				}
				var best int32
				for _, w := range t.Subtopologies {
					if !contains(w.RepartitionSinkTopics, ti.Name) {
						continue
					}
					for _, src := range w.sourceNames() {
						if p, ok := pc.count(src); ok && p > best {
							best = p
						}
					}
				}
				if best > 0 {
					pc.decided[ti.Name] = best
					changed = true
				}
			}
		}
	}
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if _, ok := pc.count(ti.Name); !ok {
				return &StreamsStatus{Code: StreamsStatusIncorrectlyPartitionedTopics, Detail: "Failed to compute the number of partitions of repartition topic " + ti.Name + "."}
			}
		}
	}
	return nil
}

// copartition checks the co-partition groups: external topics of a group
// must agree; flexible repartition topics follow them (or the largest
// repartition count when the group has only repartition topics).
func (pc *partitionCounts) copartition(t *StreamsTopology) *StreamsStatus {
	for _, s := range t.Subtopologies {
		for _, grp := range s.CopartitionGroups {
			external := map[string]int32{}
			var flexible []string
			var repMax int32
			for _, n := range grp {
				if pc.repartition[n] {
					if _, exists := pc.topics[n]; !exists && s.fixedRepartition(n) == 0 {
						flexible = append(flexible, n)
					}
					if p, ok := pc.count(n); ok && p > repMax {
						repMax = p
					}
					continue
				}
				p, _ := pc.count(n)
				external[n] = p
			}
			want := repMax
			if len(external) > 0 {
				want = -1
				for _, p := range external {
					if want == -1 {
						want = p
					} else if p != want {
						return &StreamsStatus{Code: StreamsStatusIncorrectlyPartitionedTopics, Detail: "Topics not co-partitioned: [" + javaMap(external) + "]"}
					}
				}
			}
			for _, n := range flexible {
				pc.decided[n] = want
			}
			for _, n := range grp {
				if p, _ := pc.count(n); pc.repartition[n] && p != want {
					return &StreamsStatus{Code: StreamsStatusIncorrectlyPartitionedTopics, Detail: fmt.Sprintf("Number of partitions [%d] of repartition topic [%s] doesn't match number of partitions [%d] of the source topic.", p, n, want)}
				}
			}
		}
	}
	return nil
}

// plan fills in ct once the counts are decided: as many tasks per
// subtopology as its largest input, that many partitions for its
// changelogs, and the internal topics still to create.
func (pc *partitionCounts) plan(t *StreamsTopology, ct *configuredTopology) *configuredTopology {
	ct.tasks = map[string]int32{}
	want := map[string]StreamsInternalTopic{}
	for _, s := range t.Subtopologies {
		var n int32
		for _, src := range s.sourceNames() {
			if p, ok := pc.count(src); ok && p > n {
				n = p
			}
		}
		ct.tasks[s.ID] = n
		for _, ti := range s.RepartitionSourceTopics {
			p, _ := pc.count(ti.Name)
			want[ti.Name] = internalTopic(ti, p)
		}
		for _, ti := range s.StateChangelogTopics {
			want[ti.Name] = internalTopic(ti, n)
		}
	}
	ct.internal = map[string]int32{}
	for n, it := range want {
		ct.internal[n] = it.Partitions
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	var absent []string
	for _, n := range names {
		it := want[n]
		if ti, ok := pc.topics[n]; ok {
			if ti.Partitions != it.Partitions {
				return ct.fail(&StreamsStatus{Code: StreamsStatusIncorrectlyPartitionedTopics, Detail: fmt.Sprintf("Existing topic %s has different number of partitions: expected %d, found %d", n, it.Partitions, ti.Partitions)})
			}
			continue
		}
		absent = append(absent, n)
		ct.create = append(ct.create, it)
	}
	if len(absent) > 0 {
		ct.status = &StreamsStatus{Code: StreamsStatusMissingInternalTopics, Detail: "Internal topics are missing: " + summarizeTopics(absent)}
		return ct
	}
	ct.ready = true
	return ct
}

func internalTopic(ti StreamsTopicInfo, partitions int32) StreamsInternalTopic {
	it := StreamsInternalTopic{Name: ti.Name, Partitions: partitions, ReplicationFactor: -1, Configs: map[string]string{}}
	if ti.ReplicationFactor != 0 {
		it.ReplicationFactor = ti.ReplicationFactor
	}
	for _, c := range ti.Configs {
		it.Configs[c.Key] = c.Value
	}
	return it
}

// sourceNames are the topics a subtopology reads: its source topics and
// its repartition source topics.
func (s *StreamsSubtopology) sourceNames() []string {
	out := append([]string(nil), s.SourceTopics...)
	for _, ti := range s.RepartitionSourceTopics {
		if !contains(out, ti.Name) {
			out = append(out, ti.Name)
		}
	}
	return out
}

func (s *StreamsSubtopology) fixedRepartition(name string) int32 {
	for _, ti := range s.RepartitionSourceTopics {
		if ti.Name == name {
			return ti.Partitions
		}
	}
	return 0
}

// javaMap prints a map as Java's TreeMap.toString does ("a=1, b=2").
func javaMap(m map[string]int32) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// validateStreamsTopology is Kafka's check of a joining member's
// topology (STREAMS_INVALID_TOPOLOGY).
func validateStreamsTopology(t *StreamsTopology) error {
	ids := map[string]bool{}
	for _, s := range t.Subtopologies {
		if ids[s.ID] {
			return withMsg(ErrStreamsInvalidTopology, fmt.Sprintf("Duplicate subtopology id %s.", s.ID))
		}
		ids[s.ID] = true
		for _, ti := range s.StateChangelogTopics {
			if ti.Partitions != 0 {
				return withMsg(ErrStreamsInvalidTopology, fmt.Sprintf("Changelog topic %s must have an undefined partition count, but it is set to %d.", ti.Name, ti.Partitions))
			}
		}
		if len(s.sourceNames()) == 0 {
			return withMsg(ErrStreamsInvalidTopology, fmt.Sprintf("Subtopology %s has no source topics.", s.ID))
		}
	}
	return nil
}
