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
// write(2), then pebble without sync. Staged consumer offsets (group/) go
// through the same journal, so the two stay in the order they were made.
//
// Before the shared journal, this package kept its own (txn.journal in the
// state directory). ReplayLegacyJournal applies one left by a crash of an
// earlier sharq and removes it. Its FORMAT, one append-only file of
// records, no file header:
//
//	uint32  length of the rest of the record (big-endian), 2..maxTxnRecord
//	uint32  CRC-32C (Castagnoli) of the rest of the record (big-endian)
//	byte    1 = put, 2 = delete
//	uvarint length of the transactional id
//	bytes   the transactional id
//	bytes   put: the state as EncodeMetadata writes it (versioned itself)
//
// A record that does not check out ends the replay: a torn tail is cut
// silently, anything after it is logged as damage and the damaged file is
// kept beside it for inspection.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"

	"github.com/cockroachdb/pebble"

	"sharq/log/statejournal"
)

const (
	txnRecordHeader = 8
	txnOpPut        = 1
	txnOpDelete     = 2
	// maxTxnRecord bounds a record so a corrupt length cannot make replay
	// allocate gigabytes; a state holds at most a few thousand partitions.
	maxTxnRecord = 16 << 20
)

var txnCRC = crc32.MakeTable(crc32.Castagnoli)

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

// ReplayLegacyJournal applies the transaction journal an earlier sharq
// kept at path (see the file comment) to db in one synced batch, then
// removes it. A missing or empty file is nothing to do.
func ReplayLegacyJournal(db *pebble.DB, path string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read transaction journal %s: %w", path, err)
	}
	if len(data) > 0 {
		if err := replayLegacy(db, path, data, logger); err != nil {
			return err
		}
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove transaction journal %s: %w", path, err)
	}
	return nil
}

func replayLegacy(db *pebble.DB, path string, data []byte, logger *slog.Logger) error {
	b := db.NewBatch()
	defer b.Close()
	off, n := 0, 0
	for off < len(data) {
		op, id, val, size, ok := decodeTxnRecord(data[off:])
		if !ok {
			break
		}
		if op == txnOpPut {
			if _, err := DecodeMetadata(val); err != nil {
				break
			}
			if err := b.Set(key(id), val, nil); err != nil {
				return fmt.Errorf("replay transaction journal %s: %w", path, err)
			}
		} else if err := b.Delete(key(id), nil); err != nil {
			return fmt.Errorf("replay transaction journal %s: %w", path, err)
		}
		off += size
		n++
	}
	if off < len(data) && !tornTail(data[off:]) {
		// Not a write cut short by a crash: keep the file for inspection.
		// The states after the damage are lost; their transactions time out.
		damaged := path + ".damaged"
		logger.Error("transaction journal damaged; states after the damage are lost and kept in the damaged file",
			"path", path, "offset", off, "records_replayed", n, "damaged_copy", damaged)
		if err := os.WriteFile(damaged, data, 0o644); err != nil {
			return fmt.Errorf("keep damaged transaction journal: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("replay transaction journal %s: %w", path, err)
	}
	logger.Info("transaction journal of an earlier sharq replayed", "path", path, "records", n)
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
