package share

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// Fair acquisition (sharq's own; Kafka has no equivalent).
//
// Kafka's batch-optimised acquisition gives whole log batches to whichever
// member fetches first, and clients fetch ahead, so with slow consumers one
// member holds minutes of work while the others assigned the same
// share-partition wait with empty fetches. While other members fetch from
// a share-partition, the Manager limits an acquisition to the member's
// fair share of the work in flight and lets Acquire split a log batch into
// record ranges (record_limit), so the remainder stays Available for the
// others; parked ones are woken.
//
//	members  = the members fetching from the share-partition: each one
//	           whose ShareFetch session includes it, from its first
//	           fetch there until the session closes; the limit applies
//	           only when there is any other
//	work     = records acquirable now (Available in the window, and new
//	           records the window admits) + records held by every member
//	fair     = ceil(work x weight / members' weights), where a member's
//	           weight is about 1 / the partitions it fetches from, more
//	           where the work per member is larger (fairWeight)
//	share    = fair clamped to [floor, records worth fairHold] x weight
//	           once records were timed; before, fair but at most a batch
//	limit    = min(share - records this member already holds, MaxRecords)
//
// Who contends is judged by state, not by how recently a member was seen:
// a member with a ShareFetch parked, one that holds records, and one that
// fetched and holds nothing (it is between two ShareFetches, or busy with
// another partition's records, and comes back for its share) all count.
// A timing window (a member counting for a while after its answer) would
// drop members exactly when the machine is slow, and the first member to
// fetch would take everything. Only a member that neither fetches, nor
// holds, nor has a fetch parked for fairIdle is forgotten: one that
// vanished without closing its session.
//
// Fast consumers (under fairFastRecord a record) are never limited: they
// keep today's whole batches. For the others, floor is the number of
// records a member processes in fairQuantum, from the time records stay
// acquired before they are acknowledged and the time between a member's
// acknowledgements (averages over the share-partition's recent ones).
// Splitting a batch costs one more fetch and another copy of the batch's
// bytes; that pays only when a member would sit on the records for longer
// than that. Before anything was acknowledged the floor is one record.
// A limit no lower than the fetch's MaxRecords and a batch changes nothing: the
// acquisition stays batch_optimized. Batches over fairMaxSplitBytes are
// never split. With no other member nothing is limited: today's
// batch_optimized behaviour. The policy decides only which member gets
// which records; ranges, delivery counts and locks are those of any
// acquisition, so a client sees nothing it could not see from Kafka
// (record_limit acquisitions split batches the same way).

// fairQuantum is how much work (as time) a member may hold beyond its
// share of the records before a split is worth it.
const fairQuantum = 50 * time.Millisecond

// fairHold is the most work (as time, on one partition) a member may hold
// while others fetch from the share-partition, however large its share of
// the backlog. A client that fetches ahead acknowledges a poll's records
// only with its fetch after the next poll, so what it holds overstates the
// work it has left by up to a whole poll: with the backlog shared out in
// large pieces up front, members end up to a poll apart. Pieces of at most
// fairHold keep every member busy (the next piece arrives while it works
// on the one before) and bound how far apart they finish.
const fairHold = 2 * fairQuantum

// fairFastRecord: members that spend less than this on a record (as
// estimated by perRecord) are fast, and get whole batches. Every member
// given a slice of a batch receives and decodes all of the batch's
// records, a cost of the order of a fast consumer's own work; for a
// consumer that takes 200 µs or more on a record it is a few per cent at
// most.
const fairFastRecord = 200 * time.Microsecond

// fairMaxSplitBytes: log batches larger than this (on average, in the
// share-partition's last read) are not split. Every member given a slice of
// a batch receives and decodes the whole batch, so slicing a 1 MB batch of
// thousands of records among ten fast members multiplies their work by
// ten, which then makes them look slow and keeps the slicing going. Such
// batches go whole, as in Kafka; Kafka's producer default (16 KB) is far
// below.
const fairMaxSplitBytes = 256 << 10

// fairMarks bounds how many acquisitions a share-partition remembers to
// time their acknowledgements.
const fairMarks = 64

// acqMark is one acquisition, kept until its last offset is acknowledged.
type acqMark struct {
	member string
	last   int64
	n      int64
	at     int64 // UnixNano
}

