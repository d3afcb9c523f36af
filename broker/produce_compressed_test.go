package broker_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/log/recordbatch"
)

// plainRecords encodes n uncompressed v2 records with null keys.
func plainRecords(n int) []byte {
	var out []byte
	for i := 0; i < n; i++ {
		body := []byte{0}                          // attributes
		body = binary.AppendVarint(body, 0)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		body = binary.AppendVarint(body, -1)       // null key
		body = binary.AppendVarint(body, 5)
		body = append(body, "value"...)
		body = binary.AppendVarint(body, 0) // headers
		out = binary.AppendVarint(out, int64(len(body)))
		out = append(out, body...)
	}
	return out
}

// batchWithCodec builds a v2 batch whose attributes name codec over the
// given records section, with a valid CRC, as a buggy producer would.
func batchWithCodec(codec int16, count int32, records []byte) []byte {
	b := make([]byte, 61, 61+len(records))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(records)))
	b[16] = 2
	binary.BigEndian.PutUint16(b[21:], uint16(codec))
	binary.BigEndian.PutUint32(b[23:], uint32(count-1))
	now := time.Now().UnixMilli()
	binary.BigEndian.PutUint64(b[27:], uint64(now))
	binary.BigEndian.PutUint64(b[35:], uint64(now))
	binary.BigEndian.PutUint64(b[43:], ^uint64(0)) // producer id -1
	binary.BigEndian.PutUint16(b[51:], 0xffff)
	binary.BigEndian.PutUint32(b[53:], 0xffffffff)
	binary.BigEndian.PutUint32(b[57:], uint32(count))
	b = append(b, records...)
	binary.BigEndian.PutUint32(b[17:], recordbatch.Checksum(b))
	return b
}

// TestProduceCompressedGarbageRefused: a batch flagged gzip (or any codec)
// whose records are not compressed with it, under a valid CRC, is refused
// with INVALID_RECORD and a message, and nothing of it is stored: the next
// good batch gets offset 0 and consumers read it. It used to be stored,
// and no consumer could read past it.
func TestProduceCompressedGarbageRefused(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "garbage-codec"
	mustCreateTopic(t, adm, topic, 1, nil)
	id := topicIDs(t, adm, topic)
	cl := newClient(t, b)
	produce := func(batch []byte) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks = -1
		req.TimeoutMillis = 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(testCtx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	for codec, name := range map[int16]string{1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"} {
		p := produce(batchWithCodec(codec, 3, plainRecords(3)))
		if p.ErrorCode != kerr.InvalidRecord.Code {
			t.Fatalf("%s flag over plain records: error %d, want INVALID_RECORD", name, p.ErrorCode)
		}
		if p.ErrorMessage == nil || !strings.Contains(*p.ErrorMessage, name+" records does not decode") {
			t.Errorf("%s: message %v, want one naming the codec", name, p.ErrorMessage)
		}
	}
	// Uncompressed, a record whose key runs past it: Kafka 4.4 answers
	// INVALID_RECORD (its DefaultRecord cannot read it).
	badKey := binary.AppendVarint([]byte{0, 0, 0}, 1000) // attributes, deltas, key length
	badKey = append(badKey, "value"...)
	badKey = append(binary.AppendVarint(nil, int64(len(badKey))), badKey...)
	if p := produce(batchWithCodec(0, 1, badKey)); p.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("key past its record: error %d, want INVALID_RECORD", p.ErrorCode)
	}
	if p := produce(batchWithCodec(0, 3, plainRecords(3))); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("good batch after the refused ones: error %d base offset %d, want 0 and 0", p.ErrorCode, p.BaseOffset)
	}
	got := consumeN(t, b, topic, 1, 3)
	if string(got[2].Value) != "value" || got[2].Offset != 2 {
		t.Fatalf("read back %q at %d", got[2].Value, got[2].Offset)
	}
}
