package share

import (
	"sort"
	"sync"
	"time"
)

// Clock is the Manager's time source: lock deadlines, lock-expiry timers,
// member session timeouts and long-poll waits. Tests inject a FakeClock so
// timers fire when the test says so. (group/ has the same idea; share has
// its own so that neither package imports the other, and its timers can be
// re-armed without a new allocation.)
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call that can be stopped and re-armed.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

// RealClock is the wall clock.
func RealClock() Clock { return realClock{} }

// FakeClock is a manual clock: timers fire only inside Advance, in deadline
// order, on the caller's goroutine.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers map[*fakeTimer]struct{}
}

type fakeTimer struct {
	c  *FakeClock
	id int
	at time.Time
	f  func()
}

// NewFakeClock starts a fake clock at start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, timers: map[*fakeTimer]struct{}{}}
}

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{c: c, id: c.seq, at: c.now.Add(d), f: f}
	c.timers[t] = struct{}{}
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
	return ok
}

// Advance moves the clock forward by d, firing every timer that falls due,
// earliest first; timers armed by a firing callback fire too if they fall
// due within the same advance.
func (c *FakeClock) Advance(d time.Duration) {
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

// Pending reports how many timers are armed.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
