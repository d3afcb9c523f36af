package share

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// A history checker in the spirit of etcd's robustness tests: random
// members doing random operations with clock jumps and restarts, checked
// against a per-offset model built only from what the API reported.

type modelRecord struct {
	holder   string
	count    int16
	terminal bool
	accepted bool
	doomed   bool   // held when the log start offset passed it: archived when it comes back
	hole     bool   // no record (compaction): may be archived whenever it is not held
	notUntil int64  // ms: released or expired with a redelivery backoff, not acquirable before
	key      string // key-ordered runs: "" is a null key
}

type checker struct {
	t       *testing.T
	rng     *rand.Rand
	cfg     Config
	p       *SharePartition
	src     MemSource
	res     AcquireResult
	per     *MemPersister
	now     int64 // ms
	model   map[int64]*modelRecord
	members []string
	spso    int64
	ops     int
}

func (c *checker) fail(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("op %d (now=%d): %s", c.ops, c.now, fmt.Sprintf(format, args...))
}

func (c *checker) rec(off int64) *modelRecord {
	r := c.model[off]
	if r == nil {
		r = &modelRecord{}
		c.model[off] = r
	}
	return r
}

func (c *checker) check() {
	c.t.Helper()
	if err := checkInvariants(c.p); err != nil {
		c.fail("invariant: %v", err)
	}
	sum := c.p.Summary()
	if sum.DeliveryCompleteCount != c.p.DeliveryCompleteCount() || sum.StartOffset != c.p.StartOffset() || sum.EndOffset != c.p.EndOffset() {
		c.fail("summary %+v disagrees", sum)
	}
	var held int64
	for _, r := range c.model {
		if r.holder != "" {
			held++
		}
	}
	if held != sum.Acquired {
		c.fail("summary says %d acquired, model %d", sum.Acquired, held)
	}
	if s := c.p.StartOffset(); s < c.spso {
		c.fail("SPSO went back from %d to %d", c.spso, s)
	} else {
		// Everything below SPSO must be terminal in the model (or a hole).
		for off := c.spso; off < s; off++ {
			if r := c.model[off]; r != nil && !r.terminal && !r.doomed && !(r.hole && r.holder == "") {
				c.fail("SPSO %d passed non-terminal offset %d (%+v)", s, off, *r)
			}
		}
		c.spso = s
	}
}

func (c *checker) acquire(member string) {
	req := AcquireRequest{MaxRecords: 1 + c.rng.IntN(40), BatchSize: c.rng.IntN(20)}
	if c.rng.IntN(3) == 0 {
		req.Mode = RecordLimit
	}
	if _, err := c.p.Acquire(member, time.UnixMilli(c.now), req, &c.src, &c.res); err != nil {
		c.fail("acquire: %v", err)
	}
	var n int64
	prevLast := int64(-1)
	for _, a := range c.res.Acquired {
		if a.FirstOffset <= prevLast {
			c.fail("overlapping AcquiredRecords %+v", c.res.Acquired)
		}
		prevLast = a.LastOffset
		for off := a.FirstOffset; off <= a.LastOffset; off++ {
			r := c.rec(off)
			if r.holder != "" {
				c.fail("offset %d acquired by %s while held by %s", off, member, r.holder)
			}
			if r.terminal {
				c.fail("terminal offset %d (%+v) acquired again", off, *r)
			}
			if a.DeliveryCount != r.count+1 {
				c.fail("offset %d delivered with count %d, model says %d before", off, a.DeliveryCount, r.count)
			}
			if c.now < r.notUntil {
				c.fail("offset %d acquired at %d inside its redelivery backoff (until %d)", off, c.now, r.notUntil)
			}
			if int(a.DeliveryCount) > c.cfg.DeliveryCountLimit {
				c.fail("offset %d delivered %d times (limit %d)", off, a.DeliveryCount, c.cfg.DeliveryCountLimit)
			}
			if c.p.Summary().EndOffset-c.p.StartOffset()+1 > int64(c.cfg.MaxRecordLocks)+int64(req.MaxRecords)+64 {
				c.fail("window far beyond the limit")
			}
			r.holder, r.count = member, a.DeliveryCount
			n++
		}
	}
	if c.cfg.KeyOrdered {
		c.checkKeyOrder()
	}
	if n != c.res.Count {
		c.fail("Count %d, ranges hold %d", c.res.Count, n)
	}
	if req.Mode == RecordLimit && n > int64(req.MaxRecords) {
		c.fail("record_limit acquired %d > %d", n, req.MaxRecords)
	}
}

