package share

import (
	"fmt"
	"math"
	"time"
)

// Acknowledge applies one partition's acknowledgement batches for member,
// atomically: on any error nothing changed. Errors: ErrInvalidRequest
// (malformed batches, offsets past SPEO), ErrInvalidRecordState (offsets
// not Acquired by member, renew disabled, batch record not found).
func (p *SharePartition) Acknowledge(member string, now time.Time, batches []AckBatch) (Effects, error) {
	var eff Effects
	if p.spso < 0 {
		return eff, ErrNotInitialised
	}
	if err := p.validateAcks(member, batches); err != nil {
		return eff, err
	}
	tnow := now.UnixNano()
	deadline := tnow + int64(p.cfg.RecordLockDuration)
	for bi := range batches {
		ab := &batches[bi]
		if len(ab.Types) == 1 {
			p.ackRange(ab.FirstOffset, ab.LastOffset, ab.Types[0], tnow, deadline, &eff)
			continue
		}
		// Per-offset types: apply runs of equal types as ranges.
		start := 0
		for i := 1; i <= len(ab.Types); i++ {
			if i == len(ab.Types) || ab.Types[i] != ab.Types[start] {
				p.ackRange(ab.FirstOffset+int64(start), ab.FirstOffset+int64(i-1), ab.Types[start], tnow, deadline, &eff)
				start = i
			}
		}
	}
	if p.advance() {
		eff.SPSOMoved = true
	}
	if eff.Persist {
		p.dirty = true
	}
	return eff, nil
}

// checkAckBatches is the one structural check of a partition's
// acknowledgement batches (ordered, non-overlapping, one type or one per
// offset, known types; RENEW only in a renew request): ErrInvalidRequest,
// as Kafka's handler answers before it touches record state.
func checkAckBatches(batches []AckBatch, renewAllowed bool) error {
	prevLast := int64(math.MinInt64)
	for bi := range batches {
		ab := &batches[bi]
		if ab.FirstOffset > ab.LastOffset || ab.FirstOffset < 0 {
			return fmt.Errorf("%w: batch %d-%d", ErrInvalidRequest, ab.FirstOffset, ab.LastOffset)
		}
		if ab.FirstOffset <= prevLast {
			return fmt.Errorf("%w: batches not ascending at %d", ErrInvalidRequest, ab.FirstOffset)
		}
		prevLast = ab.LastOffset
		if len(ab.Types) == 0 || (len(ab.Types) > 1 && int64(len(ab.Types)) != ab.LastOffset-ab.FirstOffset+1) {
			return fmt.Errorf("%w: %d acknowledge types for %d-%d", ErrInvalidRequest, len(ab.Types), ab.FirstOffset, ab.LastOffset)
		}
		for _, t := range ab.Types {
			if t < AckGap || t > AckRenew || (t == AckRenew && !renewAllowed) {
				return fmt.Errorf("%w: acknowledge type %d", ErrInvalidRequest, t)
			}
		}
	}
	return nil
}

func (p *SharePartition) validateAcks(member string, batches []AckBatch) error {
	// Whether RENEW may appear is the request's business (the Manager
	// checks it with the request's IsRenewAck first).
	if err := checkAckBatches(batches, true); err != nil {
		return err
	}
	maxTracked := p.speo
	if n := len(p.ranges); n > 0 {
		maxTracked = max(maxTracked, p.ranges[n-1].last)
	}
	for bi := range batches {
		ab := &batches[bi]
		if p.cfg.RenewDisabled {
			for _, t := range ab.Types {
				if t == AckRenew {
					return fmt.Errorf("%w: renew acknowledgements are disabled", ErrInvalidRecordState)
				}
			}
		}
		if len(p.ranges) == 0 {
			// Kafka: no floor batch in the cache ("Batch record not
			// found. The request batch offsets are not found in the
			// cache."), e.g. offsets never acquired.
			return fmt.Errorf("%w: batch record %d-%d not found", ErrInvalidRecordState, ab.FirstOffset, ab.LastOffset)
		}
		if ab.LastOffset > maxTracked {
			return fmt.Errorf("%w: offsets %d-%d beyond the in-flight end %d", ErrInvalidRequest, ab.FirstOffset, ab.LastOffset, maxTracked)
		}
		k := p.search(ab.FirstOffset)
		if ab.LastOffset < p.spso && (k == len(p.ranges) || p.ranges[k].first > ab.LastOffset) {
			return fmt.Errorf("%w: batch record %d-%d not found", ErrInvalidRecordState, ab.FirstOffset, ab.LastOffset)
		}
		for ; k < len(p.ranges) && p.ranges[k].first <= ab.LastOffset; k++ {
			r := &p.ranges[k]
			if r.state != Acquired {
				return fmt.Errorf("%w: offsets %d-%d are %s", ErrInvalidRecordState, max(r.first, ab.FirstOffset), min(r.last, ab.LastOffset), r.state)
			}
			if r.owner != member {
				return fmt.Errorf("%w: member %s is not the owner of offsets %d-%d", ErrInvalidRecordState, member, max(r.first, ab.FirstOffset), min(r.last, ab.LastOffset))
			}
		}
	}
	return nil
}

