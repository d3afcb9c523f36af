// Package statejournal makes writes to the node's state store (pebble)
// survive a process crash without an fsync per write.
//
// Why: a coordinator's state change — a committed consumer offset, offsets
// staged by a transaction, a transaction's state — must survive kill -9
// before the request that made it is answered, as Kafka's internal topics
// (__consumer_offsets, __transaction_state) do: those logs sit in the OS
// page cache and are fsynced only when the operator asks. A pebble Sync
// write costs an fsync per write, the whole tail of the latency on a busy
// disk; pebble's NoSync writes do not survive a process crash (pebble
// buffers WAL records in user space and writes them from a goroutine). So
// each batch is first appended to one journal file with one write(2), which
// the kernel keeps through a process crash, then committed to pebble
// without sync. A checkpoint (a pebble Sync write, which makes every earlier
// write durable, then truncation) empties the journal once it passes
// CheckpointBytes, and on Close; Open replays it into pebble.
//
// Appending and committing happen under one lock, so the journal holds the
// batches in the order pebble applied them, and replaying every record in
// order over whatever prefix pebble kept reproduces the state (each key
// ends with its last write; a range deletion replayed early is followed by
// the replay of every later write in its range).
//
// FORMAT: one append-only file of records, no file header:
//
//	uint32  length of the batch (big-endian), 12..MaxRecord
//	uint32  CRC-32C (Castagnoli) of the batch (big-endian)
//	bytes   the batch in pebble's batch representation (Batch.Repr)
//
// Replay re-reads each batch operation by operation and accepts only what
// the coordinators write (set, delete, range delete). A record that does
// not check out ends the replay: a torn tail (a crash during a write) is
// cut silently; anything else is logged as damage and the damaged file is
// kept beside the journal for inspection.
package statejournal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/cockroachdb/pebble"
)

