package share

import (
	"math"
	"time"
)

// Redelivery backoff (sharq.share.redelivery.backoff.*). A record released
// by its consumer (ack type Release) or whose acquisition lock expired is
// Available again, but acquisitions skip it until its backoff ends: the
// span carries the end (in its deadline field, which only an Acquired span
// uses otherwise). Records behind it are acquired as usual, so
// a waiting record never blocks others; it does hold SPSO, as any Available
// record does in Kafka (SPSO stops at the first non-terminal offset). The
// share-partition's one timer is armed for the earlier of the next lock
// deadline and the next backoff end (NextWake); ExpireLocks then clears the
// ended backoffs and reports Available so parked fetches wake. A closed
// session (ReleaseMember) is not a failed delivery and gets no backoff.

// startBackoff makes the Available span r wait out the backoff of its
// delivery count, from now (UnixNano).
func (p *SharePartition) startBackoff(r *span, now int64) {
	d := p.cfg.Backoff.Delay(r.count)
	if d <= 0 || r.last < p.spso {
		return
	}
	r.deadline = now + int64(d)
	p.stats.Backoffs += r.len()
	if p.availOK && r.deadline < p.minAvail {
		p.minAvail = r.deadline
	}
}

// nextBackoff is the earliest backoff end (math.MaxInt64 when none waits).
func (p *SharePartition) nextBackoff() int64 {
	if !p.availOK {
		p.minAvail = math.MaxInt64
		for k := range p.ranges {
			if r := &p.ranges[k]; r.state == Available && r.deadline != 0 && r.deadline < p.minAvail {
				p.minAvail = r.deadline
			}
		}
		p.availOK = true
	}
	return p.minAvail
}

// endBackoff clears every backoff that ended at or before now and reports
// whether any did (records became acquirable).
func (p *SharePartition) endBackoff(now int64) bool {
	if p.nextBackoff() > now {
		return false
	}
	for k := range p.ranges {
		r := &p.ranges[k]
		if r.state == Available && r.deadline != 0 && r.deadline <= now {
			r.deadline = 0
			p.availFrom = min(p.availFrom, max(r.first, p.spso))
		}
	}
	p.availOK = false
	p.coalesce(0, len(p.ranges)-1)
	return true
}

// NextWake is when the share-partition's one timer must fire: the earlier
// of the next lock deadline and the next redelivery backoff end. ok is
// false when neither is pending.
func (p *SharePartition) NextWake() (time.Time, bool) {
	d, ok := p.NextDeadline()
	if b := p.nextBackoff(); b != math.MaxInt64 && (!ok || b < d.UnixNano()) {
		return time.Unix(0, b), true
	}
	return d, ok
}

// FetchOffset is where the next acquisition at now starts reading the log:
// NextFetchOffset, past records still waiting out a backoff and, with
// key-ordered delivery, past records whose key is held (so the read covers
// what can be taken). Without either it is NextFetchOffset.
func (p *SharePartition) FetchOffset(now time.Time) int64 {
	off := p.NextFetchOffset()
	if p.cfg.KeyOrdered {
		return p.keyedFetchOffset(now.UnixNano(), off)
	}
	if off > p.speo || p.nextBackoff() == math.MaxInt64 {
		return off
	}
	t := now.UnixNano()
	for k := p.search(off); k < len(p.ranges); k++ {
		if r := &p.ranges[k]; r.state == Available && r.deadline <= t {
			return max(r.first, p.spso)
		}
	}
	return p.speo + 1
}

// FullAt is Full for an acquisition at now: nothing inside the window can
// be acquired at now and the window is at its limit.
func (p *SharePartition) FullAt(now time.Time) bool {
	if p.spso < 0 {
		return false
	}
	return p.speo-p.spso+1 >= int64(p.cfg.MaxRecordLocks) && p.FetchOffset(now) > p.speo
}
