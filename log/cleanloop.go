package log

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// throttler bounds the cleaner's I/O rate (log.cleaner.io.max.bytes.per.second).
type throttler struct {
	rate  float64
	start time.Time
	bytes int64
}

func newThrottler(rate float64) *throttler { return &throttler{rate: rate, start: time.Now()} }

// wait sleeps as long as the bytes done so far are ahead of the rate. A
// nil throttler never waits.
func (t *throttler) wait(n int64) {
	if t == nil {
		return
	}
	t.bytes += n
	want := time.Duration(float64(t.bytes) / t.rate * float64(time.Second))
	if ahead := want - time.Since(t.start); ahead > 10*time.Millisecond {
		time.Sleep(ahead)
	}
	if time.Since(t.start) > time.Second {
		// a fresh window, so an idle spell does not buy a burst
		t.start, t.bytes = time.Now(), 0
	}
}

// cleaner runs the manager's cleaner threads. Its options are dynamic
// (log.cleaner.* broker configs, SetCleanerOptions): a pass takes them when
// it starts; a change of log.cleaner.threads starts or ends threads.
type cleaner struct {
	m    *Manager
	mu   sync.Mutex
	opts CleanerOptions // guarded by mu
	// wakeCh is closed (and replaced) to wake every thread at once.
	wakeCh chan struct{}
	live   map[int]bool // threads running, by index; guarded by mu
	ctx    context.Context
	wg     sync.WaitGroup
	busy   map[*Log]bool // logs a thread is cleaning; guarded by mu
	runs   atomic.Int64
	// lastVisit: when a closed partition was last opened for a look.
	lastVisit map[*Partition]time.Time
}

func newCleaner(m *Manager, opts CleanerOptions) *cleaner {
	threads := opts.Threads
	opts = opts.withDefaults()
	if threads == 0 && opts.Disable {
		opts.Threads = 0
	}
	return &cleaner{m: m, opts: opts, wakeCh: make(chan struct{}), live: map[int]bool{},
		busy: map[*Log]bool{}, lastVisit: map[*Partition]time.Time{}}
}

// start runs the threads until ctx is done (Manager.Run).
func (c *cleaner) start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
	c.spawnLocked()
}

// spawnLocked starts the threads opts asks for that are not running.
func (c *cleaner) spawnLocked() {
	if c.ctx == nil || c.opts.Disable {
		return
	}
	for i := range c.opts.Threads {
		if c.live[i] {
			continue
		}
		c.live[i] = true
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.run(c.ctx, i)
		}()
	}
}

// run is one cleaner thread: it cleans the dirtiest eligible log, or waits
// log.cleaner.backoff.ms when there is none.
func (c *cleaner) run(ctx context.Context, thread int) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		c.mu.Lock()
		if thread >= c.opts.Threads {
			delete(c.live, thread) // log.cleaner.threads went down
			c.mu.Unlock()
			return
		}
		wake := c.wakeCh
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			c.mu.Lock()
			delete(c.live, thread)
			c.mu.Unlock()
			return
		case <-timer.C:
		case <-wake:
			timer.Reset(0) // re-read the options, then look at once
			continue
		}
		if !c.cleanSome(ctx, thread) {
			c.mu.Lock()
			d := c.opts.Backoff
			c.mu.Unlock()
			timer.Reset(d)
		} else {
			timer.Reset(0)
		}
	}
}

// closedLogCheckInterval is how often the cleaner opens a compacted
// partition that is not open (Kafka keeps every log open; sharq closes
// unused ones, see Options.MaxOpenLogs).
const closedLogCheckInterval = 5 * time.Minute

// cleanSome offers every compacted partition to one pass; it reports
// whether any log was cleaned.
func (c *cleaner) cleanSome(ctx context.Context, thread int) bool {
	cleaned := false
	for _, p := range c.m.handles() {
		if ctx.Err() != nil {
			return cleaned
		}
		p.mu.Lock()
		open := p.log != nil
		compact := p.cfg.CleanupCompact || (open && p.log.Config().CleanupCompact)
		p.mu.Unlock()
		if !compact {
			continue
		}
		if !open && thread >= 0 {
			// A closed log is opened for a look at most every
			// closedLogCheckInterval, not every backoff.
			now := c.m.now()
			c.mu.Lock()
			due := now.Sub(c.lastVisit[p]) >= closedLogCheckInterval
			if due {
				c.lastVisit[p] = now
			}
			c.mu.Unlock()
			if !due {
				continue
			}
		}
		p.visit(func(l *Log) {
			c.mu.Lock()
			if c.busy[l] && thread >= 0 {
				// (CleanNow, thread -1, waits for the pass instead)
				c.mu.Unlock()
				return
			}
			if thread >= 0 {
				c.busy[l] = true
			}
			c.mu.Unlock()
			defer func() {
				if thread >= 0 {
					c.mu.Lock()
					delete(c.busy, l)
					c.mu.Unlock()
				}
			}()
			env := c.env()
			if thread >= 0 {
				env.ctx = ctx
			}
			st, err := l.clean(env)
			if err != nil && !errors.Is(err, ErrClosed) {
				c.m.logger.Error("log cleaning failed", "topic", l.topic, "partition", l.partition, "err", err)
			}
			if st.Cleaned {
				cleaned = true
				c.runs.Add(1)
			}
		})
	}
	return cleaned
}

func (c *cleaner) env() *cleanEnv {
	c.mu.Lock()
	o := c.opts
	c.mu.Unlock()
	threads := max(o.Threads, 1)
	env := &cleanEnv{
		now:        c.m.now(),
		mapBytes:   o.DedupeBufferSize / int64(threads),
		loadFactor: o.IOBufferLoadFactor,
		ioBuf:      o.IOBufferSize,
	}
	if o.IOMaxBytesPerSecond > 0 {
		env.throttle = newThrottler(o.IOMaxBytesPerSecond / float64(threads))
	}
	return env
}

// SetCleanerOptions applies changed log.cleaner.* settings (dynamic
// broker configs): the next pass of each thread uses them, a changed
// backoff wakes the threads, and a changed thread count starts or ends
// threads. Disable only counts at start (log.cleaner.enable is static).
func (m *Manager) SetCleanerOptions(o CleanerOptions) {
	c := m.cleaner
	threads := max(o.Threads, 0)
	o = o.withDefaults()
	o.Threads = threads
	c.mu.Lock()
	defer c.mu.Unlock()
	o.Disable = c.opts.Disable
	if o == c.opts {
		return
	}
	c.opts = o
	close(c.wakeCh)
	c.wakeCh = make(chan struct{})
	c.spawnLocked()
}

// CleanNow runs one cleaning pass over every compacted partition at once
// (with the manager's clock and the broker's log.cleaner.* settings) and
// returns how many logs were cleaned. It is for tests and tools: the
// background threads do the same every log.cleaner.backoff.ms.
func (m *Manager) CleanNow() int {
	c := m.cleaner
	before := c.runs.Load()
	c.cleanSome(context.Background(), -1)
	return int(c.runs.Load() - before)
}
