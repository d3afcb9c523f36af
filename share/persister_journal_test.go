package share

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

func newJournaledPersister(t *testing.T) Persister {
	db := openPebble(t, vfs.NewMem())
	p, err := OpenJournaledPersister(db, filepath.Join(t.TempDir(), "share.journal"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		db.Close()
	})
	return p
}

// crashRig runs a JournaledPersister whose pebble lives on a strict
// in-memory FS (a crash drops whatever pebble has not synced, which is
// at least what a kill -9 can drop) and whose journal lives on the real
// file system (a process crash keeps what write(2) returned).
type crashRig struct {
	t       *testing.T
	fs      *vfs.MemFS
	db      *pebble.DB
	p       *JournaledPersister
	journal string
}

func newCrashRig(t *testing.T) *crashRig {
	fs := vfs.NewStrictMem()
	if err := fs.MkdirAll("state", 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := fs.OpenDir("")
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Sync(); err != nil {
		t.Fatal(err)
	}
	root.Close()
	r := &crashRig{t: t, fs: fs, journal: filepath.Join(t.TempDir(), "share.journal")}
	r.open()
	t.Cleanup(func() {
		if r.p != nil {
			r.p.Close()
			r.db.Close()
		}
	})
	return r
}

func (r *crashRig) open() {
	r.t.Helper()
	r.db = openPebble(r.t, r.fs)
	p, err := OpenJournaledPersister(r.db, r.journal, false, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.p = p
}

// crash closes everything without a checkpoint, forgets pebble's unsynced
// writes and reopens.
func (r *crashRig) crash() {
	r.t.Helper()
	r.p.Close()
	r.fs.SetIgnoreSyncs(true)
	r.db.Close()
	r.fs.ResetToSyncedState()
	r.fs.SetIgnoreSyncs(false)
	r.p, r.db = nil, nil
	r.open()
}

func (r *crashRig) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// load returns the stored state of k, nil when absent.
func (r *crashRig) load(k Key) *State {
	r.t.Helper()
	var st State
	ok, err := r.p.Load(k, &st)
	if err != nil {
		r.t.Fatal(err)
	}
	if !ok {
		return nil
	}
	return &st
}

func jkey(p int32) Key { return Key{Group: "g", TopicID: topic(4), Partition: p} }

func jstate(spso int64) *State {
	return &State{StartOffset: spso, StateEpoch: 1, DeliveryCompleteCount: 1, Batches: []StateBatch{{spso + 1, spso + 1, Acknowledged, 1}}}
}

func TestJournaledPersisterCrash(t *testing.T) {
	r := newCrashRig(t)
	r.must(r.p.Write(jkey(0), jstate(10), true))
	r.must(r.p.Write(jkey(0), jstate(20), true))
	r.must(r.p.Write(jkey(1), jstate(30), false))
	if r.p.JournalSize() == 0 {
		t.Fatal("sync write not journaled")
	}
	r.crash()
	if got := r.load(jkey(0)); !reflect.DeepEqual(got, jstate(20)) {
		t.Fatalf("journaled state after crash = %+v", got)
	}
	// The rig really drops pebble's unsynced writes: the non-sync write,
	// never journaled, is gone.
	if got := r.load(jkey(1)); got != nil {
		t.Fatalf("non-sync write survived the simulated crash: %+v", got)
	}
	if r.p.JournalSize() != 0 {
		t.Fatalf("journal not emptied by the replay: %d bytes", r.p.JournalSize())
	}
	// The replay was synced into pebble: a second crash keeps it.
	r.crash()
	if got := r.load(jkey(0)); !reflect.DeepEqual(got, jstate(20)) {
		t.Fatalf("state after second crash = %+v", got)
	}
}

// Flush is a checkpoint: every earlier write survives and the journal is
// empty.
func TestJournaledPersisterFlush(t *testing.T) {
	r := newCrashRig(t)
	r.must(r.p.Write(jkey(0), jstate(10), true))
	r.must(r.p.Write(jkey(1), jstate(11), false))
	r.must(r.p.Flush())
	if r.p.JournalSize() != 0 {
		t.Fatalf("journal size after Flush = %d", r.p.JournalSize())
	}
	if fi, err := os.Stat(r.journal); err != nil || fi.Size() != 0 {
		t.Fatalf("journal file after Flush: %v %v", fi.Size(), err)
	}
	r.crash()
	for p, want := range []*State{jstate(10), jstate(11)} {
		if got := r.load(jkey(int32(p))); !reflect.DeepEqual(got, want) {
			t.Errorf("partition %d after crash = %+v", p, got)
		}
	}
}

// A delete is never undone by the replay of an older journal record.
func TestJournaledPersisterDeleteNotResurrected(t *testing.T) {
	cases := []struct {
		name string
		del  func(p *JournaledPersister) error
	}{
		{"Delete", func(p *JournaledPersister) error { return p.Delete(jkey(0)) }},
		{"DeleteGroup", func(p *JournaledPersister) error { return p.DeleteGroup("g") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newCrashRig(t)
			r.must(r.p.Write(jkey(0), jstate(10), true))
			other := Key{Group: "other", TopicID: topic(4), Partition: 0}
			r.must(r.p.Write(other, jstate(5), true))
			r.must(tc.del(r.p))
			r.must(r.p.Write(other, jstate(6), true)) // journaled after the delete
			r.crash()
			if got := r.load(jkey(0)); got != nil {
				t.Fatalf("deleted state came back: %+v", got)
			}
			if got := r.load(other); !reflect.DeepEqual(got, jstate(6)) {
				t.Fatalf("other group = %+v", got)
			}
		})
	}
}

// Past CheckpointBytes a Write checkpoints: the journal stays small and a
// crash loses nothing that was journaled.
func TestJournaledPersisterCheckpointThreshold(t *testing.T) {
	r := newCrashRig(t)
	r.p.CheckpointBytes = 512
	var maxSize int64
	last := map[int32]int64{}
	for i := range 300 {
		part := int32(i % 7)
		r.must(r.p.Write(jkey(part), jstate(int64(i)), true))
		last[part] = int64(i)
		maxSize = max(maxSize, r.p.JournalSize())
	}
	// One record here is < 64 bytes: the journal never holds more than
	// the threshold plus one record.
	if maxSize > 512+64 {
		t.Fatalf("journal grew to %d bytes with a 512-byte threshold", maxSize)
	}
	if maxSize == 0 {
		t.Fatal("nothing journaled")
	}
	r.crash()
	for part, spso := range last {
		if got := r.load(jkey(part)); !reflect.DeepEqual(got, jstate(spso)) {
			t.Errorf("partition %d after crash = %+v, want spso %d", part, got, spso)
		}
	}
}

// A torn journal tail (the crash hit the write itself) loses only the
// torn record, whose Write never returned.
func TestJournaledPersisterTornTail(t *testing.T) {
	r := newCrashRig(t)
	r.must(r.p.Write(jkey(0), jstate(10), true))
	size := r.p.JournalSize()
	r.must(r.p.Write(jkey(0), jstate(20), true))
	r.p.Close()
	if err := os.Truncate(r.journal, size+5); err != nil {
		t.Fatal(err)
	}
	r.fs.SetIgnoreSyncs(true)
	r.db.Close()
	r.fs.ResetToSyncedState()
	r.fs.SetIgnoreSyncs(false)
	r.open()
	if got := r.load(jkey(0)); !reflect.DeepEqual(got, jstate(10)) {
		t.Fatalf("state after torn tail = %+v", got)
	}
}

func TestJournaledPersisterSyncEveryWrite(t *testing.T) {
	db := openPebble(t, vfs.NewMem())
	defer db.Close()
	path := filepath.Join(t.TempDir(), "share.journal")
	p, err := OpenJournaledPersister(db, path, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(jkey(0), jstate(1), true); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	j := openJournal(t, path, JournalOptions{})
	got, n, err := replayAll(j)
	if err != nil || n != 1 || got[0].key != jkey(0) || !reflect.DeepEqual(&got[0].st, jstate(1)) {
		t.Fatalf("journal holds %d records, %v", n, err)
	}
}

// BenchmarkPersisterWriteSync: the cost of one durable write on the
// machine's disk, pebble fsync against the journal.
func BenchmarkPersisterWriteSync(b *testing.B) {
	open := func(b *testing.B) *pebble.DB {
		db, err := pebble.Open(filepath.Join(b.TempDir(), "state"), &pebble.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}
	cases := []struct {
		name string
		new  func(b *testing.B) Persister
	}{
		{"pebble-sync", func(b *testing.B) Persister { return NewPebblePersister(open(b)) }},
		{"journal", func(b *testing.B) Persister {
			p, err := OpenJournaledPersister(open(b), filepath.Join(b.TempDir(), "j"), false, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close() })
			return p
		}},
		{"journal-sync-every-write", func(b *testing.B) Persister {
			p, err := OpenJournaledPersister(open(b), filepath.Join(b.TempDir(), "j"), true, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close() })
			return p
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			p := tc.new(b)
			st := jstate(0)
			for i := 0; b.Loop(); i++ {
				st.StartOffset = int64(i)
				st.Batches[0] = StateBatch{int64(i) + 1, int64(i) + 1, Acknowledged, 1}
				if err := p.Write(jkey(int32(i%4)), st, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPersisterWriteSyncParallel: durable writes of many
// share-partitions at once (several consumers acknowledging).
func BenchmarkPersisterWriteSyncParallel(b *testing.B) {
	for _, mode := range []string{"pebble-sync", "journal", "journal-sync-every-write"} {
		b.Run(mode, func(b *testing.B) {
			db, err := pebble.Open(filepath.Join(b.TempDir(), "state"), &pebble.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var p Persister = NewPebblePersister(db)
			if mode != "pebble-sync" {
				jp, err := OpenJournaledPersister(db, filepath.Join(b.TempDir(), "j"), mode == "journal-sync-every-write", nil)
				if err != nil {
					b.Fatal(err)
				}
				defer jp.Close()
				p = jp
			}
			var next atomic.Int32
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				part := next.Add(1)
				st := jstate(0)
				for i := int64(0); pb.Next(); i++ {
					st.StartOffset = i
					st.Batches[0] = StateBatch{i + 1, i + 1, Acknowledged, 1}
					if err := p.Write(jkey(part), st, true); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// Concurrent sync writers with syncEveryWrite share fsyncs and each sees
// its own record in the journal once Write returns.
func TestJournaledPersisterGroupSync(t *testing.T) {
	db := openPebble(t, vfs.NewMem())
	defer db.Close()
	path := filepath.Join(t.TempDir(), "share.journal")
	p, err := OpenJournaledPersister(db, path, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	const writers, writes = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				if err := p.Write(jkey(int32(w)), jstate(int64(i)), true); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every Write returned after an fsync that covered its record.
	p.gsync.Lock()
	synced := p.gsync.synced
	p.gsync.Unlock()
	if appended := p.mu.j.Appended(); synced != appended || appended == 0 {
		t.Fatalf("synced %d of %d appended journal bytes", synced, appended)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	j := openJournal(t, path, JournalOptions{})
	last := map[Key]State{}
	n, err := j.Replay(func(k Key, st *State) error {
		last[k] = State{StartOffset: st.StartOffset, StateEpoch: st.StateEpoch, DeliveryCompleteCount: st.DeliveryCompleteCount,
			Batches: append([]StateBatch(nil), st.Batches...)}
		return nil
	})
	if err != nil || n != writers*writes {
		t.Fatalf("journal holds %d records, %v; want %d", n, err, writers*writes)
	}
	for w := range writers {
		if got := last[jkey(int32(w))]; !reflect.DeepEqual(&got, jstate(writes-1)) {
			t.Errorf("writer %d last record %+v", w, got)
		}
	}
}

// When the journal cannot take a record, a sync Write falls back to a
// pebble fsync: the state still survives a crash.
func TestJournaledPersisterWriteThrough(t *testing.T) {
	r := newCrashRig(t)
	r.must(r.p.Write(jkey(0), jstate(10), true))
	r.must(r.p.Write(jkey(1), jstate(11), false))
	r.must(r.p.mu.j.f.Close()) // every later append fails
	r.must(r.p.Write(jkey(2), jstate(12), true))
	r.p.Close()
	r.fs.SetIgnoreSyncs(true)
	r.db.Close()
	r.fs.ResetToSyncedState()
	r.fs.SetIgnoreSyncs(false)
	r.open()
	// The pebble sync also made the earlier non-sync write durable.
	for p, want := range []*State{jstate(10), jstate(11), jstate(12)} {
		if got := r.load(jkey(int32(p))); !reflect.DeepEqual(got, want) {
			t.Errorf("partition %d after crash = %+v", p, got)
		}
	}
}

// reopenAfterCrash closes everything without a checkpoint, forgets
// pebble's unsynced writes, lets damage change the journal file, and
// reopens.
func (r *crashRig) reopenAfterCrash(damage func(b []byte)) {
	r.t.Helper()
	r.p.Close()
	r.fs.SetIgnoreSyncs(true)
	r.db.Close()
	r.fs.ResetToSyncedState()
	r.fs.SetIgnoreSyncs(false)
	if damage != nil {
		b, err := os.ReadFile(r.journal)
		r.must(err)
		damage(b)
		r.must(os.WriteFile(r.journal, b, 0o644))
	}
	r.p, r.db = nil, nil
	r.open()
}

// TestJournaledPersisterCorruptRecords: corrupt records in the middle of
// the journal cost only themselves. A share-partition whose damaged
// record a later one supersedes loses nothing; one with an older state
// restarts from it; one whose only state was damaged is refused with
// ErrStateLost, across restarts, instead of starting afresh at
// share.auto.offset.reset=latest (which skipped every undelivered
// record), until a new state is written for it. Before, the first bad
// record ended the replay and every later one was dropped.
func TestJournaledPersisterCorruptRecords(t *testing.T) {
	r := newCrashRig(t)
	r.must(r.p.Write(jkey(3), jstate(5), true))
	r.must(r.p.Flush()) // k3's state 5 is checkpointed in pebble
	var ends []int64
	for _, w := range []struct {
		p    int32
		spso int64
	}{{0, 10}, {0, 20}, {1, 30}, {2, 40}, {3, 50}, {2, 60}} {
		r.must(r.p.Write(jkey(w.p), jstate(w.spso), true))
		ends = append(ends, r.p.JournalSize())
	}
	// Damage the last byte (state, not key) of records 0, 2 and 4.
	r.reopenAfterCrash(func(b []byte) {
		for _, i := range []int{0, 2, 4} {
			b[ends[i]-1] ^= 0xff
		}
	})
	if got := r.load(jkey(0)); !reflect.DeepEqual(got, jstate(20)) {
		t.Fatalf("k0, damaged then superseded: %+v, want state 20", got)
	}
	if got := r.load(jkey(2)); !reflect.DeepEqual(got, jstate(60)) {
		t.Fatalf("k2, after the damage: %+v, want state 60", got)
	}
	if got := r.load(jkey(3)); !reflect.DeepEqual(got, jstate(5)) {
		t.Fatalf("k3, latest damaged: %+v, want its checkpointed state 5", got)
	}
	var st State
	if _, err := r.p.Load(jkey(1), &st); !errors.Is(err, ErrStateLost) {
		t.Fatalf("k1, only state damaged: Load = %v, want ErrStateLost", err)
	}
	r.reopenAfterCrash(nil)
	if _, err := r.p.Load(jkey(1), &st); !errors.Is(err, ErrStateLost) {
		t.Fatalf("k1 after another restart: Load = %v, want ErrStateLost", err)
	}
	if got := r.load(jkey(2)); !reflect.DeepEqual(got, jstate(60)) {
		t.Fatalf("k2 after another restart: %+v", got)
	}
	// An operator's reset writes a new state: the share-partition loads.
	r.must(r.p.Write(jkey(1), jstate(70), true))
	r.reopenAfterCrash(nil)
	if got := r.load(jkey(1)); !reflect.DeepEqual(got, jstate(70)) {
		t.Fatalf("k1 after a new state was written: %+v", got)
	}
	// Deleting the group clears a mark too.
	r.must(r.p.Write(jkey(5), jstate(1), true))
	size := r.p.JournalSize()
	r.reopenAfterCrash(func(b []byte) { b[size-1] ^= 0xff })
	if _, err := r.p.Load(jkey(5), &st); !errors.Is(err, ErrStateLost) {
		t.Fatalf("k5, corrupt final record: Load = %v, want ErrStateLost", err)
	}
	r.must(r.p.DeleteGroup("g"))
	if got := r.load(jkey(5)); got != nil {
		t.Fatalf("k5 after DeleteGroup: %+v, want no state", got)
	}
	// ClearLost (AlterShareGroupOffsets' way in) clears a mark for good.
	r.must(r.p.Write(jkey(6), jstate(1), true))
	size = r.p.JournalSize()
	r.reopenAfterCrash(func(b []byte) { b[size-1] ^= 0xff })
	if _, err := r.p.Load(jkey(6), &st); !errors.Is(err, ErrStateLost) {
		t.Fatalf("k6: Load = %v, want ErrStateLost", err)
	}
	r.must(r.p.ClearLost(jkey(6)))
	r.reopenAfterCrash(nil)
	if got := r.load(jkey(6)); got != nil {
		t.Fatalf("k6 after ClearLost: %+v, want no state", got)
	}
}

// A journaled state reaches pebble only at a checkpoint: until then Load,
// Keys and Groups see it all the same, a later non-sync write of the key
// is not overwritten by it at the checkpoint, and a crash before the
// checkpoint keeps it (from the journal).
func TestJournaledPersisterPendingStates(t *testing.T) {
	r := newCrashRig(t)
	r.must(r.p.Write(jkey(0), jstate(10), true))
	if _, closer, err := r.db.Get(mustKey(t, jkey(0))); err == nil {
		closer.Close()
		t.Fatal("a journaled state was written to pebble before a checkpoint")
	}
	if got := r.load(jkey(0)); !reflect.DeepEqual(got, jstate(10)) {
		t.Fatalf("Load of a pending state = %+v", got)
	}
	keys, err := r.p.Keys("g", nil)
	r.must(err)
	if !reflect.DeepEqual(keys, []Key{jkey(0)}) {
		t.Fatalf("Keys = %v", keys)
	}
	groups, err := r.p.Groups()
	r.must(err)
	if !reflect.DeepEqual(groups, []string{"g"}) {
		t.Fatalf("Groups = %v", groups)
	}

	r.must(r.p.Write(jkey(1), jstate(20), true))
	r.must(r.p.Write(jkey(1), jstate(21), false)) // newer, not journaled
	if got := r.load(jkey(1)); !reflect.DeepEqual(got, jstate(21)) {
		t.Fatalf("Load after a non-sync write = %+v", got)
	}
	r.must(r.p.Write(jkey(2), jstate(30), true))
	r.must(r.p.Write(jkey(2), jstate(31), true))
	r.must(r.p.Flush())
	for p, want := range map[int32]*State{0: jstate(10), 1: jstate(21), 2: jstate(31)} {
		var st State
		ok, err := r.p.PebblePersister.Load(jkey(p), &st)
		if err != nil || !ok || !reflect.DeepEqual(&st, want) {
			t.Fatalf("pebble holds %+v (%v %v) for partition %d after the checkpoint, want %+v", st, ok, err, p, want)
		}
	}

	r.must(r.p.Write(jkey(3), jstate(40), true))
	r.crash()
	if got := r.load(jkey(3)); !reflect.DeepEqual(got, jstate(40)) {
		t.Fatalf("pending state after a crash = %+v", got)
	}
}

func mustKey(t *testing.T, k Key) []byte {
	t.Helper()
	b, err := AppendKey(nil, k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
