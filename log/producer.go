package log

// Producer snapshot codec.
//
// FORMAT MIGRATION NOTE: a snapshot starts with the 4-byte magic "SQPS" and a
// version byte. Version 2 added, per producer, the first offset of its open
// transaction (i64, -1 = none) and the coordinator epoch of its last marker
// (i32, -1 = none) after lastTimestamp; version 1 snapshots are
// still read (no open transactions). A reader must accept
// the current and the previous version; when the layout changes, bump the
// version, keep decoding the old one, and note the change here. An unknown
// version or a bad CRC makes the reader fall back to an older snapshot or to
// a scan of the log, which is always correct, only slower.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"sharq/log/crc32c"
)

// producerBatchesToRetain is Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN:
// a producer has at most 5 in-flight requests, so a retry can only duplicate
// one of its last 5 batches.
const producerBatchesToRetain = 5

type producerBatch struct {
	firstSeq, lastSeq int32
	firstOffset       int64
	lastOffsetDelta   int32
}

type producerEntry struct {
	epoch         int16
	lastTimestamp int64
	// txnFirst is the first offset of the producer's open transaction in
	// this partition, -1 if none (Kafka's currentTxnFirstOffset).
	txnFirst int64
	// coordinatorEpoch is the coordinator epoch of the producer's last
	// marker, -1 before one (DescribeProducers).
	coordinatorEpoch int32
	n                int // cached batches, oldest first
	batches          [producerBatchesToRetain]producerBatch
}

func (e *producerEntry) lastSeq() int32 {
	if e.n == 0 {
		return -1
	}
	return e.batches[e.n-1].lastSeq
}

// producerState is the idempotence state of one partition: per producer id,
// the epoch and the last few batches. Guarded by Log.appendMu.
type producerState struct {
	m map[int64]*producerEntry
}

func newProducerState() producerState { return producerState{m: map[int64]*producerEntry{}} }

// duplicate returns the original batch if h is a retry of one of the last 5.
func (ps *producerState) duplicate(h *batchHeader) (producerBatch, bool) {
	e := ps.m[h.ProducerID]
	if e == nil || e.epoch != h.ProducerEpoch {
		return producerBatch{}, false
	}
	last := lastSequence(h)
	for i := 0; i < e.n; i++ {
		if e.batches[i].firstSeq == h.BaseSequence && e.batches[i].lastSeq == last {
			return e.batches[i], true
		}
	}
	return producerBatch{}, false
}

