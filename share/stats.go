package share

// Stats are cumulative counters of one share-partition, in offsets (one
// record per offset; offsets with no record, compaction gaps acquired
// inside a span, count too, since the lock manager tracks offsets and the
// client acknowledges them). They live in memory only: a share-partition
// rebuilt from its persisted state (broker restart) starts again at zero.
type Stats struct {
	// Deliveries counts offsets acquired, every acquisition (first
	// delivery and redeliveries).
	Deliveries int64
	// Redeliveries counts offsets acquired with a delivery count > 1.
	Redeliveries int64
	// ArchivedByLimit counts offsets archived on release or lock expiry
	// because their delivery count reached share.delivery.count.limit.
	ArchivedByLimit int64
	// Rejected counts offsets acknowledged with Reject (not Gap).
	Rejected int64
	// LockExpiries counts offsets whose acquisition lock expired.
	LockExpiries int64
	// Backoffs counts offsets made to wait out a redelivery backoff.
	Backoffs int64
}

// Stats returns the cumulative counters.
func (p *SharePartition) Stats() Stats { return p.stats }

// acquired counts n offsets acquired with delivery count count.
func (s *Stats) acquired(n int64, count int16) {
	s.Deliveries += n
	if count > 1 {
		s.Redeliveries += n
	}
}

// countArchivedByLimit is called for an Acquired range about to be
// archived on release or expiry. Ranges left below SPSO by a log start jump
// are archived whatever their count; they are not counted here.
func (p *SharePartition) countArchivedByLimit(r *span) {
	if r.last >= p.spso && int(r.count) >= p.cfg.DeliveryCountLimit {
		p.stats.ArchivedByLimit += r.len()
	}
}

// countRejected counts a Reject acknowledgement of [a, b]. Only tracked
// offsets count: a batch reaching below SPSO may span offsets no longer
// tracked (ackRange skips them).
func (p *SharePartition) countRejected(t AckType, a, b int64) {
	if t != AckReject {
		return
	}
	for k := p.search(a); k < len(p.ranges) && p.ranges[k].first <= b; k++ {
		r := &p.ranges[k]
		p.stats.Rejected += min(r.last, b) - max(r.first, a) + 1
	}
}
