package interop

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Partition placement: ElectLeaders (43), AlterPartitionReassignments (45)
// and ListPartitionReassignments (46) through Kafka's own tools and as raw
// requests, on a one-node cluster (the node holds and leads every replica).

const (
	ClassLeaderElection    = "org.apache.kafka.tools.LeaderElectionCommand"
	ClassReassignPartitons = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
)

var placementAPIs = []int16{19, 43, 45, 46}

func writeJSON(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// scenarioLeaderElection runs kafka-leader-election.sh: preferred and
// unclean elections of one partition, of a JSON list with an unknown topic
// and of every partition, and an unknown topic. Every election is not
// needed on one node; the outputs are recorded for the golden diff.
func scenarioLeaderElection(t *testing.T, tg Target) {
	const topic = "interop-elect"
	mustTool(t, tg, "", "", ClassTopics, args(tg, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")...)
	list := writeJSON(t, "elect.json", `{"partitions":[{"topic":"`+topic+`","partition":0},{"topic":"`+topic+`","partition":1},{"topic":"interop-elect-none","partition":0}]}`)
	for _, s := range []struct {
		step string
		args []string
	}{
		{"preferred-partition", []string{"--election-type", "preferred", "--topic", topic, "--partition", "0"}},
		{"unclean-partition", []string{"--election-type", "unclean", "--topic", topic, "--partition", "1"}},
		{"preferred-json", []string{"--election-type", "PREFERRED", "--path-to-json-file", list}},
		{"unknown-topic", []string{"--election-type", "preferred", "--topic", "interop-elect-none", "--partition", "0"}},
		{"unknown-partition", []string{"--election-type", "preferred", "--topic", topic, "--partition", "7"}},
		{"preferred-all", []string{"--election-type", "preferred", "--all-topic-partitions"}},
		{"unclean-all", []string{"--election-type", "unclean", "--all-topic-partitions"}},
	} {
		res, _ := tool(t, tg, "leader-election/"+s.step, "", ClassLeaderElection, args(tg, s.args...)...)
		t.Logf("leader-election %s: exit %d\n%s%s", s.step, res.ExitCode, res.Stdout, res.Stderr)
	}
}

// scenarioReassignPartitions runs kafka-reassign-partitions.sh --generate,
// --execute, --verify, --list and --cancel on a topic moved to the node
// itself (accepted, complete at once, nothing to cancel), and --execute to
// a broker that does not exist (refused).
func scenarioReassignPartitions(t *testing.T, tg Target) {
	const topic = "interop-reassign"
	mustTool(t, tg, "", "", ClassTopics, args(tg, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")...)
	id := fmt.Sprint(tg.BrokerID)
	topics := writeJSON(t, "topics.json", `{"topics":[{"topic":"`+topic+`"}],"version":1}`)
	plan := writeJSON(t, "plan.json", `{"version":1,"partitions":[{"topic":"`+topic+`","partition":0,"replicas":[`+id+`],"log_dirs":["any"]},{"topic":"`+topic+`","partition":1,"replicas":[`+id+`],"log_dirs":["any"]}]}`)
	away := writeJSON(t, "away.json", `{"version":1,"partitions":[{"topic":"`+topic+`","partition":0,"replicas":[9999],"log_dirs":["any"]}]}`)
	twice := writeJSON(t, "twice.json", `{"version":1,"partitions":[{"topic":"`+topic+`","partition":1,"replicas":[`+id+`,`+id+`],"log_dirs":["any","any"]}]}`)
	for _, s := range []struct {
		step string
		args []string
	}{
		{"generate", []string{"--generate", "--topics-to-move-json-file", topics, "--broker-list", id}},
		{"execute", []string{"--execute", "--reassignment-json-file", plan}},
		{"verify", []string{"--verify", "--reassignment-json-file", plan}},
		{"list", []string{"--list"}},
		{"cancel", []string{"--cancel", "--reassignment-json-file", plan}},
		{"execute-unknown-broker", []string{"--execute", "--reassignment-json-file", away}},
		{"execute-duplicate-broker", []string{"--execute", "--reassignment-json-file", twice}},
		{"list-after", []string{"--list"}},
	} {
		res, _ := tool(t, tg, "", "", ClassReassignPartitons, args(tg, s.args...)...)
		t.Logf("reassign-partitions %s: exit %d\n%s%s", s.step, res.ExitCode, res.Stdout, res.Stderr)
		if r := recorder(t); r != nil {
			// The current assignment names each broker's log directory,
			// which differs between the test brokers' layouts.
			out := logDirPath.ReplaceAllString(fmt.Sprintf("exit %d\n%s", res.ExitCode, res.Stdout), `"<LOG_DIR>"`)
			if err := r.Record(tg.Name, "reassign-partitions/"+s.step, out); err != nil {
				t.Error(err)
			}
			if res.Stderr != "" {
				if err := r.Record(tg.Name, "reassign-partitions/"+s.step+".stderr", res.Stderr); err != nil {
					t.Error(err)
				}
			}
		}
	}
}

// logDirPath is a log directory in a reassignment JSON ("any" is kept).
var logDirPath = regexp.MustCompile(`"/[^"]*"`)

// scenarioPlacementWire sends ElectLeaders, AlterPartitionReassignments and
// ListPartitionReassignments at each version with every case a one-node
// cluster can answer (not needed, unknown topic and partition, every
// partition, an empty list, an unknown election type, timeouts of 0 and
// -1, a reassignment to the node itself, to an unknown broker, with a
// duplicate, an empty list and a cancel) and records the exact response
// bytes for the golden diff; the answers listing every topic of the broker
// are recorded decoded and reduced to this scenario's topic.
func scenarioPlacementWire(t *testing.T, tg Target) {
	const topic = "interop-placement-wire"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, f, _, err := dialAPIVersions(ctx, tg.Bootstrap, "sharq-interop-placement")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(50 * time.Second))
	corr := int32(10)
	next := func() int32 { corr++; return corr }
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version, ct.TimeoutMillis = 7, 30000
	ct.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}}
	ctResp := kmsg.NewPtrCreateTopicsResponse()
	ctResp.Version = ct.Version
	if err := roundTrip(conn, f, next(), ct, ctResp); err != nil || ctResp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %v %+v", topic, err, ctResp.Topics)
	}
	var b strings.Builder
	send := func(name string, req kmsg.Request) []byte {
		t.Helper()
		body, err := rawRoundTrip(conn, f, next(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return body
	}
	record := func(name string, req kmsg.Request) {
		t.Helper()
		fmt.Fprintf(&b, "%s: %s\n", name, hex.EncodeToString(send(name, req)))
	}
	id := tg.BrokerID
	elect := func(v int16, typ int8, timeout int32, topics []kmsg.ElectLeadersRequestTopic) *kmsg.ElectLeadersRequest {
		r := kmsg.NewPtrElectLeadersRequest()
		r.Version, r.ElectionType, r.TimeoutMillis, r.Topics = v, typ, timeout, topics
		return r
	}
	known := []kmsg.ElectLeadersRequestTopic{{Topic: topic, Partitions: []int32{0, 1, 5}}, {Topic: "interop-placement-none", Partitions: []int32{0}}}
	for v := int16(0); v <= 2; v++ {
		record(fmt.Sprintf("elect v%d preferred", v), elect(v, 0, 30000, known))
		if v >= 1 {
			record(fmt.Sprintf("elect v%d unclean", v), elect(v, 1, 30000, known))
			record(fmt.Sprintf("elect v%d type 2", v), elect(v, 2, 30000, known))
		}
		record(fmt.Sprintf("elect v%d empty list", v), elect(v, 0, 30000, []kmsg.ElectLeadersRequestTopic{}))
		record(fmt.Sprintf("elect v%d timeout 0", v), elect(v, 0, 0, known))
		record(fmt.Sprintf("elect v%d timeout -1", v), elect(v, 0, -1, known))
		// Every partition of every topic: only this scenario's topic is
		// recorded (other scenarios' topics come and go).
		resp := kmsg.NewPtrElectLeadersResponse()
		resp.Version = v
		if err := resp.ReadFrom(send("elect all", elect(v, 0, 30000, nil))); err != nil {
			t.Fatal(err)
		}
		for _, rt := range resp.Topics {
			if rt.Topic == topic {
				fmt.Fprintf(&b, "elect v%d all: error %d, %s: %d partition results\n", v, resp.ErrorCode, rt.Topic, len(rt.Partitions))
			}
		}
	}
	alter := func(v int16, allowRF bool, timeout int32, parts ...kmsg.AlterPartitionAssignmentsRequestTopicPartition) *kmsg.AlterPartitionAssignmentsRequest {
		r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		r.Version, r.AllowReplicationFactorChange, r.TimeoutMillis = v, allowRF, timeout
		r.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: topic, Partitions: parts},
			{Topic: "interop-placement-none", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{id}}}}}
		return r
	}
	type part = kmsg.AlterPartitionAssignmentsRequestTopicPartition
	cases := []part{
		{Partition: 0, Replicas: []int32{id}},
		{Partition: 1, Replicas: nil},
		{Partition: 0, Replicas: []int32{}},
		{Partition: 0, Replicas: []int32{id, 9999}},
		{Partition: 1, Replicas: []int32{id, id}},
		{Partition: 1, Replicas: []int32{9999, 9999}},
		{Partition: 5, Replicas: []int32{id}},
	}
	for v := int16(0); v <= 1; v++ {
		record(fmt.Sprintf("alter v%d", v), alter(v, true, 30000, cases...))
		if v == 1 {
			record("alter v1 no replication factor change", alter(v, false, 30000, cases...))
		}
		record(fmt.Sprintf("alter v%d timeout 0", v), alter(v, true, 0, cases[0]))
		empty := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		empty.Version, empty.TimeoutMillis = v, 30000
		record(fmt.Sprintf("alter v%d no topics", v), empty)
	}
	list := func(timeout int32, topics []kmsg.ListPartitionReassignmentsRequestTopic) *kmsg.ListPartitionReassignmentsRequest {
		r := kmsg.NewPtrListPartitionReassignmentsRequest()
		r.TimeoutMillis, r.Topics = timeout, topics
		return r
	}
	record("list all", list(30000, nil))
	record("list some", list(30000, []kmsg.ListPartitionReassignmentsRequestTopic{{Topic: topic, Partitions: []int32{0, 1, 5}}, {Topic: "interop-placement-none", Partitions: []int32{0}}}))
	record("list empty", list(30000, []kmsg.ListPartitionReassignmentsRequestTopic{}))
	record("list timeout 0", list(0, nil))
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "placement-wire/responses", b.String()); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%s", b.String())
	if !slices.ContainsFunc(strings.Split(b.String(), "\n"), func(l string) bool { return strings.HasPrefix(l, "elect v2 all:") }) {
		t.Errorf("the answer for every partition did not list %s", topic)
	}
}
