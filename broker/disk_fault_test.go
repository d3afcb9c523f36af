package broker_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker"
	"sharq/broker/brokertest"
	"sharq/log"
)

// Disk faults beyond a full disk (issue 26 item 5), on the fault-injecting
// file system: the faulty partition answers KAFKA_STORAGE_ERROR, every
// other one is served, nothing panics or hangs, and once the fault is gone
// every acknowledged record is read back.

// faultBroker is a broker on ffs with a 2-partition topic whose partition
// 1 has several sealed segments; it returns the values acknowledged per
// partition.
func faultBroker(t *testing.T, ffs *log.FaultFS, topic string) (*brokertest.Broker, *kgo.Client, [16]byte, map[int32][]string) {
	t.Helper()
	b := brokertest.NewWithOptions(t, broker.Options{LogFS: ffs, OfflineRetryInterval: 100 * time.Millisecond})
	adm := newAdmin(t, b)
	// 1 MiB segments (the least Kafka allows), 64 KiB values: a roll every
	// 16 records.
	mustCreateTopic(t, adm, topic, 2, map[string]*string{"segment.bytes": strp("1048576")})
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordRetries(1), kgo.MetadataMinAge(10*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	acked := map[int32][]string{}
	for i := range 40 {
		for p := int32(0); p < 2; p++ {
			v := fmt.Sprintf("p%d-%03d-%s", p, i, strings.Repeat("x", 64<<10))
			produceSync(t, cl, &kgo.Record{Partition: p, Value: []byte(v)})
			acked[p] = append(acked[p], v)
		}
	}
	return b, cl, topicIDs(t, adm, topic), acked
}

// readBackPrefix consumes both partitions from the start: each must begin
// with its acknowledged values, in order (probes whose answer was not
// counted may follow them).
func readBackPrefix(t *testing.T, b *brokertest.Broker, topic string, acked map[int32][]string) {
	t.Helper()
	ends := map[int32]int{}
	cl := newClient(t, b)
	lo, err := kadm.NewClient(cl).ListEndOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	lo.Each(func(o kadm.ListedOffset) { ends[o.Partition] = int(o.Offset); total += int(o.Offset) })
	got := map[int32][]string{}
	for _, r := range consumeN(t, b, topic, 2, total) {
		got[r.Partition] = append(got[r.Partition], string(r.Value))
	}
	for p, want := range acked {
		if len(got[p]) < len(want) || fmt.Sprint(got[p][:len(want)]) != fmt.Sprint(want) {
			t.Fatalf("partition %d holds %d records; the %d acknowledged ones are not its first, in order", p, len(got[p]), len(want))
		}
	}
}

// TestSealedSegmentReadEIO: a sealed segment of partition 1 cannot be read
// (EIO, a bad sector). Fetching it answers KAFKA_STORAGE_ERROR at once,
// partition 0 is served (fetch and produce) and the answer never hangs;
// when the disk reads again the partition serves every acknowledged record.
func TestSealedSegmentReadEIO(t *testing.T) {
	t.Parallel()
	ffs := log.NewFaultFS(nil)
	const topic = "eio"
	b, cl, id, acked := faultBroker(t, ffs, topic)
	first := filepath.Join(b.Dir, "topics", topic+"-1", "00000000000000000000.log")
	ffs.FailReads(syscall.EIO, func(name string) bool { return name == first })

	storage := kerr.KafkaStorageError.Code
	start := time.Now()
	_, f, _ := partitionCodes(t, cl, topic, id, 1) // fetch from offset 0: the bad segment
	if f != storage {
		t.Fatalf("fetch of the unreadable segment: code %d, want KAFKA_STORAGE_ERROR", f)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("storage error took %v", d)
	}
	if r, _ := ffs.FailedReads(); r == 0 {
		t.Fatal("no read failed: the test did not reach the segment")
	}
	if p, f, l := partitionCodes(t, cl, topic, id, 0); p != 0 || f != 0 || l != 0 {
		t.Fatalf("healthy partition: produce %d fetch %d list offsets %d", p, f, l)
	}
	acked[0] = append(acked[0], "x") // partitionCodes produced one record "x"
	// The partition went offline: produce is refused too, while the read
	// fails (its reopen reads the disk again).
	if p, f, _ := partitionCodes(t, cl, topic, id, 1); p != storage || f != storage {
		t.Fatalf("partition 1 after the read error: produce %d fetch %d, want KAFKA_STORAGE_ERROR", p, f)
	}

	ffs.FailReads(nil, nil)
	// Back within the offline retry interval: everything acknowledged is
	// there (the probes' own records after it).
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, f, l := partitionCodes(t, cl, topic, id, 1)
		if p == 0 && f == 0 && l == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition 1 after the disk recovered: produce %d fetch %d list offsets %d", p, f, l)
		}
		time.Sleep(20 * time.Millisecond) // the offline retry interval runs on the clock
	}
	readBackPrefix(t, b, topic, acked)
}

