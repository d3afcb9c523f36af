package log

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"sharq/log/recordbatch"
)

// Compressed batches are checked as Kafka's LogValidator checks them: the
// records section is decompressed and every record's framing walked (the
// same checks as recordbatch.ScanRecords makes on an uncompressed batch), so a batch no
// consumer could read is refused instead of stored. The walk streams: only
// a 64 KiB window and the largest record are ever held, whatever a batch
// decompresses to, so a small batch that inflates to gigabytes costs CPU but
// not memory. Decoders, windows and scratch buffers are pooled.

// Codec numbers of the attributes' low three bits.
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

const (
	streamWindow = 64 << 10
	// keepScratch bounds what a pooled decompressor keeps between batches.
	keepScratch = 1 << 20
	// snappyMaxRatio bounds a snappy block's decoded size from its encoded
	// size (a 3-byte copy tag yields at most 64 bytes), so a block claiming
	// more is corrupt and its claim is never allocated.
	snappyMaxRatio = 22
	// zstdMaxWindow is the largest window a zstd frame may ask for (level
	// 22's is 128 MiB; Kafka's compression.zstd.level defaults to 3, 8 MiB).
	zstdMaxWindow = 128 << 20
)

// xerialMagic starts snappy-java's framing, which Kafka's producers write.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

type decompressor struct {
	src     bytes.Reader
	win     *bufio.Reader
	gz      *gzip.Reader
	lz      *lz4.Reader
	zs      *zstd.Decoder
	xerial  xerialReader
	snappy  []byte // a raw snappy block, decoded whole
	scratch []byte // a record longer than the window
}

var decompressors = sync.Pool{New: func() any {
	return &decompressor{win: bufio.NewReaderSize(nil, streamWindow)}
}}

// errCodec marks a records section that does not decode with its codec.
var errCodec = errors.New("does not decode")

// scanCompressed is recordbatch.ScanRecords for a compressed records section p: it
// returns the smallest non-negative and the largest record timestamp.
func scanCompressed(codec int, p []byte, count int32, baseTs int64) (lo, hi int64, err error) {
	d := decompressors.Get().(*decompressor)
	defer d.put()
	r, err := d.open(codec, p)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %s records %w: %v", ErrInvalidRecord, codecNames[codec], errCodec, err)
	}
	d.win.Reset(r)
	lo, hi, err = d.walk(count, baseTs)
	if err != nil && !errors.Is(err, ErrInvalidRecord) && !errors.Is(err, ErrCorruptMessage) {
		err = fmt.Errorf("%w: %s records %w: %v", ErrInvalidRecord, codecNames[codec], errCodec, err)
	}
	return lo, hi, err
}

func (d *decompressor) put() {
	d.win.Reset(nil)
	d.src.Reset(nil)
	d.xerial.src = nil
	if cap(d.snappy) > keepScratch {
		d.snappy = nil
	}
	if cap(d.scratch) > keepScratch {
		d.scratch = nil
	}
	if cap(d.xerial.buf) > keepScratch {
		d.xerial.buf = nil
	}
	decompressors.Put(d)
}

