package raftmeta

import (
	"encoding/binary"
	"fmt"

	"github.com/hashicorp/raft"
)

// keyCurrentTerm is the StableStore key under which raft keeps its current
// term. It is part of raft's on-disk contract (every existing store holds
// it under this name).
var keyCurrentTerm = []byte("CurrentTerm")

// bootstrap writes raft's first-start state, the current term and the
// configuration entry, in one synced record. raft.BootstrapCluster writes
// them as two separate synced writes; a crash between the two leaves a term
// without a configuration, which raft.HasExistingState then reports as an
// initialised store whose node can never be elected. Here either both are
// durable or neither is, and a start after a failed bootstrap bootstraps
// again. raft itself validates the configuration and builds the entries,
// against an in-memory store, so their format stays raft's.
func (s *fileStore) bootstrap(conf *raft.Config, trans raft.Transport, c raft.Configuration) error {
	term, logs, err := bootstrapState(conf, trans, c)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	if len(logs) == 0 || s.st.checkEntries(logs[0].Index, len(logs)) != nil {
		return fmt.Errorf("raft bootstrap of %d entries on a store holding [%d, %d]: %w",
			len(logs), s.st.first, s.st.lastIndex(), errNotContiguous)
	}
	var tb [8]byte
	binary.BigEndian.PutUint64(tb[:], term)
	rec := appendSetOp(s.newRecord(256), keyCurrentTerm, tb[:])
	rec, bounds := appendLogs(appendEntriesOp(rec, logs[0].Index, len(logs)), logs)
	if err := s.commit(rec); err != nil {
		return fmt.Errorf("commit raft bootstrap: %w", err)
	}
	s.mu.Lock()
	s.st.set(string(keyCurrentTerm), tb[:])
	s.st.putEntries(logs[0].Index, slicesOf(rec, bounds))
	s.mu.Unlock()
	return nil
}

// bootstrapState runs raft.BootstrapCluster against an in-memory store and
// returns the term and entries it wrote.
func bootstrapState(conf *raft.Config, trans raft.Transport, c raft.Configuration) (uint64, []*raft.Log, error) {
	mem := raft.NewInmemStore()
	if err := raft.BootstrapCluster(conf, mem, mem, raft.NewInmemSnapshotStore(), trans, c); err != nil {
		return 0, nil, err
	}
	term, err := mem.GetUint64(keyCurrentTerm)
	if err != nil || term == 0 {
		return 0, nil, fmt.Errorf("raft bootstrap wrote no current term (%v): %w", err, ErrCorrupt)
	}
	first, err := mem.FirstIndex()
	if err != nil {
		return 0, nil, err
	}
	last, err := mem.LastIndex()
	if err != nil {
		return 0, nil, err
	}
	var logs []*raft.Log
	for i := first; i <= last && last > 0; i++ {
		l := new(raft.Log)
		if err := mem.GetLog(i, l); err != nil {
			return 0, nil, fmt.Errorf("raft bootstrap entry %d: %w", i, err)
		}
		logs = append(logs, l)
	}
	return term, logs, nil
}
