package raftmeta

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
)

// testDir is where the store-level tests put the raft log on a memory FS.
const testDir = "/raftlog"

func mustOpenFile(t testing.TB, fs vfs.FS) *fileStore {
	t.Helper()
	s, err := openFileStore(testDir, fs, nil)
	if err != nil {
		t.Fatalf("open file store: %v", err)
	}
	return s
}

// mustOpenPebble opens the pre-file-store pebble store (migration source).
func mustOpenPebble(t testing.TB, fs vfs.FS) *pebbleStore {
	t.Helper()
	s, err := openPebbleStore(testDir, fs, nil)
	if err != nil {
		t.Fatalf("open pebble store: %v", err)
	}
	return s
}

// crash simulates power loss: everything not synced is discarded, then the
// store is reopened over what survived.
func crash(t *testing.T, fs *vfs.MemFS, s *fileStore) *fileStore {
	t.Helper()
	fs.SetIgnoreSyncs(true)
	if err := s.Close(); err != nil {
		t.Fatalf("close before crash: %v", err)
	}
	fs.ResetToSyncedState()
	fs.SetIgnoreSyncs(false)
	return mustOpenFile(t, fs)
}

// contractStore is what the contract tests exercise.
type contractStore interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

// contractStores: the file store, and the pebble store, whose reads the
// migration depends on.
var contractStores = []struct {
	name string
	open func(t testing.TB, fs vfs.FS) contractStore
}{
	{"file", func(t testing.TB, fs vfs.FS) contractStore { return mustOpenFile(t, fs) }},
	{"pebble", func(t testing.TB, fs vfs.FS) contractStore { return mustOpenPebble(t, fs) }},
}

func testLog(i uint64) *raft.Log {
	l := &raft.Log{
		Index:      i,
		Term:       i/3 + 1,
		Type:       raft.LogCommand,
		Data:       []byte{byte(i), 1, 2, 3},
		AppendedAt: time.Unix(1700000000, int64(i)*1000),
	}
	if i%2 == 0 {
		l.Extensions = []byte("ext")
		l.Type = raft.LogNoop
	}
	if i%5 == 0 {
		l.Data = nil
		l.AppendedAt = time.Time{}
	}
	return l
}

func equalLog(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type &&
		bytes.Equal(a.Data, b.Data) && bytes.Equal(a.Extensions, b.Extensions) &&
		a.AppendedAt.Equal(b.AppendedAt)
}

func checkRange(t testing.TB, s raft.LogStore, first, last uint64) {
	t.Helper()
	f, err := s.FirstIndex()
	if err != nil || f != first {
		t.Fatalf("FirstIndex = %d, %v; want %d", f, err, first)
	}
	l, err := s.LastIndex()
	if err != nil || l != last {
		t.Fatalf("LastIndex = %d, %v; want %d", l, err, last)
	}
	if first == 0 {
		return
	}
	for i := first; i <= last; i++ {
		var got raft.Log
		if err := s.GetLog(i, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", i, err)
		}
		if want := testLog(i); !equalLog(&got, want) {
			t.Fatalf("GetLog(%d) = %+v, want %+v", i, got, *want)
		}
	}
	var l2 raft.Log
	if err := s.GetLog(last+1, &l2); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(last+1) = %v, want ErrLogNotFound", err)
	}
	if first > 1 {
		if err := s.GetLog(first-1, &l2); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("GetLog(first-1) = %v, want ErrLogNotFound", err)
		}
	}
}

func TestLogStoreContract(t *testing.T) {
	for _, tc := range contractStores {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.open(t, vfs.NewStrictMem())
			t.Cleanup(func() { s.Close() })
			testLogStoreContract(t, s)
		})
	}
}

func testLogStoreContract(t *testing.T, s contractStore) {
	checkRange(t, s, 0, 0)
	var l raft.Log
	if err := s.GetLog(1, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog on empty store = %v, want raft.ErrLogNotFound", err)
	}

	if err := s.StoreLog(testLog(1)); err != nil {
		t.Fatal(err)
	}
	var batch []*raft.Log
	for i := uint64(2); i <= 20; i++ {
		batch = append(batch, testLog(i))
	}
	if err := s.StoreLogs(batch); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 1, 20)

	// Truncate the head (after a snapshot) and the tail (conflicting entries).
	if err := s.DeleteRange(1, 5); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 6, 20)
	if err := s.DeleteRange(18, 20); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 6, 17)
	if err := s.DeleteRange(10, 5); err != nil { // empty range: no-op
		t.Fatal(err)
	}
	checkRange(t, s, 6, 17)

	// Stable keys live beside the log but never show up in its range.
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 6, 17)

	if err := s.DeleteRange(0, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 0, 0)
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("stable key lost by log range delete: %d, %v", v, err)
	}
}

func TestStableStoreContract(t *testing.T) {
	for _, tc := range contractStores {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.open(t, vfs.NewStrictMem())
			t.Cleanup(func() { s.Close() })
			testStableStoreContract(t, s)
		})
	}
}

