package txn

// Transaction-state journal.
//
// Why: a transaction's state change (a partition added, the commit
// decision, its completion) must survive a process crash (kill -9) before
// the coordinator acts on it, as Kafka's __transaction_state log does: that
// log sits in the OS page cache and is fsynced only when the operator asks.
// A pebble Sync write costs an fsync per state change (two per commit), the
// whole tail of the commit latency on a busy disk; pebble's NoSync writes
// do not survive a process crash (pebble buffers WAL records in user space
// and writes them from a goroutine). So a state change is first appended
// here with one write(2), which the kernel keeps through a process crash,
// then written to pebble without sync. A checkpoint (a pebble Sync write,
// then truncation) empties the journal once it passes CheckpointBytes, and
// on Close; opening replays it into pebble.
//
// FORMAT: one append-only file of records, no file header:
//
//	uint32  length of the rest of the record (big-endian), 2..maxTxnRecord
//	uint32  CRC-32C (Castagnoli) of the rest of the record (big-endian)
//	byte    1 = put, 2 = delete
//	uvarint length of the transactional id
//	bytes   the transactional id
//	bytes   put: the state as EncodeMetadata writes it (versioned itself)
//
// A record that does not check out ends the replay: a torn tail (a crash
// during a write) is cut silently, anything after it is logged as damage
// and the damaged file is kept beside the journal for inspection.

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
	txnRecordHeader = 8
	txnOpPut        = 1
	txnOpDelete     = 2
	// maxTxnRecord bounds a record so a corrupt length cannot make replay
	// allocate gigabytes; a state holds at most a few thousand partitions.
	maxTxnRecord = 16 << 20
	// DefaultCheckpointBytes is the journal size that triggers a
	// checkpoint.
	DefaultCheckpointBytes = 4 << 20
)

var txnCRC = crc32.MakeTable(crc32.Castagnoli)

// JournaledStore is the PebbleStore with writes journaled first (see the
// file comment): Put and Delete return once the change survives a process
// crash, or, with syncEveryWrite, a power loss.
type JournaledStore struct {
	*PebbleStore
	db        *pebble.DB
	path      string
	syncEvery bool
	logger    *slog.Logger
	// CheckpointBytes: a write that leaves the journal larger checkpoints.
	CheckpointBytes int64

	mu     sync.Mutex
	f      *os.File
	size   int64
	buf    []byte
	closed bool
}

// OpenJournaledStore opens the journal at path, replays it into db
// (synced), empties it and returns the store. The caller owns db and
// closes the store (Close) before db.
func OpenJournaledStore(db *pebble.DB, path string, syncEveryWrite bool, logger *slog.Logger) (*JournaledStore, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open transaction journal: %w", err)
	}
	s := &JournaledStore{PebbleStore: NewPebbleStore(db), db: db, path: path, syncEvery: syncEveryWrite,
		logger: logger, CheckpointBytes: DefaultCheckpointBytes, f: f}
	if err := s.replay(); err != nil {
		f.Close()
		return nil, err
	}
	// The (possibly new) journal file must not vanish in a power loss.
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
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

// replay applies the journal's records to pebble in one synced batch and
// empties the journal.
func (s *JournaledStore) replay() error {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("read transaction journal: %w", err)
	}
	if len(data) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	off, n := 0, 0
	for off < len(data) {
		op, id, val, size, ok := decodeTxnRecord(data[off:])
		if !ok {
			break
		}
		switch op {
		case txnOpPut:
			if _, err := DecodeMetadata(val); err != nil {
				ok = false
			} else if err := b.Set(key(id), val, nil); err != nil {
				return fmt.Errorf("replay transaction journal: %w", err)
			}
		case txnOpDelete:
			if err := b.Delete(key(id), nil); err != nil {
				return fmt.Errorf("replay transaction journal: %w", err)
			}
		}
		if !ok {
			break
		}
		off += size
		n++
	}
	if off < len(data) && !tornTail(data[off:]) {
		// Not a write cut short by a crash: keep the file for inspection.
		// The states after the damage are lost; their transactions time out.
		damaged := s.path + ".damaged"
		s.logger.Error("transaction journal damaged; states after the damage are lost and kept in the damaged file",
			"path", s.path, "offset", off, "records_replayed", n, "damaged_copy", damaged)
		if err := os.WriteFile(damaged, data, 0o644); err != nil {
			return fmt.Errorf("keep damaged transaction journal: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("replay transaction journal: %w", err)
	}
	if err := s.truncate(); err != nil {
		return err
	}
	s.logger.Info("transaction journal replayed", "path", s.path, "records", n)
	return nil
}

// tornTail reports whether rest is what a write cut short leaves: a
// record whose declared length runs past the end of the file.
func tornTail(rest []byte) bool {
	if len(rest) < txnRecordHeader {
		return true
	}
	l := int(binary.BigEndian.Uint32(rest))
	return l >= 2 && l <= maxTxnRecord && txnRecordHeader+l > len(rest)
}

// decodeTxnRecord parses the record at the start of b; size is its whole
// length. ok is false for a record that does not check out.
func decodeTxnRecord(b []byte) (op byte, id string, val []byte, size int, ok bool) {
	if len(b) < txnRecordHeader {
		return 0, "", nil, 0, false
	}
	l := int(binary.BigEndian.Uint32(b))
	if l < 2 || l > maxTxnRecord || txnRecordHeader+l > len(b) {
		return 0, "", nil, 0, false
	}
	body := b[txnRecordHeader : txnRecordHeader+l]
	if crc32.Checksum(body, txnCRC) != binary.BigEndian.Uint32(b[4:]) {
		return 0, "", nil, 0, false
	}
	op = body[0]
	idLen, n := binary.Uvarint(body[1:])
	if n <= 0 || idLen > uint64(len(body)-1-n) || (op != txnOpPut && op != txnOpDelete) {
		return 0, "", nil, 0, false
	}
	rest := body[1+n:]
	id, val = string(rest[:idLen]), rest[idLen:]
	if op == txnOpDelete && len(val) != 0 {
		return 0, "", nil, 0, false
	}
	return op, id, val, txnRecordHeader + l, true
}

// appendTxnRecord lays out a record.
func appendTxnRecord(dst []byte, op byte, id string, val []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, txnRecordHeader)...)
	dst = append(dst, op)
	dst = binary.AppendUvarint(dst, uint64(len(id)))
	dst = append(dst, id...)
	dst = append(dst, val...)
	body := dst[start+txnRecordHeader:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(dst[start+4:], crc32.Checksum(body, txnCRC))
	return dst
}

