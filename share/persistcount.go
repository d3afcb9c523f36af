package share

// Delivery counts persisted at acquisition (sharq.share.delivery.count.persist).
//
// Kafka never persists an acquisition: after a crash the records it had
// handed out come back with the count last persisted, so a record that
// crashes its consumer (or the broker) can be delivered more times than
// share.delivery.count.limit. With this mode an acquisition's Effects are
// Persist+Durable and AppendState writes Acquired ranges with their new
// count (as Available), so the Manager makes the count durable (the
// journal write) before it returns the records. After a restart a record
// whose persisted count reached the limit was delivered that many times
// already: the next acquisition archives it (Archiving with a dead-letter
// queue) instead of delivering it once more. A closed session or dropped
// connection (ReleaseMember) does not decrement the count in this mode, as
// Kafka does otherwise: a consumer process that crashes on a poison record
// uses up its attempts too (a record the client never received may be
// counted once too often, never too rarely).

// archiveSpent archives the Available ranges whose delivery count reached
// the limit (they come from a restart or a lowered limit).
func (p *SharePartition) archiveSpent(eff *Effects) {
	for k := p.search(p.spso); k < len(p.ranges); k++ {
		r := &p.ranges[k]
		if r.state != Available || int(r.count) < p.cfg.DeliveryCountLimit || r.last < p.spso {
			continue
		}
		first, last := max(r.first, p.spso), r.last
		p.stats.ArchivedByLimit += last - first + 1
		if p.cfg.DLQ {
			// archiving() takes Acquired ranges; set the state directly.
			i := p.splitAt(first)
			j := p.splitAt(last + 1)
			for x := i; x < j; x++ {
				q := &p.ranges[x]
				q.state, q.cause, q.deadline = Archiving, CauseDeliveryCountExceeded, 0
			}
			p.availOK = false
			p.coalesce(i, j-1)
			eff.Archiving = true
		} else {
			p.transition(first, last, Archived, 0, "", 0)
		}
		eff.Persist, eff.Durable = true, true
		k = p.search(last+1) - 1
	}
}
