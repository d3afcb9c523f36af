package share

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble"

	"sharq/log/statejournal"
)

var _ Persister = (*JournaledPersister)(nil)

// JournaledPersister is a PebblePersister whose durable writes go through
// the node's state journal (log/statejournal) instead of a pebble fsync:
// Write(sync=true) stages the state there and returns once it is in the
// OS page cache (a process crash keeps it; a power loss may not unless the
// journal syncs every write). Pebble stays the store of record: a staged
// state is kept in memory by the journal (the latest per key) and written
// to pebble, without sync, by the next checkpoint (Flush, or the journal
// outgrowing its CheckpointBytes), which then syncs pebble and empties the
// journal; opening the journal replays what a crash left in it. A pebble
// write per journaled state cost a commit and a wake-up of pebble's WAL
// writer per acknowledgement, for a state the journal already keeps.
// Non-sync writes go to pebble without sync, as before.
//
// After a crash the last journaled state of a key wins over a later
// non-sync write of that key that pebble may still hold: non-sync writes
// are the kind a crash may lose (Persister contract).
type JournaledPersister struct {
	*PebblePersister
	db     *pebble.DB
	j      *statejournal.Journal
	logger *slog.Logger

	// mu serialises the writes (the journal keeps their order) and
	// covers the buffers and lost. Lock order: mu, then the journal's.
	mu struct {
		sync.Mutex
		keyBuf, valBuf []byte
		lost           map[Key]bool // states lost to journal damage (ErrStateLost)
	}
}

// NewJournaledPersister keeps share state in db with durable writes
// through j, which must have been opened with MarkLost as its Lost hook.
// The caller owns db and j.
func NewJournaledPersister(db *pebble.DB, j *statejournal.Journal, logger *slog.Logger) (*JournaledPersister, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &JournaledPersister{PebblePersister: NewPebblePersister(db), db: db, j: j, logger: logger}
	var err error
	if p.mu.lost, err = loadLostStates(db); err != nil {
		return nil, err
	}
	for k := range p.mu.lost {
		logger.Error("share-partition state lost to journal damage: refusing to load it until its offsets are reset (AlterShareGroupOffsets) or its group deleted",
			"share_partition", k.String())
	}
	return p, nil
}

// ErrStateLost is Load's answer for a share-partition whose latest state
// was in a damaged journal record and which has no older state: starting
// it afresh would apply share.auto.offset.reset (latest by default) and
// silently skip every record it had not yet delivered.
var ErrStateLost = errors.New("share: share-partition state lost to journal corruption")

// lostPrefix keys the markers of lost share-partition states; outside the
// "s/" range, so Keys and Groups never see them.
const lostPrefix = "x/share-state-lost/"

// MarkLost returns the state journal's Lost hook (statejournal.Options)
// for share-partition states. For each share-partition whose latest
// journaled state was damaged (and not superseded), it decides what the
// share-partition restarts from: its last earlier state (checkpointed in
// pebble, or replayed from before the damage), if there is one (records
// acknowledged after it are delivered again: at-least-once, never lost),
// else nothing, which it marks so that Load refuses the share-partition
// rather than starting it at share.auto.offset.reset. Keys that are not a
// share-partition's are another coordinator's (or damaged beyond telling:
// the journal logs those).
func MarkLost(logger *slog.Logger) func(b *pebble.Batch, key []byte) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(b *pebble.Batch, key []byte) error {
		k, err := ParseKey(key)
		if err != nil {
			return nil
		}
		if v, closer, err := b.Get(key); err == nil {
			var st State
			derr := DecodeState(v, &st)
			closer.Close()
			if derr == nil {
				logger.Error("share-partition restarts from an older state: its latest journaled state was damaged; records acknowledged after it are delivered again",
					"share_partition", k.String(), "spso", st.StartOffset)
				return nil
			}
		} else if !errors.Is(err, pebble.ErrNotFound) {
			return fmt.Errorf("read share state %s: %w", k, err)
		}
		return b.Set(append([]byte(lostPrefix), key...), nil, nil)
	}
}

func loadLostStates(db *pebble.DB) (map[Key]bool, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte(lostPrefix), UpperBound: []byte(lostPrefix + "\xff")})
	if err != nil {
		return nil, fmt.Errorf("list lost share states: %w", err)
	}
	defer it.Close()
	lost := map[Key]bool{}
	for it.First(); it.Valid(); it.Next() {
		k, err := ParseKey(it.Key()[len(lostPrefix):])
		if err != nil {
			return nil, fmt.Errorf("lost share state marker %q: %w", it.Key(), err)
		}
		lost[k] = true
	}
	return lost, it.Error()
}

