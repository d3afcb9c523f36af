// Package quota enforces client quotas as Kafka does: produce and fetch
// byte rates and request time percentage per (user, client id), measured
// over quota.window.num samples of quota.window.size.seconds, answered with
// a throttle time for which the broker mutes the connection (KIP-219: the
// response goes out first, carrying throttle_time_ms).
//
// Quotas themselves live in raftmeta (Image.ClientQuotas); Resolve picks
// the one that applies with Kafka's precedence, and the Manager keeps one
// rate per kind and quota entity. Nothing here knows the wire.
package quota

import (
	"strconv"
	"sync"
	"time"
)

// Kind is what a quota limits.
type Kind uint8

const (
	Produce Kind = iota // producer_byte_rate, bytes/s of produce requests
	Fetch               // consumer_byte_rate, bytes/s of fetch responses
	Request             // request_percentage, % of one thread's time
	numKinds
)

// Keys are the quota config keys, by kind.
var Keys = [numKinds]string{"producer_byte_rate", "consumer_byte_rate", "request_percentage"}

// Part is one part of a quota entity, as raftmeta stores it.
type Part struct {
	Type    string // "user" or "client-id"
	Name    string
	Default bool
}

// Entity identifies whose quota a sensor tracks: the user and client id of
// the quota entity that matched (empty when that level did not match; a
// default quota applies to each user or client id separately, as in Kafka).
type Entity struct{ User, ClientID string }

// Limit is one resolved quota.
type Limit struct {
	Value  float64
	Entity Entity
}

// Resolve returns the quota of kind for (user, clientID) from quotas
// (entity parts and their key -> value maps), with Kafka's precedence:
// user+client, user+default client, user, default user+client, default
// user+default client, default user, client, default client. ok is false
// when none applies.
func Resolve(quotas func(yield func(parts []Part, values map[string]string) bool), kind Kind, user, clientID string) (Limit, bool) {
	// rank of each candidate shape, lower wins
	type shape struct {
		user, client int8 // 0 absent, 1 exact, 2 default
	}
	order := []shape{{1, 1}, {1, 2}, {1, 0}, {2, 1}, {2, 2}, {2, 0}, {0, 1}, {0, 2}}
	best, bestRank := Limit{}, len(order)
	for parts, values := range quotas {
		raw, ok := values[Keys[kind]]
		if !ok {
			continue
		}
		var sh shape
		match := true
		for _, p := range parts {
			var lvl int8
			switch {
			case p.Default:
				lvl = 2
			case p.Type == "user" && p.Name == user, p.Type == "client-id" && p.Name == clientID:
				lvl = 1
			default:
				match = false
			}
			switch p.Type {
			case "user":
				sh.user = lvl
			case "client-id":
				sh.client = lvl
			default:
				match = false
			}
		}
		if !match {
			continue
		}
		for rank, o := range order {
			if o == sh && rank < bestRank {
				v, err := strconv.ParseFloat(raw, 64)
				if err != nil || v < 0 {
					break
				}
				e := Entity{}
				if sh.user != 0 {
					e.User = user
				}
				if sh.client != 0 {
					e.ClientID = clientID
				}
				best, bestRank = Limit{Value: v, Entity: e}, rank
			}
		}
	}
	return best, bestRank < len(order)
}

// Config is the measurement window: Samples samples of Window each
// (quota.window.num, quota.window.size.seconds).
type Config struct {
	Samples int
	Window  time.Duration
}

// Manager keeps the rates.
type Manager struct {
	cfg Config
	mu  sync.Mutex
	r   map[rateKey]*rate
}

type rateKey struct {
	kind Kind
	e    Entity
}

// New returns a manager; Samples below 2 count as 2.
func New(cfg Config) *Manager {
	if cfg.Samples < 2 {
		cfg.Samples = 2
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Second
	}
	return &Manager{cfg: cfg, r: map[rateKey]*rate{}}
}

// Record adds value to the rate of kind for limit's entity and returns
// how long the client must be throttled: zero while the rate is within the
// limit, else (rate-limit)/limit times the measured window, as Kafka's
// QuotaUtils.throttleTime, at most one window.
func (m *Manager) Record(kind Kind, limit Limit, value float64, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := rateKey{kind, limit.Entity}
	r := m.r[k]
	if r == nil {
		r = &rate{samples: make([]sample, m.cfg.Samples)}
		m.r[k] = r
	}
	r.record(m.cfg, value, now)
	observed, window := r.measure(m.cfg, now)
	if limit.Value <= 0 {
		if observed > 0 {
			return m.cfg.Window
		}
		return 0
	}
	if observed <= limit.Value {
		return 0
	}
	d := time.Duration((observed - limit.Value) / limit.Value * float64(window))
	return min(d, m.cfg.Window)
}

// sample is one window's sum.
type sample struct {
	start time.Time
	sum   float64
}

// rate is Kafka's Rate over a SampledStat: samples in a ring.
type rate struct {
	samples []sample
	cur     int
}

func (r *rate) record(cfg Config, v float64, now time.Time) {
	s := &r.samples[r.cur]
	if s.start.IsZero() {
		s.start = now
	} else if now.Sub(s.start) >= cfg.Window {
		r.cur = (r.cur + 1) % len(r.samples)
		r.samples[r.cur] = sample{start: now}
		s = &r.samples[r.cur]
	}
	s.sum += v
}

// measure returns the rate per second and the window it was measured
// over: from the oldest live sample to now, but at least Samples-1
// windows, so a client's first burst is spread over a full window as in
// Kafka.
func (r *rate) measure(cfg Config, now time.Time) (float64, time.Duration) {
	total := 0.0
	oldest := now
	expire := time.Duration(len(r.samples)) * cfg.Window
	for i := range r.samples {
		s := &r.samples[i]
		if s.start.IsZero() {
			continue
		}
		if now.Sub(s.start) >= expire {
			*s = sample{}
			continue
		}
		total += s.sum
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	window := max(now.Sub(oldest), time.Duration(len(r.samples)-1)*cfg.Window)
	return total / window.Seconds(), window
}

// PercentOf converts request handling time to request_percentage units
// (percent of one thread's second).
func PercentOf(d time.Duration) float64 { return float64(d) / float64(time.Second) * 100 }
