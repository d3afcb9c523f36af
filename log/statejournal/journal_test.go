package statejournal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

func openDB(t testing.TB, dir string) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// contents is every key and value in db.
func contents(t testing.TB, db *pebble.DB) map[string]string {
	t.Helper()
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	return out
}

// step is one batch a coordinator might commit.
type step struct {
	set       map[string]string
	del       []string
	rangeFrom string
	rangeTo   string
}

func (s step) batch(db *pebble.DB) *pebble.Batch {
	b := db.NewBatch()
	if s.rangeFrom != "" {
		b.DeleteRange([]byte(s.rangeFrom), []byte(s.rangeTo), nil)
	}
	for _, k := range s.del {
		b.Delete([]byte(k), nil)
	}
	for k, v := range s.set {
		b.Set([]byte(k), []byte(v), nil)
	}
	return b
}

// steps write, overwrite, delete, delete a range and write into it again.
var steps = []step{
	{set: map[string]string{"g/a/0": "1", "g/a/1": "2", "g/b/0": "3"}},
	{set: map[string]string{"g/a/0": "4", "t/x": "ongoing"}},
	{del: []string{"g/b/0"}},
	{set: map[string]string{"g/c/0": "5", "g/c/1": "6"}},
	{rangeFrom: "g/a/", rangeTo: "g/a0"},
	{set: map[string]string{"g/a/1": "7", "t/x": "complete"}},
	{set: map[string]string{"g/d/0": "8"}, del: []string{"g/c/0"}},
}

var want = map[string]string{"g/a/1": "7", "t/x": "complete", "g/c/1": "6", "g/d/0": "8"}

// crashAfter commits every step through a journal on a fresh pebble in
// dir/src and "crashes" (closes the file without a checkpoint), leaving
// the journal at path.
func crashAfter(t *testing.T, dir, path string) {
	t.Helper()
	db := openDB(t, filepath.Join(dir, "src"))
	j, err := Open(db, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		b := s.batch(db)
		if err := j.Commit(b); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		b.Close()
	}
	if got := contents(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("live state %v, want %v", got, want)
	}
	j.mu.Lock()
	j.f.Close()
	j.closed = true
	j.mu.Unlock()
	db.Close()
}

// TestReplayOverAnyPrefix: whatever prefix of the batches pebble kept
// through a crash (none, some, all), replaying the journal over it gives
// the state the live store had.
func TestReplayOverAnyPrefix(t *testing.T) {
	for kept := 0; kept <= len(steps); kept++ {
		t.Run(fmt.Sprintf("pebble-kept-%d", kept), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.journal")
			crashAfter(t, dir, path)
			db := openDB(t, filepath.Join(dir, "dst"))
			defer db.Close()
			for _, s := range steps[:kept] {
				b := s.batch(db)
				if err := b.Commit(pebble.Sync); err != nil {
					t.Fatal(err)
				}
				b.Close()
			}
			j, err := Open(db, path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if got := contents(t, db); !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed %v, want %v", got, want)
			}
			if j.Size() != 0 {
				t.Fatalf("journal not emptied by replay: %d bytes", j.Size())
			}
		})
	}
}

// TestTornAndDamaged: a record cut short at the end is dropped silently;
// a damaged record in the middle ends the replay there and the file is
// kept as .damaged.
func TestTornAndDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.journal")
	crashAfter(t, dir, path)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Record boundaries.
	var ends []int
	r, err := Decode(full, func(pebble.InternalKeyKind, []byte, []byte) error { return nil })
	if err != nil || r.End != len(full) || r.Records != len(steps) {
		t.Fatalf("decode of the whole journal: %+v %v", r, err)
	}
	for off := 0; off < len(full); {
		_, size, ok := decodeRecord(full[off:])
		if !ok {
			t.Fatalf("record at %d does not decode", off)
		}
		off += size
		ends = append(ends, off)
	}

	t.Run("torn", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "j")
		os.WriteFile(p, full[:len(full)-3], 0o644)
		db := openDB(t, t.TempDir())
		defer db.Close()
		j, err := Open(db, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		// Every step but the last.
		ref := openDB(t, t.TempDir())
		defer ref.Close()
		for _, s := range steps[:len(steps)-1] {
			b := s.batch(ref)
			b.Commit(pebble.Sync)
			b.Close()
		}
		if got, w := contents(t, db), contents(t, ref); !reflect.DeepEqual(got, w) {
			t.Fatalf("replayed %v, want %v", got, w)
		}
		if _, err := os.Stat(p + ".damaged"); !os.IsNotExist(err) {
			t.Fatalf("a torn tail must not be kept as damage: %v", err)
		}
	})

	t.Run("damaged", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "j")
		bad := bytes.Clone(full)
		bad[ends[1]+recordHeader+batchHeader+1] ^= 0xff // inside the third record
		os.WriteFile(p, bad, 0o644)
		db := openDB(t, t.TempDir())
		defer db.Close()
		j, err := Open(db, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		ref := openDB(t, t.TempDir())
		defer ref.Close()
		for _, s := range steps[:2] {
			b := s.batch(ref)
			b.Commit(pebble.Sync)
			b.Close()
		}
		if got, w := contents(t, db), contents(t, ref); !reflect.DeepEqual(got, w) {
			t.Fatalf("replayed %v, want the first two steps %v", got, w)
		}
		kept, err := os.ReadFile(p + ".damaged")
		if err != nil || !bytes.Equal(kept, bad) {
			t.Fatalf("damaged journal not kept as it was: %v", err)
		}
	})
}

