// Package clock is the time source of the coordinators and the share
// manager (group, share, txn): Now, one-shot timers that can be re-armed,
// and tickers, with a Fake whose timers fire only when a test advances it.
//
// It is a leaf under log/, beside log/recordbatch and log/statejournal,
// because those are where the packages that must not import each other
// already meet: it imports nothing of sharq, so group, share, txn and log
// can all use it without a path between them.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock is a time source.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine (on a Fake: inside Advance,
	// on the advancing goroutine) once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call that can be stopped and re-armed; *time.Timer
// is one, so the real clock re-arms without allocating.
type Timer interface {
	// Stop reports whether it stopped the call before it ran.
	Stop() bool
	// Reset re-arms the call d from now; it reports whether it was
	// pending.
	Reset(d time.Duration) bool
}

type wall struct{}

func (wall) Now() time.Time { return time.Now() }
func (wall) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

// Real is the wall clock.
func Real() Clock { return wall{} }

// Fake is a manual clock: timers fire only inside Advance, in deadline
// order (arming order for equal deadlines), on the caller's goroutine.
type Fake struct {
	mu     sync.Mutex
	armed  sync.Cond // on mu: a timer was armed (BlockUntil)
	now    time.Time
	seq    int
	timers map[*fakeTimer]struct{}
}

type fakeTimer struct {
	c  *Fake
	id int // arming order: a Reset takes a new one
	at time.Time
	f  func()
}

// NewFake starts a fake clock at start.
func NewFake(start time.Time) *Fake {
	c := &Fake{now: start, timers: map[*fakeTimer]struct{}{}}
	c.armed.L = &c.mu
	return c
}

func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Fake) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{c: c, id: c.seq, at: c.now.Add(d), f: f}
	c.timers[t] = struct{}{}
	c.armed.Broadcast()
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	t.c.seq++
	t.id, t.at = t.c.seq, t.c.now.Add(d)
	t.c.timers[t] = struct{}{}
	t.c.armed.Broadcast()
	return ok
}

// Advance moves the clock forward by d, firing every timer that falls due,
// earliest first; timers armed by a firing callback fire too if they fall
// due within the same advance.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due []*fakeTimer
		for t := range c.timers {
			if !t.at.After(end) {
				due = append(due, t)
			}
		}
		if len(due) == 0 {
			c.now = end
			c.mu.Unlock()
			return
		}
		sort.Slice(due, func(i, j int) bool {
			if due[i].at.Equal(due[j].at) {
				return due[i].id < due[j].id
			}
			return due[i].at.Before(due[j].at)
		})
		t := due[0]
		delete(c.timers, t)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}

// BlockUntil waits until at least n timers are armed: a test that starts
// a goroutine arming timers (a Run loop's tickers) knows when advancing
// the clock will reach them.
func (c *Fake) BlockUntil(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.timers) < n {
		c.armed.Wait()
	}
}

// Pending reports how many timers are armed.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Ticker sends the time on C every d, as time.Ticker does (a tick the
// receiver is not ready for is dropped), from a Clock's timer, so that on
// a Fake it ticks inside Advance.
type Ticker struct {
	C <-chan time.Time

	c     chan time.Time
	clock Clock
	d     time.Duration

	mu      sync.Mutex
	t       Timer
	stopped bool
}

// NewTicker starts a ticker of period d (d > 0) on c.
func NewTicker(c Clock, d time.Duration) *Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	ch := make(chan time.Time, 1)
	t := &Ticker{C: ch, c: ch, clock: c, d: d}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t = c.AfterFunc(d, t.tick)
	return t
}

// tick re-arms before it sends, so the period does not stretch by the
// receiver's work.
func (t *Ticker) tick() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	t.t.Reset(t.d)
	t.mu.Unlock()
	select {
	case t.c <- t.clock.Now():
	default:
	}
}

// Stop ends the ticks; a tick already sent stays in C.
func (t *Ticker) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.t.Stop()
}
