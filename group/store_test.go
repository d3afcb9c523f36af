package group

import (
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// TestStores runs the same sequence against both OffsetStore
// implementations.
func TestStores(t *testing.T) {
	db, err := pebble.Open("state", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// A share-state key beside ours must not be read as an offset.
	if err := db.Set([]byte("s/x"), []byte("share"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]OffsetStore{"mem": NewMemStore(), "pebble": NewPebbleStore(db)} {
		t.Run(name, func(t *testing.T) {
			a := TopicPartition{"t", 0}
			b := TopicPartition{"t", 1}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(st.Commit("g", map[TopicPartition]Offset{a: {Offset: 1, LeaderEpoch: 3, Metadata: "m", CommitTime: 9}, b: {Offset: 2, LeaderEpoch: -1}}))
			// "g" is a prefix of "g2": the length prefix keeps them apart.
			must(st.Commit("g2", map[TopicPartition]Offset{a: {Offset: 7, LeaderEpoch: -1}}))
			must(st.Delete("g", []TopicPartition{b}))
			got, err := st.Load()
			must(err)
			if len(got) != 2 || got["g"][a] != (Offset{Offset: 1, LeaderEpoch: 3, Metadata: "m", CommitTime: 9}) || len(got["g"]) != 1 || got["g2"][a].Offset != 7 {
				t.Fatalf("load = %+v", got)
			}
			must(st.DeleteGroup("g"))
			got, err = st.Load()
			must(err)
			if len(got) != 1 || got["g2"][a].Offset != 7 {
				t.Fatalf("after DeleteGroup(g): %+v", got)
			}
		})
	}
	v, closer, err := db.Get([]byte("s/x"))
	if err != nil || string(v) != "share" {
		t.Fatalf("share key disturbed: %q %v", v, err)
	}
	closer.Close()
}

// TestPebbleStoreCorruptValue: a bad record is reported, not loaded.
func TestPebbleStoreCorruptValue(t *testing.T) {
	db, err := pebble.Open("state", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Set(offsetKey("g", TopicPartition{"t", 0}), []byte{'o', 1, 0x80}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPebbleStore(db).Load(); err == nil {
		t.Fatal("corrupt offset record loaded without error")
	}
}
