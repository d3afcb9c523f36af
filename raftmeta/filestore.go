package raftmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
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

	// compactRatio and defaultCompactMin decide when the file is rewritten
	// with only the live state (fileStore.maybeCompact).
	compactRatio      = 4
	defaultCompactMin = 1 << 20
)

// errStableNotFound is what raft expects from StableStore.Get on a missing key:
// raft compares err.Error() with the literal "not found" (api.go
// HasExistingState, raft.go vote restore), so the text is part of the contract.
var errStableNotFound = errors.New("not found")

// ErrCorrupt reports undecodable bytes in the raft log, a snapshot or a command.
var ErrCorrupt = errors.New("raftmeta: corrupt data")

// keyCurrentTerm is the StableStore key under which raft keeps its current
// term. It is part of raft's on-disk contract (every existing store holds
// it under this name).
var keyCurrentTerm = []byte("CurrentTerm")

// logFormatV1 is the version byte of a stored raft.Log (encodeLog).
const logFormatV1 byte = 1

var (
	// errStoreFailed marks a store that stopped accepting writes after a
	// failed write or sync (its file tail is unknown until the next Open).
	errStoreFailed = errors.New("raft log store failed earlier")
	// errNotContiguous: a write would leave a gap in raft's log, which this
	// store (a MonotonicLogStore) never holds.
	errNotContiguous = errors.New("raft log would not be contiguous")
	errStoreClosed   = errors.New("raft log store closed")
)

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
	binary.BigEndian.PutUint32(b[start+4:], crc32.Checksum(body, crc32c))
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
	if crc32.Checksum(body, crc32c) != binary.BigEndian.Uint32(b[4:]) {
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

// mkdirAllSynced creates dir and any missing parents, then syncs the parent
// of each directory it created so the new entries are durable.
func mkdirAllSynced(fs vfs.FS, dir string) error {
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := fs.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stat %s: %w", d, err)
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, d := range created {
		if err := syncDir(fs, filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// rewriteStep names the points of a file rewrite, for crash tests.
type rewriteStep int

const (
	stepTempWritten rewriteStep = iota // temp file written, not synced
	stepTempSynced                     // temp file synced and closed
	stepRenamed                        // renamed over raft.wal, directory not synced
	stepDirSynced                      // rename durable
)

// writeWALFile replaces dir/raft.wal by content: temp file, fsync, rename,
// fsync of the directory. A crash at any point leaves the old file or the
// new one, whole. renamed reports whether the rename happened, after which
// the caller must not append to the old file any more.
func writeWALFile(fs vfs.FS, dir string, content []byte, hook func(rewriteStep)) (renamed bool, err error) {
	tmp, path := fs.PathJoin(dir, walTempName), fs.PathJoin(dir, walFileName)
	f, err := fs.Create(tmp)
	if err != nil {
		return false, fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.Write(bytes.Clone(content)); err != nil { // vfs.File.Write may scribble on its input
		f.Close()
		return false, fmt.Errorf("write %s: %w", tmp, err)
	}
	hook(stepTempWritten)
	if err := f.Sync(); err != nil {
		f.Close()
		return false, fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("close %s: %w", tmp, err)
	}
	hook(stepTempSynced)
	if err := fs.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("rename %s: %w", tmp, err)
	}
	hook(stepRenamed)
	if err := syncDir(fs, dir); err != nil {
		return true, err
	}
	hook(stepDirSynced)
	return true, nil
}

// fileStore is raft's LogStore and StableStore on one append-only file
// (format above), with the whole live log in memory: raft's metadata log is
// small (snapshots every 4096 entries, 1024 kept), and a restart reads one
// file instead of opening a database.
//
// Writers (raft's main loop, its snapshot goroutine calling DeleteRange)
// serialise on wmu, which also owns the file. The state is changed under mu
// only after the record is durable, so readers never wait for an fsync and
// never see an entry that a crash could still take away.
type fileStore struct {
	fs     vfs.FS
	dir    string
	path   string
	logger *slog.Logger
	lock   io.Closer

	// lazyStable defers StableStore writes to the next synced record (a
	// lone voter; see Set). Set before raft starts, read-only after.
	lazyStable bool
	// compactMin is the file size below which the store never compacts.
	compactMin int64
	// hook is called at each step of a rewrite; tests crash there.
	hook func(rewriteStep)

	wmu     sync.Mutex
	f       vfs.File // nil once closed
	size    int64    // bytes in f
	pending []byte   // batch ops of lazy Sets not yet on disk
	failed  error    // sticky: the first write or sync error

	mu sync.RWMutex
	st *walState // mutated under wmu and mu; read under either
}

var (
	_ raft.LogStore          = (*fileStore)(nil)
	_ raft.StableStore       = (*fileStore)(nil)
	_ raft.MonotonicLogStore = (*fileStore)(nil)
)

// openFileStore opens (creating if needed) the raft store in dir: it
// replays dir/raft.wal, cutting a torn tail, or migrates a pebble store a
// previous version left in dir, or starts an empty file. fs nil means the
// real file system; tests pass a strict in-memory FS to simulate crashes.
func openFileStore(dir string, fs vfs.FS, logger *slog.Logger) (*fileStore, error) {
	return openFileStoreHook(dir, fs, logger, func(rewriteStep) {})
}

func openFileStoreHook(dir string, fs vfs.FS, logger *slog.Logger, hook func(rewriteStep)) (_ *fileStore, retErr error) {
	if logger == nil {
		logger = discardLogger()
	}
	if fs == nil {
		fs = vfs.Default
	}
	// Sync the entries of any directory we create, so a crash right after
	// the first start cannot lose the directory with the file in it.
	if err := mkdirAllSynced(fs, dir); err != nil {
		return nil, err
	}
	s := &fileStore{
		fs:         fs,
		dir:        dir,
		path:       fs.PathJoin(dir, walFileName),
		logger:     logger,
		compactMin: defaultCompactMin,
		hook:       hook,
	}
	lock, err := fs.Lock(fs.PathJoin(dir, walLockName))
	if err != nil {
		return nil, fmt.Errorf("lock raft log store %s: %w", dir, err)
	}
	s.lock = lock
	defer func() {
		if retErr != nil {
			if s.f != nil {
				s.f.Close()
			}
			lock.Close()
		}
	}()
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if slices.Contains(names, walTempName) {
		// A rewrite that crashed before its rename; raft.wal is whole.
		if err := fs.Remove(fs.PathJoin(dir, walTempName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove %s: %w", walTempName, err)
		}
	}
	switch {
	case slices.Contains(names, walFileName):
		if err := s.load(); err != nil {
			return nil, err
		}
		if hasPebbleFiles(names) {
			// A migration that crashed after its rename; finish it.
			if err := removePebbleFiles(fs, dir, names); err != nil {
				return nil, err
			}
		}
	case hasPebbleDB(names):
		if err := s.migrate(); err != nil {
			return nil, err
		}
	default:
		s.st = newWALState()
		if err := s.install(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// load replays raft.wal and keeps it open for appending.
func (s *fileStore) load() error {
	f, err := s.fs.OpenReadWrite(s.path)
	if err != nil {
		return fmt.Errorf("open raft log %s: %w", s.path, err)
	}
	s.f = f
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat raft log %s: %w", s.path, err)
	}
	data := make([]byte, fi.Size())
	if n, err := f.ReadAt(data, 0); n != len(data) {
		return fmt.Errorf("read raft log %s: %d of %d bytes: %w", s.path, n, len(data), err)
	}
	st, valid, err := replayWAL(data, s.path)
	if err != nil {
		return err
	}
	s.st, s.size = st, int64(valid)
	if valid == len(data) {
		return nil
	}
	// Appending after the torn bytes would bury them mid-file, where the
	// next Open would take them for corruption. vfs.File cannot truncate;
	// a rewrite of the replayed state does the same, crash-safely, and
	// happens only after a crash.
	// A bad record with a good one after it is refused by replayWAL: that
	// is corruption in the middle, never cut. What is left is the tail.
	what, torn := describeTail(data[valid:])
	attrs := []any{"file", s.path, "offset", valid, "bytes", len(data) - valid, "last_good_index", st.lastIndex()}
	if torn {
		s.logger.Warn("raft log ends in "+what+"; cutting it (it was never acknowledged)", attrs...)
	} else {
		s.logger.Error("raft log ends in "+what+"; cutting it: if it held acknowledged entries after last_good_index, this node lost them and raft must restore them from a peer", attrs...)
	}
	return s.install()
}

// migrate copies the pebble store of an older version into a new raft.wal
// and then removes the pebble files. Until the rename of raft.wal is
// durable, the pebble store stays authoritative and untouched (apart from
// pebble's own open), so a crash just migrates again.
func (s *fileStore) migrate() error {
	start := time.Now()
	ps, err := openPebbleStore(s.dir, s.fs, s.logger)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	st, err := ps.export()
	if cerr := ps.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close pebble raft store %s: %w", s.dir, cerr)
	}
	if err != nil {
		return fmt.Errorf("migrate raft log store %s: %w", s.dir, err)
	}
	s.st = st
	if err := s.install(); err != nil {
		return fmt.Errorf("migrate raft log store %s: %w", s.dir, err)
	}
	// List now: pebble's open wrote new files.
	names, err := s.fs.List(s.dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.dir, err)
	}
	if err := removePebbleFiles(s.fs, s.dir, names); err != nil {
		return err
	}
	s.logger.Info("migrated raft log store from pebble", "dir", s.dir, "entries", len(st.entries),
		"first", st.first, "stable_keys", len(st.stable), "took", time.Since(start))
	return nil
}

// install replaces raft.wal by a file holding exactly s.st and switches
// appends to it. The caller holds wmu (or is Open).
func (s *fileStore) install() error {
	content, err := appendWALFile(nil, s.st)
	if err != nil {
		return err
	}
	renamed, err := writeWALFile(s.fs, s.dir, content, s.hook)
	if err != nil {
		if renamed {
			s.fail(err)
		}
		return err
	}
	f, err := s.fs.OpenReadWrite(s.path)
	if err != nil {
		err = fmt.Errorf("open raft log %s: %w", s.path, err)
		s.fail(err)
		return err
	}
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.size = f, int64(len(content))
	s.pending = s.pending[:0] // the lazy Sets are in s.st, so now on disk
	return nil
}

// pebble's file names (v1.1): CURRENT, LOCK, MANIFEST-*, OPTIONS-*,
// marker.*, *.log, *.sst, temporary *.dbtmp.
func isPebbleFile(name string) bool {
	switch {
	case name == "CURRENT", name == "LOCK",
		strings.HasPrefix(name, "MANIFEST-"), strings.HasPrefix(name, "OPTIONS-"),
		strings.HasPrefix(name, "marker."),
		strings.HasSuffix(name, ".log"), strings.HasSuffix(name, ".sst"),
		strings.HasSuffix(name, ".dbtmp"):
		return true
	}
	return false
}

func hasPebbleFiles(names []string) bool { return slices.ContainsFunc(names, isPebbleFile) }

// hasPebbleDB: a pebble store that may hold data. Without CURRENT (or its
// marker) pebble never acknowledged a write.
func hasPebbleDB(names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool {
		return n == "CURRENT" || strings.HasPrefix(n, "marker.manifest.")
	})
}

func removePebbleFiles(fs vfs.FS, dir string, names []string) error {
	removed := 0
	for _, n := range names {
		if !isPebbleFile(n) {
			continue
		}
		if err := fs.Remove(fs.PathJoin(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove migrated pebble file %s: %w", fs.PathJoin(dir, n), err)
		}
		removed++
	}
	if removed == 0 {
		return nil
	}
	return syncDir(fs, dir)
}

// fail makes the store refuse further writes: after a failed write or sync
// the file's tail is unknown (and a failed fsync may have dropped dirty
// pages), so appending more could bury a torn record mid-file. The next
// Open cuts the tail.
func (s *fileStore) fail(err error) {
	if s.failed == nil {
		s.failed = err
		s.logger.Error("raft log store failed, refusing further writes", "file", s.path, "err", err)
	}
}

func (s *fileStore) writable() error {
	if s.f == nil {
		return errStoreClosed
	}
	if s.failed != nil {
		return fmt.Errorf("%w: %w", errStoreFailed, s.failed)
	}
	return nil
}

// newRecord starts a record carrying the pending lazy Sets.
func (s *fileStore) newRecord(size int) []byte {
	rec := make([]byte, 0, recHeaderLen+len(s.pending)+size)
	rec, _ = beginRecord(rec)
	return append(rec, s.pending...)
}

// commit appends rec (built by newRecord) with one write and syncs it.
// The caller holds wmu and applies the record to s.st after this returns.
func (s *fileStore) commit(rec []byte) error {
	if err := finishRecord(rec, 0); err != nil {
		return err
	}
	if _, err := s.f.WriteAt(rec, s.size); err != nil {
		err = fmt.Errorf("write raft log %s: %w", s.path, err)
		s.fail(err)
		return err
	}
	if err := s.f.SyncData(); err != nil {
		err = fmt.Errorf("sync raft log %s: %w", s.path, err)
		s.fail(err)
		return err
	}
	s.size += int64(len(rec))
	s.pending = s.pending[:0]
	return nil
}

// maybeCompact rewrites the file with only the live state once at least
// three quarters of it is dead (deleted entries, old values): a rewrite
// then costs at most a third of the bytes appended since the last one, and
// Open never reads more than four times the live state. Below compactMin
// the file is cheap to read and rewriting is not worth its fsyncs. The
// caller holds wmu and has just made its record durable; a failed rewrite
// before its rename keeps the old file, which is whole.
func (s *fileStore) maybeCompact() {
	if s.size < s.compactMin || s.size < compactRatio*s.st.live {
		return
	}
	before := s.size
	start := time.Now()
	if err := s.install(); err != nil {
		s.logger.Warn("raft log compaction failed", "file", s.path, "err", err)
		return
	}
	s.logger.Debug("compacted raft log", "file", s.path, "from", before, "to", s.size, "took", time.Since(start))
}

// Close writes the pending lazy Sets, if any, and closes the file. Only the
// first call does anything.
func (s *fileStore) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.f == nil {
		return nil
	}
	var errs []error
	if len(s.pending) > 0 && s.failed == nil {
		errs = append(errs, s.commit(s.newRecord(0)))
	}
	if err := s.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close raft log %s: %w", s.path, err))
	}
	s.f = nil
	if err := s.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("unlock raft log store %s: %w", s.dir, err))
	}
	return errors.Join(errs...)
}

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
