package log

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Kafka's index entry sizes: .index is (int32 relative offset, int32
// position), .timeindex is (int64 timestamp, int32 relative offset).
const (
	offsetIndexEntry = 8
	timeIndexEntry   = 12

	// segment.index.bytes default: a segment rolls when an index is full.
	maxIndexBytes = 10 * 1024 * 1024
)

func appendOffsetEntry(idx []byte, rel, pos int32) []byte {
	idx = binary.BigEndian.AppendUint32(idx, uint32(rel))
	return binary.BigEndian.AppendUint32(idx, uint32(pos))
}

func appendTimeEntry(tidx []byte, ts int64, rel int32) []byte {
	tidx = binary.BigEndian.AppendUint64(tidx, uint64(ts))
	return binary.BigEndian.AppendUint32(tidx, uint32(rel))
}

func offsetEntry(e []byte) (rel, pos int32) {
	return int32(binary.BigEndian.Uint32(e)), int32(binary.BigEndian.Uint32(e[4:]))
}

func timeEntry(e []byte) (ts int64, rel int32) {
	return int64(binary.BigEndian.Uint64(e)), int32(binary.BigEndian.Uint32(e[8:]))
}

// offsetFloorMem returns the position of the last entry whose relative
// offset is <= rel, or 0 (the segment start).
func offsetFloorMem(idx []byte, rel int32) int64 {
	lo, hi := 0, len(idx)/offsetIndexEntry // find first entry with offset > rel
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r, _ := offsetEntry(idx[mid*offsetIndexEntry:]); r <= rel {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0
	}
	_, pos := offsetEntry(idx[(lo-1)*offsetIndexEntry:])
	return int64(pos)
}

// timeFloorMem returns the relative offset of the last entry whose
// timestamp is <= ts, or -1.
func timeFloorMem(tidx []byte, ts int64) int32 {
	lo, hi := 0, len(tidx)/timeIndexEntry
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t, _ := timeEntry(tidx[mid*timeIndexEntry:]); t <= ts {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return -1
	}
	_, rel := timeEntry(tidx[(lo-1)*timeIndexEntry:])
	return rel
}

// offsetFloorFile is offsetFloorMem over a sealed segment's .index file,
// paged in through the OS cache instead of held in memory. scratch must
// hold at least 8 bytes.
func offsetFloorFile(f File, entries int, rel int32, scratch []byte) (int64, error) {
	lo, hi := 0, entries
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if err := readFull(f, scratch[:offsetIndexEntry], int64(mid)*offsetIndexEntry); err != nil {
			return 0, err
		}
		if r, _ := offsetEntry(scratch); r <= rel {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0, nil
	}
	if err := readFull(f, scratch[:offsetIndexEntry], int64(lo-1)*offsetIndexEntry); err != nil {
		return 0, err
	}
	_, pos := offsetEntry(scratch)
	return int64(pos), nil
}

func timeFloorFile(f File, entries int, ts int64, scratch []byte) (int32, error) {
	lo, hi := 0, entries
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if err := readFull(f, scratch[:timeIndexEntry], int64(mid)*timeIndexEntry); err != nil {
			return 0, err
		}
		if t, _ := timeEntry(scratch); t <= ts {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return -1, nil
	}
	if err := readFull(f, scratch[:timeIndexEntry], int64(lo-1)*timeIndexEntry); err != nil {
		return 0, err
	}
	_, rel := timeEntry(scratch)
	return rel, nil
}

// readFull is ReadAt that treats a short read as an error.
func readFull(f File, p []byte, off int64) error {
	n, err := f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// readWhole reads a small file completely.
func readWhole(f File) ([]byte, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if size == 0 {
		return b, nil
	}
	if err := readFull(f, b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// checkOffsetIndex returns the longest prefix of idx whose entries are
// ascending and point inside a log of logSize bytes.
func checkOffsetIndex(idx []byte, logSize int64) ([]byte, error) {
	var err error
	if len(idx)%offsetIndexEntry != 0 {
		err = fmt.Errorf("index size %d is not a multiple of %d", len(idx), offsetIndexEntry)
		idx = idx[:len(idx)/offsetIndexEntry*offsetIndexEntry]
	}
	prevRel, prevPos := int32(-1), int32(-1)
	for i := 0; i < len(idx); i += offsetIndexEntry {
		rel, pos := offsetEntry(idx[i:])
		if rel <= prevRel || pos <= prevPos || rel < 0 || pos < 0 || int64(pos) >= logSize {
			if err == nil {
				err = fmt.Errorf("index entry %d (offset +%d, position %d) is out of order or past the log end %d", i/offsetIndexEntry, rel, pos, logSize)
			}
			return idx[:i], err
		}
		prevRel, prevPos = rel, pos
	}
	return idx, err
}

// checkTimeIndex returns the longest prefix of tidx with ascending entries
// whose offsets are below maxRel.
func checkTimeIndex(tidx []byte, maxRel int64) ([]byte, error) {
	var err error
	if len(tidx)%timeIndexEntry != 0 {
		err = fmt.Errorf("time index size %d is not a multiple of %d", len(tidx), timeIndexEntry)
		tidx = tidx[:len(tidx)/timeIndexEntry*timeIndexEntry]
	}
	prevTs, prevRel := int64(-1), int32(-1)
	for i := 0; i < len(tidx); i += timeIndexEntry {
		ts, rel := timeEntry(tidx[i:])
		if ts <= prevTs || rel < prevRel || rel < 0 || int64(rel) >= maxRel {
			if err == nil {
				err = fmt.Errorf("time index entry %d (timestamp %d, offset +%d) is out of order or past the log end", i/timeIndexEntry, ts, rel)
			}
			return tidx[:i], err
		}
		prevTs, prevRel = ts, rel
	}
	return tidx, err
}

// putIndexFiles writes index entries to s's index files and fsyncs them,
// the offset index and then the time index: idx and tidx from the byte
// offsets idxFrom and tidxFrom on (the files already hold what is before),
// each file cut to its entries' length when cut is set. op names the step
// that failed ("write", "truncate" or "fsync") for the caller's error.
func (s *segment) putIndexFiles(idx, tidx []byte, idxFrom, tidxFrom int, cut bool) (op string, err error) {
	for _, x := range [...]struct {
		f    File
		data []byte
		from int
	}{{s.index, idx, idxFrom}, {s.tindex, tidx, tidxFrom}} {
		if len(x.data) > x.from {
			if _, err := x.f.WriteAt(x.data[x.from:], int64(x.from)); err != nil {
				return "write", err
			}
		}
		if cut {
			if err := x.f.Truncate(int64(len(x.data))); err != nil {
				return "truncate", err
			}
		}
		if err := x.f.Sync(); err != nil {
			return "fsync", err
		}
	}
	return "", nil
}

// indexFileError is putIndexFiles' failure as a storage error.
func indexFileError(s *segment, op string, err error) error {
	return fmt.Errorf("%w: %s index of %s: %w", ErrStorage, op, s.logPath, err)
}
