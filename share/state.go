package share

import (
	"fmt"
	"math"
)

// StateBatch is one persisted range (Kafka's PersisterStateBatch).
type StateBatch struct {
	FirstOffset   int64
	LastOffset    int64
	State         RecordState // Available, Acknowledged, Archiving or Archived; never Acquired
	DeliveryCount int16
}

// State is what a Persister stores per share-partition: what Kafka's
// ShareSnapshot record holds (minus leader epoch and timestamps, which a
// single-node store does not need).
type State struct {
	StartOffset           int64 // SPSO; -1 = uninitialised
	StateEpoch            int32
	DeliveryCompleteCount int64
	Batches               []StateBatch // ascending, non-overlapping, all >= StartOffset
}

// AppendState fills st (its Batches reused) with the persistable state and
// clears the dirty flag. Acquired ranges are written as the state they had
// before the acquisition (Available with count-1): Kafka never persists an
// acquisition, so after a restart they are delivered again with the count
// that was last persisted. With persisted delivery counts
// (sharq.share.delivery.count.persist) they are written Available with the
// acquisition's count: the delivery is counted even if the broker dies. Available ranges with count 0 are left out: on
// load, offsets between SPSO and the last batch without a batch of their
// own are Available with count 0 (Kafka's "gap window").
func (p *SharePartition) AppendState(st *State) {
	st.StartOffset, st.StateEpoch = p.spso, p.stateEpoch
	st.DeliveryCompleteCount = 0
	st.Batches = st.Batches[:0]
	p.dirty = false
	if p.spso < 0 {
		return
	}
	for k := p.search(p.spso); k < len(p.ranges); k++ {
		r := &p.ranges[k]
		b := StateBatch{FirstOffset: max(r.first, p.spso), LastOffset: r.last, State: r.state, DeliveryCount: r.count}
		if b.State == Acquired {
			b.State = Available
			if !p.cfg.PersistCounts {
				b.DeliveryCount = max(r.count-1, 0)
			}
		}
		if b.State.Terminal() {
			st.DeliveryCompleteCount += b.LastOffset - b.FirstOffset + 1
		}
		if b.State == Available && b.DeliveryCount == 0 {
			continue
		}
		if n := len(st.Batches); n > 0 {
			prev := &st.Batches[n-1]
			if prev.LastOffset+1 == b.FirstOffset && prev.State == b.State && prev.DeliveryCount == b.DeliveryCount {
				prev.LastOffset = b.LastOffset
				continue
			}
		}
		st.Batches = append(st.Batches, b)
	}
}

// Validate checks the structural rules a decoded or handed-in State must
// satisfy before Restore trusts it.
func (st *State) Validate() error {
	if st.StartOffset < -1 {
		return fmt.Errorf("%w: start offset %d", ErrCorruptState, st.StartOffset)
	}
	prev := st.StartOffset - 1
	for i, b := range st.Batches {
		if st.StartOffset < 0 {
			return fmt.Errorf("%w: batches without a start offset", ErrCorruptState)
		}
		if b.FirstOffset <= prev || b.LastOffset < b.FirstOffset || b.LastOffset == math.MaxInt64 {
			return fmt.Errorf("%w: batch %d (%d-%d) out of order", ErrCorruptState, i, b.FirstOffset, b.LastOffset)
		}
		switch b.State {
		case Available, Acknowledged, Archiving, Archived:
		default:
			return fmt.Errorf("%w: batch %d state %d", ErrCorruptState, i, b.State)
		}
		if b.DeliveryCount < 0 {
			return fmt.Errorf("%w: batch %d delivery count %d", ErrCorruptState, i, b.DeliveryCount)
		}
		prev = b.LastOffset
	}
	return nil
}

// Restore rebuilds a share-partition from persisted state (rehydration
// after a restart or a leader move): nothing is Acquired, offsets between
// SPSO and the last batch without state are Available with count 0, and
// the window ends at the last persisted batch.
func Restore(cfg Config, st *State) (*SharePartition, error) {
	if err := st.Validate(); err != nil {
		return nil, err
	}
	p := New(cfg)
	if st.StartOffset < 0 {
		p.stateEpoch = st.StateEpoch
		return p, nil
	}
	p.spso, p.speo, p.stateEpoch, p.availFrom = st.StartOffset, st.StartOffset-1, st.StateEpoch, st.StartOffset
	for _, b := range st.Batches {
		if b.FirstOffset > p.speo+1 {
			p.appendSpan(span{first: p.speo + 1, last: b.FirstOffset - 1, state: Available})
		}
		s := span{first: b.FirstOffset, last: b.LastOffset, state: b.State, count: b.DeliveryCount}
		if s.state == Archiving {
			// Its dead-letter write is re-driven by the Manager; the cause
			// is not persisted, so it is Kafka's on resume: at the delivery
			// limit "exceeded", else "rejected".
			s.cause = CauseRejected
			if int(s.count) >= p.cfg.DeliveryCountLimit {
				s.cause = CauseDeliveryCountExceeded
			}
		}
		p.appendSpan(s)
	}
	p.advance()
	return p, nil
}
