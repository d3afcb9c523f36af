package interop

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// scenario runs against one started target. Scenarios share the target, so
// each uses its own topic names; names are the same on every target so that
// golden outputs line up.
type scenario struct {
	name string
	run  func(t *testing.T, tg Target)
	// requires lists API keys the scenario cannot do without; on a target
	// that does not advertise one of them the scenario is skipped (and says
	// which), so scenarios for features sharq has yet to build can already
	// run against Apache Kafka.
	requires []int16
}

var scenarios = []scenario{
	{name: "topics", run: scenarioTopics},
	{name: "topic-errors", run: scenarioTopicErrors},
	{name: "api-versions", run: scenarioAPIVersions},
	// What a client gets for an API the broker does not serve
	// (unsupported_test.go).
	{name: "unsupported-keys", run: scenarioUnsupportedKeys},
	{name: "authorized-ops", run: scenarioAuthorizedOps, requires: []int16{60, 68, 69, 75, 76, 77}},
	{name: "features", run: scenarioFeatures},
	{name: "features-update", run: scenarioFeaturesUpdate, requires: []int16{57}},
	{name: "metadata-quorum", run: scenarioMetadataQuorum, requires: []int16{55}},
	{name: "client-quotas", run: scenarioClientQuotas, requires: []int16{48, 49}},
	{name: "client-metrics", run: scenarioClientMetrics, requires: []int16{32, 44, 74}},
	{name: "console", run: scenarioConsole},
	// A compacted topic through Kafka's console tools (compaction_test.go).
	{name: "compaction", run: scenarioCompaction, requires: []int16{1, 19, 44}},
	{name: "configs", run: scenarioConfigs},
	// Classic groups (JoinGroup/SyncGroup) and KIP-848 consumer groups.
	{name: "consumer-groups", run: scenarioConsumerGroups, requires: []int16{
		8, 9, 10, 11, 12, 13, 14, 15, 16, 42, // offsets, coordinator, classic protocol, list/describe/delete
		68, 69, // ConsumerGroupHeartbeat, ConsumerGroupDescribe
	}},
	// Share groups (KIP-932) through the console share consumer and
	// kafka-share-groups.
	{name: "share-groups", run: scenarioShareGroups, requires: []int16{
		10, 16, 32, 42, 44, // coordinator, list/delete groups, group configs
		76, 77, 78, 79, // ShareGroupHeartbeat/Describe, ShareFetch/Acknowledge
		90, 91, 92, // Describe/Alter/DeleteShareGroupOffsets
	}},
	// librdkafka (confluent-kafka for Python, rdkafka_test.go): produce and
	// consume by assignment need no group APIs.
	{name: "wire-fetch", run: scenarioWireFetch},
	{name: "rdkafka", run: scenarioRdkafka},
	{name: "rdkafka-eof", run: scenarioRdkafkaEOF},
	{name: "rdkafka-group-classic", run: scenarioRdkafkaGroup("classic"), requires: []int16{
		8, 9, 10, 11, 12, 13, 14, // offsets, coordinator, Join/Heartbeat/Leave/SyncGroup
	}},
	{name: "rdkafka-group-consumer", run: scenarioRdkafkaGroup("consumer"), requires: []int16{
		8, 9, 10, 68, // offsets, coordinator, ConsumerGroupHeartbeat
	}},
	{name: "rdkafka-share", run: scenarioRdkafkaShare, requires: []int16{
		10, 44, // coordinator, group config share.auto.offset.reset
		76, 78, 79, // ShareGroupHeartbeat, ShareFetch, ShareAcknowledge
	}},
	// KafkaShareConsumer in explicit mode (java/ShareCheck.java), with the
	// 4.4 clients and with kafka-clients 4.1.
	{name: "share-check-4.4", run: scenarioShareCheck("kafka-"+KafkaVersion, "kafka-clients-"+KafkaVersion+".jar", KafkaVersion, true, false),
		requires: shareCheckAPIs},
	{name: "share-check-4.1", run: scenarioShareCheck("kafka-clients-"+ClientsVersion41, "kafka-clients-"+ClientsVersion41+".jar", ClientsVersion41, false, false),
		requires: shareCheckAPIs},
	// The same with a dead-letter topic (KIP-1191): the DLQ records,
	// headers included, must be what Kafka 4.4 writes.
	{name: "share-dlq", run: scenarioShareCheck("kafka-"+KafkaVersion, "kafka-clients-"+KafkaVersion+".jar", KafkaVersion, true, true),
		requires: append([]int16{19, 1}, shareCheckAPIs...)}, // CreateTopics, Fetch (reading the DLQ back)
	{name: "share-dlq-console", run: scenarioShareDLQConsole, requires: []int16{
		1, 19, 44, // Fetch, CreateTopics, group configs
		76, 78, 79, // ShareGroupHeartbeat, ShareFetch, ShareAcknowledge
	}},
	// sharq's share group extensions (java/ShareExtCheck.java): key-ordered
	// delivery and redelivery backoff with KafkaShareConsumer; sharq only.
	{name: "share-ext", run: scenarioShareExt, requires: append([]int16{19, 44}, shareCheckAPIs...)},
	// Transactions (java/TxnCheck.java): KafkaProducer commit, abort,
	// sendOffsetsToTransaction and zombie fencing; read_committed consumer.
	{name: "txn-check", run: scenarioTxnCheck, requires: []int16{
		22, 24, 25, 26, 28, // InitProducerId, AddPartitions/AddOffsetsToTxn, EndTxn, TxnOffsetCommit
	}},
	// sendOffsetsToTransaction naming only the group while the group has a
	// live member (java/TxnGroupCheck.java), classic and KIP-848 groups.
	{name: "txn-group-classic", run: scenarioTxnGroupCheck("classic"), requires: []int16{
		22, 24, 25, 26, 28, 11, 14, // transactions, JoinGroup, SyncGroup
	}},
	{name: "txn-group-consumer", run: scenarioTxnGroupCheck("consumer"), requires: []int16{
		22, 24, 25, 26, 28, 68, // transactions, ConsumerGroupHeartbeat
	}},
	// The committer checks of TxnOffsetCommit v0-v6 (txncodes_test.go).
	{name: "txn-commit-codes", run: scenarioTxnCommitCodes, requires: []int16{
		8, 11, 14, 22, 25, 26, 28, 68, // OffsetCommit, Join/SyncGroup, transactions, ConsumerGroupHeartbeat
	}},
	// Kafka Streams exactly_once_v2 word count (streams_test.go).
	{name: "streams-eos", run: scenarioStreamsEOS, requires: []int16{
		22, 24, 25, 26, 28, 11, 14, // transactions and the classic group protocol
	}},
	// Kafka Streams with group.protocol=streams (KIP-1071), restarted and
	// restored from its changelog; kafka-streams-groups.sh (streams_test.go).
	{name: "streams-group", run: scenarioStreamsGroup, requires: []int16{
		88, 89, // StreamsGroupHeartbeat, StreamsGroupDescribe
	}},
	// The same word count and restart with the classic protocol.
	{name: "streams-classic-restore", run: scenarioStreamsClassicRestore, requires: []int16{11, 14}},
	// A Kafka Connect distributed worker with a FileStreamSource connector
	// (connect_test.go).
	{name: "connect", run: scenarioConnect, requires: []int16{
		11, 14, 19, 32, // JoinGroup, SyncGroup, CreateTopics, DescribeConfigs
	}},
	// kafka-transactions.sh list/describe/describe-producers/find-hanging/
	// abort (txntool_test.go).
	{name: "txn-tool", run: scenarioTxnTool, requires: []int16{
		22, 26, 27, 61, 65, 66, // InitProducerId, EndTxn, WriteTxnMarkers, DescribeProducers, Describe/ListTransactions
	}},
	// Partition placement (placement_test.go): kafka-leader-election.sh,
	// kafka-reassign-partitions.sh and the raw answers of 43, 45, 46.
	{name: "leader-election", run: scenarioLeaderElection, requires: placementAPIs},
	{name: "reassign-partitions", run: scenarioReassignPartitions, requires: placementAPIs},
	{name: "placement-wire", run: scenarioPlacementWire, requires: placementAPIs},
	// The Strimzi demo (sharedemo_test.go): three console share consumers.
	{name: "share-demo", run: scenarioShareDemo, requires: []int16{
		10, 44, // coordinator, group config
		76, 77, 78, 79, // ShareGroupHeartbeat/Describe, ShareFetch/Acknowledge
		90, // DescribeShareGroupOffsets (kafka-share-groups --describe)
	}},
}

