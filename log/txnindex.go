package log

// The aborted-transaction index, Kafka's <base>.txnindex: one 34-byte entry
// per aborted transaction whose ABORT marker is in the segment, in marker
// order:
//
//	version i16 (0) | producerId i64 | firstOffset i64 | lastOffset i64 |
//	lastStableOffset i64
//
// lastOffset is the marker's offset, lastStableOffset the partition's last
// stable offset once the transaction completed. Entries are appended and
// fsynced when an ABORT marker is written (aborts are rare). Recovery
// rebuilds the entries of the batches it replays from the log; retention
// deletes the file with its segment. Every entry of the partition is also
// kept in memory (Log.txn.aborted), so read_committed fetches never touch
// the files: memory grows with the number of aborted transactions still in
// the log, 56 bytes each.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
)

const (
	txnIndexSuffix = ".txnindex"
	txnIndexEntry  = 34
)

type abortedTxn struct {
	producerID int64
	first      int64
	last       int64
	lso        int64
	segment    int64 // base offset of the segment whose index holds it
}

var errBadTxnIndex = errors.New("bad transaction index")

func (a *abortedTxn) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(a.producerID))
	b = binary.BigEndian.AppendUint64(b, uint64(a.first))
	b = binary.BigEndian.AppendUint64(b, uint64(a.last))
	return binary.BigEndian.AppendUint64(b, uint64(a.lso))
}

// decodeTxnIndex parses a .txnindex file of the segment at base. A torn
// tail (a partial entry) is dropped; anything else wrong is an error.
func decodeTxnIndex(b []byte, base int64) ([]abortedTxn, error) {
	var out []abortedTxn
	for len(b) >= txnIndexEntry {
		if v := int16(binary.BigEndian.Uint16(b)); v != 0 {
			return out, fmt.Errorf("%w: entry version %d", errBadTxnIndex, v)
		}
		a := abortedTxn{
			producerID: int64(binary.BigEndian.Uint64(b[2:])),
			first:      int64(binary.BigEndian.Uint64(b[10:])),
			last:       int64(binary.BigEndian.Uint64(b[18:])),
			lso:        int64(binary.BigEndian.Uint64(b[26:])),
			segment:    base,
		}
		if a.last < base || a.first > a.last || (len(out) > 0 && a.last <= out[len(out)-1].last) {
			return out, fmt.Errorf("%w: entry %+v out of order", errBadTxnIndex, a)
		}
		out = append(out, a)
		b = b[txnIndexEntry:]
	}
	return out, nil
}

// persistAborted appends an entry to its segment's .txnindex file,
// fsynced; applyTxnLocked adds it to the in-memory index when its marker is
// published. Called with appendMu held.
func (l *Log) persistAborted(a *abortedTxn) error {
	name := l.filePath(segmentName(a.segment, txnIndexSuffix))
	f, err := l.fs.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return l.fail("open "+name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return l.fail("stat "+name, err)
	}
	size -= size % txnIndexEntry // a torn tail from a crash is overwritten
	if _, err := f.WriteAt(a.appendTo(make([]byte, 0, txnIndexEntry)), size); err != nil {
		return l.fail("write "+name, err)
	}
	if err := f.Truncate(size + txnIndexEntry); err != nil {
		return l.fail("truncate "+name, err)
	}
	if err := f.Sync(); err != nil {
		return l.fail("sync "+name, err)
	}
	if size == 0 {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.fail("sync "+l.dir, err)
		}
	}
	return nil
}

// AbortedTransactions appends to dst the aborted transactions a
// read_committed consumer needs for the data in [from, upTo): those whose
// marker is at or after from and whose data starts before upTo (Kafka's
// collectAbortedTransactions).
func (l *Log) AbortedTransactions(from, upTo int64, dst []AbortedTxn) []AbortedTxn {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ab := l.txn.aborted
	i := sort.Search(len(ab), func(i int) bool { return ab[i].last >= from })
	for ; i < len(ab); i++ {
		a := &ab[i]
		if a.first < upTo {
			dst = append(dst, AbortedTxn{ProducerID: a.producerID, FirstOffset: a.first})
		}
		if a.lso >= upTo {
			break
		}
	}
	return dst
}

// dropAbortedBelowLocked forgets the entries of deleted segments (those
// below the first remaining segment). Called with mu held.
func (l *Log) dropAbortedBelowLocked(firstBase int64) {
	ab := l.txn.aborted
	i := sort.Search(len(ab), func(i int) bool { return ab[i].segment >= firstBase })
	if i > 0 {
		l.txn.aborted = append(ab[:0:0], ab[i:]...)
	}
}

// resetTxnState rebuilds the transaction view after the producer state was
// rebuilt from a snapshot at from plus a replay of the log after it (open,
// truncation): the index entries below from come from the .txnindex files,
// those at or after it from the replay (replayed), and files that disagree
// are rewritten. Called with appendMu held (or before the log is shared).
func (l *Log) resetTxnState(from int64, replayed []abortedTxn) error {
	names, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("%w: list %s: %w", ErrStorage, l.dir, err)
	}
	segs := l.mu.segs
	bases := make(map[int64]bool, len(segs))
	for _, s := range segs {
		bases[s.base] = true
	}
	var all []abortedTxn
	rewrite := map[int64]bool{}
	for _, n := range names {
		b, ok := parseSegmentName(n, txnIndexSuffix)
		if !ok {
			continue
		}
		if !bases[b] {
			l.removeFile(n) // orphan of a deleted segment
			continue
		}
		data, err := l.readSmallFile(n)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrStorage, err)
		}
		entries, derr := decodeTxnIndex(data, b)
		if derr != nil {
			l.logger.Warn("transaction index damaged; keeping the entries before the damage", "file", l.filePath(n), "err", derr)
			rewrite[b] = true
		}
		if len(data)%txnIndexEntry != 0 {
			rewrite[b] = true
		}
		for _, e := range entries {
			if e.last >= from {
				rewrite[b] = true
				continue
			}
			all = append(all, e)
		}
	}
	for _, e := range replayed {
		rewrite[e.segment] = true
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].last < all[j].last })
	for b := range rewrite {
		var buf []byte
		for i := range all {
			if all[i].segment == b {
				buf = all[i].appendTo(buf)
			}
		}
		if err := l.writeFileAtomic(segmentName(b, txnIndexSuffix), buf); err != nil {
			return err
		}
	}
	ongoing := map[int64]int64{}
	for id, e := range l.producers.m {
		if e.txnFirst >= 0 {
			ongoing[id] = e.txnFirst
		}
	}
	l.mu.Lock()
	l.txn.aborted = all
	l.txn.ongoing = ongoing
	l.txn.recompute()
	l.mu.Unlock()
	return nil
}
