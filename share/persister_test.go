package share

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

func openPebble(t *testing.T, fs vfs.FS) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("state", &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newPebblePersister(t *testing.T) Persister {
	db := openPebble(t, vfs.NewMem())
	t.Cleanup(func() { db.Close() })
	return NewPebblePersister(db)
}

var persisters = []struct {
	name string
	new  func(t *testing.T) Persister
}{
	{"mem", func(t *testing.T) Persister { return NewMemPersister() }},
	{"pebble", newPebblePersister},
	{"journaled", newJournaledPersister},
}

func topic(b byte) [16]byte {
	var id [16]byte
	for i := range id {
		id[i] = b
	}
	return id
}

func TestPersister(t *testing.T) {
	for _, pp := range persisters {
		t.Run(pp.name, func(t *testing.T) {
			per := pp.new(t)
			k1 := Key{Group: "g", TopicID: topic(1), Partition: 0}
			k2 := Key{Group: "g", TopicID: topic(1), Partition: 7}
			k3 := Key{Group: "g2", TopicID: topic(2), Partition: 0} // a group whose name extends "g"
			var got State
			if ok, err := per.Load(k1, &got); ok || err != nil {
				t.Fatalf("load missing = %v, %v", ok, err)
			}
			st := State{StartOffset: 100, StateEpoch: 3, DeliveryCompleteCount: 4, Batches: []StateBatch{
				{100, 101, Available, 2}, {102, 103, Acknowledged, 1}, {110, 111, Archived, 5},
			}}
			for i, k := range []Key{k1, k2, k3} {
				if err := per.Write(k, &st, i == 0); err != nil {
					t.Fatal(err)
				}
			}
			if ok, err := per.Load(k1, &got); !ok || err != nil || !reflect.DeepEqual(got, st) {
				t.Fatalf("load = %v, %v, %+v", ok, err, got)
			}
			st.StartOffset = 104
			st.Batches = st.Batches[2:]
			if err := per.Write(k1, &st, false); err != nil {
				t.Fatal(err)
			}
			if err := per.Flush(); err != nil {
				t.Fatal(err)
			}
			if ok, err := per.Load(k1, &got); !ok || err != nil || !reflect.DeepEqual(got, st) {
				t.Fatalf("load after overwrite = %v, %v, %+v", ok, err, got)
			}
			keys, err := per.Keys("g", nil)
			if err != nil || !reflect.DeepEqual(keys, []Key{k1, k2}) {
				t.Fatalf("keys(g) = %v, %v", keys, err)
			}
			if groups, err := per.Groups(); err != nil || !reflect.DeepEqual(groups, []string{"g", "g2"}) {
				t.Fatalf("groups = %v, %v", groups, err)
			}
			if err := per.Delete(k2); err != nil {
				t.Fatal(err)
			}
			if ok, _ := per.Load(k2, &got); ok {
				t.Fatal("k2 still there after Delete")
			}
			if err := per.DeleteGroup("g"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := per.Load(k1, &got); ok {
				t.Fatal("k1 still there after DeleteGroup")
			}
			if ok, err := per.Load(k3, &got); !ok || err != nil {
				t.Fatalf("DeleteGroup(g) touched g2: %v %v", ok, err)
			}
			bad := Key{Group: "a\x00b"}
			if err := per.Write(bad, &st, true); !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("NUL group: %v", err)
			}
		})
	}
}

// The whole lifecycle through a persister: acks written, a restart, the
// rehydrated partition carries on without redelivering accepted records.
func TestPersisterRehydration(t *testing.T) {
	for _, pp := range persisters {
		t.Run(pp.name, func(t *testing.T) {
			per := pp.new(t)
			key := Key{Group: "g", TopicID: topic(9), Partition: 3}
			p := New(Config{})
			p.Initialise(0, 0)
			var src MemSource
			for range 4 {
				src.Append(10)
			}
			var res AcquireResult
			now := time.UnixMilli(0)
			mustAcquire(t, p, "a", now, &src, &res, 40)
			eff := mustAck(t, p, "a", now, AckBatch{0, 9, []AckType{AckAccept}}, AckBatch{10, 19, []AckType{AckRelease}}, AckBatch{30, 34, []AckType{AckReject}})
			if !eff.Durable || !eff.SPSOMoved {
				t.Fatalf("effects %+v", eff)
			}
			var st State
			p.AppendState(&st)
			if p.Dirty() {
				t.Fatal("dirty after AppendState")
			}
			if err := per.Write(key, &st, eff.Durable); err != nil {
				t.Fatal(err)
			}
			var loaded State
			if ok, err := per.Load(key, &loaded); !ok || err != nil {
				t.Fatal(ok, err)
			}
			q, err := Restore(Config{}, &loaded)
			if err != nil {
				t.Fatal(err)
			}
			if q.StartOffset() != 10 || q.EndOffset() != 34 {
				t.Fatalf("restored window %d-%d", q.StartOffset(), q.EndOffset())
			}
			mustAcquire(t, q, "b", now, &src, &res, 500)
			want := []AcquiredRecords{{10, 19, 2}, {20, 29, 1}, {35, 39, 1}}
			if !reflect.DeepEqual(res.Acquired, want) {
				t.Fatalf("after restart acquired %+v, want %+v", res.Acquired, want)
			}
		})
	}
}

// Sync writes survive a crash; non-sync ones only after Flush.
func TestPebbleCrash(t *testing.T) {
	fs := vfs.NewStrictMem()
	// The strict FS forgets a directory whose parent was not synced.
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
	db := openPebble(t, fs)
	per := NewPebblePersister(db)
	st := State{StartOffset: 5}
	k := func(p int32) Key { return Key{Group: "g", TopicID: topic(3), Partition: p} }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(per.Write(k(0), &st, true))
	must(per.Write(k(1), &st, false))
	must(per.Write(k(2), &st, false))
	must(per.Flush())
	must(per.Write(k(3), &st, false))
	fs.SetIgnoreSyncs(true)
	db.Close()
	fs.ResetToSyncedState()
	fs.SetIgnoreSyncs(false)
	db = openPebble(t, fs)
	defer db.Close()
	per = NewPebblePersister(db)
	var got State
	for p, want := range []bool{true, true, true, false} {
		ok, err := per.Load(k(int32(p)), &got)
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Errorf("partition %d after crash: present=%v, want %v", p, ok, want)
		}
	}
}

