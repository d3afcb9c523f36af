package share

import (
	"math"
	"time"
)

// span is one range of the in-flight cache: consecutive offsets that share
// a state, a delivery count and (while Acquired) an owner and deadline.
type span struct {
	first, last int64
	// deadline (UnixNano): the lock deadline while Acquired; while
	// Available, when its redelivery backoff ends (0: none). One field for
	// both keeps a span at 48 bytes.
	deadline int64
	owner    string
	count    int16
	state    RecordState
	cause    DLQCause // while Archiving
}

func (s *span) len() int64 { return s.last - s.first + 1 }

// mergeable: terminal ranges merge regardless of count (the count of a
// terminal record no longer matters to delivery), live ones only when
// everything that drives their future transitions is equal.
func mergeable(a, b *span) bool {
	if a.last+1 != b.first || a.state != b.state {
		return false
	}
	if a.state.Terminal() {
		return true
	}
	return a.count == b.count && a.owner == b.owner && a.deadline == b.deadline && a.cause == b.cause
}

// SharePartition is the lock manager of one (group, topic-partition).
// It is not safe for concurrent use: the caller holds a per-share-partition
// mutex around every call. It never does I/O and never reads the clock.
//
// Invariants: ranges are sorted and non-overlapping; [spso, speo] is
// covered without holes; nothing below spso is tracked except Acquired
// ranges left behind when the log start offset jumped past them (they are
// archived when they come back).
type SharePartition struct {
	cfg        Config
	spso, speo int64 // speo = spso-1 when nothing is in flight; spso = -1 uninitialised
	stateEpoch int32
	ranges     []span
	dirty      bool

	// availFrom: no offset in [spso, availFrom) is Available. It makes the
	// next fetch offset O(1) in steady state.
	availFrom int64
	// minDeadline caches the earliest lock deadline (math.MaxInt64 = none);
	// deadlineOK false means it must be recomputed.
	minDeadline int64
	deadlineOK  bool
	// minAvail caches the earliest redelivery backoff end (math.MaxInt64 =
	// none waiting); availOK false means it must be recomputed.
	minAvail int64
	availOK  bool

	// Key-ordered delivery (keys.go): the key of each offset of the window
	// and the scratch of a scan.
	keys keyWindow
	ks   keyScratch

	stats Stats // cumulative, for metrics; never persisted
}

// New returns an uninitialised share-partition (StartOffset -1, as Kafka
// persists it before share.auto.offset.reset is applied).
func New(cfg Config) *SharePartition {
	return &SharePartition{cfg: cfg.withDefaults(), spso: -1, speo: -2, minDeadline: math.MaxInt64, deadlineOK: true, minAvail: math.MaxInt64, availOK: true}
}

// SetConfig applies changed group configs. A lowered delivery limit takes
// effect at the next release, so one over-limit attempt may remain (KIP-1240).
func (p *SharePartition) SetConfig(cfg Config) { p.cfg = cfg.withDefaults() }

// Config returns the effective configuration.
func (p *SharePartition) Config() Config { return p.cfg }

// Initialised reports whether a start offset is known.
func (p *SharePartition) Initialised() bool { return p.spso >= 0 }

// StartOffset is the SPSO (-1 when uninitialised).
func (p *SharePartition) StartOffset() int64 { return p.spso }

// EndOffset is the SPEO: the last offset in flight, StartOffset-1 when none.
func (p *SharePartition) EndOffset() int64 { return p.speo }

// StateEpoch is the state epoch (bumped by every reset).
func (p *SharePartition) StateEpoch() int32 { return p.stateEpoch }

// Dirty reports whether persistable state changed since the last AppendState.
func (p *SharePartition) Dirty() bool { return p.dirty }

// Initialise sets the start offset of a fresh share-partition (the offset
// share.auto.offset.reset resolved to; see ResolveStartOffset). It discards
// any in-flight state. The state must be persisted.
func (p *SharePartition) Initialise(startOffset int64, stateEpoch int32) Effects {
	if startOffset < 0 {
		startOffset = 0
	}
	p.spso, p.speo, p.stateEpoch = startOffset, startOffset-1, stateEpoch
	p.ranges = p.ranges[:0]
	p.availFrom = startOffset
	p.minDeadline, p.deadlineOK = math.MaxInt64, true
	p.minAvail, p.availOK = math.MaxInt64, true
	p.keys.reset()
	p.dirty = true
	return Effects{SPSOMoved: true, Available: true, Persist: true, Durable: true}
}

