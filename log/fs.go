package log

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
)

// FS is the narrow file-system interface the log needs. It is deliberately
// small (kfake's shape, plus Truncate and Sync that pebble's vfs.File lacks)
// so that a crash-simulating implementation (MemFS) can stand in for os.
type FS interface {
	// OpenFile opens or creates a file; flag uses the os.O_* constants.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
	RemoveAll(path string) error
	Rename(oldpath, newpath string) error
	MkdirAll(path string, perm os.FileMode) error
	// ReadDir returns the names in a directory, sorted.
	ReadDir(path string) ([]string, error)
	// SyncDir makes creations, renames and removals in path durable.
	SyncDir(path string) error
}

// File is an open file. Writes are positional so that readers and the single
// writer never share a file offset.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	Truncate(size int64) error
	Sync() error
	Size() (int64, error)
}

// OSFS is the FS backed by the operating system.
type OSFS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// OpenFile implements FS.
func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// RemoveAll implements FS.
func (OSFS) RemoveAll(path string) error { return os.RemoveAll(path) }

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(path string, perm os.FileMode) error { return os.MkdirAll(path, perm) }

// ReadDir implements FS.
func (OSFS) ReadDir(path string) ([]string, error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

// SyncDir implements FS.
func (OSFS) SyncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
