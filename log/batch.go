package log

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// v2 RecordBatch header layout (all big-endian). The CRC covers everything
// from attributes to the end of the batch, so base offset and partition
// leader epoch can be assigned in place without recomputing it.
const (
	offBaseOffset      = 0  // int64
	offBatchLength     = 8  // int32: bytes after this field
	offLeaderEpoch     = 12 // int32
	offMagic           = 16 // int8
	offCRC             = 17 // uint32, CRC-32C of [offAttributes:]
	offAttributes      = 21 // int16
	offLastOffsetDelta = 23 // int32
	offBaseTimestamp   = 27 // int64
	offMaxTimestamp    = 35 // int64
	offProducerID      = 43 // int64
	offProducerEpoch   = 51 // int16
	offBaseSequence    = 53 // int32
	offRecordCount     = 57 // int32
	batchHeaderSize    = 61

	// batchLengthOverhead is what batchLength does not count: baseOffset and
	// batchLength itself.
	batchLengthOverhead = 12

	attrCompressionMask = 0x07
	attrTimestampType   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20

	magicV2 = 2

	// minRecordSize is the smallest v2 record body: attributes, timestamp
	// delta, offset delta, null key, null value, zero headers (a byte each).
	minRecordSize = 6
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchHeader is the decoded fixed part of a v2 RecordBatch.
type batchHeader struct {
	baseOffset      int64
	size            int32 // whole batch in bytes (batchLength + 12)
	leaderEpoch     int32
	magic           int8
	crc             uint32
	attributes      int16
	lastOffsetDelta int32
	baseTimestamp   int64
	maxTimestamp    int64
	producerID      int64
	producerEpoch   int16
	baseSequence    int32
	recordCount     int32
}

func (h *batchHeader) lastOffset() int64 { return h.baseOffset + int64(h.lastOffsetDelta) }

func (h *batchHeader) compression() int { return int(h.attributes & attrCompressionMask) }

// lastSequence is the sequence of the last record, wrapping like Kafka's
// DefaultRecordBatch.incrementSequence.
func (h *batchHeader) lastSequence() int32 {
	return incrementSequence(h.baseSequence, h.lastOffsetDelta)
}

func incrementSequence(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}

// parseHeader decodes the first batchHeaderSize bytes of b.
func parseHeader(b []byte) batchHeader {
	_ = b[batchHeaderSize-1]
	return batchHeader{
		baseOffset:      int64(binary.BigEndian.Uint64(b[offBaseOffset:])),
		size:            int32(binary.BigEndian.Uint32(b[offBatchLength:])) + batchLengthOverhead,
		leaderEpoch:     int32(binary.BigEndian.Uint32(b[offLeaderEpoch:])),
		magic:           int8(b[offMagic]),
		crc:             binary.BigEndian.Uint32(b[offCRC:]),
		attributes:      int16(binary.BigEndian.Uint16(b[offAttributes:])),
		lastOffsetDelta: int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:])),
		baseTimestamp:   int64(binary.BigEndian.Uint64(b[offBaseTimestamp:])),
		maxTimestamp:    int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])),
		producerID:      int64(binary.BigEndian.Uint64(b[offProducerID:])),
		producerEpoch:   int16(binary.BigEndian.Uint16(b[offProducerEpoch:])),
		baseSequence:    int32(binary.BigEndian.Uint32(b[offBaseSequence:])),
		recordCount:     int32(binary.BigEndian.Uint32(b[offRecordCount:])),
	}
}

// batchCRC computes the CRC-32C a v2 batch must carry.
func batchCRC(b []byte) uint32 { return crc32.Checksum(b[offAttributes:], castagnoli) }

// validateLimits is what validateBatch needs from the topic config.
type validateLimits struct {
	maxBytes        int32
	timestampType   TimestampType
	beforeMaxMs     int64 // <= 0: unlimited
	afterMaxMs      int64 // <= 0: unlimited
	nowMs           int64
	allowControl    bool
	requireSequence bool
}

