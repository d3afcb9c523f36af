package raftmeta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"sharq/log/crc32c"
)

// raft's LogStore and StableStore live in one append-only file,
// <Dir>/log/raft.wal, replayed into memory on open (DESIGN.md, "Log store").
//
//	file   = magic "SQRWAL" 0x00 | version(1)=1 | record*
//	record = length uint32 | crc uint32 | type(1) | payload      (big endian)
//	         length counts type+payload; crc is CRC32C of type+payload
//	type 1 = batch: op+, applied all or nothing
//	  op 1 entries: first index uvarint | count uvarint | count x (len uvarint | encodeLog value)
//	  op 2 delete:  min uvarint | max uvarint (inclusive; always a head or a tail of the log)
//	  op 3 set:     len uvarint | key | len uvarint | value
//
// A record is one write(2), synced before the call returns, so a crash can
// tear only the last record; Open cuts such a tail. Stable keys set lazily
// ride in the next synced record instead of a record of their own, which
// keeps "only the last record can be torn" true (see fileStore.Set).
const (
	walFileName = "raft.wal"
	walTempName = "raft.wal.tmp"
	walLockName = "raft.lock"
	walMagic    = "SQRWAL\x00\x01"

	recHeaderLen      = 9 // length(4) | crc(4) | type(1)
	recBatch     byte = 1

	opEntries byte = 1
	opDelete  byte = 2
	opSet     byte = 3

	// maxRecordLen bounds one record (type+payload); length is a uint32.
	maxRecordLen = math.MaxUint32

	// A rewrite splits the live state into records of about this size, so
	// no single record (and CRC) spans the whole file.
	rewriteChunk = 1 << 20
)

// ErrCorrupt reports undecodable bytes in the raft log, a snapshot or a command.
var ErrCorrupt = errors.New("raftmeta: corrupt data")

// logFormatV1 is the version byte of a stored raft.Log (encodeLog).
const logFormatV1 byte = 1

func appendEntriesOp(b []byte, first uint64, n int) []byte {
	b = append(b, opEntries)
	b = binary.AppendUvarint(b, first)
	return binary.AppendUvarint(b, uint64(n))
}

func appendDeleteOp(b []byte, lo, hi uint64) []byte {
	b = append(b, opDelete)
	b = binary.AppendUvarint(b, lo)
	return binary.AppendUvarint(b, hi)
}

func appendSetOp(b []byte, key, val []byte) []byte {
	b = append(b, opSet)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(val)))
	return append(b, val...)
}

// beginRecord appends a record header whose length and crc finishRecord
// fills in; start is where the record begins in b.
func beginRecord(b []byte) (_ []byte, start int) {
	start = len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, recBatch)
	return b, start
}

func finishRecord(b []byte, start int) error {
	n := len(b) - start - 8
	if uint64(n) > maxRecordLen {
		return fmt.Errorf("raft log record of %d bytes is too large", n)
	}
	body := b[start+8:]
	binary.BigEndian.PutUint32(b[start:], uint32(n))
	binary.BigEndian.PutUint32(b[start+4:], crc32c.Checksum(body))
	return nil
}

// recordAt checks the record at b[0:]. ok is false if it is incomplete
// (shorter than its header or its length) or fails its checksum; n is its
// total size when ok.
func recordAt(b []byte) (typ byte, payload []byte, n int, ok bool) {
	if len(b) < recHeaderLen {
		return 0, nil, 0, false
	}
	l := binary.BigEndian.Uint32(b)
	if l == 0 || uint64(l) > uint64(len(b)-8) {
		return 0, nil, 0, false
	}
	body := b[8 : 8+int(l)]
	if crc32c.Checksum(body) != binary.BigEndian.Uint32(b[4:]) {
		return 0, nil, 0, false
	}
	return body[0], body[1:], 8 + int(l), true
}

// nextValidRecord returns the offset of the first position at or after from
// where a record with a good checksum starts, or -1. Only the corrupt-file
// path scans, so the cost (a CRC per candidate) does not matter.
func nextValidRecord(data []byte, from int) int {
	for p := from; p+recHeaderLen <= len(data); p++ {
		if data[p+8] != recBatch {
			continue
		}
		if _, _, _, ok := recordAt(data[p:]); ok {
			return p
		}
	}
	return -1
}

