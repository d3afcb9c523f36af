package raftmeta

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
)

var testWAL = filepath.Join(testDir, walFileName)

func writeTestFile(t testing.TB, fs vfs.FS, path string, data []byte) {
	t.Helper()
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Clone(data)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syncDir(fs, filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// canonical is the store's state as the bytes of a rewrite: equal states
// give equal bytes.
func canonical(t testing.TB, s *fileStore) []byte {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, err := appendWALFile(nil, s.st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func storeRange(t testing.TB, s raft.LogStore, first, last uint64) {
	t.Helper()
	var logs []*raft.Log
	for i := first; i <= last; i++ {
		logs = append(logs, testLog(i))
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatalf("StoreLogs [%d, %d]: %v", first, last, err)
	}
}

// checkWhole asserts the file on disk replays completely: no torn tail.
func checkWhole(t testing.TB, fs vfs.FS) {
	t.Helper()
	data := readTestFile(t, fs, testWAL)
	if _, valid, err := replayWAL(data, testWAL); err != nil || valid != len(data) {
		t.Fatalf("raft.wal replays %d of %d bytes, %v", valid, len(data), err)
	}
	names, err := fs.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, walTempName) {
		t.Fatalf("temp file left behind: %v", names)
	}
}

// TestFileStoreTornTail cuts the file at every byte of its last record: the
// store opens with exactly the records before it, the torn bytes are gone
// from disk, and it keeps working.
func TestFileStoreTornTail(t *testing.T) {
	lastOps := []struct {
		name string
		op   func(s *fileStore) error
	}{
		{"entries batch", func(s *fileStore) error {
			return s.StoreLogs([]*raft.Log{testLog(21), testLog(22), testLog(23), testLog(24)})
		}},
		{"overwrite tail", func(s *fileStore) error {
			l := testLog(19)
			l.Term = 99
			return s.StoreLogs([]*raft.Log{l})
		}},
		{"delete head", func(s *fileStore) error { return s.DeleteRange(1, 4) }},
		{"delete tail", func(s *fileStore) error { return s.DeleteRange(18, 20) }},
		{"set", func(s *fileStore) error { return s.SetUint64(keyCurrentTerm, 9) }},
		{"lazy sets then entries", func(s *fileStore) error {
			s.lazyStable = true
			if err := s.SetUint64([]byte("LastVoteTerm"), 9); err != nil {
				return err
			}
			if err := s.Set([]byte("LastVoteCand"), []byte("2")); err != nil {
				return err
			}
			return s.StoreLog(testLog(21))
		}},
	}
	for _, tc := range lastOps {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			s := mustOpenFile(t, fs)
			storeRange(t, s, 1, 10)
			storeRange(t, s, 11, 20)
			if err := s.SetUint64(keyCurrentTerm, 5); err != nil {
				t.Fatal(err)
			}
			before, wantBefore := readTestFile(t, fs, testWAL), canonical(t, s)
			if err := tc.op(s); err != nil {
				t.Fatal(err)
			}
			after, wantAfter := readTestFile(t, fs, testWAL), canonical(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if len(after) <= len(before) {
				t.Fatalf("last op wrote nothing (%d -> %d bytes)", len(before), len(after))
			}
			variants := map[string][]byte{}
			for cut := len(before); cut <= len(after); cut++ {
				variants[fmt.Sprintf("cut at %d", cut)] = after[:cut]
			}
			// A crash may also leave the file longer than what was written.
			variants["zero-filled tail"] = append(bytes.Clone(before), make([]byte, len(after)-len(before))...)
			variants["zeros after the record"] = append(bytes.Clone(after), make([]byte, 100)...)
			bad := bytes.Clone(after)
			bad[len(bad)-1] ^= 0x55
			variants["last record damaged"] = bad
			for name, data := range variants {
				want := wantBefore
				if bytes.HasPrefix(data, after) {
					want = wantAfter
				}
				fs := vfs.NewMem()
				writeTestFile(t, fs, testWAL, data)
				s, err := openFileStore(testDir, fs, nil)
				if err != nil {
					t.Fatalf("%s: open: %v", name, err)
				}
				if got := canonical(t, s); !bytes.Equal(got, want) {
					t.Fatalf("%s: state after open differs from the state before the torn record", name)
				}
				checkWhole(t, fs)
				last, _ := s.LastIndex()
				storeRange(t, s, last+1, last+1)
				want = canonical(t, s)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				s = mustOpenFile(t, fs)
				if got := canonical(t, s); !bytes.Equal(got, want) {
					t.Fatalf("%s: append after the cut lost on reopen", name)
				}
				s.Close()
			}
		})
	}
}

// TestFileStoreMidFileCorruption: a damaged byte in any record but the last
// is corruption, never a torn tail: Open fails and names file and offset.
func TestFileStoreMidFileCorruption(t *testing.T) {
	fs := vfs.NewMem()
	s := mustOpenFile(t, fs)
	var ends []int // file length after each record
	step := func(op func() error) {
		t.Helper()
		if err := op(); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, int(s.size))
	}
	ends = append(ends, int(s.size))
	step(func() error { return s.SetUint64(keyCurrentTerm, 1) })
	step(func() error { return s.StoreLogs([]*raft.Log{testLog(1), testLog(2), testLog(3)}) })
	step(func() error { return s.DeleteRange(1, 1) })
	step(func() error { return s.StoreLog(testLog(4)) })
	step(func() error { return s.Set([]byte("LastVoteCand"), []byte("1")) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	file := readTestFile(t, fs, testWAL)
	if len(file) != ends[len(ends)-1] {
		t.Fatalf("file is %d bytes, store wrote %d", len(file), ends[len(ends)-1])
	}
	lastStart := ends[len(ends)-2]
	for off := 0; off < lastStart; off++ {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			data := bytes.Clone(file)
			data[off] ^= flip
			fs := vfs.NewMem()
			writeTestFile(t, fs, testWAL, data)
			s, err := openFileStore(testDir, fs, nil)
			if err == nil {
				s.Close()
				t.Fatalf("byte %d ^ %#x: Open succeeded", off, flip)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), testWAL) {
				t.Fatalf("byte %d ^ %#x: Open = %v, want ErrCorrupt naming %s", off, flip, err, testWAL)
			}
			if off >= len(walMagic) && !strings.Contains(err.Error(), "offset") {
				t.Fatalf("byte %d: error %q names no offset", off, err)
			}
			// Nothing was cut: the damaged file is still there, unchanged.
			if got := readTestFile(t, fs, testWAL); !bytes.Equal(got, data) {
				t.Fatalf("byte %d: a failed Open changed the file", off)
			}
		}
	}
}

// TestFileStoreCorruptRecords: records with a good checksum that we never
// write are corruption, wherever they are.
func TestFileStoreCorruptRecords(t *testing.T) {
	rec := func(typ byte, ops ...[]byte) []byte {
		b, start := beginRecord(nil)
		b[start+8] = typ
		for _, op := range ops {
			b = append(b, op...)
		}
		if err := finishRecord(b, start); err != nil {
			t.Fatal(err)
		}
		return b
	}
	entries := func(first uint64, vals ...[]byte) []byte {
		b := appendEntriesOp(nil, first, len(vals))
		for _, v := range vals {
			b = append(b, byte(len(v)))
			b = append(b, v...)
		}
		return b
	}
	good := encodeLog(nil, testLog(1))
	base := rec(recBatch, entries(1, good, good, good)) // [1, 3]
	tests := []struct {
		name string
		rec  []byte
	}{
		{"unknown record type", rec(2, appendSetOp(nil, []byte("k"), []byte("v")))},
		{"empty batch", rec(recBatch)},
		{"unknown op", rec(recBatch, []byte{9, 0, 0})},
		{"truncated op", rec(recBatch, []byte{opSet, 5, 'a'})},
		{"entries gap", rec(recBatch, entries(5, good))},
		{"entries before first", rec(recBatch, entries(0, good))},
		{"zero entries", rec(recBatch, []byte{opEntries, 4, 0})},
		{"entry count beyond record", rec(recBatch, []byte{opEntries, 4, 100, 1})},
		{"undecodable entry", rec(recBatch, entries(4, []byte{9}))},
		{"entry with trailing byte", rec(recBatch, entries(4, append(bytes.Clone(good), 0)))},
		{"delete inside the log", rec(recBatch, appendDeleteOp(nil, 2, 2))},
		{"delete outside the log", rec(recBatch, appendDeleteOp(nil, 7, 9))},
		{"delete reversed", rec(recBatch, appendDeleteOp(nil, 3, 1))},
		{"set then bad op", rec(recBatch, appendSetOp(nil, []byte("k"), nil), []byte{7})},
	}
	for _, tc := range tests {
		for _, last := range []bool{false, true} {
			data := append([]byte(walMagic), base...)
			data = append(data, tc.rec...)
			if !last {
				data = append(data, rec(recBatch, appendSetOp(nil, []byte("k"), []byte("v")))...)
			}
			fs := vfs.NewMem()
			writeTestFile(t, fs, testWAL, data)
			if s, err := openFileStore(testDir, fs, nil); !errors.Is(err, ErrCorrupt) {
				if s != nil {
					s.Close()
				}
				t.Errorf("%s (last=%v): Open = %v, want ErrCorrupt", tc.name, last, err)
			}
		}
	}
	for name, data := range map[string][]byte{
		"empty file":    nil,
		"short header":  []byte(walMagic[:5]),
		"wrong magic":   []byte("SQRXAL\x00\x01"),
		"wrong version": []byte("SQRWAL\x00\x02"),
	} {
		fs := vfs.NewMem()
		writeTestFile(t, fs, testWAL, data)
		if s, err := openFileStore(testDir, fs, nil); !errors.Is(err, ErrCorrupt) {
			if s != nil {
				s.Close()
			}
			t.Errorf("%s: Open = %v, want ErrCorrupt", name, err)
		}
	}
}

// TestFileStoreWriteRules: the store keeps raft's log contiguous and
// refuses, without writing anything, what would break that.
func TestFileStoreWriteRules(t *testing.T) {
	fs := vfs.NewMem()
	s := mustOpenFile(t, fs)
	t.Cleanup(func() { s.Close() })
	storeRange(t, s, 5, 10)

	refused := []struct {
		name string
		op   func() error
	}{
		{"non-consecutive batch", func() error { return s.StoreLogs([]*raft.Log{testLog(11), testLog(13)}) }},
		{"gap after last", func() error { return s.StoreLog(testLog(12)) }},
		{"below first", func() error { return s.StoreLog(testLog(4)) }},
		{"index 0", func() error { return s.StoreLog(&raft.Log{Index: 0}) }},
		{"delete inside", func() error { return s.DeleteRange(6, 8) }},
		{"bootstrap on a gap", func() error {
			conf, trans, cfg := bootstrapConfig()
			return s.bootstrap(conf, trans, cfg)
		}},
	}
	for _, tc := range refused {
		size := s.size
		if err := tc.op(); !errors.Is(err, errNotContiguous) {
			t.Errorf("%s: %v, want errNotContiguous", tc.name, err)
		}
		if s.size != size {
			t.Errorf("%s: wrote %d bytes", tc.name, s.size-size)
		}
		checkRange(t, s, 5, 10)
	}

	// Deletes that touch nothing write nothing.
	size := s.size
	for _, r := range [][2]uint64{{11, 20}, {1, 4}, {9, 3}} {
		if err := s.DeleteRange(r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	if s.size != size {
		t.Fatalf("no-op deletes wrote %d bytes", s.size-size)
	}

	// Overwriting a tail keeps what is before and after it.
	l := testLog(7)
	l.Term = 50
	if err := s.StoreLog(l); err != nil {
		t.Fatal(err)
	}
	var got raft.Log
	if err := s.GetLog(7, &got); err != nil || got.Term != 50 {
		t.Fatalf("GetLog(7) = %+v, %v; want term 50", got, err)
	}
	if err := s.GetLog(8, &got); err != nil || !equalLog(&got, testLog(8)) {
		t.Fatalf("GetLog(8) = %+v, %v after overwriting 7", got, err)
	}

	// A restore clears the log, and the next entry may start anywhere.
	if err := s.DeleteRange(0, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	storeRange(t, s, 100, 102)
	want := canonical(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpenFile(t, fs)
	checkRange(t, s, 100, 102)
	if !bytes.Equal(canonical(t, s), want) {
		t.Fatal("state changed across reopen")
	}
}

// TestFileStoreModel runs random operations against the store and a plain
// map, reopening (and compacting) along the way.
func TestFileStoreModel(t *testing.T) {
	fs := vfs.NewStrictMem()
	s := mustOpenFile(t, fs)
	s.compactMin = 2048
	t.Cleanup(func() { s.Close() })
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[uint64]*raft.Log{}
	stable := map[string]uint64{}
	var first, last uint64
	compactions := 0
	prevSize := s.size
	check := func() {
		t.Helper()
		f, _ := s.FirstIndex()
		l, _ := s.LastIndex()
		if f != first || l != last || len(model) != int(last-first+1) && last != 0 {
			t.Fatalf("store [%d, %d], model [%d, %d] (%d entries)", f, l, first, last, len(model))
		}
		for i := first; i <= last && last != 0; i++ {
			var got raft.Log
			if err := s.GetLog(i, &got); err != nil || !equalLog(&got, model[i]) {
				t.Fatalf("GetLog(%d) = %+v, %v; want %+v", i, got, err, model[i])
			}
		}
		for k, v := range stable {
			if got, err := s.GetUint64([]byte(k)); err != nil || got != v {
				t.Fatalf("GetUint64(%s) = %d, %v; want %d", k, got, err, v)
			}
		}
	}
	for op := 0; op < 3000; op++ {
		switch r := rng.IntN(100); {
		case r < 55: // append
			n := uint64(rng.IntN(8) + 1)
			start := last + 1
			if last == 0 {
				start = uint64(rng.IntN(50) + 1)
				first = start
			}
			var logs []*raft.Log
			for i := start; i < start+n; i++ {
				l := testLog(i)
				l.Data = bytes.Repeat([]byte{byte(i)}, rng.IntN(200))
				logs = append(logs, l)
				model[i] = l
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			last = start + n - 1
		case r < 65 && last != 0: // delete a head, as after a snapshot
			hi := first + uint64(rng.IntN(int(last-first+1)))
			if err := s.DeleteRange(0, hi); err != nil {
				t.Fatal(err)
			}
			for i := first; i <= hi; i++ {
				delete(model, i)
			}
			first = hi + 1
			if first > last {
				first, last = 0, 0
			}
		case r < 72 && last != 0: // delete a tail, as on a conflict
			lo := first + uint64(rng.IntN(int(last-first+1)))
			if err := s.DeleteRange(lo, last); err != nil {
				t.Fatal(err)
			}
			for i := lo; i <= last; i++ {
				delete(model, i)
			}
			last = lo - 1
			if last < first {
				first, last = 0, 0
			}
		case r < 90:
			k := fmt.Sprintf("k%d", rng.IntN(4))
			v := rng.Uint64()
			s.lazyStable = rng.IntN(2) == 0
			if err := s.SetUint64([]byte(k), v); err != nil {
				t.Fatal(err)
			}
			stable[k] = v
		default: // a clean restart keeps everything, lazy values included
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = mustOpenFile(t, fs)
			s.compactMin = 2048
		}
		if s.size < prevSize {
			compactions++
		}
		prevSize = s.size
		check()
	}
	if compactions == 0 {
		t.Fatalf("no compaction in the run (file %d bytes, %d live)", s.size, s.st.live)
	}
	// Compaction keeps the file within its bounds.
	if s.size > max(compactRatio*s.st.live, s.compactMin)+16<<10 {
		t.Fatalf("file %d bytes for %d live bytes", s.size, s.st.live)
	}
	t.Logf("%d compactions", compactions)
	checkWhole(t, fs)
}

// TestFileStoreCompaction: a file mostly dead is rewritten with its live
// state, which survives a crash.
func TestFileStoreCompaction(t *testing.T) {
	fs := vfs.NewStrictMem()
	s := mustOpenFile(t, fs)
	s.compactMin = 2048
	for i := uint64(1); i <= 200; i += 10 {
		storeRange(t, s, i, i+9)
	}
	if err := s.SetUint64(keyCurrentTerm, 3); err != nil {
		t.Fatal(err)
	}
	full := s.size
	if err := s.DeleteRange(1, 180); err != nil {
		t.Fatal(err)
	}
	if s.size >= full/2 {
		t.Fatalf("file %d bytes after deleting 90%% of %d: not compacted", s.size, full)
	}
	if got := int64(len(readTestFile(t, fs, testWAL))); got != s.size {
		t.Fatalf("file on disk %d bytes, store thinks %d", got, s.size)
	}
	want := canonical(t, s)
	storeRange(t, s, 201, 201) // appends go to the new file
	s = crash(t, fs, s)
	t.Cleanup(func() { s.Close() })
	checkRange(t, s, 181, 201)
	if v, err := s.GetUint64(keyCurrentTerm); err != nil || v != 3 {
		t.Fatalf("term after compaction and crash = %d, %v", v, err)
	}
	if err := s.DeleteRange(201, 201); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(canonical(t, s), want) {
		t.Fatal("state differs after compaction")
	}
	checkWhole(t, fs)
}

// TestFileStoreCompactionCrash loses power at each step of a compaction:
// the reopened store holds the old file or the new one, whole, with the
// same state either way.
func TestFileStoreCompactionCrash(t *testing.T) {
	for step := stepTempWritten; step <= stepDirSynced; step++ {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			fs := vfs.NewStrictMem()
			armed, hit := false, false
			s, err := openFileStoreHook(testDir, fs, nil, func(at rewriteStep) {
				if armed && at == step {
					// Power is lost here: nothing from now on is durable.
					fs.SetIgnoreSyncs(true)
					hit = true
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			s.compactMin = 2048
			for i := uint64(1); i <= 200; i += 10 {
				storeRange(t, s, i, i+9)
			}
			if err := s.Set([]byte("LastVoteCand"), []byte("7")); err != nil {
				t.Fatal(err)
			}
			oldSize := s.size
			armed = true
			if err := s.DeleteRange(1, 180); err != nil { // synced, then compacts
				t.Fatal(err)
			}
			if !hit || s.size >= oldSize {
				t.Fatalf("compaction did not run (hit %v, %d -> %d bytes)", hit, oldSize, s.size)
			}
			want := canonical(t, s)
			s = crash(t, fs, s)
			t.Cleanup(func() { s.Close() })
			if !bytes.Equal(canonical(t, s), want) {
				t.Fatal("state after a crash during compaction differs")
			}
			checkRange(t, s, 181, 200)
			checkWhole(t, fs)
			size := int64(len(readTestFile(t, fs, testWAL)))
			if step >= stepDirSynced && size >= oldSize || step <= stepRenamed && size < oldSize {
				t.Fatalf("crash at %v left a %d-byte file (old %d)", step, size, oldSize)
			}
		})
	}
}

func (s rewriteStep) String() string {
	return [...]string{"temp written", "temp synced", "renamed", "dir synced"}[s]
}

// faultFS fails chosen operations on demand.
type faultFS struct {
	vfs.FS
	mu   sync.Mutex
	fail map[string]bool // "write", "sync", "syncdir", "rename"
}

func newFaultFS(fs vfs.FS) *faultFS { return &faultFS{FS: fs, fail: map[string]bool{}} }

func (fs *faultFS) set(op string, on bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.fail[op] = on
}

func (fs *faultFS) err(op string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.fail[op] {
		return fmt.Errorf("injected %s failure", op)
	}
	return nil
}

func (fs *faultFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, fs: fs}, nil
}

func (fs *faultFS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, opts...)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, fs: fs}, nil
}

func (fs *faultFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, fs: fs, dir: true}, nil
}

func (fs *faultFS) Rename(oldname, newname string) error {
	if err := fs.err("rename"); err != nil {
		return err
	}
	return fs.FS.Rename(oldname, newname)
}

type faultFile struct {
	vfs.File
	fs  *faultFS
	dir bool
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.err("write"); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.err("write"); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	op := "sync"
	if f.dir {
		op = "syncdir"
	}
	if err := f.fs.err(op); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) SyncData() error {
	if err := f.fs.err("sync"); err != nil {
		return err
	}
	return f.File.SyncData()
}

// TestFileStoreWriteFailure: after a failed write or sync the store refuses
// every later write (its tail is unknown); a reopen recovers.
func TestFileStoreWriteFailure(t *testing.T) {
	for _, op := range []string{"write", "sync"} {
		t.Run(op, func(t *testing.T) {
			mem := vfs.NewStrictMem()
			fs := newFaultFS(mem)
			s := mustOpenFile(t, fs)
			storeRange(t, s, 1, 5)
			fs.set(op, true)
			if err := s.StoreLog(testLog(6)); err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("StoreLog with failing %s = %v", op, err)
			}
			fs.set(op, false)
			checkRange(t, s, 1, 5) // a failed write is not visible
			for name, w := range map[string]func() error{
				"StoreLog":    func() error { return s.StoreLog(testLog(6)) },
				"DeleteRange": func() error { return s.DeleteRange(1, 1) },
				"Set":         func() error { return s.Set([]byte("k"), []byte("v")) },
			} {
				if err := w(); !errors.Is(err, errStoreFailed) {
					t.Fatalf("%s after a failed %s = %v, want errStoreFailed", name, op, err)
				}
			}
			s = crash(t, mem, s)
			t.Cleanup(func() { s.Close() })
			checkRange(t, s, 1, 5)
			storeRange(t, s, 6, 6)
			checkRange(t, s, 1, 6)
		})
	}
}

// TestFileStoreCompactionFailure: a compaction that fails before its rename
// keeps the old file and the store writable; one that fails after it stops
// writes, and a reopen has everything either way.
func TestFileStoreCompactionFailure(t *testing.T) {
	for _, tc := range []struct {
		op       string
		writable bool
	}{
		{"rename", true},
		{"syncdir", false},
	} {
		t.Run(tc.op, func(t *testing.T) {
			mem := vfs.NewStrictMem()
			fs := newFaultFS(mem)
			s := mustOpenFile(t, fs)
			s.compactMin = 2048
			for i := uint64(1); i <= 200; i += 10 {
				storeRange(t, s, i, i+9)
			}
			fs.set(tc.op, true)
			if err := s.DeleteRange(1, 180); err != nil {
				t.Fatalf("DeleteRange with a failing compaction: %v", err)
			}
			fs.set(tc.op, false)
			err := s.StoreLog(testLog(201))
			if tc.writable != (err == nil) {
				t.Fatalf("StoreLog after failed compaction = %v, want writable %v", err, tc.writable)
			}
			last := uint64(200)
			if tc.writable {
				last = 201
			}
			s = crash(t, mem, s)
			t.Cleanup(func() { s.Close() })
			checkRange(t, s, 181, last)
			checkWhole(t, mem)
		})
	}
}

func TestFileStoreLock(t *testing.T) {
	fs := vfs.NewMem()
	s := mustOpenFile(t, fs)
	if s2, err := openFileStore(testDir, fs, nil); err == nil {
		s2.Close()
		t.Fatal("a second open of the same store succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.StoreLog(testLog(1)); !errors.Is(err, errStoreClosed) {
		t.Fatalf("StoreLog after Close = %v", err)
	}
	s = mustOpenFile(t, fs)
	s.Close()
}

// writePebble fills a pebble store as an older version would have.
func writePebble(t *testing.T, fs vfs.FS) {
	t.Helper()
	p := mustOpenPebble(t, fs)
	storeRange(t, p, 1, 50)
	if err := p.DeleteRange(1, 9); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string][]byte{"CurrentTerm": {0, 0, 0, 0, 0, 0, 0, 42}, "LastVoteCand": []byte("3"), "empty": {}} {
		if err := p.Set([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func checkMigrated(t *testing.T, fs vfs.FS, s *fileStore) {
	t.Helper()
	checkRange(t, s, 10, 50)
	if v, err := s.GetUint64(keyCurrentTerm); err != nil || v != 42 {
		t.Fatalf("CurrentTerm = %d, %v", v, err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "3" {
		t.Fatalf("LastVoteCand = %q, %v", v, err)
	}
	if v, err := s.Get([]byte("empty")); err != nil || len(v) != 0 {
		t.Fatalf("empty = %q, %v", v, err)
	}
	names, err := fs.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{walLockName, walFileName}) {
		t.Fatalf("files after migration: %v", names)
	}
}

// TestFileStoreMigration: a pebble store of an older version is copied into
// raft.wal and removed, once.
func TestFileStoreMigration(t *testing.T) {
	fs := vfs.NewStrictMem()
	writePebble(t, fs)
	s := mustOpenFile(t, fs)
	checkMigrated(t, fs, s)
	storeRange(t, s, 51, 51)
	s = crash(t, fs, s)
	t.Cleanup(func() { s.Close() })
	checkRange(t, s, 10, 51)
	checkWhole(t, fs)
}

// TestFileStoreMigrationCrash loses power at each step of the migration's
// rewrite, and after it: the next open has all the data, from pebble again
// or from raft.wal, and ends with no pebble files.
func TestFileStoreMigrationCrash(t *testing.T) {
	for step := stepTempWritten; step <= stepDirSynced; step++ {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			fs := vfs.NewStrictMem()
			writePebble(t, fs)
			s, err := openFileStoreHook(testDir, fs, nil, func(at rewriteStep) {
				if at == step {
					fs.SetIgnoreSyncs(true)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			checkRange(t, s, 10, 50)
			s = crash(t, fs, s)
			t.Cleanup(func() { s.Close() })
			checkMigrated(t, fs, s)
			checkWhole(t, fs)
		})
	}
}

// TestStoreMigration: a data dir written by the pebble version opens with
// every topic and config, and keeps working.
func TestStoreMigration(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), NodeID: 1}
	s, err := open(cfg, openOptions{legacyPebble: true})
	if err != nil {
		t.Fatal(err)
	}
	populate(t, s)
	first, err := s.AllocateProducerIDs(testCtx(t), 100)
	if err != nil {
		t.Fatal(err)
	}
	before := s.Image()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(cfg.Dir, "log")
	if _, err := os.Stat(filepath.Join(logDir, "CURRENT")); err != nil {
		t.Fatalf("the legacy store wrote no pebble DB: %v", err)
	}

	s = newStore(t, cfg)
	if !bytes.Equal(encodeImage(before), encodeImage(s.Image())) {
		t.Fatalf("image after migration differs:\nbefore %+v\nafter  %+v", before, s.Image())
	}
	if _, ok := s.Image().Topics["topic-7"]; !ok {
		t.Fatal("topic-7 lost in migration")
	}
	entries, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{walLockName, walFileName}) {
		t.Fatalf("%s after migration holds %v", logDir, names)
	}
	next, err := s.AllocateProducerIDs(testCtx(t), 1)
	if err != nil || next < first+100 {
		t.Fatalf("producer id after migration = %d, %v (block [%d, %d))", next, err, first, first+100)
	}
	if _, err := s.CreateTopic(testCtx(t), "after-migration", 2, []int32{1}, nil); err != nil {
		t.Fatal(err)
	}
	want := encodeImage(s.Image())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = newStore(t, cfg)
	if !bytes.Equal(want, encodeImage(s.Image())) {
		t.Fatal("image changed on the restart after migration")
	}
}

// walSeeds are files the store writes, for the fuzzer.
func walSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	fs := vfs.NewMem()
	s := mustOpenFile(t, fs)
	s.compactMin = 1024
	snap := func() { seeds = append(seeds, readTestFile(t, fs, testWAL)) }
	snap()
	storeRange(t, s, 1, 3)
	snap()
	s.lazyStable = true
	s.SetUint64(keyCurrentTerm, 2)
	s.Set([]byte("LastVoteCand"), []byte("1"))
	storeRange(t, s, 4, 4)
	s.lazyStable = false
	s.DeleteRange(1, 2)
	snap()
	for i := uint64(5); i <= 40; i++ {
		storeRange(t, s, i, i)
	}
	s.DeleteRange(1, 38) // compacts
	s.DeleteRange(40, 40)
	snap()
	s.Close()
	last := seeds[len(seeds)-1]
	seeds = append(seeds, last[:len(last)-3], append(bytes.Clone(last), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	return seeds
}

// FuzzFileStoreReplay: any file content opens as a consistent store or
// fails with ErrCorrupt; never a panic. A store that opens holds a whole
// file and takes writes.
func FuzzFileStoreReplay(f *testing.F) {
	for _, s := range walSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMem()
		writeTestFile(t, fs, testWAL, data)
		s, err := openFileStore(testDir, fs, nil)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open = %v, want nil or ErrCorrupt", err)
			}
			return
		}
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		if (first == 0) != (last == 0) || first > last {
			t.Fatalf("range [%d, %d]", first, last)
		}
		for i := first; i <= last && last != 0 && i-first < 1<<16; i++ {
			var l raft.Log
			if err := s.GetLog(i, &l); err != nil || l.Index != i {
				t.Fatalf("GetLog(%d) = %v", i, err)
			}
		}
		var l raft.Log
		if err := s.GetLog(last+1, &l); last != math.MaxUint64 && !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("GetLog(last+1) = %v", err)
		}
		checkWhole(t, fs)
		want := canonical(t, s)
		if last != math.MaxUint64 {
			if err := s.StoreLog(testLog(last + 1)); err != nil {
				t.Fatalf("StoreLog(%d): %v", last+1, err)
			}
			if err := s.DeleteRange(last+1, last+1); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = mustOpenFile(t, fs)
		defer s.Close()
		if !bytes.Equal(canonical(t, s), want) {
			t.Fatal("state changed across reopen")
		}
	})
}