// shareCheckAPIs: ShareCheck alters the group config, consumes, and reads
// the share-partition start offset with listShareGroupOffsets.
var shareCheckAPIs = []int16{10, 44, 76, 78, 79, 90}

// TestInterop runs every scenario against each selected target in turn (see
// harness_test.go for the environment), the scenarios of one target in
// parallel; in golden mode it then diffs the two targets' outputs.
func TestInterop(t *testing.T) {
	needJava(t)
	start := time.Now()
	names := targetNames(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tg := startTarget(t, name)
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					if missing := missingAPIs(tg, sc.requires); len(missing) > 0 {
						t.Skipf("%s does not advertise %s", tg.Name, strings.Join(missing, ", "))
					}
					t.Parallel()
					sc.run(t, tg)
				})
			}
		})
	}
	t.Logf("interop suite against %v took %v", names, time.Since(start).Round(time.Millisecond))
	r := recorder(t)
	if r == nil {
		return
	}
	diffs, err := r.Compare(names[0], names[1])
	if err != nil {
		t.Error(err)
	}
	t.Logf("golden: %d steps differ; outputs and summary in %s", len(diffs), r.Dir)
	onlyOne := 0
	for _, d := range diffs {
		if d.Lines == nil {
			onlyOne++
			continue
		}
		t.Logf("golden %s: %s\n%s", d.Step, d.Note, strings.Join(d.Lines, "\n"))
	}
	if onlyOne > 0 {
		t.Logf("golden: %d steps ran on one target only (listed in summary.txt)", onlyOne)
	}
	if goldenMode() == "strict" && len(diffs) > 0 {
		t.Errorf("golden strict: %d steps differ between %s and %s (see %s/summary.txt)", len(diffs), names[0], names[1], r.Dir)
	}
}

func missingAPIs(tg Target, keys []int16) []string {
	var missing []string
	for _, k := range keys {
		if _, ok := tg.APIs[k]; !ok {
			missing = append(missing, fmt.Sprintf("%s(%d)", kmsg.NameForKey(k), k))
		}
	}
	return missing
}

// topicDescription is kafka-topics --describe output for one topic.
type topicDescription struct {
	Header     map[string]string   // Topic, TopicId, PartitionCount, ReplicationFactor, Configs
	Partitions []map[string]string // Topic, Partition, Leader, Replicas, Isr, Elr, LastKnownElr
}