// Put journals the state, then writes it to pebble without sync.
func (s *JournaledStore) Put(id string, m *Metadata) error {
	return s.write(txnOpPut, id, EncodeMetadata(m))
}

// Delete journals the removal, then deletes from pebble without sync.
func (s *JournaledStore) Delete(id string) error {
	return s.write(txnOpDelete, id, nil)
}

func (s *JournaledStore) write(op byte, id string, val []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("transaction journal closed")
	}
	s.buf = appendTxnRecord(s.buf[:0], op, id, val)
	if len(s.buf)-txnRecordHeader > maxTxnRecord {
		return fmt.Errorf("transaction state of %s is %d bytes, over the journal's limit", id, len(s.buf))
	}
	if err := s.appendLocked(); err != nil {
		return s.writeThroughLocked(op, id, val, err)
	}
	var err error
	if op == txnOpPut {
		err = s.db.Set(key(id), val, pebble.NoSync)
	} else {
		err = s.db.Delete(key(id), pebble.NoSync)
	}
	if err != nil {
		return fmt.Errorf("write transaction state of %s: %w", id, err)
	}
	if s.size > s.CheckpointBytes {
		// The write itself is journaled; a failed checkpoint leaves the
		// journal to grow and the next write tries again.
		if err := s.checkpointLocked(); err != nil {
			s.logger.Warn("transaction journal checkpoint failed", "err", err)
		}
	}
	return nil
}

// appendLocked writes s.buf at the journal's end (and fsyncs with
// syncEvery). A failed write is cut off again so the next one starts on a
// record boundary.
func (s *JournaledStore) appendLocked() error {
	if _, err := s.f.WriteAt(s.buf, s.size); err != nil {
		if terr := s.f.Truncate(s.size); terr != nil {
			return errors.Join(err, terr)
		}
		return err
	}
	s.size += int64(len(s.buf))
	if s.syncEvery {
		if err := s.f.Sync(); err != nil {
			// The record may or may not be on disk: write it through.
			return err
		}
	}
	return nil
}

// writeThroughLocked is the fallback when the journal cannot take a
// record: a pebble Sync write, which makes this and every earlier write
// durable, so the journal can start over empty.
func (s *JournaledStore) writeThroughLocked(op byte, id string, val []byte, appendErr error) error {
	s.logger.Warn("transaction journal append failed; writing through with a pebble sync", "transactional_id", id, "err", appendErr)
	var err error
	if op == txnOpPut {
		err = s.db.Set(key(id), val, pebble.Sync)
	} else {
		err = s.db.Delete(key(id), pebble.Sync)
	}
	if err != nil {
		return fmt.Errorf("write transaction state of %s: %w (journal: %v)", id, err, appendErr)
	}
	if err := s.truncate(); err != nil {
		s.logger.Warn("transaction journal reset failed", "err", err)
	}
	return nil
}

// checkpointLocked makes every earlier pebble write durable (one synced
// WAL write covers all before it) and empties the journal.
func (s *JournaledStore) checkpointLocked() error {
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("checkpoint transaction state: %w", err)
	}
	return s.truncate()
}

func (s *JournaledStore) truncate() error {
	if err := s.f.Truncate(0); err != nil {
		return fmt.Errorf("reset transaction journal: %w", err)
	}
	s.size = 0
	if s.syncEvery {
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("reset transaction journal: %w", err)
		}
	}
	return nil
}

// Size is the journal's length in bytes.
func (s *JournaledStore) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Close checkpoints and closes the journal; later writes fail.
func (s *JournaledStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.checkpointLocked()
	if cerr := s.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close transaction journal: %w", cerr)
	}
	return err
}
