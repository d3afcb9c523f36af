package share

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Script commands (times are milliseconds since the epoch):
//
//	init [start=N] [limit=N] [lock=MS] [locks=N] [committed] [norenew]
//	     [backoff=MS] [backoffmax=MS] [mult=X] [keyed] [persist]
//	append n=N [control] [txn pid=N] [aborted]   a batch of N records
//	append keys=a,b,-,a                          a batch with these keys ("-" null)
//	hole n=N                                     N offsets with no batch (compaction)
//	compact from=N to=N                          batches inside vanish
//	logstart off=N                               log start offset moves
//	lso off=N                                    last stable offset
//	acquire member=M now=T [max=N] [batch=N] [record]
//	ack member=M now=T        input: "first-last type[,type...]" per line
//	expire now=T
//	release member=M now=T
//	reset start=N
//	restart                                      persist, reload (rehydrate)
//	state
func TestScripts(t *testing.T) {
	runScripts(t, "../testdata/share", func() func(c *scriptCase) string {
		d := &scriptDriver{}
		return d.run
	})
}

type scriptDriver struct {
	p   *SharePartition
	src MemSource
	res AcquireResult
	per *MemPersister
}

func (d *scriptDriver) intArg(c *scriptCase, k string, def int64) int64 {
	v, ok := c.args[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("%s: bad %s=%q", c.pos, k, v))
	}
	return n
}

func ms(n int64) time.Time { return time.UnixMilli(n) }

var ackNames = map[string]AckType{"gap": AckGap, "accept": AckAccept, "release": AckRelease, "reject": AckReject, "renew": AckRenew}

