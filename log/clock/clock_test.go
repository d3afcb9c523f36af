package clock

import (
	"reflect"
	"testing"
	"time"
)

var start = time.Unix(1_700_000_000, 0)

// Timers fire inside Advance in deadline order, arming order breaking
// ties; one armed by a callback fires in the same Advance if due; the
// clock reads each timer's deadline while its callback runs.
func TestFakeOrder(t *testing.T) {
	c := NewFake(start)
	var got []string
	note := func(s string) func() {
		return func() { got = append(got, s+"@"+c.Now().Sub(start).String()) }
	}
	c.AfterFunc(3*time.Second, note("c"))
	c.AfterFunc(time.Second, note("a"))
	c.AfterFunc(time.Second, note("b"))
	c.AfterFunc(2*time.Second, func() {
		note("d")()
		c.AfterFunc(time.Second, note("e")) // due at 3s, after c (armed earlier)
		c.AfterFunc(5*time.Second, note("late"))
	})
	c.Advance(3 * time.Second)
	want := []string{"a@1s", "b@1s", "d@2s", "c@3s", "e@3s"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	if c.Pending() != 1 || !c.Now().Equal(start.Add(3*time.Second)) {
		t.Fatalf("pending %d at %v", c.Pending(), c.Now())
	}
}

// Stop and Reset report whether the timer was pending; a stopped timer
// never fires, a reset one fires at its new deadline, also after it fired.
func TestFakeStopReset(t *testing.T) {
	c := NewFake(start)
	fired := 0
	tm := c.AfterFunc(time.Second, func() { fired++ })
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop of a pending timer true, of a stopped one false")
	}
	c.Advance(2 * time.Second)
	if fired != 0 {
		t.Fatal("a stopped timer fired")
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a stopped timer reported it pending")
	}
	if !tm.Reset(3 * time.Second) {
		t.Fatal("Reset of a pending timer reported it idle")
	}
	c.Advance(2 * time.Second)
	if fired != 0 {
		t.Fatal("fired at its old deadline")
	}
	c.Advance(time.Second)
	if fired != 1 {
		t.Fatalf("fired %d times at its new deadline", fired)
	}
	tm.Reset(time.Second)
	c.Advance(time.Second)
	if fired != 2 || c.Pending() != 0 {
		t.Fatalf("re-armed after firing: fired %d, pending %d", fired, c.Pending())
	}
}

// A ticker on a Fake ticks every period inside Advance, keeps at most one
// unreceived tick, and is silent once stopped.
func TestFakeTicker(t *testing.T) {
	c := NewFake(start)
	tk := NewTicker(c, time.Second)
	c.Advance(999 * time.Millisecond)
	select {
	case <-tk.C:
		t.Fatal("ticked before its period")
	default:
	}
	c.Advance(time.Millisecond)
	if at := <-tk.C; !at.Equal(start.Add(time.Second)) {
		t.Fatalf("tick at %v", at)
	}
	c.Advance(5 * time.Second) // five ticks, one kept
	if at := <-tk.C; !at.Equal(start.Add(2 * time.Second)) {
		t.Fatalf("kept tick at %v, want the first unreceived one", at)
	}
	select {
	case <-tk.C:
		t.Fatal("more than one tick kept")
	default:
	}
	tk.Stop()
	if c.Pending() != 0 {
		t.Fatalf("%d timers pending after Stop", c.Pending())
	}
	c.Advance(time.Minute)
	select {
	case <-tk.C:
		t.Fatal("ticked after Stop")
	default:
	}
}

// BlockUntil returns once another goroutine has armed enough timers.
func TestFakeBlockUntil(t *testing.T) {
	c := NewFake(start)
	go func() {
		c.AfterFunc(time.Second, func() {})
		NewTicker(c, time.Second)
	}()
	c.BlockUntil(2)
	if c.Pending() != 2 {
		t.Fatalf("%d pending", c.Pending())
	}
}

// The real clock's timers fire, re-arm, and tick.
func TestReal(t *testing.T) {
	c := Real()
	done := make(chan struct{}, 2)
	tm := c.AfterFunc(time.Millisecond, func() { done <- struct{}{} })
	<-done
	tm.Reset(time.Millisecond)
	<-done
	tk := NewTicker(c, time.Millisecond)
	defer tk.Stop()
	<-tk.C
	<-tk.C
}