// checkKeyOrder: no two held records share a key, and a held record has
// no earlier non-terminal record of its key.
func (c *checker) checkKeyOrder() {
	firstLive := map[string]int64{}
	heldBy := map[string]int64{}
	for off := c.spsoModel(); off < c.src.Bound.HighWatermark; off++ {
		r := c.model[off]
		if r == nil || r.key == "" || r.terminal || r.hole {
			continue
		}
		if _, ok := firstLive[r.key]; !ok {
			firstLive[r.key] = off
		}
		if r.holder == "" {
			continue
		}
		if prev, ok := heldBy[r.key]; ok {
			c.fail("key %q in flight twice: offsets %d and %d", r.key, prev, off)
		}
		heldBy[r.key] = off
		if first := firstLive[r.key]; first != off {
			c.fail("offset %d (key %q) held while offset %d of its key is not done", off, r.key, first)
		}
	}
}

// spsoModel is the lowest offset the model may still track as live.
func (c *checker) spsoModel() int64 {
	lo := c.p.StartOffset()
	for _, r := range c.p.InFlight(nil) {
		lo = min(lo, r.FirstOffset)
	}
	return max(lo, 0)
}

// held returns the offsets member holds per the model, ascending.
func (c *checker) held(member string) []int64 {
	var offs []int64
	for _, r := range c.p.InFlight(nil) {
		if r.State == Acquired && r.Owner == member {
			for off := r.FirstOffset; off <= r.LastOffset; off++ {
				if c.model[off].holder != member {
					c.fail("cache says %s holds %d, model says %q", member, off, c.model[off].holder)
				}
				offs = append(offs, off)
			}
		}
	}
	return offs
}

func (c *checker) ack(member string, onlyAccept bool) {
	offs := c.held(member)
	if len(offs) == 0 {
		return
	}
	// A random subset as ascending batches of consecutive offsets.
	var batches []AckBatch
	for i := 0; i < len(offs); {
		j := i
		for j+1 < len(offs) && offs[j+1] == offs[j]+1 && c.rng.IntN(8) != 0 {
			j++
		}
		if onlyAccept || c.rng.IntN(3) != 0 {
			b := AckBatch{FirstOffset: offs[i], LastOffset: offs[j]}
			if !onlyAccept && c.rng.IntN(3) == 0 {
				for k := i; k <= j; k++ {
					b.Types = append(b.Types, AckType(c.rng.IntN(5)))
				}
			} else if onlyAccept {
				b.Types = []AckType{AckAccept}
			} else {
				b.Types = []AckType{AckType(c.rng.IntN(5))}
			}
			batches = append(batches, b)
		}
		i = j + 1
	}
	if _, err := c.p.Acknowledge(member, time.UnixMilli(c.now), batches); err != nil {
		c.fail("ack %+v: %v", batches, err)
	}
	for _, b := range batches {
		for off := b.FirstOffset; off <= b.LastOffset; off++ {
			t := b.Types[0]
			if len(b.Types) > 1 {
				t = b.Types[off-b.FirstOffset]
			}
			r := c.rec(off)
			switch t {
			case AckAccept:
				r.holder, r.terminal, r.accepted = "", true, true
			case AckReject, AckGap:
				r.holder, r.terminal = "", true
			case AckRelease:
				r.holder = ""
				r.terminal = int(r.count) >= c.cfg.DeliveryCountLimit || r.doomed
				r.notUntil = c.now + c.cfg.Backoff.Delay(r.count).Milliseconds()
			}
		}
	}
	// A second ack of the same offsets must fail and change nothing.
	if len(batches) > 0 && batches[0].Types[0] != AckRenew && len(batches[0].Types) == 1 {
		before := c.p.InFlight(nil)
		if _, err := c.p.Acknowledge(member, time.UnixMilli(c.now), batches[:1]); err == nil {
			c.fail("double ack of %+v succeeded", batches[0])
		}
		after := c.p.InFlight(nil)
		if fmt.Sprint(before) != fmt.Sprint(after) {
			c.fail("failed ack changed state")
		}
	}
}

