package share

import (
	"time"
)

// Fair acquisition (sharq's own; Kafka has no equivalent).
//
// Kafka's batch-optimised acquisition gives whole log batches to whichever
// member fetches first, and clients fetch ahead, so with slow consumers one
// member holds minutes of work while the others assigned the same
// share-partition wait with empty fetches. While other members are parked on
// a share-partition (waiting for records), the Manager limits an
// acquisition to the member's fair share of the work in flight and lets
// Acquire split a log batch into record ranges (record_limit), so the
// remainder stays Available for the waiting members, which are woken.
//
//	members  = this one + the others parked on the share-partition + those
//	           holding acquired records there
//	work     = records acquirable now (Available in the window, and new
//	           records the window admits) + records held by every member
//	share    = max(ceil(work / members), floor)
//	limit    = share - records this member already holds
//
// floor keeps fast consumers on today's whole batches: it is the number of
// records a member processes in fairQuantum, from the time records stay
// acquired before they are acknowledged (an average over recent
// acquisitions of the share-partition). Splitting a batch costs one more
// fetch and a second copy of the batch's bytes; that pays only when a
// member would sit on the records for longer than that. Before anything was
// acknowledged the floor is one record. Without parked members nothing is
// limited: today's batch_optimized behaviour. The policy decides only which
// member gets which records; ranges, delivery counts and locks are those of
// any acquisition, so a client sees nothing it could not see from Kafka
// (record_limit acquisitions split batches the same way).

// fairQuantum is how much work (as time) a member may hold beyond its
// share of the records before a split is worth it.
const fairQuantum = 20 * time.Millisecond

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

// fairState is a share-partition's fair-acquisition bookkeeping, under
// part.mu.
type fairState struct {
	// parked counts, per member, the ShareFetches parked on this
	// share-partition (from entering the wait to answering).
	parked map[string]int
	marks  [fairMarks]acqMark
	next   int
	// perRecord is the moving average of how long a record stays acquired
	// before its acknowledgement, in nanoseconds; 0 = not known yet.
	perRecord float64
	// holders is scratch for the distinct owners of acquired records.
	holders []string
}

func (f *fairState) park(member string) {
	if f.parked == nil {
		f.parked = map[string]int{}
	}
	f.parked[member]++
}

func (f *fairState) unpark(member string) {
	if n := f.parked[member]; n > 1 {
		f.parked[member] = n - 1
	} else {
		delete(f.parked, member)
	}
}

// note remembers an acquisition of n records ending at last.
func (f *fairState) note(member string, last, n int64, now time.Time) {
	f.marks[f.next] = acqMark{member: member, last: last, n: n, at: now.UnixNano()}
	f.next = (f.next + 1) % fairMarks
}

// acked times the acquisitions of member whose last offset is in [first,
// last]: the records were held from the acquisition until now.
func (f *fairState) acked(member string, first, last int64, now time.Time) {
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

// floor is the number of records worth fairQuantum of holding time.
func (f *fairState) floor() int64 {
	if f.perRecord <= 0 {
		return 1
	}
	n := float64(fairQuantum) / f.perRecord
	if n > 1<<40 {
		return 1 << 40
	}
	return max(1, int64(n))
}

// othersParked counts the members other than member parked on the
// share-partition.
func (f *fairState) othersParked(member string) int {
	n := len(f.parked)
	if _, ok := f.parked[member]; ok {
		n--
	}
	return n
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
// no limit: nobody else is waiting, or the limit would not cut what the
// member can take anyway (then batch_optimized keeps whole batches).
func (p *part) fairLimit(member string, end int64) int64 {
	f := &p.fair
	others := f.othersParked(member)
	if others == 0 {
		return -1
	}
	var v FairView
	f.holders = p.sp.Fair(member, end, &v, f.holders[:0])
	members := int64(1 + others)
	for _, h := range f.holders {
		if _, ok := f.parked[h]; !ok {
			members++
		}
	}
	clear(f.holders) // keep no member ids alive
	work := v.Acquirable + v.Held
	if work <= 0 {
		return -1
	}
	share := max((work+members-1)/members, f.floor())
	limit := max(share-v.Own, 0)
	if limit >= v.Acquirable {
		return -1
	}
	return limit
}