// replayWAL rebuilds the state from a whole raft.wal image. valid is the
// length of the good prefix; valid < len(data) means a torn tail to cut.
//
// A bad record is a torn tail only if no good record follows it: every
// record is synced before the next one is written, so only the last can be
// unfinished. A bad record with a good one after it was damaged after it
// was synced; that is an error, never a silent cut of acknowledged data.
// The entries of the returned state point into data.
func replayWAL(data []byte, path string) (st *walState, valid int, err error) {
	if len(data) < len(walMagic) || string(data[:len(walMagic)-1]) != walMagic[:len(walMagic)-1] {
		return nil, 0, fmt.Errorf("raft log %s: no %q header: %w", path, walMagic[:6], ErrCorrupt)
	}
	if v := data[len(walMagic)-1]; v != walMagic[len(walMagic)-1] {
		return nil, 0, fmt.Errorf("raft log %s: format version %d: %w", path, v, ErrCorrupt)
	}
	st = newWALState()
	off := len(walMagic)
	for off < len(data) {
		typ, payload, n, ok := recordAt(data[off:])
		if !ok {
			if next := nextValidRecord(data, off+1); next >= 0 {
				return nil, 0, fmt.Errorf("raft log %s: corrupt record at offset %d in the middle of the log, a good record follows at offset %d: damaged after it was written, not a torn write; refusing to cut what follows: %w",
					path, off, next, ErrCorrupt)
			}
			return st, off, nil
		}
		if typ != recBatch {
			return nil, 0, fmt.Errorf("raft log %s: record type %d at offset %d: %w", path, typ, off, ErrCorrupt)
		}
		if err := st.applyBatch(payload); err != nil {
			return nil, 0, fmt.Errorf("raft log %s: record at offset %d: %w", path, off, err)
		}
		off += n
	}
	return st, off, nil
}

// describeTail says what the bytes after the good prefix of a raft.wal are
// (replayWAL has ruled out a good record after them), and whether they
// can be what a crash leaves: a record's write interrupted before it was
// synced, so never acknowledged.
func describeTail(tail []byte) (what string, torn bool) {
	zero := true
	for _, c := range tail {
		if c != 0 {
			zero = false
			break
		}
	}
	switch {
	case zero:
		// Extended file size with no data: a crash between the size
		// and the data reaching the disk.
		return "zero-filled bytes after the last record (a write whose data never reached the disk)", true
	case len(tail) < recHeaderLen:
		return "an unfinished write: a partial record header", true
	}
	l := binary.BigEndian.Uint32(tail)
	switch {
	case l == 0 || uint64(l) > maxRecordLen:
		return fmt.Sprintf("a corrupt record: impossible length %d", l), false
	case uint64(l) > uint64(len(tail)-8):
		return fmt.Sprintf("an unfinished write: the file ends %d bytes into a %d-byte record", len(tail)-8, l), true
	case uint64(l) < uint64(len(tail)-8):
		return fmt.Sprintf("a corrupt record of %d bytes with %d unreadable bytes after it", l, len(tail)-8-int(l)), false
	}
	return "a corrupt final record: complete, but its checksum does not match (damaged after it was written)", false
}

// appendWALFile appends a whole file holding st: the header, then the
// stable keys (sorted, so equal states give equal files) and the entries in
// records of about rewriteChunk bytes.
func appendWALFile(b []byte, st *walState) ([]byte, error) {
	b = append(b, walMagic...)
	var start int
	open := false
	flushIfFull := func(force bool) error {
		if open && (force || len(b)-start >= rewriteChunk) {
			open = false
			return finishRecord(b, start)
		}
		return nil
	}
	keys := make([]string, 0, len(st.stable))
	for k := range st.stable {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !open {
			b, start = beginRecord(b)
			open = true
		}
		b = appendSetOp(b, []byte(k), st.stable[k])
		if err := flushIfFull(false); err != nil {
			return nil, err
		}
	}
	const perOp = 512
	for i := 0; i < len(st.entries); i += perOp {
		run := st.entries[i:min(i+perOp, len(st.entries))]
		if !open {
			b, start = beginRecord(b)
			open = true
		}
		b = appendEntriesOp(b, st.first+uint64(i), len(run))
		for _, e := range run {
			b = binary.AppendUvarint(b, uint64(len(e)))
			b = append(b, e...)
		}
		if err := flushIfFull(false); err != nil {
			return nil, err
		}
	}
	if err := flushIfFull(true); err != nil {
		return nil, err
	}
	return b, nil
}

