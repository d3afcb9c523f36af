package broker_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
)

// TestCompactionFranzGo: franz-go produces to a compacted topic, the
// cleaner runs (Server.CleanLogs, not a timer), and franz-go consumers,
// with and without a group, read the compacted log: the latest value of
// every key at its original offset, the tombstone until its delete horizon
// passed, then not even that; a record without a key is refused.
func TestCompactionFranzGo(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "changelog"
	mustCreateTopic(t, adm, topic, 1, map[string]*string{
		"cleanup.policy":            new("compact"),
		"segment.ms":                new("1"),
		"min.cleanable.dirty.ratio": new("0.01"),
		"delete.retention.ms":       new("0"),
	})
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	// Timestamps an hour old make every batch roll the segment
	// (segment.ms=1), so all but the last batch are in sealed segments.
	base := time.Now().Add(-time.Hour)
	latest := map[string]int64{}
	values := map[int64]string{}
	// A first producer (its own producer id) whose only batch becomes
	// obsolete: the cleaner keeps it as an empty batch (its producer's
	// last), which every reader below must step over.
	first := &kgo.Record{Key: []byte("k1"), Value: []byte("first"), Timestamp: base}
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner())), first)
	values[first.Offset] = "first"
	for i := range 60 {
		key := fmt.Sprintf("k%d", i%6)
		val := fmt.Sprintf("v%d", i)
		r := &kgo.Record{Key: []byte(key), Value: []byte(val), Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
		produceSync(t, cl, r)
		latest[key], values[r.Offset] = r.Offset, val
	}
	tomb := &kgo.Record{Key: []byte("k0"), Timestamp: base.Add(time.Second)}
	produceSync(t, cl, tomb)
	latest["k0"] = tomb.Offset
	last := &kgo.Record{Key: []byte("end"), Value: []byte("end"), Timestamp: base.Add(2 * time.Second)}
	produceSync(t, cl, last)
	latest["end"], values[last.Offset] = last.Offset, "end"

	err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte("no key")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record on a compacted topic: %v, want INVALID_RECORD", err)
	}

	if n := b.Server.CleanLogs(); n != 1 {
		t.Fatalf("cleaned %d logs, want 1", n)
	}
	want := slices.Sorted(func(yield func(int64) bool) {
		for _, o := range latest {
			if !yield(o) {
				return
			}
		}
	})
	check := func(recs []*kgo.Record, want []int64) {
		t.Helper()
		var got []int64
		for _, r := range recs {
			got = append(got, r.Offset)
			if r.Offset == tomb.Offset {
				if r.Value != nil {
					t.Errorf("tombstone at %d has a value %q", r.Offset, r.Value)
				}
				continue
			}
			if string(r.Value) != values[r.Offset] || latest[string(r.Key)] != r.Offset {
				t.Errorf("offset %d: %s=%s, not the latest value", r.Offset, r.Key, r.Value)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("consumed offsets %v, want %v", got, want)
		}
	}
	check(consumeN(t, b, topic, 1, len(want)), want)
	// The first producer's batch is there, empty (a raw Fetch shows it).
	fr := kmsg.NewPtrFetchRequest()
	fr.MaxWaitMillis, fr.MaxBytes = 0, 1<<20
	tds, err := adm.ListTopics(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = topic, tds[topic].ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	fresp, err := fr.RequestWith(testCtx(t), cl)
	if err != nil || len(fresp.Topics) != 1 || len(fresp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch: %v %+v", err, fresp)
	}
	raw := fresp.Topics[0].Partitions[0].RecordBatches
	if len(raw) < 61 || int64(binary.BigEndian.Uint64(raw)) != first.Offset || binary.BigEndian.Uint32(raw[57:]) != 0 {
		t.Fatalf("the first batch is not the empty one at %d: %x (%+v)", first.Offset, raw[:min(len(raw), 61)], fresp.Topics[0].Partitions[0])
	}

	// A group reads the same and commits past the holes.
	gcl := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumerGroup("compacted-readers"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	var recs []*kgo.Record
	ctx := testCtx(t)
	for len(recs) < len(want) {
		fs := gcl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group consumed %d of %d", len(recs), len(want))
		}
		recs = append(recs, fs.Records()...)
	}
	check(recs, want)
	if err := gcl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	offs, err := adm.FetchOffsets(ctx, "compacted-readers")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup(topic, 0); o.At != last.Offset+1 {
		t.Fatalf("committed %d, want %d", o.At, last.Offset+1)
	}

	// A share group acquires over the holes: it gets exactly the records
	// left, never the removed offsets, and does not stall on them.
	const group = "compacted-share"
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	scl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	var shared []*kgo.Record
	shareConsume(t, ctx, scl, func(r *kgo.Record) bool {
		scl.MarkAcks(kgo.AckAccept, r)
		shared = append(shared, r)
		return len(shared) == len(want)
	})
	check(shared, want)
	if err := scl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}

	// delete.retention.ms=0: the next pass is past the tombstone's horizon.
	if n := b.Server.CleanLogs(); n != 1 {
		t.Fatalf("second pass cleaned %d logs, want 1", n)
	}
	want = slices.DeleteFunc(want, func(o int64) bool { return o == tomb.Offset })
	check(consumeN(t, b, topic, 1, len(want)), want)

	// The compacted log survives a restart as it is.
	b.Restart()
	check(consumeN(t, b, topic, 1, len(want)), want)
}

// TestCompactionEmptyBatchOfCompressedProducer: the batch a producer
// wrote last becomes obsolete and the cleaner keeps it as an empty batch
// (its producer state). When that producer compressed (franz-go's default,
// snappy), the empty batch must say no compression, as Kafka writes it:
// a snappy batch of no bytes made franz-go fail ("s2: corrupt input") at
// it forever, so nothing after it was readable (found by the kill -9
// soak, TestMixedKill9Soak).
func TestCompactionEmptyBatchOfCompressedProducer(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "compressed-changelog"
	mustCreateTopic(t, adm, topic, 1, map[string]*string{
		"cleanup.policy": new("compact"), "segment.ms": new("1"), "min.cleanable.dirty.ratio": new("0.01"),
	})
	base := time.Now().Add(-time.Hour) // every batch rolls the segment (segment.ms=1)
	for _, codec := range []kgo.CompressionCodec{kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression(), kgo.GzipCompression()} {
		// Each producer's only batch is overwritten by the next one.
		cl := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(codec))
		produceSync(t, cl, &kgo.Record{Key: []byte("k"), Value: []byte(strings.Repeat("v", 200)), Timestamp: base})
		base = base.Add(time.Millisecond)
	}
	last := newClient(t, b, kgo.DefaultProduceTopic(topic))
	produceSync(t, last, &kgo.Record{Key: []byte("k"), Value: []byte("latest"), Timestamp: base})
	produceSync(t, last, &kgo.Record{Key: []byte("end"), Value: []byte("end"), Timestamp: base.Add(time.Millisecond)})
	if n := b.Server.CleanLogs(); n == 0 {
		t.Fatal("nothing cleaned")
	}
	rd := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t)
	var got []string
	for len(got) < 2 && ctx.Err() == nil {
		fs := rd.PollFetches(ctx)
		for _, e := range fs.Errors() {
			t.Fatalf("reading the cleaned log after %q: %v", got, e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, []string{"latest", "end"}) {
		t.Fatalf("read %q, want the latest value and the end", got)
	}
}
