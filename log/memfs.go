package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// ErrCrashed is returned by every MemFS operation after its crash point.
var ErrCrashed = errors.New("memfs: simulated crash")

// MemFS is an in-memory FS that can simulate a machine crash, following
// pebble's CrashClone semantics: data written to a file but not synced may
// vanish or be torn (a prefix survives, possibly followed by garbage), and a
// directory entry created, renamed or removed since the directory's last
// SyncDir may revert. It exists for tests in this and other packages.
type MemFS struct {
	mu   sync.Mutex
	root *memDir

	// crash point: after opsLeft mutating operations the file system takes
	// a crash image and then fails every operation.
	armed   bool
	opsLeft int
	rng     *rand.Rand
	image   *MemFS
	dead    bool
	ops     int
}

type memDir struct {
	entries map[string]any // *memFile or *memDir
	synced  map[string]any
}

type memFile struct {
	data   []byte
	synced []byte
}

func newMemDir() *memDir {
	return &memDir{entries: map[string]any{}, synced: map[string]any{}}
}

// NewMemFS returns an empty in-memory file system whose root is durable.
func NewMemFS() *MemFS { return &MemFS{root: newMemDir()} }

// CrashAfter arms the crash point: the n-th mutating operation from now
// (write, truncate, sync, create, rename, remove, mkdir) does not happen;
// instead the file system records a crash image (see Crashed) and fails
// that and every later operation with ErrCrashed.
func (m *MemFS) CrashAfter(n int, rng *rand.Rand) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed, m.opsLeft, m.rng = true, n, rng
}

// Ops returns how many mutating operations were done so far.
func (m *MemFS) Ops() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

// Crashed returns the crash image once the crash point was reached, else nil.
func (m *MemFS) Crashed() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.image
}

// CrashClone returns what a machine would find on disk if it lost power now.
// rng decides which unsynced data survives; nil keeps only synced data.
func (m *MemFS) CrashClone(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crashCloneLocked(rng)
}

func (m *MemFS) crashCloneLocked(rng *rand.Rand) *MemFS {
	return &MemFS{root: cloneDir(m.root, rng)}
}

func cloneDir(d *memDir, rng *rand.Rand) *memDir {
	src := d.synced
	// Directory metadata may have been written back without an fsync.
	if rng != nil && rng.IntN(3) == 0 {
		src = d.entries
	}
	nd := newMemDir()
	names := make([]string, 0, len(src))
	for name := range src {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic use of rng
	for _, name := range names {
		n := src[name]
		var c any
		switch n := n.(type) {
		case *memFile:
			c = cloneFile(n, rng)
		case *memDir:
			c = cloneDir(n, rng)
		}
		nd.entries[name] = c
		nd.synced[name] = c
	}
	return nd
}

func cloneFile(f *memFile, rng *rand.Rand) *memFile {
	var content []byte
	switch {
	case rng == nil:
		content = f.synced
	default:
		switch rng.IntN(3) {
		case 0:
			content = f.synced
		case 1:
			content = f.data
		default:
			common := 0
			for common < len(f.data) && common < len(f.synced) && f.data[common] == f.synced[common] {
				common++
			}
			k := common + rng.IntN(len(f.data)-common+1)
			content = append([]byte(nil), f.data[:k]...)
			if k > common && rng.IntN(2) == 0 {
				// a torn sector: some of the unsynced bytes are garbage
				for i := 0; i < 1+rng.IntN(4); i++ {
					content[common+rng.IntN(k-common)] = byte(rng.Uint32())
				}
			}
		}
	}
	c := append([]byte(nil), content...)
	return &memFile{data: c, synced: append([]byte(nil), c...)}
}

// opLocked counts a mutating operation against the crash point.
func (m *MemFS) opLocked() error {
	if m.dead {
		return ErrCrashed
	}
	m.ops++
	if m.armed {
		m.opsLeft--
		if m.opsLeft <= 0 {
			m.image = m.crashCloneLocked(m.rng)
			m.dead = true
			return ErrCrashed
		}
	}
	return nil
}

func splitPath(p string) []string {
	p = filepath.ToSlash(filepath.Clean(p))
	p = strings.Trim(p, "/")
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

func (m *MemFS) dirLocked(p string) (*memDir, error) {
	d := m.root
	for _, part := range splitPath(p) {
		n, ok := d.entries[part]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		sub, ok := n.(*memDir)
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: p, Err: errors.New("not a directory")}
		}
		d = sub
	}
	return d, nil
}

func (m *MemFS) parentLocked(p string) (*memDir, string, error) {
	parts := splitPath(p)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
	}
	d, err := m.dirLocked(strings.Join(parts[:len(parts)-1], "/"))
	return d, parts[len(parts)-1], err
}