// parseTopicDescribe parses "Topic: t\tTopicId: x\t..." header lines and
// "\tTopic: t\tPartition: 0\t..." partition lines (tab separated
// "Key: value" cells; values may be empty).
func parseTopicDescribe(out string) (map[string]*topicDescription, error) {
	res := map[string]*topicDescription{}
	var cur *topicDescription
	for n, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		partition := strings.HasPrefix(line, "\t")
		cells := map[string]string{}
		for _, cell := range strings.Split(strings.Trim(line, "\t"), "\t") {
			k, v, ok := strings.Cut(cell, ":")
			if !ok {
				return nil, fmt.Errorf("line %d: cell %q has no key", n+1, cell)
			}
			cells[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		name := cells["Topic"]
		if name == "" {
			return nil, fmt.Errorf("line %d: no Topic cell: %q", n+1, line)
		}
		if !partition {
			cur = &topicDescription{Header: cells}
			res[name] = cur
			continue
		}
		if cur == nil || cur.Header["Topic"] != name {
			return nil, fmt.Errorf("line %d: partition line for %q outside its topic", n+1, name)
		}
		cur.Partitions = append(cur.Partitions, cells)
	}
	return res, nil
}

const zeroUUID = "AAAAAAAAAAAAAAAAAAAAAA"

var kafkaUUIDText = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

func describeTopic(t *testing.T, tg Target, step, topic string, partitions int) *topicDescription {
	t.Helper()
	res := mustTool(t, tg, step, "", ClassTopics, args(tg, "--describe", "--topic", topic)...)
	all, err := parseTopicDescribe(res.Stdout)
	if err != nil {
		t.Fatalf("%s: %v\n%s", step, err, res.Stdout)
	}
	d := all[topic]
	if d == nil || len(all) != 1 {
		t.Fatalf("%s: want exactly topic %s, got %d topics:\n%s", step, topic, len(all), res.Stdout)
	}
	want := strconv.Itoa(partitions)
	if got := d.Header["PartitionCount"]; got != want {
		t.Errorf("%s: PartitionCount %q, want %s", step, got, want)
	}
	if got := d.Header["ReplicationFactor"]; got != "1" {
		t.Errorf("%s: ReplicationFactor %q, want 1", step, got)
	}
	if id := d.Header["TopicId"]; !kafkaUUIDText.MatchString(id) || id == zeroUUID {
		t.Errorf("%s: TopicId %q, want a non-zero Kafka Uuid", step, id)
	}
	if len(d.Partitions) != partitions {
		t.Fatalf("%s: %d partition lines, want %d:\n%s", step, len(d.Partitions), partitions, res.Stdout)
	}
	id := strconv.Itoa(int(tg.BrokerID))
	for i, p := range d.Partitions {
		if p["Partition"] != strconv.Itoa(i) {
			t.Errorf("%s: line %d is Partition %q, want %d", step, i, p["Partition"], i)
		}
		for _, k := range []string{"Leader", "Replicas", "Isr"} {
			if p[k] != id {
				t.Errorf("%s: partition %d %s %q, want %s", step, i, k, p[k], id)
			}
		}
	}
	return d
}

func listTopics(t *testing.T, tg Target, step string, a ...string) []string {
	t.Helper()
	res := mustTool(t, tg, step, "", ClassTopics, args(tg, a...)...)
	return strings.Fields(res.Stdout)
}

func scenarioTopics(t *testing.T, tg Target) {
	const topic = "interop-topics"
	res := mustTool(t, tg, "topics/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "3", "--replication-factor", "1")...)
	if want := "Created topic " + topic + "."; strings.TrimSpace(res.Stdout) != want {
		t.Errorf("create printed %q, want %q", res.Stdout, want)
	}

	before := describeTopic(t, tg, "topics/describe", topic, 3)

	res = mustTool(t, tg, "topics/alter", "", ClassTopics,
		args(tg, "--alter", "--topic", topic, "--partitions", "5")...)
	if strings.TrimSpace(res.Stdout) != "" {
		t.Errorf("alter printed %q, want nothing", res.Stdout)
	}
	after := describeTopic(t, tg, "topics/describe-altered", topic, 5)
	if before.Header["TopicId"] != after.Header["TopicId"] {
		t.Errorf("TopicId changed by --alter: %s -> %s", before.Header["TopicId"], after.Header["TopicId"])
	}

	// The whole list depends on what the parallel scenarios created so far,
	// so it is not recorded for the golden comparison; the filtered one is.
	if names := listTopics(t, tg, "", "--list"); !slices.Contains(names, topic) {
		t.Errorf("--list %v does not contain %s", names, topic)
	}
	if names := listTopics(t, tg, "topics/list-filtered", "--list", "--topic", topic); !slices.Equal(names, []string{topic}) {
		t.Errorf("--list --topic %s printed %v, want just the topic", topic, names)
	}

	res = mustTool(t, tg, "topics/delete", "", ClassTopics, args(tg, "--delete", "--topic", topic)...)
	if strings.TrimSpace(res.Stdout) != "" {
		t.Errorf("delete printed %q, want nothing", res.Stdout)
	}
	// The broker's metadata view may trail the controller for a moment;
	// the topic must be gone within a few listings.
	deadline := time.Now().Add(15 * time.Second)
	for {
		names := listTopics(t, tg, "topics/list-after-delete", "--list", "--topic", topic)
		if !slices.Contains(names, topic) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still listed 15s after --delete: %v", topic, names)
		}
	}

}

// scenarioTopicErrors checks the error texts the tool prints for broker
// errors (TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC_OR_PARTITION).
func scenarioTopicErrors(t *testing.T, tg Target) {
	const topic = "interop-topic-errors"
	mustTool(t, tg, "topic-errors/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")...)
	res, err := tool(t, tg, "topic-errors/create-again", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "3", "--replication-factor", "1")...)
	if err == nil || res.ExitCode != 1 {
		t.Errorf("second create: exit %d (%v), want 1", res.ExitCode, err)
	}
	if want := "Error while executing topic command : Topic '" + topic + "' already exists."; !strings.Contains(res.Stdout, want) {
		t.Errorf("second create printed %q, want it to contain %q", res.Stdout, want)
	}

	res, err = tool(t, tg, "topic-errors/describe-missing", "", ClassTopics,
		args(tg, "--describe", "--topic", "interop-no-such-topic")...)
	if err == nil || res.ExitCode != 1 {
		t.Errorf("describe of a missing topic: exit %d (%v), want 1", res.ExitCode, err)
	}
	if want := "Error while executing topic command : Topic 'interop-no-such-topic' does not exist as expected"; !strings.Contains(res.Stdout, want) {
		t.Errorf("describe of a missing topic printed %q, want it to contain %q", res.Stdout, want)
	}

	// INVALID_PARTITIONS with the controller's message, printed verbatim.
	res, err = tool(t, tg, "topic-errors/alter-same-count", "", ClassTopics,
		args(tg, "--alter", "--topic", topic, "--partitions", "1")...)
	if err == nil || res.ExitCode != 1 {
		t.Errorf("alter to the same partition count: exit %d (%v), want 1", res.ExitCode, err)
	}
	if want := "Error while executing topic command : Topic already has 1 partition(s)."; !strings.Contains(res.Stdout, want) {
		t.Errorf("alter to the same partition count printed %q, want it to contain %q", res.Stdout, want)
	}
}

// apiVersionLine matches "\tProduce(0): 0 to 13 [usable: 13]," and
// "\tAlterShareGroupOffsets(91): 0 [usable: 0],".
// A broker that lacks an API the client knows shows "\tPushTelemetry(72): UNSUPPORTED,".
var (
	apiVersionLine     = regexp.MustCompile(`^\t(\w+)\((\d+)\): (\d+)(?: to (\d+))? \[usable: (\d+)\],?$`)
	apiUnsupportedLine = regexp.MustCompile(`^\t(\w+)\((\d+)\): UNSUPPORTED,?$`)
)

