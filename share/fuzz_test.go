package share

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"sharq/log/recordbatch"
)

func seedStates() []State {
	return []State{
		{StartOffset: -1},
		{StartOffset: 0, StateEpoch: 1},
		{StartOffset: 1 << 40, StateEpoch: -3, DeliveryCompleteCount: 7, Batches: []StateBatch{
			{1 << 40, 1<<40 + 9, Available, 3}, {1<<40 + 10, 1<<40 + 10, Acknowledged, 1}, {1<<40 + 500, 1<<40 + 999, Archived, 5}, {1<<40 + 1000, 1<<40 + 1000, Archiving, 2},
		}},
	}
}

// FuzzStateRoundTrip: any State that validates survives encode/decode
// unchanged, and the encoding is stable.
func FuzzStateRoundTrip(f *testing.F) {
	f.Add(int64(0), int32(0), int64(0), []byte{})
	f.Add(int64(100), int32(2), int64(5), []byte{0, 3, 2, 1, 5, 0, 4, 5, 1, 1, 0, 2})
	f.Add(int64(-1), int32(-1), int64(-1), []byte{1})
	f.Fuzz(func(t *testing.T, start int64, epoch int32, dcc int64, spec []byte) {
		st := State{StartOffset: start, StateEpoch: epoch, DeliveryCompleteCount: dcc}
		prev := start - 1
		for i := 0; i+3 < len(spec) && start >= 0 && prev < 1<<62; i += 4 {
			first := prev + 1 + int64(spec[i])
			last := first + int64(spec[i+1])
			st.Batches = append(st.Batches, StateBatch{first, last, RecordState(spec[i+2] % 5), int16(spec[i+3])})
			prev = last
		}
		enc := EncodeState(nil, &st)
		var got State
		err := DecodeState(enc, &got)
		if st.Validate() != nil {
			if err == nil {
				t.Fatalf("invalid state %+v decoded without error", st)
			}
			return
		}
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", st, err)
		}
		if len(st.Batches) == 0 {
			st.Batches = got.Batches[:0]
		}
		if !reflect.DeepEqual(got, st) {
			t.Fatalf("round trip: got %+v, want %+v", got, st)
		}
		if again := EncodeState(nil, &got); !bytes.Equal(again, enc) {
			t.Fatal("encoding not stable")
		}
	})
}

// FuzzDecodeState: garbage gives ErrCorruptState or a valid State, never a
// panic; a valid result re-encodes to something that decodes the same.
func FuzzDecodeState(f *testing.F) {
	for _, st := range seedStates() {
		f.Add(EncodeState(nil, &st))
	}
	f.Add([]byte{})
	f.Add([]byte{stateMagic, stateVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{stateMagic, stateVersion, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var st State
		if err := DecodeState(b, &st); err != nil {
			if !errors.Is(err, ErrCorruptState) {
				t.Fatalf("error %v does not wrap ErrCorruptState", err)
			}
			return
		}
		var again State
		if err := DecodeState(EncodeState(nil, &st), &again); err != nil || !reflect.DeepEqual(st, again) {
			t.Fatalf("re-decode: %v (%+v vs %+v)", err, st, again)
		}
		if _, err := Restore(Config{}, &st); err != nil {
			t.Fatalf("restore of a decoded state: %v", err)
		}
	})
}

func rawBatch(base int64, n int, attrs uint16, pid int64) []byte {
	b := make([]byte, recordbatch.HeaderSize+3) // three bytes standing in for records
	binary.BigEndian.PutUint64(b, uint64(base))
	binary.BigEndian.PutUint32(b[recordbatch.OffBatchLength:], uint32(len(b)-recordbatch.LengthOverhead))
	b[recordbatch.OffMagic] = 2
	binary.BigEndian.PutUint16(b[recordbatch.OffAttributes:], attrs)
	binary.BigEndian.PutUint32(b[recordbatch.OffLastOffsetDelta:], uint32(n-1))
	binary.BigEndian.PutUint64(b[recordbatch.OffProducerID:], uint64(pid))
	binary.BigEndian.PutUint32(b[recordbatch.OffRecordCount:], uint32(n))
	return b
}

// FuzzRawBatches: walking arbitrary bytes never panics or loops, and every
// reported batch satisfies the BatchSource contract.
func FuzzRawBatches(f *testing.F) {
	var seed []byte
	seed = append(seed, rawBatch(0, 5, 0, -1)...)
	seed = append(seed, rawBatch(7, 2, recordbatch.AttrTransactional, 4)...)
	seed = append(seed, rawBatch(9, 1, recordbatch.AttrTransactional|recordbatch.AttrControl, 4)...)
	f.Add(seed, int64(0))
	f.Add(seed[:70], int64(3))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, from int64) {
		var r RawBatches
		r.Reset(from, data, Bounds{HighWatermark: 1 << 62, LastStable: 1 << 62}, []AbortedTxn{{ProducerID: 4, FirstOffset: 0}})
		off := from
		for i := 0; i < 1000; i++ {
			h, ok := r.Batch(off)
			if !ok {
				break
			}
			if h.LastOffset < off || h.LastOffset < h.BaseOffset {
				t.Fatalf("Batch(%d) = %+v", off, h)
			}
			if h.LastOffset == 1<<63-1 {
				break
			}
			off = h.LastOffset + 1
		}
		_ = SliceBatches(data, from, from+10)
	})
}