// OpenFile implements FS.
func (m *MemFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return nil, ErrCrashed
	}
	d, base, err := m.parentLocked(name)
	if err != nil {
		return nil, err
	}
	n, ok := d.entries[base]
	if ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	if !ok {
		if flag&os.O_CREATE == 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		if err := m.opLocked(); err != nil {
			return nil, err
		}
		n = &memFile{}
		d.entries[base] = n
	}
	f, isFile := n.(*memFile)
	if !isFile {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
	}
	if flag&os.O_TRUNC != 0 && len(f.data) > 0 {
		if err := m.opLocked(); err != nil {
			return nil, err
		}
		f.data = f.data[:0:0]
	}
	return &memHandle{fs: m, f: f, name: name, readOnly: flag&(os.O_WRONLY|os.O_RDWR) == 0}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return ErrCrashed
	}
	d, base, err := m.parentLocked(name)
	if err != nil {
		return err
	}
	n, ok := d.entries[base]
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if sub, isDir := n.(*memDir); isDir && len(sub.entries) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
	}
	if err := m.opLocked(); err != nil {
		return err
	}
	delete(d.entries, base)
	return nil
}

// RemoveAll implements FS.
func (m *MemFS) RemoveAll(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return ErrCrashed
	}
	d, base, err := m.parentLocked(path)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	if _, ok := d.entries[base]; !ok {
		return nil
	}
	if err := m.opLocked(); err != nil {
		return err
	}
	delete(d.entries, base)
	return nil
}

// Rename implements FS.
func (m *MemFS) Rename(oldpath, newpath string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return ErrCrashed
	}
	od, obase, err := m.parentLocked(oldpath)
	if err != nil {
		return err
	}
	nd, nbase, err := m.parentLocked(newpath)
	if err != nil {
		return err
	}
	n, ok := od.entries[obase]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldpath, Err: fs.ErrNotExist}
	}
	if err := m.opLocked(); err != nil {
		return err
	}
	delete(od.entries, obase)
	nd.entries[nbase] = n
	return nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(path string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return ErrCrashed
	}
	d := m.root
	for _, part := range splitPath(path) {
		n, ok := d.entries[part]
		if !ok {
			if err := m.opLocked(); err != nil {
				return err
			}
			sub := newMemDir()
			d.entries[part] = sub
			d = sub
			continue
		}
		sub, isDir := n.(*memDir)
		if !isDir {
			return &fs.PathError{Op: "mkdir", Path: path, Err: errors.New("not a directory")}
		}
		d = sub
	}
	return nil
}

// ReadDir implements FS.
func (m *MemFS) ReadDir(path string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return nil, ErrCrashed
	}
	d, err := m.dirLocked(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(d.entries))
	for name := range d.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// SyncDir implements FS.
func (m *MemFS) SyncDir(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return ErrCrashed
	}
	d, err := m.dirLocked(path)
	if err != nil {
		return err
	}
	if err := m.opLocked(); err != nil {
		return err
	}
	d.synced = make(map[string]any, len(d.entries))
	for k, v := range d.entries {
		d.synced[k] = v
	}
	return nil
}

type memHandle struct {
	fs       *MemFS
	f        *memFile
	name     string
	readOnly bool
	closed   bool
}

func (h *memHandle) ReadAt(p []byte, off int64) (int, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.fs.dead {
		return 0, ErrCrashed
	}
	if h.closed {
		return 0, fs.ErrClosed
	}
	if off < 0 {
		return 0, fs.ErrInvalid
	}
	if off >= int64(len(h.f.data)) {
		return 0, io.EOF
	}
	n := copy(p, h.f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (h *memHandle) WriteAt(p []byte, off int64) (int, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return 0, fs.ErrClosed
	}
	if h.readOnly {
		return 0, fmt.Errorf("write %s: read-only handle", h.name)
	}
	if err := h.fs.opLocked(); err != nil {
		return 0, err
	}
	end := off + int64(len(p))
	if end > int64(len(h.f.data)) {
		if end > int64(cap(h.f.data)) {
			nd := make([]byte, end, max(end, 2*int64(cap(h.f.data))))
			copy(nd, h.f.data)
			h.f.data = nd
		} else {
			old := len(h.f.data)
			h.f.data = h.f.data[:end]
			clear(h.f.data[old:])
		}
	}
	copy(h.f.data[off:], p)
	return len(p), nil
}

func (h *memHandle) Truncate(size int64) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return fs.ErrClosed
	}
	if err := h.fs.opLocked(); err != nil {
		return err
	}
	if size <= int64(len(h.f.data)) {
		// copy so that the synced image never aliases a shrunk-then-regrown buffer
		h.f.data = append([]byte(nil), h.f.data[:size]...)
	} else {
		h.f.data = append(h.f.data, make([]byte, size-int64(len(h.f.data)))...)
	}
	return nil
}

func (h *memHandle) Sync() error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return fs.ErrClosed
	}
	if err := h.fs.opLocked(); err != nil {
		return err
	}
	h.f.synced = append(h.f.synced[:0:0], h.f.data...)
	return nil
}

func (h *memHandle) Size() (int64, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.fs.dead {
		return 0, ErrCrashed
	}
	return int64(len(h.f.data)), nil
}

func (h *memHandle) Close() error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return fs.ErrClosed
	}
	h.closed = true
	return nil
}