// open returns a reader of p's decompressed bytes.
func (d *decompressor) open(codec int, p []byte) (io.Reader, error) {
	d.src.Reset(p)
	switch codec {
	case codecGzip:
		if d.gz == nil {
			gz, err := gzip.NewReader(&d.src)
			if err != nil {
				return nil, err
			}
			d.gz = gz
		} else if err := d.gz.Reset(&d.src); err != nil {
			return nil, err
		}
		return d.gz, nil
	case codecLZ4:
		if d.lz == nil {
			d.lz = lz4.NewReader(&d.src)
		} else {
			d.lz.Reset(&d.src)
		}
		return d.lz, nil
	case codecZstd:
		if d.zs == nil {
			// Concurrency 1 decodes in the caller's goroutine, so a pooled
			// decoder owns no goroutine.
			zs, err := zstd.NewReader(&d.src, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
			if err != nil {
				return nil, err
			}
			d.zs = zs
		} else if err := d.zs.Reset(&d.src); err != nil {
			return nil, err
		}
		return d.zs, nil
	case codecSnappy:
		if bytes.HasPrefix(p, xerialMagic) {
			// magic, version and compatible version, then chunks of a
			// 4-byte length and a raw snappy block.
			if len(p) < 16 {
				return nil, errors.New("truncated snappy-java header")
			}
			d.xerial.src = p[16:]
			return &d.xerial, nil
		}
		// snappy-java reads anything without its magic as one raw block.
		out, err := decodeSnappy(d.snappy[:0], p)
		if err != nil {
			return nil, err
		}
		d.snappy = out
		d.src.Reset(out)
		return &d.src, nil
	}
	return nil, fmt.Errorf("unknown codec %d", codec)
}

func decodeSnappy(dst, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if n > snappyMaxRatio*len(block)+32 {
		return nil, fmt.Errorf("snappy block of %d bytes claims %d decoded", len(block), n)
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.Decode(dst[:n], block)
}

// xerialReader reads snappy-java's chunked framing.
type xerialReader struct {
	src []byte // chunks not yet decoded
	buf []byte // the current chunk, decoded
	pos int
}

func (x *xerialReader) Read(p []byte) (int, error) {
	for x.pos == len(x.buf) {
		if len(x.src) == 0 {
			return 0, io.EOF
		}
		if len(x.src) < 4 {
			return 0, errors.New("truncated snappy-java chunk length")
		}
		n := binary.BigEndian.Uint32(x.src)
		if uint64(n) > uint64(len(x.src)-4) {
			return 0, fmt.Errorf("snappy-java chunk of %d bytes with %d left", n, len(x.src)-4)
		}
		out, err := decodeSnappy(x.buf[:0], x.src[4:4+n])
		if err != nil {
			return 0, err
		}
		x.src = x.src[4+n:]
		x.buf, x.pos = out, 0
	}
	n := copy(p, x.buf[x.pos:])
	x.pos += n
	return n, nil
}

// errRecordLength: the stream ends inside a record's length or body, or
// the length is below a record's or past int32.
var errRecordLength = errors.New("bad length")

// record reads the next record from the window and returns its body (after
// its length), valid until the next call: errRecordLength for a length the
// stream does not back, or the decoder's error.
func (d *decompressor) record() ([]byte, error) {
	length, err := binary.ReadVarint(d.win)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF || isOverflow(err) {
			return nil, errRecordLength
		}
		return nil, err
	}
	if length < minRecordSize || length > math.MaxInt32 {
		return nil, errRecordLength
	}
	var rec []byte
	if length <= streamWindow {
		// Peeked bytes stay put until the window's next read, so they can
		// be discarded at once.
		if rec, err = d.win.Peek(int(length)); err == nil {
			d.win.Discard(int(length))
		}
	} else {
		d.scratch, err = readGrowing(d.win, d.scratch[:0], int(length))
		rec = d.scratch
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, errRecordLength
	}
	return rec, err
}

// walk checks count records from the window; see recordbatch.ScanRecords
// for the checks and the results.
func (d *decompressor) walk(count int32, baseTs int64) (lo, hi int64, err error) {
	lo, hi = math.MaxInt64, math.MinInt64
	for i := int32(0); i < count; i++ {
		rec, err := d.record()
		if err == errRecordLength {
			return 0, 0, fmt.Errorf("%w: record %d: bad length", ErrInvalidRecord, i)
		}
		if err != nil {
			return 0, 0, err
		}
		tsDelta, err := recordbatch.CheckRecord(rec, i)
		if err != nil {
			return 0, 0, err
		}
		ts := baseTs + tsDelta
		hi = max(hi, ts)
		if ts >= 0 && ts < lo {
			lo = ts
		}
	}
	if _, err := d.win.ReadByte(); err != io.EOF {
		if err != nil {
			return 0, 0, err
		}
		return 0, 0, fmt.Errorf("%w: bytes after the last record", ErrInvalidRecord)
	}
	return lo, hi, nil
}

func isOverflow(err error) bool {
	return err != nil && err.Error() == "binary: varint overflows a 64-bit integer"
}

// readGrowing reads n bytes, growing buf as they arrive, so a length that
// the stream does not back costs only what the stream holds.
func readGrowing(r io.Reader, buf []byte, n int) ([]byte, error) {
	for len(buf) < n {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(max(2*cap(buf), streamWindow), n))
			copy(nb, buf)
			buf = nb
		}
		k, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err != nil && len(buf) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

// ErrDecompressLimit: Decompress's input inflates past its limit.
var ErrDecompressLimit = errors.New("decompressed size over the limit")

// Decompress appends the decompressed bytes of a compressed records section
// (codec is the batch attributes' compression bits) to dst, at most limit
// bytes of them: a section that inflates past limit is refused rather than
// held. It is for readers that need the records themselves (the share
// dead-letter copy), off the produce path.
func Decompress(dst []byte, codec int, p []byte, limit int) ([]byte, error) {
	d := decompressors.Get().(*decompressor)
	defer d.put()
	r, err := d.open(codec, p)
	if err != nil {
		return dst, fmt.Errorf("%s records %w: %v", codecName(codec), errCodec, err)
	}
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst[:start], fmt.Errorf("%s records inflate past %d bytes: %w", codecName(codec), limit, ErrDecompressLimit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], fmt.Errorf("%s records %w: %v", codecName(codec), errCodec, err)
		}
	}
}

func codecName(codec int) string {
	if codec >= 0 && codec < len(codecNames) {
		return codecNames[codec]
	}
	return fmt.Sprintf("codec %d", codec)
}
