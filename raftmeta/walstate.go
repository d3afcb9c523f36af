package raftmeta

import "fmt"

// walState is the replayed content of raft.wal.
type walState struct {
	first   uint64   // index of entries[0]; meaningless while entries is empty
	entries [][]byte // encodeLog values, contiguous from first; never mutated
	stable  map[string][]byte
	live    int64 // about the bytes a rewrite of this state takes
}

func newWALState() *walState { return &walState{stable: map[string][]byte{}} }

func (st *walState) lastIndex() uint64 {
	if len(st.entries) == 0 {
		return 0
	}
	return st.first + uint64(len(st.entries)) - 1
}

func (st *walState) entry(index uint64) []byte {
	if len(st.entries) == 0 || index < st.first || index > st.lastIndex() {
		return nil
	}
	return st.entries[index-st.first]
}

// checkEntries reports whether entries [first, first+n) may be stored: they
// overwrite a suffix of the log and/or extend it by one contiguous run, as
// raft does (it deletes a conflicting tail before storing the new one).
func (st *walState) checkEntries(first uint64, n int) error {
	if n <= 0 {
		return fmt.Errorf("empty entries op: %w", errNotContiguous)
	}
	if first == 0 || first+uint64(n)-1 < first {
		return fmt.Errorf("raft log entries from index %d (%d entries): %w", first, n, errNotContiguous)
	}
	if len(st.entries) > 0 && (first < st.first || first > st.lastIndex()+1) {
		return fmt.Errorf("raft log entries from %d next to [%d, %d]: %w",
			first, st.first, st.lastIndex(), errNotContiguous)
	}
	return nil
}

func (st *walState) putEntries(first uint64, encs [][]byte) {
	if len(st.entries) == 0 {
		st.first = first
	}
	at := int(first - st.first)
	for i, e := range encs {
		if j := at + i; j < len(st.entries) {
			st.live -= entryCost(st.entries[j])
			st.entries[j] = e
		} else {
			st.entries = append(st.entries, e)
		}
		st.live += entryCost(e)
	}
}

// deleteBounds clamps [min, max] to the log. ok is false if nothing is
// deleted. A range strictly inside the log would leave a hole, which raft
// never asks for and this store cannot represent.
func (st *walState) deleteBounds(min, max uint64) (lo, hi uint64, ok bool, err error) {
	last := st.lastIndex()
	if min > max || len(st.entries) == 0 || max < st.first || min > last {
		return 0, 0, false, nil
	}
	lo, hi = min, max
	if lo < st.first {
		lo = st.first
	}
	if hi > last {
		hi = last
	}
	if lo > st.first && hi < last {
		return 0, 0, false, fmt.Errorf("delete [%d, %d] inside the log [%d, %d]: %w",
			lo, hi, st.first, last, errNotContiguous)
	}
	return lo, hi, true, nil
}

// deleteRange removes [lo, hi], a head or a tail of the log (deleteBounds).
func (st *walState) deleteRange(lo, hi uint64) {
	from, to := int(lo-st.first), int(hi-st.first)+1
	for _, e := range st.entries[from:to] {
		st.live -= entryCost(e)
	}
	clear(st.entries[from:to]) // let the buffers go
	if from == 0 {
		st.entries = st.entries[to:]
		st.first = hi + 1
	} else {
		st.entries = st.entries[:from]
	}
	if len(st.entries) == 0 {
		st.entries = nil
	}
}

func (st *walState) set(key string, val []byte) {
	if old, ok := st.stable[key]; ok {
		st.live -= stableCost(key, old)
	}
	st.stable[key] = val
	st.live += stableCost(key, val)
}

func entryCost(e []byte) int64            { return int64(len(e)) + 3 }
func stableCost(k string, v []byte) int64 { return int64(len(k)+len(v)) + 5 }

// applyBatch replays one batch payload. Any failure means the file is
// corrupt: a checksummed record that does not apply was never written by us.
func (st *walState) applyBatch(p []byte) error {
	if len(p) == 0 {
		return fmt.Errorf("empty batch: %w", ErrCorrupt)
	}
	r := reader{b: p}
	for len(r.b) > 0 && r.err == nil {
		switch op := r.byte(); op {
		case opEntries:
			first, n := r.uvarint(), r.uvarint()
			if r.err != nil {
				break
			}
			// Each entry takes at least one byte, which bounds the allocation.
			if n == 0 || n > uint64(len(r.b)) {
				return fmt.Errorf("entries op with %d entries in %d bytes: %w", n, len(r.b), ErrCorrupt)
			}
			if err := st.checkEntries(first, int(n)); err != nil {
				return fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			// Appends go straight into the state (the common case, and
			// replay is on the start-up path); an overwrite goes through
			// putEntries. A failure aborts the whole replay, so a half
			// applied op does not matter.
			appendAt := len(st.entries) == 0 || first == st.lastIndex()+1
			if len(st.entries) == 0 {
				st.first = first
			}
			var encs [][]byte
			for i := uint64(0); i < n; i++ {
				e := r.bytes()
				if r.err != nil {
					break
				}
				if !validLog(e) {
					_, err := parseLog(e) // for its message
					if err == nil {
						err = ErrCorrupt
					}
					return fmt.Errorf("raft log %d: %w", first+i, err)
				}
				if appendAt {
					st.entries = append(st.entries, e)
					st.live += entryCost(e)
				} else {
					encs = append(encs, e)
				}
			}
			if r.err == nil && !appendAt {
				st.putEntries(first, encs)
			}
		case opDelete:
			min, max := r.uvarint(), r.uvarint()
			if r.err != nil {
				break
			}
			lo, hi, ok, err := st.deleteBounds(min, max)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			if !ok || lo != min || hi != max {
				// We only write deletes clamped to the log at that point.
				return fmt.Errorf("delete [%d, %d] outside the log [%d, %d]: %w",
					min, max, st.first, st.lastIndex(), ErrCorrupt)
			}
			st.deleteRange(lo, hi)
		case opSet:
			k, v := r.bytes(), r.bytes()
			if r.err == nil {
				st.set(string(k), v)
			}
		default:
			return fmt.Errorf("unknown batch op %d: %w", op, ErrCorrupt)
		}
	}
	return r.err
}
