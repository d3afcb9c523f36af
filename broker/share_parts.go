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

// persistLocked writes the share-partition's state when an operation asks
// for it; durable ones are synced before the caller answers.
func (st *shareState) persistLocked(p *sharePart, eff share.Effects) error {
	if !eff.Persist && !eff.Durable {
		return nil
	}
	p.state = share.State{}
	p.sp.AppendState(&p.state)
	if err := st.persister.Write(p.key.persistKey(), &p.state, eff.Durable); err != nil {
		return fmt.Errorf("persist share-partition %s: %w", p.key.persistKey(), err)
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
	defer p.mu.Unlock()
	p.armed = time.Time{}
	var eff share.Effects
	p.release, eff = p.sp.ExpireLocks(time.Now(), p.release[:0])
	if err := st.persistLocked(p, eff); err != nil {
		st.s.logger.Error("persist after lock expiry", "err", err)
	}
	st.afterLocked(p, eff)
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
		if err := st.persistLocked(p, eff); err != nil {
			st.s.logger.Error("persist after member release", "err", err)
		}
		st.afterLocked(p, eff)
		p.mu.Unlock()
	}
}

// initLocked initialises an uninitialised share-partition from
// share.auto.offset.reset, as the first fetch on the leader does in Kafka.
func (st *shareState) initLocked(p *sharePart, pt *partition, settings shareSettings) error {
	if p.sp.Initialised() {
		return nil
	}
	reset, dur, err := share.ParseAutoOffsetReset(settings.autoOffsetReset)
	if err != nil {
		reset = share.ResetLatest
	}
	b := share.Bounds{LogStart: pt.log.LogStartOffset(), HighWatermark: pt.log.HighWatermark()}
	b.LastStable = b.HighWatermark
	byDuration := int64(-1)
	if reset == share.ResetByDuration {
		off, _, err := pt.log.OffsetForTimestamp(time.Now().Add(-dur).UnixMilli())
		if err == nil {
			byDuration = off
		}
	}
	eff := p.sp.Initialise(share.ResolveStartOffset(reset, b, byDuration), 0)
	return st.persistLocked(p, eff)
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
