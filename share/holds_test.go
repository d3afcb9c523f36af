package share

import (
	"testing"
	"time"
)

func TestHolds(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	p := New(Config{})
	p.Initialise(0, 0)
	var src MemSource
	src.Append(3) // one batch per call: offsets 0-2
	src.Append(3) // 3-5
	var res AcquireResult
	if p.Holds("a") {
		t.Fatal("nothing acquired yet: Holds(a) = true")
	}
	mustAcquire(t, p, "a", now, &src, &res, 1)
	mustAcquire(t, p, "b", now, &src, &res, 1)
	check := func(step string, want map[string]bool) {
		t.Helper()
		for m, w := range want {
			if got := p.Holds(m); got != w {
				t.Errorf("%s: Holds(%q) = %v, want %v", step, m, got, w)
			}
		}
	}
	check("a and b acquired", map[string]bool{"a": true, "b": true, "c": false, "": false})
	mustAck(t, p, "a", now, AckBatch{0, 2, []AckType{AckAccept}})
	check("a accepted all", map[string]bool{"a": false, "b": true})
	mustAck(t, p, "b", now, AckBatch{3, 4, []AckType{AckRelease}})
	check("b released part", map[string]bool{"b": true})
	p.ReleaseMember("b", now, nil)
	check("b's session closed", map[string]bool{"b": false})
}
