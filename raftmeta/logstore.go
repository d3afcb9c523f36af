package raftmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
)

// Key layout of the raft pebble instance (<Dir>/log):
//
//	0x01 | index (8 bytes, big endian)  -> encoded raft.Log (see encodeLog)
//	0x02 | stable key bytes             -> raw value
//
// Big-endian indexes sort numerically, so First/Last of the bounded log range
// are FirstIndex/LastIndex and a truncation is one range delete.
const (
	prefixLog    byte = 0x01
	prefixStable byte = 0x02
	prefixEnd    byte = 0x03 // first byte past every prefix we own
)

// pebbleStore is raft's LogStore and StableStore on one pebble instance, as
// versions before the file store (filestore.go) kept them in <Dir>/log.
// MIGRATION ONLY: openFileStore opens it once to copy an old data dir into
// raft.wal; tests also use it to write such dirs. Nothing else may use it.
// Every write is a synced batch: raft assumes a returned StoreLogs/Set is
// durable (it votes and acknowledges on that basis).
type pebbleStore struct {
	db *pebble.DB
	// lazyStable leaves StableStore writes unsynced (a lone voter; see
	// Set). Set before raft starts, read-only after.
	lazyStable bool
}

var (
	_ raft.LogStore          = (*pebbleStore)(nil)
	_ raft.StableStore       = (*pebbleStore)(nil)
	_ raft.MonotonicLogStore = (*pebbleStore)(nil)
)

// openPebbleStore opens (creating if needed) the raft store in dir. fs nil
// means the real file system; tests pass a strict in-memory FS to simulate
// crashes.
func openPebbleStore(dir string, fs vfs.FS, logger *slog.Logger) (*pebbleStore, error) {
	if logger == nil {
		logger = discardLogger()
	}
	cache := pebble.NewCache(1 << 20)
	defer cache.Unref()
	opts := &pebble.Options{
		FS:    fs,
		Cache: cache,
		// Raft entries are small and the log is truncated after snapshots;
		// a small memtable keeps idle RSS low.
		MemTableSize:  1 << 20,
		MaxOpenFiles:  64,
		Logger:        pebbleLogger{logger},
		EventListener: pebbleEvents(logger),
	}
	if fs == nil {
		fs = vfs.Default
	}
	opts.FS = fs
	// pebble syncs its own directory but not the entries for it and for any
	// parent it had to create: without this a crash right after the first
	// start could lose the whole directory, acknowledged entries included.
	if err := mkdirAllSynced(fs, dir); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open raft log store %s: %w", dir, err)
	}
	return &pebbleStore{db: db}, nil
}

func (s *pebbleStore) Close() error { return s.db.Close() }

// IsMonotonic tells raft that we never hold gaps, so after a user snapshot
// restore it deletes the whole log instead of leaving a gap.
func (s *pebbleStore) IsMonotonic() bool { return true }

func logKey(index uint64) []byte {
	var k [9]byte
	k[0] = prefixLog
	binary.BigEndian.PutUint64(k[1:], index)
	return k[:]
}

func stableKey(key []byte) []byte {
	k := make([]byte, 1+len(key))
	k[0] = prefixStable
	copy(k[1:], key)
	return k
}

func (s *pebbleStore) logIter() (*pebble.Iterator, error) {
	return s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte{prefixLog},
		UpperBound: []byte{prefixStable},
	})
}

// boundIndex returns the index at First() (first=true) or Last(), 0 if empty.
func (s *pebbleStore) boundIndex(first bool) (uint64, error) {
	it, err := s.logIter()
	if err != nil {
		return 0, fmt.Errorf("raft log iterator: %w", err)
	}
	var ok bool
	if first {
		ok = it.First()
	} else {
		ok = it.Last()
	}
	var idx uint64
	if ok {
		k := it.Key()
		if len(k) != 9 {
			it.Close()
			return 0, fmt.Errorf("raft log key of %d bytes: %w", len(k), ErrCorrupt)
		}
		idx = binary.BigEndian.Uint64(k[1:])
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("raft log iterator: %w", err)
	}
	return idx, nil
}

// FirstIndex implements raft.LogStore.
func (s *pebbleStore) FirstIndex() (uint64, error) { return s.boundIndex(true) }

// LastIndex implements raft.LogStore.
func (s *pebbleStore) LastIndex() (uint64, error) { return s.boundIndex(false) }

// GetLog implements raft.LogStore.
func (s *pebbleStore) GetLog(index uint64, l *raft.Log) error {
	v, closer, err := s.db.Get(logKey(index))
	if errors.Is(err, pebble.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return fmt.Errorf("get raft log %d: %w", index, err)
	}
	// decodeLog copies everything it keeps, so v may be released right after.
	err = decodeLog(v, l)
	closer.Close()
	if err != nil {
		return fmt.Errorf("raft log %d: %w", index, err)
	}
	l.Index = index
	return nil
}

