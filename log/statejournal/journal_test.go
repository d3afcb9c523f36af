package statejournal

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
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
	t.Cleanup(func() { db.Close() })
	return db
}

func open(t testing.TB, db *pebble.DB, path string, o Options) *Journal {
	t.Helper()
	j, err := Open(db, path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
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

// step is one write a coordinator might make: a batch (group, txn) or a
// staged write (share).
type step struct {
	set       map[string]string
	del       []string
	rangeFrom string
	rangeTo   string
	stage     [2]string // key, value
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

// write makes the step through j.
func (s step) write(t testing.TB, db *pebble.DB, j *Journal) {
	t.Helper()
	if s.stage[0] != "" {
		pos, err := j.Stage([]byte(s.stage[0]), []byte(s.stage[1]))
		if err == nil {
			err = j.Durable(pos)
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	b := s.batch(db)
	defer b.Close()
	if err := j.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// apply makes the step directly in db, synced (what pebble kept).
func (s step) apply(t testing.TB, db *pebble.DB) {
	t.Helper()
	if s.stage[0] != "" {
		if err := db.Set([]byte(s.stage[0]), []byte(s.stage[1]), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		return
	}
	b := s.batch(db)
	defer b.Close()
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

// steps write, overwrite, delete, delete a range and write into it again,
// with share-like staged writes between the batches.
var steps = []step{
	{set: map[string]string{"g/a/0": "1", "g/a/1": "2", "g/b/0": "3"}},
	{stage: [2]string{"s/p0", "10"}},
	{set: map[string]string{"g/a/0": "4", "t/x": "ongoing"}},
	{stage: [2]string{"s/p1", "20"}},
	{del: []string{"g/b/0"}},
	{stage: [2]string{"s/p0", "11"}},
	{set: map[string]string{"g/c/0": "5", "g/c/1": "6"}},
	{rangeFrom: "g/a/", rangeTo: "g/a0"},
	{set: map[string]string{"g/a/1": "7", "t/x": "complete"}},
	{stage: [2]string{"s/p1", "21"}},
	{set: map[string]string{"g/d/0": "8"}, del: []string{"g/c/0"}},
}

var want = map[string]string{"g/a/1": "7", "t/x": "complete", "g/c/1": "6", "g/d/0": "8", "s/p0": "11", "s/p1": "21"}

// crash closes the journal's file without a checkpoint, as a killed
// process leaves it.
func crash(j *Journal) {
	j.mu.Lock()
	j.f.Close()
	j.mu.closed = true
	j.mu.Unlock()
}

// crashAfter writes every step through a journal on a fresh pebble in
// dir/src and crashes, leaving the journal at path.
func crashAfter(t *testing.T, dir, path string) {
	t.Helper()
	db := openDB(t, filepath.Join(dir, "src"))
	j, err := Open(db, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		s.write(t, db, j)
	}
	if err := j.WriteStaged(); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("live state %v, want %v", got, want)
	}
	crash(j)
}

// TestReplayOverAnyPrefix: whatever prefix of the writes pebble kept
// through a crash (none, some, all), replaying the journal over it gives
// the state the live store had.
func TestReplayOverAnyPrefix(t *testing.T) {
	for kept := 0; kept <= len(steps); kept++ {
		t.Run(fmt.Sprintf("pebble-kept-%d", kept), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.journal")
			crashAfter(t, dir, path)
			db := openDB(t, filepath.Join(dir, "dst"))
			for _, s := range steps[:kept] {
				s.apply(t, db)
			}
			j := open(t, db, path, Options{})
			if got := contents(t, db); !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed %v, want %v", got, want)
			}
			if j.Size() != 0 {
				t.Fatalf("journal not emptied by replay: %d bytes", j.Size())
			}
		})
	}
}

// damageRecs is the journal of the damage tests: six records of one kind,
// each writing one key; record 3 rewrites record 0's key.
var damageKeys = []string{"k/a", "k/b", "k/c", "k/a", "k/d", "k/e"}

// damageJournal returns the bytes of the damage tests' journal, staged
// writes or batches, and each record's end.
func damageJournal(staged bool) (data []byte, ends []int) {
	for i, k := range damageKeys {
		v := []byte(fmt.Sprintf("value-%d", i))
		if staged {
			data = appendStagedRecord(data, []byte(k), v)
		} else {
			b := new(pebble.Batch)
			b.Set([]byte(k), v, nil)
			data = appendBatchRecord(data, b.Repr())
		}
		ends = append(ends, len(data))
	}
	return data, ends
}

// TestDamage: the one damage rule, on batches (group, txn) and staged
// writes (share) alike. A torn tail is dropped with a warning; any other
// damaged stretch costs only itself: every later record is replayed, the
// file as found is kept as .damaged, the error names the keys it can, and
// Lost hears of each damaged key no later record rewrote. (The rule
// before ended the replay at the first damage on batches, losing every
// later record.)
func TestDamage(t *testing.T) {
	type dcase struct {
		name   string
		damage func(data []byte, ends []int) []byte
		lost   []int // records not replayed
		torn   bool
		reason string
		keys   []string // what Lost hears
		junk   bool     // a foreign file: what Lost hears is whatever parses
	}
	start := func(ends []int, i int) int {
		if i == 0 {
			return 0
		}
		return ends[i-1]
	}
	flip := func(i int, at func(ends []int) int) func([]byte, []int) []byte {
		return func(d []byte, ends []int) []byte {
			d = bytes.Clone(d)
			d[at(ends)] ^= 0x80
			return d
		}
	}
	cases := []dcase{
		{"torn tail", func(d []byte, ends []int) []byte { return d[:ends[5]-3] }, []int{5}, true, "short record", nil, false},
		{"torn header", func(d []byte, ends []int) []byte { return d[:ends[4]+5] }, []int{5}, true, "short record header", nil, false},
		{"corrupt middle, later records good", flip(1, func(e []int) int { return e[1] - 1 }), []int{1}, false, "checksum mismatch", []string{"k/b"}, false},
		{"corrupt middle, rewritten later", flip(0, func(e []int) int { return e[0] - 1 }), []int{0}, false, "checksum mismatch", nil, false},
		{"corrupt checksum", flip(2, func(e []int) int { return e[1] + 4 }), []int{2}, false, "checksum mismatch", []string{"k/c"}, false},
		{"bad length", flip(2, func(e []int) int { return e[1] }), []int{2}, false, "bad record length", []string{"k/c"}, false},
		{"bad length of the first record", flip(0, func(e []int) int { return 0 }), []int{0}, false, "bad record length", nil, false},
		{"corrupt final record", flip(5, func(e []int) int { return e[5] - 1 }), []int{5}, false, "checksum mismatch", []string{"k/e"}, false},
		{"foreign file", func(d []byte, _ []int) []byte {
			r := rand.New(rand.NewPCG(1, 2))
			junk := make([]byte, 4096)
			for i := range junk {
				junk[i] = byte(r.Uint32())
			}
			return junk
		}, []int{0, 1, 2, 3, 4, 5}, false, "", nil, true},
		{"foreign text file", func(d []byte, _ []int) []byte {
			return []byte(strings.Repeat("listeners=PLAINTEXT://:9092\nlog.dirs=/var/lib/sharq\n", 40))
		}, []int{0, 1, 2, 3, 4, 5}, false, "", nil, true},
	}
	for _, staged := range []bool{false, true} {
		kind := "batch"
		if staged {
			kind = "staged"
		}
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				data, ends := damageJournal(staged)
				bad := tc.damage(data, ends)
				dir := t.TempDir()
				path := filepath.Join(dir, "state.journal")
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				db := openDB(t, filepath.Join(dir, "db"))
				var logBuf bytes.Buffer
				var heard []string
				j := open(t, db, path, Options{
					Logger: slog.New(slog.NewTextHandler(&logBuf, nil)),
					Lost: func(b *pebble.Batch, key []byte) error {
						heard = append(heard, string(key))
						return nil
					},
				})
				wantState := map[string]string{}
				skipped := map[int]bool{}
				for _, i := range tc.lost {
					skipped[i] = true
				}
				for i, k := range damageKeys {
					if !skipped[i] {
						wantState[k] = fmt.Sprintf("value-%d", i)
					}
				}
				if got := contents(t, db); !reflect.DeepEqual(got, wantState) {
					t.Fatalf("replayed %v, want %v", got, wantState)
				}
				if !tc.junk && !reflect.DeepEqual(heard, tc.keys) {
					t.Fatalf("Lost heard %q, want %q", heard, tc.keys)
				}
				if j.Size() != 0 {
					t.Fatalf("journal not emptied: %d bytes", j.Size())
				}
				kept, err := os.ReadFile(path + ".damaged")
				log := logBuf.String()
				if tc.torn {
					if err == nil {
						t.Fatal("a torn tail must not be kept as damage")
					}
					if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "torn final write") || strings.Contains(log, "level=ERROR") {
						t.Fatalf("log of a torn tail: %s", log)
					}
					return
				}
				if err != nil || !bytes.Equal(kept, bad) {
					t.Fatalf("damaged journal not kept as it was: %v", err)
				}
				if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "skipping a damaged record") || !strings.Contains(log, tc.reason) {
					t.Fatalf("log lacks the error %q: %s", tc.reason, log)
				}
				if len(tc.lost) == 1 {
					// The one damaged stretch is exactly the record.
					r, _ := Decode(bad, func(pebble.InternalKeyKind, []byte, []byte) error { return nil })
					i := tc.lost[0]
					if len(r.Damage) != 1 || r.Damage[0].Offset != int64(start(ends, i)) || r.Damage[0].Bytes != int64(ends[i]-start(ends, i)) || r.Damage[0].Torn {
						t.Fatalf("damage %+v, want record %d at %d..%d", r.Damage, i, start(ends, i), ends[i])
					}
				}
			})
		}
	}
}

