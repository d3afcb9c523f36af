package fault

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseRules(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    func(t *testing.T, r []Rule)
	}{
		{in: `{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","count":3}`, want: func(t *testing.T, r []Rule) {
			if len(r) != 1 || *r[0].API != 0 || *r[0].Error != 6 || r[0].Count != 3 {
				t.Errorf("got %+v", r)
			}
		}},
		{in: `[{"api":1,"error":6,"topic":"t","partition":2},{"api":"fetch","latency_ms":50}]`, want: func(t *testing.T, r []Rule) {
			if len(r) != 2 || *r[0].API != 1 || *r[0].Partition != 2 || *r[1].API != 1 || r[1].LatencyMs != 50 {
				t.Errorf("got %+v", r)
			}
		}},
		{in: `{"api":"Produce","error":"REQUEST_TIMED_OUT","after":true}`},
		{in: `{"api":"Produce","error":"NOT_ENOUGH_REPLICAS_AFTER_APPEND","after":true}`},
		{in: `{"api":"Produce","close":true,"after":true}`},
		{in: `{"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ","error":"UNKNOWN_TOPIC_ID"}`, want: func(t *testing.T, r []Rule) {
			if r[0].topicID[15] != 1 {
				t.Errorf("topic id %v", r[0].topicID)
			}
		}},
		{in: ``},
		{in: `{"api":"Produce"}`, err: "no effect"},
		{in: `{"api":"Nope","error":6}`, err: `unknown API "Nope"`},
		{in: `{"api":"Produce","error":"NOPE"}`, err: `unknown Kafka error "NOPE"`},
		{in: `{"api":"Produce","error":0}`, err: "code 0 is no error"},
		{in: `{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","after":true}`, err: "after answers REQUEST_TIMED_OUT"},
		{in: `{"api":"Fetch","error":"NOT_ENOUGH_REPLICAS_AFTER_APPEND","after":true}`, err: "after answers"},
		{in: `{"api":"Produce","no_answer":true,"close":true}`, err: "no_answer excludes"},
		{in: `{"api":"Produce","close":true,"error":6}`, err: "close excludes error"},
		{in: `{"api":"Produce","after":true,"latency_ms":5}`, err: "after needs error or close"},
		{in: `{"latency_ms":-1}`, err: "latency_ms -1 out of range"},
		{in: `{"error":6,"fraction":1.5}`, err: "fraction 1.5"},
		{in: `{"error":6,"count":-1}`, err: "count -1"},
		{in: `{"error":6,"min_version":5,"max_version":3}`, err: "min_version 5 above"},
		{in: `{"error":6,"scope":"everything"}`, err: `scope "everything"`},
		{in: `{"error":6,"scope":"request","topic":"t"}`, err: `scope "request" with a topic`},
		{in: `{"error":6,"topic_id":"xyz"}`, err: "is not a topic id"},
		{in: `{"error":6,"colour":"red"}`, err: `unknown field "colour"`},
		{in: `[{"error":6},{"close":true,"error":6}]`, err: "fault rule 2: close excludes"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRules(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil {
				tc.want(t, r)
			}
		})
	}
}

