package interop

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Strimzi "queues for Kafka" demo: three kafka-console-share-consumer
// processes in one share group on a 2-partition topic, fed by
// kafka-producer-perf-test, described with kafka-share-groups while they run.

const demoRecords = 10000

const propertyDeprecated = "Option --property is deprecated and will be removed in a future version. Use --formatter-property instead."

var demoLine = regexp.MustCompile(`^Partition:(\d+)\tOffset:(\d+)\t[A-Z]*$`)

// demoOffsets parses a console share consumer's output (partition and
// offset printed, then the perf-test payload) into partition -> offsets;
// a trailing partial line is ignored (the consumer is still writing).
func demoOffsets(out string) (map[int][]int, int, error) {
	// Kafka 4.4 prints this notice on stdout, ahead of the records.
	out = strings.TrimPrefix(out, propertyDeprecated+"\n")
	res := map[int][]int{}
	n := 0
	lines := strings.Split(out, "\n")
	for _, l := range lines[:len(lines)-1] {
		m := demoLine.FindStringSubmatch(l)
		if m == nil {
			return nil, n, fmt.Errorf("unexpected line %q", l)
		}
		p, _ := strconv.Atoi(m[1])
		o, _ := strconv.Atoi(m[2])
		res[p] = append(res[p], o)
		n++
	}
	return res, n, nil
}

