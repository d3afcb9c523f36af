package share

// Window appends to dst the in-flight window [SPSO, SPEO] as it would be
// drawn: the ranges overlapping it, clipped to it, in offset order, at most
// limit of them (limit <= 0: all). total is the number of ranges in the
// window, so a caller that capped the copy can say how many it left out.
//
// Acquired ranges left below SPSO after the log start offset jumped past
// them are not part of the window and are not reported. An uninitialised
// share-partition has no window (dst, 0).
//
// With key-ordered delivery, Available ranges are split into runs that can
// be acquired now and runs whose keys are held (KeyHeld).
//
// Like every method it runs under the caller's per-share-partition lock;
// it changes no state (only the key scan's scratch), so a monitoring page
// can call it without side effects.
func (p *SharePartition) Window(dst []InFlightRange, limit int) (_ []InFlightRange, total int) {
	if p.spso < 0 || p.speo < p.spso {
		return dst, 0
	}
	copied := 0
	for k := p.search(p.spso); k < len(p.ranges); k++ {
		r := &p.ranges[k]
		if r.first > p.speo {
			break
		}
		total++
		if limit > 0 && copied >= limit {
			continue
		}
		v := r.view()
		v.FirstOffset = max(v.FirstOffset, p.spso)
		v.LastOffset = min(v.LastOffset, p.speo)
		dst = append(dst, v)
		copied++
	}
	if p.cfg.KeyOrdered {
		n := len(dst) - copied
		dst = append(dst[:n], p.keyHeldViews(dst[n:])...)
	}
	return dst, total
}
