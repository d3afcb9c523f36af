package log

// The log cleaner: compaction for cleanup.policy=compact, as Apache Kafka's
// LogCleaner does it.
//
// One pass over a log:
//
//  1. Plan (cleanplan.go): the dirty section starts at the cleaner checkpoint (where the
//     last pass ended, or the log start) and ends at the first uncleanable
//     offset: the active segment's base, the first unstable offset (an open
//     transaction) and the first segment holding a record younger than
//     min.compaction.lag.ms.
//     The log is cleaned when dirty bytes / (clean + dirty bytes) exceeds
//     min.cleanable.dirty.ratio, when its oldest dirty record is older
//     than max.compaction.lag.ms, or when a delete horizon it set earlier
//     has passed.
//  2. Map: the keys of the dirty section go into an offset map (key ->
//     latest offset) bounded by log.cleaner.dedupe.buffer.size; if it
//     fills, the pass ends where it filled (mapEnd).
//  3. Copy: every sealed segment from the log start up to mapEnd is copied,
//     in groups of at most segment.bytes, keeping a record only if no later
//     record has its key. Records at or after mapEnd, and those of
//     segments past it, are not touched. Aborted transactional records go;
//     records without a key go (Kafka counts them invalid). A batch whose
//     records all stay is copied byte for byte; one that loses some is
//     written again with the same base offset, last offset delta, producer
//     id, epoch, base sequence, leader epoch and codec (offsets keep their
//     holes), and a new record count, max timestamp and CRC. A batch that
//     loses all records goes, unless it is its producer's last batch, which
//     stays as an empty batch so that the producer state survives.
//     Tombstones and transaction markers stay in their first pass, which
//     sets the batch's delete horizon (KIP-534: attribute bit 6, the
//     horizon in baseTimestamp) to now + delete.retention.ms; a later pass
//     after the horizon removes them (a marker only once no record of its
//     transaction is left).
//  4. Swap (cleanswap.go): the group's new files are written as .cleaned,
//     renamed to .swap and then over the old segment; the log's lock is
//     held only for the renames and the in-memory swap.
//  5. The cleaner checkpoint moves to mapEnd.
//
// The background threads that pick logs and run passes, throttled, are in
// cleanloop.go.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"sharq/log/recordbatch"
)

// CleanerOptions are the log.cleaner.* broker settings.
type CleanerOptions struct {
	Disable bool          // log.cleaner.enable=false
	Threads int           // log.cleaner.threads (0 = 1)
	Backoff time.Duration // log.cleaner.backoff.ms: sleep when nothing is to clean (0 = 15s)
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size: the memory of the
	// offset maps of all threads together (0 = 128 MiB). A pass allocates
	// only what its dirty section can need, up to its thread's share.
	DedupeBufferSize int64
	// IOBufferLoadFactor is log.cleaner.io.buffer.load.factor (0 = 0.9).
	IOBufferLoadFactor float64
	// IOBufferSize is log.cleaner.io.buffer.size: read and write buffers
	// of each thread (0 = 512 KiB).
	IOBufferSize int
	// IOMaxBytesPerSecond is log.cleaner.io.max.bytes.per.second, read and
	// written bytes together (<= 0 = unlimited).
	IOMaxBytesPerSecond float64
}

func (o CleanerOptions) withDefaults() CleanerOptions {
	if o.Threads <= 0 {
		o.Threads = 1
	}
	if o.Backoff <= 0 {
		o.Backoff = 15 * time.Second
	}
	if o.DedupeBufferSize <= 0 {
		o.DedupeBufferSize = 128 << 20
	}
	if o.IOBufferLoadFactor <= 0 || o.IOBufferLoadFactor > 1 {
		o.IOBufferLoadFactor = 0.9
	}
	if o.IOBufferSize <= 0 {
		o.IOBufferSize = 512 << 10
	}
	return o
}

// cleanerCheckpointName is Kafka's cleaner-offset-checkpoint: the end of
// the last pass (the first dirty offset), per partition here.
const cleanerCheckpointName = "cleaner-offset-checkpoint"

// CleanStats says what one cleaning pass of a log did.
type CleanStats struct {
	Cleaned      bool  // false: the log was not eligible
	FirstDirty   int64 // where the dirty section started
	End          int64 // the new cleaner checkpoint (mapEnd)
	Segments     int   // segments read
	BytesRead    int64
	BytesWritten int64
	RecordsRead  int64
	RecordsKept  int64
	Duration     time.Duration
}