func (d *scriptDriver) run(c *scriptCase) string {
	switch c.cmd {
	case "init":
		cfg := Config{
			DeliveryCountLimit: int(d.intArg(c, "limit", 0)),
			RecordLockDuration: time.Duration(d.intArg(c, "lock", 0)) * time.Millisecond,
			MaxRecordLocks:     int(d.intArg(c, "locks", 0)),
			ReadCommitted:      c.has("committed"),
			RenewDisabled:      c.has("norenew"),
			Backoff: Backoff{Initial: time.Duration(d.intArg(c, "backoff", 0)) * time.Millisecond,
				Max: time.Duration(d.intArg(c, "backoffmax", 0)) * time.Millisecond},
			KeyOrdered:    c.has("keyed"),
			PersistCounts: c.has("persist"),
		}
		if v, ok := c.args["mult"]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				panic(c.pos + ": bad mult")
			}
			cfg.Backoff.Multiplier = f
		}
		d.p = New(cfg)
		d.src = MemSource{}
		start := d.intArg(c, "start", 0)
		d.src.Bound = Bounds{LogStart: start, HighWatermark: start, LastStable: start}
		d.per = NewMemPersister()
		return fmtEffects(d.p.Initialise(start, 0)) + "\n" + d.state()
	case "append":
		n := int(d.intArg(c, "n", 1))
		var keys []string
		if v, ok := c.args["keys"]; ok {
			// keys=a,b,-,a: one record per key, "-" a null key.
			keys = strings.Split(v, ",")
			n = len(keys)
		}
		base := d.src.Append(n)
		for i, k := range keys {
			if k != "-" {
				if d.src.KeyOf == nil {
					d.src.KeyOf = map[int64]string{}
				}
				d.src.KeyOf[base+int64(i)] = k
			}
		}
		h := &d.src.Batches[len(d.src.Batches)-1]
		h.Control = c.has("control")
		h.Transactional = c.has("txn") || c.has("control")
		h.Aborted = c.has("aborted")
		h.ProducerID = d.intArg(c, "pid", -1)
		return fmt.Sprintf("batch %d-%d hwm=%d", base, h.LastOffset, d.src.Bound.HighWatermark)
	case "hole":
		d.src.Bound.HighWatermark += d.intArg(c, "n", 1)
		d.src.Bound.LastStable = d.src.Bound.HighWatermark
		return fmt.Sprintf("hwm=%d", d.src.Bound.HighWatermark)
	case "compact":
		// Drop the batches inside [from, to] (log compaction removed them).
		from, to := d.intArg(c, "from", 0), d.intArg(c, "to", 0)
		kept := d.src.Batches[:0]
		for _, h := range d.src.Batches {
			if h.BaseOffset < from || h.LastOffset > to {
				kept = append(kept, h)
			}
		}
		d.src.Batches = kept
		return fmt.Sprintf("batches=%d", len(kept))
	case "logstart":
		d.src.Bound.LogStart = d.intArg(c, "off", 0)
		return fmt.Sprintf("logstart=%d", d.src.Bound.LogStart)
	case "lso":
		d.src.Bound.LastStable = d.intArg(c, "off", 0)
		return fmt.Sprintf("lso=%d", d.src.Bound.LastStable)
	case "acquire":
		req := AcquireRequest{MaxRecords: int(d.intArg(c, "max", 0)), BatchSize: int(d.intArg(c, "batch", 0))}
		if c.has("record") {
			req.Mode = RecordLimit
		}
		eff, err := d.p.Acquire(c.args["member"], ms(d.intArg(c, "now", 0)), req, &d.src, &d.res)
		if err != nil {
			return "error: " + err.Error()
		}
		var b strings.Builder
		fmt.Fprintf(&b, "acquired %d records %d-%d:", d.res.Count, d.res.RecordsFirst, d.res.RecordsLast)
		for _, a := range d.res.Acquired {
			fmt.Fprintf(&b, " %d-%d#%d", a.FirstOffset, a.LastOffset, a.DeliveryCount)
		}
		return b.String() + "\n" + fmtEffects(eff) + "\n" + d.state()
	case "ack":
		var batches []AckBatch
		for _, l := range c.input {
			f := strings.Fields(l)
			lo, hi, _ := strings.Cut(f[0], "-")
			if hi == "" {
				hi = lo
			}
			first, _ := strconv.ParseInt(lo, 10, 64)
			last, _ := strconv.ParseInt(hi, 10, 64)
			ab := AckBatch{FirstOffset: first, LastOffset: last}
			if len(f) > 1 {
				for _, tn := range strings.Split(f[1], ",") {
					at, ok := ackNames[tn]
					if !ok {
						n, err := strconv.Atoi(tn)
						if err != nil {
							panic(c.pos + ": bad ack type " + tn)
						}
						at = AckType(n)
					}
					ab.Types = append(ab.Types, at)
				}
			}
			batches = append(batches, ab)
		}
		eff, err := d.p.Acknowledge(c.args["member"], ms(d.intArg(c, "now", 0)), batches)
		if err != nil {
			return fmt.Sprintf("error (code %d): %v\n%s", ErrorCode(err), err, d.state())
		}
		return fmtEffects(eff) + "\n" + d.state()
	case "expire":
		changed, eff := d.p.ExpireLocks(ms(d.intArg(c, "now", 0)), nil)
		return fmtChanged("expired", changed) + "\n" + fmtEffects(eff) + "\n" + d.state()
	case "release":
		changed, eff := d.p.ReleaseMember(c.args["member"], ms(d.intArg(c, "now", 0)), nil)
		return fmtChanged("released", changed) + "\n" + fmtEffects(eff) + "\n" + d.state()
	case "reset":
		return fmtEffects(d.p.Reset(d.intArg(c, "start", 0))) + "\n" + d.state()
	case "restart":
		var st State
		d.p.AppendState(&st)
		key := Key{Group: "g", Partition: 0}
		if err := d.per.Write(key, &st, true); err != nil {
			return "error: " + err.Error()
		}
		var loaded State
		if ok, err := d.per.Load(key, &loaded); !ok || err != nil {
			return fmt.Sprintf("load: %v %v", ok, err)
		}
		p, err := Restore(d.p.Config(), &loaded)
		if err != nil {
			return "error: " + err.Error()
		}
		d.p = p
		return fmtState(&loaded) + "\n" + d.state()
	case "state":
		return d.state()
	}
	panic(c.pos + ": unknown command " + c.cmd)
}

func fmtEffects(e Effects) string {
	var parts []string
	if e.SPSOMoved {
		parts = append(parts, "spso-moved")
	}
	if e.Available {
		parts = append(parts, "available")
	}
	if e.Persist {
		parts = append(parts, "persist")
	}
	if e.Durable {
		parts = append(parts, "durable")
	}
	if len(parts) == 0 {
		return "effects: none"
	}
	return "effects: " + strings.Join(parts, " ")
}

func fmtChanged(what string, rs []InFlightRange) string {
	var b strings.Builder
	b.WriteString(what + ":")
	if len(rs) == 0 {
		b.WriteString(" none")
	}
	for _, r := range rs {
		fmt.Fprintf(&b, " %d-%d %s#%d", r.FirstOffset, r.LastOffset, r.State, r.DeliveryCount)
	}
	return b.String()
}

