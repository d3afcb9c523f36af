package log

// Record-level work for the cleaner: walking the records of a stored
// batch, and writing a batch again with some of its records (Kafka's
// MemoryRecords.filterTo for magic v2: base offset, last offset delta,
// producer id, epoch, base sequence, partition leader epoch and the
// compression codec are kept; record count, max timestamp, length and CRC
// follow what is left).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// attrDeleteHorizon (bit 6) says baseTimestamp holds the delete horizon
// (KIP-534): the time after which the batch's tombstones and transaction
// markers may be removed. Record timestamps stay baseTimestamp + delta.
const attrDeleteHorizon = 0x40

// cleanRecord is one record of a batch being cleaned.
type cleanRecord struct {
	raw       []byte // the whole record, length varint included
	attrs     byte
	tsDelta   int64
	offDelta  int32
	key       []byte // nil for a null key
	valueNull bool
	rest      []byte // key length onwards (key, value, headers) as stored
}

// walkCleanRecords calls fn for each of count records in p (an
// uncompressed records section).
func walkCleanRecords(p []byte, count int32, fn func(r *cleanRecord)) error {
	var r cleanRecord
	pos := 0
	for i := int32(0); i < count; i++ {
		length, body := varintAt(p, pos)
		if body < 0 || length < minRecordSize || length > int64(len(p)-body) {
			return fmt.Errorf("%w: record %d: bad length", ErrCorruptMessage, i)
		}
		end := body + int(length)
		rec := p[body:end]
		tsDelta, next := varintAt(rec, 1)
		if next < 0 {
			return fmt.Errorf("%w: record %d: bad timestamp delta", ErrCorruptMessage, i)
		}
		offDelta, next2 := varintAt(rec, next)
		if next2 < 0 {
			return fmt.Errorf("%w: record %d: bad offset delta", ErrCorruptMessage, i)
		}
		restStart := next2
		kl, n := varintAt(rec, next2)
		if n < 0 || kl < -1 || kl > int64(len(rec)-n) {
			return fmt.Errorf("%w: record %d: bad key length", ErrCorruptMessage, i)
		}
		r.key = nil
		if kl >= 0 {
			r.key = rec[n : n+int(kl)]
			n += int(kl)
		}
		vl, n2 := varintAt(rec, n)
		if n2 < 0 || vl < -1 || vl > int64(len(rec)-n2) {
			return fmt.Errorf("%w: record %d: bad value length", ErrCorruptMessage, i)
		}
		// The header count must be there too: a record padded out by an
		// over-long varint but missing it would be written back shorter
		// than any record can be.
		if hc, n3 := varintAt(rec, n2+int(max(vl, 0))); n3 < 0 || hc < 0 {
			return fmt.Errorf("%w: record %d: bad header count", ErrCorruptMessage, i)
		}
		r.raw = p[pos:end]
		r.attrs = rec[0]
		r.tsDelta = tsDelta
		r.offDelta = int32(offDelta)
		r.valueNull = vl < 0
		r.rest = rec[restStart:]
		fn(&r)
		pos = end
	}
	return nil
}

// appendCleanRecord writes r again with its timestamp delta relative to a
// new base timestamp (unchanged offset delta, key, value, headers).
func appendCleanRecord(dst []byte, r *cleanRecord, tsDelta int64) []byte {
	var tmp [2 * binary.MaxVarintLen64]byte
	n := binary.PutVarint(tmp[:], tsDelta)
	n += binary.PutVarint(tmp[n:], int64(r.offDelta))
	bodyLen := 1 + n + len(r.rest)
	dst = binary.AppendVarint(dst, int64(bodyLen))
	dst = append(dst, r.attrs)
	dst = append(dst, tmp[:n]...)
	return append(dst, r.rest...)
}

