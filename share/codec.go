package share

// Share-partition state codec.
//
// FORMAT (version 1), one pebble value per share-partition:
//
//	byte    magic 0x53 ('S')
//	byte    version 1
//	varint  StartOffset (SPSO, -1 = uninitialised)
//	varint  StateEpoch
//	varint  DeliveryCompleteCount
//	uvarint number of batches
//	per batch, offsets as deltas so a typical value is a few bytes:
//	  uvarint FirstOffset - (previous LastOffset or StartOffset-1) - 1
//	  uvarint LastOffset - FirstOffset
//	  byte    DeliveryState (0 Available, 2 Acknowledged, 3 Archiving, 4 Archived)
//	  uvarint DeliveryCount
//
// MIGRATION: a new field or meaning gets version 2; DecodeState keeps
// reading version 1 (N and N-1 supported) and EncodeState writes only the
// newest. Never change the meaning of a version-1 byte.

import (
	"encoding/binary"
	"fmt"
	"math"
)

const (
	stateMagic   = 0x53
	stateVersion = 1
)

// EncodeState appends the encoding of st to dst.
func EncodeState(dst []byte, st *State) []byte {
	dst = append(dst, stateMagic, stateVersion)
	dst = binary.AppendVarint(dst, st.StartOffset)
	dst = binary.AppendVarint(dst, int64(st.StateEpoch))
	dst = binary.AppendVarint(dst, st.DeliveryCompleteCount)
	dst = binary.AppendUvarint(dst, uint64(len(st.Batches)))
	prev := st.StartOffset - 1
	for _, b := range st.Batches {
		dst = binary.AppendUvarint(dst, uint64(b.FirstOffset-prev-1))
		dst = binary.AppendUvarint(dst, uint64(b.LastOffset-b.FirstOffset))
		dst = append(dst, byte(b.State))
		dst = binary.AppendUvarint(dst, uint64(b.DeliveryCount))
		prev = b.LastOffset
	}
	return dst
}

type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad %s", ErrCorruptState, what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad %s", ErrCorruptState, what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// DecodeState decodes b into st (its Batches reused). Any malformed input
// gives an error wrapping ErrCorruptState, never a panic.
func DecodeState(b []byte, st *State) error {
	if len(b) < 2 || b[0] != stateMagic {
		return fmt.Errorf("%w: bad magic", ErrCorruptState)
	}
	if b[1] != stateVersion {
		return fmt.Errorf("%w: unsupported version %d", ErrCorruptState, b[1])
	}
	r := stateReader{b: b[2:]}
	st.StartOffset = r.varint("start offset")
	epoch := r.varint("state epoch")
	st.DeliveryCompleteCount = r.varint("delivery complete count")
	n := r.uvarint("batch count")
	if r.err != nil {
		return r.err
	}
	if epoch < math.MinInt32 || epoch > math.MaxInt32 {
		return fmt.Errorf("%w: state epoch %d", ErrCorruptState, epoch)
	}
	st.StateEpoch = int32(epoch)
	// Each batch takes at least 4 bytes: bound the allocation by the input.
	if n > uint64(len(r.b)/4) {
		return fmt.Errorf("%w: %d batches in %d bytes", ErrCorruptState, n, len(r.b))
	}
	st.Batches = st.Batches[:0]
	prev := st.StartOffset - 1
	for i := uint64(0); i < n; i++ {
		gap := r.uvarint("batch offset")
		length := r.uvarint("batch length")
		if r.err != nil {
			return r.err
		}
		if len(r.b) == 0 {
			return fmt.Errorf("%w: truncated batch %d", ErrCorruptState, i)
		}
		state := RecordState(r.b[0])
		r.b = r.b[1:]
		count := r.uvarint("delivery count")
		if r.err != nil {
			return r.err
		}
		// Offsets stay below MaxInt64 (no overflow of first or last).
		if prev < -1 || gap >= uint64(math.MaxInt64-prev-1) || count > math.MaxInt16 {
			return fmt.Errorf("%w: batch %d out of range", ErrCorruptState, i)
		}
		first := prev + 1 + int64(gap)
		if length >= uint64(math.MaxInt64-first) {
			return fmt.Errorf("%w: batch %d out of range", ErrCorruptState, i)
		}
		last := first + int64(length)
		st.Batches = append(st.Batches, StateBatch{FirstOffset: first, LastOffset: last, State: state, DeliveryCount: int16(count)})
		prev = last
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrCorruptState, len(r.b))
	}
	return st.Validate()
}
