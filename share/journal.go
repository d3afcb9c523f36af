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
// A torn tail (a crash during a write) is cut. A corrupt record in the
// middle is skipped: the CRC of every record lets replay find the next
// one (see Replay), and what was skipped is logged and reported. The state
// value carries its own version byte; the record frame has no version of
// its own because the journal never outlives a clean restart (replay
// empties it), so a format change only needs to read the previous one.

import (
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
	damage   []JournalDamage
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

// JournalDamage is a stretch of the journal that Replay could not read.
type JournalDamage struct {
	Offset int64  // where the unreadable bytes start
	Bytes  int64  // how many were skipped or cut
	Reason string // what was wrong with the record there
	// Tail: nothing readable follows. Torn: a tail that ends inside a
	// record's declared length, which is what a write interrupted by a
	// crash leaves; such a record was never acknowledged.
	Tail, Torn bool
	// Key is the share-partition the damaged record was for, when its key
	// still parses (KeyKnown); Superseded when a later good record of that
	// key was replayed, so no state of it was lost.
	Key        Key
	KeyKnown   bool
	Superseded bool
}

// maxReplayFile bounds the journal Replay reads into memory; checkpoints
// keep it near DefaultCheckpointBytes.
const maxReplayFile = 1 << 30

// Replay calls fn for each good record from the start of the file, in
// order, and returns how many it passed. A record that fails its checksum
// or length check in the middle of the file is skipped: replay resumes at
// the next offset where a whole record verifies (length in bounds, CRC-32C
// and key match), so one bad record costs only itself. Damage with nothing
// readable after it is the tail, and the file is cut there. Every skip and
// cut is logged (a torn final write as a warning, corruption as an error)
// and listed by Damage. An error from fn, or a checksummed record that
// does not decode (ErrCorruptJournal), stops the replay and is returned,
// nothing cut. The State passed to fn is reused between calls.
func (j *Journal) Replay(fn func(Key, *State) error) (int, error) {
	j.damage = j.damage[:0]
	fi, err := j.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("replay share journal %s: %w", j.path, err)
	}
	if fi.Size() > maxReplayFile {
		return 0, fmt.Errorf("replay share journal %s: %d bytes is more than a journal ever holds (%d)", j.path, fi.Size(), maxReplayFile)
	}
	data := make([]byte, fi.Size())
	if _, err := j.f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("replay share journal %s: %w", j.path, err)
	}
	var (
		off      int
		records  int
		st       State
		lastSeen = map[Key]int{} // key -> offset of its last good record
	)
	for off < len(data) {
		n, reason := checkJournalFrame(data, off)
		if reason != "" {
			next := resyncJournal(data, off+1)
			d := JournalDamage{Offset: int64(off), Reason: reason}
			if next < 0 {
				d.Tail, d.Bytes = true, int64(len(data)-off)
				d.Torn = len(data)-off < journalHeader || uint64(n) > uint64(len(data)-off-journalHeader)
			} else {
				d.Bytes = int64(next - off)
			}
			d.Key, d.KeyKnown = guessJournalKey(data[off:off+int(d.Bytes)], n)
			j.damage = append(j.damage, d)
			if next < 0 {
				break
			}
			off = next
			continue
		}
		body := data[off+journalHeader : off+journalHeader+n]
		key, err := decodeJournalBody(body, &st)
		if err != nil {
			return records, fmt.Errorf("replay share journal %s at %d: %w", j.path, off, err)
		}
		if err := fn(key, &st); err != nil {
			return records, err
		}
		lastSeen[key] = off
		records++
		off += journalHeader + n
	}
	for i := range j.damage {
		d := &j.damage[i]
		if at, ok := lastSeen[d.Key]; d.KeyKnown && ok && int64(at) > d.Offset {
			d.Superseded = true
		}
		j.logDamage(d, records)
	}
	end := int64(len(data))
	if n := len(j.damage); n > 0 && j.damage[n-1].Tail {
		end = j.damage[n-1].Offset
		if err := j.f.Truncate(end); err != nil {
			return records, fmt.Errorf("cut share journal %s at %d: %w", j.path, end, err)
		}
	}
	j.size = end
	j.broken = nil
	return records, nil
}

// Damage lists what the last Replay skipped or cut, in file order.
func (j *Journal) Damage() []JournalDamage { return j.damage }

func (j *Journal) logDamage(d *JournalDamage, records int) {
	attrs := []any{"path", j.path, "offset", d.Offset, "bytes", d.Bytes, "reason", d.Reason, "good_records", records}
	if d.KeyKnown {
		attrs = append(attrs, "share_partition", d.Key.String(), "superseded", d.Superseded)
	}
	switch {
	case d.Torn:
		j.logger.Warn("share journal: cutting a torn final write (a crash interrupted it, so it was never acknowledged)", attrs...)
	case d.Tail:
		j.logger.Error("share journal: cutting a corrupt final record: a complete record that fails its check, not a torn write", attrs...)
	default:
		j.logger.Error("share journal: skipping a corrupt record in the middle of the journal; the records after it are replayed", attrs...)
	}
}

// checkJournalFrame checks the record at data[off:]: it returns the body
// length, and why the record is unreadable ("" if it is good).
func checkJournalFrame(data []byte, off int) (int, string) {
	rest := len(data) - off
	if rest < journalHeader {
		return 0, "short record header"
	}
	n := binary.BigEndian.Uint32(data[off:])
	if n == 0 || n > maxJournalRecord {
		return int(n), fmt.Sprintf("bad record length %d", n)
	}
	if uint64(n) > uint64(rest-journalHeader) {
		return int(n), "short record"
	}
	body := data[off+journalHeader : off+journalHeader+int(n)]
	if crc32.Checksum(body, crc32c) != binary.BigEndian.Uint32(data[off+4:]) {
		return int(n), "checksum mismatch"
	}
	return int(n), ""
}

// resyncJournal finds the first offset at or after from where a whole
// record verifies and its key parses, or -1. A false match needs a 1 in
// 2^32 CRC collision and a well-formed key.
func resyncJournal(data []byte, from int) int {
	for off := from; off+journalHeader < len(data); off++ {
		n, reason := checkJournalFrame(data, off)
		if reason != "" {
			continue
		}
		body := data[off+journalHeader : off+journalHeader+n]
		if kl, m := binary.Uvarint(body); m > 0 && kl <= uint64(len(body)-m) {
			if _, err := ParseKey(body[m : m+int(kl)]); err == nil {
				return off
			}
		}
	}
	return -1
}

// guessJournalKey reads the key of a damaged record if it still parses:
// corruption in the state leaves the key readable.
func guessJournalKey(rec []byte, n int) (Key, bool) {
	if len(rec) <= journalHeader {
		return Key{}, false
	}
	body := rec[journalHeader:]
	if n > 0 && n < len(body) {
		body = body[:n]
	}
	kl, m := binary.Uvarint(body)
	if m <= 0 || kl > uint64(len(body)-m) {
		return Key{}, false
	}
	k, err := ParseKey(body[m : m+int(kl)])
	return k, err == nil
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