// Reset is AlterShareGroupOffsets on an empty group: a new SPSO and state
// epoch, every in-flight state and delivery count discarded. The group
// coordinator checks that the group is empty; records still Acquired (a lock
// not yet expired) are discarded too, and later acks for them fail.
func (p *SharePartition) Reset(startOffset int64) Effects {
	return p.Initialise(startOffset, p.stateEpoch+1)
}

// OffsetReset is share.auto.offset.reset.
type OffsetReset int8

const (
	ResetLatest     OffsetReset = iota // default
	ResetEarliest                      // log start offset
	ResetByDuration                    // first offset with timestamp >= now-duration (resolved by the caller)
)

// ResolveStartOffset picks the initial SPSO. byDurationOffset is the offset
// the caller found for now-duration (ListOffsets by timestamp; the high
// watermark when no record is that recent).
func ResolveStartOffset(r OffsetReset, b Bounds, byDurationOffset int64) int64 {
	switch r {
	case ResetEarliest:
		return b.LogStart
	case ResetByDuration:
		return max(byDurationOffset, b.LogStart)
	}
	return b.HighWatermark
}

// search returns the index of the first range with last >= off.
func (p *SharePartition) search(off int64) int {
	lo, hi := 0, len(p.ranges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.ranges[m].last < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// splitAt makes off the first offset of a range if a range contains it, and
// returns the index of the first range starting at or after off.
func (p *SharePartition) splitAt(off int64) int {
	i := p.search(off)
	if i == len(p.ranges) || p.ranges[i].first >= off {
		return i
	}
	p.ranges = append(p.ranges, span{})
	copy(p.ranges[i+1:], p.ranges[i:])
	p.ranges[i].last = off - 1
	p.ranges[i+1].first = off
	return i + 1
}

// coalesce merges mergeable neighbours among ranges[lo-1 .. hi+1].
func (p *SharePartition) coalesce(lo, hi int) {
	n := len(p.ranges)
	if n < 2 {
		return
	}
	lo = max(lo-1, 0)
	hi = min(hi+1, n-1)
	w := lo
	for k := lo + 1; k <= hi; k++ {
		if mergeable(&p.ranges[w], &p.ranges[k]) {
			p.ranges[w].last = p.ranges[k].last
			continue
		}
		w++
		p.ranges[w] = p.ranges[k]
	}
	if w == hi {
		return
	}
	m := copy(p.ranges[w+1:], p.ranges[hi+1:])
	clear(p.ranges[w+1+m:])
	p.ranges = p.ranges[:w+1+m]
}

// appendSpan adds a range after everything tracked, merging if it can.
func (p *SharePartition) appendSpan(s span) {
	if n := len(p.ranges); n > 0 && mergeable(&p.ranges[n-1], &s) {
		p.ranges[n-1].last = s.last
	} else {
		p.ranges = append(p.ranges, s)
	}
	p.speo = s.last
}

// advance moves SPSO over terminal ranges and drops what lies below it.
func (p *SharePartition) advance() bool {
	old := p.spso
	for k := p.search(p.spso); k < len(p.ranges); k++ {
		r := &p.ranges[k]
		if r.first > p.spso || !r.state.Terminal() {
			break
		}
		p.spso = r.last + 1
	}
	if p.speo < p.spso-1 {
		p.speo = p.spso - 1
	}
	// Drop everything below SPSO except Acquired ranges stranded there by a
	// log start jump (usually none, so this stops at the first range).
	w, k := 0, 0
	for ; k < len(p.ranges) && p.ranges[k].last < p.spso; k++ {
		if p.ranges[k].state == Acquired {
			p.ranges[w] = p.ranges[k]
			w++
		}
	}
	if k > w {
		m := copy(p.ranges[w:], p.ranges[k:])
		clear(p.ranges[w+m:])
		p.ranges = p.ranges[:w+m]
	}
	if p.availFrom < p.spso {
		p.availFrom = p.spso
	}
	return p.spso != old
}

// moveStart handles a log start offset beyond SPSO (retention,
// DeleteRecords): Available records below it are archived, Acquired ones
// stay until they are acked, released or expire (then archived).
func (p *SharePartition) moveStart(logStart int64) {
	end := p.splitAt(logStart)
	for k := 0; k < end; k++ {
		if r := &p.ranges[k]; r.state == Available {
			r.state = Archived
			if r.deadline != 0 {
				r.deadline, p.availOK = 0, false
			}
		}
	}
	p.coalesce(0, end)
	p.spso = logStart
	p.advance()
	p.dirty = true
}

// NextFetchOffset is where the next acquisition starts reading the log: the
// first Available offset at or after SPSO, else SPEO+1.
func (p *SharePartition) NextFetchOffset() int64 {
	if p.spso < 0 {
		return -1
	}
	for k := p.search(max(p.availFrom, p.spso)); k < len(p.ranges); k++ {
		if p.ranges[k].state == Available {
			p.availFrom = max(p.ranges[k].first, p.spso)
			return p.availFrom
		}
	}
	p.availFrom = p.speo + 1
	return p.speo + 1
}

// Full reports that Acquire would take nothing whatever the log holds: no
// offset inside the window is Available and the window (SPEO-SPSO+1) is at
// share.partition.max.record.locks. A fetch then need not read the log.
// That matters when a batch is larger than the window (a 1 MB batch holds
// ~9000 records of 100 B, the window 2000): every re-poll of a member that
// still holds the batch read the next whole batch only to take nothing.
func (p *SharePartition) Full() bool {
	if p.spso < 0 {
		return false
	}
	return p.speo-p.spso+1 >= int64(p.cfg.MaxRecordLocks) && p.NextFetchOffset() > p.speo
}

// transition sets [a, b] (all tracked) to state and returns the index of the
// first range after b (after merging).
func (p *SharePartition) transition(a, b int64, state RecordState, count int16, owner string, deadline int64) int {
	i := p.splitAt(a)
	j := p.splitAt(b + 1)
	for k := i; k < j; k++ {
		r := &p.ranges[k]
		if r.state == Acquired && r.deadline == p.minDeadline {
			p.deadlineOK = false
		}
		if r.state == Available && r.deadline != 0 {
			p.availOK = false // a backoff ends here
		}
		r.state, r.owner, r.deadline = state, owner, deadline
		if state == Acquired || count != 0 {
			r.count = count
		}
	}
	before := len(p.ranges)
	p.coalesce(i, j-1)
	return j - (before - len(p.ranges))
}

func (p *SharePartition) noteDeadline(d int64) {
	if p.deadlineOK && d < p.minDeadline {
		p.minDeadline = d
	}
}

// NextDeadline is the earliest lock deadline: the one timer the caller arms
// for this share-partition. ok is false when nothing is Acquired.
func (p *SharePartition) NextDeadline() (time.Time, bool) {
	if !p.deadlineOK {
		p.minDeadline = math.MaxInt64
		for k := range p.ranges {
			if r := &p.ranges[k]; r.state == Acquired && r.deadline < p.minDeadline {
				p.minDeadline = r.deadline
			}
		}
		p.deadlineOK = true
	}
	if p.minDeadline == math.MaxInt64 {
		return time.Time{}, false
	}
	return time.Unix(0, p.minDeadline), true
}

func (r *span) view() InFlightRange {
	v := InFlightRange{FirstOffset: r.first, LastOffset: r.last, State: r.state, DeliveryCount: r.count, Owner: r.owner}
	if r.state == Acquired {
		v.LockDeadline = time.Unix(0, r.deadline)
	}
	if r.state == Available && r.deadline != 0 {
		v.AvailableAt = time.Unix(0, r.deadline)
	}
	return v
}

// InFlight appends the in-flight cache (ranges in offset order) to dst.
func (p *SharePartition) InFlight(dst []InFlightRange) []InFlightRange {
	for k := range p.ranges {
		dst = append(dst, p.ranges[k].view())
	}
	return dst
}

// DeliveryCompleteCount is the number of terminal offsets at or above SPSO
// (KIP-1226).
func (p *SharePartition) DeliveryCompleteCount() int64 {
	var n int64
	for k := p.search(p.spso); k < len(p.ranges); k++ {
		r := &p.ranges[k]
		if r.state.Terminal() {
			n += r.last - max(r.first, p.spso) + 1
		}
	}
	return n
}

// Lag is KIP-1226's lag for DescribeShareGroupOffsets: high watermark -
// SPSO - DeliveryCompleteCount; -1 when uninitialised.
func (p *SharePartition) Lag(highWatermark int64) int64 {
	if p.spso < 0 {
		return -1
	}
	return max(0, highWatermark-p.spso-p.DeliveryCompleteCount())
}

// Summary is what DescribeShareGroupOffsets and metrics need.
type Summary struct {
	StartOffset           int64
	EndOffset             int64
	StateEpoch            int32
	DeliveryCompleteCount int64
	Acquired              int64 // offsets currently Acquired
	Available             int64 // offsets Available inside the window
	Archiving             int64 // offsets waiting for their dead-letter write
	Backoff               int64 // Available offsets waiting out a redelivery backoff (part of Available)
}

// Summary returns counters over the in-flight cache.
func (p *SharePartition) Summary() Summary {
	s := Summary{StartOffset: p.spso, EndOffset: p.speo, StateEpoch: p.stateEpoch}
	for k := range p.ranges {
		r := &p.ranges[k]
		switch {
		case r.state == Acquired:
			s.Acquired += r.len()
		case r.state == Available && r.last >= p.spso:
			n := r.last - max(r.first, p.spso) + 1
			s.Available += n
			if r.deadline != 0 {
				s.Backoff += n
			}
		case r.state == Archiving:
			s.Archiving += r.len()
		case r.state.Terminal() && r.last >= p.spso:
			s.DeliveryCompleteCount += r.last - max(r.first, p.spso) + 1
		}
	}
	return s
}

// DLQCause is why a record goes to the dead-letter queue; its Message is
// Kafka's __dlq.errors.message text.
type DLQCause int8

const (
	CauseNone                  DLQCause = 0
	CauseRejected              DLQCause = 1 // ShareGroupDLQManager.CLIENT_REJECT
	CauseDeliveryCountExceeded DLQCause = 2 // ShareGroupDLQManager.DELIVERY_COUNT_EXCEEDED
)

// Message is the __dlq.errors.message header value.
func (c DLQCause) Message() string {
	switch c {
	case CauseRejected:
		return "Offset rejected by client."
	case CauseDeliveryCountExceeded:
		return "Offset delivery count exceeded the threshold."
	}
	return ""
}

// archiving moves the Acquired offsets of [a, b] to Archiving with cause,
// keeping each range's delivery count (the DLQ record's
// __dlq.errors.delivery.count).
func (p *SharePartition) archiving(a, b int64, cause DLQCause) {
	i := p.splitAt(a)
	j := p.splitAt(b + 1)
	for k := i; k < j; k++ {
		r := &p.ranges[k]
		if r.state == Acquired && r.deadline == p.minDeadline {
			p.deadlineOK = false
		}
		r.state, r.owner, r.deadline, r.cause = Archiving, "", 0, cause
		if r.last < p.spso {
			// Stranded below a log-start jump: nothing to dead-letter.
			r.state, r.cause = Archived, CauseNone
		}
	}
	p.coalesce(i, j-1)
}

// ArchivingRange is one range waiting for its dead-letter write.
type ArchivingRange struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int16
	Cause                   DLQCause
}

// Archiving appends the ranges that are Archiving to dst.
func (p *SharePartition) Archiving(dst []ArchivingRange) []ArchivingRange {
	for k := range p.ranges {
		if r := &p.ranges[k]; r.state == Archiving {
			dst = append(dst, ArchivingRange{FirstOffset: r.first, LastOffset: r.last, DeliveryCount: r.count, Cause: r.cause})
		}
	}
	return dst
}

// SettleArchiving archives what is still Archiving in [first, last]: its
// dead-letter write is done, or failed for good (Kafka proceeds to
// ARCHIVED regardless). It reports whether anything changed.
func (p *SharePartition) SettleArchiving(first, last int64) Effects {
	var eff Effects
	i := p.splitAt(first)
	j := p.splitAt(last + 1)
	for k := i; k < j; k++ {
		if r := &p.ranges[k]; r.state == Archiving {
			r.state, r.cause = Archived, CauseNone
			eff.Persist = true
		}
	}
	p.coalesce(i, j-1)
	if eff.Persist {
		p.dirty = true
		eff.SPSOMoved = p.advance()
	}
	return eff
}
