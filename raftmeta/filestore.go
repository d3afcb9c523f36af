package raftmeta

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
)

// compactRatio and defaultCompactMin decide when the file is rewritten
// with only the live state (fileStore.maybeCompact).
const (
	compactRatio      = 4
	defaultCompactMin = 1 << 20
)

var (
	// errStoreFailed marks a store that stopped accepting writes after a
	// failed write or sync (its file tail is unknown until the next Open).
	errStoreFailed = errors.New("raft log store failed earlier")
	// errNotContiguous: a write would leave a gap in raft's log, which this
	// store (a MonotonicLogStore) never holds.
	errNotContiguous = errors.New("raft log would not be contiguous")
	errStoreClosed   = errors.New("raft log store closed")
)

// fileStore is raft's LogStore and StableStore on one append-only file
// (format in walformat.go), with the whole live log in memory (walState):
// raft's metadata log is small (snapshots every 4096 entries, 1024 kept),
// and a restart reads one file instead of opening a database. This file
// opens, appends and rewrites it; filestore_raft.go is raft's interface,
// filestore_migrate.go the move from pebble, filestore_bootstrap.go the
// first start.
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
