package log

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
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

	// minRecordSize is the smallest v2 record body: attributes, timestamp
	// delta, offset delta, null key, null value, zero headers (a byte each).
	minRecordSize = 6
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
		lo, hi, err = scanRecords(b[batchHeaderSize:], h.RecordCount, h.BaseTimestamp)
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

// scanRecords walks count v2 records in p. It decodes only the leading
// varints of each record (length, timestamp delta, offset delta) and jumps
// over the rest by its length, so it costs a few nanoseconds per record;
// keys, values and headers are left to the consumer, as they are for
// compressed batches. It returns the smallest non-negative record
// timestamp (math.MaxInt64 if there is none; negative ones, such as -1 for
// NO_TIMESTAMP, are exempt from the bounds) and the largest record
// timestamp.
func scanRecords(p []byte, count int32, baseTs int64) (lo, hi int64, err error) {
	lo, hi = math.MaxInt64, math.MinInt64
	var i int32
	pos := 0
	for {
		// Most records take the fast path; a record it does not accept is
		// walked byte-wise here, which also words the errors, and the fast
		// path resumes after it.
		i, pos, lo, hi = scanRecordsFast(p, i, pos, count, baseTs, lo, hi)
		if i >= count {
			break
		}
		length, body := varintAt(p, pos)
		if body < 0 || length < minRecordSize || length > int64(len(p)-body) {
			return 0, 0, fmt.Errorf("%w: record %d: bad length", ErrInvalidRecord, i)
		}
		end := body + int(length)
		tsDelta, err := checkRecordBody(p[body:end], i)
		if err != nil {
			return 0, 0, err
		}
		ts := baseTs + tsDelta
		hi = max(hi, ts)
		if ts >= 0 && ts < lo {
			lo = ts
		}
		pos = end
		i++
	}
	if pos != len(p) {
		return 0, 0, fmt.Errorf("%w: %d bytes after the last record", ErrInvalidRecord, len(p)-pos)
	}
	return lo, hi, nil
}

// checkRecordBody checks the leading fields of record i's body (after its
// length): attributes, then timestamp and offset deltas that end inside
// it, the offset delta being i. It returns the timestamp delta. Kafka
// answers a record it cannot parse with INVALID_RECORD.
func checkRecordBody(rec []byte, i int32) (int64, error) {
	tsDelta, next := varintAt(rec, 1) // 1 skips the attributes byte
	if next < 0 {
		return 0, fmt.Errorf("%w: record %d: bad timestamp delta", ErrInvalidRecord, i)
	}
	offDelta, next := varintAt(rec, next)
	if next < 0 {
		return 0, fmt.Errorf("%w: record %d: bad offset delta", ErrInvalidRecord, i)
	}
	if offDelta != int64(i) {
		return 0, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, offDelta)
	}
	// Key, value and headers, as Kafka's DefaultRecord.readFrom reads
	// them: a negative key or value length is null; a header key may not
	// be; everything must end exactly at the record's end.
	for _, field := range [2]string{"key", "value"} {
		l, n := varintAt(rec, next)
		if n < 0 || l > int64(len(rec)-n) {
			return 0, fmt.Errorf("%w: record %d: bad %s length", ErrInvalidRecord, i, field)
		}
		next = n + int(max(l, 0))
	}
	headers, n := varintAt(rec, next)
	if n < 0 || headers < 0 || headers > int64(len(rec)-n)/2 {
		return 0, fmt.Errorf("%w: record %d: bad header count", ErrInvalidRecord, i)
	}
	next = n
	for h := int64(0); h < headers; h++ {
		l, n := varintAt(rec, next)
		if n < 0 || l < 0 || l > int64(len(rec)-n) {
			return 0, fmt.Errorf("%w: record %d: header %d: bad key length", ErrInvalidRecord, i, h)
		}
		l2, n2 := varintAt(rec, n+int(l))
		if n2 < 0 || l2 > int64(len(rec)-n2) {
			return 0, fmt.Errorf("%w: record %d: header %d: bad value length", ErrInvalidRecord, i, h)
		}
		next = n2 + int(max(l2, 0))
	}
	if next != len(rec) {
		return 0, fmt.Errorf("%w: record %d: its fields take %d bytes of its %d", ErrInvalidRecord, i, next, len(rec))
	}
	return tsDelta, nil
}

