package txn

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
)

// KeyPrefix is the prefix of every key the transaction coordinator writes
// into the shared state store (group offsets use "g/", share state "s/").
const KeyPrefix = "t/"

// Store keeps the state of every transactional id durably. Put returns
// only once the state would survive a crash.
type Store interface {
	Put(id string, m *Metadata) error
	Delete(id string) error
	Load() (map[string]Metadata, error)
}

// MemStore is an in-memory Store for tests.
type MemStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{m: map[string][]byte{}} }

func (s *MemStore) Put(id string, m *Metadata) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = EncodeMetadata(m)
	return nil
}

func (s *MemStore) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

func (s *MemStore) Load() (map[string]Metadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Metadata, len(s.m))
	for id, b := range s.m {
		m, err := DecodeMetadata(b)
		if err != nil {
			return nil, fmt.Errorf("load transactional id %s: %w", id, err)
		}
		out[id] = m
	}
	return out, nil
}

// PebbleStore keeps transaction state in a pebble DB owned by the caller
// (the broker's <log.dirs>/state, shared with groups and share groups).
type PebbleStore struct{ db *pebble.DB }

// NewPebbleStore uses db under KeyPrefix.
func NewPebbleStore(db *pebble.DB) *PebbleStore { return &PebbleStore{db: db} }

func key(id string) []byte { return append([]byte(KeyPrefix), id...) }

func (s *PebbleStore) Put(id string, m *Metadata) error {
	if err := s.db.Set(key(id), EncodeMetadata(m), pebble.Sync); err != nil {
		return fmt.Errorf("write transaction state of %s: %w", id, err)
	}
	return nil
}

func (s *PebbleStore) Delete(id string) error {
	if err := s.db.Delete(key(id), pebble.Sync); err != nil {
		return fmt.Errorf("delete transaction state of %s: %w", id, err)
	}
	return nil
}

func (s *PebbleStore) Load() (map[string]Metadata, error) {
	lo := []byte(KeyPrefix)
	hi := append([]byte(KeyPrefix[:len(KeyPrefix)-1]), KeyPrefix[len(KeyPrefix)-1]+1)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("load transaction state: %w", err)
	}
	defer it.Close()
	out := map[string]Metadata{}
	for ok := it.First(); ok; ok = it.Next() {
		id := string(it.Key()[len(KeyPrefix):])
		m, err := DecodeMetadata(it.Value())
		if err != nil {
			return nil, fmt.Errorf("load transactional id %s: %w", id, err)
		}
		out[id] = m
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("load transaction state: %w", err)
	}
	return out, nil
}

// IDBlockSize is how many producer ids one allocation from the metadata
// store reserves.
const IDBlockSize = 1000

// IDAllocator hands out producer ids from blocks reserved through
// Reserve (the metadata store), so an id is never reused, even across
// restarts. It is the idempotent producers' hot path: one mutex and a
// counter, a metadata round trip once per IDBlockSize ids.
type IDAllocator struct {
	// Reserve returns the first id of a fresh block of n ids.
	Reserve func(ctx context.Context, n int64) (int64, error)

	mu       sync.Mutex
	next     int64
	blockEnd int64
}

// Next returns an unused producer id.
func (a *IDAllocator) Next(ctx context.Context) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next >= a.blockEnd {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		first, err := a.Reserve(ctx, IDBlockSize)
		if err != nil {
			return -1, err
		}
		a.next, a.blockEnd = first, first+IDBlockSize
	}
	id := a.next
	a.next++
	return id, nil
}