const (
	recordHeader = 8
	// batchHeader is pebble's batch header (sequence number and count).
	batchHeader = 12
	// MaxRecord bounds a record so a corrupt length cannot make replay
	// allocate gigabytes; a coordinator's batch is a few KiB to a few MiB.
	MaxRecord = 64 << 20
	// DefaultCheckpointBytes is the journal size that triggers a
	// checkpoint.
	DefaultCheckpointBytes = 4 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options configures Open.
type Options struct {
	// SyncEveryWrite fsyncs the journal after each append: power-loss
	// durability, for an operator who sets log.flush.interval.messages=1.
	SyncEveryWrite bool
	// CheckpointBytes: a commit that leaves the journal larger
	// checkpoints. Zero means DefaultCheckpointBytes.
	CheckpointBytes int64
	Logger          *slog.Logger
}

// Journal is the write-ahead journal in front of one pebble DB. Every
// writer of the DB that needs crash durability commits through it.
type Journal struct {
	db         *pebble.DB
	path       string
	syncEvery  bool
	checkpoint int64
	logger     *slog.Logger

	mu     sync.Mutex
	f      *os.File
	size   int64
	buf    []byte
	closed bool
}

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
	j := &Journal{db: db, path: path, syncEvery: o.SyncEveryWrite, checkpoint: o.CheckpointBytes,
		logger: o.Logger, f: f}
	if err := j.replay(); err != nil {
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

// Replayed is what Decode found in a journal's bytes.
type Replayed struct {
	Records int
	// End is where the valid records end; End < len(data) means a torn
	// tail or damage (Torn tells which).
	End  int
	Torn bool
}

// Decode walks data's records and calls apply for each operation of each
// valid record, in order. It stops at the first record that does not
// check out. apply's error stops the walk and is returned.
func Decode(data []byte, apply func(kind pebble.InternalKeyKind, key, value []byte) error) (Replayed, error) {
	var r Replayed
	for r.End < len(data) {
		repr, size, ok := decodeRecord(data[r.End:])
		if !ok || !validBatch(repr) {
			break
		}
		br, _ := pebble.ReadBatch(repr)
		for {
			kind, k, v, ok, err := br.Next()
			if err != nil || !ok {
				break
			}
			if err := apply(kind, k, v); err != nil {
				return r, err
			}
		}
		r.End += size
		r.Records++
	}
	r.Torn = r.End < len(data) && tornTail(data[r.End:])
	return r, nil
}

// validBatch checks a batch operation by operation: only the kinds the
// coordinators write, as many as the header counts, nothing left over.
func validBatch(repr []byte) bool {
	if len(repr) < batchHeader {
		return false
	}
	br, count := pebble.ReadBatch(repr)
	n := uint32(0)
	for {
		kind, _, _, ok, err := br.Next()
		if err != nil {
			return false
		}
		if !ok {
			break
		}
		switch kind {
		case pebble.InternalKeyKindSet, pebble.InternalKeyKindDelete, pebble.InternalKeyKindRangeDelete:
		default:
			return false
		}
		n++
	}
	return n == count
}

// replay applies the journal's batches to pebble in one synced batch and
// empties the journal.
func (j *Journal) replay() error {
	data, err := os.ReadFile(j.path)
	if err != nil {
		return fmt.Errorf("read state journal %s: %w", j.path, err)
	}
	if len(data) == 0 {
		return nil
	}
	b := j.db.NewBatch()
	defer b.Close()
	r, err := Decode(data, func(kind pebble.InternalKeyKind, k, v []byte) error {
		switch kind {
		case pebble.InternalKeyKindSet:
			return b.Set(k, v, nil)
		case pebble.InternalKeyKindDelete:
			return b.Delete(k, nil)
		default: // range delete: validBatch admits nothing else
			return b.DeleteRange(k, v, nil)
		}
	})
	if err != nil {
		return fmt.Errorf("replay state journal %s: %w", j.path, err)
	}
	if r.End < len(data) && !r.Torn {
		// Not a write cut short by a crash: keep the file for inspection.
		// The writes after the damage are lost.
		damaged := j.path + ".damaged"
		j.logger.Error("state journal damaged; writes after the damage are lost and kept in the damaged file",
			"path", j.path, "offset", r.End, "records_replayed", r.Records, "damaged_copy", damaged)
		if err := os.WriteFile(damaged, data, 0o644); err != nil {
			return fmt.Errorf("keep damaged state journal: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("replay state journal %s: %w", j.path, err)
	}
	if err := j.truncate(); err != nil {
		return err
	}
	j.logger.Info("state journal replayed", "path", j.path, "records", r.Records)
	return nil
}

// tornTail reports whether rest is what a write cut short leaves: a
// record whose declared length runs past the end of the file.
func tornTail(rest []byte) bool {
	if len(rest) < recordHeader {
		return true
	}
	l := int(binary.BigEndian.Uint32(rest))
	return l >= batchHeader && l <= MaxRecord && recordHeader+l > len(rest)
}

// decodeRecord parses the record at the start of b; size is its whole
// length. ok is false for a record that does not check out.
func decodeRecord(b []byte) (repr []byte, size int, ok bool) {
	if len(b) < recordHeader {
		return nil, 0, false
	}
	l := int(binary.BigEndian.Uint32(b))
	if l < batchHeader || l > MaxRecord || recordHeader+l > len(b) {
		return nil, 0, false
	}
	repr = b[recordHeader : recordHeader+l]
	if crc32.Checksum(repr, castagnoli) != binary.BigEndian.Uint32(b[4:]) {
		return nil, 0, false
	}
	return repr, recordHeader + l, true
}

// AppendRecord lays out a record of the batch representation repr.
func AppendRecord(dst, repr []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(repr)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(repr, castagnoli))
	return append(dst, repr...)
}

// Commit journals b, then commits it to pebble without sync. It returns
// once b survives a process crash (with SyncEveryWrite, a power loss).
// The caller still closes b.
func (j *Journal) Commit(b *pebble.Batch) error {
	if b.Empty() {
		return nil
	}
	repr := b.Repr()
	if len(repr) > MaxRecord {
		return fmt.Errorf("state batch of %d bytes is over the journal's limit of %d", len(repr), MaxRecord)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return errors.New("state journal closed")
	}
	j.buf = AppendRecord(j.buf[:0], repr)
	if err := j.appendLocked(); err != nil {
		return j.writeThroughLocked(b, err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("commit state batch: %w", err)
	}
	if cap(j.buf) > 1<<20 {
		j.buf = nil // one large batch should not pin its buffer
	}
	if j.size > j.checkpoint {
		// The batch itself is journaled; a failed checkpoint leaves the
		// journal to grow and the next commit tries again.
		if err := j.checkpointLocked(); err != nil {
			j.logger.Warn("state journal checkpoint failed", "err", err)
		}
	}
	return nil
}

// appendLocked writes j.buf at the journal's end (and fsyncs with
// syncEvery). A failed write is cut off again so the next one starts on a
// record boundary.
func (j *Journal) appendLocked() error {
	if _, err := j.f.WriteAt(j.buf, j.size); err != nil {
		if terr := j.f.Truncate(j.size); terr != nil {
			return errors.Join(err, terr)
		}
		return err
	}
	j.size += int64(len(j.buf))
	if j.syncEvery {
		if err := j.f.Sync(); err != nil {
			// The record may or may not be on disk: write through.
			return err
		}
	}
	return nil
}

// writeThroughLocked is the fallback when the journal cannot take a
// record (a full disk, an I/O error): a pebble Sync commit, which makes
// this and every earlier write durable, so the journal can start over.
func (j *Journal) writeThroughLocked(b *pebble.Batch, appendErr error) error {
	j.logger.Warn("state journal append failed; writing through with a pebble sync", "err", appendErr)
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("commit state batch: %w (journal: %v)", err, appendErr)
	}
	if err := j.truncate(); err != nil {
		j.logger.Warn("state journal reset failed", "err", err)
	}
	return nil
}

// checkpointLocked makes every earlier pebble write durable (one synced
// WAL write covers all before it) and empties the journal.
func (j *Journal) checkpointLocked() error {
	if err := j.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("checkpoint state journal: %w", err)
	}
	return j.truncate()
}

func (j *Journal) truncate() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("reset state journal %s: %w", j.path, err)
	}
	j.size = 0
	if j.syncEvery {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("reset state journal %s: %w", j.path, err)
		}
	}
	return nil
}

// Size is the journal's length in bytes.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// Close checkpoints and closes the journal; later commits fail.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	err := j.checkpointLocked()
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close state journal %s: %w", j.path, cerr)
	}
	return err
}
