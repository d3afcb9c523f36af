// Package statejournal is the one write-ahead journal in front of the
// node's state store (pebble, <data>/state): the group, transaction and
// share coordinators make every write that must survive a process crash
// before it is answered through it, in one order.
//
// Why: a coordinator's state change (a committed consumer offset, offsets
// staged by a transaction, a transaction's state, a share-partition's
// state after an acknowledgement) must survive kill -9 before the request
// that made it is answered, as Kafka's internal topics (__consumer_offsets,
// __transaction_state, __share_group_state) do: those logs sit in the OS
// page cache and are fsynced only when the operator asks. A pebble Sync
// write costs an fsync per write, the whole tail of the latency on a busy
// disk; pebble's NoSync writes do not survive a process crash (pebble
// buffers WAL records in user space and writes them from a goroutine). So
// each write is first appended to this file with one write(2), which the
// kernel keeps through a process crash; with SyncEveryWrite (the operator
// set log.flush.interval.messages=1) it is fsynced too, writers that wait
// at once sharing one fsync.
//
// Two kinds of write, both appended under one lock, so the file holds them
// in the order they were made:
//   - Commit(batch): the batch is journaled, then committed to pebble
//     without sync (offset commits, staged transaction offsets,
//     transaction state).
//   - Stage(key, value): the value is journaled and kept in memory as the
//     key's staged value; pebble gets it at the next checkpoint or
//     WriteStaged (share-partition states, rewritten by every
//     acknowledgement: a pebble commit per acknowledgement cost a commit
//     and a wake-up of pebble's WAL writer for a state the journal
//     already keeps). A later Commit or SetNoSync of the key drops the
//     staged value, which must not overwrite it at the checkpoint.
//
// A checkpoint writes the staged values to pebble, makes every earlier
// pebble write durable (one synced WAL write covers all before it),
// empties the journal and fsyncs the truncation: a truncation lost in a
// power loss would bring back records older than what pebble holds, and
// replay would write them over newer state. It runs when the journal
// passes CheckpointBytes, on Checkpoint (share's Flush, and before share
// state is deleted) and on Close.
// Open replays the journal into pebble (synced) and empties it.
//
// Replaying every record in order over whatever pebble kept through a
// crash (pebble keeps a prefix of its writes; staged values reach it only
// at a checkpoint or WriteStaged) reproduces the state: each key ends with
// its last journaled write, and a range deletion replayed early is
// followed by the replay of every later write in its range.
//
// FORMAT: one append-only file of records, no file header:
//
//	uint32  length of the body (big-endian), 1..MaxRecord
//	uint32  CRC-32C (Castagnoli) of the body (big-endian)
//	bytes   the body, one of:
//	        a batch: pebble's batch representation (Batch.Repr) with a
//	          zero sequence number: uint64 0, uint32 count (both
//	          little-endian), then the operations (set, delete, range
//	          delete only);
//	        a staged write: uvarint length of the key (at least 1), the
//	          key, the value (share: AppendKey's key, EncodeState's state,
//	          which carries its own version byte).
//
// The first byte tells the two apart: a batch begins with its zero
// sequence number, a staged write with its key's non-zero length. The
// frame has no version of its own because the journal never outlives a
// clean restart (replay empties it): a format change only needs to read
// the previous one. Until this package took share and transaction state,
// an unreleased sharq kept two more files in the state directory,
// txn.journal (2026-12-02, replaced the same day by this journal) and
// share.journal (share-partition states in the staged-write layout); no
// released sharq wrote either, so neither is read.
//
// DAMAGE: one rule for every record, whoever wrote it: a record that does
// not check out costs only itself. Replay applies every record that checks
// out (length in bounds, CRC-32C, a body of one of the two kinds), in file
// order; a stretch that does not is skipped and replay goes on at the next
// offset where a whole record checks out. A torn tail (the declared length
// runs past the end of the file, or a partial header: a write a crash cut
// short, never answered) is dropped with a warning. Any other damage (a
// complete record that fails its check, a bad length, a foreign body or
// file, anywhere) is logged as an error with its offset, size, reason and
// the keys it still names; the file as found is kept beside the journal
// (state.journal.damaged, numbered if that exists) for inspection, never
// replayed again; and each key that a damaged record names and no later
// good record rewrote goes to Options.Lost, so its owner can refuse to
// trust it (share marks such a share-partition's state lost: it restarts
// from its previous state, or is refused until its offsets are reset,
// rather than starting afresh at share.auto.offset.reset).
//
// Why that rule. A complete record that fails its check is never the
// trace of a crash under the promised flush policy (a killed process
// leaves whole write(2)s and at most a torn last one; with SyncEveryWrite
// every answered record is on disk): it is media damage, a bug, a power
// loss without fsync (no promise was made) or a foreign file. Its own
// writes are lost whatever replay does: its bytes are wrong. The rule
// decides what else is lost, and whether state is made up:
//   - Ending replay at the damage (this package's rule before) loses every
//     later write as well, acknowledged ones included. Worse, pebble may
//     hold some of them (its NoSync WAL writes reached the page cache
//     before the crash): replaying the prefix over it writes keys that were
//     written both before and after the damage back to their old values,
//     while keys written only after keep their new ones, a state that never
//     existed (a consumer group's offset moving back, a transaction's
//     state going back to Ongoing after its commit).
//   - Skipping the record and replaying the rest gives every key written
//     after the damage its last write, exactly as it was; only the keys
//     whose last write was the damaged record are off, back at their
//     previous write (or a range deletion undone). Those are the writes
//     that are lost in any case, and skipping loses no others: every key
//     that ending replay gets right, skipping gets right too. Records are
//     whole values per key (an offset, a transaction's metadata, a
//     share-partition's state), not deltas, so a later record never builds
//     on the skipped one; that is also why the raft log (raftmeta), whose
//     entries are commands folded in order, refuses middle damage
//     instead.
//   - Refusing to start saves nothing either: the damaged bytes cannot be
//     read, and the good records are what an operator would replay.
//
// What no rule can do is tell a damaged record's keys with certainty: they
// are reported as far as they parse, and a key not even that far is only
// in the error log. The damaged copy is kept, never replayed: its records
// are older than what the store holds after the restart.
package statejournal

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
)

