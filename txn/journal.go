package txn

// Transaction state through the node's state journal.
//
// Why: a transaction's state change (a partition added, the commit
// decision, its completion) must survive a process crash (kill -9) before
// the coordinator acts on it, as Kafka's __transaction_state log does: that
// log sits in the OS page cache and is fsynced only when the operator asks.
// A pebble Sync write costs an fsync per state change (two per commit), the
// whole tail of the commit latency on a busy disk. So every change is
// committed through the broker's state journal (log/statejournal): one
// write(2), then pebble without sync. Staged consumer offsets (group/) and
// share-partition states go through the same journal, so they all stay in
// the order they were made.

import (
	"fmt"

	"github.com/cockroachdb/pebble"

	"sharq/log/statejournal"
)

// JournaledStore is the PebbleStore with writes through the state journal
// (see the file comment): Put and Delete return once the change survives a
// process crash, or, when the journal fsyncs every write, a power loss.
type JournaledStore struct {
	*PebbleStore
	j *statejournal.Journal
}

// NewJournaledStore uses db under KeyPrefix with writes through j. The
// caller owns both.
func NewJournaledStore(db *pebble.DB, j *statejournal.Journal) *JournaledStore {
	return &JournaledStore{PebbleStore: NewPebbleStore(db), j: j}
}

// Put journals the state, then writes it to pebble without sync.
func (s *JournaledStore) Put(id string, m *Metadata) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(key(id), EncodeMetadata(m), nil); err != nil {
		return fmt.Errorf("write transaction state of %s: %w", id, err)
	}
	if err := s.j.Commit(b); err != nil {
		return fmt.Errorf("write transaction state of %s: %w", id, err)
	}
	return nil
}

// Delete journals the removal, then deletes from pebble without sync.
func (s *JournaledStore) Delete(id string) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Delete(key(id), nil); err != nil {
		return fmt.Errorf("delete transaction state of %s: %w", id, err)
	}
	if err := s.j.Commit(b); err != nil {
		return fmt.Errorf("delete transaction state of %s: %w", id, err)
	}
	return nil
}
