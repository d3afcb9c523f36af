package share

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/cockroachdb/pebble"
)

var _ Persister = (*JournaledPersister)(nil)

// DefaultCheckpointBytes is the journal size at which a Write checkpoints.
const DefaultCheckpointBytes = 4 << 20

// JournaledPersister is a PebblePersister whose durable writes go through
// a Journal instead of a pebble fsync: Write(sync=true) returns once the
// state is in the OS page cache (a process crash keeps it; a power loss
// may not unless the journal syncs every write). Pebble stays the store of
// record: a journaled state is kept in memory (the latest per key) and
// written to pebble, without sync, by the next checkpoint (Flush, or the
// journal outgrowing CheckpointBytes), which then syncs pebble and empties
// the journal; OpenJournaledPersister replays what a crash left in the
// journal. A pebble write per journaled state cost a commit and a wake-up
// of pebble's WAL writer per acknowledgement, for a state the journal
// already keeps. Non-sync writes go to pebble without sync, as before.
//
// After a crash the last journaled state of a key wins over a later
// non-sync write of that key that pebble may still hold: non-sync writes
// are the kind a crash may lose (Persister contract).
type JournaledPersister struct {
	*PebblePersister
	db        *pebble.DB
	logger    *slog.Logger
	syncEvery bool // fsync the journal before a sync Write returns
	// CheckpointBytes: a Write that leaves the journal larger checkpoints.
	// Set before first use (tests make it small).
	CheckpointBytes int64

	// mu covers the journal and makes (journal append, pebble write) one
	// step, so a checkpoint never falls between them: the journal never
	// loses a record whose pebble write is not yet synced.
	mu struct {
		sync.Mutex
		j *Journal
	}
	valBuf []byte       // under mu
	keyBuf []byte       // under mu
	lost   map[Key]bool // under mu: states lost to journal corruption (ErrStateLost)
	// pending, under mu: encoded states journaled since the last
	// checkpoint and not yet in pebble, the latest per key. Load reads
	// them first; the listings and checkpoints write them to pebble.
	pending map[Key][]byte

	// gsync group-commits the journal fsyncs of syncEvery: writers of
	// different share-partitions append under mu one after the other,
	// then one fsync, outside mu, covers every record appended before it
	// started (as pebble's commit pipeline coalesces its WAL syncs).
	gsync struct {
		sync.Mutex
		synced int64 // Journal.Appended known to be on disk
	}
}

// OpenJournaledPersister opens the journal at path, replays it into db
// (synced), empties it and returns the persister. The caller owns db and
// closes the persister (Close) before db.
func OpenJournaledPersister(db *pebble.DB, path string, syncEveryWrite bool, logger *slog.Logger) (*JournaledPersister, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The persister fsyncs (group-committed) itself when syncEveryWrite.
	j, err := OpenJournal(path, JournalOptions{Logger: logger})
	if err != nil {
		return nil, err
	}
	// Indexed, so that markLostStates sees the states replayed so far.
	b := db.NewIndexedBatch()
	var kbuf []byte
	n, err := j.Replay(func(key Key, st *State) error {
		var kerr error
		if kbuf, kerr = AppendKey(kbuf[:0], key); kerr != nil {
			return kerr
		}
		// Batch.Set copies key and value.
		return b.Set(kbuf, EncodeState(nil, st), nil)
	})
	if err == nil {
		err = markLostStates(b, j.Damage(), logger)
	}
	if err == nil && (n > 0 || b.Count() > 0) {
		err = b.Commit(pebble.Sync)
	}
	b.Close()
	if err == nil {
		err = j.Reset()
	}
	if err != nil {
		j.Close()
		return nil, fmt.Errorf("replay share journal %s: %w", path, err)
	}
	if n > 0 {
		logger.Info("share journal replayed", "path", path, "records", n)
	}
	if syncEveryWrite {
		// A newly created journal must not vanish in a power loss.
		if err := syncDir(filepath.Dir(path)); err != nil {
			j.Close()
			return nil, err
		}
	}
	p := &JournaledPersister{PebblePersister: NewPebblePersister(db), db: db, logger: logger,
		syncEvery: syncEveryWrite, CheckpointBytes: DefaultCheckpointBytes, pending: map[Key][]byte{}}
	p.mu.j = j
	if p.lost, err = loadLostStates(db); err != nil {
		j.Close()
		return nil, err
	}
	for k := range p.lost {
		logger.Error("share-partition state lost to journal corruption: refusing to load it until its offsets are reset (AlterShareGroupOffsets) or its group deleted",
			"share_partition", k.String())
	}
	return p, nil
}

