package recordbatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The records of a v2 batch: after the header, RecordCount records (the
// records section, compressed as a whole when the attributes say so), each
//
//	length        varint: the bytes after it
//	attributes    int8 (unused, 0)
//	timestampDelta varlong, from the batch's base timestamp
//	offsetDelta   varint, from the batch's base offset
//	key           varint length (negative: null) + bytes
//	value         varint length (negative: null) + bytes
//	headers       varint count, then per header: varint key length (not
//	              null) + key, varint value length (negative: null) + value
//
// All varints are zigzag (binary.Varint). This file reads them (Reader,
// ParseRecord, and ScanRecords, the produce path's validation walk) and
// writes them (AppendRecord); the batch around them is Header's.

// MinRecordSize is the smallest record body: attributes, timestamp delta,
// offset delta, null key, null value, zero headers (a byte each).
const MinRecordSize = 6

// ErrInvalidRecord marks a record that does not parse, Kafka's
// INVALID_RECORD (87) (sharq/log's ErrInvalidRecord is this value).
var ErrInvalidRecord = errors.New("invalid record")

// Record is one record of a records section. Its byte fields alias the
// section it was read from.
type Record struct {
	Raw            []byte // the whole record, its length varint included
	Attributes     byte
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte // nil: a null key
	Value          []byte // nil: a null value
	HeaderCount    int32
	Headers        []byte // the headers after their count, as stored
	fields         int    // where the key length starts in Raw
}

// Fields is the record from its key length on (key, value, headers), as
// stored.
func (r *Record) Fields() []byte { return r.Raw[r.fields:] }

// Reader iterates the records of an uncompressed (or decompressed) records
// section, checking each as Kafka's DefaultRecord.readFrom does and that
// the records tile the section exactly. Use it as
//
//	rd := recordbatch.NewReader(p, h.RecordCount)
//	for rd.Next(&rec) { ... }
//	if err := rd.Err(); err != nil { ... }
//
// It does not allocate; Record's slices alias p.
type Reader struct {
	p     []byte
	pos   int
	i, n  int32
	err   error
	ended bool
}

// NewReader reads count records from p.
func NewReader(p []byte, count int32) Reader { return Reader{p: p, n: count} }

// Next decodes the next record into r; false at the end or on an error
// (Err tells which).
func (rd *Reader) Next(r *Record) bool {
	if rd.err != nil || rd.ended {
		return false
	}
	if rd.i >= rd.n {
		rd.ended = true
		if rd.pos != len(rd.p) {
			rd.err = fmt.Errorf("%w: %d bytes after the last record", ErrInvalidRecord, len(rd.p)-rd.pos)
		}
		return false
	}
	length, body := VarintAt(rd.p, rd.pos)
	if body < 0 || length < MinRecordSize || length > int64(len(rd.p)-body) {
		rd.err = fmt.Errorf("%w: record %d: bad length", ErrInvalidRecord, rd.i)
		return false
	}
	end := body + int(length)
	if err := ParseRecord(rd.p[body:end], rd.i, r); err != nil {
		rd.err = err
		return false
	}
	r.Raw = rd.p[rd.pos:end]
	r.fields += body - rd.pos
	rd.pos = end
	rd.i++
	return true
}

// Err is the error that ended the iteration, nil at a clean end.
func (rd *Reader) Err() error { return rd.err }

// ParseRecord decodes the body of record i (the bytes after its length)
// into r; r.Raw is rec, without the length (Reader's Raw has it).
// Everything must end exactly at the record's end; a negative key or value
// length is null; a header key may not be. Errors wrap ErrInvalidRecord
// and name the record and the field.
func ParseRecord(rec []byte, i int32, r *Record) error {
	_, err := parseRecord(rec, i, r, false)
	return err
}

// parseRecord is ParseRecord, and CheckRecord with r nil: produced asks
// offset deltas to run 0..n-1, checked before the fields after it as
// Kafka's LogValidator does. It returns the timestamp delta.
func parseRecord(rec []byte, i int32, r *Record, produced bool) (int64, error) {
	if len(rec) < 1 {
		return 0, fmt.Errorf("%w: record %d: bad length", ErrInvalidRecord, i)
	}
	tsDelta, next := VarintAt(rec, 1) // 1 skips the attributes byte
	if next < 0 {
		return 0, fmt.Errorf("%w: record %d: bad timestamp delta", ErrInvalidRecord, i)
	}
	offDelta, next := VarintAt(rec, next)
	if next < 0 {
		return 0, fmt.Errorf("%w: record %d: bad offset delta", ErrInvalidRecord, i)
	}
	if offDelta < math.MinInt32 || offDelta > math.MaxInt32 || produced && offDelta != int64(i) {
		return 0, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, offDelta)
	}
	fields := next
	kl, kn := VarintAt(rec, next)
	if kn < 0 || kl > int64(len(rec)-kn) {
		return 0, fmt.Errorf("%w: record %d: bad key length", ErrInvalidRecord, i)
	}
	next = kn + int(max(kl, 0))
	vl, vn := VarintAt(rec, next)
	if vn < 0 || vl > int64(len(rec)-vn) {
		return 0, fmt.Errorf("%w: record %d: bad value length", ErrInvalidRecord, i)
	}
	next = vn + int(max(vl, 0))
	headers, n := VarintAt(rec, next)
	// Each header takes at least two bytes: a count above half of what is
	// left (which also bounds it to int32) cannot be.
	if n < 0 || headers < 0 || headers > int64(len(rec)-n)/2 {
		return 0, fmt.Errorf("%w: record %d: bad header count", ErrInvalidRecord, i)
	}
	hstart := n
	next = n
	for h := int64(0); h < headers; h++ {
		l, n := VarintAt(rec, next)
		if n < 0 || l < 0 || l > int64(len(rec)-n) {
			return 0, fmt.Errorf("%w: record %d: header %d: bad key length", ErrInvalidRecord, i, h)
		}
		l2, n2 := VarintAt(rec, n+int(l))
		if n2 < 0 || l2 > int64(len(rec)-n2) {
			return 0, fmt.Errorf("%w: record %d: header %d: bad value length", ErrInvalidRecord, i, h)
		}
		next = n2 + int(max(l2, 0))
	}
	if next != len(rec) {
		return 0, fmt.Errorf("%w: record %d: its fields take %d bytes of its %d", ErrInvalidRecord, i, next, len(rec))
	}
	if r != nil {
		*r = Record{
			Raw: rec, Attributes: rec[0], TimestampDelta: tsDelta, OffsetDelta: int32(offDelta),
			HeaderCount: int32(headers), Headers: rec[hstart:], fields: fields,
		}
		if kl >= 0 {
			r.Key = rec[kn : kn+int(kl) : kn+int(kl)]
		}
		if vl >= 0 {
			r.Value = rec[vn : vn+int(vl) : vn+int(vl)]
		}
	}
	return tsDelta, nil
}