// cleanEnv is one cleaner thread's settings and buffers.
type cleanEnv struct {
	now        time.Time
	mapBytes   int64
	loadFactor float64
	ioBuf      int
	throttle   *throttler
	force      bool            // ignore the dirty ratio (tests and benchmarks)
	ctx        context.Context // nil: never stopped; else a shutdown drops the pass
}

// errCleanAborted means the log changed under a pass (retention, a
// truncation, a close); the pass is dropped and tried again later.
var errCleanAborted = errors.New("log changed while it was cleaned")

// Clean runs one cleaning pass over the log if it is eligible (see the
// file comment); force ignores min.cleanable.dirty.ratio. It is what the
// manager's cleaner threads call; tests call it directly.
func (l *Log) Clean(now time.Time, opts CleanerOptions, force bool) (CleanStats, error) {
	opts = opts.withDefaults()
	env := &cleanEnv{now: now, mapBytes: opts.DedupeBufferSize, loadFactor: opts.IOBufferLoadFactor, ioBuf: opts.IOBufferSize, force: force}
	if opts.IOMaxBytesPerSecond > 0 {
		env.throttle = newThrottler(opts.IOMaxBytesPerSecond)
	}
	return l.clean(env)
}

func (l *Log) clean(env *cleanEnv) (CleanStats, error) {
	l.cleanMu.Lock()
	defer l.cleanMu.Unlock()
	start := time.Now()
	plan, err := l.planClean(env)
	if err != nil || plan == nil {
		return CleanStats{}, err
	}
	defer plan.release()
	st := CleanStats{FirstDirty: plan.firstDirty}
	c := &cleaning{l: l, env: env, plan: plan, nowMs: env.now.UnixMilli(), txnRetained: map[int64]bool{}, minHorizon: math.MaxInt64}
	mapEnd, err := c.buildMap(&st)
	if errors.Is(err, errCleanAborted) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	c.mapEnd = mapEnd
	// Segments from the log start whose base is below mapEnd are copied.
	n := 0
	for n < len(plan.segs)-1 && plan.segs[n].base < mapEnd {
		n++
	}
	var groups []*cleanedFiles
	for i := 0; i < n; {
		j := i + 1
		size := plan.sizes[i]
		for j < n && size+plan.sizes[j] <= plan.cfg.SegmentBytes && plan.segs[j+1].base-plan.segs[i].base <= math.MaxInt32 {
			size += plan.sizes[j]
			j++
		}
		f, err := c.cleanGroup(plan.segs[i:j], plan.segs[j].base, &st)
		if err != nil {
			for _, g := range groups {
				g.remove()
			}
			if errors.Is(err, errCleanAborted) {
				return st, nil
			}
			return st, err
		}
		groups = append(groups, f)
		i = j
	}
	if err := l.swapCleaned(groups, plan.truncations); err != nil {
		if errors.Is(err, errCleanAborted) {
			l.logger.Info("log cleaning pass dropped", "reason", err)
			return st, nil
		}
		return st, err
	}
	if mapEnd > l.cleanerCkpt {
		if err := l.writeOffsetCheckpoint(cleanerCheckpointName, mapEnd); err != nil {
			// The next pass redoes this one's work; nothing is lost.
			l.logger.Warn("cannot write cleaner checkpoint", "err", err)
		} else {
			l.cleanerCkpt = mapEnd
		}
	}
	if c.minHorizon != math.MaxInt64 {
		l.nextHorizonMs.Store(c.minHorizon)
	} else {
		l.nextHorizonMs.Store(0)
	}
	st.Cleaned = true
	st.End = mapEnd
	st.Duration = time.Since(start)
	l.logger.Info("cleaned log", "first_dirty", st.FirstDirty, "end", st.End, "segments", st.Segments,
		"bytes_read", st.BytesRead, "bytes_written", st.BytesWritten, "records_read", st.RecordsRead,
		"records_kept", st.RecordsKept, "took", st.Duration)
	return st, nil
}

// cleaning is one pass's state.
type cleaning struct {
	l      *Log
	env    *cleanEnv
	plan   *cleanPlan
	nowMs  int64
	m      *offsetMap
	mapEnd int64

	// txnRetained: the open transaction of a producer had a record kept
	// in this pass (its marker must stay).
	txnRetained map[int64]bool
	minHorizon  int64

	sc      scanner
	decomp  []byte
	recs    []recordbatch.Record
	recBuf  []byte
	out     []byte // the current output batch
	wbuf    []byte // pending writes of the .cleaned log
	written int64  // bytes of the .cleaned log already written
}

