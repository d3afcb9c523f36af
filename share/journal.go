package share

// Share-state write-ahead journal.
//
// Why: a durable share write (an acknowledgement's answer waits for it)
// must survive a process crash (kill -9), as Kafka's share state does: its
// share-group state topic sits in the OS page cache, fsynced only when the
// operator asks. Pebble's NoSync writes do not give that (pebble buffers
// WAL records in user space and writes them from a goroutine), and a
// pebble Sync write costs an fsync per round trip. So a durable write is
// first appended here with one write(2), which the kernel keeps through a
// process crash, then written to pebble without sync. A checkpoint (pebble
// Sync, then Reset) empties the journal; a restart replays it into pebble.
//
// FORMAT: one append-only file of records, no file header:
//
//	uint32  length of the rest of the record (big-endian), 1..maxJournalRecord
//	uint32  CRC-32C (Castagnoli) of the rest of the record (big-endian)
//	uvarint length of the key
//	bytes   the key, as AppendKey writes it
//	bytes   the state, as EncodeState writes it
//
// A torn tail (a crash during a write) or a corrupt record ends the replay:
// the file is cut at the last good record and the cut is logged. The state
// value carries its own version byte; the record frame has no version of
// its own because the journal never outlives a clean restart (replay
// empties it), so a format change only needs to read the previous one.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
)

// ErrCorruptJournal reports a journal record whose checksum matches but
// whose key or state cannot be decoded: not a torn write but a bug or a
// foreign file. Replay stops without cutting anything so no data is lost.
var ErrCorruptJournal = errors.New("share: corrupt journal record")

const (
	journalHeader = 8
	// maxJournalRecord bounds a record so a corrupt length cannot make
	// replay allocate gigabytes. A share-partition's state is bounded by
	// its in-flight window (a few KiB in practice).
	maxJournalRecord = 64 << 20
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// JournalOptions configures OpenJournal.
type JournalOptions struct {
	// SyncEveryWrite fsyncs the file after each Append (an operator who
	// sets log.flush.interval.messages=1 asks for power-loss durability).
	SyncEveryWrite bool
	// Logger receives replay cuts; nil discards.
	Logger *slog.Logger
}

// Journal is an append-only file of share-state records. It is not safe
// for concurrent use (JournaledPersister serialises every call), except
// Sync and Appended.
type Journal struct {
	f      *os.File
	path   string
	sync   bool
	logger *slog.Logger
	size   int64 // bytes of whole records in the file
	// appended counts every byte ever appended (never reset), so a
	// group-committing caller can tell whether an fsync covers a record.
	appended atomic.Int64
	buf      []byte // reused record buffer
	key      []byte // reused key buffer
	val      []byte // reused state buffer
	broken   error  // set when a failed append could not be undone
}

// OpenJournal opens (creating if needed) the journal at path. Call Replay
// before the first Append: it finds the end of the good records.
func OpenJournal(path string, opts JournalOptions) (*Journal, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open share journal %s: %w", path, err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	j := &Journal{f: f, path: path, sync: opts.SyncEveryWrite, logger: logger}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat share journal %s: %w", path, err)
	}
	j.size = fi.Size()
	if errors.Is(statErr, os.ErrNotExist) && j.sync {
		// The new file's directory entry must survive power loss too.
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, err
		}
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

// Size returns the bytes of whole records in the journal.
func (j *Journal) Size() int64 { return j.size }

// Append writes one record with a single write(2); with SyncEveryWrite it
// also fsyncs. Once it returns nil the record survives a process crash.
func (j *Journal) Append(key Key, st *State) error {
	var err error
	if j.key, err = AppendKey(j.key[:0], key); err != nil {
		return err
	}
	j.val = EncodeState(j.val[:0], st)
	return j.appendEncoded(key, j.key, j.val)
}

// appendEncoded appends a record of an already encoded key (AppendKey) and
// state (EncodeState): JournaledPersister encodes both once for the journal
// and pebble.
func (j *Journal) appendEncoded(key Key, encKey, encState []byte) error {
	if j.broken != nil {
		return j.broken
	}
	b := append(j.buf[:0], make([]byte, journalHeader)...) // length and crc, filled below
	b = binary.AppendUvarint(b, uint64(len(encKey)))
	b = append(b, encKey...)
	b = append(b, encState...)
	j.buf = b
	body := len(b) - journalHeader
	if body > maxJournalRecord {
		return fmt.Errorf("append share journal %s: record of %d bytes for %s exceeds %d", j.path, body, key, maxJournalRecord)
	}
	binary.BigEndian.PutUint32(b[0:], uint32(body))
	binary.BigEndian.PutUint32(b[4:], crc32.Checksum(b[journalHeader:], crc32c))
	if _, err := j.f.Write(b); err != nil {
		// A partial record would hide every later one from Replay: cut it.
		if terr := j.f.Truncate(j.size); terr != nil {
			j.broken = fmt.Errorf("share journal %s unusable after failed append (%v): truncate: %w", j.path, err, terr)
		}
		return fmt.Errorf("append share journal %s: %w", j.path, err)
	}
	j.size += int64(len(b))
	j.appended.Add(int64(len(b)))
	if j.sync {
		if err := j.f.Sync(); err != nil {
			// The record is in the file; a later checkpoint or a
			// successful sync still covers it.
			return fmt.Errorf("sync share journal %s: %w", j.path, err)
		}
	}
	return nil
}

