package log

import (
	"encoding/binary"
	"fmt"
	"math"

	"sharq/log/recordbatch"
)

// The v2 RecordBatch header layout is recordbatch's; the short names keep
// this package's many uses readable.
const (
	offBaseOffset      = recordbatch.OffBaseOffset
	offBatchLength     = recordbatch.OffBatchLength
	offLeaderEpoch     = recordbatch.OffLeaderEpoch
	offMagic           = recordbatch.OffMagic
	offCRC             = recordbatch.OffCRC
	offAttributes      = recordbatch.OffAttributes
	offLastOffsetDelta = recordbatch.OffLastOffsetDelta
	offBaseTimestamp   = recordbatch.OffBaseTimestamp
	offMaxTimestamp    = recordbatch.OffMaxTimestamp
	offProducerID      = recordbatch.OffProducerID
	offProducerEpoch   = recordbatch.OffProducerEpoch
	offBaseSequence    = recordbatch.OffBaseSequence
	offRecordCount     = recordbatch.OffRecordCount
	batchHeaderSize    = recordbatch.HeaderSize

	batchLengthOverhead = recordbatch.LengthOverhead

	attrCompressionMask = recordbatch.AttrCompressionMask
	attrTimestampType   = recordbatch.AttrTimestampType
	attrTransactional   = recordbatch.AttrTransactional
	attrControl         = recordbatch.AttrControl

	magicV2 = recordbatch.MagicV2

	minRecordSize = recordbatch.MinRecordSize
)

// batchHeader is the decoded fixed part of a v2 RecordBatch.
type batchHeader = recordbatch.Header

// lastSequence is the sequence of the last record, wrapping like Kafka's
// DefaultRecordBatch.incrementSequence.
func lastSequence(h *batchHeader) int32 {
	return incrementSequence(h.BaseSequence, h.LastOffsetDelta)
}

func incrementSequence(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}

// parseHeader decodes the first batchHeaderSize bytes of b.
func parseHeader(b []byte) batchHeader { return recordbatch.Parse(b) }

// batchCRC computes the CRC-32C a v2 batch must carry.
func batchCRC(b []byte) uint32 { return recordbatch.Checksum(b) }

// validateLimits is what validateBatch needs from the topic config.
type validateLimits struct {
	maxBytes        int32
	timestampType   TimestampType
	beforeMaxMs     int64 // <= 0: unlimited
	afterMaxMs      int64 // <= 0: unlimited
	nowMs           int64
	allowControl    bool
	requireSequence bool
	requireKeys     bool // cleanup.policy=compact: every record needs a key
}

// validateBatch checks one v2 batch exactly as a producer sent it. It also
// walks the records, decompressing them when the batch is compressed, to
// check their framing and offset deltas: that catches the garbage a CRC
// computed by a buggy client would not, and which no consumer could read.
// It returns the header and the largest record timestamp.
func validateBatch(b []byte, lim *validateLimits) (batchHeader, int64, error) {
	var h batchHeader
	if len(b) <= offMagic {
		return h, 0, fmt.Errorf("%w: %d bytes is shorter than a record batch header", ErrCorruptMessage, len(b))
	}
	if m := int8(b[offMagic]); m != magicV2 {
		return h, 0, fmt.Errorf("%w: magic %d (only v2 record batches are accepted)", ErrUnsupportedMagic, m)
	}
	if len(b) < batchHeaderSize {
		return h, 0, fmt.Errorf("%w: %d bytes is shorter than the %d-byte v2 header", ErrCorruptMessage, len(b), batchHeaderSize)
	}
	h = parseHeader(b)
	if int64(h.Size) != int64(len(b)) {
		return h, 0, fmt.Errorf("%w: batchLength says %d bytes, got %d", ErrCorruptMessage, int64(h.Size), len(b))
	}
	if lim.maxBytes > 0 && len(b) > int(lim.maxBytes) {
		return h, 0, fmt.Errorf("%w: batch of %d bytes exceeds max.message.bytes %d", ErrMessageTooLarge, len(b), lim.maxBytes)
	}
	if got := batchCRC(b); got != h.CRC {
		return h, 0, fmt.Errorf("%w: CRC-32C is %08x, header says %08x", ErrCorruptMessage, got, h.CRC)
	}
	if h.Compression() > 4 {
		return h, 0, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptMessage, h.Compression())
	}
	if h.Attributes&attrControl != 0 && !lim.allowControl {
		return h, 0, fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	}
	if h.RecordCount <= 0 {
		return h, 0, fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.RecordCount)
	}
	if h.LastOffsetDelta < 0 || h.LastOffsetDelta != h.RecordCount-1 {
		return h, 0, fmt.Errorf("%w: lastOffsetDelta %d does not match record count %d", ErrInvalidRecord, h.LastOffsetDelta, h.RecordCount)
	}
	if h.ProducerID >= 0 && h.BaseSequence < 0 && lim.requireSequence {
		return h, 0, fmt.Errorf("%w: producer id %d with sequence %d", ErrInvalidRecord, h.ProducerID, h.BaseSequence)
	}
	if h.Attributes&attrTransactional != 0 && h.ProducerID < 0 {
		return h, 0, fmt.Errorf("%w: transactional batch without a producer id", ErrInvalidRecord)
	}
	maxTs, err := walkRecords(b, &h, lim)
	if err != nil {
		return h, 0, err
	}
	if lim.requireKeys && h.Attributes&attrControl == 0 {
		if err := checkKeys(b, &h); err != nil {
			return h, 0, err
		}
	}
	if err := checkTimestamp(h.MaxTimestamp, lim); err != nil {
		return h, 0, err
	}
	return h, maxTs, nil
}

