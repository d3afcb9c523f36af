package share

import "errors"

// Heartbeat serves a ShareGroupHeartbeat and keeps the member session
// timer armed.
func (m *Manager) Heartbeat(req HeartbeatRequest, topics TopicLookup, isOtherGroup bool) (HeartbeatResponse, error) {
	cfg := m.settings(req.GroupID).GroupConfig()
	m.mu.Lock()
	defer m.mu.Unlock()
	hb, err := m.coord.Heartbeat(m.clock.Now(), req, cfg, topics, isOtherGroup)
	m.armExpiryLocked()
	return hb, err
}

// armExpiryLocked keeps the member session timer set for the earliest
// session deadline. Called with m.mu held.
func (m *Manager) armExpiryLocked() {
	next, ok := m.coord.NextSessionDeadline()
	if !ok {
		if m.expiry != nil {
			m.expiry.Stop()
		}
		return
	}
	d := next.Sub(m.clock.Now())
	if m.expiry == nil {
		m.expiry = m.clock.AfterFunc(d, m.expireSessions)
		return
	}
	m.expiry.Reset(d)
}

func (m *Manager) expireSessions() {
	m.mu.Lock()
	gone := m.coord.ExpireSessions(m.clock.Now())
	m.armExpiryLocked()
	m.mu.Unlock()
	for _, gm := range gone {
		m.logger.Info("share group member session expired", "group", gm[0], "member", gm[1])
	}
}

// WithCoordinator runs f with the coordinator locked (describe, list,
// metrics). f must not block or call back into the Manager.
func (m *Manager) WithCoordinator(f func(c *Coordinator)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m.coord)
}

// StoredKeys lists the share-partitions of group with persisted state.
func (m *Manager) StoredKeys(group string) ([]Key, error) { return m.persister.Keys(group, nil) }

// Offsets reports a share-partition's live SPSO and lag (-1 when its log
// is not here), from memory when it is loaded, else from its persisted
// state.
func (m *Manager) Offsets(k Key) (spso, lag int64, ok bool) {
	return m.offsets(k, false)
}

// KafkaOffsets is Offsets with the start offset Kafka's
// DescribeShareGroupOffsets shows: the persisted one, which lags the live
// SPSO by one write and is absent (ok false) before the first; see
// part.kafkaStart.
func (m *Manager) KafkaOffsets(k Key) (start, lag int64, ok bool) {
	return m.offsets(k, true)
}

func (m *Manager) offsets(k Key, kafka bool) (spso, lag int64, ok bool) {
	var sp *SharePartition
	start := int64(-1)
	if p := m.loaded(k); p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		sp, start = p.sp, p.kafkaStart
		if !kafka {
			start = sp.StartOffset()
		}
	} else {
		var saved State
		found, err := m.persister.Load(k, &saved)
		if err != nil || !found {
			return -1, -1, false
		}
		restored, err := Restore(Config{}, &saved)
		if err != nil {
			return -1, -1, false
		}
		sp, start = restored, restored.StartOffset()
	}
	if !sp.Initialised() || start < 0 {
		return -1, -1, false
	}
	lag = -1
	if lg, _ := m.logs.Partition(k.TopicID, k.Partition); lg != nil {
		if hw := lg.HighWatermark(); hw >= 0 {
			lag = sp.Lag(hw)
		}
	}
	return start, lag, true
}

// PrepareReset checks that AlterShareGroupOffsets may reset group's
// offsets (no members: ErrNonEmptyGroup) and creates the group if absent.
func (m *Manager) PrepareReset(group string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g := m.coord.Group(group); g != nil && len(g.Members) > 0 {
		return ErrNonEmptyGroup
	}
	m.coord.EnsureGroup(group)
	return nil
}

// PrepareDelete checks that DeleteShareGroupOffsets may delete group's
// state: the group or its state exists (ErrGroupIDNotFound) and has no
// members (ErrNonEmptyGroup).
func (m *Manager) PrepareDelete(group string, stored int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.coord.Group(group)
	switch {
	case g == nil && stored == 0:
		return ErrGroupIDNotFound
	case g != nil && len(g.Members) > 0:
		return ErrNonEmptyGroup
	}
	return nil
}

