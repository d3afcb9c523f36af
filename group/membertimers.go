package group

import (
	"time"

	"sharq/log/clock"
)

// memberTimers are the two timers of a member of a KIP-848-style group
// (consumer and streams groups): its session, and its deadline to give up
// what was taken from it. Each arming bumps a sequence number, so a timer
// that fires after it was re-armed or stopped does nothing (Stop cannot
// recall a callback already started).
type memberTimers struct {
	hbTimer, revTimer clock.Timer
	hbSeq, revSeq     uint64
}

// armSessionLocked (re)arms the session timer for d. expire runs under
// the coordinator's lock unless the timer was re-armed or stopped since,
// or the coordinator closed.
func (t *memberTimers) armSessionLocked(c *Coordinator, d time.Duration, expire func()) {
	stopTimer(t.hbTimer)
	t.hbSeq++
	seq := t.hbSeq
	t.hbTimer = c.clock.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.hbSeq != seq || c.mu.closed {
			return
		}
		expire()
	})
}

// armRevocationLocked (re)arms the revocation deadline: the member's
// rebalance timeout, or 5 minutes when it gave none. expire runs as for
// armSessionLocked.
func (t *memberTimers) armRevocationLocked(c *Coordinator, rebalanceTimeout time.Duration, expire func()) {
	stopTimer(t.revTimer)
	t.revSeq++
	seq := t.revSeq
	d := rebalanceTimeout
	if d <= 0 {
		d = 5 * time.Minute
	}
	t.revTimer = c.clock.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.revSeq != seq || c.mu.closed {
			return
		}
		expire()
	})
}

// stopRevocationLocked ends the revocation deadline: the member gave up
// what it had to.
func (t *memberTimers) stopRevocationLocked() {
	stopTimer(t.revTimer)
	t.revSeq++
}

// stopLocked stops both timers for good (the member left or was removed).
func (t *memberTimers) stopLocked() {
	stopTimer(t.hbTimer)
	stopTimer(t.revTimer)
	t.hbSeq++
	t.revSeq++
}
