package broker

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// encodeWhole is the one-piece frame writeResponse builds for small answers.
func encodeWhole(resp kmsg.Response, corr int32) []byte {
	b := resp.AppendTo(appendResponseHead(nil, corr, resp.IsFlexible()))
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func encodeParts(t *testing.T, w *recordsWriter, resp kmsg.Response, corr int32) ([]byte, bool) {
	t.Helper()
	head := appendResponseHead(nil, corr, resp.IsFlexible())
	bufs, total, _, ok := w.frame(head, resp, resp.IsFlexible())
	if !ok {
		return nil, false
	}
	var out []byte
	for _, b := range bufs {
		out = append(out, b...)
	}
	if len(out) != total {
		t.Fatalf("frame reports %d bytes, buffers hold %d", total, len(out))
	}
	return out, true
}

// records returns n bytes of a recognisable pattern (or nil for n < 0).
func testRecords(rng *rand.Rand, n int) []byte {
	if n < 0 {
		return nil
	}
	b := make([]byte, n)
	rng.Read(b)
	return b
}

func recordSize(rng *rand.Rand) int {
	switch rng.Intn(5) {
	case 0:
		return -1 // null
	case 1:
		return 0 // empty
	case 2:
		return rng.Intn(300)
	default:
		return zeroCopyMin/2 + rng.Intn(zeroCopyMin)
	}
}

func randomFetchResponse(rng *rand.Rand, version int16) *kmsg.FetchResponse {
	r := kmsg.NewPtrFetchResponse()
	r.Version = version
	r.ThrottleMillis = rng.Int31n(100)
	r.SessionID = rng.Int31()
	for i := 0; i < 1+rng.Intn(3); i++ {
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic = string(rune('a' + i))
		rng.Read(tp.TopicID[:])
		for j := 0; j < 1+rng.Intn(4); j++ {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(j)
			p.HighWatermark = rng.Int63()
			p.LastStableOffset = p.HighWatermark
			p.LogStartOffset = rng.Int63n(10)
			if rng.Intn(3) == 0 {
				p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 9}}
			}
			if rng.Intn(3) == 0 {
				p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 3, 40
			}
			if rng.Intn(3) == 0 {
				p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 2
			}
			p.RecordBatches = testRecords(rng, recordSize(rng))
			tp.Partitions = append(tp.Partitions, p)
		}
		r.Topics = append(r.Topics, tp)
	}
	if rng.Intn(2) == 0 {
		b := kmsg.NewFetchResponseBroker()
		b.NodeID, b.Host, b.Port = 1, "localhost", 9092
		r.Brokers = append(r.Brokers, b)
	}
	return r
}

func randomShareFetchResponse(rng *rand.Rand, version int16) *kmsg.ShareFetchResponse {
	r := kmsg.NewPtrShareFetchResponse()
	r.Version = version
	r.AcquisitionLockTimeoutMillis = 30000
	for i := 0; i < 1+rng.Intn(3); i++ {
		tp := kmsg.NewShareFetchResponseTopic()
		rng.Read(tp.TopicID[:])
		for j := 0; j < 1+rng.Intn(4); j++ {
			p := kmsg.NewShareFetchResponseTopicPartition()
			p.Partition = int32(j)
			if rng.Intn(2) == 0 {
				a := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
				a.FirstOffset, a.LastOffset, a.DeliveryCount = 10, 20, 1
				p.AcquiredRecords = append(p.AcquiredRecords, a)
			}
			p.Records = testRecords(rng, recordSize(rng))
			tp.Partitions = append(tp.Partitions, p)
		}
		r.Topics = append(r.Topics, tp)
	}
	return r
}

