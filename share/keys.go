package share

import (
	"errors"
	"fmt"
	"hash/maphash"

	"sharq/log/recordbatch"
)

// Key-ordered delivery (sharq.share.key.ordered.enable). No two records
// with the same key are in flight (Acquired) in a share-partition at once,
// and the records of one key are delivered in offset order, across
// releases, lock expiries and redelivery backoffs: a record may be acquired
// only while it is the first non-terminal record of its key. Records with a
// null key (and offsets with no record) are unordered. Archiving records
// (waiting for their dead-letter write) are done as far as order goes.
//
// Keys come from the batch bytes an acquisition reads anyway
// (KeySource.Keys: the v2 records, decompressed when the batch is), hashed
// to 64 bits (a collision only orders two keys together), and are kept per
// offset for the window (keyWindow), in memory only. An offset whose key
// was never read (after a restart, or when the mode is switched on) blocks
// the acquisition from there on until a read covers it: its key may be one
// that later records share. Records acquired before the mode was on count
// as unordered. The unordered path never parses keys.

// KeySource is a BatchSource that can report record keys.
type KeySource interface {
	// Keys appends to dst the key hash of each offset of h (a batch Batch
	// just returned), h.BaseOffset..h.LastOffset in order: 0 for a null
	// key or an offset with no record. An error leaves dst as it was.
	Keys(h BatchHeader, dst []uint64) ([]uint64, error)
}

// keyUnknown marks an offset whose key was not read.
const keyUnknown = ^uint64(0)

var keySeed = maphash.MakeSeed()

// HashKey is the key hash key-ordered delivery compares: 0 for a null key.
func HashKey(key []byte, null bool) uint64 {
	if null {
		return 0
	}
	h := maphash.Bytes(keySeed, key)
	if h == 0 || h == keyUnknown {
		h = 1
	}
	return h
}

// keyWindow holds the record key of each offset from base on.
type keyWindow struct {
	base int64
	vals []uint64
}

func (w *keyWindow) reset() { w.base, w.vals = 0, w.vals[:0] }

func (w *keyWindow) get(off int64) uint64 {
	if off < w.base || off >= w.base+int64(len(w.vals)) {
		return keyUnknown
	}
	return w.vals[off-w.base]
}

// set records the keys of first, first+1, ...
func (w *keyWindow) set(first int64, keys []uint64) {
	if len(keys) == 0 {
		return
	}
	if len(w.vals) == 0 {
		w.base = first
	}
	if first < w.base {
		// Below the window's start: only the part at or after it matters.
		if d := w.base - first; d < int64(len(keys)) {
			keys, first = keys[d:], w.base
		} else {
			return
		}
	}
	end := first + int64(len(keys))
	for w.base+int64(len(w.vals)) < end {
		w.vals = append(w.vals, keyUnknown)
	}
	copy(w.vals[first-w.base:], keys)
}

// trim forgets offsets below from, compacting when most of the slice is
// behind it.
func (w *keyWindow) trim(from int64) {
	if from <= w.base {
		return
	}
	d := from - w.base
	if d >= int64(len(w.vals)) {
		w.base, w.vals = from, w.vals[:0]
		return
	}
	n := copy(w.vals, w.vals[d:])
	w.vals = w.vals[:n]
	w.base = from
}

// keyScratch is the per-share-partition memory of a key-ordered scan.
type keyScratch struct {
	blocked map[uint64]struct{}
	runs    []keyRun
	holes   []keyRun // offsets with no record left: archived
	keys    []uint64
}

type keyRun struct {
	first, last int64
	count       int16 // delivery count before the acquisition
}

func (s *keyScratch) reset() {
	if s.blocked == nil {
		s.blocked = map[uint64]struct{}{}
	}
	clear(s.blocked)
	s.runs, s.holes = s.runs[:0], s.holes[:0]
}

// learn reads the key of off (and of its whole batch) from src when it is
// not known yet. Offsets the source has no batch for stay unknown; a
// compaction hole before the batch has no record (key 0).
func (p *SharePartition) learn(off int64, src BatchSource, ks KeySource) uint64 {
	if k := p.keys.get(off); k != keyUnknown || ks == nil {
		if ks == nil && k == keyUnknown {
			return 0 // a source without keys: everything unordered
		}
		return k
	}
	h, ok := src.Batch(off)
	if !ok {
		return keyUnknown
	}
	if h.BaseOffset > off {
		p.ks.keys = p.ks.keys[:0]
		for o := off; o < h.BaseOffset; o++ {
			p.ks.keys = append(p.ks.keys, 0)
		}
		p.keys.set(off, p.ks.keys)
		return 0
	}
	p.learnBatch(h, ks)
	return p.keys.get(off)
}

