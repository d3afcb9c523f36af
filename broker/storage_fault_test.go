package broker_test

import (
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker"
	"sharq/broker/brokertest"
	"sharq/config"
	"sharq/log"
	"sharq/log/recordbatch"
)

// Storage faults as a client sees them: a partition whose log cannot be
// served answers KAFKA_STORAGE_ERROR while every other one works.

func readyz(t *testing.T, b *brokertest.Broker) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, "http://"+b.Server.AdminAddr()+"/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// partitionCodes sends Produce, Fetch and ListOffsets for one partition and
// returns their partition error codes.
func partitionCodes(t *testing.T, cl *kgo.Client, topic string, id [16]byte, part int32) (produce, fetch, listOffsets int16) {
	t.Helper()
	ctx := testCtx(t)
	preq := kmsg.NewPtrProduceRequest()
	preq.Acks, preq.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic, pt.TopicID = topic, id
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = part
	pp.Records = oneRecordBatch()
	pt.Partitions = append(pt.Partitions, pp)
	preq.Topics = append(preq.Topics, pt)
	presp, err := preq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	produce = presp.Topics[0].Partitions[0].ErrorCode

	freq := kmsg.NewPtrFetchRequest()
	freq.MaxWaitMillis, freq.MaxBytes = 10, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = topic, id
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = part, 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	freq.Topics = append(freq.Topics, ft)
	fresp, err := freq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	fetch = fresp.Topics[0].Partitions[0].ErrorCode

	lreq := kmsg.NewPtrListOffsetsRequest()
	lreq.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = part, -1, -1
	lt.Partitions = append(lt.Partitions, lp)
	lreq.Topics = append(lreq.Topics, lt)
	lresp, err := lreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("list offsets: %v", err)
	}
	listOffsets = lresp.Topics[0].Partitions[0].ErrorCode
	return produce, fetch, listOffsets
}

// oneRecordBatch is a valid v2 batch of one record, as franz-go would
// produce it (non-idempotent, uncompressed).
func oneRecordBatch() []byte {
	rec := kmsg.NewRecord()
	rec.Value = []byte("x")
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // the body after its own (1-byte) length
	recBytes := rec.AppendTo(nil)
	b := kmsg.NewRecordBatch()
	b.Magic = 2
	b.ProducerID, b.ProducerEpoch, b.FirstSequence = -1, -1, -1
	b.FirstTimestamp, b.MaxTimestamp = time.Now().UnixMilli(), time.Now().UnixMilli()
	b.NumRecords = 1
	b.Records = recBytes
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	raw = b.AppendTo(nil)
	b.CRC = int32(recordbatch.Checksum(raw))
	return b.AppendTo(nil)
}