func TestPebbleCorruptValue(t *testing.T) {
	db := openPebble(t, vfs.NewMem())
	defer db.Close()
	key := Key{Group: "g", Partition: 1}
	raw, _ := AppendKey(nil, key)
	if err := db.Set(raw, []byte{stateMagic, 9, 1}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	var st State
	if _, err := NewPebblePersister(db).Load(key, &st); !errors.Is(err, ErrCorruptState) {
		t.Fatalf("corrupt value: %v", err)
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, k := range []Key{{Group: ""}, {Group: "g:x/y", TopicID: topic(0xff), Partition: -1}, {Group: "grp", TopicID: topic(7), Partition: 1 << 30}} {
		b, err := AppendKey(nil, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseKey(b)
		if err != nil || got != k {
			t.Fatalf("ParseKey(AppendKey(%v)) = %v, %v", k, got, err)
		}
	}
	for _, b := range []string{"", "s/", "g/abc", "s/g\x01" + string(make([]byte, 20))} {
		if _, err := ParseKey([]byte(b)); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ParseKey(%q) = %v", b, err)
		}
	}
}

func mustAcquire(t *testing.T, p *SharePartition, member string, now time.Time, src BatchSource, res *AcquireResult, max int) Effects {
	t.Helper()
	eff, err := p.Acquire(member, now, AcquireRequest{MaxRecords: max}, src, res)
	if err != nil {
		t.Fatal(err)
	}
	return eff
}

func mustAck(t *testing.T, p *SharePartition, member string, now time.Time, batches ...AckBatch) Effects {
	t.Helper()
	eff, err := p.Acknowledge(member, now, batches)
	if err != nil {
		t.Fatal(err)
	}
	return eff
}
