package broker

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/log/recordbatch"
	"sharq/raftmeta"
)

// Benchmarks of one request through the broker (decode, handle, encode,
// write) without a client: allocs/op here are allocations per request.

func benchServer(b testing.TB) (*Server, *conn) {
	cfg := config.New()
	cfg.LogDirs = b.TempDir()
	s, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	s.advertised = []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}
	if err := s.meta.RegisterBroker(context.Background(), raftmeta.Broker{NodeID: cfg.NodeID, Host: "127.0.0.1", Port: 9092}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.createTopic(context.Background(), "bench", 1, 1, nil, false); err != nil {
		b.Fatal(err)
	}
	a, peer := net.Pipe()
	go io.Copy(io.Discard, peer)
	b.Cleanup(func() { a.Close(); peer.Close() })
	return s, s.newConn(a, 0)
}

func encodeFrame(req kmsg.Request) []byte {
	buf := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.GetVersion()))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint16(buf, 5)
	buf = append(buf, "bench"...)
	if req.IsFlexible() {
		buf = append(buf, 0)
	}
	return req.AppendTo(buf)
}

// benchBatch is one uncompressed batch of n records of size bytes each.
func benchBatch(n, size int) []byte {
	rb := kmsg.RecordBatch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), LastOffsetDelta: int32(n - 1)}
	// Current timestamps: an old first timestamp makes every append roll a
	// segment (segment.ms counts from it, as in Kafka).
	now := time.Now().UnixMilli()
	rb.FirstTimestamp, rb.MaxTimestamp = now, now
	var recs []byte
	for i := 0; i < n; i++ {
		r := kmsg.Record{OffsetDelta: int32(i), Value: make([]byte, size)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	rb.Records = recs
	raw := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], recordbatch.Checksum(raw))
	return raw
}

func BenchmarkHandleProduce(b *testing.B) {
	s, c := benchServer(b)
	req := kmsg.NewPtrProduceRequest()
	req.Version = 12
	req.Acks = 1
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "bench"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = benchBatch(10, 100)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	frame := encodeFrame(req)
	work := make([]byte, len(frame))
	_ = s
	b.ReportAllocs()
	b.SetBytes(int64(len(rp.Records)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(work, frame)
		if err := c.handleFrame(work); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHandleFetch(b *testing.B) {
	s, c := benchServer(b)
	p := s.partitionFor("bench", 0)
	batch := benchBatch(10, 100)
	l, err := p.acquire()
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		cp := append([]byte(nil), batch...)
		if _, err := l.Append(cp, 0); err != nil {
			b.Fatal(err)
		}
	}
	p.release()
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "bench"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 64 << 10
	rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	frame := encodeFrame(req)
	b.ReportAllocs()
	b.SetBytes(64 << 10)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.handleFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandleFetchReadCommitted reads a transactional partition (each
// transaction 3 batches of 100 records and its marker, one in ten aborted)
// read_committed and read_uncommitted: the read_committed path (LSO,
// aborted-transaction lookup) must cost what the plain read costs.
func BenchmarkHandleFetchReadCommitted(b *testing.B) {
	s, c := benchServer(b)
	p := s.partitionFor("bench", 0)
	l, err := p.acquire()
	if err != nil {
		b.Fatal(err)
	}
	seq := int32(0)
	for t := 0; t < 300; t++ {
		for k := 0; k < 3; k++ {
			batch := benchTxnBatch(100, 100, 7, 0, seq)
			seq += 100
			if _, err := l.Append(batch, 0); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := l.AppendMarker(7, 0, t%10 != 9, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	p.release()
	for _, iso := range []int8{1, 0} {
		name := map[int8]string{0: "read_uncommitted", 1: "read_committed"}[iso]
		b.Run(name, func(b *testing.B) {
			req := kmsg.NewPtrFetchRequest()
			req.Version = 12
			req.ReplicaID = -1
			req.MaxBytes = 1 << 20
			req.SessionEpoch = -1
			req.IsolationLevel = iso
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = "bench"
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 1 << 20
			rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			frame := encodeFrame(req)
			b.ReportAllocs()
			b.SetBytes(1 << 20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.handleFrame(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchTxnBatch is benchBatch as a transactional producer writes it.
func benchTxnBatch(n, size int, pid int64, epoch int16, seq int32) []byte {
	rb := kmsg.RecordBatch{Magic: 2, Attributes: 0x10, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: int32(n), LastOffsetDelta: int32(n - 1)}
	now := time.Now().UnixMilli()
	rb.FirstTimestamp, rb.MaxTimestamp = now, now
	var recs []byte
	for i := 0; i < n; i++ {
		r := kmsg.Record{OffsetDelta: int32(i), Value: make([]byte, size)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	rb.Records = recs
	raw := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], recordbatch.Checksum(raw))
	return raw
}
