package log

import (
	"os"
	"sync"
)

// FaultFS wraps an FS and injects errors into file writes and fsyncs while
// armed, as a full or failing disk does: a failing write may first write a
// part of its bytes (a short write), as write(2) does when the disk fills
// up in the middle. It also fails reads of chosen files (a bad sector:
// EIO) and, for chosen paths, every call that checks permissions (open,
// create, rename, remove, mkdir, readdir), as a directory whose mode was
// changed underneath does to a process that is not root: files already
// open keep working. It exists for tests in this and other packages.
type FaultFS struct {
	FS
	mu       sync.Mutex
	writeErr error
	syncErr  error
	partial  bool
	writes   int // failed writes so far
	syncs    int // failed fsyncs so far

	readErr   error
	readMatch func(name string) bool
	reads     int // failed reads so far
	permErr   error
	permMatch func(path string) bool
	perms     int // refused calls so far
}

// FailReads makes every read of a file whose name match accepts fail with
// err (nil = stop failing). Files opened before the call are affected too.
func (f *FaultFS) FailReads(err error, match func(name string) bool) {
	f.mu.Lock()
	f.readErr, f.readMatch = err, match
	f.mu.Unlock()
}

// DenyPaths makes OpenFile, Remove, RemoveAll, Rename, MkdirAll, ReadDir
// and SyncDir fail with err (EACCES) for every path match accepts (nil =
// allow again). Files already open are not affected.
func (f *FaultFS) DenyPaths(err error, match func(path string) bool) {
	f.mu.Lock()
	f.permErr, f.permMatch = err, match
	f.mu.Unlock()
}

// FailedReads returns how many reads failed and how many calls were
// refused by DenyPaths so far.
func (f *FaultFS) FailedReads() (reads, denied int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads, f.perms
}

// denied reports the DenyPaths error for op on the paths, counting it.
func (f *FaultFS) denied(op string, paths ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.permErr == nil {
		return nil
	}
	for _, p := range paths {
		if f.permMatch(p) {
			f.perms++
			return &os.PathError{Op: op, Path: p, Err: f.permErr}
		}
	}
	return nil
}

// Remove implements FS.
func (f *FaultFS) Remove(name string) error {
	if err := f.denied("remove", name); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

// RemoveAll implements FS.
func (f *FaultFS) RemoveAll(path string) error {
	if err := f.denied("removeall", path); err != nil {
		return err
	}
	return f.FS.RemoveAll(path)
}

// Rename implements FS.
func (f *FaultFS) Rename(oldpath, newpath string) error {
	if err := f.denied("rename", oldpath, newpath); err != nil {
		return err
	}
	return f.FS.Rename(oldpath, newpath)
}

// MkdirAll implements FS.
func (f *FaultFS) MkdirAll(path string, perm os.FileMode) error {
	if err := f.denied("mkdir", path); err != nil {
		return err
	}
	return f.FS.MkdirAll(path, perm)
}

// ReadDir implements FS.
func (f *FaultFS) ReadDir(path string) ([]string, error) {
	if err := f.denied("readdir", path); err != nil {
		return nil, err
	}
	return f.FS.ReadDir(path)
}

// SyncDir implements FS.
func (f *FaultFS) SyncDir(path string) error {
	if err := f.denied("open", path); err != nil {
		return err
	}
	return f.FS.SyncDir(path)
}

// NewFaultFS wraps fsys (nil = the OS).
func NewFaultFS(fsys FS) *FaultFS {
	if fsys == nil {
		fsys = OSFS{}
	}
	return &FaultFS{FS: fsys}
}

// FailWrites makes every file write fail with err (nil = stop failing).
// With partial, a failing write first writes half of its bytes.
func (f *FaultFS) FailWrites(err error, partial bool) {
	f.mu.Lock()
	f.writeErr, f.partial = err, partial
	f.mu.Unlock()
}

// FailSyncs makes every file fsync fail with err (nil = stop failing).
func (f *FaultFS) FailSyncs(err error) {
	f.mu.Lock()
	f.syncErr = err
	f.mu.Unlock()
}

// Failed returns how many writes and fsyncs failed so far.
func (f *FaultFS) Failed() (writes, syncs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, f.syncs
}

// OpenFile implements FS.
func (f *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := f.denied("open", name); err != nil {
		return nil, err
	}
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

type faultFile struct {
	File
	fs   *FaultFS
	name string
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	err, partial := f.fs.writeErr, f.fs.partial
	if err != nil {
		f.fs.writes++
	}
	f.fs.mu.Unlock()
	if err == nil {
		return f.File.WriteAt(p, off)
	}
	n := 0
	if partial && len(p) > 1 {
		n, _ = f.File.WriteAt(p[:len(p)/2], off)
	}
	return n, &os.PathError{Op: "write", Path: f.name, Err: err}
}

func (f *faultFile) Sync() error {
	f.fs.mu.Lock()
	err := f.fs.syncErr
	if err != nil {
		f.fs.syncs++
	}
	f.fs.mu.Unlock()
	if err != nil {
		return &os.PathError{Op: "fsync", Path: f.name, Err: err}
	}
	return f.File.Sync()
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	err := f.fs.readErr
	if err != nil && !f.fs.readMatch(f.name) {
		err = nil
	}
	if err != nil {
		f.fs.reads++
	}
	f.fs.mu.Unlock()
	if err != nil {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	return f.File.ReadAt(p, off)
}
