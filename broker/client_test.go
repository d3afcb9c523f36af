package broker_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// Tests in this file drive an in-process broker with franz-go, a real
// Kafka client.

func newClient(t testing.TB, b *brokertest.Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(b.Addr), kgo.RetryTimeout(20 * time.Second)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func newAdmin(t testing.TB, b *brokertest.Broker) *kadm.Client {
	return kadm.NewClient(newClient(t, b))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCreateTopic(t testing.TB, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := adm.CreateTopics(testCtx(t), partitions, 1, configs, topic)
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if r := resp[topic]; r.Err != nil {
		t.Fatalf("create topic %s: %v (%s)", topic, r.Err, r.ErrMessage)
	}
}

// produceSync produces records and fails the test on any error.
func produceSync(t testing.TB, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumeN reads n records from the start of the given partitions, without
// a group.
func consumeN(t testing.TB, b *brokertest.Broker, topic string, partitions int32, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := int32(0); p < partitions; p++ {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	cl := newClient(t, b, opts...)
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(out), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s-%d: %v", topic, p, err)
		})
		out = append(out, fs.Records()...)
	}
	if len(out) != n {
		t.Fatalf("consumed %d records, want %d", len(out), n)
	}
	return out
}

func TestProduceConsumeIdempotent100k(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, partitions, n = "orders", 3, 100_000
	mustCreateTopic(t, adm, topic, partitions, nil)

	cl := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := 0; i < n; i++ {
		wg.Add(1)
		r := &kgo.Record{Key: []byte(fmt.Sprintf("key-%d", i%97)), Value: []byte(fmt.Sprintf("value-%d", i))}
		cl.Produce(testCtx(t), r, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}

	recs := consumeN(t, b, topic, partitions, n)
	// Per partition, offsets are dense from 0 and values keep the produce
	// order of their key (keys map to one partition each).
	next := map[int32]int64{}
	lastByKey := map[string]int{}
	for _, r := range recs {
		if r.Offset != next[r.Partition] {
			t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
		}
		next[r.Partition]++
		var i int
		fmt.Sscanf(string(r.Value), "value-%d", &i)
		if last, ok := lastByKey[string(r.Key)]; ok && i <= last {
			t.Fatalf("key %s: value %d after %d", r.Key, i, last)
		}
		lastByKey[string(r.Key)] = i
	}
	total := int64(0)
	for p := int32(0); p < partitions; p++ {
		if next[p] == 0 {
			t.Errorf("partition %d got no records", p)
		}
		total += next[p]
	}
	if total != n {
		t.Fatalf("got %d records, want %d", total, n)
	}
}

func TestCompressionCodecs(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	codecs := map[string]kgo.CompressionCodec{
		"none":   kgo.NoCompression(),
		"gzip":   kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(),
		"lz4":    kgo.Lz4Compression(),
		"zstd":   kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			mustCreateTopic(t, adm, topic, 1, nil)
			cl := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(codec))
			var recs []*kgo.Record
			for i := 0; i < 500; i++ {
				recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf("%s compressible payload %d %s", name, i, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))})
			}
			produceSync(t, cl, recs...)
			got := consumeN(t, b, topic, 1, len(recs))
			for i, r := range got {
				if string(r.Value) != string(recs[i].Value) {
					t.Fatalf("record %d: %q, want %q", i, r.Value, recs[i].Value)
				}
			}
		})
	}
}