// CheckRecord checks the body of record i of a batch as it is produced
// (offset deltas run 0..n-1) without decoding it into a Record, and
// returns its timestamp delta.
func CheckRecord(rec []byte, i int32) (int64, error) { return parseRecord(rec, i, nil, true) }

// NextHeader splits the first header off hs (a Record's Headers, which
// ParseRecord checked): its key, its value (nil: null) and the rest.
func NextHeader(hs []byte) (key, value, rest []byte, ok bool) {
	l, n := VarintAt(hs, 0)
	if n < 0 || l < 0 || l > int64(len(hs)-n) {
		return nil, nil, hs, false
	}
	key, n = hs[n:n+int(l)], n+int(l)
	l, n2 := VarintAt(hs, n)
	if n2 < 0 || l > int64(len(hs)-n2) {
		return nil, nil, hs, false
	}
	if l < 0 {
		return key, nil, hs[n2:], true
	}
	return key, hs[n2 : n2+int(l)], hs[n2+int(l):], true
}

// AppendHeader appends one header (a nil value is null) to a headers
// section being built for AppendRecord.
func AppendHeader(dst, key, value []byte) []byte {
	dst = binary.AppendVarint(dst, int64(len(key)))
	dst = append(dst, key...)
	return appendBytes(dst, value)
}

// AppendRecord appends r encoded as a v2 record (length first) from its
// Attributes, TimestampDelta, OffsetDelta, Key, Value, HeaderCount and
// Headers (Raw is not read).
func AppendRecord(dst []byte, r *Record) []byte {
	body := 1 + varintLen(r.TimestampDelta) + varintLen(int64(r.OffsetDelta)) +
		bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(r.HeaderCount)) + len(r.Headers)
	dst = binary.AppendVarint(dst, int64(body))
	dst = append(dst, r.Attributes)
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(r.HeaderCount))
	return append(dst, r.Headers...)
}

// AppendRetimed appends r (a record read from a section) again with
// another timestamp delta, everything from its key length on as stored.
func AppendRetimed(dst []byte, r *Record, tsDelta int64) []byte {
	rest := r.Fields()
	body := 1 + varintLen(tsDelta) + varintLen(int64(r.OffsetDelta)) + len(rest)
	dst = binary.AppendVarint(dst, int64(body))
	dst = append(dst, r.Attributes)
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	return append(dst, rest...)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// ScanRecords is the produce path's walk over count records of an
// uncompressed records section p: the checks of Reader and offset deltas
// running 0..count-1. It decodes the fields without building Records, on
// a fast path for one- and two-byte varints, so it costs a few nanoseconds
// per record. It returns the smallest non-negative record timestamp
// (math.MaxInt64 if there is none; negative ones, such as -1 for
// NO_TIMESTAMP, are exempt from the bounds) and the largest record
// timestamp.
func ScanRecords(p []byte, count int32, baseTs int64) (lo, hi int64, err error) {
	lo, hi = math.MaxInt64, math.MinInt64
	var i int32
	pos := 0
	for {
		// Most records take the fast path; a record it does not accept is
		// parsed here, which also words the errors, and the fast path
		// resumes after it.
		i, pos, lo, hi = scanRecordsFast(p, i, pos, count, baseTs, lo, hi)
		if i >= count {
			break
		}
		length, body := VarintAt(p, pos)
		if body < 0 || length < MinRecordSize || length > int64(len(p)-body) {
			return 0, 0, fmt.Errorf("%w: record %d: bad length", ErrInvalidRecord, i)
		}
		end := body + int(length)
		tsDelta, err := CheckRecord(p[body:end], i)
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

// scanRecordsFast is ScanRecords' fast path: a leaf function, so that
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
		if body < 0 || length < MinRecordSize || length > int64(len(p)-body) {
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

// VarintAt decodes the zigzag varint at p[i:] (0 <= i <= len(p)) and
// returns its value and the index just past it, or next -1 if p[i:] does
// not start with a complete varint of at most 10 bytes (binary.Varint's
// rules).
func VarintAt(p []byte, i int) (v int64, next int) {
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

// varint2 is the inlinable fast path of VarintAt: it decodes one- and
// two-byte varints (values -8192..8191: record lengths up to 8 KB, offset
// deltas, timestamp deltas of a few seconds) when a second byte is
// present, and returns next -1 for anything else (including i < 0, so a
// failed decode chains into the next), which VarintAt and
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