type apiRange struct {
	key, min, max, usable int
	unsupported           bool
}

func parseAPIVersions(out string) (header string, apis map[string]apiRange, err error) {
	apis = map[string]apiRange{}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasSuffix(line, "-> ("):
			if header != "" {
				return "", nil, fmt.Errorf("two broker headers: %q, %q", header, line)
			}
			header = line
		case strings.HasPrefix(line, "\t"):
			if m := apiUnsupportedLine.FindStringSubmatch(line); m != nil {
				key, _ := strconv.Atoi(m[2])
				apis[m[1]] = apiRange{key: key, unsupported: true}
				continue
			}
			m := apiVersionLine.FindStringSubmatch(line)
			if m == nil {
				return "", nil, fmt.Errorf("unparsable api line %q", line)
			}
			r := apiRange{}
			r.key, _ = strconv.Atoi(m[2])
			r.min, _ = strconv.Atoi(m[3])
			r.max = r.min
			if m[4] != "" {
				r.max, _ = strconv.Atoi(m[4])
			}
			r.usable, _ = strconv.Atoi(m[5])
			apis[m[1]] = r
		}
	}
	if header == "" {
		return "", nil, fmt.Errorf("no broker header line")
	}
	return header, apis, nil
}

func scenarioAPIVersions(t *testing.T, tg Target) {
	res := mustTool(t, tg, "broker-api-versions", "", ClassBrokerAPIVersions, bs(tg)...)
	header, apis, err := parseAPIVersions(res.Stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	wantHeader := fmt.Sprintf("%s (id: %d rack: null isFenced: false) -> (", tg.Bootstrap, tg.BrokerID)
	if header != wantHeader {
		t.Errorf("header %q, want %q", header, wantHeader)
	}
	// The minimum max versions are what Kafka 4.4's own clients need for
	// their newest paths; the tool marks as usable min(client max, broker max).
	for _, w := range []struct {
		name   string
		key    int
		minMax int
	}{
		{"Produce", 0, 9},
		{"Fetch", 1, 12},
		{"ListOffsets", 2, 7},
		{"Metadata", 3, 12},
		{"ApiVersions", 18, 3},
		{"CreateTopics", 19, 5},
		{"DescribeConfigs", 32, 4},
	} {
		r, ok := apis[w.name]
		if !ok {
			t.Errorf("%s(%d) not listed", w.name, w.key)
			continue
		}
		if r.key != w.key || r.unsupported || r.min > r.max || r.max < w.minMax || r.usable < r.min || r.usable > r.max {
			t.Errorf("%s: key %d versions %d to %d usable %d; want key %d, max >= %d", w.name, r.key, r.min, r.max, r.usable, w.key, w.minMax)
		}
	}
	if last := strings.TrimSpace(res.Stdout); !strings.HasSuffix(last, ")") {
		t.Errorf("output does not end with the closing ')': %q", last[max(0, len(last)-40):])
	}
}

// parseFeatures parses kafka-features describe lines
// "Feature: x\tSupportedMinVersion: a\t...": cells are separated by runs of
// whitespace after the value, keys end with ':'.
func parseFeatures(out string) (map[string]map[string]string, error) {
	res := map[string]map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f)%2 != 0 || f[0] != "Feature:" {
			return nil, fmt.Errorf("unparsable feature line %q", line)
		}
		cells := map[string]string{}
		for i := 0; i < len(f); i += 2 {
			k, ok := strings.CutSuffix(f[i], ":")
			if !ok {
				return nil, fmt.Errorf("cell %q without ':' in %q", f[i], line)
			}
			cells[k] = f[i+1]
		}
		res[cells["Feature"]] = cells
	}
	return res, nil
}

func scenarioFeatures(t *testing.T, tg Target) {
	res := mustTool(t, tg, "features/describe", "", ClassFeatures, args(tg, "describe")...)
	feats, err := parseFeatures(res.Stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	mv, ok := feats["metadata.version"]
	if !ok {
		t.Fatalf("metadata.version not described:\n%s", res.Stdout)
	}
	for _, k := range []string{"SupportedMinVersion", "SupportedMaxVersion", "FinalizedVersionLevel", "Epoch"} {
		if mv[k] == "" {
			t.Errorf("metadata.version has no %s: %v", k, mv)
		}
	}
	// Release-version style levels such as 4.4-IV2.
	if !regexp.MustCompile(`^\d+\.\d+-IV\d+$`).MatchString(mv["FinalizedVersionLevel"]) {
		t.Errorf("metadata.version FinalizedVersionLevel %q, want like 4.4-IV2", mv["FinalizedVersionLevel"])
	}
	// Share groups are on: share.version finalized at 1 or more.
	sv, ok := feats["share.version"]
	if !ok {
		t.Fatalf("share.version not described:\n%s", res.Stdout)
	}
	if lvl, err := strconv.Atoi(sv["FinalizedVersionLevel"]); err != nil || lvl < 1 {
		t.Errorf("share.version FinalizedVersionLevel %q, want >= 1", sv["FinalizedVersionLevel"])
	}
}

func scenarioConsole(t *testing.T, tg Target) {
	const topic = "interop-console"
	mustTool(t, tg, "console/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")...)
	// Input lines are headers<TAB>key:value, as LineMessageReader parses
	// them with parse.headers and key.separator=':'; the default formatter
	// prints headers<TAB>key<TAB>value.
	records := []struct{ headers, key, value string }{
		{"h1:v1,h2:v2", "k1", "value one"},
		{"h1:v3", "k2", "value two"},
		{"trace:abc", "k3", ""},
		{"h1:v1", "k1", "value with: a colon"},
		{"h2:", "k5", "last value"},
	}
	var stdin strings.Builder
	var want []string
	for _, r := range records {
		fmt.Fprintf(&stdin, "%s\t%s:%s\n", r.headers, r.key, r.value)
		want = append(want, r.headers+"\t"+r.key+"\t"+r.value)
	}
	res := mustTool(t, tg, "console/produce", stdin.String(), ClassConsoleProducer,
		args(tg, "--topic", topic,
			"--reader-property", "parse.key=true",
			"--reader-property", "key.separator=:",
			"--reader-property", "parse.headers=true")...)
	if strings.TrimSpace(res.Stdout) != "" {
		t.Errorf("producer printed %q, want nothing", res.Stdout)
	}

	res = mustTool(t, tg, "console/consume", "", ClassConsoleConsumer,
		args(tg, "--topic", topic, "--partition", "0", "--offset", "earliest",
			"--max-messages", strconv.Itoa(len(records)),
			"--formatter-property", "print.key=true",
			"--formatter-property", "print.headers=true")...)
	got := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if !slices.Equal(got, want) {
		t.Errorf("consumed lines differ:\n got %q\nwant %q", got, want)
	}
	if want := fmt.Sprintf("Processed a total of %d messages", len(records)); !strings.Contains(res.Stderr, want) {
		t.Errorf("consumer stderr %q does not contain %q", res.Stderr, want)
	}

	// With partition and offset printed the records must sit at offsets 0..N-1.
	res = mustTool(t, tg, "console/consume-offsets", "", ClassConsoleConsumer,
		args(tg, "--topic", topic, "--partition", "0", "--offset", "earliest",
			"--max-messages", strconv.Itoa(len(records)),
			"--formatter-property", "print.partition=true",
			"--formatter-property", "print.offset=true")...)
	got = strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if len(got) != len(records) {
		t.Fatalf("consumed %d lines, want %d:\n%s", len(got), len(records), res.Stdout)
	}
	for i, l := range got {
		if want := fmt.Sprintf("Partition:0\tOffset:%d\t%s", i, records[i].value); l != want {
			t.Errorf("line %d: %q, want %q", i, l, want)
		}
	}
}