// The frame written with writev is byte for byte what kmsg encodes in one
// piece, for every Fetch and ShareFetch version sharq serves, with null,
// empty, small and large records fields mixed.
func TestRecordsWriterMatchesKmsg(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var w recordsWriter
	split := 0
	for _, api := range []struct {
		key      int16
		min, max int16
		build    func(*rand.Rand, int16) kmsg.Response
	}{
		{1, 4, 18, func(r *rand.Rand, v int16) kmsg.Response { return randomFetchResponse(r, v) }},
		{78, 1, 2, func(r *rand.Rand, v int16) kmsg.Response { return randomShareFetchResponse(r, v) }},
	} {
		if e := lookupAPI(api.key); e == nil || e.minVersion != api.min || e.maxVersion != api.max {
			t.Fatalf("API %d: the test covers versions %d-%d, the registry serves others", api.key, api.min, api.max)
		}
		for v := api.min; v <= api.max; v++ {
			for i := 0; i < 60; i++ {
				resp := api.build(rng, v)
				want := encodeWhole(resp, int32(i))
				got, ok := encodeParts(t, &w, resp, int32(i))
				if !ok {
					continue // too few record bytes: written whole
				}
				split++
				if !bytes.Equal(got, want) {
					t.Fatalf("%s v%d: writev frame differs from kmsg's encoding (%d vs %d bytes)",
						kmsg.NameForKey(api.key), v, len(got), len(want))
				}
				// The response itself is left as it was.
				if again := encodeWhole(resp, int32(i)); !bytes.Equal(again, want) {
					t.Fatalf("%s v%d: frame changed the response", kmsg.NameForKey(api.key), v)
				}
			}
		}
	}
	if split < 500 {
		t.Fatalf("only %d responses took the writev path", split)
	}
}

func TestRecordsWriterSmallAndOtherResponses(t *testing.T) {
	var w recordsWriter
	small := kmsg.NewPtrFetchResponse()
	small.Version = 12
	tp := kmsg.NewFetchResponseTopic()
	p := kmsg.NewFetchResponseTopicPartition()
	p.RecordBatches = make([]byte, zeroCopyMin-1)
	tp.Partitions = append(tp.Partitions, p)
	small.Topics = append(small.Topics, tp)
	if _, ok := encodeParts(t, &w, small, 1); ok {
		t.Error("a response under zeroCopyMin took the writev path")
	}
	meta := kmsg.NewPtrMetadataResponse()
	meta.Version = 12
	if _, ok := encodeParts(t, &w, meta, 1); ok {
		t.Error("a Metadata response took the writev path")
	}
}

// The writev path allocates nothing once its scratch space has grown (kmsg
// itself allocates only for tagged fields, which a plain answer has none of).
func TestRecordsWriterAllocs(t *testing.T) {
	resp := oneTopicFetchV16(4, func() []byte { return make([]byte, zeroCopyMin) })
	var w recordsWriter
	head := make([]byte, 9, 1<<16)
	w.frame(head, resp, true)
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, _, ok := w.frame(head[:9], resp, true); !ok {
			t.Fatal("not split")
		}
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per response", allocs)
	}
}

// oneTopicFetchV16 is a Fetch v16 response of one topic with partitions
// 0..n-1, each holding records().
func oneTopicFetchV16(n int, records func() []byte) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 16
	tp := kmsg.NewFetchResponseTopic()
	for j := 0; j < n; j++ {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition = int32(j)
		p.RecordBatches = records()
		tp.Partitions = append(tp.Partitions, p)
	}
	resp.Topics = append(resp.Topics, tp)
	return resp
}

func BenchmarkFetchResponseWrite(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	resp := oneTopicFetchV16(3, func() []byte { return testRecords(rng, 1<<20) })
	b.Run("kmsg", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf = resp.AppendTo(buf[:0])
		}
	})
	b.Run("writev-parts", func(b *testing.B) {
		b.ReportAllocs()
		var w recordsWriter
		head := make([]byte, 9, 1<<16)
		for i := 0; i < b.N; i++ {
			w.frame(head[:9], resp, true)
		}
	})
}