// learnBatch stores the keys of batch h; a batch whose records cannot be
// decoded counts as unordered (its records are delivered, and a client
// fails on them as it would anywhere).
func (p *SharePartition) learnBatch(h BatchHeader, ks KeySource) {
	keys, err := ks.Keys(h, p.ks.keys[:0])
	if err != nil || int64(len(keys)) != h.LastOffset-h.BaseOffset+1 {
		keys = keys[:0]
		for o := h.BaseOffset; o <= h.LastOffset; o++ {
			keys = append(keys, 0)
		}
	}
	p.ks.keys = keys
	p.keys.set(h.BaseOffset, keys)
}

// heldKeys puts the keys of every Acquired record into blocked.
func (p *SharePartition) heldKeys(blocked map[uint64]struct{}) {
	last := keyUnknown
	for k := range p.ranges {
		r := &p.ranges[k]
		if r.state != Acquired {
			continue
		}
		for o := r.first; o <= r.last; o++ {
			if key := p.keys.get(o); key != 0 && key != keyUnknown && key != last {
				blocked[key] = struct{}{}
				last = key
			}
		}
	}
}

// keyedFetchOffset is FetchOffset with key-ordered delivery: the first
// Available offset whose key is unknown, or that could be acquired now.
func (p *SharePartition) keyedFetchOffset(now, off int64) int64 {
	if off > p.speo {
		return off
	}
	p.ks.reset()
	blocked := p.ks.blocked
	p.heldKeys(blocked)
	for k := p.search(p.spso); k < len(p.ranges); k++ {
		r := &p.ranges[k]
		if r.state != Available || r.last < p.spso {
			continue
		}
		for o := max(r.first, p.spso); o <= r.last; o++ {
			key := p.keys.get(o)
			if key == keyUnknown {
				return o
			}
			if key == 0 {
				if r.deadline <= now {
					return o
				}
				continue
			}
			if _, held := blocked[key]; !held && r.deadline <= now {
				return o
			}
			blocked[key] = struct{}{}
		}
	}
	return p.speo + 1
}