func scenarioShareDemo(t *testing.T, tg Target) {
	const topic, group = "interop-share-demo", "interop-share-demo"
	start := time.Now()
	j := needJava(t)
	mustTool(t, tg, "share-demo/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")...)
	mustTool(t, tg, "share-demo/config-alter", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "groups", "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest")...)

	// Three consumers, the perf test and the describe tools run at once;
	// holding every slot keeps other scenarios' JVMs off meanwhile.
	release := holdAllJVMSlots(t)
	defer release()
	held := func(step, cls string, a ...string) Result {
		t.Helper()
		res, err := runTool(t, tg, step, "", cls, false, args(tg, a...)...)
		if err != nil {
			t.Fatalf("%s: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", step, err, res.Stdout, res.Stderr)
		}
		return res
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var consumers []*Background
	stopAll := func() []Result {
		var out []Result
		for i, c := range consumers {
			res, err := c.Stop(20 * time.Second)
			if err != nil {
				t.Errorf("consumer %d: %v", i+1, err)
			}
			out = append(out, res)
		}
		consumers = nil
		return out
	}
	defer stopAll()
	for i := range 3 {
		// The first uses the Strimzi demo's (deprecated) --property, the
		// others the --formatter-property that replaces it.
		flag := "--formatter-property"
		if i == 0 {
			flag = "--property"
		}
		c, err := j.Start(ctx, ClassConsoleShareConsume, args(tg, "--topic", topic, "--group", group,
			flag, "print.offset=true", flag, "print.partition=true")...)
		if err != nil {
			t.Fatal(err)
		}
		consumers = append(consumers, c)
	}

	// Wait for all three to be members with an assignment, so that the
	// records are shared among them.
	var members []map[string]string
	deadline := time.Now().Add(45 * time.Second)
	for {
		res := held("", ClassShareGroups, "--describe", "--group", group, "--members")
		members = groupTable(res.Stdout)
		assigned := 0
		for _, m := range members {
			if strings.Contains(m["ASSIGNMENT"], topic+":") {
				assigned++
			}
		}
		if assigned == 3 {
			break
		}
		for i, c := range consumers {
			select {
			case <-c.Exited():
				t.Fatalf("consumer %d exited early:\n%s", i+1, c.Stderr())
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("share group has %d members with assignments after 45s:\n%s", assigned, res.Stdout)
		}
	}
	t.Logf("3 consumers joined after %v", time.Since(start).Round(time.Millisecond))

	// Output from any consumer wakes the wait for all offsets below.
	written := make(chan struct{}, 1)
	for _, c := range consumers {
		go func() {
			for {
				select {
				case <-c.Written():
					select {
					case written <- struct{}{}:
					default:
					}
				case <-c.Exited():
					return
				case <-ctx.Done():
					return
				}
			}
		}()
	}

	// --bootstrap-server (4.2+) rather than the deprecated --producer-props.
	res := held("", ClassProducerPerf, "--topic", topic,
		"--num-records", strconv.Itoa(demoRecords), "--record-size", "16", "--throughput", "-1")
	if !regexp.MustCompile(`(?m)^10000 records sent, `).MatchString(res.Stdout) {
		t.Errorf("perf test did not report 10000 records sent:\n%s", res.Stdout)
	}

	// Until the consumers together have every offset.
	wait := time.NewTimer(40 * time.Second)
	defer wait.Stop()
	var distinct map[[2]int]int
	timedOut := false
	for !timedOut {
		distinct = map[[2]int]int{}
		for i, c := range consumers {
			offs, _, err := demoOffsets(c.Stdout())
			if err != nil {
				t.Fatalf("consumer %d: %v", i+1, err)
			}
			for p, os := range offs {
				for _, o := range os {
					distinct[[2]int{p, o}]++
				}
			}
		}
		if len(distinct) >= demoRecords {
			break
		}
		select {
		case <-written:
		case <-wait.C:
			timedOut = true
		}
	}
	t.Logf("consumers hold %d distinct offsets after %v", len(distinct), time.Since(start).Round(time.Millisecond))

	// Described while the consumers run. Only --state is recorded for the
	// golden comparison as printed; member ids, assignments and offsets
	// differ from run to run, so the others go into the summary.
	res = held("share-demo/describe-state", ClassShareGroups, "--describe", "--group", group, "--state")
	heads := []string{"describe-state: " + tableHead(res.Stdout)}
	state := groupTable(res.Stdout)
	if len(state) != 1 || state[0]["STATE"] != "Stable" || state[0]["#MEMBERS"] != "3" {
		t.Errorf("describe --state rows %v, want one Stable row with 3 members:\n%s", state, res.Stdout)
	}
	res = held("", ClassShareGroups, "--describe", "--group", group, "--members")
	heads = append(heads, "describe-members: "+tableHead(res.Stdout))
	members = groupTable(res.Stdout)
	parts := map[string]bool{}
	for _, m := range members {
		for _, a := range strings.Split(m["ASSIGNMENT"], ",") {
			parts[a] = true
		}
	}
	if len(members) != 3 || !parts[topic+":0"] || !parts[topic+":1"] {
		t.Errorf("describe --members: %d members assigned %v, want 3 covering both partitions:\n%s", len(members), parts, res.Stdout)
	}
	res = held("", ClassShareGroups, "--describe", "--group", group)
	heads = append(heads, "describe: "+tableHead(res.Stdout))
	offsets := groupTable(res.Stdout)
	if len(offsets) != 2 {
		t.Errorf("describe: %d rows, want one per partition:\n%s", len(offsets), res.Stdout)
	}
	for _, r := range offsets {
		if r["TOPIC"] != topic || r["START-OFFSET"] == "-" {
			t.Errorf("describe row %v, want a start offset for %s", r, topic)
		}
	}
	goldenHeads := append(heads,
		fmt.Sprintf("state %s members %s", state0(state, "STATE"), state0(state, "#MEMBERS")),
		fmt.Sprintf("describe-members rows %d", len(members)),
		fmt.Sprintf("describe rows %d", len(offsets)))

	results := stopAll()
	t.Logf("consumers stopped after %v", time.Since(start).Round(time.Millisecond))
	release()

	// Each consumer printed records, the two partitions together hold
	// offsets 0..n-1 with n summing to 10000, and each consumer's
	// closing count matches its lines.
	perPartition := map[int]map[int]bool{0: {}, 1: {}}
	total, dups := 0, 0
	for i, r := range results {
		offs, n, err := demoOffsets(r.Stdout)
		if err != nil {
			t.Errorf("consumer %d: %v", i+1, err)
			continue
		}
		if n == 0 {
			t.Errorf("consumer %d printed no records", i+1)
		}
		if i == 0 && !strings.HasPrefix(r.Stdout, propertyDeprecated+"\n") {
			t.Errorf("consumer 1 (--property) did not print the deprecation notice first: %.200q", r.Stdout)
		}
		// A JVM ended by SIGTERM exits 143 after the shutdown hook closed
		// the consumer.
		if r.ExitCode != 143 && r.ExitCode != 0 {
			t.Errorf("consumer %d exit code %d after SIGTERM, want 143 (or 0)\n%s", i+1, r.ExitCode, r.Stderr)
		}
		if want := fmt.Sprintf("Processed a total of %d messages", n); !strings.Contains(r.Stderr, want) {
			t.Errorf("consumer %d: stderr lacks %q:\n%s", i+1, want, r.Stderr)
		}
		seenParts := []int{}
		for p, os := range offs {
			seenParts = append(seenParts, p)
			if perPartition[p] == nil {
				t.Errorf("consumer %d: records from partition %d", i+1, p)
				continue
			}
			for _, o := range os {
				if perPartition[p][o] {
					dups++
				}
				perPartition[p][o] = true
				total++
			}
		}
		slices.Sort(seenParts)
		t.Logf("consumer %d: %d records from partitions %v (exit %d)", i+1, n, seenParts, r.ExitCode)
	}
	distinctN := 0
	for p, set := range perPartition {
		if len(set) == 0 {
			t.Errorf("no records from partition %d", p)
		}
		for o := range len(set) {
			if !set[o] {
				t.Errorf("partition %d: offset %d never delivered (have %d offsets)", p, o, len(set))
				break
			}
		}
		distinctN += len(set)
	}
	if distinctN != demoRecords {
		t.Errorf("consumers received %d distinct offsets, want %d", distinctN, demoRecords)
	}
	t.Logf("share demo: %d records printed, %d distinct, %d duplicates (redeliveries), %v in all", total, distinctN, dups, time.Since(start).Round(time.Millisecond))
	if r := recorder(t); r != nil {
		summary := append(goldenHeads,
			fmt.Sprintf("consumers printing records %d", countPrinting(results)),
			fmt.Sprintf("partitions 0:%v 1:%v", len(perPartition[0]) > 0, len(perPartition[1]) > 0),
			fmt.Sprintf("distinct offsets %d", distinctN))
		if err := r.Record(tg.Name, "share-demo/summary", strings.Join(summary, "\n")+"\n"); err != nil {
			t.Error(err)
		}
	}
}

func tableHead(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "GROUP") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return "(no header)"
}

func state0(rows []map[string]string, k string) string {
	if len(rows) == 0 {
		return "-"
	}
	return rows[0][k]
}

func countPrinting(results []Result) int {
	n := 0
	for _, r := range results {
		if _, c, err := demoOffsets(r.Stdout); err == nil && c > 0 {
			n++
		}
	}
	return n
}