// DefaultCheckpointBytes is the journal size that triggers a checkpoint.
const DefaultCheckpointBytes = 4 << 20

// maxReplayFile bounds the journal Open reads into memory; checkpoints
// keep it near CheckpointBytes.
const maxReplayFile = 1 << 30

// Options configures Open.
type Options struct {
	// SyncEveryWrite fsyncs the journal before a write is answered:
	// power-loss durability, for an operator who sets
	// log.flush.interval.messages=1. Concurrent writers share an fsync.
	SyncEveryWrite bool
	// CheckpointBytes: a write that leaves the journal larger
	// checkpoints. Zero means DefaultCheckpointBytes.
	CheckpointBytes int64
	Logger          *slog.Logger
	// Lost, when set, is called during Open's replay for each key that a
	// damaged record names and no later good record rewrote, with the
	// replay batch (indexed: it reads through to pebble and sees what the
	// replay applied), before that batch commits; what it writes to b
	// commits with the replay. key points into the journal's bytes.
	Lost func(b *pebble.Batch, key []byte) error
}

// Journal is the write-ahead journal in front of one pebble DB. Every
// writer of the DB that needs crash durability writes through it.
type Journal struct {
	db         *pebble.DB
	path       string
	syncEvery  bool
	checkpoint int64
	logger     *slog.Logger
	// f is set at Open; it is written and truncated under mu, fsynced by
	// Durable outside it.
	f *os.File

	// mu makes (journal append, pebble commit or staging) one step, so a
	// checkpoint never falls between them and the file's order is the
	// order of the writes. Nothing is called with mu held but the file
	// and pebble.
	mu struct {
		sync.Mutex
		size   int64
		buf    []byte
		closed bool
		// staged holds, per key, the value of the last Stage not yet in
		// pebble.
		staged map[string]*stagedValue
	}
	// appended counts every byte ever appended (never reset), so that a
	// writer can tell whether an fsync covers its record.
	appended atomic.Int64
	// gsync group-commits the fsyncs of SyncEveryWrite: writers append
	// under mu one after the other, then one fsync, outside mu, covers
	// every record appended before it started (as pebble's commit
	// pipeline coalesces its WAL syncs). Lock order: gsync, then mu.
	gsync struct {
		sync.Mutex
		synced int64 // appended known to be on disk
	}
}