func fmtState(st *State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "persisted: start=%d epoch=%d complete=%d", st.StartOffset, st.StateEpoch, st.DeliveryCompleteCount)
	for _, s := range st.Batches {
		fmt.Fprintf(&b, " [%d-%d %s#%d]", s.FirstOffset, s.LastOffset, s.State, s.DeliveryCount)
	}
	return b.String()
}

func (d *scriptDriver) state() string {
	var b strings.Builder
	p := d.p
	fmt.Fprintf(&b, "spso=%d speo=%d next=%d complete=%d lag=%d", p.StartOffset(), p.EndOffset(), p.NextFetchOffset(), p.DeliveryCompleteCount(), p.Lag(d.src.Bound.HighWatermark))
	dl, ok := p.NextDeadline()
	if ok {
		fmt.Fprintf(&b, " deadline=%d", dl.UnixMilli())
	}
	if w, wok := p.NextWake(); wok && (!ok || !w.Equal(dl)) {
		fmt.Fprintf(&b, " wake=%d", w.UnixMilli())
	}
	for _, r := range p.InFlight(nil) {
		fmt.Fprintf(&b, "\n  %d-%d %s#%d", r.FirstOffset, r.LastOffset, r.State, r.DeliveryCount)
		if p.cfg.KeyOrdered && r.State == Available {
			win, _ := p.Window(nil, 0)
			for _, w := range win {
				if w.KeyHeld && w.FirstOffset <= r.LastOffset && w.LastOffset >= r.FirstOffset {
					fmt.Fprintf(&b, " held:%d-%d", max(w.FirstOffset, r.FirstOffset), min(w.LastOffset, r.LastOffset))
				}
			}
		}
		if r.State == Acquired {
			fmt.Fprintf(&b, " %s until %d", r.Owner, r.LockDeadline.UnixMilli())
		}
		if !r.AvailableAt.IsZero() {
			fmt.Fprintf(&b, " backoff until %d", r.AvailableAt.UnixMilli())
		}
	}
	if err := checkInvariants(p); err != nil {
		fmt.Fprintf(&b, "\nINVARIANT VIOLATED: %v", err)
	}
	return b.String()
}

// checkInvariants verifies the structural invariants of the cache.
func checkInvariants(p *SharePartition) error {
	if p.spso < 0 {
		return nil
	}
	if p.speo < p.spso-1 {
		return fmt.Errorf("speo %d < spso-1 %d", p.speo, p.spso-1)
	}
	covered := p.spso
	for k := range p.ranges {
		r := &p.ranges[k]
		if r.last < r.first {
			return fmt.Errorf("range %d: %d-%d inverted", k, r.first, r.last)
		}
		if k > 0 && r.first <= p.ranges[k-1].last {
			return fmt.Errorf("range %d overlaps its predecessor", k)
		}
		if k > 0 && mergeable(&p.ranges[k-1], r) {
			return fmt.Errorf("ranges %d and %d should have merged", k-1, k)
		}
		if r.last < p.spso && r.state != Acquired {
			return fmt.Errorf("range %d-%d %s below spso %d", r.first, r.last, r.state, p.spso)
		}
		if r.state == Acquired && (r.owner == "" || r.count < 1) {
			return fmt.Errorf("range %d-%d acquired without owner or count", r.first, r.last)
		}
		if r.state != Acquired && (r.owner != "" || r.deadline != 0 && r.state != Available) {
			return fmt.Errorf("range %d-%d %s keeps an owner or deadline", r.first, r.last, r.state)
		}
		if r.last >= p.spso {
			if max(r.first, p.spso) != covered {
				return fmt.Errorf("hole at %d (next range starts %d)", covered, r.first)
			}
			covered = r.last + 1
		}
	}
	if covered != p.speo+1 {
		return fmt.Errorf("window covered to %d, speo %d", covered-1, p.speo)
	}
	if k := p.search(p.spso); k < len(p.ranges) && p.ranges[k].first <= p.spso && p.ranges[k].state.Terminal() {
		return fmt.Errorf("spso %d sits on a terminal range", p.spso)
	}
	for k := p.search(p.spso); k < len(p.ranges); k++ {
		r := &p.ranges[k]
		if r.state == Available && max(r.first, p.spso) < p.availFrom {
			return fmt.Errorf("available %d-%d below availFrom %d", r.first, r.last, p.availFrom)
		}
	}
	return nil
}
