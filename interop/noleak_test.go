package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestInteropNoUnauthorizedBytes (issue 26 item 4) asks Kafka 4.4 and
// sharq the same questions as a SASL/PLAIN principal without ACLs, under
// StandardAuthorizer with allow.everyone.if.no.acl.found=false, about a
// topic, a group and a transactional id the super user made: every answer
// must carry the same error codes and entry counts on both, and neither
// may name the secrets. broker/leak_internal_test.go walks every API and
// version on sharq alone; this pins a handful to Kafka's own answers.
//
//	SHARQ_INTEROP_TARGET=both go test ./interop -run TestInteropNoUnauthorizedBytes -v
func TestInteropNoUnauthorizedBytes(t *testing.T) {
	got := map[string]map[string]string{}
	names := targetNames(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { got[name] = noLeakScenario(t, name) })
	}
	if len(names) < 2 || got[names[0]] == nil || got[names[1]] == nil {
		return
	}
	var keys []string
	for k := range got[names[0]] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if a, b := got[names[0]][k], got[names[1]][k]; a != b {
			t.Errorf("%s: %s answers %s, %s answers %s", k, names[0], a, names[1], b)
		}
	}
}

const (
	leakTopic = "zz-secret-topic"
	leakGroup = "zz-secret-group"
	leakTxn   = "zz-secret-txnid"
)

// startWithProps starts Kafka 4.4 (formatted first, with formatArgs) or
// sharq (listeners: the --override of its listeners, without CONTROLLER)
// from one server.properties.
func startWithProps(t *testing.T, ctx context.Context, j *Java, name, propsPath, data string, plainPort, controllerPort int, listeners string, formatArgs ...string) *Process {
	t.Helper()
	var p *Process
	var err error
	switch targetKind(name) {
	case "kafka":
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		clusterID, err := RandomClusterID()
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{"format", "--standalone", "-t", clusterID, "-c", propsPath}, formatArgs...)
		if res, err := j.Run(ctx, nil, ClassStorage, args...); err != nil {
			t.Fatalf("kafka-storage format: %v\n%s%s", err, res.Stdout, res.Stderr)
		}
		node := &KafkaNode{Dir: filepath.Dir(propsPath), Port: plainPort, ControllerPort: controllerPort, j: j, props: propsPath}
		if p, err = node.Start(testKafkaJVMFlags); err == nil {
			if err = waitReady(ctx, p, 3*time.Minute); err != nil {
				_, _ = p.Stop(10 * time.Second)
			}
		}
	default:
		p, err = StartSharq(ctx, buildSharq(t), filepath.Dir(propsPath), time.Minute, "--config", propsPath,
			"--override", listeners, "--override", "log.dirs="+data)
	}
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p.Name = name
	return p
}

