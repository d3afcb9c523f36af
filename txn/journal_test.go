package txn

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble"

	"sharq/group"
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

// TestJournalDamage: the state journal's damage rule on the records the
// transaction and group coordinators write (both through one journal, in
// one order): a torn tail loses only the write a crash cut short; a
// damaged record in the middle, or one whose length is damaged, loses only
// its own write, which goes back to its previous value, and every later
// write is replayed (the rule before ended the replay there, dropping
// them); a foreign file loses what it would have held and is kept aside.
func TestJournalDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.journal")
	db := openTestDB(t, filepath.Join(dir, "live"))
	j, err := statejournal.Open(db, path, statejournal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	txns, offsets := NewJournaledStore(db, j), group.NewJournaledPebbleStore(db, j)
	tp := group.TopicPartition{Topic: "t", Partition: 0}
	commit := func(off int64) func() error {
		return func() error {
			return offsets.Commit("g", map[group.TopicPartition]group.Offset{tp: {Offset: off, LeaderEpoch: -1}})
		}
	}
	put := func(id string, m Metadata) func() error { return func() error { return txns.Put(id, &m) } }
	// Record i of the journal is writes[i].
	writes := []func() error{
		put("a", testMeta(1, Empty)),
		commit(10),
		put("b", testMeta(2, Empty)),
		put("a", testMeta(1, Ongoing, TopicPartition{"t", 0})),
		func() error { return txns.Delete("b") },
		commit(20),
		put("a", testMeta(1, PrepareCommit, TopicPartition{"t", 0})),
		commit(30),
	}
	var ends []int64
	for i, w := range writes {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		ends = append(ends, j.Size())
	}
	crashed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	db.Close()
	at := func(i int) int64 { // a byte inside record i's body
		return ends[i] - 2
	}
	type state struct {
		a      State // -1: absent
		b      bool
		offset int64
	}
	cases := []struct {
		name   string
		damage func([]byte) []byte
		want   state
		kept   bool // a .damaged copy
	}{
		{"none", func(b []byte) []byte { return b }, state{PrepareCommit, false, 30}, false},
		{"torn tail", func(b []byte) []byte { return b[:ends[6]+5] }, state{PrepareCommit, false, 20}, false},
		{"corrupt middle: the commit decision", flipAt(at(6)), state{Ongoing, false, 30}, true},
		{"corrupt middle: a deletion", flipAt(at(4)), state{PrepareCommit, true, 30}, true},
		{"corrupt middle: an offset commit", flipAt(at(5)), state{PrepareCommit, false, 30}, true},
		{"bad length", flipAt(ends[2]), state{PrepareCommit, false, 30}, true},
		{"corrupt final record", flipAt(at(7)), state{PrepareCommit, false, 20}, true},
		{"foreign file", func([]byte) []byte { return bytes.Repeat([]byte("not a journal "), 100) }, state{-1, false, -1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.journal")
			data := tc.damage(bytes.Clone(crashed))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			db := openTestDB(t, filepath.Join(dir, "db"))
			defer db.Close()
			j, err := statejournal.Open(db, path, statejournal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			got, err := NewJournaledStore(db, j).Load()
			if err != nil {
				t.Fatal(err)
			}
			offs, err := group.NewJournaledPebbleStore(db, j).Load()
			if err != nil {
				t.Fatal(err)
			}
			g := state{a: -1, offset: -1}
			if m, ok := got["a"]; ok {
				g.a = m.State
			}
			_, g.b = got["b"]
			if o, ok := offs["g"][tp]; ok {
				g.offset = o.Offset
			}
			if g != tc.want {
				t.Fatalf("replayed %+v, want %+v", g, tc.want)
			}
			_, err = os.Stat(path + ".damaged")
			if (err == nil) != tc.kept {
				t.Fatalf("damaged copy kept: %v, want %v", err == nil, tc.kept)
			}
		})
	}
}

func flipAt(i int64) func([]byte) []byte {
	return func(b []byte) []byte {
		b[i] ^= 0x80
		return b
	}
}
