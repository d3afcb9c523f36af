package interop

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scenarioCompaction: Kafka's own tools on a compacted topic. Three
// console-producer runs write new values for the same keys (segment.ms=100
// puts each run in its own segment), the broker's cleaner (backoff 100 ms,
// set as Kafka's dynamic broker config) compacts the sealed ones, and the
// console consumer (a KafkaConsumer) reads the compacted log from the
// start: one record per key, the latest value, at offsets with holes.
func scenarioCompaction(t *testing.T, tg Target) {
	const topic = "interop-compacted"
	mustTool(t, tg, "compaction/backoff", "", ClassConfigs,
		args(tg, "--entity-type", "brokers", "--entity-default", "--alter", "--add-config", "log.cleaner.backoff.ms=100")...)
	mustTool(t, tg, "compaction/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1",
			"--config", "cleanup.policy=compact", "--config", "segment.ms=100",
			"--config", "min.cleanable.dirty.ratio=0.01")...)
	keys := []string{"k1", "k2", "k3", "k4"}
	for round := 1; round <= 3; round++ {
		var in strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&in, "%s:%s-v%d\n", k, k, round)
		}
		mustTool(t, tg, fmt.Sprintf("compaction/produce-%d", round), in.String(), ClassConsoleProducer,
			args(tg, "--topic", topic, "--reader-property", "parse.key=true", "--reader-property", "key.separator=:")...)
	}
	// One more run, so that the last round is in a sealed segment too.
	mustTool(t, tg, "compaction/produce-end", "end:end\n", ClassConsoleProducer,
		args(tg, "--topic", topic, "--reader-property", "parse.key=true", "--reader-property", "key.separator=:")...)
	var want []string
	for i, k := range keys {
		want = append(want, fmt.Sprintf("Offset:%d\t%s\t%s-v3", 8+i, k, k))
	}
	want = append(want, "Offset:12\tend\tend")
	deadline := time.Now().Add(90 * time.Second)
	var got []string
	for {
		res := mustTool(t, tg, "compaction/consume", "", ClassConsoleConsumer,
			args(tg, "--topic", topic, "--partition", "0", "--offset", "earliest", "--max-messages", strconv.Itoa(len(want)),
				"--formatter-property", "print.key=true", "--formatter-property", "print.offset=true")...)
		got = strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the compacted topic reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// The holes are visible to the tools as offsets: earliest is still 0,
	// latest 13.
	res := mustTool(t, tg, "compaction/offsets", "", ClassGetOffsets,
		args(tg, "--topic", topic, "--time", "-1")...)
	if strings.TrimSpace(res.Stdout) != topic+":0:"+strconv.Itoa(13) {
		t.Errorf("latest offset: %q", res.Stdout)
	}
}