// configLine matches "  retention.ms=1000 sensitive=false synonyms={...}".
var configLine = regexp.MustCompile(`^  ([a-z0-9._-]+)=(.*) sensitive=(true|false) synonyms=\{(.*)\}$`)

type configEntry struct{ value, synonyms string }

// parseConfigs parses kafka-configs --describe output into sections keyed by
// their heading ("Dynamic configs for topic t are:").
func parseConfigs(out string) (map[string]map[string]configEntry, error) {
	res := map[string]map[string]configEntry{}
	var cur map[string]configEntry
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "":
		case strings.HasSuffix(line, " are:") && !strings.HasPrefix(line, " "):
			cur = map[string]configEntry{}
			res[strings.TrimSuffix(line, ":")] = cur
		default:
			m := configLine.FindStringSubmatch(line)
			if m == nil || cur == nil {
				return nil, fmt.Errorf("unparsable config line %q", line)
			}
			cur[m[1]] = configEntry{value: m[2], synonyms: m[4]}
		}
	}
	return res, nil
}

func describeConfigs(t *testing.T, tg Target, step string, a ...string) map[string]map[string]configEntry {
	t.Helper()
	res := mustTool(t, tg, step, "", ClassConfigs, args(tg, append([]string{"--describe"}, a...)...)...)
	cfg, err := parseConfigs(res.Stdout)
	if err != nil {
		t.Fatalf("%s: %v\n%s", step, err, res.Stdout)
	}
	return cfg
}

func scenarioConfigs(t *testing.T, tg Target) {
	const topic = "interop-configs"
	mustTool(t, tg, "configs/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")...)
	section := "Dynamic configs for topic " + topic + " are"

	cfg := describeConfigs(t, tg, "configs/topic-describe", "--entity-type", "topics", "--entity-name", topic)
	if _, ok := cfg[section]; !ok || len(cfg) != 1 {
		t.Fatalf("topic describe sections %v, want only %q", cfg, section)
	}
	if _, ok := cfg[section]["retention.ms"]; ok {
		t.Errorf("retention.ms set before --alter: %v", cfg[section])
	}

	res := mustTool(t, tg, "configs/topic-alter", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "topics", "--entity-name", topic, "--add-config", "retention.ms=1000")...)
	if want := "Completed updating config for topic " + topic + "."; strings.TrimSpace(res.Stdout) != want {
		t.Errorf("alter printed %q, want %q", res.Stdout, want)
	}
	cfg = describeConfigs(t, tg, "configs/topic-describe-altered", "--entity-type", "topics", "--entity-name", topic)
	e, ok := cfg[section]["retention.ms"]
	if !ok || e.value != "1000" || e.synonyms != "DYNAMIC_TOPIC_CONFIG:retention.ms=1000" {
		t.Errorf("after --alter retention.ms = %+v (present %v), want 1000 with synonym DYNAMIC_TOPIC_CONFIG:retention.ms=1000", e, ok)
	}

	mustTool(t, tg, "configs/topic-delete-config", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "topics", "--entity-name", topic, "--delete-config", "retention.ms")...)
	cfg = describeConfigs(t, tg, "configs/topic-describe-deleted", "--entity-type", "topics", "--entity-name", topic)
	if e, ok := cfg[section]["retention.ms"]; ok {
		t.Errorf("retention.ms still set after --delete-config: %+v", e)
	}

	id := strconv.Itoa(int(tg.BrokerID))
	cfg = describeConfigs(t, tg, "configs/broker-describe", "--entity-type", "brokers", "--entity-name", id)
	if _, ok := cfg["Dynamic configs for broker "+id+" are"]; !ok {
		t.Errorf("broker describe has no dynamic section for broker %s: %v", id, cfg)
	}

	cfg = describeConfigs(t, tg, "configs/broker-describe-all", "--entity-type", "brokers", "--entity-name", id, "--all")
	all, ok := cfg["All configs for broker "+id+" are"]
	if !ok {
		t.Fatalf("broker describe --all has no 'All configs for broker %s' section: %v", id, cfg)
	}
	for k, want := range map[string]string{
		"num.partitions":            "DEFAULT_CONFIG:num.partitions=1",
		"log.retention.hours":       "DEFAULT_CONFIG:log.retention.hours=168",
		"message.max.bytes":         "DEFAULT_CONFIG:message.max.bytes=1048588",
		"auto.create.topics.enable": "DEFAULT_CONFIG:auto.create.topics.enable=true",
	} {
		if got := all[k].synonyms; got != want {
			t.Errorf("broker config %s synonyms %q, want %q", k, got, want)
		}
	}
	if !strings.HasPrefix(all["log.dirs"].synonyms, "STATIC_BROKER_CONFIG:log.dirs=") {
		t.Errorf("broker config log.dirs = %+v, want a STATIC_BROKER_CONFIG", all["log.dirs"])
	}
	// Kafka 4.4's group keys (describe --all of a group without configs),
	// and the refusals: a read-only broker key (INVALID_CONFIG), an unknown
	// broker key (Kafka accepts it), recorded for the golden diff.
	describeConfigs(t, tg, "configs/group-describe-all", "--entity-type", "groups", "--entity-name", "interop-cfg-group", "--all")
	tool(t, tg, "configs/broker-alter-read-only", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "brokers", "--entity-name", id, "--add-config", "log.dirs=/tmp/elsewhere")...)
	tool(t, tg, "configs/broker-alter-unknown", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "brokers", "--entity-name", id, "--add-config", "interop.unknown.key=1")...)
	tool(t, tg, "configs/broker-delete-unknown", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "brokers", "--entity-name", id, "--delete-config", "interop.unknown.key")...)
	// Error texts: a replication factor beyond the brokers, and
	// --delete-offsets of a group and a topic that do not exist.
	tool(t, tg, "configs/create-rf-too-big", "", ClassTopics,
		args(tg, "--create", "--topic", "interop-rf", "--partitions", "1", "--replication-factor", "3")...)
	tool(t, tg, "configs/delete-offsets-no-group", "", ClassConsumerGroups,
		args(tg, "--delete-offsets", "--group", "interop-no-such-group", "--topic", topic)...)
}

