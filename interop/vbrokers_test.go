package interop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestVirtualBrokersJavaProducer: Kafka 4.4's Java producer (idempotent,
// acks=all) keeps producing through a leader move, a node stop and the
// node's start on a sharq with three virtual brokers (java/MoveProducer.java
// asks for each move through the control API with records in flight);
// every record is then read back exactly once.
func TestVirtualBrokersJavaProducer(t *testing.T) {
	cp := javaClasspath(t, "kafka-"+KafkaVersion, "kafka-clients-"+KafkaVersion+".jar", "MoveProducer.java")
	j := needJava(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := StartSharq(ctx, buildSharq(t), t.TempDir(), time.Minute,
		"--override", "sharq.virtual.brokers=3", "--override", fmt.Sprintf("metrics.listener=127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(30 * time.Second)
	const topic, count, parts = "interop-vb-moves", 4000, 3
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	mustTool(t, p.Target, "", "", ClassTopics, args(p.Target, "--create", "--topic", topic, "--partitions", fmt.Sprint(parts))...)

	jvmSem <- struct{}{}
	res, err := j.RunClasspath(ctx, nil, cp, "MoveProducer", p.Bootstrap, topic, fmt.Sprint(count), fmt.Sprintf("http://127.0.0.1:%d", port))
	<-jvmSem
	t.Logf("MoveProducer: exit %d in %v\n%s", res.ExitCode, res.Elapsed.Round(time.Millisecond), res.Stdout)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("MoveProducer: %v\n--- stderr ---\n%s", err, res.Stderr)
	}
	for _, want := range []string{"move leaders/move 200", "move nodes/3/stop 200", "move nodes/3/start 200", fmt.Sprintf("done acked=%d errors=0", count)} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("no %q in the producer's output", want)
		}
	}

	offsets := map[int32]kgo.Offset{}
	for i := int32(0); i < parts; i++ {
		offsets[i] = kgo.NewOffset().AtStart()
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	seen := map[string]int{}
	read := 0
	for read < count {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", read, count)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; read++ })
	}
	for i := 0; i < count; i++ {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Errorf("record %d read %d times", i, n)
		}
	}
	if read != count {
		t.Errorf("read %d records, produced %d", read, count)
	}
}
