package broker_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker"
	"sharq/broker/brokertest"
	"sharq/log"
)

// abortIndexHoldFS holds the first fsync of an aborted-transaction index
// (.txnindex) file of one partition directory until the test releases it:
// the broker is then in the middle of writing an ABORT marker.
type abortIndexHoldFS struct {
	log.FS
	partDir string
	armed   atomic.Bool
	held    chan struct{} // closed when the fsync is held
	release chan struct{}
}

func (f *abortIndexHoldFS) OpenFile(name string, flag int, perm os.FileMode) (log.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || filepath.Base(filepath.Dir(name)) != f.partDir || !strings.HasSuffix(name, ".txnindex") {
		return file, err
	}
	return &abortIndexHoldFile{File: file, fs: f}, nil
}

type abortIndexHoldFile struct {
	log.File
	fs *abortIndexHoldFS
}

func (f *abortIndexHoldFile) Sync() error {
	if f.fs.armed.CompareAndSwap(true, false) {
		close(f.fs.held)
		select {
		case <-f.fs.release:
		case <-time.After(30 * time.Second): // never hang the broker if the test failed
		}
	}
	return f.File.Sync()
}

// TestTxnAbortedNotReadCommittedWhileMarkerWritten: a read_committed fetch
// that arrives while a transaction's ABORT marker is being written (held in
// the fsync of its aborted-index entry) must not return the aborted records
// as committed; franz-go's own read_committed filter is applied to the
// answer. Before the fix the marker was visible (LSO past the aborted data)
// while the aborted-transactions list did not have it yet, and franz-go's
// exactly-once chain test (kgo TestTxnEtl) consumed more records than were
// produced.
func TestTxnAbortedNotReadCommittedWhileMarkerWritten(t *testing.T) {
	const topic = "abort-window"
	hold := &abortIndexHoldFS{FS: log.OSFS{}, partDir: topic + "-0", held: make(chan struct{}), release: make(chan struct{})}
	b := brokertest.NewWithOptions(t, broker.Options{LogFS: hold})
	t.Cleanup(func() {
		select {
		case <-hold.release:
		default:
			close(hold.release)
		}
	})
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, topic, 1, nil)
	id := topicIDs(t, adm, topic)
	ctx := testCtx(t)

	p := txnProducer(t, b, "abort-window-1", kgo.DefaultProduceTopic(topic))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a0", "a1", "a2"} {
		if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatalf("produce in txn: %v", err)
		}
	}
	hold.armed.Store(true)
	ended := make(chan error, 1)
	go func() { ended <- p.EndTransaction(ctx, kgo.TryAbort) }()
	select {
	case <-hold.held:
	case err := <-ended:
		t.Fatalf("the abort ended (%v) without writing an aborted-index entry", err)
	case <-ctx.Done():
		t.Fatal("the abort marker write never reached the index fsync")
	}

	// A read_committed fetch from offset 0 while the marker is written.
	cl := newClient(t, b)
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	req.IsolationLevel = 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.LogStartOffset, rp.PartitionMaxBytes = 0, 0, -1, 1<<20
	rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch answered %d topics", len(resp.Topics))
	}
	part := &resp.Topics[0].Partitions[0]
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{IsolationLevel: kgo.ReadCommitted(), Topic: topic}, part, nil, nil)
	if fp.Err != nil {
		t.Fatalf("fetch partition: %v", fp.Err)
	}
	for _, r := range fp.Records {
		t.Errorf("read_committed fetch during the abort returned %q at offset %d (LSO %d, aborted transactions %v)",
			r.Value, r.Offset, part.LastStableOffset, part.AbortedTransactions)
	}

	close(hold.release)
	if err := <-ended; err != nil {
		t.Fatalf("abort: %v", err)
	}
	// After the abort and one committed transaction, a read_committed
	// consumer sees only the committed record.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("c0")).FirstErr(); err != nil {
		t.Fatalf("produce in txn: %v", err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := consumeAll(t, b, topic, true, 1); len(got) != 1 || got[0] != "c0" {
		t.Fatalf("read_committed after the abort: %q, want [c0]", got)
	}
}