// ResetOffset moves a share-partition's start offset, durably, and returns
// the partition's error code.
func (m *Manager) ResetOffset(k Key, offset int64) int16 {
	p, err := m.part(k)
	if errors.Is(err, ErrStateLost) {
		// A share-partition whose state was lost to journal corruption is
		// refused until an operator resets it, which is this.
		if c, ok := m.persister.(interface{ ClearLost(Key) error }); ok {
			if err = c.ClearLost(k); err == nil {
				p, err = m.part(k)
			}
		}
	}
	if err != nil {
		m.logger.Error("share-partition", "err", err)
		return codeKafkaStorage
	}
	p.mu.Lock()
	var eff Effects
	if p.sp.Initialised() {
		eff = p.sp.Reset(offset)
	} else {
		eff = p.sp.Initialise(offset, 0)
	}
	eff.Durable = true
	w := p.stageLocked(eff)
	// Kafka's reset initialises the persisted state with the new offset.
	p.kafkaStart = p.sp.StartOffset()
	m.afterLocked(p, eff)
	p.mu.Unlock()
	if err := m.commit(p, w); err != nil {
		m.logger.Error("persist share offset reset", "err", err)
		return codeKafkaStorage
	}
	return 0
}

// DeleteState forgets a share-partition: memory and persisted state.
func (m *Manager) DeleteState(k Key) int16 {
	m.mu.Lock()
	p := m.parts[k]
	delete(m.parts, k)
	if g := m.coord.Group(k.Group); g != nil {
		g.ForgetInitialized(k.TopicID)
	}
	m.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		if p.timer != nil {
			p.timer.Stop()
		}
		p.mu.Unlock()
	}
	if err := m.persister.Delete(k); err != nil {
		m.logger.Error("delete share-partition state", "err", err)
		return codeKafkaStorage
	}
	return 0
}

// TopicDeleted forgets every share-partition of a deleted topic, in memory
// and in the state store (Kafka deletes share state with the topic).
func (m *Manager) TopicDeleted(id [16]byte) {
	m.mu.Lock()
	var keys []Key
	for k := range m.parts {
		if k.TopicID == id {
			keys = append(keys, k)
		}
	}
	m.mu.Unlock()
	for _, k := range keys {
		m.DeleteState(k)
	}
	groups, err := m.persister.Groups()
	if err != nil {
		m.logger.Error("list share groups", "err", err)
		return
	}
	for _, g := range groups {
		stored, err := m.persister.Keys(g, nil)
		if err != nil {
			m.logger.Error("list share state", "group", g, "err", err)
			continue
		}
		for _, k := range stored {
			if k.TopicID == id {
				if err := m.persister.Delete(k); err != nil {
					m.logger.Error("delete share state", "key", k.String(), "err", err)
				}
			}
		}
	}
}

// DeleteGroup deletes an empty share group and its share-partition state.
func (m *Manager) DeleteGroup(id string) error {
	m.mu.Lock()
	if err := m.coord.DeleteGroup(id); err != nil {
		m.mu.Unlock()
		return err
	}
	var keys []Key
	for k := range m.parts {
		if k.Group == id {
			keys = append(keys, k)
		}
	}
	m.mu.Unlock()
	for _, k := range keys {
		m.DeleteState(k)
	}
	return m.persister.DeleteGroup(id)
}

// PartitionView is a copy of one loaded share-partition's state, for
// metrics and the /ui page.
type PartitionView struct {
	Key         Key
	Initialised bool
	SPSO, SPEO  int64
	StateEpoch  int32
	Lag         int64 // -1 unknown
	Summary     Summary
	Stats       Stats
	// Window is the in-flight window (at most the limit asked for) and
	// WindowTotal its full length in ranges.
	Window      []InFlightRange
	WindowTotal int
}

// Partitions snapshots every loaded share-partition, each under its own
// lock alone (never with m.mu), with at most windowLimit ranges of its
// in-flight window (0: none).
func (m *Manager) Partitions(windowLimit int) []PartitionView {
	m.mu.Lock()
	parts := make([]*part, 0, len(m.parts))
	for _, p := range m.parts {
		parts = append(parts, p)
	}
	m.mu.Unlock()
	out := make([]PartitionView, 0, len(parts))
	for _, p := range parts {
		v := PartitionView{Key: p.key, SPSO: -1, SPEO: -1, Lag: -1}
		hw := int64(-1)
		if lg, _ := m.logs.Partition(p.key.TopicID, p.key.Partition); lg != nil {
			hw = lg.HighWatermark()
		}
		p.mu.Lock()
		if p.sp.Initialised() {
			v.Initialised = true
			v.SPSO, v.SPEO, v.StateEpoch = p.sp.StartOffset(), p.sp.EndOffset(), p.sp.StateEpoch()
			v.Summary = p.sp.Summary()
			if hw >= 0 {
				v.Lag = p.sp.Lag(hw)
			}
			if windowLimit > 0 {
				v.Window, v.WindowTotal = p.sp.Window(nil, windowLimit)
			}
		}
		v.Stats = p.sp.Stats()
		p.mu.Unlock()
		out = append(out, v)
	}
	return out
}