// Replay calls fn for each good record from the start of the file, in
// order, and returns how many it passed. A torn or corrupt record ends the
// replay: the file is cut there (logged as a warning) and Replay returns
// nil. An error from fn, or a checksummed record that does not decode
// (ErrCorruptJournal), stops the replay and is returned, nothing cut.
// The State passed to fn is reused between calls.
func (j *Journal) Replay(fn func(Key, *State) error) (int, error) {
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("replay share journal %s: %w", j.path, err)
	}
	fi, err := j.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("replay share journal %s: %w", j.path, err)
	}
	fileSize := fi.Size()
	r := bufio.NewReaderSize(j.f, 64<<10)
	var (
		off     int64
		records int
		hdr     [journalHeader]byte
		body    []byte
		st      State
		reason  string
	)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				reason = "short record header"
				break
			}
			return records, fmt.Errorf("replay share journal %s at %d: %w", j.path, off, err)
		}
		n := binary.BigEndian.Uint32(hdr[0:])
		if n == 0 || n > maxJournalRecord || int64(n) > fileSize-off-journalHeader {
			reason = fmt.Sprintf("bad record length %d", n)
			break
		}
		if cap(body) < int(n) {
			body = make([]byte, n)
		}
		body = body[:n]
		if _, err := io.ReadFull(r, body); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				reason = "short record"
				break
			}
			return records, fmt.Errorf("replay share journal %s at %d: %w", j.path, off, err)
		}
		if crc32.Checksum(body, crc32c) != binary.BigEndian.Uint32(hdr[4:]) {
			reason = "checksum mismatch"
			break
		}
		key, err := decodeJournalBody(body, &st)
		if err != nil {
			return records, fmt.Errorf("replay share journal %s at %d: %w", j.path, off, err)
		}
		if err := fn(key, &st); err != nil {
			return records, err
		}
		records++
		off += journalHeader + int64(n)
	}
	if off < fileSize {
		j.logger.Warn("share journal: cutting torn or corrupt tail", "path", j.path, "offset", off,
			"dropped_bytes", fileSize-off, "reason", reason, "good_records", records)
		if err := j.f.Truncate(off); err != nil {
			return records, fmt.Errorf("cut share journal %s at %d: %w", j.path, off, err)
		}
	}
	j.size = off
	j.broken = nil
	return records, nil
}

// decodeJournalBody splits a checksummed record body into key and state.
func decodeJournalBody(body []byte, st *State) (Key, error) {
	kl, n := binary.Uvarint(body)
	if n <= 0 || kl > uint64(len(body)-n) {
		return Key{}, fmt.Errorf("%w: bad key length", ErrCorruptJournal)
	}
	key, err := ParseKey(body[n : n+int(kl)])
	if err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrCorruptJournal, err)
	}
	if err := DecodeState(body[n+int(kl):], st); err != nil {
		return Key{}, fmt.Errorf("%w: %w", ErrCorruptJournal, err)
	}
	return key, nil
}

// Appended returns the bytes appended since open, never reset. After
// Sync starts, every record that ended at or before the value read before
// it is on disk once Sync returns.
func (j *Journal) Appended() int64 { return j.appended.Load() }

// Sync fsyncs the file. Unlike the other methods it may run concurrently
// with them (a caller group-commits outside its lock).
func (j *Journal) Sync() error {
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync share journal %s: %w", j.path, err)
	}
	return nil
}

// Reset empties the journal after a checkpoint made its records durable
// elsewhere. The truncation is fsynced: a stale record replayed after a
// power loss could otherwise undo a later Delete.
func (j *Journal) Reset() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("reset share journal %s: %w", j.path, err)
	}
	j.size = 0
	j.broken = nil
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("reset share journal %s: %w", j.path, err)
	}
	return nil
}

// Close closes the file. It does not checkpoint: records left in the
// journal are replayed by the next open.
func (j *Journal) Close() error {
	if err := j.f.Close(); err != nil {
		return fmt.Errorf("close share journal %s: %w", j.path, err)
	}
	return nil
}
