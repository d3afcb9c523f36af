package share

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble"
)

// Key names one share-partition's state.
type Key struct {
	Group     string
	TopicID   [16]byte
	Partition int32
}

// Persister stores share-partition state. Write with sync=true returns
// only once the state survives a process crash (PebblePersister fsyncs;
// JournaledPersister reaches the page cache, fsyncing only if asked);
// sync=false may coalesce and lose the write in a crash (see DESIGN.md
// for which transitions may).
// Implementations are safe for concurrent use.
type Persister interface {
	// Load fills st and reports whether state exists for key.
	Load(key Key, st *State) (bool, error)
	// Write replaces the state of key with a snapshot of st.
	Write(key Key, st *State, sync bool) error
	// Delete removes the state of key (DeleteShareGroupOffsets).
	Delete(key Key) error
	// DeleteGroup removes every share-partition state of group (DeleteGroups).
	DeleteGroup(group string) error
	// Keys appends the keys stored for group (its initialised partitions).
	Keys(group string, dst []Key) ([]Key, error)
	// Groups lists the groups that have stored state, sorted (share groups
	// outlive their members: a restarted broker lists them again).
	Groups() ([]string, error)
	// Flush makes every earlier non-sync write durable.
	Flush() error
}

// Key layout: "s/" group 0x00 topicID(16) partition(4, big-endian). Group
// ids containing 0x00 are refused so a group's keys form one prefix.
const (
	keyPrefix = "s/"
	keySep    = 0x00
)

// AppendKey appends the storage key of k to dst.
func AppendKey(dst []byte, k Key) ([]byte, error) {
	if strings.IndexByte(k.Group, keySep) >= 0 {
		return dst, fmt.Errorf("%w: group id %q contains NUL", ErrInvalidKey, k.Group)
	}
	dst = append(dst, keyPrefix...)
	dst = append(dst, k.Group...)
	dst = append(dst, keySep)
	dst = append(dst, k.TopicID[:]...)
	return binary.BigEndian.AppendUint32(dst, uint32(k.Partition)), nil
}

func groupPrefix(group string) ([]byte, error) {
	if strings.IndexByte(group, keySep) >= 0 {
		return nil, fmt.Errorf("%w: group id %q contains NUL", ErrInvalidKey, group)
	}
	return append(append([]byte(keyPrefix), group...), keySep), nil
}

// ParseKey is AppendKey's inverse.
func ParseKey(b []byte) (Key, error) {
	var k Key
	if !bytes.HasPrefix(b, []byte(keyPrefix)) || len(b) < len(keyPrefix)+1+16+4 {
		return k, fmt.Errorf("%w: %q", ErrInvalidKey, b)
	}
	rest := b[len(keyPrefix):]
	g := len(rest) - 21
	if rest[g] != keySep {
		return k, fmt.Errorf("%w: %q", ErrInvalidKey, b)
	}
	k.Group = string(rest[:g])
	copy(k.TopicID[:], rest[g+1:g+17])
	k.Partition = int32(binary.BigEndian.Uint32(rest[g+17:]))
	return k, nil
}

// MemPersister keeps encoded state in memory (tests, and a broker without
// a data directory). Writes are immediately "durable".
type MemPersister struct {
	mu struct {
		sync.Mutex
		m      map[string][]byte
		writes int
	}
}

// NewMemPersister returns an empty in-memory persister.
func NewMemPersister() *MemPersister {
	p := &MemPersister{}
	p.mu.m = make(map[string][]byte)
	return p
}

func (m *MemPersister) Load(key Key, st *State) (bool, error) {
	k, err := AppendKey(nil, key)
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	v, ok := m.mu.m[string(k)]
	m.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := DecodeState(v, st); err != nil {
		return false, fmt.Errorf("load share state %s: %w", key, err)
	}
	return true, nil
}

func (m *MemPersister) Write(key Key, st *State, _ bool) error {
	k, err := AppendKey(nil, key)
	if err != nil {
		return err
	}
	v := EncodeState(nil, st)
	m.mu.Lock()
	m.mu.m[string(k)] = v
	m.mu.writes++
	m.mu.Unlock()
	return nil
}

func (m *MemPersister) Delete(key Key) error {
	k, err := AppendKey(nil, key)
	if err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.mu.m, string(k))
	m.mu.Unlock()
	return nil
}

func (m *MemPersister) DeleteGroup(group string) error {
	pre, err := groupPrefix(group)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.mu.m {
		if strings.HasPrefix(k, string(pre)) {
			delete(m.mu.m, k)
		}
	}
	return nil
}