// Load refuses a share-partition whose state was lost (ErrStateLost). A
// staged state not yet in pebble is the latest.
func (p *JournaledPersister) Load(key Key, st *State) (bool, error) {
	p.mu.Lock()
	lost := p.mu.lost[key]
	p.mu.Unlock()
	if lost {
		return false, fmt.Errorf("load share state %s: %w; reset its offsets (AlterShareGroupOffsets) or delete the group to start it again", key, ErrStateLost)
	}
	k, err := AppendKey(nil, key)
	if err != nil {
		return false, err
	}
	if v, ok := p.j.StagedValue(nil, k); ok {
		if err := DecodeState(v, st); err != nil {
			return false, fmt.Errorf("load share state %s: %w", key, err)
		}
		return true, nil
	}
	return p.PebblePersister.Load(key, st)
}

// Keys lists what pebble holds once the staged states are in it.
func (p *JournaledPersister) Keys(group string, dst []Key) ([]Key, error) {
	if err := p.j.WriteStaged(); err != nil {
		return dst, err
	}
	return p.PebblePersister.Keys(group, dst)
}

// Groups lists what pebble holds once the staged states are in it.
func (p *JournaledPersister) Groups() ([]string, error) {
	if err := p.j.WriteStaged(); err != nil {
		return nil, err
	}
	return p.PebblePersister.Groups()
}

// ClearLost forgets that key's state was lost, so that it loads afresh:
// an operator's offset reset (AlterShareGroupOffsets) is what such a
// share-partition waits for.
func (p *JournaledPersister) ClearLost(key Key) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clearLostLocked(func(k Key) bool { return k == key })
}

// clearLostLocked forgets the lost marks of the keys match selects: a
// state written for them, or their deletion, is the operator's decision.
func (p *JournaledPersister) clearLostLocked(match func(Key) bool) error {
	for k := range p.mu.lost {
		if !match(k) {
			continue
		}
		enc, err := AppendKey(nil, k)
		if err != nil {
			return err
		}
		if err := p.db.Delete(append([]byte(lostPrefix), enc...), pebble.Sync); err != nil {
			return fmt.Errorf("clear lost share state %s: %w", k, err)
		}
		delete(p.mu.lost, k)
	}
	return nil
}

// Write stages the state in the journal when sync (pebble gets it at the
// next checkpoint), else writes it to pebble without sync. With
// SyncEveryWrite a sync Write returns once the journal is fsynced; the
// fsync is outside mu, shared with concurrent writers.
func (p *JournaledPersister) Write(key Key, st *State, sync bool) error {
	pos, err := p.write(key, st, sync)
	if err != nil || !sync {
		return err
	}
	return p.j.Durable(pos)
}

func (p *JournaledPersister) write(key Key, st *State, sync bool) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.lost[key] {
		if err := p.clearLostLocked(func(k Key) bool { return k == key }); err != nil {
			return 0, err
		}
	}
	var err error
	if p.mu.keyBuf, err = AppendKey(p.mu.keyBuf[:0], key); err != nil {
		return 0, err
	}
	p.mu.valBuf = EncodeState(p.mu.valBuf[:0], st)
	if !sync {
		if err := p.j.SetNoSync(p.mu.keyBuf, p.mu.valBuf); err != nil {
			return 0, fmt.Errorf("write share state %s: %w", key, err)
		}
		return 0, nil
	}
	pos, err := p.j.Stage(p.mu.keyBuf, p.mu.valBuf)
	if err != nil {
		return 0, fmt.Errorf("write share state %s: %w", key, err)
	}
	return pos, nil
}

// Flush is a checkpoint: earlier writes are synced in pebble and the
// journal is emptied.
func (p *JournaledPersister) Flush() error {
	if err := p.j.Checkpoint(); err != nil {
		return fmt.Errorf("flush share state: %w", err)
	}
	return nil
}

// Delete checkpoints first so that no journal record of key, older than
// the delete, can be replayed over it.
func (p *JournaledPersister) Delete(key Key) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.j.Checkpoint(); err != nil {
		return fmt.Errorf("delete share state %s: %w", key, err)
	}
	if err := p.clearLostLocked(func(k Key) bool { return k == key }); err != nil {
		return err
	}
	return p.PebblePersister.Delete(key)
}

// DeleteGroup checkpoints first, as Delete does.
func (p *JournaledPersister) DeleteGroup(group string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.j.Checkpoint(); err != nil {
		return fmt.Errorf("delete share state of group %s: %w", group, err)
	}
	if err := p.clearLostLocked(func(k Key) bool { return k.Group == group }); err != nil {
		return err
	}
	return p.PebblePersister.DeleteGroup(group)
}
