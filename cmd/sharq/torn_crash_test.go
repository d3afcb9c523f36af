package main

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
)

// TestTornWritesAfterKill9 (issue 26 item 5): sharq is killed with
// SIGKILL, and then every append-only file it keeps gets a torn final
// write, as a power loss in the middle of a write(2) leaves it: pebble's
// newest WAL under state/, the state journal in front of it, raft's log
// (meta/raft.wal) and the active segment of each partition. The next
// start must succeed (no panic, no refusal), cut the torn tails and lose
// nothing acknowledged: every produced record and every committed offset
// is there, and the node takes new writes.
func TestTornWritesAfterKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startSharq(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const topic, group = "torn", "torn-group"
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if resp, err := adm.CreateTopics(ctx, 2, 1, nil, topic); err != nil || resp.Error() != nil {
		t.Fatalf("create: %v %v", err, resp.Error())
	}
	var acked []string
	for i := range 200 {
		v := fmt.Sprintf("rec-%03d", i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		acked = append(acked, v)
	}
	want := map[int32]int64{}
	for i := range 100 {
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: topic, Partition: int32(i % 2), At: int64(i), LeaderEpoch: -1})
		if resp, err := adm.CommitOffsets(ctx, group, os); err != nil || resp.Error() != nil {
			t.Fatalf("commit %d: %v %v", i, err, resp.Error())
		}
		want[int32(i%2)] = int64(i)
	}
	cl.Close()
	p.cmd.Process.Kill()
	<-p.exited

	// A torn write: the start of a record whose declared length runs past
	// the end of the file, in each file's own framing where it has one.
	torn := map[string][]byte{
		filepath.Join(dir, "state", "state.journal"):  {0, 0, 0x10, 0, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3},
		filepath.Join(dir, "meta", "log", "raft.wal"): {0, 0, 0x08, 0, 0x12, 0x34, 0x56, 0x78, 9, 9},
	}
	// pebble's WAL: a chunk header (checksum, length 0x0400, full chunk)
	// with 20 of its 1024 bytes.
	if wals, _ := filepath.Glob(filepath.Join(dir, "state", "*.log")); len(wals) > 0 {
		sort.Strings(wals)
		torn[wals[len(wals)-1]] = append([]byte{0x12, 0x34, 0x56, 0x78, 0x00, 0x04, 1}, make([]byte, 20)...)
	} else {
		t.Fatal("no pebble WAL under state/")
	}
	for part := range 2 {
		segs, _ := filepath.Glob(filepath.Join(dir, "topics", fmt.Sprintf("%s-%d", topic, part), "*.log"))
		sort.Strings(segs)
		// a batch header whose length says 500 bytes, 30 of them present
		torn[segs[len(segs)-1]] = append([]byte{0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0x01, 0xf4}, make([]byte, 18)...)
	}
	for path, tail := range torn {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatalf("tear %s: %v", path, err)
		}
		f.Write(tail)
		f.Close()
	}

	p = startSharq(t, dir)
	defer func() {
		p.cmd.Process.Kill()
		<-p.exited
	}()
	cl, err = kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]bool{}
	for len(got) < len(acked) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	for _, v := range acked {
		if !got[v] {
			t.Fatalf("acknowledged record %s lost after torn writes", v)
		}
	}
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for part, off := range want {
		if o, ok := offs.Lookup(topic, part); !ok || o.At != off {
			t.Errorf("partition %d: committed offset %v after torn writes, want %d", part, o.At, off)
		}
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after the torn restart: %v", err)
	}
	// Each torn tail was found and cut (pebble cuts its own silently).
	for _, cut := range []string{"raft log ends in an unfinished write", "state journal: dropping a torn final write", "truncating log segment after unclean shutdown"} {
		if !strings.Contains(p.stderr.String(), cut) {
			t.Errorf("restart log does not say %q:\n%s", cut, p.stderr)
		}
	}
}
