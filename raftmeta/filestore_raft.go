package raftmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// errStableNotFound is what raft expects from StableStore.Get on a missing key:
// raft compares err.Error() with the literal "not found" (api.go
// HasExistingState, raft.go vote restore), so the text is part of the contract.
var errStableNotFound = errors.New("not found")

// IsMonotonic tells raft that we never hold gaps, so after a user snapshot
// restore it deletes the whole log instead of leaving a gap.
func (s *fileStore) IsMonotonic() bool { return true }

// FirstIndex implements raft.LogStore.
func (s *fileStore) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.st.entries) == 0 {
		return 0, nil
	}
	return s.st.first, nil
}

// LastIndex implements raft.LogStore.
func (s *fileStore) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st.lastIndex(), nil
}

// GetLog implements raft.LogStore.
func (s *fileStore) GetLog(index uint64, l *raft.Log) error {
	s.mu.RLock()
	enc := s.st.entry(index)
	s.mu.RUnlock()
	if enc == nil {
		return raft.ErrLogNotFound
	}
	// enc is never mutated, so it is decoded outside the lock.
	if err := decodeLog(enc, l); err != nil {
		return fmt.Errorf("raft log %d: %w", index, err)
	}
	l.Index = index
	return nil
}

// StoreLog implements raft.LogStore.
func (s *fileStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: one record, one write, one fdatasync,
// all or nothing. logs must have consecutive indexes.
func (s *fileStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	first := logs[0].Index
	for i, l := range logs {
		if l.Index != first+uint64(i) {
			return fmt.Errorf("store raft logs: index %d after %d: %w", l.Index, first+uint64(i)-1, errNotContiguous)
		}
	}
	if err := s.st.checkEntries(first, len(logs)); err != nil {
		return fmt.Errorf("store raft logs: %w", err)
	}
	size := 24
	for _, l := range logs {
		size += 40 + len(l.Data) + len(l.Extensions)
	}
	rec, bounds := appendLogs(appendEntriesOp(s.newRecord(size), first, len(logs)), logs)
	if err := s.commit(rec); err != nil {
		return err
	}
	s.mu.Lock()
	s.st.putEntries(first, slicesOf(rec, bounds))
	s.mu.Unlock()
	s.maybeCompact()
	return nil
}

// DeleteRange implements raft.LogStore; min and max are inclusive. raft
// deletes a head (after a snapshot), a tail (conflicting entries) or all.
func (s *fileStore) DeleteRange(min, max uint64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	lo, hi, ok, err := s.st.deleteBounds(min, max)
	if err != nil {
		return fmt.Errorf("delete raft logs: %w", err)
	}
	if !ok {
		return nil
	}
	rec := appendDeleteOp(s.newRecord(21), lo, hi)
	if err := s.commit(rec); err != nil {
		return fmt.Errorf("delete raft logs [%d, %d]: %w", min, max, err)
	}
	s.mu.Lock()
	s.st.deleteRange(lo, hi)
	s.mu.Unlock()
	s.maybeCompact()
	return nil
}

// Set implements raft.StableStore. Raft writes its current term and vote
// here and assumes them durable before it answers a vote request. A lone
// voter answers no one (it only votes for itself), so with lazyStable the
// value is not written on its own: it rides in the next synced record (the
// new leader's first log entry, written right after its election). A crash
// before that loses only a term in which nothing was written, and the node
// simply holds that election again. Writing it alone without a sync would
// do the same for durability, but would leave several unsynced records at
// the tail, and a crash that tears an earlier one and keeps a later one
// would look like corruption on the next Open.
func (s *fileStore) Set(key, val []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	val = bytes.Clone(val)
	if val == nil {
		val = []byte{}
	}
	if s.lazyStable {
		s.pending = appendSetOp(s.pending, key, val)
	} else if err := s.commit(appendSetOp(s.newRecord(len(key)+len(val)+12), key, val)); err != nil {
		return fmt.Errorf("set stable %q: %w", key, err)
	}
	s.mu.Lock()
	s.st.set(string(key), val)
	s.mu.Unlock()
	if !s.lazyStable {
		s.maybeCompact()
	}
	return nil
}

// Get implements raft.StableStore; a missing key is errStableNotFound.
func (s *fileStore) Get(key []byte) ([]byte, error) {
	s.mu.RLock()
	v, ok := s.st.stable[string(key)]
	s.mu.RUnlock()
	if !ok {
		return nil, errStableNotFound
	}
	return append([]byte{}, v...), nil
}

// SetUint64 implements raft.StableStore.
func (s *fileStore) SetUint64(key []byte, val uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], val)
	return s.Set(key, b[:])
}

// GetUint64 implements raft.StableStore; a missing key reads as 0.
func (s *fileStore) GetUint64(key []byte) (uint64, error) {
	s.mu.RLock()
	v, ok := s.st.stable[string(key)]
	s.mu.RUnlock()
	if !ok {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("stable %q holds %d bytes, want 8: %w", key, len(v), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}
