package group

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// Staged transactional offsets are invisible until the transaction
// commits, dropped on abort, and survive a reopen of the store.
func TestTxnOffsets(t *testing.T) {
	fs := vfs.NewMem()
	open := func() (*pebble.DB, *Coordinator) {
		db, err := pebble.Open("state", &pebble.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(Config{Store: NewPebbleStore(db)})
		if err != nil {
			t.Fatal(err)
		}
		return db, c
	}
	db, c := open()
	tp := TopicPartition{"t", 0}
	stage := func(pid, off int64) {
		t.Helper()
		if _, err := c.TxnCommitOffsets(TxnCommitRequest{Group: "g", ProducerID: pid, Generation: -1, Offsets: map[TopicPartition]Offset{tp: {Offset: off, LeaderEpoch: -1}}}); err != nil {
			t.Fatal(err)
		}
	}
	fetch := func() int64 {
		t.Helper()
		got, err := c.FetchOffsets("g", "", -1, []TopicPartition{tp}, false)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := got[tp]; ok {
			return o.Offset
		}
		return -1
	}
	stage(1, 10)
	stage(2, 20)
	if fetch() != -1 || !c.PendingTxnPartitions("g")[tp] {
		t.Fatalf("staged offsets visible: %d", fetch())
	}
	if err := c.CompleteTxnOffsets("g", 1, true); err != nil {
		t.Fatal(err)
	}
	if fetch() != 10 {
		t.Fatalf("after commit: %d", fetch())
	}
	// producer 2's staged offset survives a restart and is then aborted
	db.Close()
	db, c = open()
	defer db.Close()
	if fetch() != 10 || !c.PendingTxnPartitions("g")[tp] {
		t.Fatalf("after reopen: %d pending %v", fetch(), c.PendingTxnPartitions("g"))
	}
	if err := c.CompleteTxnOffsets("g", 2, false); err != nil {
		t.Fatal(err)
	}
	if fetch() != 10 || len(c.PendingTxnPartitions("g")) != 0 {
		t.Fatalf("after abort: %d", fetch())
	}
	// a member commit to a group that does not exist
	_, err := c.TxnCommitOffsets(TxnCommitRequest{Group: "nope", ProducerID: 3, MemberID: "m", Generation: 4, Offsets: map[TopicPartition]Offset{tp: {}}})
	if !errors.Is(err, ErrIllegalGeneration) {
		t.Fatalf("unknown group member commit: %v", err)
	}
}
