package share

import (
	"errors"
	"sync"
	"testing"
)

// gatedPersister records writes and holds every sync write until released,
// standing in for a slow fsync.
type gatedPersister struct {
	MemPersister
	mu      sync.Mutex
	written []int64 // StartOffset of each write, in order
	synced  []bool
	entered chan struct{}
	release chan struct{}
	fail    error
}

func (g *gatedPersister) Write(key Key, st *State, sync bool) error {
	if sync {
		g.entered <- struct{}{}
		<-g.release
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return g.fail
	}
	g.written = append(g.written, st.StartOffset)
	g.synced = append(g.synced, sync)
	return nil
}

func newCommitFixture() (*Manager, *part, *gatedPersister) {
	g := &gatedPersister{entered: make(chan struct{}, 8), release: make(chan struct{})}
	m := &Manager{persister: g}
	p := &part{key: Key{Group: "g", Partition: 0}, sp: New(Config{})}
	return m, p, g
}

// A durable write in progress holds neither the share-partition's lock nor
// back later operations; the operations that queued behind it share one
// write of the latest snapshot, and writes never go backwards.
func TestCommitGroupsDurableWrites(t *testing.T) {
	st, p, g := newCommitFixture()
	stage := func(offset int64) pendingWrite {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stageLocked(p.sp.Reset(offset))
	}
	errs := make(chan error, 3)
	w1 := stage(10)
	go func() { errs <- st.commit(p, w1) }()
	<-g.entered // the first write is "fsyncing"
	if !p.mu.TryLock() {
		t.Fatal("share-partition lock held during a durable write")
	}
	p.mu.Unlock()
	w2, w3 := stage(20), stage(30)
	var wg sync.WaitGroup
	for _, w := range []pendingWrite{w2, w3} {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- st.commit(p, w) }()
	}
	close(g.release) // every later sync write passes at once
	wg.Wait()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.written) != 2 || g.written[0] != 10 || g.written[1] != 30 {
		t.Fatalf("writes %v, want [10 30]: the queued operations share one write of the latest snapshot", g.written)
	}
	if p.syncedSeq != w3.seq || p.writtenSeq != w3.seq {
		t.Fatalf("synced %d written %d, want %d", p.syncedSeq, p.writtenSeq, w3.seq)
	}
}

// A non-durable write does not make a later durable one skip its sync, and
// a failed write is reported to the operation that needed it and retried by
// the next one.
func TestCommitSyncAndFailure(t *testing.T) {
	st, p, g := newCommitFixture()
	close(g.release)
	stage := func(offset int64, durable bool) pendingWrite {
		p.mu.Lock()
		defer p.mu.Unlock()
		eff := p.sp.Reset(offset)
		eff.Durable = durable
		return p.stageLocked(eff)
	}
	if err := st.commit(p, stage(1, false)); err != nil {
		t.Fatal(err)
	}
	w := stage(2, true)
	g.fail = errors.New("disk on fire")
	if err := st.commit(p, w); err == nil {
		t.Fatal("failed durable write reported success")
	}
	g.fail = nil
	if err := st.commit(p, w); err != nil {
		t.Fatal(err)
	}
	if err := st.commit(p, pendingWrite{}); err != nil {
		t.Fatal(err)
	}
	want := []bool{false, true}
	if len(g.synced) != 2 || g.synced[0] != want[0] || g.synced[1] != want[1] || g.written[1] != 2 {
		t.Fatalf("writes %v synced %v, want offsets [1 2] synced %v", g.written, g.synced, want)
	}
}
