package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDLQKill9InArchiving kills sharq with SIGKILL while rejected share
// records sit in the Archiving state waiting for their dead-letter write,
// and checks after a restart that the dead-letter topic holds every one of
// them (a duplicate would be allowed, a loss is not) and that the
// share-partition start offset moves past them.
//
// The window is made deterministic, not timed: the DLQ topic does not exist
// and is auto-created with default.replication.factor=2 on a single broker,
// so every attempt fails (INVALID_REPLICATION_FACTOR) and is retried after
// 1, 2, 4, 8 s. The kill comes after the first failed attempt is logged;
// the restart has default.replication.factor=1, and the Archiving records
// found when the share-partition loads are written again.
func TestDLQKill9InArchiving(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const topic, group, dlq = "orders", "dlq-crash", "dlq.orders"
	const n = 10
	p := startSharq(t, dir, "--override", "errors.deadletterqueue.auto.create.topics.enable=true",
		"--override", "default.replication.factor=2")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	setGroupConfigs(t, ctx, cl, group, map[string]string{
		"share.auto.offset.reset":           "earliest",
		"errors.deadletterqueue.topic.name": dlq,
	})
	for i := 0; i < n; i++ {
		if err := cl.ProduceSync(ctx, kgo.StringRecord("r"+strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// Even offsets are rejected, odd ones accepted.
	cons, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for len(seen) < n && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			seen[r.Offset] = true
			if r.Offset%2 == 0 {
				cons.MarkAcks(kgo.AckReject, r)
			} else {
				cons.MarkAcks(kgo.AckAccept, r)
			}
		})
	}
	// An acknowledgement is answered once its state change is durable: the
	// rejected records are Archiving on disk from here on.
	if err := cons.FlushAcks(ctx); err != nil {
		t.Fatalf("flush acks: %v", err)
	}
	cons.Close()
	const retrying = "dead-letter write failed, retrying"
	for !strings.Contains(p.stderr.String(), retrying) {
		if ctx.Err() != nil {
			t.Fatalf("no failed dead-letter attempt logged:\n%s", p.stderr)
		}
		time.Sleep(20 * time.Millisecond) // polling the subprocess's log
	}
	if spso, _ := shareOffsets(t, ctx, adm, group, topic); spso != 0 {
		t.Fatalf("SPSO %d before the kill, want 0 (offset 0 is Archiving)", spso)
	}
	if td, err := adm.ListTopics(ctx, dlq); err == nil && td[dlq].Err == nil && td[dlq].Topic == dlq {
		t.Fatalf("DLQ topic %s exists before the kill: the window was not held open", dlq)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	cl.Close()

	p = startSharq(t, dir, "--override", "errors.deadletterqueue.auto.create.topics.enable=true")
	cl2, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	adm2 := kadm.NewClient(cl2)
	// A member comes back: its fetch loads the share-partition, which
	// re-drives the Archiving records. Nothing is delivered again: the odd
	// offsets were accepted, the even ones are on their way to the DLQ.
	cons2, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons2.Close()
	// DescribeShareGroupOffsets answers the start offset as Kafka persists
	// it (one write behind the live SPSO), so the settling is watched
	// through the lag, which counts every record not yet Acknowledged or
	// Archived; the DLQ's content below shows the Archiving records were
	// written there.
	var lag int64 = -1
	for lag != 0 && ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		fs := cons2.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			t.Errorf("offset %d (%s) delivered again after the restart", r.Offset, r.Value)
		})
		_, lag = shareOffsets(t, ctx, adm2, group, topic)
	}
	if lag != 0 {
		t.Fatalf("share-group lag %d after the restart, want 0\n%s", lag, p.stderr)
	}

	dead := map[int64]int{}
	reader, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ConsumeTopics(dlq),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	want := []int64{0, 2, 4, 6, 8}
	for ctx.Err() == nil && len(dead) < len(want) {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := reader.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == "__dlq.errors.offset" {
					off, _ := strconv.ParseInt(string(h.Value), 10, 64)
					dead[off]++
				}
			}
		})
	}
	var got []int64
	for off := range dead {
		got = append(got, off)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("DLQ holds offsets %v, want %v (duplicates allowed)\n%s", got, want, p.stderr)
	}
	t.Logf("DLQ after kill -9 and restart: %v (copies per offset)", dead)
}

func setGroupConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, group string, kv map[string]string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for k, v := range kv {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("group %s configs: %v", group, err)
		}
	}
}

// shareOffsets answers partition 0's start offset and lag from
// DescribeShareGroupOffsets, -1 and -1 when the answer has none.
func shareOffsets(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string) (start, lag int64) {
	t.Helper()
	res, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return -1, -1
	}
	if o, ok := res[group].Offsets.Lookup(topic, 0); ok {
		return o.StartOffset, o.Lag
	}
	return -1, -1
}