// aborted reports whether the transactional batch of pid at offset is
// part of an aborted transaction.
func (c *cleaning) isAborted(pid, offset int64) bool {
	list := c.plan.aborted[pid]
	i := sort.Search(len(list), func(i int) bool { return list[i].first > offset })
	return i > 0 && list[i-1].last >= offset
}

// records returns the uncompressed records section of a batch.
func (c *cleaning) records(b []byte, h *batchHeader) ([]byte, error) {
	p := b[batchHeaderSize:]
	if h.Compression() == codecNone {
		return p, nil
	}
	var err error
	c.decomp, err = Decompress(c.decomp[:0], h.Compression(), p, math.MaxInt32)
	if err != nil {
		return nil, fmt.Errorf("%w: batch at offset %d: %w", ErrCorruptMessage, h.BaseOffset, err)
	}
	return c.decomp, nil
}

// eachBatch calls fn with every batch of s from position pos, reading
// through the pass's read buffer; fn returns false to stop.
func (c *cleaning) eachBatch(s *segment, pos, size int64, fn func(b []byte, h *batchHeader) (bool, error)) error {
	c.sc.f, c.sc.pos, c.sc.end, c.sc.bufPos, c.sc.bufLen = s.log, pos, size, 0, 0
	if len(c.sc.buf) < c.env.ioBuf {
		c.sc.buf = make([]byte, c.env.ioBuf)
	}
	for {
		b, reason, err := c.sc.next()
		if err != nil {
			return fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
		}
		if b == nil {
			if reason != "" {
				return s.corrupt(c.sc.pos, reason)
			}
			return nil
		}
		if c.env.ctx != nil && c.env.ctx.Err() != nil {
			return errCleanAborted // shutting down: the next start cleans again
		}
		h := parseHeader(b)
		c.sc.advance(int64(h.Size))
		c.env.throttle.wait(int64(h.Size))
		if ok, err := fn(b, &h); err != nil || !ok {
			return err
		}
	}
}

// buildMap puts the keys of the dirty section into the offset map and
// returns where it ends (the first offset not in the map).
func (c *cleaning) buildMap(st *CleanStats) (int64, error) {
	p := c.plan
	c.m = newOffsetMap(c.env.mapBytes, c.env.loadFactor, max(p.end-p.firstDirty, 0))
	mapEnd := p.firstDirty
	full := false
	for i, s := range p.segs[:len(p.segs)-1] {
		if full || s.base >= p.end {
			break
		}
		if p.segs[i+1].base <= p.firstDirty {
			continue
		}
		pos := int64(0)
		if s.base < p.firstDirty && s.idxEntries > 0 {
			var scratch [offsetIndexEntry]byte
			if fp, err := offsetFloorFile(s.index, s.idxEntries, s.rel(p.firstDirty), scratch[:]); err == nil {
				pos = fp
			}
		}
		st.Segments++
		err := c.eachBatch(s, pos, p.sizes[i], func(b []byte, h *batchHeader) (bool, error) {
			last := h.LastOffset()
			if last < p.firstDirty {
				return true, nil
			}
			if h.BaseOffset >= p.end {
				full = true // not full, but done
				return false, nil
			}
			st.BytesRead += int64(h.Size)
			if h.Attributes&attrControl != 0 || (h.Attributes&attrTransactional != 0 && c.isAborted(h.ProducerID, h.BaseOffset)) {
				mapEnd = last + 1
				return true, nil
			}
			if c.m.entries+int(h.RecordCount) > c.m.maxEntries {
				if mapEnd == p.firstDirty {
					return false, fmt.Errorf("log cleaner: log.cleaner.dedupe.buffer.size holds %d keys, too few for the %d records of the batch at offset %d", c.m.maxEntries, h.RecordCount, h.BaseOffset)
				}
				full = true
				return false, nil
			}
			recs, err := c.records(b, h)
			if err != nil {
				return false, err
			}
			rd := recordbatch.NewReader(recs, h.RecordCount)
			var r recordbatch.Record
			for rd.Next(&r) {
				if r.Key != nil {
					c.m.put(r.Key, h.BaseOffset+int64(r.OffsetDelta))
				}
			}
			if err := rd.Err(); err != nil {
				return false, fmt.Errorf("%w: batch at offset %d of %s: %w", ErrCorruptMessage, h.BaseOffset, s.logPath, err)
			}
			mapEnd = last + 1
			return true, nil
		})
		if err != nil {
			return 0, err
		}
	}
	return mapEnd, nil
}