func noLeakScenario(t *testing.T, name string) map[string]string {
	j := needJava(t)
	dir := t.TempDir()
	ports := make([]int, 3)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	plainPort, saslPort, controllerPort := ports[0], ports[1], ports[2]
	data := filepath.Join(dir, "data")
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:%[3]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_PLAINTEXT://127.0.0.1:%[2]d,CONTROLLER://127.0.0.1:%[3]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_PLAINTEXT://127.0.0.1:%[2]d,CONTROLLER://127.0.0.1:%[3]d
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
log.dirs=%[4]s
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw" user_alice="alice-pw";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:admin;User:ANONYMOUS
`, plainPort, saslPort, controllerPort, data)
	propsPath := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p := startWithProps(t, ctx, j, name, propsPath, data, plainPort, controllerPort,
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d", plainPort, saslPort))
	t.Cleanup(func() { _, _ = p.Stop(30 * time.Second) })
	sasl := fmt.Sprintf("127.0.0.1:%d", saslPort)

	// The super user (ANONYMOUS on PLAINTEXT) makes the secrets.
	admin, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap), kgo.DefaultProduceTopic(leakTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if r, err := adm.CreateTopics(ctx, 1, 1, nil, leakTopic); err != nil || r.Error() != nil {
		t.Fatalf("create: %v %v", err, r.Error())
	}
	if err := admin.ProduceSync(ctx, kgo.StringRecord("zz-secret-value")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: leakTopic, Partition: 0, At: 1, LeaderEpoch: -1})
	if r, err := adm.CommitOffsets(ctx, leakGroup, offs); err != nil || r.Error() != nil {
		t.Fatalf("commit: %v %v", err, r.Error())
	}
	tx, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap), kgo.TransactionalID(leakTxn), kgo.DefaultProduceTopic(leakTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, kgo.StringRecord("zz-secret-value")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	topicID := [16]byte{}
	if td, err := adm.ListTopics(ctx, leakTopic); err == nil {
		topicID = td[leakTopic].ID
	}

	alice, err := kgo.NewClient(kgo.SeedBrokers(sasl), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	sp := kmsg.StringPtr
	reqs := map[string]kmsg.Request{}
	md := kmsg.NewPtrMetadataRequest()
	md.Topics = nil
	reqs["Metadata all topics"] = md
	md2 := kmsg.NewPtrMetadataRequest()
	md2.Topics = []kmsg.MetadataRequestTopic{{Topic: sp(leakTopic)}}
	reqs["Metadata by name"] = md2
	md3 := kmsg.NewPtrMetadataRequest()
	md3.Topics = []kmsg.MetadataRequestTopic{{TopicID: topicID}}
	reqs["Metadata by id"] = md3
	reqs["ListGroups"] = kmsg.NewPtrListGroupsRequest()
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{leakGroup}
	reqs["DescribeGroups"] = dg
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: leakGroup}}
	reqs["OffsetFetch"] = of
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: leakTopic}}
	reqs["DescribeConfigs"] = dc
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: leakTopic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1, CurrentLeaderEpoch: -1}}}}
	reqs["ListOffsets"] = lo
	reqs["ListTransactions"] = kmsg.NewPtrListTransactionsRequest()
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{leakTxn}
	reqs["DescribeTransactions"] = dt
	dp := kmsg.NewPtrDescribeProducersRequest()
	dp.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: leakTopic, Partitions: []int32{0}}}
	reqs["DescribeProducers"] = dp
	da := kmsg.NewPtrDescribeACLsRequest()
	da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = 1, 1, 1, 1
	reqs["DescribeACLs"] = da
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{leakGroup}
	reqs["FindCoordinator"] = fc
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.ResponsePartitionLimit = 10
	dtp.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: leakTopic}}
	reqs["DescribeTopicPartitions"] = dtp
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{leakGroup}
	reqs["ConsumerGroupDescribe"] = cgd

	out := map[string]string{}
	for what, req := range reqs {
		resp, err := alice.Request(ctx, req)
		if err != nil {
			out[what] = "request error: " + err.Error()
			t.Logf("%s: %s", what, out[what])
			continue
		}
		text := fmt.Sprintf("%+v", resp)
		secrets := []string{"zz-secret-value", fmt.Sprintf("%v", topicID)}
		if what == "Metadata by id" {
			secrets = secrets[:1] // the id is the question, echoed
		}
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s: %s answers alice with %s: %s", name, what, secret, text)
			}
		}
		out[what] = summary(resp)
		t.Logf("%s: %s", what, out[what])
	}
	return out
}

// summary is a response's error codes and the length of each list, in
// field order: what must match between Kafka and sharq.
func summary(resp kmsg.Response) string {
	var b strings.Builder
	walkSummary(&b, fmt.Sprintf("%+v", resp))
	return b.String()
}

// walkSummary keeps ErrorCode values and list lengths from the %+v text;
// crude but enough for these shapes, and independent of field values
// that may differ (throttle, node ids, ports, names echoed).
func walkSummary(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "ErrorCode:") {
			j := i + len("ErrorCode:")
			k := j
			for k < len(s) && (s[k] == '-' || s[k] >= '0' && s[k] <= '9') {
				k++
			}
			b.WriteString("e" + s[j:k] + " ")
		}
	}
	for _, list := range []string{"Topics:[", "Groups:[", "Resources:[", "TransactionStates:[", "Coordinators:[", "Partitions:[", "ActiveProducers:[", "Configs:["} {
		fmt.Fprintf(b, "%s%d ", strings.TrimSuffix(list, ":["), strings.Count(s, list))
		fmt.Fprintf(b, "%sEmpty%d ", strings.TrimSuffix(list, ":["), strings.Count(s, list+"]"))
	}
}
