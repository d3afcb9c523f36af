package share

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"sharq/log/statejournal"
)

// openJournaled opens the state journal at path over db, with share's
// Lost hook as the broker wires it, and the persister on it.
func openJournaled(t testing.TB, db *pebble.DB, path string, o statejournal.Options) (*statejournal.Journal, *JournaledPersister) {
	t.Helper()
	o.Lost = MarkLost(nil)
	j, err := statejournal.Open(db, path, o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewJournaledPersister(db, j, nil)
	if err != nil {
		j.Close()
		t.Fatal(err)
	}
	return j, p
}

func newJournaledPersister(t *testing.T) Persister {
	db := openPebble(t, vfs.NewMem())
	j, p := openJournaled(t, db, filepath.Join(t.TempDir(), "state.journal"), statejournal.Options{})
	t.Cleanup(func() {
		j.Close()
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
	j       *statejournal.Journal
	p       *JournaledPersister
	journal string
	opts    statejournal.Options
}

func newCrashRig(t *testing.T, opts statejournal.Options) *crashRig {
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
	r := &crashRig{t: t, fs: fs, journal: filepath.Join(t.TempDir(), "state.journal"), opts: opts}
	r.open()
	t.Cleanup(func() {
		if r.p != nil {
			r.j.Close()
			r.db.Close()
		}
	})
	return r
}

func (r *crashRig) open() {
	r.t.Helper()
	r.db = openPebble(r.t, r.fs)
	r.j, r.p = openJournaled(r.t, r.db, r.journal, r.opts)
}

// crash stops everything as a killed process does, forgetting pebble's
// unsynced writes and keeping the journal file, and reopens.
func (r *crashRig) crash() { r.reopenAfterCrash(nil) }

// reopenAfterCrash crashes, lets damage change the journal file, and
// reopens.
func (r *crashRig) reopenAfterCrash(damage func(b []byte) []byte) {
	r.t.Helper()
	left, err := os.ReadFile(r.journal)
	r.must(err)
	// Close checkpoints, but its syncs are ignored and then forgotten;
	// the journal file is put back as the crash left it.
	r.fs.SetIgnoreSyncs(true)
	r.j.Close()
	r.db.Close()
	r.fs.ResetToSyncedState()
	r.fs.SetIgnoreSyncs(false)
	if damage != nil {
		left = damage(left)
	}
	r.must(os.WriteFile(r.journal, left, 0o644))
	r.p, r.db, r.j = nil, nil, nil
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
	r := newCrashRig(t, statejournal.Options{})
	r.must(r.p.Write(jkey(0), jstate(10), true))
	r.must(r.p.Write(jkey(0), jstate(20), true))
	r.must(r.p.Write(jkey(1), jstate(30), false))
	if r.j.Size() == 0 {
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
	if r.j.Size() != 0 {
		t.Fatalf("journal not emptied by the replay: %d bytes", r.j.Size())
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
	r := newCrashRig(t, statejournal.Options{})
	r.must(r.p.Write(jkey(0), jstate(10), true))
	r.must(r.p.Write(jkey(1), jstate(11), false))
	r.must(r.p.Flush())
	if r.j.Size() != 0 {
		t.Fatalf("journal size after Flush = %d", r.j.Size())
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
			r := newCrashRig(t, statejournal.Options{})
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
	r := newCrashRig(t, statejournal.Options{CheckpointBytes: 512})
	var maxSize int64
	last := map[int32]int64{}
	for i := range 300 {
		part := int32(i % 7)
		r.must(r.p.Write(jkey(part), jstate(int64(i)), true))
		last[part] = int64(i)
		maxSize = max(maxSize, r.j.Size())
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

// journaledRecords decodes the journal file at path: the last state
// journaled per key and the number of records.
func journaledRecords(t *testing.T, path string) (map[Key]State, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := map[Key]State{}
	r, err := statejournal.Decode(data, func(kind pebble.InternalKeyKind, k, v []byte) error {
		key, err := ParseKey(k)
		if err != nil || kind != pebble.InternalKeyKindSet {
			t.Fatalf("journal holds %v %q: %v", kind, k, err)
		}
		var st State
		if err := DecodeState(v, &st); err != nil {
			t.Fatal(err)
		}
		last[key] = st
		return nil
	})
	if err != nil || len(r.Damage) != 0 {
		t.Fatalf("decode journal: %+v %v", r.Damage, err)
	}
	return last, r.Records
}

func TestJournaledPersisterSyncEveryWrite(t *testing.T) {
	r := newCrashRig(t, statejournal.Options{SyncEveryWrite: true})
	r.must(r.p.Write(jkey(0), jstate(1), true))
	last, n := journaledRecords(t, r.journal)
	if got := last[jkey(0)]; n != 1 || !reflect.DeepEqual(&got, jstate(1)) {
		t.Fatalf("journal holds %d records, %+v", n, last)
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
	journaled := func(syncEvery bool) func(b *testing.B) Persister {
		return func(b *testing.B) Persister {
			j, p := openJournaled(b, open(b), filepath.Join(b.TempDir(), "j"), statejournal.Options{SyncEveryWrite: syncEvery})
			b.Cleanup(func() { j.Close() })
			return p
		}
	}
	cases := []struct {
		name string
		new  func(b *testing.B) Persister
	}{
		{"pebble-sync", func(b *testing.B) Persister { return NewPebblePersister(open(b)) }},
		{"journal", journaled(false)},
		{"journal-sync-every-write", journaled(true)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			p := tc.new(b)
			st := jstate(0)
			b.ReportAllocs()
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
				j, jp := openJournaled(b, db, filepath.Join(b.TempDir(), "j"), statejournal.Options{SyncEveryWrite: mode == "journal-sync-every-write"})
				defer j.Close()
				p = jp
			}
			var next atomic.Int32
			b.SetParallelism(4)
			b.ReportAllocs()
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

// Concurrent sync writers with SyncEveryWrite each find their last state
// in the journal once Write returns (the fsyncs they share are the
// journal's, TestDurableGroupSync).
func TestJournaledPersisterGroupSync(t *testing.T) {
	r := newCrashRig(t, statejournal.Options{SyncEveryWrite: true})
	const writers, writes = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				if err := r.p.Write(jkey(int32(w)), jstate(int64(i)), true); err != nil {
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
	last, n := journaledRecords(t, r.journal)
	if n != writers*writes {
		t.Fatalf("journal holds %d records, want %d", n, writers*writes)
	}
	for w := range writers {
		if got := last[jkey(int32(w))]; !reflect.DeepEqual(&got, jstate(writes-1)) {
			t.Errorf("writer %d last record %+v", w, got)
		}
	}
}

// TestJournaledPersisterCorruptRecords: corrupt records in the middle of
// the journal cost only themselves. A share-partition whose damaged
// record a later one supersedes loses nothing; one with an older state
// restarts from it; one whose only state was damaged is refused with
// ErrStateLost, across restarts, instead of starting afresh at
// share.auto.offset.reset=latest (which skipped every undelivered
// record), until a new state is written for it.
func TestJournaledPersisterCorruptRecords(t *testing.T) {
	r := newCrashRig(t, statejournal.Options{})
	r.must(r.p.Write(jkey(3), jstate(5), true))
	r.must(r.p.Flush()) // k3's state 5 is checkpointed in pebble
	var ends []int64
	for _, w := range []struct {
		p    int32
		spso int64
	}{{0, 10}, {0, 20}, {1, 30}, {2, 40}, {3, 50}, {2, 60}} {
		r.must(r.p.Write(jkey(w.p), jstate(w.spso), true))
		ends = append(ends, r.j.Size())
	}
	// Damage the last byte (state, not key) of records 0, 2 and 4.
	r.reopenAfterCrash(func(b []byte) []byte {
		for _, i := range []int{0, 2, 4} {
			b[ends[i]-1] ^= 0xff
		}
		return b
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
	r.crash()
	if _, err := r.p.Load(jkey(1), &st); !errors.Is(err, ErrStateLost) {
		t.Fatalf("k1 after another restart: Load = %v, want ErrStateLost", err)
	}
	if got := r.load(jkey(2)); !reflect.DeepEqual(got, jstate(60)) {
		t.Fatalf("k2 after another restart: %+v", got)
	}
	// An operator's reset writes a new state: the share-partition loads.
	r.must(r.p.Write(jkey(1), jstate(70), true))
	r.crash()
	if got := r.load(jkey(1)); !reflect.DeepEqual(got, jstate(70)) {
		t.Fatalf("k1 after a new state was written: %+v", got)
	}
	// Deleting the group clears a mark too.
	r.must(r.p.Write(jkey(5), jstate(1), true))
	size := r.j.Size()
	r.reopenAfterCrash(func(b []byte) []byte { b[size-1] ^= 0xff; return b })
	if _, err := r.p.Load(jkey(5), &st); !errors.Is(err, ErrStateLost) {
		t.Fatalf("k5, corrupt final record: Load = %v, want ErrStateLost", err)
	}
	r.must(r.p.DeleteGroup("g"))
	if got := r.load(jkey(5)); got != nil {
		t.Fatalf("k5 after DeleteGroup: %+v, want no state", got)
	}
	// ClearLost (AlterShareGroupOffsets' way in) clears a mark for good.
	r.must(r.p.Write(jkey(6), jstate(1), true))
	size = r.j.Size()
	r.reopenAfterCrash(func(b []byte) []byte { b[size-1] ^= 0xff; return b })
	if _, err := r.p.Load(jkey(6), &st); !errors.Is(err, ErrStateLost) {
		t.Fatalf("k6: Load = %v, want ErrStateLost", err)
	}
	r.must(r.p.ClearLost(jkey(6)))
	r.crash()
	if got := r.load(jkey(6)); got != nil {
		t.Fatalf("k6 after ClearLost: %+v, want no state", got)
	}
}

// TestJournaledPersisterDamage: each kind of journal damage on share
// records, through the persister as the broker opens it. A torn tail
// loses only the write a crash cut short (never answered); a corrupt
// record or a bad length in the middle loses only its own state, every
// later one is replayed, and a share-partition left with no state is
// refused (ErrStateLost) rather than started afresh; a foreign file
// loses what it would have held, nothing readable is made up, and the
// checkpointed states stay.
func TestJournaledPersisterDamage(t *testing.T) {
	lost := &State{} // a sentinel: Load answers ErrStateLost
	cases := []struct {
		name   string
		damage func(b []byte, ends []int64) []byte
		want   []*State // per partition 0..3; nil: no state
	}{
		{"torn tail", func(b []byte, e []int64) []byte { return b[:e[4]-3] }, []*State{jstate(40), jstate(20), jstate(30), nil}},
		{"corrupt middle, later records good", func(b []byte, e []int64) []byte { b[e[1]-1] ^= 0x80; return b }, []*State{jstate(40), lost, jstate(30), jstate(50)}},
		{"bad length", func(b []byte, e []int64) []byte { b[e[1]] ^= 0x80; return b }, []*State{jstate(40), jstate(20), lost, jstate(50)}},
		{"foreign file", func(b []byte, e []int64) []byte { return bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 256) }, []*State{jstate(5), nil, nil, nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newCrashRig(t, statejournal.Options{})
			r.must(r.p.Write(jkey(0), jstate(5), true))
			r.must(r.p.Flush())
			var ends []int64
			for _, w := range []struct {
				p    int32
				spso int64
			}{{0, 10}, {1, 20}, {2, 30}, {0, 40}, {3, 50}} {
				r.must(r.p.Write(jkey(w.p), jstate(w.spso), true))
				ends = append(ends, r.j.Size())
			}
			r.reopenAfterCrash(func(b []byte) []byte { return tc.damage(b, ends) })
			for p, want := range tc.want {
				var st State
				ok, err := r.p.Load(jkey(int32(p)), &st)
				switch {
				case want == lost:
					if !errors.Is(err, ErrStateLost) {
						t.Errorf("partition %d: Load = %v, %v; want ErrStateLost", p, ok, err)
					}
				case err != nil:
					t.Errorf("partition %d: Load = %v", p, err)
				case want == nil && ok:
					t.Errorf("partition %d: %+v, want no state", p, st)
				case want != nil && (!ok || !reflect.DeepEqual(&st, want)):
					t.Errorf("partition %d: %+v (%v), want %+v", p, st, ok, want)
				}
			}
		})
	}
}

// A journaled state reaches pebble only at a checkpoint: until then Load,
// Keys and Groups see it all the same, a later non-sync write of the key
// is not overwritten by it at the checkpoint, and a crash before the
// checkpoint keeps it (from the journal).
func TestJournaledPersisterPendingStates(t *testing.T) {
	r := newCrashRig(t, statejournal.Options{})
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