func checkTimestamp(ts int64, lim *validateLimits) error {
	if lim.timestampType != CreateTime || ts < 0 {
		// -1 is NO_TIMESTAMP; Kafka lets it through.
		return nil
	}
	if lim.beforeMaxMs > 0 && lim.nowMs-ts > lim.beforeMaxMs {
		return fmt.Errorf("%w: timestamp %d is more than %d ms before now (%d)", ErrInvalidTimestamp, ts, lim.beforeMaxMs, lim.nowMs)
	}
	if lim.afterMaxMs > 0 && ts-lim.nowMs > lim.afterMaxMs {
		return fmt.Errorf("%w: timestamp %d is more than %d ms after now (%d)", ErrInvalidTimestamp, ts, lim.afterMaxMs, lim.nowMs)
	}
	return nil
}

// walkRecords checks the record framing of an uncompressed batch: the
// record lengths tile the records section exactly, offset deltas run 0..n-1
// and (for CreateTime) every timestamp is within bounds. It returns the
// largest record timestamp.
//
// The timestamp bounds are checked once, on the earliest and latest
// timestamps, after the framing: both bounds are monotonic in the
// timestamp, so no record fails unless one of those two does, and a
// framing error outranks a timestamp error as in Kafka's LogValidator,
// which collects record timestamp errors but fails at once on a corrupt
// record.
func walkRecords(b []byte, h *batchHeader, lim *validateLimits) (int64, error) {
	var lo, hi int64
	var err error
	if c := h.Compression(); c == codecNone {
		lo, hi, err = recordbatch.ScanRecords(b[batchHeaderSize:], h.RecordCount, h.BaseTimestamp)
	} else {
		lo, hi, err = scanCompressed(c, b[batchHeaderSize:], h.RecordCount, h.BaseTimestamp)
	}
	if err != nil {
		return 0, err
	}
	if h.Attributes&attrTimestampType == 0 && lim.timestampType == CreateTime {
		if lo != math.MaxInt64 {
			if err := checkTimestamp(lo, lim); err != nil {
				return 0, err
			}
		}
		if err := checkTimestamp(hi, lim); err != nil {
			return 0, err
		}
	}
	return hi, nil
}

// recordTimestamps calls fn with the offset delta and timestamp of each
// record of an uncompressed batch until fn returns false. The batch must
// already be validated; a record that does not parse ends the walk. The
// offset delta is the record's own: after compaction it is not its index.
func recordTimestamps(b []byte, h *batchHeader, fn func(delta int32, ts int64) bool) {
	rd := recordbatch.NewReader(b[batchHeaderSize:], h.RecordCount)
	var r recordbatch.Record
	for rd.Next(&r) {
		if !fn(r.OffsetDelta, h.BaseTimestamp+r.TimestampDelta) {
			return
		}
	}
}

// setBaseOffsetAndEpoch assigns the fields that the CRC does not cover.
func setBaseOffsetAndEpoch(b []byte, base int64, epoch int32) {
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(base))
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(epoch))
}

// setMaxTimestamp rewrites maxTimestamp and the timestamp-type bit and
// recomputes the CRC, as Kafka's DefaultRecordBatch.setMaxTimestamp does.
func setMaxTimestamp(b []byte, typ TimestampType, ts int64) {
	attrs := binary.BigEndian.Uint16(b[offAttributes:])
	if typ == LogAppendTime {
		attrs |= attrTimestampType
	} else {
		attrs &^= attrTimestampType
	}
	binary.BigEndian.PutUint16(b[offAttributes:], attrs)
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(ts))
	binary.BigEndian.PutUint32(b[offCRC:], batchCRC(b))
}