// fairIdle: a member that holds nothing here and has had no ShareFetch
// here for this long is no longer counted (it vanished without closing its
// session; a live one is parked here or fetches again within MaxWait).
const fairIdle = 30 * time.Second

// fairState is a share-partition's fair-acquisition bookkeeping, under
// part.mu.
type fairState struct {
	// members are the members fetching from the share-partition, from
	// their first fetch here until their session closes (forget).
	members map[string]memberInfo
	// marks are allocated on the first acquisition noted (2.5 KB a
	// share-partition, so only those that serve consumers pay for them).
	marks *[fairMarks]acqMark
	next  int
	// perRecord is the moving average of how long a record stays acquired
	// before its acknowledgement, in nanoseconds; 0 = not known yet.
	perRecord float64
	// holders is scratch for the distinct owners of acquired records.
	holders []string
	// pressure is the float64 bits of the work per member weight at the
	// last limited acquisition (fairWeight reads it without part.mu).
	pressure atomic.Uint64
	// ackGap is the moving average of the time between two
	// acknowledgements of a member divided by the records the second one
	// acknowledged, in nanoseconds; 0 = not known yet.
	ackGap float64
}

// park registers a ShareFetch of member parking on the share-partition.
func (f *fairState) park(member string) {
	mi := f.member(member)
	mi.parked++
	f.setMember(member, mi)
}

// unpark ends a parked ShareFetch of member.
func (f *fairState) unpark(member string, now time.Time) {
	mi, ok := f.members[member]
	if !ok {
		return
	}
	if mi.parked > 0 {
		mi.parked--
	}
	mi.seen = now.UnixNano()
	f.members[member] = mi
}

// served notes that member acquired records here.
func (f *fairState) served(member string, now time.Time) {
	mi := f.member(member)
	mi.seen = now.UnixNano()
	f.setMember(member, mi)
}

// forget drops member: its share session closed.
func (f *fairState) forget(member string) {
	delete(f.members, member)
}

// note remembers an acquisition of n records ending at last.
func (f *fairState) note(member string, last, n int64, now time.Time) {
	if f.marks == nil {
		f.marks = new([fairMarks]acqMark)
	}
	f.marks[f.next] = acqMark{member: member, last: last, n: n, at: now.UnixNano()}
	f.next = (f.next + 1) % fairMarks
}

// acked times the acquisitions of member whose last offset is in [first,
// last]: the records were held from the acquisition until now.
func (f *fairState) acked(member string, first, last int64, now time.Time) {
	if f.marks == nil {
		return
	}
	for i := range f.marks {
		m := &f.marks[i]
		if m.n == 0 || m.member != member || m.last < first || m.last > last {
			continue
		}
		sample := float64(now.UnixNano()-m.at) / float64(m.n)
		if sample < 0 {
			sample = 0
		}
		if f.perRecord == 0 {
			f.perRecord = sample
		} else {
			f.perRecord += (sample - f.perRecord) / 4
		}
		*m = acqMark{}
	}
}

// recordTime estimates the time a record takes, in nanoseconds (0: not
// known yet). It is the smaller of two estimates, each too high in its own
// way: how long records stay acquired per record (too high when a client
// fetches ahead and records wait in its buffer), and the time between a
// member's acknowledgements per record acknowledged (too high when the
// member was idle, waiting for records). A fast consumer shows up as fast
// in at least one of them.
func (f *fairState) recordTime() float64 {
	per := f.perRecord
	if f.ackGap > 0 && (per <= 0 || f.ackGap < per) {
		per = f.ackGap
	}
	return max(per, 0)
}

// floor is the number of records worth fairQuantum of work (1 before
// anything was timed).
func (f *fairState) floor() int64 {
	return f.records(fairQuantum)
}

// records is how many records take d (1 before anything was timed).
func (f *fairState) records(d time.Duration) int64 {
	per := f.recordTime()
	if per <= 0 {
		return 1
	}
	n := float64(d) / per
	if n > 1<<40 {
		return 1 << 40
	}
	return max(1, int64(n))
}

// HeldByOthers reports whether a member other than member holds acquired
// records. O(spans), stopping at the first.
func (p *SharePartition) HeldByOthers(member string) bool {
	for k := range p.ranges {
		if r := &p.ranges[k]; r.state == Acquired && r.owner != member {
			return true
		}
	}
	return false
}

