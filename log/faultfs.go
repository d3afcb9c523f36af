package log

import (
	"os"
	"sync"
)

// FaultFS wraps an FS and injects errors into file writes and fsyncs while
// armed, as a full or failing disk does: a failing write may first write a
// part of its bytes (a short write), as write(2) does when the disk fills
// up in the middle. It exists for tests in this and other packages.
type FaultFS struct {
	FS
	mu       sync.Mutex
	writeErr error
	syncErr  error
	partial  bool
	writes   int // failed writes so far
	syncs    int // failed fsyncs so far
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
