package share

// Share-group faults, injected through the control API (sharq ctl share
// ...; docs/faults.md): expire acquisition locks now, force a redelivery,
// evict a share session, fail the next ShareAcknowledge of chosen offsets,
// fail the next dead-letter writes. Each changes state the way the real
// event does (a lock timeout, a RELEASE, a session eviction, an ack the
// broker refuses, a failed DLQ produce), so the client and the group see
// exactly what they would; each is logged and counted (FaultCounts).

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// errInjectedDLQ is the failure of a dead-letter write failed on purpose.
var errInjectedDLQ = errors.New("dead-letter write failed by an injected fault")

// FaultCounts are the share-group faults injected since start.
type FaultCounts struct {
	LocksExpired    int64 `json:"locks_expired"`     // records whose lock was expired
	Redelivered     int64 `json:"redelivered"`       // records released for redelivery
	SessionsEvicted int64 `json:"sessions_evicted"`  // share sessions evicted
	AcksFailed      int64 `json:"acks_failed"`       // acknowledgements refused
	DLQWritesFailed int64 `json:"dlq_writes_failed"` // dead-letter writes failed
}

type faultState struct {
	// armedAcks and armedDLQ are how many ack and DLQ faults wait: the
	// ack and DLQ paths look no further while they are 0.
	armedAcks atomic.Int32
	armedDLQ  atomic.Int32

	mu     sync.Mutex
	acks   map[Key][]ackFault
	dlq    map[string]int // group -> writes still to fail
	counts FaultCounts
}

type ackFault struct {
	offsets []int64 // nil: any
	code    int16
}

// ErrNoSharePartition: the share-partition is not in memory, so nothing
// of it is acquired.
var ErrNoSharePartition = errors.New("share-partition not active")

// ExpireLocksNow expires the acquisition locks of offsets (nil: all) of
// share-partition k now, and returns how many records it released.
func (m *Manager) ExpireLocksNow(k Key, offsets []int64) (int64, error) {
	p := m.loaded(k)
	if p == nil {
		return 0, fmt.Errorf("%w: %s", ErrNoSharePartition, k)
	}
	n, err := m.expireLocks(p, offsets)
	m.countFault(func(c *FaultCounts) { c.LocksExpired += n })
	m.logger.Info("share fault injected: locks expired", "key", k.String(), "records", n)
	return n, err
}

// expireLocks expires the locks of offsets (nil: all) of p now and returns
// how many records it released.
func (m *Manager) expireLocks(p *part, offsets []int64) (int64, error) {
	p.mu.Lock()
	var eff Effects
	p.release, eff = p.sp.ExpireLocksNow(offsets, m.clock.Now(), p.release[:0])
	var n int64
	for _, r := range p.release {
		n += r.LastOffset - r.FirstOffset + 1
	}
	w := p.stageKafkaWriteLocked(eff)
	m.afterLocked(p, eff)
	p.mu.Unlock()
	return n, m.commit(p, w)
}

// Redeliver releases the Acquired records of offsets (nil: all) of k for
// redelivery now, and returns how many.
func (m *Manager) Redeliver(k Key, offsets []int64) (int64, error) {
	p := m.loaded(k)
	if p == nil {
		return 0, fmt.Errorf("%w: %s", ErrNoSharePartition, k)
	}
	p.mu.Lock()
	n, eff := p.sp.Redeliver(offsets, m.clock.Now())
	w := p.stageKafkaWriteLocked(eff)
	m.afterLocked(p, eff)
	p.mu.Unlock()
	m.countFault(func(c *FaultCounts) { c.Redelivered += n })
	m.logger.Info("share fault injected: records released for redelivery", "key", k.String(), "records", n)
	return n, m.commit(p, w)
}

// EvictSession evicts member's share session in group, as Kafka's share
// session cache does when it needs the room: what the member holds is
// released, and its next ShareFetch or ShareAcknowledge with a session
// epoch gets SHARE_SESSION_NOT_FOUND, so the client opens a new session.
// It reports whether there was a session.
func (m *Manager) EvictSession(group, member string) bool {
	skey := sessionKey{group, member}
	m.mu.Lock()
	sess := m.sessions[skey]
	delete(m.sessions, skey)
	if sess != nil {
		sess.evicted.Store(true)
	}
	m.mu.Unlock()
	if sess == nil {
		return false
	}
	m.releaseMember(group, member, sess.parts)
	m.countFault(func(c *FaultCounts) { c.SessionsEvicted++ })
	m.logger.Info("share fault injected: share session evicted", "group", group, "member", member)
	return true
}

// FailNextAck makes the next acknowledgement of k that covers any of
// offsets (nil: any acknowledgement of k) fail with code (0:
// INVALID_RECORD_STATE) without being applied: the records stay Acquired
// until their lock expires, as when Kafka refuses an ack.
func (m *Manager) FailNextAck(k Key, offsets []int64, code int16) {
	if code == 0 {
		code = codeInvalidRecordState
	}
	f := &m.faults
	f.mu.Lock()
	if f.acks == nil {
		f.acks = map[Key][]ackFault{}
	}
	f.acks[k] = append(f.acks[k], ackFault{offsets: offsets, code: code})
	f.armedAcks.Add(1)
	f.mu.Unlock()
}

// failAck takes an armed ack fault matching batches, returning its code
// (0: none).
func (m *Manager) failAck(k Key, batches []AckBatch) int16 {
	f := &m.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	list := f.acks[k]
	for i, af := range list {
		if !af.covers(batches) {
			continue
		}
		list = append(list[:i:i], list[i+1:]...)
		if len(list) == 0 {
			delete(f.acks, k)
		} else {
			f.acks[k] = list
		}
		f.armedAcks.Add(-1)
		f.counts.AcksFailed++
		m.logger.Info("share fault injected: acknowledgement failed", "key", k.String(), "error_code", af.code)
		return af.code
	}
	return 0
}

func (af ackFault) covers(batches []AckBatch) bool {
	if af.offsets == nil {
		return true
	}
	for _, o := range af.offsets {
		for i := range batches {
			if b := &batches[i]; b.FirstOffset <= o && o <= b.LastOffset {
				return true
			}
		}
	}
	return false
}

// FailDLQWrites makes the next n dead-letter writes of group fail (each is
// retried, and archived without a DLQ record once its attempts are used
// up, as when the DLQ topic cannot be written).
func (m *Manager) FailDLQWrites(group string, n int) {
	f := &m.faults
	f.mu.Lock()
	if f.dlq == nil {
		f.dlq = map[string]int{}
	}
	f.dlq[group] += n
	f.armedDLQ.Add(int32(n))
	f.mu.Unlock()
}

func (m *Manager) failDLQ(k Key) bool {
	f := &m.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dlq[k.Group] == 0 {
		return false
	}
	if f.dlq[k.Group]--; f.dlq[k.Group] == 0 {
		delete(f.dlq, k.Group)
	}
	f.armedDLQ.Add(-1)
	f.counts.DLQWritesFailed++
	m.logger.Info("share fault injected: dead-letter write failed", "key", k.String())
	return true
}

// FaultCounts returns the share faults injected so far.
func (m *Manager) FaultCounts() FaultCounts {
	m.faults.mu.Lock()
	defer m.faults.mu.Unlock()
	return m.faults.counts
}

func (m *Manager) countFault(f func(*FaultCounts)) {
	m.faults.mu.Lock()
	f(&m.faults.counts)
	m.faults.mu.Unlock()
}
