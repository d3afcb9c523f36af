package interop

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMirrorMaker2Throughput measures records/s mirrored by one MirrorMaker
// 2 (4.3.1, tasks.max=2) sharq -> Kafka, Kafka -> sharq and Kafka -> Kafka
// (the shared 3-node cluster as both source and target, topics renamed by
// the DefaultReplicationPolicy), and the CPU the source and target brokers
// used meanwhile. Off by default (minutes of CPU):
//
//	SHARQ_INTEROP_MM2_BENCH=1 [SHARQ_INTEROP_MM2_RECORDS=200000] go test ./interop -run TestMirrorMaker2Throughput -v
//
// The clock runs from the first mirrored record on the target to the last,
// so MirrorMaker's start-up is not counted; the source is filled before.
func TestMirrorMaker2Throughput(t *testing.T) {
	if os.Getenv("SHARQ_INTEROP_MM2_BENCH") == "" {
		t.Skip("set SHARQ_INTEROP_MM2_BENCH=1 to measure MirrorMaker 2 throughput")
	}
	needMirrorMaker(t)
	c := sharedCluster(t)
	n := 200000
	if v, err := strconv.Atoi(os.Getenv("SHARQ_INTEROP_MM2_RECORDS")); err == nil && v > 0 {
		n = v
	}
	stamp := strconv.FormatInt(time.Now().Unix(), 36)
	clusterPids := func() []int {
		var ps []int
		for _, p := range c.Nodes {
			ps = append(ps, p.Pid())
		}
		return ps
	}
	t.Run("sharq-to-kafka", func(t *testing.T) {
		s := startSharqT(t, t.TempDir())
		topic := "bench-s2k-" + stamp
		createTopics(t, s.Bootstrap, 1, topicSpec{topic, 3, nil})
		fill(t, s.Bootstrap, topic, n)
		startMM2(t, mm2Props("sharq", s.Bootstrap, 1, "kafka", c.Bootstrap, 3, "sharq->kafka.topics="+topic))
		measureMirror(t, "sharq -> kafka", c.Bootstrap, topic, n, map[string][]int{"sharq (source)": {s.Pid()}, "kafka x3 (target)": clusterPids()})
	})
	t.Run("kafka-to-sharq", func(t *testing.T) {
		s := startSharqT(t, t.TempDir())
		topic := "bench-k2s-" + stamp
		createTopics(t, c.Bootstrap, 3, topicSpec{topic, 3, nil})
		fill(t, c.Bootstrap, topic, n)
		startMM2(t, mm2Props("kafka", c.Bootstrap, 3, "sharq", s.Bootstrap, 1, "kafka->sharq.topics="+topic))
		measureMirror(t, "kafka -> sharq", s.Bootstrap, topic, n, map[string][]int{"sharq (target)": {s.Pid()}, "kafka x3 (source)": clusterPids()})
	})
	t.Run("kafka-to-kafka", func(t *testing.T) {
		topic := "bench-k2k-" + stamp
		createTopics(t, c.Bootstrap, 3, topicSpec{topic, 3, nil})
		fill(t, c.Bootstrap, topic, n)
		startMM2(t, mm2Props("src", c.Bootstrap, 3, "dst", c.Bootstrap, 3, "src->dst.topics="+topic,
			"replication.policy.class=org.apache.kafka.connect.mirror.DefaultReplicationPolicy"))
		measureMirror(t, "kafka -> kafka", c.Bootstrap, "src."+topic, n, map[string][]int{"kafka x3 (source and target)": clusterPids()})
	})
}

// fill writes n records of 100-byte values with 10-byte keys, acks=all.
func fill(t *testing.T, bootstrap, topic string, n int) {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	value := []byte(strings.Repeat("v", 100))
	errc := make(chan error, 1)
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("key%07d", i)), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		t.Fatalf("fill %s: %v", topic, err)
	default:
	}
}

// measureMirror waits for n records on target's topic and reports the rate
// from the first to the last, with each process group's CPU over the same
// span.
func measureMirror(t *testing.T, what, target, topic string, n int, pids map[string][]int) {
	t.Helper()
	var first time.Time
	cpu0 := map[string]time.Duration{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(15 * time.Minute)
	for {
		have := int64(0)
		if topicExists(t, target, topic) {
			if end, err := tryEndOffsets(t, target, topic); err == nil {
				have = sumOffsets(end)
			}
		}
		if have > 0 && first.IsZero() {
			first = time.Now()
			for name, ps := range pids {
				cpu0[name] = cpuOf(t, ps)
			}
		}
		if have >= int64(n) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d records within 15 minutes", what, have, n)
		}
		<-tick.C
	}
	wall := time.Since(first)
	var parts []string
	for name, ps := range pids {
		used := cpuOf(t, ps) - cpu0[name]
		parts = append(parts, fmt.Sprintf("%s CPU %.2f s (%.0f%% of one core)", name, used.Seconds(), 100*used.Seconds()/wall.Seconds()))
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("%s: %d records in %v = %.0f records/s; %s; loadavg %s", what, n, wall.Round(time.Millisecond),
		float64(n)/wall.Seconds(), strings.Join(parts, ", "), strings.TrimSpace(string(load)))
}

// cpuOf sums user and system CPU of pids from /proc/PID/stat (clock ticks
// of 10 ms on Linux).
func cpuOf(t *testing.T, pids []int) time.Duration {
	t.Helper()
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("read CPU of %d: %v", pid, err)
		}
		// Fields after the command name in parentheses: utime is the
		// 14th field of the line, stime the 15th.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+st) * 10 * time.Millisecond
	}
	return total
}