// stagedValue is a pointer in Journal.mu.staged so that restaging a key
// reuses its buffer without a map assignment.
type stagedValue struct{ v []byte }

// Open opens the journal at path, replays it into db (synced), empties it
// and returns it. The caller owns db and closes the journal before db.
func Open(db *pebble.DB, path string, o Options) (*Journal, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CheckpointBytes <= 0 {
		o.CheckpointBytes = DefaultCheckpointBytes
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open state journal %s: %w", path, err)
	}
	j := &Journal{db: db, path: path, syncEvery: o.SyncEveryWrite, checkpoint: o.CheckpointBytes, logger: o.Logger, f: f}
	j.mu.staged = map[string]*stagedValue{}
	if err := j.replay(o.Lost); err != nil {
		f.Close()
		return nil, err
	}
	// The (possibly new) journal file must not vanish in a power loss.
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// replay applies the journal's good records to pebble in one synced
// batch, reports and keeps any damage (see the package doc), and empties
// the journal.
func (j *Journal) replay(lost func(*pebble.Batch, []byte) error) error {
	fi, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("replay state journal %s: %w", j.path, err)
	}
	if fi.Size() == 0 {
		return nil
	}
	if fi.Size() > maxReplayFile {
		return fmt.Errorf("replay state journal %s: %d bytes is more than a journal ever holds (%d)", j.path, fi.Size(), maxReplayFile)
	}
	data, err := os.ReadFile(j.path)
	if err != nil {
		return fmt.Errorf("read state journal %s: %w", j.path, err)
	}
	// Indexed, so that lost sees what the replay applied.
	b := j.db.NewIndexedBatch()
	defer b.Close()
	r, err := Decode(data, func(kind pebble.InternalKeyKind, k, v []byte) error {
		switch kind {
		case pebble.InternalKeyKindSet:
			return b.Set(k, v, nil)
		case pebble.InternalKeyKindDelete:
			return b.Delete(k, nil)
		default: // range delete: validBody admits nothing else
			return b.DeleteRange(k, v, nil)
		}
	})
	if err == nil {
		err = j.reportDamage(data, r, b, lost)
	}
	if err == nil && !b.Empty() {
		err = b.Commit(pebble.Sync)
	}
	if err != nil {
		return fmt.Errorf("replay state journal %s: %w", j.path, err)
	}
	if err := j.truncateLocked(); err != nil {
		return err
	}
	j.logger.Info("state journal replayed", "path", j.path, "records", r.Records, "damaged_stretches", len(r.Damage))
	return nil
}