// groupTable parses the column tables kafka-consumer-groups prints (a
// header line of upper-case column names, then rows), skipping other lines.
func groupTable(out string) []map[string]string {
	var rows []map[string]string
	var cols []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			cols = nil
		case f[0] == "GROUP":
			// "COORDINATOR (ID)" is one column printed as two words.
			cols = nil
			for i := 0; i < len(f); i++ {
				if f[i] == "COORDINATOR" && i+1 < len(f) && f[i+1] == "(ID)" {
					cols = append(cols, "COORDINATOR")
					i++
					continue
				}
				cols = append(cols, f[i])
			}
		case cols != nil:
			row := map[string]string{}
			// The coordinator cell is "host:port  (id)": two fields.
			j := 0
			for _, c := range cols {
				if j >= len(f) {
					break
				}
				if c == "COORDINATOR" && j+1 < len(f) && strings.HasPrefix(f[j+1], "(") {
					row[c] = f[j] + " " + f[j+1]
					j += 2
					continue
				}
				row[c] = f[j]
				j++
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// consumeGroup runs the console consumer in group mode and returns the
// values it printed, sorted (order across partitions is not defined).
func consumeGroup(t *testing.T, tg Target, step, topic, group string, n int, extra ...string) []string {
	t.Helper()
	a := args(tg, append([]string{"--topic", topic, "--group", group, "--from-beginning",
		"--max-messages", strconv.Itoa(n), "--timeout-ms", "60000"}, extra...)...)
	res := mustTool(t, tg, step, "", ClassConsoleConsumer, a...)
	got := strings.Fields(res.Stdout)
	slices.Sort(got)
	if want := fmt.Sprintf("Processed a total of %d messages", n); !strings.Contains(res.Stderr, want) {
		t.Errorf("%s: stderr %q does not contain %q", step, res.Stderr, want)
	}
	return got
}

func scenarioConsumerGroups(t *testing.T, tg Target) {
	const topic = "interop-groups"
	const classic, modern = "interop-classic", "interop-consumer-protocol"
	mustTool(t, tg, "consumer-groups/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")...)
	var values []string
	for i := range 6 {
		values = append(values, fmt.Sprintf("g%d", i))
	}
	// Keyed: the same partition on both brokers, for the golden diff.
	keyed := make([]string, len(values))
	for i, v := range values {
		keyed[i] = "k:" + v
	}
	mustTool(t, tg, "consumer-groups/produce", strings.Join(keyed, "\n")+"\n", ClassConsoleProducer,
		args(tg, "--topic", topic, "--reader-property", "parse.key=true", "--reader-property", "key.separator=:")...)

	if got := consumeGroup(t, tg, "consumer-groups/consume-classic", topic, classic, len(values)); !slices.Equal(got, values) {
		t.Errorf("classic group consumed %v, want %v", got, values)
	}
	if got := consumeGroup(t, tg, "consumer-groups/consume-consumer-protocol", topic, modern, len(values),
		"--command-property", "group.protocol=consumer"); !slices.Equal(got, values) {
		t.Errorf("consumer-protocol group consumed %v, want %v", got, values)
	}

	res := mustTool(t, tg, "", "", ClassConsumerGroups, args(tg, "--list")...)
	if names := strings.Fields(res.Stdout); !slices.Contains(names, classic) || !slices.Contains(names, modern) {
		t.Errorf("--list %v lacks %s or %s", names, classic, modern)
	}

	// Both groups committed everything on close: lag 0 on each partition,
	// committed offsets summing to the record count.
	for _, g := range []string{classic, modern} {
		res = mustTool(t, tg, "consumer-groups/describe-"+g, "", ClassConsumerGroups,
			args(tg, "--describe", "--group", g)...)
		// The note goes to stderr, the table to stdout.
		if want := "Consumer group '" + g + "' has no active members."; !strings.Contains(res.Stderr, want) {
			t.Errorf("describe %s: no %q in stderr\n%s", g, want, res.Stderr)
		}
		rows := groupTable(res.Stdout)
		if len(rows) != 2 {
			t.Fatalf("describe %s: %d partition rows, want 2:\n%s", g, len(rows), res.Stdout)
		}
		total := 0
		for _, r := range rows {
			cur, err1 := strconv.Atoi(r["CURRENT-OFFSET"])
			end, err2 := strconv.Atoi(r["LOG-END-OFFSET"])
			if err1 != nil || err2 != nil || r["LAG"] != "0" || cur != end || r["GROUP"] != g || r["TOPIC"] != topic {
				t.Errorf("describe %s: row %v, want committed == log end, lag 0", g, r)
			}
			total += cur
		}
		if total != len(values) {
			t.Errorf("describe %s: committed offsets sum to %d, want %d", g, total, len(values))
		}

		res = mustTool(t, tg, "consumer-groups/state-"+g, "", ClassConsumerGroups,
			args(tg, "--describe", "--group", g, "--state")...)
		rows = groupTable(res.Stdout)
		if len(rows) != 1 || rows[0]["STATE"] != "Empty" || rows[0]["#MEMBERS"] != "0" ||
			rows[0]["COORDINATOR"] != fmt.Sprintf("%s (%d)", tg.Bootstrap, tg.BrokerID) {
			t.Errorf("describe --state %s: rows %v, want one Empty row with 0 members at %s (%d)", g, rows, tg.Bootstrap, tg.BrokerID)
		}
		// --verbose adds GROUP-EPOCH and TARGET-ASSIGNMENT-EPOCH: Kafka's
		// epoch rules, recorded for the golden diff.
		mustTool(t, tg, "consumer-groups/state-verbose-"+g, "", ClassConsumerGroups,
			args(tg, "--describe", "--group", g, "--state", "--verbose")...)
	}

	res = mustTool(t, tg, "consumer-groups/reset-offsets", "", ClassConsumerGroups,
		args(tg, "--reset-offsets", "--to-earliest", "--execute", "--topic", topic, "--group", classic)...)
	rows := groupTable(res.Stdout)
	if len(rows) != 2 {
		t.Fatalf("reset-offsets: %d rows, want 2:\n%s", len(rows), res.Stdout)
	}
	for _, r := range rows {
		if r["NEW-OFFSET"] != "0" || r["GROUP"] != classic {
			t.Errorf("reset-offsets row %v, want NEW-OFFSET 0", r)
		}
	}
	// After the reset the group reads everything again.
	if got := consumeGroup(t, tg, "consumer-groups/consume-after-reset", topic, classic, len(values)); !slices.Equal(got, values) {
		t.Errorf("after reset the classic group consumed %v, want %v", got, values)
	}

	res = mustTool(t, tg, "consumer-groups/delete", "", ClassConsumerGroups,
		args(tg, "--delete", "--group", classic)...)
	if want := "Deletion of requested consumer groups ('" + classic + "') was successful."; !strings.Contains(res.Stdout, want) {
		t.Errorf("delete printed %q, want %q", res.Stdout, want)
	}
	res = mustTool(t, tg, "", "", ClassConsumerGroups, args(tg, "--list")...)
	if names := strings.Fields(res.Stdout); slices.Contains(names, classic) || !slices.Contains(names, modern) {
		t.Errorf("--list after delete: %v, want %s gone and %s kept", names, classic, modern)
	}

	// --delete-offsets of the empty KIP-848 group: a topic it committed,
	// one that does not exist, and one partition that does not exist.
	tool(t, tg, "consumer-groups/delete-offsets", "", ClassConsumerGroups,
		args(tg, "--delete-offsets", "--group", modern, "--topic", topic)...)
	tool(t, tg, "consumer-groups/delete-offsets-unknown-topic", "", ClassConsumerGroups,
		args(tg, "--delete-offsets", "--group", modern, "--topic", "interop-no-such-topic")...)
	tool(t, tg, "consumer-groups/delete-offsets-unknown-partition", "", ClassConsumerGroups,
		args(tg, "--delete-offsets", "--group", modern, "--topic", topic+":7")...)

	// The tool reports a missing group on stdout and still exits 0.
	res = mustTool(t, tg, "consumer-groups/describe-missing", "", ClassConsumerGroups,
		args(tg, "--describe", "--group", "interop-no-such-group")...)
	if want := "GroupIdNotFoundException: Group interop-no-such-group not found."; !strings.Contains(res.Stdout, want) {
		t.Errorf("describe of a missing group printed %q, want it to contain %q", res.Stdout, want)
	}
}

var shareLine = regexp.MustCompile(`^Partition:(\d+)\tOffset:(\d+)\tDelivery:(\d+)\t(.*)$`)

// consumeShare runs one console share consumer until it has n records and
// returns their values sorted; every record must be a first delivery when
// first is set.
func consumeShare(t *testing.T, tg Target, step, topic, group string, n int, first bool) []string {
	t.Helper()
	res := mustTool(t, tg, step, "", ClassConsoleShareConsume,
		args(tg, "--topic", topic, "--group", group, "--max-messages", strconv.Itoa(n), "--timeout-ms", "60000",
			"--formatter-property", "print.partition=true",
			"--formatter-property", "print.offset=true",
			"--formatter-property", "print.delivery=true")...)
	var values []string
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n") {
		m := shareLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s: unexpected line %q", step, line)
			continue
		}
		if po := m[1] + "/" + m[2]; seen[po] {
			t.Errorf("%s: partition/offset %s delivered twice", step, po)
		} else {
			seen[po] = true
		}
		if first && m[3] != "1" {
			t.Errorf("%s: %q is delivery %s, want 1", step, m[4], m[3])
		}
		values = append(values, m[4])
	}
	slices.Sort(values)
	if want := fmt.Sprintf("Processed a total of %d messages", n); !strings.Contains(res.Stderr, want) {
		t.Errorf("%s: stderr %q does not contain %q", step, res.Stderr, want)
	}
	return values
}

