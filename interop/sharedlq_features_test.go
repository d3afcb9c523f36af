package interop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInteropShareVersionDLQ moves share.version between 2 and 1 with
// kafka-features.sh while a share group has a dead-letter topic, on a broker
// of its own (the feature level is cluster-wide, so it cannot run beside the
// other share scenarios):
//   - at share.version=1 records rejected with kafka-console-share-consumer
//     --reject are archived and NOT written to the dead-letter topic;
//   - setting errors.deadletterqueue.topic.name on a group while the level is
//     1 is answered as Kafka 4.4 answers it;
//   - back at 2, rejected records reach the dead-letter topic again.
//
// Run with SHARQ_INTEROP_TARGET=kafka (or both) to see Kafka 4.4 do the same.
func TestInteropShareVersionDLQ(t *testing.T) {
	needJava(t)
	for _, name := range targetNames(t) {
		t.Run(name, func(t *testing.T) {
			tg := startTarget(t, name)
			if missing := missingAPIs(tg, []int16{57, 76, 78, 79, 90}); len(missing) > 0 {
				t.Skipf("%s does not advertise %s", tg.Name, strings.Join(missing, ", "))
			}
			shareVersionDLQ(t, tg)
		})
	}
}

func shareVersionDLQ(t *testing.T, tg Target) {
	const topic, group, dlq = "sv-dlq", "sv-dlq", "dlq.sv-dlq"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	mustTool(t, tg, "share-version-dlq/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")...)
	mustTool(t, tg, "share-version-dlq/create-dlq", "", ClassTopics,
		args(tg, "--create", "--topic", dlq, "--partitions", "1", "--replication-factor", "1",
			"--config", "errors.deadletterqueue.group.enable=true")...)
	mustTool(t, tg, "share-version-dlq/config", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "groups", "--entity-name", group,
			"--add-config", "share.auto.offset.reset=earliest,errors.deadletterqueue.topic.name="+dlq)...)

	// share.version 2 -> 1.
	res, _ := tool(t, tg, "share-version-dlq/downgrade", "", ClassFeatures, args(tg, "downgrade", "--feature", "share.version=1")...)
	t.Logf("downgrade share.version=1: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "share.version was downgraded to 1.") {
		t.Fatalf("downgrade: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if lvl := finalizedShareVersion(t, tg, "share-version-dlq/describe-1"); lvl != "1" {
		t.Fatalf("share.version finalized at %q after the downgrade, want 1", lvl)
	}

	// A group config naming a DLQ while the level is 1.
	res, _ = tool(t, tg, "share-version-dlq/config-at-1", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "groups", "--entity-name", group+"-2",
			"--add-config", "errors.deadletterqueue.topic.name="+dlq)...)
	t.Logf("errors.deadletterqueue.topic.name at share.version=1: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	atOne := fmt.Sprintf("exit %d: %s", res.ExitCode, strings.TrimSpace(res.Stdout+res.Stderr))
	// Kafka 4.4 accepts it: the group config is not tied to the level.
	if want := "Completed updating config for group " + group + "-2."; res.ExitCode != 0 || !strings.Contains(res.Stdout, want) {
		t.Errorf("errors.deadletterqueue.topic.name at share.version=1: %s, want exit 0 and %q", atOne, want)
	}

	// Rejected at level 1: archived, not dead-lettered.
	produce(t, ctx, cl, topic, "a", "b", "c")
	mustTool(t, tg, "share-version-dlq/reject-1", "", ClassConsoleShareConsume,
		args(tg, "--topic", topic, "--group", group, "--reject", "--max-messages", "3", "--timeout-ms", "60000")...)
	// Kafka 4.4 persists the start offset lazily (it may still say 0 here),
	// but its lag counts the records left to deliver: 0 once all three are
	// archived.
	waitShareLag(t, ctx, adm, group, topic, 0)
	if end := endOffset(t, ctx, adm, dlq); end != 0 {
		t.Errorf("share.version=1: the dead-letter topic holds %d records, want 0", end)
	}

	// share.version 1 -> 2.
	res, _ = tool(t, tg, "share-version-dlq/upgrade", "", ClassFeatures, args(tg, "upgrade", "--feature", "share.version=2")...)
	t.Logf("upgrade share.version=2: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "share.version was upgraded to 2.") {
		t.Fatalf("upgrade: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	produce(t, ctx, cl, topic, "d", "e")
	mustTool(t, tg, "share-version-dlq/reject-2", "", ClassConsoleShareConsume,
		args(tg, "--topic", topic, "--group", group, "--reject", "--max-messages", "2", "--timeout-ms", "60000")...)
	res = mustTool(t, tg, "share-version-dlq/read-dlq", "", ClassConsoleConsumer,
		args(tg, "--topic", dlq, "--from-beginning", "--max-messages", "2", "--timeout-ms", "60000",
			"--formatter-property", "print.headers=true", "--formatter-property", "print.key=true")...)
	var want []string
	for _, off := range []int{3, 4} {
		want = append(want, fmt.Sprintf("__dlq.errors.topic:%s,__dlq.errors.partition:0,__dlq.errors.offset:%d,"+
			"__dlq.errors.group:%s,__dlq.errors.delivery.count:1,__dlq.errors.message:Offset rejected by client.\tnull\tnull",
			topic, off, group))
	}
	if got := strings.TrimSuffix(res.Stdout, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("dead-letter topic after the upgrade printed\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if end := endOffset(t, ctx, adm, dlq); end != 2 {
		t.Errorf("share.version=2: the dead-letter topic holds %d records, want 2 (offsets 3 and 4 only)", end)
	}
	t.Logf("%s: errors.deadletterqueue.topic.name set at share.version=1 -> %s", tg.Name, atOne)
}

func produce(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
}

func finalizedShareVersion(t *testing.T, tg Target, step string) string {
	t.Helper()
	res := mustTool(t, tg, step, "", ClassFeatures, args(tg, "describe")...)
	feats, err := parseFeatures(res.Stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	return feats["share.version"]["FinalizedVersionLevel"]
}

// waitShareLag polls the group's lag on partition 0 of topic until it is
// want.
func waitShareLag(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string, want int64) {
	t.Helper()
	last := "no offsets"
	for ctx.Err() == nil {
		res, err := adm.DescribeShareGroupOffsets(ctx, group)
		if err == nil {
			if o, ok := res[group].Offsets.Lookup(topic, 0); ok {
				if o.Lag == want && o.StartOffset >= 0 {
					return
				}
				last = fmt.Sprintf("start offset %d, lag %d", o.StartOffset, o.Lag)
			}
		}
		time.Sleep(100 * time.Millisecond) // polling the broker's state
	}
	t.Fatalf("%s on %s-0: %s, want lag %d", group, topic, last, want)
}

func endOffset(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int64 {
	t.Helper()
	offs, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offs.Lookup(topic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("end offset of %s: %v %v", topic, ok, o.Err)
	}
	return o.Offset
}