// TestCheckpoint: past CheckpointBytes a commit syncs pebble and empties
// the journal, so the journal stays small and nothing is lost; with an
// fsync per write too.
func TestCheckpoint(t *testing.T) {
	for _, syncEvery := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync-every-write-%v", syncEvery), func(t *testing.T) { checkpoint(t, syncEvery) })
	}
}

func checkpoint(t *testing.T, syncEvery bool) {
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "db"))
	defer db.Close()
	j, err := Open(db, filepath.Join(dir, "state.journal"), Options{CheckpointBytes: 1 << 10, SyncEveryWrite: syncEvery})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		b := db.NewBatch()
		b.Set(fmt.Appendf(nil, "k%03d", i), bytes.Repeat([]byte{'v'}, 50), nil)
		if err := j.Commit(b); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if j.Size() > 1<<10+200 {
			t.Fatalf("journal grew to %d bytes past its checkpoint size", j.Size())
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "state.journal")); err != nil || fi.Size() != 0 {
		t.Fatalf("Close must checkpoint and empty the journal: %v %v", fi, err)
	}
	if n := len(contents(t, db)); n != 200 {
		t.Fatalf("%d keys, want 200", n)
	}
	b := db.NewBatch()
	b.Set([]byte("late"), nil, nil)
	if err := j.Commit(b); err == nil {
		t.Fatal("commit after Close must fail")
	}
	b.Close()
}

// TestRefusesForeignOperations: a record whose batch holds an operation
// the coordinators never write (a merge) ends the replay like damage.
func TestRefusesForeignOperations(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	b := db.NewBatch()
	b.Set([]byte("a"), []byte("1"), nil)
	b.Merge([]byte("b"), []byte("2"), nil)
	rec := AppendRecord(nil, b.Repr())
	b.Close()
	r, err := Decode(rec, func(pebble.InternalKeyKind, []byte, []byte) error {
		t.Fatal("nothing of a foreign batch may be applied")
		return nil
	})
	if err != nil || r.Records != 0 || r.End != 0 || r.Torn {
		t.Fatalf("decode: %+v %v", r, err)
	}
}

// FuzzDecode: whatever bytes the journal file holds, Decode neither panics
// nor applies anything beyond the records that check out, and applying a
// valid journal's operations stays within the input.
func FuzzDecode(f *testing.F) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	var seed []byte
	for _, s := range steps {
		b := s.batch(db)
		seed = AppendRecord(seed, b.Repr())
		b.Close()
	}
	f.Add(seed)
	f.Add(seed[:len(seed)-5])
	f.Add([]byte{0, 0, 0, 12, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := 0
		r, err := Decode(data, func(kind pebble.InternalKeyKind, k, v []byte) error {
			switch kind {
			case pebble.InternalKeyKindSet, pebble.InternalKeyKindDelete, pebble.InternalKeyKindRangeDelete:
			default:
				t.Fatalf("applied operation kind %v", kind)
			}
			ops++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.End > len(data) || r.End < 0 {
			t.Fatalf("end %d outside %d bytes", r.End, len(data))
		}
		if r.Records == 0 && ops != 0 {
			t.Fatalf("%d operations applied from no record", ops)
		}
	})
}

// BenchmarkCommit: one offset-commit-sized batch through the journal (a
// write(2) and a pebble NoSync commit).
func BenchmarkCommit(b *testing.B) {
	dir := b.TempDir()
	db := openDB(b, filepath.Join(dir, "db"))
	defer db.Close()
	j, err := Open(db, filepath.Join(dir, "state.journal"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	key := []byte("o/group/topic/0000")
	val := bytes.Repeat([]byte{1}, 40)
	batch := db.NewBatch()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch.Reset()
		batch.Set(key, val, nil)
		if err := j.Commit(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPebbleSync is what each commit cost before the journal: a
// pebble Sync commit (an fsync) of the same batch.
func BenchmarkPebbleSync(b *testing.B) {
	db := openDB(b, b.TempDir())
	defer db.Close()
	key := []byte("o/group/topic/0000")
	val := bytes.Repeat([]byte{1}, 40)
	batch := db.NewBatch()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch.Reset()
		batch.Set(key, val, nil)
		if err := batch.Commit(pebble.Sync); err != nil {
			b.Fatal(err)
		}
	}
}