// cleanGroup copies the segments of group (consecutive, sealed) into one
// cleaned segment with the first one's base offset, written as .cleaned
// files for swapCleaned; end is the base of the segment after the group.
func (c *cleaning) cleanGroup(group []*segment, end int64, st *CleanStats) (_ *cleanedFiles, err error) {
	base := group[0].base
	cfg := &c.plan.cfg
	out := &segment{base: base, next: base, maxTs: -1, maxTsOffset: -1, rollBaseMs: -1}
	files := newCleanedFiles(c.l, group, end)
	files.out = out
	defer func() {
		if err != nil {
			files.remove()
		}
	}()
	if err := files.create(); err != nil {
		return nil, err
	}
	c.wbuf, c.written = c.wbuf[:0], 0
	flush := func() error {
		if len(c.wbuf) == 0 {
			return nil
		}
		if _, err := files.log.WriteAt(c.wbuf, c.written); err != nil {
			return fmt.Errorf("%w: write %s: %w", ErrStorage, files.path(logSuffix), err)
		}
		c.env.throttle.wait(int64(len(c.wbuf)))
		c.written += int64(len(c.wbuf))
		c.wbuf = c.wbuf[:0]
		return nil
	}
	emit := func(b []byte) error {
		h := parseHeader(b)
		pos := c.written + int64(len(c.wbuf))
		c.wbuf = append(c.wbuf, b...)
		out.onAppendLocked(&h, pos, int64(cfg.IndexIntervalBytes))
		if h.Attributes&attrDeleteHorizon != 0 && (h.Attributes&attrControl != 0 || h.RecordCount > 0) {
			c.minHorizon = min(c.minHorizon, h.BaseTimestamp)
		}
		st.BytesWritten += int64(len(b))
		if len(c.wbuf) >= c.env.ioBuf {
			return flush()
		}
		return nil
	}
	for _, s := range group {
		size := c.plan.sizes[slices.Index(c.plan.segs, s)]
		st.BytesRead += size
		err := c.eachBatch(s, 0, size, func(b []byte, h *batchHeader) (bool, error) {
			ob, err := c.filterBatch(b, h, st)
			if err != nil {
				return false, fmt.Errorf("batch at offset %d of %s: %w", h.BaseOffset, s.logPath, err)
			}
			if ob != nil {
				if err := emit(ob); err != nil {
					return false, err
				}
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if out.maxTs >= 0 && out.maxTs > out.lastTimeIndexTs() {
		out.tidx = appendTimeEntry(out.tidx, out.maxTs, out.rel(out.maxTsOffset))
	}
	var txn []byte
	for i := range c.plan.allAborted {
		a := &c.plan.allAborted[i]
		if a.last >= base && a.last < end {
			txn = a.appendTo(txn)
		}
	}
	if err := files.finish(out.idx, out.tidx, txn); err != nil {
		return nil, err
	}
	return files, nil
}

// filterBatch decides what of one stored batch stays: nil (it goes), b
// itself (unchanged) or a batch written again into c.out.
func (c *cleaning) filterBatch(b []byte, h *batchHeader, st *CleanStats) ([]byte, error) {
	pid := h.ProducerID
	producerLast := pid >= 0 && c.plan.producerLast[pid] == h.LastOffset()
	hasHorizon := h.Attributes&attrDeleteHorizon != 0
	if h.Attributes&attrControl != 0 {
		retained := c.txnRetained[pid]
		delete(c.txnRetained, pid)
		if h.BaseOffset >= c.mapEnd {
			return b, nil
		}
		if hasHorizon {
			if c.nowMs >= h.BaseTimestamp && !retained {
				if producerLast {
					return c.emptyBatch(b, h), nil
				}
				return nil, nil
			}
			return b, nil
		}
		recs, err := c.records(b, h)
		if err != nil {
			return nil, err
		}
		return c.rewrite(b, h, recs, nil, true)
	}
	if h.Attributes&attrTransactional != 0 && c.isAborted(pid, h.BaseOffset) {
		st.RecordsRead += int64(h.RecordCount)
		if producerLast {
			return c.emptyBatch(b, h), nil
		}
		return nil, nil
	}
	recs, err := c.records(b, h)
	if err != nil {
		return nil, err
	}
	c.recs = c.recs[:0]
	total := 0
	tombstones := false
	rd := recordbatch.NewReader(recs, h.RecordCount)
	var r recordbatch.Record
	for rd.Next(&r) {
		total++
		off := h.BaseOffset + int64(r.OffsetDelta)
		keep := off >= c.mapEnd
		if !keep && r.Key != nil {
			latest := c.m.get(r.Key)
			keep = latest < 0 || off >= latest
			if keep && r.Value == nil {
				if hasHorizon && c.nowMs >= h.BaseTimestamp {
					keep = false
				} else {
					tombstones = true
				}
			}
		}
		if keep {
			c.recs = append(c.recs, r)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptMessage, err)
	}
	st.RecordsRead += int64(total)
	st.RecordsKept += int64(len(c.recs))
	if len(c.recs) > 0 && h.Attributes&attrTransactional != 0 {
		c.txnRetained[pid] = true
	}
	setHorizon := tombstones && !hasHorizon
	switch {
	case len(c.recs) == total && !setHorizon:
		return b, nil
	case len(c.recs) == 0:
		if producerLast {
			return c.emptyBatch(b, h), nil
		}
		return nil, nil
	}
	return c.rewrite(b, h, recs, c.recs, setHorizon)
}

// emptyBatch is b's header alone, with no records (Kafka's RETAIN_EMPTY:
// the batch keeps the producer's last sequence and epoch in the log). As
// Kafka's writeEmptyHeader it says no compression: a compressed batch of
// no bytes is not a valid compressed stream, and clients that decompress
// before they look at the record count (franz-go) fail on it ("s2: corrupt
// input") and never read past it.
func (c *cleaning) emptyBatch(b []byte, h *batchHeader) []byte {
	c.startBatch(h, 0, h.Attributes&^attrCompressionMask, h.BaseTimestamp, h.MaxTimestamp)
	recordbatch.Seal(c.out)
	return c.out
}

// startBatch puts h's header into c.out with the fields cleaning changes
// set; the records follow, then recordbatch.Seal.
func (c *cleaning) startBatch(h *batchHeader, count int32, attrs int16, baseTs, maxTs int64) {
	nh := *h
	nh.RecordCount, nh.Attributes, nh.BaseTimestamp, nh.MaxTimestamp = count, attrs, baseTs, maxTs
	c.out = nh.AppendTo(c.out[:0])
}

// rewrite writes b again with the records kept (all of recs when kept is
// nil, a control batch), setting the delete horizon if asked.
func (c *cleaning) rewrite(b []byte, h *batchHeader, recs []byte, kept []recordbatch.Record, setHorizon bool) ([]byte, error) {
	oldBase := h.BaseTimestamp
	newBase := oldBase
	attrs := h.Attributes
	if setHorizon {
		newBase = c.nowMs + c.plan.cfg.DeleteRetentionMs
		attrs |= attrDeleteHorizon
	}
	if kept == nil {
		c.recs = c.recs[:0]
		rd := recordbatch.NewReader(recs, h.RecordCount)
		var r recordbatch.Record
		for rd.Next(&r) {
			c.recs = append(c.recs, r)
		}
		if err := rd.Err(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorruptMessage, err)
		}
		kept = c.recs
	}
	logAppend := h.Attributes&attrTimestampType != 0
	maxTs := int64(-1)
	if logAppend {
		maxTs = h.MaxTimestamp
	}
	c.recBuf = c.recBuf[:0]
	for i := range kept {
		r := &kept[i]
		ts := oldBase + r.TimestampDelta
		if !logAppend {
			maxTs = max(maxTs, ts)
		}
		if newBase == oldBase {
			c.recBuf = append(c.recBuf, r.Raw...)
		} else {
			c.recBuf = recordbatch.AppendRetimed(c.recBuf, r, ts-newBase)
		}
	}
	if len(kept) == 0 {
		maxTs = h.MaxTimestamp
	}
	c.startBatch(h, int32(len(kept)), attrs, newBase, maxTs)
	var err error
	c.out, err = compressRecords(c.out, h.Compression(), c.recBuf)
	if err != nil {
		return nil, err
	}
	recordbatch.Seal(c.out)
	return c.out, nil
}