// acquireKeyed is Acquire's work with key-ordered delivery (phase 1 and 2
// of the unordered path, record by record).
func (p *SharePartition) acquireKeyed(member string, now, deadline, remaining, batchSize, end int64, src BatchSource, res *AcquireResult, eff *Effects) {
	ks, _ := src.(KeySource)
	if len(p.ranges) > 0 {
		// Acquired ranges stranded below SPSO by a log-start jump keep
		// their keys held.
		p.keys.trim(min(p.spso, p.ranges[0].first))
	} else {
		p.keys.trim(p.spso)
	}
	p.ks.reset()
	blocked := p.ks.blocked
	p.heldKeys(blocked)
	stop := false

	// Phase 1: Available offsets inside the window, in order.
	throttle := p.throttleLimit()
	bh := BatchHeader{BaseOffset: 1, LastOffset: 0} // the batch of the last offset checked
	for k := p.search(p.spso); k < len(p.ranges) && !stop; k++ {
		r := &p.ranges[k]
		if r.state != Available || r.last < p.spso {
			continue
		}
		runFirst := int64(-1)
		flush := func(last int64) {
			if runFirst >= 0 {
				p.ks.runs = append(p.ks.runs, keyRun{first: runFirst, last: last, count: r.count})
				runFirst = -1
			}
		}
		for o := max(r.first, p.spso); o <= r.last; o++ {
			key := p.learn(o, src, ks)
			if key == keyUnknown {
				// Its key may be one that later records share.
				flush(o - 1)
				stop = true
				break
			}
			free := key == 0
			if !free {
				_, held := blocked[key]
				free = !held
				blocked[key] = struct{}{}
			}
			ok := free && remaining > 0 && r.deadline <= now && o < end
			if ok && (o < bh.BaseOffset || o > bh.LastOffset) {
				// Only offsets the read holds are acquired now; the rest
				// waits. Offsets whose records vanished (compaction) are
				// archived, as the unordered path does, so SPSO can pass.
				var has bool
				if bh, has = src.Batch(o); !has {
					bh = BatchHeader{BaseOffset: 1, LastOffset: 0}
					ok = false
				} else if bh.BaseOffset > o {
					gone := min(r.last, bh.BaseOffset-1)
					p.ks.holes = append(p.ks.holes, keyRun{first: o, last: gone})
					flush(o - 1)
					o = gone
					bh = BatchHeader{BaseOffset: 1, LastOffset: 0}
					continue
				}
			}
			if !ok {
				flush(o - 1)
				continue
			}
			if runFirst < 0 {
				runFirst = o
			}
			remaining--
			if remaining == 0 {
				// Taken enough: the rest of the window need not be scanned.
				flush(o)
				stop = true
				break
			}
			if r.count >= throttle {
				// Throttled redelivery: a record past the throttle goes alone.
				flush(o)
				stop = true
				break
			}
		}
		flush(r.last)
	}
	for _, h := range p.ks.holes {
		p.transition(h.first, h.last, Archived, 0, "", 0)
		eff.Persist = true
	}
	for _, run := range p.ks.runs {
		p.transition(run.first, run.last, Acquired, run.count+1, member, deadline)
		res.add(run.first, run.last, run.count+1, batchSize)
		p.stats.acquired(run.last-run.first+1, run.count+1)
		p.noteDeadline(deadline)
	}
	if stop || remaining <= 0 {
		return
	}

	// Phase 2: new batches past SPEO, while the window has room.
	room := int64(p.cfg.MaxRecordLocks) - (p.speo - p.spso + 1)
	off := p.speo + 1
	for room > 0 && remaining > 0 && off < end {
		h, ok := src.Batch(off)
		if !ok || h.BaseOffset >= end || h.LastOffset >= end {
			break
		}
		if h.BaseOffset > off {
			// No records there (compaction): nothing to deliver.
			p.appendSpan(span{first: off, last: h.BaseOffset - 1, state: Archived})
			eff.Persist = true
		}
		first := max(h.BaseOffset, off)
		off = h.LastOffset + 1
		if p.cfg.ReadCommitted && h.Aborted {
			p.appendSpan(span{first: first, last: h.LastOffset, state: Archived})
			eff.Persist = true
			continue
		}
		if ks != nil {
			p.learnBatch(h, ks)
		}
		room -= h.LastOffset - first + 1
		runFirst, runTaken := first, false
		emit := func(last int64) {
			if last < runFirst {
				return
			}
			if runTaken {
				p.appendSpan(span{first: runFirst, last: last, state: Acquired, count: 1, owner: member, deadline: deadline})
				res.add(runFirst, last, 1, batchSize)
				p.stats.acquired(last-runFirst+1, 1)
				p.noteDeadline(deadline)
			} else {
				p.appendSpan(span{first: runFirst, last: last, state: Available})
			}
			runFirst = last + 1
		}
		for o := first; o <= h.LastOffset; o++ {
			key := uint64(0)
			if ks != nil {
				key = p.keys.get(o)
			}
			take := remaining > 0
			if key != 0 && key != keyUnknown {
				if _, held := blocked[key]; held {
					take = false
				}
				blocked[key] = struct{}{}
			}
			if take != runTaken {
				emit(o - 1)
				runTaken = take
			}
			if take {
				remaining--
			}
		}
		emit(h.LastOffset)
	}
}

// keyHeldViews splits the Available ranges of views (a copy of the window
// in offset order) into runs that can be acquired now and runs whose keys
// are held or wait behind earlier records (KeyHeld), for /ui.
func (p *SharePartition) keyHeldViews(views []InFlightRange) []InFlightRange {
	p.ks.reset()
	blocked := p.ks.blocked
	p.heldKeys(blocked)
	out := make([]InFlightRange, 0, len(views))
	for _, v := range views {
		if v.State != Available {
			out = append(out, v)
			continue
		}
		cur := v
		cur.LastOffset = v.FirstOffset - 1
		for o := v.FirstOffset; o <= v.LastOffset; o++ {
			key := p.keys.get(o)
			held := key == keyUnknown
			if key != 0 && key != keyUnknown {
				_, held = blocked[key]
				blocked[key] = struct{}{}
			}
			if o > cur.FirstOffset && held != cur.KeyHeld {
				out = append(out, cur)
				cur.FirstOffset = o
			}
			cur.KeyHeld, cur.LastOffset = held, o
		}
		out = append(out, cur)
	}
	return out
}

// Record keys from v2 batch bytes.

// maxInflate bounds one batch's decompressed records when keys are read.
const maxInflate = 128 << 20

// maxBatchOffsets bounds the offsets one batch may span when its keys are
// read (8 MiB of key hashes); a larger batch is delivered unordered, as
// one whose records do not decode is (learnBatch).
const maxBatchOffsets = 1 << 20