// scanRecordsFast is scanRecords' fast path: a leaf function, so that
// its loop keeps everything in registers, for records whose length,
// timestamp delta, offset delta, key, value and header lengths are one-
// or two-byte varints (records under 8 KB, deltas within -8192..8191). Starting with record i at
// p[pos:], it only accepts: it stops at the first record it cannot
// accept, valid or not, and returns that record's index and position,
// with lo and hi updated for the records before it.
func scanRecordsFast(p []byte, i int32, pos int, count int32, baseTs, lo, hi int64) (int32, int, int64, int64) {
records:
	for ; i < count; i++ {
		length, body := varint2(p, pos)
		if body < 0 || length < minRecordSize || length > int64(len(p)-body) {
			break
		}
		end := body + int(length)
		// body+1 skips the attributes byte. The fields are decoded from p
		// and then must end inside the record: a field that does decodes
		// the same as when bounded by the record end.
		tsDelta, next := varint2(p, body+1)
		offDelta, next := varint2(p, next) // next -1 fails here too
		if next < 0 || next > end || offDelta != int64(i) {
			break
		}
		// Key and value: lengths -1 (null) up to what the record holds;
		// other negative lengths and any header go the slow way.
		kl, next := varint2(p, next)
		if next < 0 || kl < -1 || kl > int64(end-next) {
			break
		}
		next += int(kl + kl>>63&1) // kl, or 0 for -1
		vl, next := varint2(p, next)
		if next < 0 || vl < -1 || vl > int64(end-next) {
			break
		}
		next += int(vl + vl>>63&1)
		// The header count is often a record's, and so the batch's, last
		// byte, which varint2 leaves alone: decode a one-byte count here.
		var hc int64
		if next >= 0 && next < end && p[next] < 0x80 {
			hc = int64(p[next]>>1) ^ -int64(p[next]&1)
			next++
		} else if hc, next = varint2(p, next); next < 0 {
			break
		}
		if hc < 0 || hc > int64(end-next) {
			break
		}
		for ; hc > 0; hc-- {
			hk, n := varint2(p, next)
			if n < 0 || hk < 0 || hk > int64(end-n) {
				break records
			}
			hv, n := varint2(p, n+int(hk))
			if n < 0 || hv < -1 || hv > int64(end-n) {
				break records
			}
			next = n + int(hv+hv>>63&1)
		}
		if next != end {
			break
		}
		ts := baseTs + tsDelta
		hi = max(hi, ts)
		if ts >= 0 && ts < lo {
			lo = ts
		}
		pos = end
	}
	return i, pos, lo, hi
}

// recordTimestamps calls fn with the offset delta and timestamp of each
// record of an uncompressed batch until fn returns false. The batch must
// already be validated.
func recordTimestamps(b []byte, h *batchHeader, fn func(delta int32, ts int64) bool) {
	p := b[batchHeaderSize:]
	pos := 0
	for i := int32(0); i < h.RecordCount && pos < len(p); i++ {
		length, body := varintAt(p, pos)
		if body < 0 || length < 1 || length > int64(len(p)-body) {
			return
		}
		end := body + int(length)
		tsDelta, next := varintAt(p[:end], body+1)
		if next < 0 {
			return
		}
		if !fn(i, h.BaseTimestamp+tsDelta) {
			return
		}
		pos = end
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

// varintAt decodes the zigzag varint at p[i:] (0 <= i <= len(p)) and
// returns its value and the index just past it, or next -1 if p[i:] does
// not start with a complete varint of at most 10 bytes (binary.Varint's
// rules).
func varintAt(p []byte, i int) (v int64, next int) {
	if v, next = varint2(p, i); next >= 0 {
		return v, next
	}
	if i < 0 || i > len(p) {
		return 0, -1
	}
	v, n := binary.Varint(p[i:])
	if n <= 0 {
		return 0, -1
	}
	return v, i + n
}

// varint2 is the inlinable fast path of varintAt: it decodes one- and
// two-byte varints (values -8192..8191: record lengths up to 8 KB, offset
// deltas, timestamp deltas of a few seconds) when a second byte is
// present, and returns next -1 for anything else (including i < 0, so a
// failed decode chains into the next), which varintAt and
// scanRecordsFast then handle the slow way. Keep it under the inlining
// budget: scanRecordsFast must stay free of calls.
func varint2(p []byte, i int) (v int64, next int) {
	if i >= 0 && i < len(p)-1 {
		c := p[i]
		if c < 0x80 {
			return int64(c>>1) ^ -int64(c&1), i + 1
		}
		if d := p[i+1]; d < 0x80 {
			u := int64(c&0x7f) | int64(d)<<7
			return u>>1 ^ -(u & 1), i + 2
		}
	}
	return 0, -1
}
