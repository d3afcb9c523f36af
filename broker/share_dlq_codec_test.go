package broker

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log/recordbatch"
	"sharq/share"
)

// The dead-letter batch is byte for byte what franz-go's encoder writes
// for the same records (Kafka's MemoryRecords.withRecords with no
// compression), and the record walk reads it back.
func TestEncodeDLQBatch(t *testing.T) {
	recs := []share.DLQRecord{
		{Timestamp: 1000, Key: []byte("k"), Value: []byte("v"), Headers: []share.Header{{Key: "h", Value: []byte("x")}, {Key: "null"}}},
		{Timestamp: 990, Value: []byte{}},
		{Timestamp: 1_000_000, Key: []byte{}, Headers: []share.Header{{Key: "", Value: []byte{}}}},
	}
	got := encodeDLQBatch(recs)

	var body []byte
	for i, r := range recs {
		kr := kmsg.Record{TimestampDelta64: r.Timestamp - 1000, OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		kr.Length = int32(len(kr.AppendTo(nil)) - 1)
		body = kr.AppendTo(body)
	}
	rb := kmsg.RecordBatch{
		Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, PartitionLeaderEpoch: -1,
		NumRecords: 3, LastOffsetDelta: 2, FirstTimestamp: 1000, MaxTimestamp: 1_000_000, Records: body,
	}
	want := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(want[recordbatch.OffBatchLength:], uint32(len(want)-recordbatch.LengthOverhead))
	binary.BigEndian.PutUint32(want[recordbatch.OffCRC:], recordbatch.Checksum(want))
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeDLQBatch\n%x\nfranz-go\n%x", got, want)
	}

	out := map[int64]share.SourceRecord{}
	next, err := collectRecords(got, 1, 2, out)
	if err != nil || next != 3 || len(out) != 2 {
		t.Fatalf("collectRecords: next %d, %d records, %v", next, len(out), err)
	}
	if r := out[1]; r.Key != nil || r.Value == nil || len(r.Value) != 0 {
		t.Fatalf("record 1: key %q value %q (want null key, empty value)", r.Key, r.Value)
	}
	if r := out[2]; r.Key == nil || len(r.Key) != 0 || r.Value != nil {
		t.Fatalf("record 2: key %q value %q (want empty key, null value)", r.Key, r.Value)
	}
	// A record cut short is an error, not a panic or a silent stop.
	bad := append([]byte(nil), got[:len(got)-3]...)
	recordbatch.Seal(bad)
	if _, err := collectRecords(bad, 0, 2, map[int64]share.SourceRecord{}); err == nil {
		t.Fatal("truncated record collected")
	}
}