// FairView is what fair acquisition needs to know of the in-flight cache.
type FairView struct {
	Own        int64 // records member holds (Acquired)
	Held       int64 // records every member holds
	Acquirable int64 // Available inside the window plus new records the window admits below end
}

// Fair fills v for member and appends the distinct owners of acquired
// records (other than member) to holders. end is the offset acquisition
// stops at (high watermark, or last stable offset). O(spans).
func (p *SharePartition) Fair(member string, end int64, v *FairView, holders []string) []string {
	*v = FairView{}
	if p.spso < 0 {
		return holders
	}
	for k := range p.ranges {
		r := &p.ranges[k]
		switch r.state {
		case Acquired:
			n := r.len()
			v.Held += n
			if r.owner == member {
				v.Own += n
				continue
			}
			seen := false
			for _, h := range holders {
				if h == r.owner {
					seen = true
					break
				}
			}
			if !seen {
				holders = append(holders, r.owner)
			}
		case Available:
			if n := min(r.last, end-1) - max(r.first, p.spso) + 1; n > 0 {
				v.Acquirable += n
			}
		}
	}
	if room := int64(p.cfg.MaxRecordLocks) - (p.speo - p.spso + 1); room > 0 && end > p.speo+1 {
		v.Acquirable += min(room, end-p.speo-1)
	}
	return holders
}

// fairLimit is the most records member may acquire from p now, or -1 for
// no limit: no other member fetches from p or holds records here, or the
// limit would not cut what the member can take anyway (then
// batch_optimized keeps whole batches).
//
// weight is the member's weight here (fairWeight): a member fetching from
// two share-partitions processes each one's records at about half its
// speed, so it weighs about 1/2 on each (the weight of other members is
// what their last fetch here said).
func (p *part) fairLimit(member string, weight float64, end int64, now time.Time) int64 {
	f := &p.fair
	t := now.UnixNano()
	mi := f.member(member)
	mi.w, mi.seen = float32(weight), t
	f.setMember(member, mi)
	if p.batchBytes > fairMaxSplitBytes {
		return -1
	}
	// Fast consumers get whole batches. Judged by the time records stay
	// acquired, which is at most a poll too high: the gap between
	// acknowledgements is the sharper estimate but varies with how a
	// client batches its acknowledgements (one sent after a short gap
	// can carry a whole poll's).
	if f.perRecord > 0 && f.perRecord < float64(fairFastRecord) {
		return -1
	}
	per := f.recordTime()
	if len(f.members) <= 1 && !p.sp.HeldByOthers(member) {
		return -1 // alone: the common, cheap case
	}
	var v FairView
	f.holders = p.sp.Fair(member, end, &v, f.holders[:0])
	self := f.weight(member)
	total := self
	for mb, o := range f.members {
		if mb == member {
			continue
		}
		if o.parked == 0 && t-o.seen >= int64(fairIdle) && !slices.Contains(f.holders, mb) {
			delete(f.members, mb)
			continue
		}
		total += o.weight()
	}
	for _, h := range f.holders {
		if _, ok := f.members[h]; !ok {
			total++ // a holder forgotten when the map was reset
		}
	}
	clear(f.holders) // keep no member ids alive
	work := v.Acquirable + v.Held
	f.pressure.Store(math.Float64bits(float64(work) / total))
	if work <= 0 || total <= self {
		return -1
	}
	share := int64(math.Ceil(float64(work) * self / total))
	if per > 0 {
		// Both bounds are of the member's time on this share-partition:
		// its weight's part of it.
		lo := max(1, int64(float64(f.floor())*self))
		share = min(max(share, lo), max(lo, int64(float64(f.records(fairHold))*self)))
	} else if b := p.batchRecords(); b > 0 {
		// Nothing timed yet: a batch at most until the first
		// acknowledgements tell slow members from fast ones (which
		// come back for more at once).
		share = min(share, b)
	}
	limit := max(share-v.Own, 0)
	if limit >= v.Acquirable {
		return -1
	}
	return limit
}

// batchRecords estimates the records in a log batch from the last read (0:
// nothing read yet).
func (p *part) batchRecords() int64 {
	if p.bytesPerOffset <= 0 || p.batchBytes <= 0 {
		return 0
	}
	return max(1, int64(float64(p.batchBytes)/p.bytesPerOffset))
}