func (c *checker) applyReleased(changed []InFlightRange, expired bool) {
	for _, r := range changed {
		for off := r.FirstOffset; off <= r.LastOffset; off++ {
			m := c.rec(off)
			if m.holder == "" {
				c.fail("offset %d released but not held", off)
			}
			m.holder = ""
			m.count = r.DeliveryCount
			m.notUntil = 0
			if expired {
				m.notUntil = c.now + c.cfg.Backoff.Delay(m.count).Milliseconds()
			}
			m.terminal = r.State.Terminal()
			if !expired && c.cfg.PersistCounts && int(m.count) >= c.cfg.DeliveryCountLimit {
				m.terminal = true // archived by the next acquisition
			}
			if m.doomed {
				// Below the log start: the partition may only learn that at
				// its next acquisition, but it must never hand it out again.
				m.terminal = true
			}
			if r.State == Archived && int(r.DeliveryCount) < c.cfg.DeliveryCountLimit && !m.doomed {
				c.fail("offset %d archived on expiry with count %d", off, r.DeliveryCount)
			}
		}
	}
}

func (c *checker) restart() {
	var st State
	c.p.AppendState(&st)
	key := Key{Group: "g", Partition: 1}
	if err := c.per.Write(key, &st, true); err != nil {
		c.fail("write: %v", err)
	}
	var loaded State
	if ok, err := c.per.Load(key, &loaded); !ok || err != nil {
		c.fail("load: %v %v", ok, err)
	}
	p, err := Restore(c.cfg, &loaded)
	if err != nil {
		c.fail("restore: %v", err)
	}
	c.p = p
	for off, r := range c.model {
		// The backoff is not persisted: a restart ends it (best effort).
		r.notUntil = 0
		if r.holder != "" {
			r.holder = ""
			if c.cfg.PersistCounts {
				// The acquisition's count was durable: it stands, and a
				// record at the limit is never delivered again.
				r.terminal = r.terminal || int(r.count) >= c.cfg.DeliveryCountLimit
			} else {
				r.count--
			}
			r.terminal = r.terminal || r.doomed
		}
		if off > c.p.EndOffset() && !r.terminal {
			// Beyond the persisted window: fetched again as new data.
			r.count = 0
		}
	}
}

