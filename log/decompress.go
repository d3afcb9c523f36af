package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"sharq/log/recordbatch"
)

// firstRecordAt returns the offset delta of the first record of a
// compressed records section p whose timestamp is ts (ListOffsets
// MAX_TIMESTAMP), streaming through the pooled decompressors as
// scanCompressed does; found is false when no record has it.
func firstRecordAt(codec int, p []byte, count int32, baseTs, ts int64) (delta int32, found bool, err error) {
	d := decompressors.Get().(*decompressor)
	defer d.put()
	r, err := d.open(codec, p)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s records %w: %v", ErrCorruptMessage, codecNames[codec], errCodec, err)
	}
	d.win.Reset(r)
	for i := int32(0); i < count; i++ {
		length, err := binary.ReadVarint(d.win)
		if err != nil || length < minRecordSize || length > math.MaxInt32 {
			return 0, false, fmt.Errorf("%w: %s record %d: bad length", ErrCorruptMessage, codecNames[codec], i)
		}
		var rec []byte
		if length <= streamWindow {
			rec, err = d.win.Peek(int(length))
		} else {
			d.scratch, err = readGrowing(d.win, d.scratch[:0], int(length))
			rec = d.scratch
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return 0, false, fmt.Errorf("%w: %s record %d: bad length", ErrCorruptMessage, codecNames[codec], i)
			}
			return 0, false, err
		}
		// The record's own offset delta: after compaction it is not i.
		var r recordbatch.Record
		if err := recordbatch.ParseRecord(rec, i, &r); err != nil {
			return 0, false, err
		}
		if baseTs+r.TimestampDelta == ts {
			return r.OffsetDelta, true, nil
		}
		if length <= streamWindow {
			d.win.Discard(int(length))
		}
	}
	return 0, false, nil
}
