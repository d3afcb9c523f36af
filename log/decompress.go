package log

import (
	"fmt"

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
		rec, err := d.record()
		if err == errRecordLength {
			return 0, false, fmt.Errorf("%w: %s record %d: bad length", ErrCorruptMessage, codecNames[codec], i)
		}
		if err != nil {
			return 0, false, fmt.Errorf("%w: %s records %w: %v", ErrCorruptMessage, codecNames[codec], errCodec, err)
		}
		// The record's own offset delta: after compaction it is not i.
		var r recordbatch.Record
		if err := recordbatch.ParseRecord(rec, i, &r); err != nil {
			return 0, false, err
		}
		if baseTs+r.TimestampDelta == ts {
			return r.OffsetDelta, true, nil
		}
	}
	return 0, false, nil
}