// TestDamagedCopiesKept: a second damaged journal does not overwrite the
// copy of the first.
func TestDamagedCopiesKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.journal")
	db := openDB(t, filepath.Join(dir, "db"))
	for i, junk := range []string{"first junk file", "second junk file"} {
		os.WriteFile(path, []byte(junk), 0o644)
		j, err := Open(db, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		name := path + ".damaged"
		if i > 0 {
			name += ".1"
		}
		if got, err := os.ReadFile(name); err != nil || string(got) != junk {
			t.Fatalf("copy %s = %q, %v", name, got, err)
		}
	}
}

// TestRefusesForeignOperations: a checksummed record whose batch holds an
// operation the coordinators never write (a merge), or a sequence number,
// is damage: nothing of it is applied, the records around it are; and
// Commit refuses such a batch.
func TestRefusesForeignOperations(t *testing.T) {
	b := new(pebble.Batch)
	b.Set([]byte("a"), []byte("1"), nil)
	b.Merge([]byte("b"), []byte("2"), nil)
	merge := finishRecord(append(make([]byte, recordHeader), b.Repr()...), 0)
	seq := appendStagedRecord(nil, []byte("x"), []byte("y"))
	s := new(pebble.Batch)
	s.Set([]byte("c"), []byte("3"), nil)
	repr := bytes.Clone(s.Repr())
	repr[1] = 7 // a committed batch's sequence number (a first byte of 0 says "batch")
	seqd := finishRecord(append(make([]byte, recordHeader), repr...), 0)
	data := append(append(append([]byte(nil), merge...), seq...), seqd...)
	var applied []string
	r, err := Decode(data, func(_ pebble.InternalKeyKind, k, _ []byte) error {
		applied = append(applied, string(k))
		return nil
	})
	if err != nil || r.Records != 1 || !reflect.DeepEqual(applied, []string{"x"}) || len(r.Damage) != 2 {
		t.Fatalf("decode: %+v %v, applied %q", r, err, applied)
	}
	for _, d := range r.Damage {
		if !strings.Contains(d.Reason, "not a batch or staged write") {
			t.Fatalf("damage %+v", d)
		}
	}
	// Nor does Commit journal such a batch: replay would skip it.
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "db"))
	j := open(t, db, filepath.Join(dir, "state.journal"), Options{})
	mb := db.NewBatch()
	defer mb.Close()
	mb.Merge([]byte("b"), []byte("2"), nil)
	if err := j.Commit(mb); err == nil || j.Size() != 0 {
		t.Fatalf("Commit of a merge = %v, journal %d bytes", err, j.Size())
	}
}

