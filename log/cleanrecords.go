package log

// What the cleaner needs beyond sharq/log/recordbatch (which reads and
// writes the records): the keyless-record check of compacted topics and the
// compressors for writing a batch again with some of its records (Kafka's
// MemoryRecords.filterTo for magic v2: base offset, last offset delta,
// producer id, epoch, base sequence, partition leader epoch and the
// compression codec are kept; record count, max timestamp, length and CRC
// follow what is left).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"sharq/log/recordbatch"
)

// attrDeleteHorizon (bit 6) says baseTimestamp holds the delete horizon
// (KIP-534): the time after which the batch's tombstones and transaction
// markers may be removed. Record timestamps stay baseTimestamp + delta.
const attrDeleteHorizon = 0x40

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
	rd := recordbatch.NewReader(p, h.RecordCount)
	var r recordbatch.Record
	for rd.Next(&r) {
		missing = missing || r.Key == nil
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrCorruptMessage, err)
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