func runChecker(t *testing.T, seed uint64, steps int) {
	c := &checker{
		t:       t,
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		cfg:     Config{DeliveryCountLimit: 2 + int(seed%4), RecordLockDuration: 1000 * time.Millisecond, MaxRecordLocks: 100 + int(seed%3)*50},
		per:     NewMemPersister(),
		model:   map[int64]*modelRecord{},
		members: []string{"m1", "m2", "m3", "m4", "m5"},
	}
	if seed%5 >= 3 {
		// Redelivery backoff: exponential (seed%5 == 3) or fixed.
		c.cfg.Backoff = Backoff{Initial: time.Duration(20+seed%7*30) * time.Millisecond, Max: 400 * time.Millisecond, Multiplier: 2}
		if seed%5 == 4 {
			c.cfg.Backoff.Multiplier = 1
		}
	}
	if seed%4 == 2 {
		c.cfg.PersistCounts = true
	}
	if seed%3 == 1 {
		c.cfg.KeyOrdered = true
		c.src.KeyOf = map[int64]string{}
	}
	c.p = New(c.cfg)
	c.cfg = c.p.Config()
	c.p.Initialise(0, 0)
	for c.ops = 0; c.ops < steps; c.ops++ {
		member := c.members[c.rng.IntN(len(c.members))]
		switch op := c.rng.IntN(100); {
		case op < 15:
			if c.rng.IntN(10) == 0 {
				n := int64(1 + c.rng.IntN(5)) // compaction hole
				for off := c.src.Bound.HighWatermark; off < c.src.Bound.HighWatermark+n; off++ {
					c.rec(off).hole = true
				}
				c.src.Bound.HighWatermark += n
				c.src.Bound.LastStable = c.src.Bound.HighWatermark
			}
			base := c.src.Append(1 + c.rng.IntN(30))
			if c.cfg.KeyOrdered {
				for off := base; off < c.src.Bound.HighWatermark; off++ {
					if k := c.rng.IntN(8); k > 0 {
						c.rec(off).key = fmt.Sprint("k", k)
						c.src.KeyOf[off] = c.rec(off).key
					}
				}
			}
		case op < 45:
			c.acquire(member)
		case op < 75:
			c.ack(member, false)
		case op < 85:
			c.now += int64(c.rng.IntN(700))
			changed, _ := c.p.ExpireLocks(time.UnixMilli(c.now), nil)
			c.applyReleased(changed, true)
		case op < 90:
			changed, _ := c.p.ReleaseMember(member, time.UnixMilli(c.now), nil)
			for _, r := range changed {
				for off := r.FirstOffset; off <= r.LastOffset; off++ {
					if c.model[off].holder != member {
						c.fail("released %d not held by %s", off, member)
					}
				}
			}
			c.applyReleased(changed, false)
		case op < 92:
			c.restart()
		case op < 93 && seed%2 == 0:
			// Retention: the log start offset jumps forward.
			ls := c.src.Bound.LogStart + int64(c.rng.IntN(int(c.src.Bound.HighWatermark-c.src.Bound.LogStart)+1))
			for off := c.src.Bound.LogStart; off < ls; off++ {
				r := c.rec(off)
				if r.holder == "" {
					r.terminal = true
				} else {
					r.doomed = true
				}
			}
			c.src.Bound.LogStart = ls
		default:
			c.now += int64(c.rng.IntN(50))
		}
		c.check()
		if w, ok := c.p.NextWake(); ok {
			for _, r := range c.p.InFlight(nil) {
				if !r.AvailableAt.IsZero() && r.AvailableAt.Before(w) {
					c.fail("NextWake %v after a backoff end %v", w, r.AvailableAt)
				}
			}
		} else {
			for _, r := range c.p.InFlight(nil) {
				if !r.AvailableAt.IsZero() || r.State == Acquired {
					c.fail("no wake-up with %+v pending", r)
				}
			}
		}
		if d, ok := c.p.NextDeadline(); ok {
			for _, r := range c.p.InFlight(nil) {
				if r.State == Acquired && r.LockDeadline.Before(d) {
					c.fail("NextDeadline %v after a lock deadline %v", d, r.LockDeadline)
				}
			}
		}
	}
	// Drain: everyone accepts everything; every record must end terminal.
	for round := 0; round < 10000 && c.p.StartOffset() < c.src.Bound.HighWatermark; round++ {
		c.ops++
		member := c.members[round%len(c.members)]
		c.acquire(member)
		c.ack(member, true)
		c.now += 2000
		changed, _ := c.p.ExpireLocks(time.UnixMilli(c.now), nil)
		c.applyReleased(changed, true)
		c.check()
	}
	if s := c.p.StartOffset(); s != c.src.Bound.HighWatermark {
		t.Fatalf("drain stopped at SPSO %d, high watermark %d", s, c.src.Bound.HighWatermark)
	}
	for off := int64(0); off < c.src.Bound.HighWatermark; off++ {
		if r := c.model[off]; r != nil && ((!r.terminal && !r.hole) || r.holder != "") {
			t.Fatalf("offset %d not terminal at the end: %+v", off, *r)
		}
	}
}

func TestRandomHistories(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 20
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			runChecker(t, seed, 400)
		})
	}
}

// FuzzHistories drives the checker from fuzzer-chosen seeds.
func FuzzHistories(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(1 << 40))
	f.Fuzz(func(t *testing.T, seed uint64) {
		runChecker(t, seed, 200)
	})
}
