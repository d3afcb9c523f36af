package broker

import (
	"errors"
	"fmt"
	"time"

	"sharq/raftmeta"
	"sharq/share"
)

// part returns the share-partition for key, loading its persisted state or
// creating it uninitialised. Callers hold no share-partition lock.
func (st *shareState) part(key sharePartKey) (*sharePart, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if p := st.parts[key]; p != nil {
		return p, nil
	}
	cfg := st.s.shareSettings(key.group).partitionConfig()
	p := &sharePart{key: key}
	var saved share.State
	found, err := st.persister.Load(key.persistKey(), &saved)
	if err != nil {
		return nil, fmt.Errorf("load share-partition %s: %w", key.persistKey(), err)
	}
	if found {
		sp, err := share.Restore(cfg, &saved)
		if err != nil {
			return nil, fmt.Errorf("restore share-partition %s: %w", key.persistKey(), err)
		}
		p.sp = sp
	} else {
		p.sp = share.New(cfg)
	}
	st.parts[key] = p
	return p, nil
}

// pendingWrite is a state snapshot an operation staged under the
// share-partition's lock and must see written (synced if sync) before it
// answers. The zero value writes nothing.
type pendingWrite struct {
	seq  uint64
	sync bool
}

// or merges two pending writes of one share-partition: the later snapshot
// covers the earlier one.
func (w pendingWrite) or(o pendingWrite) pendingWrite {
	return pendingWrite{seq: max(w.seq, o.seq), sync: w.sync || o.sync}
}

// stageLocked snapshots the share-partition's state when an operation asks
// for it. The write itself happens in commit, after p.mu is released, so
// that other members' acquisitions and acks never wait behind a durable
// write (a journal append, or an fsync with log.flush.interval.messages=1).
func (p *sharePart) stageLocked(eff share.Effects) pendingWrite {
	if !eff.Persist && !eff.Durable {
		return pendingWrite{}
	}
	p.sp.AppendState(&p.staged)
	p.stagedSeq++
	return pendingWrite{seq: p.stagedSeq, sync: eff.Durable}
}

