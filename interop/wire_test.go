package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log/recordbatch"
)

// rawRoundTrip sends req and returns the response body after the response
// header, as the broker wrote it.
func rawRoundTrip(conn net.Conn, f *kmsg.RequestFormatter, corr int32, req kmsg.Request) ([]byte, error) {
	if _, err := conn.Write(f.AppendRequest(nil, req, corr)); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return nil, fmt.Errorf("read size: %w", err)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < 4 || size > 16<<20 {
		return nil, fmt.Errorf("bad response size %d", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	body = body[4:]
	if req.IsFlexible() && req.Key() != 18 {
		if len(body) < 1 || body[0] != 0 {
			return nil, errors.New("unexpected tagged fields in response header")
		}
		body = body[1:]
	}
	return body, nil
}

// scenarioWireFetch captures the exact bytes of Fetch answers for an empty
// partition and for one holding a record, at every Fetch version both
// brokers serve, under both isolation levels: librdkafka refuses a null
// records field ("invalid MessageSetSize -1"), so what matters is that sharq
// writes what Kafka writes. Topic ids are masked before the bytes are recorded for the golden diff.
func scenarioWireFetch(t *testing.T, tg Target) {
	const topic = "interop-wire-fetch"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, f, _, err := dialAPIVersions(ctx, tg.Bootstrap, "sharq-interop-wire")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(50 * time.Second))
	corr := int32(10)
	next := func() int32 { corr++; return corr }

	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 7
	ct.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 2, 1
	ct.Topics = append(ct.Topics, rt)
	ctResp := kmsg.NewPtrCreateTopicsResponse()
	ctResp.Version = ct.Version
	if err := roundTrip(conn, f, next(), ct, ctResp); err != nil {
		t.Fatal(err)
	}
	if len(ctResp.Topics) != 1 || ctResp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %+v", topic, ctResp.Topics)
	}
	topicID := ctResp.Topics[0].TopicID

	// One record in partition 1, with fixed timestamps so that its bytes
	// are the same on both brokers once the base offset is 0.
	rec := kmsg.Record{Key: []byte("k"), Value: []byte("v")}
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, LastOffsetDelta: 0,
		FirstTimestamp: 1700000000000, MaxTimestamp: 1700000000000,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1,
	}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	batch.Records = rec.AppendTo(nil)
	raw := batch.AppendTo(nil)
	batch.Length = int32(len(raw) - 12)
	raw = batch.AppendTo(nil)
	batch.CRC = int32(recordbatch.Checksum(raw))
	raw = batch.AppendTo(nil)
	pr := kmsg.NewPtrProduceRequest()
	pr.Version, pr.Acks, pr.TimeoutMillis = 9, -1, 30000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pt.Partitions = append(pt.Partitions, kmsg.ProduceRequestTopicPartition{Partition: 1, Records: raw})
	pr.Topics = append(pr.Topics, pt)
	// Kafka answers NOT_LEADER until the new partition's leadership has
	// reached the broker's metadata cache.
	for attempt := 0; ; attempt++ {
		prResp := kmsg.NewPtrProduceResponse()
		prResp.Version = pr.Version
		if err := roundTrip(conn, f, next(), pr, prResp); err != nil {
			t.Fatal(err)
		}
		code := prResp.Topics[0].Partitions[0].ErrorCode
		if code == 0 {
			break
		}
		if code != 6 || attempt == 100 {
			t.Fatalf("produce: error %d", code)
		}
		time.Sleep(50 * time.Millisecond)
	}

	var b strings.Builder
	maxV := tg.APIs[1]
	for _, v := range []int16{4, 7, 11, 12, 13, 15, 16, 17, 18} {
		if v > maxV {
			continue
		}
		for _, iso := range []int8{0, 1} {
			req := kmsg.NewPtrFetchRequest()
			req.Version, req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = v, -1, 0, 0, 1<<20
			req.IsolationLevel, req.SessionEpoch, req.SessionID = iso, -1, 0
			ft := kmsg.NewFetchRequestTopic()
			ft.Topic, ft.TopicID = topic, topicID
			for p := int32(0); p < 2; p++ {
				fp := kmsg.NewFetchRequestTopicPartition()
				fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = p, 0, 1<<20
				fp.CurrentLeaderEpoch, fp.LogStartOffset = -1, -1
				ft.Partitions = append(ft.Partitions, fp)
			}
			req.Topics = append(req.Topics, ft)
			body, err := rawRoundTrip(conn, f, next(), req)
			if err != nil {
				t.Fatalf("Fetch v%d: %v", v, err)
			}
			resp := kmsg.NewPtrFetchResponse()
			resp.Version = v
			if err := resp.ReadFrom(body); err != nil {
				t.Fatalf("Fetch v%d decode: %v", v, err)
			}
			for _, rt := range resp.Topics {
				for _, p := range rt.Partitions {
					if p.RecordBatches == nil {
						t.Errorf("Fetch v%d isolation %d partition %d: null records, want a zero-length field as Kafka writes", v, iso, p.Partition)
					}
					if iso == 1 && p.AbortedTransactions == nil {
						t.Errorf("Fetch v%d read_committed partition %d: null aborted transactions, want an empty list as Kafka writes", v, p.Partition)
					}
					if iso == 0 && p.AbortedTransactions != nil {
						t.Errorf("Fetch v%d read_uncommitted partition %d: aborted transactions %v, want null as Kafka writes", v, p.Partition, p.AbortedTransactions)
					}
					if p.ErrorCode != 0 {
						t.Errorf("Fetch v%d partition %d: error %d", v, p.Partition, p.ErrorCode)
					}
				}
			}
			masked := bytes.ReplaceAll(body, topicID[:], make([]byte, 16))
			fmt.Fprintf(&b, "fetch v%d isolation %d: %s\n", v, iso, hex.EncodeToString(masked))
		}
	}
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "wire-fetch/responses", b.String()); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%s", b.String())
}