// finishBatch fills in length, record count, timestamps and CRC of a batch
// whose header (copied from the original) and records are in b.
func finishBatch(b []byte, count int32, attrs int16, baseTs, maxTs int64) {
	binary.BigEndian.PutUint32(b[offBatchLength:], uint32(len(b)-batchLengthOverhead))
	binary.BigEndian.PutUint16(b[offAttributes:], uint16(attrs))
	binary.BigEndian.PutUint64(b[offBaseTimestamp:], uint64(baseTs))
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(maxTs))
	binary.BigEndian.PutUint32(b[offRecordCount:], uint32(count))
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
}

// errMissingKey is a record without a key in a compacted topic; Append
// turns it into Kafka's INVALID_RECORD text (keyError).
var errMissingKey = errors.New("record without a key")

// keyError is Kafka's LogValidator error for a keyless record in a
// compacted topic: INVALID_RECORD with exactly Kafka's message.
type keyError struct{ msg string }

func (e *keyError) Error() string { return e.msg }
func (e *keyError) Unwrap() error { return ErrInvalidRecord }

func missingKeyError(topic string, partition int32) error {
	return &keyError{msg: "Compacted topic cannot accept message without key in topic partition " + topic + "-" + strconv.Itoa(int(partition))}
}

// keyScratch pools the buffers compressed batches are checked in.
var keyScratch = sync.Pool{New: func() any { return new([]byte) }}

// checkKeys returns errMissingKey if a record of the (already validated)
// batch has a null key.
func checkKeys(b []byte, h *batchHeader) error {
	p := b[batchHeaderSize:]
	if c := h.Compression(); c != codecNone {
		buf := keyScratch.Get().(*[]byte)
		defer func() {
			if cap(*buf) <= keepScratch {
				keyScratch.Put(buf)
			}
		}()
		var err error
		if *buf, err = Decompress((*buf)[:0], c, p, math.MaxInt32); err != nil {
			return fmt.Errorf("%w: %v", ErrCorruptMessage, err)
		}
		p = *buf
	}
	missing := false
	err := walkCleanRecords(p, h.RecordCount, func(r *cleanRecord) {
		if r.key == nil {
			missing = true
		}
	})
	if err != nil {
		return err
	}
	if missing {
		return errMissingKey
	}
	return nil
}

// compressors are pooled per codec: building a zstd or gzip writer costs
// far more than a small batch.
var (
	gzipWriters = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return w }}
	lz4Writers  = sync.Pool{New: func() any { return lz4.NewWriter(nil) }}
	zstdEnc     = sync.OnceValue(func() *zstd.Encoder {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		return e
	})
)

// xerialBlock is snappy-java's default block size.
const xerialBlock = 32 << 10

// compressRecords appends p compressed with codec to dst, in the framing
// Kafka's own producers write (gzip stream, LZ4 frame, xerial-framed
// snappy, zstd frame), so any Kafka consumer and kafka-dump-log read it.
func compressRecords(dst []byte, codec int, p []byte) ([]byte, error) {
	switch codec {
	case codecNone:
		return append(dst, p...), nil
	case codecGzip:
		var buf bytes.Buffer
		buf.Write(dst)
		w := gzipWriters.Get().(*gzip.Writer)
		w.Reset(&buf)
		_, err := w.Write(p)
		if err == nil {
			err = w.Close()
		}
		gzipWriters.Put(w)
		return buf.Bytes(), err
	case codecLZ4:
		var buf bytes.Buffer
		buf.Write(dst)
		w := lz4Writers.Get().(*lz4.Writer)
		w.Reset(&buf)
		_, err := w.Write(p)
		if err == nil {
			err = w.Close()
		}
		lz4Writers.Put(w)
		return buf.Bytes(), err
	case codecZstd:
		return zstdEnc().EncodeAll(p, dst), nil
	case codecSnappy:
		dst = append(dst, xerialMagic...)
		dst = binary.BigEndian.AppendUint32(dst, 1) // version
		dst = binary.BigEndian.AppendUint32(dst, 1) // compatible version
		for len(p) > 0 {
			n := min(len(p), xerialBlock)
			enc := s2.EncodeSnappy(nil, p[:n])
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(enc)))
			dst = append(dst, enc...)
			p = p[n:]
		}
		return dst, nil
	}
	return dst, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptMessage, codec)
}
