package quota

import (
	"testing"
	"time"
)

type entry struct {
	parts  []Part
	values map[string]string
}

func seq(es []entry) func(func([]Part, map[string]string) bool) {
	return func(yield func([]Part, map[string]string) bool) {
		for _, e := range es {
			if !yield(e.parts, e.values) {
				return
			}
		}
	}
}

func TestResolvePrecedence(t *testing.T) {
	u := func(n string) Part { return Part{Type: "user", Name: n} }
	c := func(n string) Part { return Part{Type: "client-id", Name: n} }
	du, dc := Part{Type: "user", Default: true}, Part{Type: "client-id", Default: true}
	all := []entry{
		{[]Part{dc}, map[string]string{"producer_byte_rate": "8"}},
		{[]Part{c("app")}, map[string]string{"producer_byte_rate": "7"}},
		{[]Part{du}, map[string]string{"producer_byte_rate": "6"}},
		{[]Part{du, dc}, map[string]string{"producer_byte_rate": "5"}},
		{[]Part{du, c("app")}, map[string]string{"producer_byte_rate": "4"}},
		{[]Part{u("alice")}, map[string]string{"producer_byte_rate": "3"}},
		{[]Part{u("alice"), dc}, map[string]string{"producer_byte_rate": "2"}},
		{[]Part{u("alice"), c("app")}, map[string]string{"producer_byte_rate": "1"}},
	}
	// Removing the best entry each time exposes the next in Kafka's order.
	want := []struct {
		v float64
		e Entity
	}{
		{1, Entity{"alice", "app"}}, {2, Entity{"alice", "app"}}, {3, Entity{"alice", ""}},
		{4, Entity{"alice", "app"}}, {5, Entity{"alice", "app"}}, {6, Entity{"alice", ""}},
		{7, Entity{"", "app"}}, {8, Entity{"", "app"}},
	}
	for i, w := range want {
		l, ok := Resolve(seq(all[:len(all)-i]), Produce, "alice", "app")
		if !ok || l.Value != w.v || l.Entity != w.e {
			t.Errorf("step %d: %+v %v, want %v %+v", i, l, ok, w.v, w.e)
		}
	}
	if _, ok := Resolve(seq(all), Fetch, "alice", "app"); ok {
		t.Error("fetch quota resolved from produce-only entries")
	}
	if l, ok := Resolve(seq(all[:2]), Produce, "bob", "other"); !ok || l.Value != 8 || l.Entity != (Entity{"", "other"}) {
		t.Errorf("default client: %+v %v", l, ok)
	}
}

// TestRecordHoldsRate: a client that waits out every throttle moves at the
// quota's rate, once its first full window is spent.
func TestRecordHoldsRate(t *testing.T) {
	m := New(Config{Samples: 11, Window: time.Second})
	limit := Limit{Value: 1000, Entity: Entity{ClientID: "c"}}
	now := time.Unix(1000, 0)
	start := now
	sent := 0.0
	for now.Sub(start) < 60*time.Second {
		d := m.Record(Produce, limit, 100, now)
		sent += 100
		now = now.Add(d + time.Millisecond)
	}
	// The first 10 s allow a burst of 10 windows' worth, as in Kafka.
	got := sent / now.Sub(start).Seconds()
	if got < 1000 || got > 1000*1.2 {
		t.Errorf("rate %.0f/s over %v, want about 1000 (plus the first window's burst)", got, now.Sub(start))
	}
	if d := m.Record(Produce, Limit{Value: 1e9, Entity: Entity{ClientID: "d"}}, 100, now); d != 0 {
		t.Errorf("within quota throttled %v", d)
	}
}