// TestStaged: a staged write is readable at once, reaches pebble only at
// WriteStaged or a checkpoint, and is dropped by a newer Commit (set,
// delete or range deletion) or SetNoSync of its key.
func TestStaged(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "db"))
	j := open(t, db, filepath.Join(dir, "state.journal"), Options{})
	stage := func(k, v string) {
		t.Helper()
		if _, err := j.Stage([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	staged := func(k string) string {
		t.Helper()
		v, ok := j.StagedValue(nil, []byte(k))
		if !ok {
			return "<none>"
		}
		return string(v)
	}
	stage("s/a", "1")
	stage("s/a", "2")
	if got := staged("s/a"); got != "2" {
		t.Fatalf("staged s/a = %s", got)
	}
	if _, ok := contents(t, db)["s/a"]; ok {
		t.Fatal("a staged write reached pebble before a checkpoint")
	}
	stage("s/b", "1")
	b := db.NewBatch()
	b.Set([]byte("s/b"), []byte("commit"), nil)
	if err := j.Commit(b); err != nil {
		t.Fatal(err)
	}
	b.Close()
	stage("s/c", "1")
	if err := j.SetNoSync([]byte("s/c"), []byte("nosync")); err != nil {
		t.Fatal(err)
	}
	stage("s/d", "1")
	stage("s/e", "1")
	stage("t/f", "1")
	b = db.NewBatch()
	b.DeleteRange([]byte("s/d"), []byte("s/e\x00"), nil)
	if err := j.Commit(b); err != nil {
		t.Fatal(err)
	}
	b.Close()
	for k, w := range map[string]string{"s/a": "2", "s/b": "<none>", "s/c": "<none>", "s/d": "<none>", "s/e": "<none>", "t/f": "1"} {
		if got := staged(k); got != w {
			t.Errorf("staged %s = %s, want %s", k, got, w)
		}
	}
	if err := j.WriteStaged(); err != nil {
		t.Fatal(err)
	}
	live := map[string]string{"s/a": "2", "s/b": "commit", "s/c": "nosync", "t/f": "1"}
	if got := contents(t, db); !reflect.DeepEqual(got, live) {
		t.Fatalf("pebble after WriteStaged %v, want %v", got, live)
	}
	if j.Size() == 0 {
		t.Fatal("WriteStaged emptied the journal")
	}
	stage("s/a", "3")
	if err := j.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	live["s/a"] = "3"
	if got := contents(t, db); !reflect.DeepEqual(got, live) || j.Size() != 0 {
		t.Fatalf("after the checkpoint: pebble %v, journal %d bytes", got, j.Size())
	}
	if _, err := j.Stage(nil, []byte("v")); err == nil {
		t.Fatal("staged an empty key")
	}
}

// TestCheckpoint: past CheckpointBytes a write syncs pebble and empties
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
	j, err := Open(db, filepath.Join(dir, "state.journal"), Options{CheckpointBytes: 1 << 10, SyncEveryWrite: syncEvery})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		s := step{set: map[string]string{fmt.Sprintf("k%03d", i): strings.Repeat("v", 50)}}
		if i%2 == 1 {
			s = step{stage: [2]string{fmt.Sprintf("s%03d", i), strings.Repeat("v", 50)}}
		}
		s.write(t, db, j)
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
	if _, err := j.Stage([]byte("late"), nil); err == nil {
		t.Fatal("stage after Close must fail")
	}
}

// TestDurableGroupSync: with SyncEveryWrite, concurrent writers share
// fsyncs, and each returns after an fsync that covered its record.
func TestDurableGroupSync(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "db"))
	j := open(t, db, filepath.Join(dir, "state.journal"), Options{SyncEveryWrite: true})
	const writers, writes = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				var err error
				if w%2 == 0 {
					var pos int64
					if pos, err = j.Stage(fmt.Appendf(nil, "s/%d", w), fmt.Appendf(nil, "%d", i)); err == nil {
						err = j.Durable(pos)
					}
				} else {
					b := db.NewBatch()
					b.Set(fmt.Appendf(nil, "g/%d", w), fmt.Appendf(nil, "%d", i), nil)
					err = j.Commit(b)
					b.Close()
				}
				if err != nil {
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
	j.gsync.Lock()
	synced := j.gsync.synced
	j.gsync.Unlock()
	if appended := j.appended.Load(); synced != appended || appended == 0 {
		t.Fatalf("synced %d of %d appended journal bytes", synced, appended)
	}
}