func testStableStoreContract(t *testing.T, s contractStore) {
	_, err := s.Get([]byte("missing"))
	if err == nil || err.Error() != "not found" {
		t.Fatalf("Get(missing) error = %v, raft needs the text \"not found\"", err)
	}
	if v, err := s.GetUint64([]byte("missing")); err != nil || v != 0 {
		t.Fatalf("GetUint64(missing) = %d, %v; want 0, nil", v, err)
	}

	tests := []struct {
		key, val []byte
	}{
		{[]byte("LastVoteCand"), []byte("node-1")},
		{[]byte("empty"), []byte{}},
		{[]byte{0xff, 0x00}, bytes.Repeat([]byte{7}, 4096)},
	}
	for _, tc := range tests {
		if err := s.Set(tc.key, tc.val); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(tc.key)
		if err != nil || !bytes.Equal(got, tc.val) {
			t.Fatalf("Get(%q) = %q, %v; want %q", tc.key, got, err, tc.val)
		}
		// The result must be the caller's own copy, not the store's buffer.
		if len(got) > 0 {
			got[0]++
			again, _ := s.Get(tc.key)
			if !bytes.Equal(again, tc.val) {
				t.Fatalf("Get(%q) returned a shared buffer", tc.key)
			}
		}
	}

	for _, v := range []uint64{0, 1, math.MaxUint64} {
		if err := s.SetUint64([]byte("CurrentTerm"), v); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetUint64([]byte("CurrentTerm")); err != nil || got != v {
			t.Fatalf("GetUint64 = %d, %v; want %d", got, err, v)
		}
	}

	// A value of the wrong size is reported, not misread.
	if err := s.Set([]byte("short"), []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUint64([]byte("short")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("GetUint64 of a 2-byte value = %v, want ErrCorrupt", err)
	}
}

// TestLogStoreCrash checks that everything a call returned for survives a
// crash, and that the crash simulation really drops unsynced writes.
func TestLogStoreCrash(t *testing.T) {
	fs := vfs.NewStrictMem()
	s := mustOpenFile(t, fs)

	var batch []*raft.Log
	for i := uint64(1); i <= 50; i++ {
		batch = append(batch, testLog(i))
	}
	if err := s.StoreLogs(batch); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(1, 9); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 42); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("3")); err != nil {
		t.Fatal(err)
	}
	// An unsynced record straight into the file: the crash must take it away.
	rec, bounds := appendLogs(appendEntriesOp(s.newRecord(0), 51, 1), []*raft.Log{testLog(51)})
	if err := finishRecord(rec, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.f.WriteAt(rec, s.size); err != nil {
		t.Fatal(err)
	}
	s.size += int64(len(rec))
	s.st.putEntries(51, slicesOf(rec, bounds))
	// And a lazy Set, which is not written until the next synced record.
	s.lazyStable = true
	if err := s.SetUint64([]byte("CurrentTerm"), 43); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 10, 51)

	s = crash(t, fs, s)
	t.Cleanup(func() { s.Close() })
	checkRange(t, s, 10, 50)
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 42 {
		t.Fatalf("CurrentTerm after crash = %d, %v", v, err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "3" {
		t.Fatalf("LastVoteCand after crash = %q, %v", v, err)
	}

	// raft's own start-up check reads our store correctly.
	existing, err := raft.HasExistingState(s, s, raft.NewInmemSnapshotStore())
	if err != nil || !existing {
		t.Fatalf("HasExistingState = %v, %v; want true", existing, err)
	}
	empty := mustOpenFile(t, vfs.NewStrictMem())
	t.Cleanup(func() { empty.Close() })
	existing, err = raft.HasExistingState(empty, empty, raft.NewInmemSnapshotStore())
	if err != nil || existing {
		t.Fatalf("HasExistingState(empty) = %v, %v; want false", existing, err)
	}
}

// TestPebbleStoreCorruptValue: the migration source reports undecodable
// values instead of copying them.
func TestPebbleStoreCorruptValue(t *testing.T) {
	tests := [][]byte{
		nil,
		{9},                                   // unknown format version
		{logFormatV1},                         // truncated
		{logFormatV1, 1, 0, 0, 5},             // data length beyond the value
		append(encodeLog(nil, testLog(3)), 0), // trailing byte
	}
	for i, v := range tests {
		s := mustOpenPebble(t, vfs.NewStrictMem())
		if err := s.db.Set(logKey(7), v, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		var l raft.Log
		if err := s.GetLog(7, &l); !errors.Is(err, ErrCorrupt) {
			t.Errorf("case %d: GetLog of %x = %v, want ErrCorrupt", i, v, err)
		}
		if _, err := s.export(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("case %d: export of %x = %v, want ErrCorrupt", i, v, err)
		}
		s.Close()
	}
}

// FuzzLogDecode: the raft log value decoder never panics, round-trips, and
// agrees with the replay check validLog.
func FuzzLogDecode(f *testing.F) {
	for i := uint64(1); i <= 5; i++ {
		f.Add(encodeLog(nil, testLog(i)))
	}
	f.Add([]byte{})
	f.Add([]byte{logFormatV1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		err := decodeLog(b, &l)
		if validLog(b) != (err == nil) {
			t.Fatalf("validLog = %v, decodeLog = %v", validLog(b), err)
		}
		if err != nil {
			return
		}
		again := encodeLog(nil, &l)
		var l2 raft.Log
		if err := decodeLog(again, &l2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !equalLog(&l, &l2) || !bytes.Equal(again, encodeLog(nil, &l2)) {
			t.Fatalf("round trip unstable: %+v vs %+v", l, l2)
		}
	})
}