// appendLogs appends the values of an entries op, each preceded by its
// length, and the bounds of each value in rec.
func appendLogs(rec []byte, logs []*raft.Log) (_ []byte, bounds []int) {
	bounds = make([]int, 0, 2*len(logs))
	for _, l := range logs {
		rec = binary.AppendUvarint(rec, uint64(encodedLogLen(l)))
		start := len(rec)
		rec = encodeLog(rec, l)
		bounds = append(bounds, start, len(rec))
	}
	return rec, bounds
}

// slicesOf cuts the stored values out of a committed record. The record is
// never written again, so the state may keep pointing into it.
func slicesOf(rec []byte, bounds []int) [][]byte {
	out := make([][]byte, len(bounds)/2)
	for i := range out {
		lo, hi := bounds[2*i], bounds[2*i+1]
		out[i] = rec[lo:hi:hi]
	}
	return out
}

// encodeLog appends the stored value of a raft.Log (the index is implied
// by its position):
//
//	version(1)=1 | term uvarint | type(1) | appendedAt unix-nanos varint (0 = zero time)
//	| len(data) uvarint | data | len(extensions) uvarint | extensions
func encodeLog(buf []byte, l *raft.Log) []byte {
	buf = append(buf, logFormatV1)
	buf = binary.AppendUvarint(buf, l.Term)
	buf = append(buf, byte(l.Type))
	buf = binary.AppendVarint(buf, appendedAtNanos(l))
	buf = binary.AppendUvarint(buf, uint64(len(l.Data)))
	buf = append(buf, l.Data...)
	buf = binary.AppendUvarint(buf, uint64(len(l.Extensions)))
	buf = append(buf, l.Extensions...)
	return buf
}

// encodedLogLen is len(encodeLog(nil, l)), without encoding.
func encodedLogLen(l *raft.Log) int {
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) int { return len(binary.AppendUvarint(tmp[:0], v)) }
	return 1 + uv(l.Term) + 1 + len(binary.AppendVarint(tmp[:0], appendedAtNanos(l))) +
		uv(uint64(len(l.Data))) + len(l.Data) + uv(uint64(len(l.Extensions))) + len(l.Extensions)
}

func appendedAtNanos(l *raft.Log) int64 {
	if l.AppendedAt.IsZero() {
		return 0
	}
	return l.AppendedAt.UnixNano()
}

// parsedLog is a stored raft.Log whose byte fields still point into the
// stored value.
type parsedLog struct {
	term      uint64
	typ       raft.LogType
	at        int64
	data, ext []byte
}

// validLog is parseLog's verdict without its error values, for replay,
// which checks every entry on the start-up path.
func validLog(b []byte) bool {
	if len(b) < 2 || b[0] != logFormatV1 {
		return false
	}
	_, n := binary.Uvarint(b[1:]) // term
	if n <= 0 || len(b) < 1+n+1 {
		return false
	}
	b = b[1+n+1:]                        // past the type byte
	if _, n = binary.Varint(b); n <= 0 { // appended-at
		return false
	}
	b = b[n:]
	for range 2 { // data, extensions
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return false
		}
		b = b[n+int(l):]
	}
	return len(b) == 0
}

// parseLog checks a stored value without copying anything.
func parseLog(b []byte) (parsedLog, error) {
	r := reader{b: b}
	if v := r.byte(); v != logFormatV1 && r.err == nil {
		return parsedLog{}, fmt.Errorf("raft log format version %d: %w", v, ErrCorrupt)
	}
	p := parsedLog{term: r.uvarint(), typ: raft.LogType(r.byte()), at: r.varint(), data: r.bytes(), ext: r.bytes()}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes: %w", len(r.b), ErrCorrupt)
	}
	return p, r.err
}

// decodeLog fills l from b, copying the byte fields.
func decodeLog(b []byte, l *raft.Log) error {
	p, err := parseLog(b)
	if err != nil {
		return err
	}
	*l = raft.Log{Term: p.term, Type: p.typ}
	if len(p.data) > 0 {
		l.Data = append([]byte(nil), p.data...)
	}
	if len(p.ext) > 0 {
		l.Extensions = append([]byte(nil), p.ext...)
	}
	if p.at != 0 {
		l.AppendedAt = time.Unix(0, p.at)
	}
	return nil
}
