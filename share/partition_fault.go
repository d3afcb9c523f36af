package share

import "time"

// Faults injected by the control API (manager_faults.go): the same state
// changes a lock timeout or a RELEASE acknowledgement makes, brought about
// now and regardless of which member holds the records.

// ExpireLocksNow expires the acquisition locks of offsets (nil: every
// Acquired record) as if their lock duration had passed: Available again
// (after any redelivery backoff), or Archived/Archiving at the delivery
// limit, counted as lock expiries. What changed is appended to dst.
func (p *SharePartition) ExpireLocksNow(offsets []int64, now time.Time, dst []InFlightRange) ([]InFlightRange, Effects) {
	if offsets == nil {
		return p.releaseWhere(func(*span) bool { return true }, false, now.UnixNano(), dst)
	}
	want := p.isolate(offsets)
	dst, eff := p.releaseWhere(func(r *span) bool { _, ok := want[r.first]; return ok && r.first == r.last }, false, now.UnixNano(), dst)
	p.coalesce(0, len(p.ranges)-1)
	return dst, eff
}

// Redeliver releases the Acquired records among offsets (nil: all) as a
// RELEASE acknowledgement from their owner would: Available at once
// (after any redelivery backoff) with their delivery count kept, so the
// next delivery is counted one more; the owner's later acknowledgement of
// them fails with INVALID_RECORD_STATE, as after a lost lock. It returns
// how many records it released.
func (p *SharePartition) Redeliver(offsets []int64, now time.Time) (int64, Effects) {
	var eff Effects
	var n int64
	release := func(a, b int64) {
		p.ackRange(a, b, AckRelease, now.UnixNano(), 0, &eff)
		n += b - a + 1
	}
	if offsets == nil {
		for k := 0; k < len(p.ranges); k++ {
			if r := p.ranges[k]; r.state == Acquired {
				release(r.first, r.last)
				k = p.search(r.last) // ackRange may have merged ranges
			}
		}
	} else {
		for _, o := range offsets {
			if k := p.search(o); k < len(p.ranges) && p.ranges[k].first <= o && p.ranges[k].state == Acquired {
				release(o, o)
			}
		}
	}
	if n > 0 {
		if p.advance() {
			eff.SPSOMoved = true
		}
		p.dirty = true
	}
	return n, eff
}

// isolate splits the ranges so that each tracked offset of offsets is a
// range of its own, and returns the offsets as a set.
func (p *SharePartition) isolate(offsets []int64) map[int64]struct{} {
	want := make(map[int64]struct{}, len(offsets))
	for _, o := range offsets {
		want[o] = struct{}{}
		p.splitAt(o)
		p.splitAt(o + 1)
	}
	return want
}
