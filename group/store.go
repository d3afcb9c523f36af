package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble"

	"sharq/log/statejournal"
)

// TopicPartition names a partition by topic name.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Offset is a committed offset.
type Offset struct {
	Offset      int64
	LeaderEpoch int32 // -1 = unknown
	Metadata    string
	CommitTime  int64 // unix milliseconds
}

// OffsetStore keeps committed offsets durably. Commit returns only once the
// offsets would survive a crash. The coordinator keeps every offset in
// memory as well and reads the store only at start-up (Load).
type OffsetStore interface {
	Commit(group string, offsets map[TopicPartition]Offset) error
	Delete(group string, tps []TopicPartition) error
	DeleteGroup(group string) error
	Load() (map[string]map[TopicPartition]Offset, error)
}

// ErrCorruptOffset is returned for an offset record that does not decode.
var ErrCorruptOffset = errors.New("corrupt committed offset record")

// KeyPrefix is the prefix of every key the group coordinator writes into
// the shared state store (share state uses "s/").
const KeyPrefix = "g/"

const (
	offsetMagic   = 'o'
	offsetVersion = 1
)

// MemStore is an in-memory OffsetStore for tests.
type MemStore struct {
	mu  sync.Mutex
	m   map[string]map[TopicPartition]Offset
	txn map[string]map[int64]map[TopicPartition]Offset // staged (txn.go)
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{m: map[string]map[TopicPartition]Offset{}} }

func (s *MemStore) Commit(group string, offsets map[TopicPartition]Offset) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.m[group]
	if g == nil {
		g = map[TopicPartition]Offset{}
		s.m[group] = g
	}
	for tp, o := range offsets {
		g[tp] = o
	}
	return nil
}

func (s *MemStore) Delete(group string, tps []TopicPartition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tp := range tps {
		delete(s.m[group], tp)
	}
	if len(s.m[group]) == 0 {
		delete(s.m, group)
	}
	return nil
}

func (s *MemStore) DeleteGroup(group string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, group)
	return nil
}

func (s *MemStore) Load() (map[string]map[TopicPartition]Offset, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[TopicPartition]Offset, len(s.m))
	for g, offs := range s.m {
		c := make(map[TopicPartition]Offset, len(offs))
		for tp, o := range offs {
			c[tp] = o
		}
		out[g] = c
	}
	return out, nil
}

// PebbleStore keeps offsets in a pebble DB owned by the caller (the broker
// opens <log.dirs>/state once for groups and share groups).
type PebbleStore struct {
	db *pebble.DB
	// j journals writes (see log/statejournal): nil makes every write a
	// pebble Sync commit.
	j *statejournal.Journal
}

// NewPebbleStore uses db under KeyPrefix; every write is fsynced.
func NewPebbleStore(db *pebble.DB) *PebbleStore { return &PebbleStore{db: db} }

// NewJournaledPebbleStore uses db under KeyPrefix with writes through j:
// an offset commit survives a process crash with one write(2), as Kafka's
// __consumer_offsets survives one in the page cache, instead of an fsync
// per commit.
func NewJournaledPebbleStore(db *pebble.DB, j *statejournal.Journal) *PebbleStore {
	return &PebbleStore{db: db, j: j}
}

// commit makes b durable as the store promises (see PebbleStore.j).
func (s *PebbleStore) commit(b *pebble.Batch) error {
	if s.j != nil {
		return s.j.Commit(b)
	}
	return b.Commit(pebble.Sync)
}

func (s *PebbleStore) Commit(group string, offsets map[TopicPartition]Offset) error {
	b := s.db.NewBatch()
	defer b.Close()
	for tp, o := range offsets {
		if err := b.Set(offsetKey(group, tp), EncodeOffset(o), nil); err != nil {
			return fmt.Errorf("commit offsets of group %s: %w", group, err)
		}
	}
	if err := s.commit(b); err != nil {
		return fmt.Errorf("commit offsets of group %s: %w", group, err)
	}
	return nil
}

func (s *PebbleStore) Delete(group string, tps []TopicPartition) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, tp := range tps {
		if err := b.Delete(offsetKey(group, tp), nil); err != nil {
			return fmt.Errorf("delete offsets of group %s: %w", group, err)
		}
	}
	if err := s.commit(b); err != nil {
		return fmt.Errorf("delete offsets of group %s: %w", group, err)
	}
	return nil
}