// TestWriteThrough: when the journal cannot take a record, a write falls
// back to a pebble sync, which also makes every earlier write (and staged
// value) durable; a crash right after keeps them all.
func TestWriteThrough(t *testing.T) {
	fs := vfs.NewStrictMem()
	if err := fs.MkdirAll("db", 0o755); err != nil {
		t.Fatal(err)
	}
	if root, err := fs.OpenDir(""); err != nil || root.Sync() != nil {
		t.Fatal("sync the root of the in-memory file system", err)
	} else {
		root.Close()
	}
	db, err := pebble.Open("db", &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.journal")
	j, err := Open(db, path, Options{SyncEveryWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	steps[0].write(t, db, j)
	steps[1].write(t, db, j)
	j.f.Close() // every later append and fsync fails
	steps[2].write(t, db, j)
	steps[3].write(t, db, j)
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("journal after write-through: %v %v, want emptied", fi, err)
	}
	// Crash: pebble keeps only what it synced.
	fs.SetIgnoreSyncs(true)
	db.Close()
	fs.ResetToSyncedState()
	fs.SetIgnoreSyncs(false)
	db, err = pebble.Open("db", &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ref := openDB(t, t.TempDir())
	for _, s := range steps[:4] {
		s.apply(t, ref)
	}
	if got, w := contents(t, db), contents(t, ref); !reflect.DeepEqual(got, w) {
		t.Fatalf("after write-through and a crash %v, want %v", got, w)
	}
}

// FuzzDecode: whatever bytes the journal file holds, the one replay
// neither panics nor applies anything but the operations the coordinators
// write; good records and damaged stretches tile the input in order; the
// good records alone decode to the same operations with no damage; and
// a cut of them at a record boundary replays exactly the records before
// it (one inside a record, those and a torn tail).
func FuzzDecode(f *testing.F) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	var seed []byte
	for _, s := range steps {
		if s.stage[0] != "" {
			seed = appendStagedRecord(seed, []byte(s.stage[0]), []byte(s.stage[1]))
			continue
		}
		b := s.batch(db)
		seed = appendBatchRecord(seed, b.Repr())
		b.Close()
	}
	f.Add(seed, uint32(0))
	f.Add(seed[:len(seed)-5], uint32(17))
	flipped := bytes.Clone(seed)
	flipped[len(flipped)/2] ^= 1
	f.Add(flipped, uint32(40))
	f.Add([]byte{0, 0, 0, 12, 0, 0, 0, 0}, uint32(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1}, uint32(3))
	type op struct {
		kind pebble.InternalKeyKind
		k, v string
	}
	collect := func(t *testing.T, data []byte) ([]op, Replayed) {
		var ops []op
		r, err := Decode(data, func(kind pebble.InternalKeyKind, k, v []byte) error {
			switch kind {
			case pebble.InternalKeyKindSet, pebble.InternalKeyKindDelete, pebble.InternalKeyKindRangeDelete:
			default:
				t.Fatalf("applied operation kind %v", kind)
			}
			ops = append(ops, op{kind, string(k), string(v)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return ops, r
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint32) {
		ops, r := collect(t, data)
		var good []byte
		var ends []int
		pos := 0
		d := 0
		_, err := scan(data, func(off int, body []byte) error {
			for d < len(r.Damage) && int(r.Damage[d].Offset) < off {
				if int(r.Damage[d].Offset) != pos {
					t.Fatalf("damage %+v does not start where the good bytes end (%d)", r.Damage[d], pos)
				}
				pos += int(r.Damage[d].Bytes)
				d++
			}
			if off != pos {
				t.Fatalf("record at %d, expected at %d", off, pos)
			}
			good = append(good, data[off:off+recordHeader+len(body)]...)
			ends = append(ends, len(good))
			pos = off + recordHeader + len(body)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for ; d < len(r.Damage); d++ {
			if int(r.Damage[d].Offset) != pos || (r.Damage[d].Torn && !r.Damage[d].Tail) {
				t.Fatalf("damage %+v out of place (at %d)", r.Damage[d], pos)
			}
			pos += int(r.Damage[d].Bytes)
		}
		if pos != len(data) || len(ends) != r.Records {
			t.Fatalf("good records and damage cover %d of %d bytes; %d records, %d counted", pos, len(data), len(ends), r.Records)
		}
		again, r2 := collect(t, good)
		if len(r2.Damage) != 0 || !reflect.DeepEqual(again, ops) {
			t.Fatalf("the good records alone decode to %d operations and %+v, want %d and no damage", len(again), r2.Damage, len(ops))
		}
		if len(ends) == 0 {
			return
		}
		i := int(cut) % len(ends)
		_, r3 := collect(t, good[:ends[i]])
		if r3.Records != i+1 || len(r3.Damage) != 0 {
			t.Fatalf("cut after record %d: %d records, %+v", i, r3.Records, r3.Damage)
		}
		if inside := ends[i] - 1; i+1 < len(ends) || inside > 0 {
			_, r4 := collect(t, good[:inside])
			if r4.Records < i || len(r4.Damage) == 0 || !r4.Damage[len(r4.Damage)-1].Tail {
				t.Fatalf("cut inside record %d: %d records, %+v", i, r4.Records, r4.Damage)
			}
		}
	})
}

// BenchmarkCommit: one offset-commit-sized batch through the journal (a
// write(2) and a pebble NoSync commit).
func BenchmarkCommit(b *testing.B) {
	dir := b.TempDir()
	db := openDB(b, filepath.Join(dir, "db"))
	j := open(b, db, filepath.Join(dir, "state.journal"), Options{})
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

// BenchmarkStage: one share-state-sized staged write (a write(2), no
// pebble commit), the share acknowledgement's cost.
func BenchmarkStage(b *testing.B) {
	dir := b.TempDir()
	db := openDB(b, filepath.Join(dir, "db"))
	j := open(b, db, filepath.Join(dir, "state.journal"), Options{})
	key := []byte("s/group\x00topic-id-16-bytes\x00\x00\x00\x03")
	val := bytes.Repeat([]byte{1}, 40)
	b.ReportAllocs()
	for b.Loop() {
		pos, err := j.Stage(key, val)
		if err == nil {
			err = j.Durable(pos)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPebbleSync is what each commit cost before the journal: a
// pebble Sync commit (an fsync) of the same batch.
func BenchmarkPebbleSync(b *testing.B) {
	db := openDB(b, b.TempDir())
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