// StoreLog implements raft.LogStore.
func (s *pebbleStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: one synced batch, all or nothing.
func (s *pebbleStore) StoreLogs(logs []*raft.Log) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := batchLogs(b, logs); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("commit %d raft logs: %w", len(logs), err)
	}
	return nil
}

// batchLogs adds the entries to b under their log keys.
func batchLogs(b *pebble.Batch, logs []*raft.Log) error {
	var buf []byte
	for _, l := range logs {
		buf = encodeLog(buf[:0], l)
		// Set copies key and value into the batch.
		if err := b.Set(logKey(l.Index), buf, nil); err != nil {
			return fmt.Errorf("batch raft log %d: %w", l.Index, err)
		}
	}
	return nil
}

// DeleteRange implements raft.LogStore; min and max are inclusive.
func (s *pebbleStore) DeleteRange(min, max uint64) error {
	if min > max {
		return nil
	}
	end := []byte{prefixStable}
	if max != math.MaxUint64 {
		end = logKey(max + 1)
	}
	if err := s.db.DeleteRange(logKey(min), end, pebble.Sync); err != nil {
		return fmt.Errorf("delete raft logs [%d, %d]: %w", min, max, err)
	}
	return nil
}

// Set implements raft.StableStore. Raft writes its current term and vote
// here and assumes them durable before it answers a vote request. A lone
// voter answers no one (it only votes for itself), so with lazyStable the
// write is not synced on its own: pebble appends every batch to one ordered
// WAL, and the next synced batch (the new leader's first log entry, written
// right after its election) makes it durable with everything before it. A
// crash before that loses only a term in which nothing was written, and the
// node simply holds that election again.
func (s *pebbleStore) Set(key, val []byte) error {
	opt := pebble.Sync
	if s.lazyStable {
		opt = pebble.NoSync
	}
	if err := s.db.Set(stableKey(key), val, opt); err != nil {
		return fmt.Errorf("set stable %q: %w", key, err)
	}
	return nil
}

// Get implements raft.StableStore; a missing key is errStableNotFound.
func (s *pebbleStore) Get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(stableKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, errStableNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get stable %q: %w", key, err)
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, nil
}

// SetUint64 implements raft.StableStore.
func (s *pebbleStore) SetUint64(key []byte, val uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], val)
	return s.Set(key, b[:])
}

// GetUint64 implements raft.StableStore; a missing key reads as 0.
func (s *pebbleStore) GetUint64(key []byte) (uint64, error) {
	v, closer, err := s.db.Get(stableKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get stable %q: %w", key, err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("stable %q holds %d bytes, want 8: %w", key, len(v), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}

// bootstrap writes raft's first-start state, the current term and the
// configuration entry, in one synced batch. raft.BootstrapCluster writes
// them as two separate synced writes; a crash between the two leaves a term
// without a configuration, which raft.HasExistingState then reports as an
// initialised store whose node can never be elected. Here either both are
// durable or neither is, and a start after a failed bootstrap bootstraps
// again. raft itself validates the configuration and builds the entries,
// against an in-memory store, so their format stays raft's.
func (s *pebbleStore) bootstrap(conf *raft.Config, trans raft.Transport, c raft.Configuration) error {
	term, logs, err := bootstrapState(conf, trans, c)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := batchLogs(b, logs); err != nil {
		return err
	}
	var tb [8]byte
	binary.BigEndian.PutUint64(tb[:], term)
	if err := b.Set(stableKey(keyCurrentTerm), tb[:], nil); err != nil {
		return fmt.Errorf("batch raft current term: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("commit raft bootstrap: %w", err)
	}
	return nil
}

// export reads the whole store for the migration to the file store: every
// log entry (checked to be contiguous and decodable) and every stable key.
func (s *pebbleStore) export() (*walState, error) {
	st := newWALState()
	it, err := s.logIter()
	if err != nil {
		return nil, fmt.Errorf("raft log iterator: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 9 {
			it.Close()
			return nil, fmt.Errorf("raft log key of %d bytes: %w", len(k), ErrCorrupt)
		}
		idx := binary.BigEndian.Uint64(k[1:])
		if err := st.checkEntries(idx, 1); err != nil || (len(st.entries) > 0 && idx != st.lastIndex()+1) {
			it.Close()
			return nil, fmt.Errorf("pebble raft log holds %d after [%d, %d]: %w", idx, st.first, st.lastIndex(), ErrCorrupt)
		}
		v := bytes.Clone(it.Value())
		if _, err := parseLog(v); err != nil {
			it.Close()
			return nil, fmt.Errorf("pebble raft log %d: %w", idx, err)
		}
		st.putEntries(idx, [][]byte{v})
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("raft log iterator: %w", err)
	}
	it, err = s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixStable}, UpperBound: []byte{prefixEnd}})
	if err != nil {
		return nil, fmt.Errorf("raft stable iterator: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		st.set(string(it.Key()[1:]), bytes.Clone(it.Value()))
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("raft stable iterator: %w", err)
	}
	return st, nil
}