// ackRange applies one type to [a, b] whose tracked offsets were validated
// Acquired by the member; untracked offsets below SPSO are skipped.
func (p *SharePartition) ackRange(a, b int64, t AckType, now, deadline int64, eff *Effects) {
	if t == AckRenew {
		i := p.splitAt(a)
		j := p.splitAt(b + 1)
		for k := i; k < j; k++ {
			p.ranges[k].deadline = deadline
		}
		p.deadlineOK = false
		p.coalesce(i, j-1)
		return
	}
	eff.Persist = true
	switch t {
	case AckAccept:
		p.transition(a, b, Acknowledged, 0, "", 0)
		eff.Durable = true
	case AckReject, AckGap:
		p.countRejected(t, a, b)
		if t == AckReject && p.cfg.DLQ {
			p.archiving(a, b, CauseRejected)
			eff.Archiving = true
		} else {
			p.transition(a, b, Archived, 0, "", 0)
		}
		eff.Durable = true
	case AckRelease:
		i := p.splitAt(a)
		j := p.splitAt(b + 1)
		for k := i; k < j; k++ {
			r := &p.ranges[k]
			if r.deadline == p.minDeadline {
				p.deadlineOK = false
			}
			r.state, r.owner, r.deadline = p.releaseState(r), "", 0
			if r.state == Available {
				eff.Available = true
				p.availFrom = min(p.availFrom, max(r.first, p.spso))
				p.startBackoff(r, now)
			} else {
				eff.Archiving = eff.Archiving || r.state == Archiving
				// Archived at the delivery limit: must not come back after a crash.
				eff.Durable = true
			}
		}
		p.coalesce(i, j-1)
	}
}

// ExpireLocks releases every range whose lock deadline is <= now: Available
// again, or Archived when the delivery count reached the limit (or the
// offsets fell below SPSO). What changed is appended to dst.
func (p *SharePartition) ExpireLocks(now time.Time, dst []InFlightRange) ([]InFlightRange, Effects) {
	t := now.UnixNano()
	var eff Effects
	if d, ok := p.NextDeadline(); ok && d.UnixNano() <= t {
		dst, eff = p.releaseWhere(func(r *span) bool { return r.deadline <= t }, false, t, dst)
	}
	if p.endBackoff(t) {
		eff.Available = true
	}
	return dst, eff
}

// ReleaseMember releases everything member holds (its share session closed,
// its connection dropped): Available again with the delivery count
// decremented, as Kafka does, since those records may never have reached
// the client; offsets below SPSO are archived. Nothing is archived for the
// delivery limit on this path (the count went down).
func (p *SharePartition) ReleaseMember(member string, now time.Time, dst []InFlightRange) ([]InFlightRange, Effects) {
	_ = now // the release does not depend on time; kept for a uniform API
	return p.releaseWhere(func(r *span) bool { return r.owner == member }, true, 0, dst)
}

func (p *SharePartition) releaseWhere(match func(*span) bool, decrement bool, now int64, dst []InFlightRange) ([]InFlightRange, Effects) {
	var eff Effects
	changed := false
	for k := range p.ranges {
		r := &p.ranges[k]
		if r.state != Acquired || !match(r) {
			continue
		}
		changed = true
		if decrement {
			// With persisted delivery counts the acquisition was counted
			// durably and stays counted: a consumer that crashes on a
			// record (its connection drops) uses up an attempt too.
			if r.count > 0 && !p.cfg.PersistCounts {
				r.count--
			}
			r.state = Available
			if r.last < p.spso {
				r.state = Archived
			}
		} else {
			p.stats.LockExpiries += r.len()
			r.state = p.releaseState(r)
			// Archived (or Archiving) at the delivery limit: written through
			// (no client waits on it, but a crash must not hand the record
			// out again, nor lose its dead-letter write).
			eff.Durable = eff.Durable || r.state == Archived || r.state == Archiving
			eff.Archiving = eff.Archiving || r.state == Archiving
		}
		r.owner, r.deadline = "", 0
		if r.state == Available {
			eff.Available = true
			p.availFrom = min(p.availFrom, max(r.first, p.spso))
			if !decrement {
				// A lock expiry is a failed delivery; a closed session is not.
				p.startBackoff(r, now)
			}
		}
		dst = append(dst, r.view())
	}
	if !changed {
		return dst, eff
	}
	p.deadlineOK = false
	p.coalesce(0, len(p.ranges)-1)
	eff.Persist = true
	p.dirty = true
	if p.advance() {
		eff.SPSOMoved = true
	}
	return dst, eff
}

// releaseState is where an Acquired range goes on release or expiry:
// Available, or at the delivery limit Archived, or Archiving (cause set)
// when the group has a dead-letter queue.
func (p *SharePartition) releaseState(r *span) RecordState {
	if r.last < p.spso {
		p.countArchivedByLimit(r)
		return Archived
	}
	if int(r.count) >= p.cfg.DeliveryCountLimit {
		p.countArchivedByLimit(r)
		if p.cfg.DLQ {
			r.cause = CauseDeliveryCountExceeded
			return Archiving
		}
		return Archived
	}
	return Available
}