func scenarioShareGroups(t *testing.T, tg Target) {
	const topic, group = "interop-share", "interop-share-group"
	shareTool := func(step string, a ...string) Result {
		t.Helper()
		return mustTool(t, tg, step, "", ClassShareGroups, args(tg, a...)...)
	}
	mustTool(t, tg, "share-groups/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")...)
	// Records produced before the group first fetches are only delivered
	// with share.auto.offset.reset=earliest (the default is latest).
	res := mustTool(t, tg, "share-groups/config-alter", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "groups", "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest")...)
	if want := "Completed updating config for group " + group + "."; strings.TrimSpace(res.Stdout) != want {
		t.Errorf("group config alter printed %q, want %q", res.Stdout, want)
	}
	cfg := describeConfigs(t, tg, "share-groups/config-describe", "--entity-type", "groups", "--entity-name", group)
	if e := cfg["Dynamic configs for group "+group+" are"]["share.auto.offset.reset"]; e.value != "earliest" ||
		!strings.HasPrefix(e.synonyms, "DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest") {
		t.Errorf("group config share.auto.offset.reset = %+v, want earliest from DYNAMIC_GROUP_CONFIG", e)
	}

	var values []string
	for i := range 10 {
		values = append(values, fmt.Sprintf("s%d", i))
	}
	// One key: the same partition on both brokers (the sticky partitioner
	// of unkeyed records picks one at random), so the golden outputs match.
	keyed := make([]string, len(values))
	for i, v := range values {
		keyed[i] = "k:" + v
	}
	mustTool(t, tg, "share-groups/produce", strings.Join(keyed, "\n")+"\n", ClassConsoleProducer,
		args(tg, "--topic", topic, "--reader-property", "parse.key=true", "--reader-property", "key.separator=:")...)

	if got := consumeShare(t, tg, "share-groups/consume", topic, group, len(values), true); !slices.Equal(got, values) {
		t.Errorf("share consumer got %v, want %v", got, values)
	}

	res = mustToolOwnRows(t, tg, "share-groups/list", ClassShareGroups, []string{group}, args(tg, "--list")...)
	if !slices.Contains(strings.Fields(res.Stdout), group) {
		t.Errorf("--list %q lacks %s", res.Stdout, group)
	}
	res = mustToolOwnRows(t, tg, "share-groups/list-state", ClassShareGroups, []string{group}, args(tg, "--list", "--state")...)
	if rows := groupTable(res.Stdout); !slices.ContainsFunc(rows, func(r map[string]string) bool {
		return r["GROUP"] == group && r["STATE"] == "Empty"
	}) {
		t.Errorf("--list --state rows %v, want %s Empty", rows, group)
	}

	// Every partition gets a row; a partition the group has fetched shows a
	// start offset and, all records being accepted, lag 0 (Kafka 4.4 may
	// still show start offset 0 there: the lag counts delivered records).
	res = shareTool("share-groups/describe", "--describe", "--group", group)
	rows := groupTable(res.Stdout)
	if len(rows) != 2 {
		t.Fatalf("describe: %d rows, want 2:\n%s", len(rows), res.Stdout)
	}
	fetched := 0
	for _, r := range rows {
		if r["GROUP"] != group || r["TOPIC"] != topic {
			t.Errorf("describe row %v", r)
		}
		if r["START-OFFSET"] == "-" {
			if r["LAG"] != "-" {
				t.Errorf("describe row %v: lag without a start offset", r)
			}
			continue
		}
		fetched++
		if off, err := strconv.Atoi(r["START-OFFSET"]); err != nil || off < 0 || off > len(values) || r["LAG"] != "0" {
			t.Errorf("describe row %v, want a start offset in [0,%d] and lag 0", r, len(values))
		}
	}
	if fetched == 0 {
		t.Errorf("describe shows no partition with a start offset:\n%s", res.Stdout)
	}

	res = shareTool("share-groups/describe-state", "--describe", "--group", group, "--state")
	if rows := groupTable(res.Stdout); len(rows) != 1 || rows[0]["STATE"] != "Empty" || rows[0]["#MEMBERS"] != "0" ||
		rows[0]["COORDINATOR"] != fmt.Sprintf("%s (%d)", tg.Bootstrap, tg.BrokerID) {
		t.Errorf("describe --state rows %v, want one Empty row with 0 members at %s (%d)", rows, tg.Bootstrap, tg.BrokerID)
	}
	// --verbose adds GROUP-EPOCH and ASSIGNMENT-EPOCH (Kafka's epoch rules
	// on an Empty group), recorded for the golden diff.
	shareTool("share-groups/describe-state-verbose", "--describe", "--group", group, "--state", "--verbose")
	res = shareTool("share-groups/describe-members", "--describe", "--group", group, "--members")
	if want := "Share group '" + group + "' has no active members."; !strings.Contains(res.Stderr, want) {
		t.Errorf("describe --members stderr %q, want %q", res.Stderr, want)
	}

	res = shareTool("share-groups/reset-offsets", "--reset-offsets", "--to-earliest", "--execute", "--topic", topic, "--group", group)
	rows = groupTable(res.Stdout)
	if len(rows) != 2 {
		t.Fatalf("reset-offsets: %d rows, want 2:\n%s", len(rows), res.Stdout)
	}
	for _, r := range rows {
		if r["NEW-OFFSET"] != "0" || r["GROUP"] != group || r["TOPIC"] != topic {
			t.Errorf("reset-offsets row %v, want NEW-OFFSET 0", r)
		}
	}
	// After the reset the group is served everything again.
	if got := consumeShare(t, tg, "share-groups/consume-after-reset", topic, group, len(values), false); !slices.Equal(got, values) {
		t.Errorf("after reset the share consumer got %v, want %v", got, values)
	}
	// A second member joined and left: the epochs after a rejoin.
	shareTool("share-groups/describe-state-verbose-rejoin", "--describe", "--group", group, "--state", "--verbose")
	shareTool("share-groups/describe-after-rejoin", "--describe", "--group", group)

	res = shareTool("share-groups/delete-offsets", "--delete-offsets", "--group", group, "--topic", topic)
	if f := strings.Fields(res.Stdout); !slices.Equal(f, []string{"TOPIC", "STATUS", topic, "Successful"}) {
		t.Errorf("delete-offsets printed %q, want a Successful row for %s", res.Stdout, topic)
	}
	res = shareTool("share-groups/describe-after-delete-offsets", "--describe", "--group", group)
	if want := "Share group '" + group + "' has no offset information."; !strings.Contains(res.Stdout, want) {
		t.Errorf("describe after --delete-offsets printed %q, want %q", res.Stdout, want)
	}

	// --share: the consumer-groups scenario's groups come and go meanwhile.
	res = mustToolOwnRows(t, tg, "share-groups/groups-list", ClassGroups, []string{group}, args(tg, "--list", "--share")...)
	if rows := groupTable(res.Stdout); !slices.ContainsFunc(rows, func(r map[string]string) bool {
		return r["GROUP"] == group && r["TYPE"] == "Share" && r["PROTOCOL"] == "share"
	}) {
		t.Errorf("kafka-groups --list rows %v, want %s Share share", rows, group)
	}

	res = shareTool("share-groups/delete", "--delete", "--group", group)
	if want := "Deletion of requested share groups ('" + group + "') was successful."; !strings.Contains(res.Stdout, want) {
		t.Errorf("delete printed %q, want %q", res.Stdout, want)
	}
	res = shareTool("", "--list")
	if slices.Contains(strings.Fields(res.Stdout), group) {
		t.Errorf("--list after delete still has %s: %q", group, res.Stdout)
	}
}
