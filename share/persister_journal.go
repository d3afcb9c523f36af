package share

import (
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
// record: every write also goes to pebble without sync, a checkpoint
// (Flush, or the journal outgrowing CheckpointBytes) syncs pebble and
// empties the journal, and OpenJournaledPersister replays what a crash
// left in the journal.
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
	valBuf []byte // under mu
	keyBuf []byte // under mu

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
	b := db.NewBatch()
	var kbuf []byte
	n, err := j.Replay(func(key Key, st *State) error {
		var kerr error
		if kbuf, kerr = AppendKey(kbuf[:0], key); kerr != nil {
			return kerr
		}
		// Batch.Set copies key and value.
		return b.Set(kbuf, EncodeState(nil, st), nil)
	})
	if err == nil && n > 0 {
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
		syncEvery: syncEveryWrite, CheckpointBytes: DefaultCheckpointBytes}
	p.mu.j = j
	return p, nil
}

// Write journals the state first when sync, then writes it to pebble
// without sync. With syncEveryWrite a sync Write returns once the journal
// is fsynced.
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
	if p.keyBuf, err = AppendKey(p.keyBuf[:0], key); err != nil {
		return 0, err
	}
	p.valBuf = EncodeState(p.valBuf[:0], st)
	if sync {
		if err := p.mu.j.appendEncoded(key, p.keyBuf, p.valBuf); err != nil {
			return 0, p.writeThroughLocked(key, err)
		}
	}
	target := p.mu.j.Appended()
	if err := p.db.Set(p.keyBuf, p.valBuf, pebble.NoSync); err != nil {
		return 0, fmt.Errorf("write share state %s: %w", key, err)
	}
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

// checkpointLocked syncs pebble (every earlier write, journaled or not,
// becomes durable) and then empties the journal.
func (p *JournaledPersister) checkpointLocked() error {
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
	return p.PebblePersister.Delete(key)
}

// DeleteGroup checkpoints first, as Delete does.
func (p *JournaledPersister) DeleteGroup(group string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkpointLocked(); err != nil {
		return fmt.Errorf("delete share state of group %s: %w", group, err)
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