// TestCorruptPartitionIsOffline: a partition whose middle segment was
// deleted between restarts does not stop the broker. The other partition
// is served; the broken one answers KAFKA_STORAGE_ERROR to Produce, Fetch
// and ListOffsets, and shows in /metrics and /readyz with what is wrong.
func TestCorruptPartitionIsOffline(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	adm := newAdmin(t, b)
	const topic = "offline"
	mustCreateTopic(t, adm, topic, 2, map[string]*string{"segment.bytes": strp("1048576")})
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(200<<10))
	big := make([]byte, 100<<10)
	crand.Read(big) // incompressible, so the segments roll
	for i := 0; i < 30; i++ {
		produceSync(t, cl, &kgo.Record{Partition: 1, Value: big})
	}
	produceSync(t, cl, &kgo.Record{Partition: 0, Value: []byte("before")})
	id := topicIDs(t, adm, topic)
	b.Stop()

	dir := filepath.Join(b.Dir, "topics", topic+"-1")
	segs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(segs) < 3 {
		t.Fatalf("want at least 3 segments in %s, have %d", dir, len(segs))
	}
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}

	b.Restart()
	cl = newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(1), kgo.MetadataMinAge(10*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	produceSync(t, cl, &kgo.Record{Partition: 0, Value: []byte("after")})
	recs := consumeN(t, b, topic, 1, 2)
	if string(recs[0].Value) != "before" || string(recs[1].Value) != "after" {
		t.Fatalf("partition 0 read %q, %q", recs[0].Value, recs[1].Value)
	}
	// franz-go's producer retries the storage error (retriable) and then
	// reports it.
	err := cl.ProduceSync(testCtx(t), &kgo.Record{Partition: 1, Value: []byte("lost?")}).FirstErr()
	if !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("produce to the broken partition: %v, want KAFKA_STORAGE_ERROR", err)
	}
	storage := kerr.KafkaStorageError.Code
	if p, f, l := partitionCodes(t, cl, topic, id, 1); p != storage || f != storage || l != storage {
		t.Fatalf("broken partition: produce %d fetch %d list offsets %d, want %d", p, f, l, storage)
	}
	if p, f, l := partitionCodes(t, cl, topic, id, 0); p != 0 || f != 0 || l != 0 {
		t.Fatalf("healthy partition: produce %d fetch %d list offsets %d", p, f, l)
	}

	// ShareFetch answers the broken partition with the storage error and
	// the healthy one as usual.
	m := joinShare(t, b, "offline-share", "m1", topic)
	f := kmsg.NewPtrShareFetchRequest()
	f.GroupID, f.MemberID, f.ShareSessionEpoch = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id), m.epoch
	f.MaxBytes, f.MaxRecords, f.BatchSize = 1<<20, 100, 100
	f.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: m.topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{
		{Partition: 0, PartitionMaxBytes: 1 << 20}, {Partition: 1, PartitionMaxBytes: 1 << 20}}}}
	sresp, err := f.RequestWith(testCtx(t), m.cl)
	if err != nil || sresp.ErrorCode != 0 || len(sresp.Topics) != 1 || len(sresp.Topics[0].Partitions) != 2 {
		t.Fatalf("share fetch: %v %+v", err, sresp)
	}
	for _, sp := range sresp.Topics[0].Partitions {
		if want := map[int32]int16{0: 0, 1: storage}[sp.Partition]; sp.ErrorCode != want {
			t.Errorf("share fetch partition %d: code %d, want %d", sp.Partition, sp.ErrorCode, want)
		}
	}

	page := scrapeMetrics(t, b)
	if v, ok := metricValue(page, `sharq_partition_offline{partition="1",topic="offline"}`); !ok || v != 1 {
		t.Errorf("offline gauge of the broken partition: %v %v", v, ok)
	}
	if _, ok := metricValue(page, `sharq_partition_offline{partition="0",topic="offline"}`); ok {
		t.Errorf("healthy partition reported offline")
	}
	if v, ok := metricValue(page, `sharq_offline_partitions`); !ok || v != 1 {
		t.Errorf("offline partitions count: %v %v", v, ok)
	}
	code, body := readyz(t, b)
	if code != http.StatusOK || !strings.Contains(body, "offline partition offline-1") || !strings.Contains(body, "next segment starts at") {
		t.Errorf("readyz: %d %q", code, body)
	}
}

// TestFullDiskProduceResumes: while the disk is full, produce answers
// KAFKA_STORAGE_ERROR at once (not a timeout) and CreateTopics still
// succeeds (the new partition is offline, as in Kafka); when space returns,
// producing succeeds again at once on the same log, which is not reopened
// (the offline retry interval is an hour here), the broker shuts down
// cleanly, and after a restart every acknowledged record is read back and
// the topic created during the fault takes records.
func TestFullDiskProduceResumes(t *testing.T) {
	t.Parallel()
	ffs := log.NewFaultFS(nil)
	b := brokertest.NewWithOptions(t, broker.Options{LogFS: ffs, OfflineRetryInterval: time.Hour})
	adm := newAdmin(t, b)
	const topic, later = "full", "full-later"
	mustCreateTopic(t, adm, topic, 1, nil)
	fast := []kgo.Opt{kgo.RecordRetries(1), kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond })}
	cl := newClient(t, b, append(fast, kgo.DefaultProduceTopic(topic))...)
	var acked []string
	produce := func(cl *kgo.Client, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("r%d", len(acked))
			produceSync(t, cl, &kgo.Record{Topic: topic, Value: []byte(v)})
			acked = append(acked, v)
		}
	}
	produce(cl, 20)
	id := topicIDs(t, adm, topic)

	ffs.FailWrites(syscall.ENOSPC, true)
	start := time.Now()
	if p, _, _ := partitionCodes(t, cl, topic, id, 0); p != kerr.KafkaStorageError.Code {
		t.Fatalf("produce on a full disk: code %d, want KAFKA_STORAGE_ERROR", p)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("storage error took %v", d)
	}
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte("rejected")}).FirstErr(); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("franz-go produce on a full disk: %v", err)
	}
	mustCreateTopic(t, adm, later, 1, nil)
	if w, _ := ffs.Failed(); w == 0 {
		t.Fatal("no write failed")
	}

	ffs.FailWrites(nil, false)
	produce(cl, 20)
	b.Restart() // Stop fails the test if the shutdown is not clean
	recs := consumeN(t, b, topic, 1, len(acked))
	for i, r := range recs {
		if string(r.Value) != acked[i] {
			t.Fatalf("record %d = %q, want %q", i, r.Value, acked[i])
		}
	}
	produceSync(t, newClient(t, b), &kgo.Record{Topic: later, Value: []byte("x")})
}