// ErrStateLost is Load's answer for a share-partition whose latest state
// was in a corrupt journal record and which has no older state: starting
// it afresh would apply share.auto.offset.reset (latest by default) and
// silently skip every record it had not yet delivered.
var ErrStateLost = errors.New("share: share-partition state lost to journal corruption")

// lostPrefix keys the markers of lost share-partition states; outside the
// "s/" range, so Keys and Groups never see them.
const lostPrefix = "x/share-state-lost/"

// markLostStates decides, for every damaged journal record whose key is
// known and that no later record superseded, what the share-partition
// restarts from: its last earlier state (checkpointed in pebble, or
// replayed from before the damage), if there is one (records
// acknowledged after it are delivered again: at-least-once, never lost),
// else nothing, which is marked so that Load refuses it rather than
// starting it at share.auto.offset.reset. b is the replay batch.
func markLostStates(b *pebble.Batch, damage []JournalDamage, logger *slog.Logger) error {
	for _, d := range damage {
		if d.Torn || d.Superseded {
			continue
		}
		if !d.KeyKnown {
			logger.Error("share journal: a corrupt record's share-partition cannot be told; if it was the only state of a share-partition, that share-partition starts afresh",
				"offset", d.Offset, "bytes", d.Bytes)
			continue
		}
		k, err := AppendKey(nil, d.Key)
		if err != nil {
			continue
		}
		if v, closer, err := b.Get(k); err == nil {
			var st State
			derr := DecodeState(v, &st)
			closer.Close()
			if derr == nil {
				logger.Error("share-partition restarts from an older state: its latest journaled state was corrupt; records acknowledged after it are delivered again",
					"share_partition", d.Key.String(), "spso", st.StartOffset)
				continue
			}
		} else if !errors.Is(err, pebble.ErrNotFound) {
			return fmt.Errorf("read share state %s: %w", d.Key, err)
		}
		if err := b.Set(append([]byte(lostPrefix), k...), nil, nil); err != nil {
			return err
		}
	}
	return nil
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
// journaled state not yet in pebble is the latest.
func (p *JournaledPersister) Load(key Key, st *State) (bool, error) {
	p.mu.Lock()
	lost := p.lost[key]
	var err error
	v, ok := p.pending[key]
	if ok {
		err = DecodeState(v, st)
	}
	p.mu.Unlock()
	if lost {
		return false, fmt.Errorf("load share state %s: %w; reset its offsets (AlterShareGroupOffsets) or delete the group to start it again", key, ErrStateLost)
	}
	if ok {
		if err != nil {
			return false, fmt.Errorf("load share state %s: %w", key, err)
		}
		return true, nil
	}
	return p.PebblePersister.Load(key, st)
}

// Keys lists what pebble holds once the pending states are in it.
func (p *JournaledPersister) Keys(group string, dst []Key) ([]Key, error) {
	if err := p.writePending(); err != nil {
		return dst, err
	}
	return p.PebblePersister.Keys(group, dst)
}

// Groups lists what pebble holds once the pending states are in it.
func (p *JournaledPersister) Groups() ([]string, error) {
	if err := p.writePending(); err != nil {
		return nil, err
	}
	return p.PebblePersister.Groups()
}

func (p *JournaledPersister) writePending() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writePendingLocked()
}

