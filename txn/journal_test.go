package txn

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble"
)

func openTestDB(t testing.TB, dir string) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func testMeta(pid int64, st State, parts ...TopicPartition) Metadata {
	return Metadata{ProducerID: pid, PrevProducerID: -1, NextProducerID: -1, Epoch: 3, LastEpoch: 2,
		TimeoutMs: 60000, State: st, StartMs: 5, LastUpdateMs: 6, Partitions: parts}
}

// TestJournalReplayWithoutPebble: the journal alone restores every state
// change, as after a process crash that lost pebble's unsynced writes
// (simulated with a fresh, empty pebble beside the old journal).
func TestJournalReplayWithoutPebble(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "txn.journal")
	db := openTestDB(t, filepath.Join(dir, "a"))
	s, err := OpenJournaledStore(db, path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Metadata{
		"a": testMeta(1, PrepareCommit, TopicPartition{"t", 0}, TopicPartition{"t", 2}),
		"c": testMeta(3, Ongoing, TopicPartition{"u", 1}),
	}
	for _, step := range []struct {
		id  string
		m   *Metadata
		del bool
	}{
		{id: "a", m: &Metadata{ProducerID: 1, State: Empty, PrevProducerID: -1, NextProducerID: -1}},
		{id: "b", m: &Metadata{ProducerID: 2, State: Empty, PrevProducerID: -1, NextProducerID: -1}},
		{id: "a", m: ptr(want["a"])},
		{id: "b", del: true},
		{id: "c", m: ptr(want["c"])},
	} {
		if step.del {
			err = s.Delete(step.id)
		} else {
			err = s.Put(step.id, step.m)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	journal, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(journal) == 0 {
		t.Fatal("nothing journaled")
	}
	s.mu.Lock()
	s.f.Close() // crash: no checkpoint
	s.closed = true
	s.mu.Unlock()
	db.Close()

	db2 := openTestDB(t, filepath.Join(dir, "b"))
	defer db2.Close()
	s2, err := OpenJournaledStore(db2, path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed %+v\nwant %+v", got, want)
	}
	if s2.Size() != 0 {
		t.Fatalf("journal not emptied after replay: %d bytes", s2.Size())
	}
}

func ptr(m Metadata) *Metadata { return &m }

// TestJournalTornAndDamaged: a record cut short at the end is dropped
// silently; a damaged record in the middle ends the replay there and the
// file is kept as .damaged.
func TestJournalTornAndDamaged(t *testing.T) {
	a := appendTxnRecord(nil, txnOpPut, "a", EncodeMetadata(ptr(testMeta(1, Ongoing))))
	b := appendTxnRecord(nil, txnOpPut, "b", EncodeMetadata(ptr(testMeta(2, Ongoing))))
	c := appendTxnRecord(nil, txnOpPut, "c", EncodeMetadata(ptr(testMeta(3, Ongoing))))
	for _, tc := range []struct {
		name    string
		file    []byte
		want    []string
		damaged bool
	}{
		{"whole", cat(a, b, c), []string{"a", "b", "c"}, false},
		{"torn tail", cat(a, b, c[:len(c)-3]), []string{"a", "b"}, false},
		{"torn header", cat(a, b, c[:5]), []string{"a", "b"}, false},
		{"damaged middle", cat(a, flip(b, 12), c), []string{"a"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "txn.journal")
			if err := os.WriteFile(path, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			db := openTestDB(t, filepath.Join(dir, "db"))
			defer db.Close()
			s, err := OpenJournaledStore(db, path, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, id := range []string{"a", "b", "c"} {
				if _, ok := got[id]; ok {
					ids = append(ids, id)
				}
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Fatalf("replayed %v, want %v", ids, tc.want)
			}
			kept, err := os.ReadFile(path + ".damaged")
			if tc.damaged != (err == nil) {
				t.Fatalf("damaged copy kept: %v, want %v", err == nil, tc.damaged)
			}
			if tc.damaged && !bytes.Equal(kept, tc.file) {
				t.Fatal("damaged copy differs from the journal")
			}
		})
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0xff
	return c
}

// TestJournalCheckpoint: the journal is emptied whenever it passes
// CheckpointBytes and on Close, and every state is in pebble afterwards;
// with syncEveryWrite too.
func TestJournalCheckpoint(t *testing.T) {
	for _, syncEvery := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "txn.journal")
		db := openTestDB(t, filepath.Join(dir, "db"))
		s, err := OpenJournaledStore(db, path, syncEvery, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.CheckpointBytes = 300
		for i := 0; i < 20; i++ {
			if err := s.Put("id", ptr(testMeta(int64(i), Ongoing))); err != nil {
				t.Fatal(err)
			}
			if s.Size() > 300+200 {
				t.Fatalf("journal at %d bytes, checkpoint at 300", s.Size())
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
			t.Fatalf("journal after Close: %v, %v", fi, err)
		}
		if err := s.Put("id", ptr(testMeta(99, Ongoing))); err == nil {
			t.Fatal("Put after Close succeeded")
		}
		db.Close()
		db = openTestDB(t, filepath.Join(dir, "db"))
		got, err := NewPebbleStore(db).Load()
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got["id"].ProducerID != 19 {
			t.Fatalf("syncEvery=%v: stored %+v, want producer 19", syncEvery, got["id"])
		}
	}
}

// FuzzTxnJournalRecord: any bytes decode without a panic, and a record
// that decodes re-encodes to the same bytes.
func FuzzTxnJournalRecord(f *testing.F) {
	f.Add(appendTxnRecord(nil, txnOpPut, "id", EncodeMetadata(ptr(testMeta(1, Ongoing, TopicPartition{"t", 1})))))
	f.Add(appendTxnRecord(nil, txnOpDelete, "gone", nil))
	f.Add([]byte{0, 0, 0, 2, 0, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		op, id, val, size, ok := decodeTxnRecord(b)
		if !ok {
			return
		}
		if again := appendTxnRecord(nil, op, id, val); !bytes.Equal(again, b[:size]) {
			t.Fatalf("re-encoded %x, read %x", again, b[:size])
		}
	})
}