// TestDataDirPermissionsChanged: partition 1's directory becomes
// inaccessible underneath the broker (as chmod 000 does to a process that
// is not root: open files keep working, nothing new opens). Its segment
// rolls fail, so producing to it answers KAFKA_STORAGE_ERROR; partition 0
// is served. A restart with the directory still denied starts, with the
// partition offline; when the mode is back the partition returns by
// itself with every acknowledged record.
func TestDataDirPermissionsChanged(t *testing.T) {
	t.Parallel()
	ffs := log.NewFaultFS(nil)
	const topic = "perm"
	b, cl, id, acked := faultBroker(t, ffs, topic)
	dir := filepath.Join(b.Dir, "topics", topic+"-1")
	ffs.DenyPaths(syscall.EACCES, func(p string) bool { return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) })

	storage := kerr.KafkaStorageError.Code
	refused := false
	for i := 0; i < 40 && !refused; i++ { // a roll within 16 records
		v := fmt.Sprintf("p1-denied-%02d-%s", i, strings.Repeat("y", 64<<10))
		err := cl.ProduceSync(testCtx(t), &kgo.Record{Partition: 1, Value: []byte(v)}).FirstErr()
		switch {
		case err == nil:
			acked[1] = append(acked[1], v)
		case strings.Contains(err.Error(), kerr.KafkaStorageError.Message):
			refused = true
		default:
			t.Fatalf("produce to the denied partition: %v, want KAFKA_STORAGE_ERROR", err)
		}
	}
	if !refused {
		t.Fatal("40 records went into a directory that cannot be written")
	}
	if _, denied := ffs.FailedReads(); denied == 0 {
		t.Fatal("no call was denied")
	}
	if p, f, l := partitionCodes(t, cl, topic, id, 0); p != 0 || f != 0 || l != 0 {
		t.Fatalf("healthy partition: produce %d fetch %d list offsets %d", p, f, l)
	}
	acked[0] = append(acked[0], "x")

	// A restart with the directory still denied: the broker starts, the
	// partition is offline (it cannot be opened), partition 0 is served.
	ffs.DenyPaths(nil, nil)
	b.Stop()
	ffs.DenyPaths(syscall.EACCES, func(p string) bool { return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) })
	b.Restart()
	cl = newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(1),
		kgo.MetadataMinAge(10*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	if p, f, l := partitionCodes(t, cl, topic, id, 1); p != storage || f != storage || l != storage {
		t.Fatalf("denied partition after a restart: produce %d fetch %d list offsets %d, want KAFKA_STORAGE_ERROR", p, f, l)
	}
	if p, f, l := partitionCodes(t, cl, topic, id, 0); p != 0 || f != 0 || l != 0 {
		t.Fatalf("healthy partition after a restart: produce %d fetch %d list offsets %d", p, f, l)
	}
	acked[0] = append(acked[0], "x")

	// The mode is back: within the offline retry interval partition 1
	// serves again, every acknowledged record there.
	ffs.DenyPaths(nil, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, f, _ := partitionCodes(t, cl, topic, id, 1)
		if f == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition 1 after the mode came back: fetch %d", f)
		}
		time.Sleep(20 * time.Millisecond) // the offline retry interval runs on the clock
	}
	// partitionCodes produced "x" to partition 1 at each try; count what
	// was taken from what the log holds rather than guess.
	readBackPrefix(t, b, topic, acked)
}
