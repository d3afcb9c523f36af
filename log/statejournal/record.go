package statejournal

// The record format and the one replay walk (see the package doc).

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble"

	"sharq/log/crc32c"
)

const (
	recordHeader = 8
	// batchHeader is pebble's batch header: an 8-byte sequence number
	// (zero in the journal: a batch is journaled before pebble gives it
	// one) and a 4-byte count, both little-endian.
	batchHeader = 12
	// MaxRecord bounds a record so a corrupt length cannot make replay
	// allocate gigabytes; a coordinator's batch is a few KiB to a few MiB,
	// a share-partition's state a few KiB.
	MaxRecord = 64 << 20
)

// appendBatchRecord lays out the record of the batch representation repr
// (pebble's Batch.Repr), its sequence number zeroed.
func appendBatchRecord(dst, repr []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeader)...)
	dst = append(dst, repr...)
	clear(dst[start+recordHeader : start+recordHeader+8])
	return finishRecord(dst, start)
}

// appendStagedRecord lays out the record of a staged write of value to
// key (len(key) > 0).
func appendStagedRecord(dst, key, value []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeader)...)
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = append(dst, value...)
	return finishRecord(dst, start)
}

// finishRecord fills in the header of the record that starts at start.
func finishRecord(dst []byte, start int) []byte {
	body := dst[start+recordHeader:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(dst[start+4:], crc32c.Checksum(body))
	return dst
}

// readRecord checks the record at data[off:]: it returns its body and
// whole size, or why it does not check out ("" when it does).
func readRecord(data []byte, off int) (body []byte, size int, reason string) {
	rest := data[off:]
	if len(rest) < recordHeader {
		return nil, 0, "short record header"
	}
	n := binary.BigEndian.Uint32(rest)
	if n == 0 || n > MaxRecord {
		return nil, 0, "bad record length"
	}
	if uint64(n) > uint64(len(rest)-recordHeader) {
		return nil, 0, "short record"
	}
	body = rest[recordHeader : recordHeader+int(n)]
	if crc32c.Checksum(body) != binary.BigEndian.Uint32(rest[4:]) {
		return nil, 0, "checksum mismatch"
	}
	if !validBody(body) {
		// A checksummed body the coordinators never write: a bug or a
		// foreign file.
		return nil, 0, "not a batch or staged write of this journal"
	}
	return body, recordHeader + int(n), ""
}

// plausible is readRecord's cheap part, for the resync scan: the length
// is in bounds and the body starts as one of the two kinds does.
func plausible(data []byte, off int) bool {
	rest := data[off:]
	if len(rest) < recordHeader {
		return false
	}
	n := binary.BigEndian.Uint32(rest)
	if n == 0 || n > MaxRecord || uint64(n) > uint64(len(rest)-recordHeader) {
		return false
	}
	body := rest[recordHeader : recordHeader+int(n)]
	if body[0] == 0 {
		return len(body) >= batchHeader && bytes.Equal(body[:8], zeroSeq[:])
	}
	_, _, ok := splitStaged(body)
	return ok
}

var zeroSeq [8]byte

// splitStaged parses a staged write's body.
func splitStaged(body []byte) (key, value []byte, ok bool) {
	kl, m := binary.Uvarint(body)
	if m <= 0 || kl == 0 || kl > uint64(len(body)-m) {
		return nil, nil, false
	}
	return body[m : m+int(kl)], body[m+int(kl):], true
}

// validBody checks a checksummed body: a staged write, or a batch with a
// zero sequence number holding only the kinds the coordinators write, as
// many as its header counts, nothing left over.
func validBody(body []byte) bool {
	if body[0] != 0 {
		_, _, ok := splitStaged(body)
		return ok
	}
	if len(body) < batchHeader || !bytes.Equal(body[:8], zeroSeq[:]) {
		return false
	}
	n, ok := walkBatch(body, func(pebble.InternalKeyKind, []byte, []byte) bool { return true })
	return ok && n == binary.LittleEndian.Uint32(body[8:batchHeader])
}

// walkBatch calls fn for each operation of a batch body (pebble's batch
// representation) until fn returns false, and returns how many it read
// and whether the body is well formed as far as it read. Only set, delete
// and range delete are well formed here. pebble's own reader trusts its
// input (it reads past the end of a malformed one), so journal bytes are
// never handed to it.
func walkBatch(body []byte, fn func(kind pebble.InternalKeyKind, key, value []byte) bool) (uint32, bool) {
	rest := body[batchHeader:]
	var n uint32
	for len(rest) > 0 {
		kind := pebble.InternalKeyKind(rest[0])
		switch kind {
		case pebble.InternalKeyKindSet, pebble.InternalKeyKindDelete, pebble.InternalKeyKindRangeDelete:
		default:
			return n, false
		}
		var k, v []byte
		var ok bool
		if k, rest, ok = batchString(rest[1:]); !ok {
			return n, false
		}
		if kind != pebble.InternalKeyKindDelete {
			if v, rest, ok = batchString(rest); !ok {
				return n, false
			}
		}
		n++
		if !fn(kind, k, v) {
			break
		}
	}
	return n, true
}

// batchString reads a uvarint-length-prefixed string of a batch.
func batchString(b []byte) (s, rest []byte, ok bool) {
	l, m := binary.Uvarint(b)
	if m <= 0 || l > uint64(len(b)-m) {
		return nil, nil, false
	}
	return b[m : m+int(l)], b[m+int(l):], true
}

// forEachOp calls fn for each operation of a valid body, in order: a
// staged write is a set.
func forEachOp(body []byte, fn func(kind pebble.InternalKeyKind, key, value []byte) error) error {
	if body[0] != 0 {
		k, v, _ := splitStaged(body)
		return fn(pebble.InternalKeyKindSet, k, v)
	}
	var err error
	walkBatch(body, func(kind pebble.InternalKeyKind, k, v []byte) bool {
		err = fn(kind, k, v)
		return err == nil
	})
	return err
}

// Damage is a stretch of the journal that replay could not read.
type Damage struct {
	Offset int64  // where the unreadable bytes start
	Bytes  int64  // how many were skipped
	Reason string // what was wrong with the record there
	// Tail: nothing readable follows. Torn: a tail that ends inside the
	// length its header declares (or inside the header), which is what a
	// write cut short by a crash leaves; such a write was never answered.
	Tail, Torn bool
	// Keys are the keys of the sets, deletes and staged writes that the
	// damaged bytes still name, as far as they parse; untrusted (a key
	// itself may be what is damaged) and pointing into the journal's
	// bytes.
	Keys [][]byte
}

// Replayed is what Decode found.
type Replayed struct {
	Records int      // good records, each applied
	Damage  []Damage // in file order
}

// Decode walks data's records and calls apply for each operation of each
// good record, in order (a staged write is a set). A stretch that does
// not check out is skipped and listed: the walk goes on at the next
// offset where a whole record checks out. apply's error stops the walk
// and is returned.
func Decode(data []byte, apply func(kind pebble.InternalKeyKind, key, value []byte) error) (Replayed, error) {
	var r Replayed
	var err error
	r.Damage, err = scan(data, func(_ int, body []byte) error {
		r.Records++
		return forEachOp(body, apply)
	})
	return r, err
}

// scan calls good for each good record (its offset and body) and returns
// the damaged stretches between them.
func scan(data []byte, good func(off int, body []byte) error) ([]Damage, error) {
	var dmg []Damage
	for off := 0; off < len(data); {
		body, size, reason := readRecord(data, off)
		if reason == "" {
			if err := good(off, body); err != nil {
				return dmg, err
			}
			off += size
			continue
		}
		d := Damage{Offset: int64(off), Reason: reason}
		if reason == "bad record length" {
			d.Reason = fmt.Sprintf("bad record length %d", binary.BigEndian.Uint32(data[off:]))
		}
		next := resync(data, off+1)
		if next < 0 {
			next, d.Tail, d.Torn = len(data), true, torn(data[off:])
		}
		d.Bytes = int64(next - off)
		d.Keys = damagedKeys(data[off:next])
		dmg = append(dmg, d)
		off = next
	}
	return dmg, nil
}

// resync returns the first offset at or after from where a whole record
// checks out, or -1. It never trusts a damaged record's length (a flipped
// bit in it could jump over good records), so it tries every offset;
// checksum work is bounded so a crafted file cannot make it run for
// hours. A false match needs a CRC-32C collision on a plausible body.
func resync(data []byte, from int) int {
	budget := 4*len(data) + 1<<20
	for off := from; off+recordHeader < len(data); off++ {
		if !plausible(data, off) {
			continue
		}
		if budget -= int(binary.BigEndian.Uint32(data[off:])); budget < 0 {
			return -1
		}
		if _, _, reason := readRecord(data, off); reason == "" {
			return off
		}
	}
	return -1
}

// torn reports whether rest, the journal's damaged tail, is what a write
// cut short leaves: a partial header, or a record whose declared length
// runs past the end of the file.
func torn(rest []byte) bool {
	if len(rest) < recordHeader {
		return true
	}
	n := binary.BigEndian.Uint32(rest)
	return n > 0 && n <= MaxRecord && uint64(n) > uint64(len(rest)-recordHeader)
}

// damagedKeys reads what keys it can from a damaged stretch: the record
// at its start, bounded by the declared length when that fits.
func damagedKeys(stretch []byte) [][]byte {
	if len(stretch) <= recordHeader {
		return nil
	}
	body := stretch[recordHeader:]
	if n := binary.BigEndian.Uint32(stretch); n > 0 && uint64(n) < uint64(len(body)) {
		body = body[:n]
	}
	if body[0] != 0 {
		if k, _, ok := splitStaged(body); ok {
			return [][]byte{k}
		}
		return nil
	}
	if len(body) <= batchHeader {
		return nil
	}
	var keys [][]byte
	count := binary.LittleEndian.Uint32(body[8:batchHeader])
	walkBatch(body, func(kind pebble.InternalKeyKind, k, _ []byte) bool {
		if kind != pebble.InternalKeyKindRangeDelete && len(k) > 0 {
			keys = append(keys, k)
		}
		// The count keeps the walk inside the record.
		return uint32(len(keys)) < count
	})
	return keys
}