func TestRuleJSONNames(t *testing.T) {
	r, err := ParseRules(`{"api":0,"error":6}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r[0])
	if got, want := string(b), `{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func mustRule(t *testing.T, s string) Rule {
	t.Helper()
	r, err := ParseRules(s)
	if err != nil || len(r) != 1 {
		t.Fatalf("%s: %v", s, err)
	}
	return r[0]
}

func TestMatchFilters(t *testing.T) {
	produce := Request{Key: 0, Version: 9, Node: 1, ClientID: "app", Principal: "User:alice",
		Entities: []Entity{{Topic: "orders", TopicID: [16]byte{15: 1}, Partition: 0}, {Topic: "orders", Partition: 2}}}
	commit := Request{Key: 8, Version: 8, Node: 1, Groups: []string{"g"}, Entities: []Entity{{Topic: "orders", Partition: 0}}}
	txn := Request{Key: 24, Version: 3, Node: 1, TxnIDs: []string{"tx"}}
	for _, tc := range []struct {
		rule string
		req  Request
		hit  bool
	}{
		{`{"api":"Produce","error":6}`, produce, true},
		{`{"api":"Fetch","error":6}`, produce, false},
		{`{"error":6}`, commit, true},
		{`{"api":"Produce","min_version":10,"error":6}`, produce, false},
		{`{"api":"Produce","max_version":9,"min_version":3,"error":6}`, produce, true},
		{`{"node":1,"error":6}`, produce, true},
		{`{"node":2,"error":6}`, produce, false},
		{`{"client_id":"app","error":6}`, produce, true},
		{`{"client_id":"other","error":6}`, produce, false},
		{`{"principal":"User:alice","error":6}`, produce, true},
		{`{"principal":"User:bob","error":6}`, produce, false},
		{`{"topic":"orders","partition":2,"error":6}`, produce, true},
		{`{"topic":"orders","partition":1,"error":6}`, produce, false},
		{`{"topic":"other","error":6}`, produce, false},
		{`{"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ","error":6}`, produce, true},
		{`{"topic_id":"AAAAAAAAAAAAAAAAAAAAAg","error":6}`, produce, false},
		{`{"group":"g","error":6}`, commit, true},
		{`{"group":"g","error":6}`, produce, false},
		{`{"transactional_id":"tx","error":6}`, txn, true},
		{`{"transactional_id":"ty","error":6}`, txn, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			s := NewSet(nil)
			if _, err := s.Add(mustRule(t, tc.rule)); err != nil {
				t.Fatal(err)
			}
			if _, hit := s.Match(&tc.req); hit != tc.hit {
				t.Errorf("hit %v, want %v", hit, tc.hit)
			}
		})
	}
}

func TestCountAndOn(t *testing.T) {
	s := NewSet(nil)
	if s.On() {
		t.Fatal("empty set is on")
	}
	r, _ := s.Add(mustRule(t, `{"api":"Produce","error":6,"count":3}`))
	req := Request{Key: 0}
	for i := 0; i < 5; i++ {
		_, hit := s.Match(&req)
		if hit != (i < 3) {
			t.Fatalf("match %d: hit %v", i, hit)
		}
	}
	if s.On() {
		t.Error("set still on after its only rule is done")
	}
	st, _ := s.Get(r.ID)
	if st.Hits != 3 || !st.Done {
		t.Errorf("status %+v", st)
	}
	if err := s.Remove(r.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second remove: %v", err)
	}
}

func TestFirstRuleWins(t *testing.T) {
	s := NewSet(nil)
	a, _ := s.Add(mustRule(t, `{"api":"Produce","error":6,"count":1}`))
	b, _ := s.Add(mustRule(t, `{"api":"Produce","latency_ms":1}`))
	req := Request{Key: 0}
	if r, _ := s.Match(&req); r.ID != a.ID {
		t.Errorf("first match rule %d, want %d", r.ID, a.ID)
	}
	if r, _ := s.Match(&req); r.ID != b.ID {
		t.Errorf("second match rule %d, want %d", r.ID, b.ID)
	}
}

func TestFractionDeterministic(t *testing.T) {
	run := func() []bool {
		s := NewSet(nil)
		s.Add(mustRule(t, `{"error":6,"fraction":0.3,"seed":42}`))
		var out []bool
		for i := 0; i < 1000; i++ {
			_, hit := s.Match(&Request{})
			out = append(out, hit)
		}
		return out
	}
	a, b := run(), run()
	hits := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs between runs with one seed", i)
		}
		if a[i] {
			hits++
		}
	}
	if hits < 230 || hits > 370 {
		t.Errorf("%d hits of 1000 at fraction 0.3", hits)
	}
}

func TestWait(t *testing.T) {
	s := NewSet(nil)
	r, _ := s.Add(mustRule(t, `{"error":6}`))
	done := make(chan Status)
	go func() {
		st, err := s.Wait(context.Background(), r.ID, 2)
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	s.Match(&Request{})
	s.Match(&Request{})
	if st := <-done; st.Hits < 2 {
		t.Errorf("wait returned at %d hits", st.Hits)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if st, err := s.Wait(ctx, r.ID, 100); !errors.Is(err, context.DeadlineExceeded) || st.Hits != 2 {
		t.Errorf("timed-out wait: %+v %v", st, err)
	}
	go func() { s.Remove(r.ID) }()
	if _, err := s.Wait(context.Background(), r.ID, 100); !errors.Is(err, ErrNotFound) {
		t.Errorf("wait on removed rule: %v", err)
	}
	if _, err := s.Wait(context.Background(), 99, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("wait on unknown rule: %v", err)
	}
}

func TestValidateHookAndIDs(t *testing.T) {
	s := NewSet(func(r *Rule) error {
		if r.API != nil && *r.API == 1 {
			return errors.New("not served")
		}
		return nil
	})
	if _, err := s.Add(mustRule(t, `{"api":"Fetch","error":6}`)); err == nil {
		t.Error("validate hook ignored")
	}
	r := mustRule(t, `{"error":6}`)
	r.ID = 7
	if got, err := s.Add(r); err != nil || got.ID != 7 {
		t.Fatalf("add with id: %v %v", got.ID, err)
	}
	if _, err := s.Add(r); err == nil {
		t.Error("duplicate id accepted")
	}
}