// writePendingLocked writes the pending states to pebble without sync, in
// one batch: they stay in the journal until the next checkpoint.
func (p *JournaledPersister) writePendingLocked() error {
	if len(p.pending) == 0 {
		return nil
	}
	b := p.db.NewBatch()
	defer b.Close()
	for k, v := range p.pending {
		kb, err := AppendKey(nil, k)
		if err != nil {
			return err
		}
		if err := b.Set(kb, v, nil); err != nil {
			return fmt.Errorf("write share state %s: %w", k, err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("write share states: %w", err)
	}
	clear(p.pending)
	return nil
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
	for k := range p.lost {
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
		delete(p.lost, k)
	}
	return nil
}

// Write journals the state when sync (pebble gets it at the next
// checkpoint), else writes it to pebble without sync. With syncEveryWrite a
// sync Write returns once the journal is fsynced.
func (p *JournaledPersister) Write(key Key, st *State, sync bool) error {
	target, err := p.write(key, st, sync)
	if err != nil || !sync || !p.syncEvery {
		return err
	}
	return p.syncJournal(target)
}

// write does the locked part of Write and returns the journal position
// that must be on disk for a syncEvery write.
func (p *JournaledPersister) write(key Key, st *State, sync bool) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.lost[key] {
		if err := p.clearLostLocked(func(k Key) bool { return k == key }); err != nil {
			return 0, err
		}
	}
	if p.keyBuf, err = AppendKey(p.keyBuf[:0], key); err != nil {
		return 0, err
	}
	p.valBuf = EncodeState(p.valBuf[:0], st)
	if sync {
		if err := p.mu.j.appendEncoded(key, p.keyBuf, p.valBuf); err != nil {
			return 0, p.writeThroughLocked(key, err)
		}
		// The key's buffer is reused: no allocation per write.
		p.pending[key] = append(p.pending[key][:0], p.valBuf...)
	} else {
		if err := p.db.Set(p.keyBuf, p.valBuf, pebble.NoSync); err != nil {
			return 0, fmt.Errorf("write share state %s: %w", key, err)
		}
		// Newer than a pending state of the key, which must not
		// overwrite it at the checkpoint. (After a crash the journaled
		// state wins, as the Persister contract allows.)
		delete(p.pending, key)
	}
	target := p.mu.j.Appended()
	if p.mu.j.Size() > p.CheckpointBytes {
		// The write itself is done (journaled when sync); a failed
		// checkpoint leaves the journal to grow and the next Write retries.
		if err := p.checkpointLocked(); err != nil {
			p.logger.Warn("share journal checkpoint failed", "err", err)
		}
	}
	return target, nil
}

// writeThroughLocked is the fallback when the journal cannot take a
// record: a pebble Sync write, which makes this and every earlier write
// durable, so the journal can then start over empty.
func (p *JournaledPersister) writeThroughLocked(key Key, appendErr error) error {
	p.logger.Warn("share journal append failed; writing through with a pebble sync", "key", key.String(), "err", appendErr)
	// The journal is emptied below: what it holds for other keys goes to
	// pebble first, made durable by this write's sync.
	delete(p.pending, key)
	if err := p.writePendingLocked(); err != nil {
		return fmt.Errorf("write share state %s: %w (journal: %v)", key, err, appendErr)
	}
	if err := p.db.Set(p.keyBuf, p.valBuf, pebble.Sync); err != nil {
		return fmt.Errorf("write share state %s: %w (journal: %v)", key, err, appendErr)
	}
	if err := p.mu.j.Reset(); err != nil {
		p.logger.Warn("share journal reset failed", "err", err)
	}
	return nil
}

// syncJournal returns once the journal is on disk up to target. One
// caller fsyncs for all who appended before it started; the others find
// their record covered. A checkpoint between append and fsync is harmless:
// it synced pebble, which holds the record too.
func (p *JournaledPersister) syncJournal(target int64) error {
	p.gsync.Lock()
	defer p.gsync.Unlock()
	if p.gsync.synced >= target {
		return nil
	}
	end := p.mu.j.Appended() // p.mu.j is set once at open
	if err := p.mu.j.Sync(); err != nil {
		return err
	}
	p.gsync.synced = end
	return nil
}

// checkpointLocked writes the pending states to pebble, syncs it (every
// earlier write, journaled or not, becomes durable) and then empties the
// journal.
func (p *JournaledPersister) checkpointLocked() error {
	if err := p.writePendingLocked(); err != nil {
		return err
	}
	if err := p.PebblePersister.Flush(); err != nil {
		return err
	}
	return p.mu.j.Reset()
}

// Flush is a checkpoint: earlier writes are synced in pebble and the
// journal is emptied.
func (p *JournaledPersister) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.checkpointLocked()
}

// Delete checkpoints first so that no journal record of key, older than
// the delete, can be replayed over it.
func (p *JournaledPersister) Delete(key Key) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkpointLocked(); err != nil {
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
	if err := p.checkpointLocked(); err != nil {
		return fmt.Errorf("delete share state of group %s: %w", group, err)
	}
	if err := p.clearLostLocked(func(k Key) bool { return k.Group == group }); err != nil {
		return err
	}
	return p.PebblePersister.DeleteGroup(group)
}

// JournalSize returns the bytes currently in the journal.
func (p *JournaledPersister) JournalSize() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.j.Size()
}

// Close closes the journal file without a checkpoint (call Flush first
// for a clean shutdown); the db stays open.
func (p *JournaledPersister) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.j.Close()
}