// check applies Kafka's ProducerAppendInfo rules for a client append.
func (ps *producerState) check(h *batchHeader) error {
	e := ps.m[h.ProducerID]
	if e == nil {
		// Unknown producer (new, or its state expired or was deleted with the
		// log): Kafka accepts any sequence.
		return nil
	}
	if h.ProducerEpoch < e.epoch {
		return fmt.Errorf("%w: producer %d epoch %d is older than the current epoch %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, e.epoch)
	}
	if h.ProducerEpoch > e.epoch {
		if h.BaseSequence != 0 {
			return fmt.Errorf("%w: producer %d new epoch %d must start at sequence 0, got %d", ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		return nil
	}
	if h.Attributes&attrTransactional == 0 && e.txnFirst >= 0 && h.ProducerEpoch == e.epoch {
		return fmt.Errorf("%w: producer %d wrote a non-transactional batch while its transaction from offset %d is open", ErrInvalidTxnState, h.ProducerID, e.txnFirst)
	}
	if last := e.lastSeq(); e.n > 0 && !inSequence(last, h.BaseSequence) {
		return fmt.Errorf("%w: producer %d epoch %d: expected sequence %d, got %d", ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, incrementSequence(last, 1), h.BaseSequence)
	}
	return nil
}

func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// update records an appended batch (also used when replaying the log). For a
// control batch (a transaction marker) it returns the first offset of the
// transaction the marker ended, -1 if the producer had none open here.
func (ps *producerState) update(h *batchHeader) int64 {
	if h.ProducerID < 0 {
		return -1
	}
	e := ps.m[h.ProducerID]
	if e == nil {
		e = &producerEntry{epoch: h.ProducerEpoch, txnFirst: -1, coordinatorEpoch: -1}
		ps.m[h.ProducerID] = e
	}
	if h.ProducerEpoch != e.epoch {
		e.epoch = h.ProducerEpoch
		e.n = 0
	}
	if h.Attributes&attrControl != 0 {
		// markers carry no data sequence
		e.lastTimestamp = h.MaxTimestamp
		first := e.txnFirst
		e.txnFirst = -1
		return first
	}
	if h.Attributes&attrTransactional != 0 && e.txnFirst < 0 {
		e.txnFirst = h.BaseOffset
	}
	b := producerBatch{firstSeq: h.BaseSequence, lastSeq: lastSequence(h), firstOffset: h.BaseOffset, lastOffsetDelta: h.LastOffsetDelta}
	if e.n == producerBatchesToRetain {
		copy(e.batches[:], e.batches[1:])
		e.n--
	}
	e.batches[e.n] = b
	e.n++
	e.lastTimestamp = h.MaxTimestamp
	return -1
}

// expire drops producers idle since before cutoffMs (producer.id.expiration.ms).
// A producer with an open transaction is kept, as in Kafka: its state is
// what holds the last stable offset back until the marker comes.
func (ps *producerState) expire(cutoffMs int64) {
	for id, e := range ps.m {
		if e.lastTimestamp < cutoffMs && e.txnFirst < 0 {
			delete(ps.m, id)
		}
	}
}

var producerSnapshotMagic = [4]byte{'S', 'Q', 'P', 'S'}

const producerSnapshotVersion = 2

var errBadSnapshot = errors.New("bad producer snapshot")

// encode lays a snapshot out as:
//
//	magic "SQPS" | version u8 | count u32 | entries | crc32c u32 (of all before)
//	entry: producerId i64 | epoch i16 | lastTimestamp i64 | txnFirst i64 |
//	       coordinatorEpoch i32 | n u8 |
//	       n x (firstSeq i32 | lastSeq i32 | firstOffset i64 | lastOffsetDelta i32)
//
// Entries are sorted by producer id so equal states encode identically.
func (ps *producerState) encode() []byte {
	ids := make([]int64, 0, len(ps.m))
	for id := range ps.m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b := make([]byte, 0, 9+len(ids)*(31+producerBatchesToRetain*20)+4)
	b = append(b, producerSnapshotMagic[:]...)
	b = append(b, producerSnapshotVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		e := ps.m[id]
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint16(b, uint16(e.epoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.lastTimestamp))
		b = binary.BigEndian.AppendUint64(b, uint64(e.txnFirst))
		b = binary.BigEndian.AppendUint32(b, uint32(e.coordinatorEpoch))
		b = append(b, byte(e.n))
		for i := 0; i < e.n; i++ {
			pb := e.batches[i]
			b = binary.BigEndian.AppendUint32(b, uint32(pb.firstSeq))
			b = binary.BigEndian.AppendUint32(b, uint32(pb.lastSeq))
			b = binary.BigEndian.AppendUint64(b, uint64(pb.firstOffset))
			b = binary.BigEndian.AppendUint32(b, uint32(pb.lastOffsetDelta))
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32c.Checksum(b))
}

func decodeProducerSnapshot(b []byte) (producerState, error) {
	ps := newProducerState()
	if len(b) < 13 || [4]byte(b[:4]) != producerSnapshotMagic {
		return ps, fmt.Errorf("%w: missing magic", errBadSnapshot)
	}
	v := b[4]
	if v != producerSnapshotVersion && v != producerSnapshotVersion-1 {
		return ps, fmt.Errorf("%w: unknown version %d", errBadSnapshot, v)
	}
	fixed := 19 // v1 entry header
	if v >= 2 {
		fixed = 31
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32c.Checksum(body) != sum {
		return ps, fmt.Errorf("%w: checksum mismatch", errBadSnapshot)
	}
	count := binary.BigEndian.Uint32(body[5:])
	p := body[9:]
	for i := uint32(0); i < count; i++ {
		if len(p) < fixed {
			return ps, fmt.Errorf("%w: truncated entry %d", errBadSnapshot, i)
		}
		id := int64(binary.BigEndian.Uint64(p))
		e := &producerEntry{
			epoch:            int16(binary.BigEndian.Uint16(p[8:])),
			lastTimestamp:    int64(binary.BigEndian.Uint64(p[10:])),
			txnFirst:         -1,
			coordinatorEpoch: -1,
		}
		if v >= 2 {
			e.txnFirst = int64(binary.BigEndian.Uint64(p[18:]))
			e.coordinatorEpoch = int32(binary.BigEndian.Uint32(p[26:]))
		}
		e.n = int(p[fixed-1])
		p = p[fixed:]
		if e.n > producerBatchesToRetain || len(p) < e.n*20 {
			return ps, fmt.Errorf("%w: entry %d has %d batches", errBadSnapshot, i, e.n)
		}
		for j := 0; j < e.n; j++ {
			e.batches[j] = producerBatch{
				firstSeq:        int32(binary.BigEndian.Uint32(p)),
				lastSeq:         int32(binary.BigEndian.Uint32(p[4:])),
				firstOffset:     int64(binary.BigEndian.Uint64(p[8:])),
				lastOffsetDelta: int32(binary.BigEndian.Uint32(p[16:])),
			}
			p = p[20:]
		}
		ps.m[id] = e
	}
	if len(p) != 0 {
		return ps, fmt.Errorf("%w: %d trailing bytes", errBadSnapshot, len(p))
	}
	return ps, nil
}