func TestListOffsetsByTimestamp(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "times"
	mustCreateTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic))
	base := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < 10; i++ {
		// One batch per record, timestamps 1 s apart.
		produceSync(t, cl, &kgo.Record{Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	ctx := testCtx(t)
	cases := []struct {
		ts   int64
		want int64
	}{
		{base.UnixMilli(), 0},
		{base.Add(3500 * time.Millisecond).UnixMilli(), 4},
		{base.Add(9 * time.Second).UnixMilli(), 9},
		{base.Add(time.Hour).UnixMilli(), -1},
	}
	for _, c := range cases {
		res, err := adm.ListOffsetsAfterMilli(ctx, c.ts, topic)
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := res.Lookup(topic, 0)
		if lo.Err != nil {
			t.Fatalf("ts %d: %v", c.ts, lo.Err)
		}
		want := c.want
		if want == -1 {
			want = 10 // kadm maps "none" to the end offset
		}
		if lo.Offset != want && !(c.want == -1 && lo.Offset == -1) {
			t.Errorf("ts %d: offset %d, want %d", c.ts, lo.Offset, want)
		}
	}
	start, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if lo, _ := start.Lookup(topic, 0); lo.Offset != 0 {
		t.Errorf("start offset %d, want 0", lo.Offset)
	}
	end, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if lo, _ := end.Lookup(topic, 0); lo.Offset != 10 {
		t.Errorf("end offset %d, want 10", lo.Offset)
	}
	maxTS, err := adm.ListMaxTimestampOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if lo, _ := maxTS.Lookup(topic, 0); lo.Offset != 9 || lo.Timestamp != base.Add(9*time.Second).UnixMilli() {
		t.Errorf("max timestamp: offset %d ts %d", lo.Offset, lo.Timestamp)
	}
}

func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "durable"
	mustCreateTopic(t, adm, topic, 2, nil)
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := 0; i < 1000; i++ {
		recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	produceSync(t, cl, recs...)
	ids := topicIDs(t, adm, topic)
	b.Restart()
	if got := topicIDs(t, newAdmin(t, b), topic); got != ids {
		t.Fatalf("topic id changed across restart: %v -> %v", ids, got)
	}
	got := consumeN(t, b, topic, 2, len(recs))
	seen := map[string]bool{}
	for _, r := range got {
		seen[string(r.Value)] = true
	}
	for _, r := range recs {
		if !seen[string(r.Value)] {
			t.Fatalf("record %s lost across restart", r.Value)
		}
	}
	// The restarted broker keeps appending after the old data.
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic)), &kgo.Record{Key: []byte("x"), Value: []byte("after")})
	consumeN(t, b, topic, 2, len(recs)+1)
}

func topicIDs(t testing.TB, adm *kadm.Client, topic string) [16]byte {
	t.Helper()
	md, err := adm.Metadata(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		t.Fatalf("topic %s not in metadata: %v", topic, td.Err)
	}
	var zero [16]byte
	if td.ID == zero {
		t.Fatalf("topic %s has a zero topic id", topic)
	}
	return td.ID
}

func TestAutoCreateAndLongPoll(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	const topic = "auto-created"
	// Consuming an unknown topic creates it (auto.create.topics.enable).
	consumer := newClient(t, b,
		kgo.ConsumeTopics(topic), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(5*time.Second))
	ctx := testCtx(t)
	got := make(chan *kgo.Record, 1)
	go func() {
		for {
			fs := consumer.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			if recs := fs.Records(); len(recs) > 0 {
				got <- recs[0]
				return
			}
		}
	}()
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	start := time.Now()
	produceSync(t, producer, &kgo.Record{Value: []byte("wake up")})
	select {
	case r := <-got:
		if string(r.Value) != "wake up" {
			t.Fatalf("got %q", r.Value)
		}
		// The parked fetch must be woken by the append, not by MaxWait.
		if d := time.Since(start); d > 4*time.Second {
			t.Fatalf("record arrived after %v: long-poll was not woken by the append", d)
		}
	case <-ctx.Done():
		t.Fatal("record never arrived")
	}
	md, err := kadm.NewClient(producer).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(md.Topics[topic].Partitions); n != int(b.Config.NumPartitions) {
		t.Fatalf("auto-created topic has %d partitions, want num.partitions=%d", n, b.Config.NumPartitions)
	}
}

func TestTornTailRecovered(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "torn"
	mustCreateTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic))
	for i := 0; i < 50; i++ {
		produceSync(t, cl, &kgo.Record{Value: []byte(fmt.Sprintf("r%d", i))})
	}
	b.Stop()

	// Simulate a crash in the middle of a write: half a batch at the end of
	// the active segment and no clean-shutdown marker.
	dir := filepath.Join(b.Dir, "topics", topic+"-0")
	seg := filepath.Join(dir, "00000000000000000000.log")
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := make([]byte, 40)
	binary.BigEndian.PutUint64(torn, 50)       // base offset
	binary.BigEndian.PutUint32(torn[8:], 4000) // batch length far past the end
	torn[16] = 2                               // magic
	if _, err := f.Write(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, _ := os.Stat(seg)
	if err := os.Remove(filepath.Join(dir, ".clean-shutdown")); err != nil {
		t.Fatalf("remove clean-shutdown marker: %v", err)
	}

	b.Restart()
	// A partition log opens (and recovers) on first use.
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic)), &kgo.Record{Value: []byte("r50")})
	after, _ := os.Stat(seg)
	if want := before.Size() - int64(len(torn)); after.Size() <= want || after.Size() > want+200 {
		t.Fatalf("segment is %d bytes after recovery and one more record, want the %d bytes kept (torn tail cut) plus one batch", after.Size(), want)
	}
	recs := consumeN(t, b, topic, 1, 51)
	for i, r := range recs {
		if string(r.Value) != fmt.Sprintf("r%d", i) || r.Offset != int64(i) {
			t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
		}
	}
}
