package recordbatch

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The layout agrees with franz-go's own RecordBatch encoder, field by field.
func TestParseMatchesKmsg(t *testing.T) {
	rb := kmsg.RecordBatch{
		FirstOffset: 1234, PartitionLeaderEpoch: 7, Magic: 2, Attributes: AttrTransactional | 3,
		LastOffsetDelta: 4, FirstTimestamp: 1111, MaxTimestamp: 2222, ProducerID: 99, ProducerEpoch: 3,
		FirstSequence: 42, NumRecords: 5, Records: make([]byte, 10),
	}
	raw := rb.AppendTo(nil)
	// kmsg leaves Length and CRC as given: fill them as a producer does.
	rb.Length = int32(len(raw) - LengthOverhead)
	raw = rb.AppendTo(nil)
	rb.CRC = int32(Checksum(raw))
	raw = rb.AppendTo(nil)
	h, ok := Next(raw)
	if !ok {
		t.Fatal("Next refused a whole batch")
	}
	want := Header{BaseOffset: 1234, Size: int32(len(raw)), LeaderEpoch: 7, Magic: 2, CRC: uint32(rb.CRC),
		Attributes: AttrTransactional | 3, LastOffsetDelta: 4, BaseTimestamp: 1111, MaxTimestamp: 2222,
		ProducerID: 99, ProducerEpoch: 3, BaseSequence: 42, RecordCount: 5}
	if h != want {
		t.Fatalf("parsed %+v\nwant   %+v", h, want)
	}
	if h.LastOffset() != 1238 || h.Compression() != 3 || !h.Transactional() || h.Control() {
		t.Fatalf("accessors: last %d compression %d txn %v control %v", h.LastOffset(), h.Compression(), h.Transactional(), h.Control())
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short", raw[:HeaderSize-1]},
		{"truncated body", raw[:len(raw)-1]},
		{"magic 1", func() []byte { b := append([]byte(nil), raw...); b[OffMagic] = 1; return b }()},
		{"length below header", func() []byte { b := append([]byte(nil), raw...); b[OffBatchLength+3] = 10; return b }()},
	} {
		if _, ok := Next(tc.b); ok {
			t.Errorf("%s: Next accepted it", tc.name)
		}
	}
}

func FuzzNext(f *testing.F) {
	f.Add(make([]byte, HeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := Next(b)
		if ok && (int(h.Size) > len(b) || h.Size < HeaderSize || h.LastOffset() < h.BaseOffset) {
			t.Fatalf("accepted %+v from %d bytes", h, len(b))
		}
	})
}