// TestRecreatedTopicDoesNotReadOldData: when the metadata lost a topic
// (its log cut) and the topic is created again, the new topic id does not
// match the partition directory's partition.metadata: the old directory is
// set aside and the new topic starts empty.
func TestRecreatedTopicDoesNotReadOldData(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	const topic = "reborn"
	mustCreateTopic(t, newAdmin(t, b), topic, 1, nil)
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic))
	for i := 0; i < 5; i++ {
		produceSync(t, cl, &kgo.Record{Value: []byte(fmt.Sprintf("old-%d", i))})
	}
	b.Stop()
	if err := os.RemoveAll(filepath.Join(b.Dir, "meta")); err != nil {
		t.Fatal(err)
	}
	b.Restart()
	mustCreateTopic(t, newAdmin(t, b), topic, 1, nil)
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic)), &kgo.Record{Value: []byte("new")})
	recs := consumeN(t, b, topic, 1, 1)
	if string(recs[0].Value) != "new" || recs[0].Offset != 0 {
		t.Fatalf("re-created topic reads %q at offset %d", recs[0].Value, recs[0].Offset)
	}
	strays, _ := filepath.Glob(filepath.Join(b.Dir, "topics", topic+"-0.*-stray"))
	if len(strays) != 1 {
		t.Fatalf("old directory not set aside: %v", strays)
	}
	if segs, _ := filepath.Glob(filepath.Join(strays[0], "*.log")); len(segs) == 0 {
		t.Fatalf("set-aside directory %s lost its segments", strays[0])
	}
}

// TestPartitionLimitRefusedUpFront: CreateTopics and CreatePartitions that
// would take the cluster past sharq.max.partitions are refused whole with
// POLICY_VIOLATION and a message naming the limit (the 100,000-partition
// request that used to exhaust file descriptors and leave a data dir that
// could not start), and the broker restarts.
func TestPartitionLimitRefusedUpFront(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	ctx := testCtx(t)
	resp, err := adm.CreateTopics(ctx, 100_000, 1, nil, "huge")
	if err != nil {
		t.Fatal(err)
	}
	if r := resp["huge"]; !errors.Is(r.Err, kerr.PolicyViolation) || !strings.Contains(r.ErrMessage, "sharq.max.partitions=50000") {
		t.Fatalf("100,000 partitions: %v %q", r.Err, r.ErrMessage)
	}
	b.Stop()
	b.Config.MaxPartitions = 10
	b.Restart()
	adm = newAdmin(t, b)
	mustCreateTopic(t, adm, "small", 8, nil)
	resp, err = adm.CreateTopics(ctx, 3, 1, nil, "more")
	if err != nil {
		t.Fatal(err)
	}
	if r := resp["more"]; !errors.Is(r.Err, kerr.PolicyViolation) || !strings.Contains(r.ErrMessage, "sharq.max.partitions=10") {
		t.Fatalf("past the limit: %v %q", r.Err, r.ErrMessage)
	}
	grow, err := adm.CreatePartitions(ctx, 3, "small")
	if err != nil {
		t.Fatal(err)
	}
	if r := grow["small"]; !errors.Is(r.Err, kerr.PolicyViolation) || !strings.Contains(r.ErrMessage, "sharq.max.partitions=10") {
		t.Fatalf("CreatePartitions past the limit: %v %q", r.Err, r.ErrMessage)
	}
	if grow, err = adm.CreatePartitions(ctx, 2, "small"); err != nil || grow["small"].Err != nil {
		t.Fatalf("CreatePartitions up to the limit: %v %v", err, grow["small"].Err)
	}
	b.Restart()
	produceSync(t, newClient(t, b), &kgo.Record{Topic: "small", Partition: 9, Value: []byte("x")})
}