// reportDamage logs r's damage, keeps a copy of a damaged journal and
// hands the keys whose last write was damaged to lost.
func (j *Journal) reportDamage(data []byte, r Replayed, b *pebble.Batch, lost func(*pebble.Batch, []byte) error) error {
	if len(r.Damage) == 0 {
		return nil
	}
	var damaged string
	for _, d := range r.Damage {
		if d.Torn {
			j.logger.Warn("state journal: dropping a torn final write (a crash cut it short; it was never answered)",
				"path", j.path, "offset", d.Offset, "bytes", d.Bytes, "records_replayed", r.Records)
			continue
		}
		if damaged == "" {
			var err error
			if damaged, err = keepCopy(j.path, data); err != nil {
				return err
			}
		}
		j.logger.Error("state journal: skipping a damaged record; every record after it is replayed",
			"path", j.path, "offset", d.Offset, "bytes", d.Bytes, "reason", d.Reason, "tail", d.Tail,
			"keys", quoteKeys(d.Keys), "records_replayed", r.Records, "damaged_copy", damaged)
		if len(d.Keys) == 0 {
			j.logger.Error("state journal: a damaged record's keys cannot be read; whatever it wrote is back at its previous value",
				"path", j.path, "offset", d.Offset)
		}
	}
	keys, err := lostKeys(data, r.Damage)
	if err != nil {
		return err
	}
	if len(keys) > 0 {
		j.logger.Error("state journal: keys whose last write was in a damaged record are back at their previous value",
			"path", j.path, "count", len(keys), "keys", quoteKeys(keys))
	}
	if lost != nil {
		for _, k := range keys {
			if err := lost(b, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// lostKeys returns the keys the damaged stretches name that no later good
// record wrote (set, delete, or a range deletion over them), in the order
// first damaged.
func lostKeys(data []byte, dmg []Damage) ([][]byte, error) {
	at := map[string]int64{} // key -> offset of its last damaged record
	var order [][]byte
	for _, d := range dmg {
		if d.Torn {
			continue // never answered
		}
		for _, k := range d.Keys {
			if _, ok := at[string(k)]; !ok {
				order = append(order, k)
			}
			at[string(k)] = d.Offset
		}
	}
	if len(at) == 0 {
		return nil, nil
	}
	_, err := scan(data, func(off int, body []byte) error {
		return forEachOp(body, func(kind pebble.InternalKeyKind, k, v []byte) error {
			if kind != pebble.InternalKeyKindRangeDelete {
				if d, ok := at[string(k)]; ok && int64(off) > d {
					delete(at, string(k))
				}
				return nil
			}
			for key, d := range at {
				if int64(off) > d && key >= string(k) && key < string(v) {
					delete(at, key)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	keys := order[:0]
	for _, k := range order {
		if _, ok := at[string(k)]; ok {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// keepCopy writes data beside path as path.damaged (path.damaged.N if
// that exists: an earlier copy is evidence too) and returns its name.
func keepCopy(path string, data []byte) (string, error) {
	for i := 0; ; i++ {
		name := path + ".damaged"
		if i > 0 {
			name = fmt.Sprintf("%s.%d", name, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) && i < 1000 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("keep damaged state journal: %w", err)
		}
		_, err = f.Write(data)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("keep damaged state journal %s: %w", name, err)
		}
		return name, nil
	}
}

// quoteKeys renders up to 8 keys for a log line.
func quoteKeys(keys [][]byte) []string {
	out := make([]string, 0, min(len(keys), 8))
	for i, k := range keys {
		if i == 8 {
			out = append(out, fmt.Sprintf("... %d more", len(keys)-8))
			break
		}
		out = append(out, fmt.Sprintf("%q", k))
	}
	return out
}

// Commit journals b, then commits it to pebble without sync, dropping the
// staged values of the keys it writes. It returns once b survives a
// process crash (with SyncEveryWrite, a power loss). The caller still
// closes b.
func (j *Journal) Commit(b *pebble.Batch) error {
	if b.Empty() {
		return nil
	}
	repr := b.Repr()
	if len(repr) > MaxRecord {
		return fmt.Errorf("state batch of %d bytes is over the journal's limit of %d", len(repr), MaxRecord)
	}
	pos, err := j.commit(b, repr)
	if err != nil {
		return err
	}
	return j.Durable(pos)
}

func (j *Journal) commit(b *pebble.Batch, repr []byte) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.closed {
		return 0, errors.New("state journal closed")
	}
	j.mu.buf = appendBatchRecord(j.mu.buf[:0], repr)
	if !validBody(j.mu.buf[recordHeader:]) {
		// Replay would skip it as damage.
		return 0, errors.New("state batch holds an operation the journal does not replay (only set, delete, range delete)")
	}
	appendErr := j.appendLocked()
	if len(j.mu.staged) > 0 {
		j.unstageLocked(repr)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return 0, fmt.Errorf("commit state batch: %w", err)
	}
	if appendErr != nil {
		// pebble holds b: a checkpoint makes it durable.
		return 0, j.writeThroughLocked(appendErr)
	}
	return j.afterAppendLocked(), nil
}

// unstageLocked drops the staged values of the keys the batch repr writes:
// they are older.
func (j *Journal) unstageLocked(repr []byte) {
	if len(repr) <= batchHeader {
		return
	}
	walkBatch(repr, func(kind pebble.InternalKeyKind, k, v []byte) bool {
		if kind != pebble.InternalKeyKindRangeDelete {
			delete(j.mu.staged, string(k))
			return true
		}
		for key := range j.mu.staged {
			if key >= string(k) && key < string(v) {
				delete(j.mu.staged, key)
			}
		}
		return true
	})
}

// Stage journals a write of value to key and keeps it staged: pebble gets
// it at the next checkpoint or WriteStaged; StagedValue reads it until
// then. It returns the journal position the write ends at: pass it to
// Durable before answering, after releasing the caller's own locks so that
// concurrent writers share an fsync.
func (j *Journal) Stage(key, value []byte) (int64, error) {
	if len(key) == 0 {
		return 0, errors.New("stage an empty key")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.closed {
		return 0, errors.New("state journal closed")
	}
	j.mu.buf = appendStagedRecord(j.mu.buf[:0], key, value)
	if body := len(j.mu.buf) - recordHeader; body > MaxRecord {
		return 0, fmt.Errorf("staged write of %d bytes to %q is over the journal's limit of %d", body, key, MaxRecord)
	}
	appendErr := j.appendLocked()
	// The key's buffer is reused: no allocation per write.
	if s := j.mu.staged[string(key)]; s != nil {
		s.v = append(s.v[:0], value...)
	} else {
		j.mu.staged[string(key)] = &stagedValue{v: append([]byte(nil), value...)}
	}
	if appendErr != nil {
		// The staged value goes to pebble with the checkpoint.
		return 0, j.writeThroughLocked(appendErr)
	}
	return j.afterAppendLocked(), nil
}

// SetNoSync writes value to key in pebble without the journal and without
// sync, a write a crash may lose, and drops the key's staged value, which
// is older. (After a crash the key's last journaled write wins over it.)
func (j *Journal) SetNoSync(key, value []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.db.Set(key, value, pebble.NoSync); err != nil {
		return fmt.Errorf("write state %q: %w", key, err)
	}
	delete(j.mu.staged, string(key))
	return nil
}

// StagedValue appends key's staged value to dst, ok false when none is
// staged (pebble holds its latest value).
func (j *Journal) StagedValue(dst, key []byte) ([]byte, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.mu.staged[string(key)]
	if s == nil {
		return dst, false
	}
	return append(dst, s.v...), true
}

// WriteStaged writes the staged values to pebble without sync (they stay
// journaled until the next checkpoint), so that a listing of pebble sees
// them.
func (j *Journal) WriteStaged() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.writeStagedLocked()
}

func (j *Journal) writeStagedLocked() error {
	if len(j.mu.staged) == 0 {
		return nil
	}
	b := j.db.NewBatch()
	defer b.Close()
	for k, s := range j.mu.staged {
		if err := b.Set([]byte(k), s.v, nil); err != nil {
			return fmt.Errorf("write staged state %q: %w", k, err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("write staged state: %w", err)
	}
	clear(j.mu.staged)
	return nil
}

// appendLocked writes mu.buf at the journal's end. A failed write is cut
// off again so the next one starts on a record boundary.
func (j *Journal) appendLocked() error {
	if _, err := j.f.WriteAt(j.mu.buf, j.mu.size); err != nil {
		if terr := j.f.Truncate(j.mu.size); terr != nil {
			err = errors.Join(err, terr)
		}
		return fmt.Errorf("append state journal %s: %w", j.path, err)
	}
	j.mu.size += int64(len(j.mu.buf))
	j.appended.Add(int64(len(j.mu.buf)))
	return nil
}

// afterAppendLocked checkpoints a journal grown past its size and returns
// the position Durable waits for.
func (j *Journal) afterAppendLocked() int64 {
	pos := j.appended.Load()
	if cap(j.mu.buf) > 1<<20 {
		j.mu.buf = nil // one large write should not pin its buffer
	}
	if j.mu.size > j.checkpoint {
		// The write itself is journaled; a failed checkpoint leaves the
		// journal to grow and the next write tries again.
		if err := j.checkpointLocked(); err != nil {
			j.logger.Warn("state journal checkpoint failed", "err", err)
		}
	}
	return pos
}

// writeThroughLocked is the fallback when the journal cannot take a
// record (a full disk, an I/O error) and the write is already in pebble or
// staged: a checkpoint makes it and every earlier write durable, and the
// journal starts over.
func (j *Journal) writeThroughLocked(appendErr error) error {
	j.logger.Warn("state journal append failed; writing through with a pebble sync", "err", appendErr)
	if err := j.checkpointLocked(); err != nil {
		return fmt.Errorf("%w (write-through: %v)", appendErr, err)
	}
	return nil
}

// Durable returns once every write up to pos (from Stage) is on disk as
// the journal promises: at once without SyncEveryWrite (the page cache
// keeps it through a process crash), else after an fsync that one caller
// makes for all who appended before it started. A checkpoint between
// append and fsync is harmless: it synced pebble, which holds the write
// too.
func (j *Journal) Durable(pos int64) error {
	if !j.syncEvery {
		return nil
	}
	j.gsync.Lock()
	defer j.gsync.Unlock()
	if j.gsync.synced >= pos {
		return nil
	}
	end := j.appended.Load()
	if err := j.f.Sync(); err != nil {
		// The record may or may not be on disk (and a failed fsync may
		// have dropped dirty pages): write through.
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.mu.closed {
			return nil // Close checkpointed every write before it
		}
		if cerr := j.checkpointLocked(); cerr != nil {
			return fmt.Errorf("sync state journal %s: %w (write-through: %v)", j.path, err, cerr)
		}
	}
	j.gsync.synced = end
	return nil
}

// Checkpoint writes the staged values to pebble, makes every earlier write
// durable there and empties the journal.
func (j *Journal) Checkpoint() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.closed {
		return errors.New("state journal closed")
	}
	return j.checkpointLocked()
}

func (j *Journal) checkpointLocked() error {
	if err := j.writeStagedLocked(); err != nil {
		return fmt.Errorf("checkpoint state journal: %w", err)
	}
	if err := j.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("checkpoint state journal: %w", err)
	}
	return j.truncateLocked()
}

// truncateLocked empties the journal, durably (see the package doc). If
// the open file fails, the path is truncated: records older than pebble's
// state must not stay behind to be replayed over it.
func (j *Journal) truncateLocked() error {
	err := j.f.Truncate(0)
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		if perr := truncatePath(j.path); perr != nil {
			return fmt.Errorf("reset state journal %s: %w", j.path, errors.Join(err, perr))
		}
		j.logger.Warn("state journal: reset through its path after its file failed", "path", j.path, "err", err)
	}
	j.mu.size = 0
	return nil
}

func truncatePath(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Size is the journal's length in bytes.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.size
}

// Close checkpoints and closes the journal; later writes fail.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.closed {
		return nil
	}
	j.mu.closed = true
	err := j.checkpointLocked()
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close state journal %s: %w", j.path, cerr)
	}
	return err
}