// validateBatch checks one v2 batch exactly as a producer sent it, without
// decompressing it. For uncompressed batches it also walks the records to
// check their framing and offset deltas, which costs a varint pass but
// catches the garbage a CRC computed by a buggy client would not.
// It returns the header and the largest record timestamp it could see
// (the header's maxTimestamp for compressed batches).
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
	if int64(h.size) != int64(len(b)) {
		return h, 0, fmt.Errorf("%w: batchLength says %d bytes, got %d", ErrCorruptMessage, int64(h.size), len(b))
	}
	if lim.maxBytes > 0 && len(b) > int(lim.maxBytes) {
		return h, 0, fmt.Errorf("%w: batch of %d bytes exceeds max.message.bytes %d", ErrMessageTooLarge, len(b), lim.maxBytes)
	}
	if got := batchCRC(b); got != h.crc {
		return h, 0, fmt.Errorf("%w: CRC-32C is %08x, header says %08x", ErrCorruptMessage, got, h.crc)
	}
	if h.compression() > 4 {
		return h, 0, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptMessage, h.compression())
	}
	if h.attributes&attrControl != 0 && !lim.allowControl {
		return h, 0, fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	}
	if h.recordCount <= 0 {
		return h, 0, fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.recordCount)
	}
	if h.lastOffsetDelta < 0 || h.lastOffsetDelta != h.recordCount-1 {
		return h, 0, fmt.Errorf("%w: lastOffsetDelta %d does not match record count %d", ErrInvalidRecord, h.lastOffsetDelta, h.recordCount)
	}
	if h.producerID >= 0 && h.baseSequence < 0 && lim.requireSequence {
		return h, 0, fmt.Errorf("%w: producer id %d with sequence %d", ErrInvalidRecord, h.producerID, h.baseSequence)
	}
	if h.attributes&attrTransactional != 0 && h.producerID < 0 {
		return h, 0, fmt.Errorf("%w: transactional batch without a producer id", ErrInvalidRecord)
	}
	maxTs := h.maxTimestamp
	if h.compression() == 0 {
		var err error
		maxTs, err = walkRecords(b, &h, lim)
		if err != nil {
			return h, 0, err
		}
	} else if err := checkTimestamp(h.baseTimestamp, lim); err != nil {
		return h, 0, err
	}
	if err := checkTimestamp(h.maxTimestamp, lim); err != nil {
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
// and (for CreateTime) each timestamp is within bounds. It decodes only the
// leading varints of each record and jumps over the rest by its length, so
// it costs a few nanoseconds per record; keys, values and headers are left
// to the consumer, as they are for compressed batches. It returns the
// largest record timestamp.
func walkRecords(b []byte, h *batchHeader, lim *validateLimits) (int64, error) {
	p := b[batchHeaderSize:]
	maxTs := int64(math.MinInt64)
	checkTs := h.attributes&attrTimestampType == 0 && lim.timestampType == CreateTime
	for i := int32(0); i < h.recordCount; i++ {
		length, n := readVarint(p)
		if n <= 0 || length < minRecordSize || length > int64(len(p)-n) {
			return 0, fmt.Errorf("%w: record %d: bad length", ErrCorruptMessage, i)
		}
		rec := p[n+1 : n+int(length)] // skip the attributes byte
		p = p[n+int(length):]
		tsDelta, n := readVarint(rec)
		if n <= 0 {
			return 0, fmt.Errorf("%w: record %d: bad timestamp delta", ErrCorruptMessage, i)
		}
		offDelta, m := readVarint(rec[n:])
		if m <= 0 {
			return 0, fmt.Errorf("%w: record %d: bad offset delta", ErrCorruptMessage, i)
		}
		if offDelta != int64(i) {
			return 0, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, offDelta)
		}
		ts := h.baseTimestamp + tsDelta
		if ts > maxTs {
			maxTs = ts
		}
		if checkTs {
			if err := checkTimestamp(ts, lim); err != nil {
				return 0, err
			}
		}
	}
	if len(p) != 0 {
		return 0, fmt.Errorf("%w: %d bytes after the last record", ErrCorruptMessage, len(p))
	}
	return maxTs, nil
}

// recordTimestamps calls fn with the offset delta and timestamp of each
// record of an uncompressed batch until fn returns false. The batch must
// already be validated.
func recordTimestamps(b []byte, h *batchHeader, fn func(delta int32, ts int64) bool) {
	p := b[batchHeaderSize:]
	for i := int32(0); i < h.recordCount && len(p) > 0; i++ {
		length, n := readVarint(p)
		if n <= 0 || length < 1 || length > int64(len(p)-n) {
			return
		}
		rec := p[n+1 : n+int(length)]
		p = p[n+int(length):]
		tsDelta, m := readVarint(rec)
		if m <= 0 {
			return
		}
		if !fn(i, h.baseTimestamp+tsDelta) {
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

// readVarint is binary.Varint with fast paths for the one- and two-byte
// encodings that record lengths, deltas and small fields almost always use.
func readVarint(b []byte) (int64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		u := uint64(b[0])
		return int64(u>>1) ^ -int64(u&1), 1
	}
	if len(b) > 1 && b[1] < 0x80 {
		u := uint64(b[0]&0x7f) | uint64(b[1])<<7
		return int64(u>>1) ^ -int64(u&1), 2
	}
	return binary.Varint(b)
}