func (s *PebbleStore) DeleteGroup(group string) error {
	lo := groupPrefix(group)
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(lo, prefixEnd(lo), nil); err != nil {
		return fmt.Errorf("delete group %s: %w", group, err)
	}
	if err := s.commit(b); err != nil {
		return fmt.Errorf("delete group %s: %w", group, err)
	}
	return nil
}

func (s *PebbleStore) Load() (map[string]map[TopicPartition]Offset, error) {
	lo := []byte(KeyPrefix)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("load offsets: %w", err)
	}
	defer it.Close()
	out := map[string]map[TopicPartition]Offset{}
	for ok := it.First(); ok; ok = it.Next() {
		g, tp, err := DecodeOffsetKey(it.Key())
		if err != nil {
			return nil, fmt.Errorf("load offsets: key %x: %w", it.Key(), err)
		}
		o, err := DecodeOffset(it.Value())
		if err != nil {
			return nil, fmt.Errorf("load offsets of group %s %s-%d: %w", g, tp.Topic, tp.Partition, err)
		}
		if out[g] == nil {
			out[g] = map[TopicPartition]Offset{}
		}
		out[g][tp] = o
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("load offsets: %w", err)
	}
	return out, nil
}

func groupPrefix(group string) []byte {
	b := append([]byte(nil), KeyPrefix...)
	b = binary.AppendUvarint(b, uint64(len(group)))
	return append(b, group...)
}

func offsetKey(group string, tp TopicPartition) []byte {
	b := groupPrefix(group)
	b = binary.AppendUvarint(b, uint64(len(tp.Topic)))
	b = append(b, tp.Topic...)
	return binary.BigEndian.AppendUint32(b, uint32(tp.Partition))
}

// prefixEnd is the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// DecodeOffsetKey parses a key written by the pebble store.
func DecodeOffsetKey(k []byte) (string, TopicPartition, error) {
	if len(k) < len(KeyPrefix) || string(k[:len(KeyPrefix)]) != KeyPrefix {
		return "", TopicPartition{}, ErrCorruptOffset
	}
	k = k[len(KeyPrefix):]
	str := func() (string, bool) {
		n, w := binary.Uvarint(k)
		// Keys are compared as bytes, so only the shortest (canonical)
		// encoding is a valid key.
		if w <= 0 || n > uint64(len(k)-w) || w != len(binary.AppendUvarint(nil, n)) {
			return "", false
		}
		s := string(k[w : w+int(n)])
		k = k[w+int(n):]
		return s, true
	}
	g, ok1 := str()
	t, ok2 := str()
	if !ok1 || !ok2 || len(k) != 4 {
		return "", TopicPartition{}, ErrCorruptOffset
	}
	return g, TopicPartition{Topic: t, Partition: int32(binary.BigEndian.Uint32(k))}, nil
}

// EncodeOffset is the value format (see the package doc).
func EncodeOffset(o Offset) []byte {
	b := make([]byte, 0, 24+len(o.Metadata))
	b = append(b, offsetMagic, offsetVersion)
	b = binary.AppendVarint(b, o.Offset)
	b = binary.AppendVarint(b, int64(o.LeaderEpoch))
	b = binary.AppendVarint(b, o.CommitTime)
	b = binary.AppendUvarint(b, uint64(len(o.Metadata)))
	return append(b, o.Metadata...)
}

// DecodeOffset parses EncodeOffset's output.
func DecodeOffset(b []byte) (Offset, error) {
	if len(b) < 2 || b[0] != offsetMagic {
		return Offset{}, ErrCorruptOffset
	}
	if b[1] != offsetVersion {
		return Offset{}, fmt.Errorf("offset record version %d: %w", b[1], ErrCorruptOffset)
	}
	b = b[2:]
	var vals [3]int64
	for i := range vals {
		v, n := binary.Varint(b)
		if n <= 0 {
			return Offset{}, ErrCorruptOffset
		}
		vals[i] = v
		b = b[n:]
	}
	if vals[1] < -1<<31 || vals[1] > 1<<31-1 {
		return Offset{}, ErrCorruptOffset
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || n != uint64(len(b)-w) {
		return Offset{}, ErrCorruptOffset
	}
	return Offset{Offset: vals[0], LeaderEpoch: int32(vals[1]), CommitTime: vals[2], Metadata: string(b[w:])}, nil
}