func TestRawBatches(t *testing.T) {
	var data []byte
	data = append(data, rawBatch(0, 5, 0, -1)...)
	data = append(data, rawBatch(7, 2, recordbatch.AttrTransactional, 4)...)                          // aborted txn of producer 4
	data = append(data, rawBatch(9, 1, recordbatch.AttrTransactional|recordbatch.AttrControl, 4)...)  // its ABORT marker
	data = append(data, rawBatch(10, 3, recordbatch.AttrTransactional, 4)...)                         // a later, committed txn
	data = append(data, rawBatch(13, 1, recordbatch.AttrTransactional|recordbatch.AttrControl, 4)...) // its COMMIT marker
	var r RawBatches
	r.Reset(0, data, Bounds{HighWatermark: 14, LastStable: 14}, []AbortedTxn{{ProducerID: 4, FirstOffset: 7}})
	type want struct {
		off          int64
		base, last   int64
		aborted, ctl bool
	}
	for _, w := range []want{{0, 0, 4, false, false}, {5, 7, 8, true, false}, {9, 9, 9, false, true}, {10, 10, 12, false, false}, {13, 13, 13, false, true}, {2, 0, 4, false, false}} {
		h, ok := r.Batch(w.off)
		if !ok || h.BaseOffset != w.base || h.LastOffset != w.last || h.Aborted != w.aborted || h.Control != w.ctl {
			t.Errorf("Batch(%d) = %+v %v, want %+v", w.off, h, ok, w)
		}
	}
	if _, ok := r.Batch(14); ok {
		t.Error("Batch past the data returned a batch")
	}
	sl := SliceBatches(data, 3, 8)
	if h, _, _ := ParseBatchHeader(sl); h.BaseOffset != 0 || len(sl) != 2*len(rawBatch(0, 1, 0, 0)) {
		t.Errorf("SliceBatches(3, 8) covers %d bytes from %d", len(sl), h.BaseOffset)
	}
	if len(SliceBatches(data, -1, -1)) != 0 || len(SliceBatches(data, 20, 30)) != 0 {
		t.Error("SliceBatches of nothing is not empty")
	}
	// A read that started at 8 knows nothing about offsets before batch 7.
	r.Reset(8, data[len(rawBatch(0, 5, 0, -1)):], Bounds{}, nil)
	if _, ok := r.Batch(3); ok {
		t.Error("Batch before the read claimed a hole")
	}
	if h, ok := r.Batch(8); !ok || h.BaseOffset != 7 {
		t.Errorf("Batch(8) = %+v %v", h, ok)
	}
	// Truncated tail: the walker stops at the last whole batch.
	r.Reset(0, data[:len(data)-3], Bounds{}, nil)
	if _, ok := r.Batch(13); ok {
		t.Error("truncated batch returned")
	}
}
