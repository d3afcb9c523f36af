package share

import (
	"sort"

	"sharq/log/recordbatch"
)

// Bounds are the log offsets a share-partition needs from its log.
type Bounds struct {
	LogStart      int64 // log start offset
	HighWatermark int64 // end for read_uncommitted
	LastStable    int64 // end for read_committed (LSO); set it to HighWatermark without transactions
}

// BatchHeader describes one log batch (the fields of the v2 RecordBatch
// header the share-partition cares about).
type BatchHeader struct {
	BaseOffset    int64
	LastOffset    int64
	RecordCount   int32
	ProducerID    int64
	Control       bool // transaction marker batch
	Transactional bool
	Aborted       bool // belongs to an aborted transaction (only meaningful under read_committed)
}

// BatchSource is how a SharePartition sees the log: batch boundaries from
// a read that started at NextFetchOffset. Batch must not retain anything.
type BatchSource interface {
	Bounds() Bounds
	// Batch returns the first batch whose LastOffset >= offset. A returned
	// BaseOffset > offset asserts that the offsets in between have no batch
	// (compacted away): they get archived. So Batch returns false when it
	// cannot know: offset before the start of the data read, or no batch
	// after it in the data (end of the read, or of the log).
	Batch(offset int64) (BatchHeader, bool)
}

// AbortedTxn is a FetchResponse AbortedTransactions entry (recordbatch's,
// the one type sharq/log returns).
type AbortedTxn = recordbatch.AbortedTxn

// RawBatches is a BatchSource over raw v2 RecordBatch bytes as returned by
// a log read (sharq/log Read). It walks headers only, with a cursor so a
// monotonic sequence of Batch calls costs one pass. Under read_committed
// set Aborted to the log's aborted transactions overlapping Data: batches of
// an aborted transaction are reported with Aborted set (the consumer's
// algorithm: a producer's batches are aborted from the txn's first offset
// until its ABORT marker). Reset before reusing it for another read.
type RawBatches struct {
	From    int64 // the offset the read asked for
	Data    []byte
	Bound   Bounds
	Aborted []AbortedTxn
	// Decompress unpacks compressed batches when record keys are read
	// (key-ordered delivery); Reset keeps it.
	Decompress Decompressor
	dbuf       []byte

	pos      int   // byte position of the cursor batch
	cursorAt int64 // last offset before the cursor (-1 at the start)
	open     []int64
	nextAb   int
}

// Reset points the source at a new read (data as returned for a read at
// offset from), keeping its buffers.
func (r *RawBatches) Reset(from int64, data []byte, b Bounds, aborted []AbortedTxn) {
	r.From, r.Data, r.Bound, r.Aborted = from, data, b, aborted
	r.rewind()
}

func (r *RawBatches) rewind() {
	r.pos, r.cursorAt, r.open, r.nextAb = 0, -1, r.open[:0], 0
}

// Bounds implements BatchSource.
func (r *RawBatches) Bounds() Bounds { return r.Bound }

// Batch implements BatchSource. A truncated or malformed tail ends the data.
func (r *RawBatches) Batch(offset int64) (BatchHeader, bool) {
	if offset <= r.cursorAt {
		r.rewind()
	}
	for {
		h, size, ok := ParseBatchHeader(r.Data[r.pos:])
		if !ok {
			return BatchHeader{}, false
		}
		h.Aborted = r.abortedLocked(&h)
		if h.LastOffset >= offset {
			if h.BaseOffset > offset && offset < r.From {
				// Not read, so not known to be a hole.
				return BatchHeader{}, false
			}
			return h, true
		}
		r.pos += size
		r.cursorAt = h.LastOffset
	}
}

// abortedLocked tracks open aborted transactions while walking forward.
func (r *RawBatches) abortedLocked(h *BatchHeader) bool {
	if len(r.Aborted) == 0 {
		return false
	}
	for r.nextAb < len(r.Aborted) && r.Aborted[r.nextAb].FirstOffset <= h.LastOffset {
		r.open = append(r.open, r.Aborted[r.nextAb].ProducerID)
		r.nextAb++
	}
	idx := -1
	for i, p := range r.open {
		if p == h.ProducerID {
			idx = i
			break
		}
	}
	if idx < 0 || !h.Transactional {
		return false
	}
	if h.Control {
		// The ABORT marker closes the transaction; the marker itself is a
		// control record the client gap-acks like any other.
		r.open = append(r.open[:idx], r.open[idx+1:]...)
		return false
	}
	return true
}

// ParseBatchHeader decodes the v2 header at the start of b and returns the
// batch's total size. ok is false for a short or non-v2 batch.
func ParseBatchHeader(b []byte) (h BatchHeader, size int, ok bool) {
	rh, ok := recordbatch.Next(b)
	if !ok {
		return h, 0, false
	}
	return BatchHeader{
		BaseOffset:    rh.BaseOffset,
		LastOffset:    rh.LastOffset(),
		RecordCount:   rh.RecordCount,
		ProducerID:    rh.ProducerID,
		Transactional: rh.Transactional(),
		Control:       rh.Control(),
	}, int(rh.Size), true
}

// SliceBatches returns the sub-slice of raw batches that covers offsets
// first..last with whole batches: what ShareFetch returns as Records.
func SliceBatches(data []byte, first, last int64) []byte {
	if first < 0 || last < first {
		return data[:0]
	}
	start, end, pos := -1, 0, 0
	for {
		h, size, ok := ParseBatchHeader(data[pos:])
		if !ok || h.BaseOffset > last {
			break
		}
		if start < 0 && h.LastOffset >= first {
			start = pos
		}
		pos += size
		end = pos
	}
	if start < 0 {
		return data[:0]
	}
	return data[start:end]
}

// MemSource is an in-memory BatchSource: a list of batch headers sorted by
// offset. Tests and tools use it; Batches may have holes (compaction).
type MemSource struct {
	Batches []BatchHeader
	Bound   Bounds
	KeyOf   map[int64]string // record keys (Keys); absent: null
}

// Bounds implements BatchSource.
func (m *MemSource) Bounds() Bounds { return m.Bound }

// Batch implements BatchSource, honouring the log start offset and the end
// for read_uncommitted (the SharePartition also clips to its isolation end).
func (m *MemSource) Batch(offset int64) (BatchHeader, bool) {
	i := sort.Search(len(m.Batches), func(i int) bool { return m.Batches[i].LastOffset >= offset })
	for ; i < len(m.Batches); i++ {
		h := m.Batches[i]
		if h.LastOffset < m.Bound.LogStart {
			continue
		}
		if h.BaseOffset >= m.Bound.HighWatermark {
			return BatchHeader{}, false
		}
		return h, true
	}
	return BatchHeader{}, false
}

// Append adds a batch of n records at the end and moves the high
// watermark (and LSO) past it. It returns the batch's base offset.
func (m *MemSource) Append(n int) int64 {
	base := m.Bound.HighWatermark
	m.Batches = append(m.Batches, BatchHeader{BaseOffset: base, LastOffset: base + int64(n) - 1, RecordCount: int32(n)})
	m.Bound.HighWatermark = base + int64(n)
	m.Bound.LastStable = m.Bound.HighWatermark
	return base
}