// commit returns once the snapshot w (or a later one) is written, and
// durable if w asks for it (Persister.Write with sync). Called without p.mu.
// Writes of one share-partition are serialised under p.wmu and always write
// the latest staged snapshot, so they never go backwards, and operations
// queued behind a write share the next one (group commit).
func (st *shareState) commit(p *sharePart, w pendingWrite) error {
	if w.seq == 0 {
		return nil
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.syncedSeq >= w.seq || (!w.sync && p.writtenSeq >= w.seq) {
		return nil
	}
	p.mu.Lock()
	seq := p.stagedSeq
	p.writing.StartOffset, p.writing.StateEpoch = p.staged.StartOffset, p.staged.StateEpoch
	p.writing.DeliveryCompleteCount = p.staged.DeliveryCompleteCount
	p.writing.Batches = append(p.writing.Batches[:0], p.staged.Batches...)
	p.mu.Unlock()
	if err := st.persister.Write(p.key.persistKey(), &p.writing, w.sync); err != nil {
		return fmt.Errorf("persist share-partition %s: %w", p.key.persistKey(), err)
	}
	p.writtenSeq = seq
	if w.sync {
		p.syncedSeq = seq
	}
	return nil
}

// afterLocked follows up on an operation's effects: wakes parked fetches
// when records became available and re-arms the lock timer.
func (st *shareState) afterLocked(p *sharePart, eff share.Effects) {
	if eff.Available || eff.SPSOMoved {
		p.wakeLocked()
	}
	st.armLocked(p)
}

func (p *sharePart) wakeLocked() {
	for w := range p.waiters {
		select {
		case w.ch <- struct{}{}:
		default:
		}
		delete(p.waiters, w)
	}
}

func (p *sharePart) addWaiter(w *waiter) {
	p.mu.Lock()
	if p.waiters == nil {
		p.waiters = map[*waiter]struct{}{}
	}
	p.waiters[w] = struct{}{}
	p.mu.Unlock()
}

func (p *sharePart) removeWaiter(w *waiter) {
	p.mu.Lock()
	delete(p.waiters, w)
	p.mu.Unlock()
}

// armLocked keeps the one lock timer of the share-partition set for its
// earliest acquisition lock deadline.
func (st *shareState) armLocked(p *sharePart) {
	next, ok := p.sp.NextDeadline()
	if !ok {
		if p.timer != nil {
			p.timer.Stop()
			p.armed = time.Time{}
		}
		return
	}
	if p.timer != nil && p.armed.Equal(next) {
		return
	}
	d := time.Until(next)
	if p.timer == nil {
		p.timer = time.AfterFunc(d, func() { st.expire(p) })
	} else {
		p.timer.Stop()
		p.timer.Reset(d)
	}
	p.armed = next
}

// expire is the lock timer: expired acquisitions go back to Available (or
// are archived at the delivery limit).
func (st *shareState) expire(p *sharePart) {
	p.mu.Lock()
	p.armed = time.Time{}
	var eff share.Effects
	p.release, eff = p.sp.ExpireLocks(time.Now(), p.release[:0])
	w := p.stageLocked(eff)
	st.afterLocked(p, eff)
	p.mu.Unlock()
	if err := st.commit(p, w); err != nil {
		st.s.logger.Error("persist after lock expiry", "err", err)
	}
}

// releaseMember releases what a member holds in the given share-partitions
// (its share session closed or its connection dropped).
func (st *shareState) releaseMember(member string, keys []sharePartKey) {
	for _, k := range keys {
		st.mu.Lock()
		p := st.parts[k]
		st.mu.Unlock()
		if p == nil {
			continue
		}
		p.mu.Lock()
		var eff share.Effects
		p.release, eff = p.sp.ReleaseMember(member, time.Now(), p.release[:0])
		w := p.stageLocked(eff)
		st.afterLocked(p, eff)
		p.mu.Unlock()
		if err := st.commit(p, w); err != nil {
			st.s.logger.Error("persist after member release", "err", err)
		}
	}
}

// initLocked initialises an uninitialised share-partition from
// share.auto.offset.reset, as the first fetch on the leader does in Kafka.
// The caller commits the returned write before answering.
func (st *shareState) initLocked(p *sharePart, pt *partition, settings shareSettings) pendingWrite {
	if p.sp.Initialised() {
		return pendingWrite{}
	}
	reset, dur, err := share.ParseAutoOffsetReset(settings.autoOffsetReset)
	if err != nil {
		reset = share.ResetLatest
	}
	b := share.Bounds{LogStart: pt.log().LogStartOffset(), HighWatermark: pt.log().HighWatermark()}
	b.LastStable = b.HighWatermark
	byDuration := int64(-1)
	if reset == share.ResetByDuration {
		off, _, err := pt.log().OffsetForTimestamp(time.Now().Add(-dur).UnixMilli())
		if err == nil {
			byDuration = off
		}
	}
	eff := p.sp.Initialise(share.ResolveStartOffset(reset, b, byDuration), 0)
	return p.stageLocked(eff)
}

// errUnknownSharePartition: a partition this node does not lead.
var errUnknownSharePartition = errors.New("unknown share-partition")

// resolveTopic finds a topic by id in the image.
func resolveTopic(img *raftmeta.Image, id [16]byte) *raftmeta.Topic {
	return img.TopicsByID[raftmeta.UUID(id)]
}

// topicDeleted forgets every share-partition of a deleted topic, in memory
// and in the state store (Kafka deletes share state with the topic).
func (st *shareState) topicDeleted(id raftmeta.UUID) {
	st.mu.Lock()
	var keys []sharePartKey
	for k := range st.parts {
		if k.topicID == id {
			keys = append(keys, k)
		}
	}
	st.mu.Unlock()
	for _, k := range keys {
		st.deleteState(k)
	}
	groups, err := st.persister.Groups()
	if err != nil {
		st.s.logger.Error("list share groups", "err", err)
		return
	}
	for _, g := range groups {
		stored, err := st.persister.Keys(g, nil)
		if err != nil {
			st.s.logger.Error("list share state", "group", g, "err", err)
			continue
		}
		for _, k := range stored {
			if k.TopicID == [16]byte(id) {
				if err := st.persister.Delete(k); err != nil {
					st.s.logger.Error("delete share state", "key", k.String(), "err", err)
				}
			}
		}
	}
}

// holdsAny reports whether member holds acquired records in any of keys.
func (st *shareState) holdsAny(member string, keys []sharePartKey) bool {
	for _, k := range keys {
		st.mu.Lock()
		p := st.parts[k]
		st.mu.Unlock()
		if p == nil {
			continue
		}
		p.mu.Lock()
		held := p.sp.Holds(member)
		p.mu.Unlock()
		if held {
			return true
		}
	}
	return false
}
