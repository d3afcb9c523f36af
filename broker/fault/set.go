package fault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
)

// Request is what a rule can see of one request; the broker fills it in
// only while rules are live (Set.On).
type Request struct {
	Key, Version int16
	Node         int32
	ClientID     string
	Principal    string
	Groups       []string // every group id the request names
	TxnIDs       []string // every transactional id it names
	Entities     []Entity // its topic-partitions (Partition -1: a topic as a whole)
}

// Entity is one topic-partition of a request, with both the topic's name
// and its id where the broker knows them.
type Entity struct {
	Topic     string
	TopicID   [16]byte
	Partition int32
}

// Status is a rule with its counts, as fault list shows it.
type Status struct {
	Rule
	Hits    int64 `json:"hits"`    // requests the rule fired on
	Matches int64 `json:"matches"` // requests its filters matched (fraction may skip some)
	Done    bool  `json:"done"`    // count reached: the rule no longer fires
}

// ErrNotFound: no rule has that id.
var ErrNotFound = errors.New("no such fault rule")

type rule struct {
	Rule
	hits, matches int64
	rng           *rand.Rand
	changed       chan struct{} // closed and replaced on every hit and on removal
	removed       bool
}

// Set is the broker's fault rules. Its zero value is not usable: NewSet.
type Set struct {
	// live is the rules that can still fire, in id order; nil when there
	// are none, so the request path costs one atomic load then (On).
	live atomic.Pointer[[]*rule]

	// validate checks what depends on the broker (an API it serves, a
	// scope the API's answer has); nil accepts.
	validate func(*Rule) error

	mu    sync.Mutex
	rules map[int64]*rule
	next  int64
}

// NewSet returns an empty Set; validate (may be nil) is called on every
// rule before it is added.
func NewSet(validate func(*Rule) error) *Set {
	return &Set{validate: validate, rules: map[int64]*rule{}, next: 1}
}

// On reports whether any rule can fire: the request path's only cost when
// there is none.
func (s *Set) On() bool { return s != nil && s.live.Load() != nil }

// Add validates r and adds it, returning it with its id.
func (s *Set) Add(r Rule) (Rule, error) {
	if err := r.Check(); err != nil {
		return Rule{}, err
	}
	if s.validate != nil {
		if err := s.validate(&r); err != nil {
			return Rule{}, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == 0 {
		for s.rules[s.next] != nil {
			s.next++
		}
		r.ID = s.next
		s.next++
	} else if r.ID < 0 || s.rules[r.ID] != nil {
		return Rule{}, fmt.Errorf("rule id %d is taken or negative", r.ID)
	}
	seed := r.Seed
	if seed == 0 {
		seed = uint64(r.ID)
	}
	s.rules[r.ID] = &rule{Rule: r, rng: rand.New(rand.NewPCG(seed, 0x5eed)), changed: make(chan struct{})}
	s.publishLocked()
	return r, nil
}

// Remove deletes a rule; a Wait on it returns ErrNotFound.
func (s *Set) Remove(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rules[id]
	if r == nil {
		return ErrNotFound
	}
	delete(s.rules, id)
	r.removed = true
	close(r.changed)
	s.publishLocked()
	return nil
}

// List returns every rule, done ones included, in id order.
func (s *Set) List() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Status, 0, len(s.rules))
	for _, r := range s.rules {
		out = append(out, r.status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Get returns one rule's status.
func (s *Set) Get(id int64) (Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.rules[id]; r != nil {
		return r.status(), nil
	}
	return Status{}, ErrNotFound
}

func (r *rule) status() Status {
	return Status{Rule: r.Rule, Hits: r.hits, Matches: r.matches, Done: r.done()}
}

func (r *rule) done() bool { return r.Count > 0 && r.hits >= r.Count }

// Wait blocks until rule id has at least hits hits, the context ends (its
// error) or the rule is removed (ErrNotFound). It returns the rule's
// status as it last saw it.
func (s *Set) Wait(ctx context.Context, id, hits int64) (Status, error) {
	for {
		s.mu.Lock()
		r := s.rules[id]
		if r == nil {
			s.mu.Unlock()
			return Status{}, ErrNotFound
		}
		st, ch := r.status(), r.changed
		s.mu.Unlock()
		if st.Hits >= hits {
			return st, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

// publishLocked rebuilds the live list; nil when nothing can fire.
func (s *Set) publishLocked() {
	var live []*rule
	for _, r := range s.rules {
		if !r.done() {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		s.live.Store(nil)
		return
	}
	sort.Slice(live, func(i, j int) bool { return live[i].ID < live[j].ID })
	s.live.Store(&live)
}

// Match finds the first rule (lowest id) whose filters match req and
// which fires on it (its fraction's draw, its count not yet reached),
// counts the hit and returns the rule.
func (s *Set) Match(req *Request) (Rule, bool) {
	lp := s.live.Load()
	if lp == nil {
		return Rule{}, false
	}
	for _, r := range *lp {
		if !r.filters(req) {
			continue
		}
		s.mu.Lock()
		if r.removed || r.done() {
			s.mu.Unlock()
			continue
		}
		r.matches++
		if r.Fraction > 0 && r.Fraction < 1 && r.rng.Float64() >= r.Fraction {
			s.mu.Unlock()
			continue
		}
		r.hits++
		close(r.changed)
		r.changed = make(chan struct{})
		if r.done() {
			s.publishLocked()
		}
		out := r.Rule
		s.mu.Unlock()
		return out, true
	}
	return Rule{}, false
}

// filters reports whether every filter of r matches req. It reads only
// the rule's immutable part, so it runs without the lock.
func (r *rule) filters(req *Request) bool {
	switch {
	case r.API != nil && int16(*r.API) != req.Key,
		r.MinVersion != nil && req.Version < *r.MinVersion,
		r.MaxVersion != nil && req.Version > *r.MaxVersion,
		r.Node != nil && *r.Node != req.Node,
		r.ClientID != "" && r.ClientID != req.ClientID,
		r.Principal != "" && r.Principal != req.Principal,
		r.Group != "" && !contains(req.Groups, r.Group),
		r.TransactionalID != "" && !contains(req.TxnIDs, r.TransactionalID):
		return false
	}
	if r.entityFiltered() {
		for _, e := range req.Entities {
			if r.MatchEntity(e) {
				return true
			}
		}
		return false
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
