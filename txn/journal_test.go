package txn

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble"

	"sharq/log/statejournal"
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

// TestJournalReplayWithoutPebble: the state journal alone restores every
// state change, as after a process crash that lost pebble's unsynced
// writes (simulated with a fresh, empty pebble beside a copy of the
// journal taken before Close).
func TestJournalReplayWithoutPebble(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.journal")
	db := openTestDB(t, filepath.Join(dir, "a"))
	j, err := statejournal.Open(db, path, statejournal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := NewJournaledStore(db, j)
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
	crashed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(crashed) == 0 {
		t.Fatal("nothing journaled")
	}
	j.Close()
	db.Close()

	path2 := filepath.Join(dir, "crashed.journal")
	if err := os.WriteFile(path2, crashed, 0o644); err != nil {
		t.Fatal(err)
	}
	db2 := openTestDB(t, filepath.Join(dir, "b"))
	defer db2.Close()
	j2, err := statejournal.Open(db2, path2, statejournal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	got, err := NewJournaledStore(db2, j2).Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed %+v\nwant %+v", got, want)
	}
}

func ptr(m Metadata) *Metadata { return &m }

// TestLegacyJournalTornAndDamaged: an earlier sharq's txn.journal is
// applied and removed; a record cut short at the end is dropped silently;
// a damaged record in the middle ends the replay there and the file is
// kept as .damaged.
func TestLegacyJournalTornAndDamaged(t *testing.T) {
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
			if err := ReplayLegacyJournal(db, path, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("legacy journal not removed after replay: %v", err)
			}
			got, err := NewPebbleStore(db).Load()
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

// appendTxnRecord lays out a legacy journal record.
func appendTxnRecord(dst []byte, op byte, id string, val []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, txnRecordHeader)...)
	dst = append(dst, op)
	dst = binary.AppendUvarint(dst, uint64(len(id)))
	dst = append(dst, id...)
	dst = append(dst, val...)
	body := dst[start+txnRecordHeader:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(dst[start+4:], crc32.Checksum(body, txnCRC))
	return dst
}