// applyFairLimit makes areq take at most limit records and returns the
// limit that applies, or -1 for none. A limit beyond what batch_optimized
// takes anyway (MaxRecords and a batch more) leaves the acquisition as it
// is; otherwise it splits batches (record_limit, as a client may ask for
// itself) so the rest stays Available for the other members. Never more
// than the client asked for: a record_limit client's MaxRecords is a hard
// limit.
func (p *part) applyFairLimit(limit int64, areq *AcquireRequest) int64 {
	if limit < 0 {
		return -1
	}
	if areq.MaxRecords <= 0 {
		areq.MaxRecords = DefaultMaxRecords
	}
	batch := max(1, p.batchRecords())
	if limit >= int64(areq.MaxRecords)+batch {
		return -1
	}
	areq.MaxRecords, areq.Mode = int(min(limit, int64(areq.MaxRecords))), RecordLimit
	return limit
}

// fairMembersMax bounds the members a share-partition keeps information
// on; past it the map starts again (members that left are forgotten).
const fairMembersMax = 1024

// memberInfo is what a share-partition knows of a member fetching from it.
type memberInfo struct {
	w       float32 // its weight here (fairWeight) at its last fetch; 0: 1
	parked  int32   // its ShareFetches parked here now
	seen    int64   // UnixNano: its last fetch here
	lastAck int64   // UnixNano: its last acknowledgement here
}

func (f *fairState) member(member string) memberInfo {
	return f.members[member]
}

func (f *fairState) setMember(member string, mi memberInfo) {
	if f.members == nil || len(f.members) > fairMembersMax {
		f.members = map[string]memberInfo{}
	}
	f.members[member] = mi
}

// weight is member's weight here (1 when unknown).
func (f *fairState) weight(member string) float64 {
	mi := f.members[member]
	return mi.weight()
}

func (mi memberInfo) weight() float64 {
	if mi.w > 0 {
		return float64(mi.w)
	}
	return 1
}

// fairWeight is the weight on p of a member whose ShareFetch session
// includes sc's share-partitions. With k of them it is 1/k while their
// backlogs per member are alike, and leans towards those with more work
// per member weight (pressure): a member that also serves a share-partition
// few others serve should take more there and leave the rest of the
// shared one to the members that have nothing else.
func fairWeight(p *part, sc *Scratch) float64 {
	k := len(sc.fetch)
	if k <= 1 {
		return 1
	}
	mine := math.Float64frombits(p.fair.pressure.Load())
	if mine <= 0 {
		return 1 / float64(k)
	}
	sum := 0.0
	for _, i := range sc.fetch {
		pr := mine // not known yet: as this one
		if q := sc.res.Partitions[i].p; q != nil {
			if x := math.Float64frombits(q.fair.pressure.Load()); x > 0 {
				pr = x
			}
		}
		sum += pr
	}
	return max(mine/sum, 1/float64(4*k))
}

// ackedRecords notes that member acknowledged n records here at now: the
// time since its previous acknowledgement over n is the second estimate of
// the time a record takes (see floor).
func (f *fairState) ackedRecords(member string, n int64, now time.Time) {
	if n <= 0 {
		return
	}
	mi := f.member(member)
	t := now.UnixNano()
	if mi.lastAck > 0 && t > mi.lastAck {
		sample := float64(t-mi.lastAck) / float64(n)
		if f.ackGap == 0 {
			f.ackGap = sample
		} else {
			f.ackGap += (sample - f.ackGap) / 4
		}
	}
	mi.lastAck = t
	f.setMember(member, mi)
}

// Parked is how many members have a ShareFetch parked on the
// share-partition key, waiting for records.
func (m *Manager) Parked(key Key) int {
	p := m.loaded(key)
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, mi := range p.fair.members {
		if mi.parked > 0 {
			n++
		}
	}
	return n
}

// Held is how many records of the share-partition key are acquired and
// not yet acknowledged.
func (m *Manager) Held(key Key) int64 {
	p := m.loaded(key)
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var v FairView
	p.fair.holders = p.sp.Fair("", 0, &v, p.fair.holders[:0])
	clear(p.fair.holders)
	return v.Held
}