// Decompressor appends the decompressed records section of a batch
// (codec: the attributes' compression bits) to dst, at most limit bytes
// (sharq/log's Decompress).
type Decompressor func(dst []byte, codec int, p []byte, limit int) ([]byte, error)

var errNoDecompressor = errors.New("share: compressed batch and no decompressor")

// Keys implements KeySource over the raw batches of the read.
func (r *RawBatches) Keys(h BatchHeader, dst []uint64) ([]uint64, error) {
	b, ok := r.batchBytes(h.BaseOffset)
	if !ok {
		return dst, fmt.Errorf("share: batch %d not in the read", h.BaseOffset)
	}
	out, dbuf, err := AppendRecordKeys(dst, b, r.Decompress, r.dbuf[:0])
	r.dbuf = dbuf
	if cap(r.dbuf) > 8<<20 {
		// Kept per connection: do not hold on to an unusually big batch.
		r.dbuf = nil
	}
	return out, err
}

// batchBytes finds the batch starting at base in Data: at the cursor
// (where Batch left it) or by a walk from the start.
func (r *RawBatches) batchBytes(base int64) ([]byte, bool) {
	if h, size, ok := ParseBatchHeader(r.Data[r.pos:]); ok && h.BaseOffset == base {
		return r.Data[r.pos : r.pos+size], true
	}
	for pos := 0; ; {
		h, size, ok := ParseBatchHeader(r.Data[pos:])
		if !ok || h.BaseOffset > base {
			return nil, false
		}
		if h.BaseOffset == base {
			return r.Data[pos : pos+size], true
		}
		pos += size
	}
}

// AppendRecordKeys appends to dst the key hash (HashKey) of each offset of
// the v2 batch b, BaseOffset..LastOffset: 0 for null keys, control records
// and offsets with no record. dbuf is scratch for decompression (returned
// for reuse). Decoding is bounded by the input; a malformed batch is an
// error and dst is returned as it was.
func AppendRecordKeys(dst []uint64, b []byte, dec Decompressor, dbuf []byte) ([]uint64, []byte, error) {
	rh, ok := recordbatch.Next(b)
	if !ok || int(rh.Size) > len(b) || rh.LastOffsetDelta < 0 {
		return dst, dbuf, errors.New("share: malformed batch")
	}
	if rh.LastOffsetDelta >= maxBatchOffsets {
		// One key per offset: a damaged header must not cost gigabytes.
		return dst, dbuf, fmt.Errorf("share: batch %d spans %d offsets, more than the %d keys are read for", rh.BaseOffset, int64(rh.LastOffsetDelta)+1, maxBatchOffsets)
	}
	n := int64(rh.LastOffsetDelta) + 1
	start := len(dst)
	for i := int64(0); i < n; i++ {
		dst = append(dst, 0)
	}
	if rh.Control() {
		return dst, dbuf, nil
	}
	body := b[recordbatch.HeaderSize:rh.Size]
	if c := rh.Compression(); c != 0 {
		if dec == nil {
			return dst[:start], dbuf, errNoDecompressor
		}
		var err error
		dbuf, err = dec(dbuf[:0], c, body, maxInflate)
		if err != nil {
			return dst[:start], dbuf, fmt.Errorf("decompress batch %d: %w", rh.BaseOffset, err)
		}
		body = dbuf
	}
	rd := recordbatch.NewReader(body, rh.RecordCount)
	var r recordbatch.Record
	for rd.Next(&r) {
		if r.OffsetDelta < 0 || int64(r.OffsetDelta) >= n {
			return dst[:start], dbuf, fmt.Errorf("record of batch %d: offset delta %d outside the batch", rh.BaseOffset, r.OffsetDelta)
		}
		dst[start+int(r.OffsetDelta)] = HashKey(r.Key, r.Key == nil)
	}
	if err := rd.Err(); err != nil {
		return dst[:start], dbuf, fmt.Errorf("batch %d: %w", rh.BaseOffset, err)
	}
	return dst, dbuf, nil
}

// Keys implements KeySource for tests: KeyOf gives offsets their keys
// (absent: null).
func (m *MemSource) Keys(h BatchHeader, dst []uint64) ([]uint64, error) {
	for o := h.BaseOffset; o <= h.LastOffset; o++ {
		k, ok := m.KeyOf[o]
		dst = append(dst, HashKey([]byte(k), !ok))
	}
	return dst, nil
}