func (m *MemPersister) Keys(group string, dst []Key) ([]Key, error) {
	pre, err := groupPrefix(group)
	if err != nil {
		return dst, err
	}
	m.mu.Lock()
	var raw []string
	for k := range m.mu.m {
		if strings.HasPrefix(k, string(pre)) {
			raw = append(raw, k)
		}
	}
	m.mu.Unlock()
	sort.Strings(raw) // same order as pebble's
	for _, k := range raw {
		key, err := ParseKey([]byte(k))
		if err != nil {
			return dst, err
		}
		dst = append(dst, key)
	}
	return dst, nil
}

func (m *MemPersister) Groups() ([]string, error) {
	m.mu.Lock()
	raw := make([]string, 0, len(m.mu.m))
	for k := range m.mu.m {
		raw = append(raw, k)
	}
	m.mu.Unlock()
	sort.Strings(raw)
	var out []string
	for _, k := range raw {
		key, err := ParseKey([]byte(k))
		if err != nil {
			return out, err
		}
		if len(out) == 0 || out[len(out)-1] != key.Group {
			out = append(out, key.Group)
		}
	}
	return out, nil
}

func (m *MemPersister) Flush() error { return nil }

// Writes returns how many writes were made (tests check coalescing).
func (m *MemPersister) Writes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.writes
}

// PebblePersister stores state in a pebble DB shared with other packages
// (each under its own prefix). Non-sync writes go to pebble's WAL without
// fsync; Flush (or any later sync write) makes them durable.
type PebblePersister struct {
	db *pebble.DB
}

// NewPebblePersister wraps an opened DB; the caller owns and closes it.
func NewPebblePersister(db *pebble.DB) *PebblePersister { return &PebblePersister{db: db} }

func writeOpts(sync bool) *pebble.WriteOptions {
	if sync {
		return pebble.Sync
	}
	return pebble.NoSync
}

func (p *PebblePersister) Load(key Key, st *State) (bool, error) {
	k, err := AppendKey(nil, key)
	if err != nil {
		return false, err
	}
	v, closer, err := p.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("load share state %s: %w", key, err)
	}
	defer closer.Close()
	if err := DecodeState(v, st); err != nil {
		return false, fmt.Errorf("load share state %s: %w", key, err)
	}
	return true, nil
}

func (p *PebblePersister) Write(key Key, st *State, sync bool) error {
	k, err := AppendKey(nil, key)
	if err != nil {
		return err
	}
	if err := p.db.Set(k, EncodeState(nil, st), writeOpts(sync)); err != nil {
		return fmt.Errorf("write share state %s: %w", key, err)
	}
	return nil
}

func (p *PebblePersister) Delete(key Key) error {
	k, err := AppendKey(nil, key)
	if err != nil {
		return err
	}
	if err := p.db.Delete(k, pebble.Sync); err != nil {
		return fmt.Errorf("delete share state %s: %w", key, err)
	}
	return nil
}

// prefixEnd is the smallest key greater than every key with prefix pre.
func prefixEnd(pre []byte) []byte {
	end := bytes.Clone(pre)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func (p *PebblePersister) DeleteGroup(group string) error {
	pre, err := groupPrefix(group)
	if err != nil {
		return err
	}
	if err := p.db.DeleteRange(pre, prefixEnd(pre), pebble.Sync); err != nil {
		return fmt.Errorf("delete share state of group %s: %w", group, err)
	}
	return nil
}

func (p *PebblePersister) Keys(group string, dst []Key) ([]Key, error) {
	pre, err := groupPrefix(group)
	if err != nil {
		return dst, err
	}
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: prefixEnd(pre)})
	if err != nil {
		return dst, fmt.Errorf("list share state of group %s: %w", group, err)
	}
	for it.First(); it.Valid(); it.Next() {
		k, err := ParseKey(it.Key())
		if err != nil {
			it.Close()
			return dst, err
		}
		dst = append(dst, k)
	}
	if err := it.Close(); err != nil {
		return dst, fmt.Errorf("list share state of group %s: %w", group, err)
	}
	return dst, nil
}

// Groups walks the share prefix once, skipping from each group to the next.
func (p *PebblePersister) Groups() ([]string, error) {
	lower := []byte(keyPrefix)
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(lower)})
	if err != nil {
		return nil, fmt.Errorf("list share groups: %w", err)
	}
	var out []string
	for valid := it.First(); valid; {
		k, err := ParseKey(it.Key())
		if err != nil {
			it.Close()
			return out, err
		}
		out = append(out, k.Group)
		pre, err := groupPrefix(k.Group)
		if err != nil {
			it.Close()
			return out, err
		}
		valid = it.SeekGE(prefixEnd(pre))
	}
	if err := it.Close(); err != nil {
		return out, fmt.Errorf("list share groups: %w", err)
	}
	return out, nil
}

// Flush syncs pebble's WAL, making earlier NoSync writes durable.
func (p *PebblePersister) Flush() error {
	if err := p.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("flush share state: %w", err)
	}
	return nil
}

func (k Key) String() string {
	return fmt.Sprintf("%s/%x/%d", k.Group, k.TopicID, k.Partition)
}
