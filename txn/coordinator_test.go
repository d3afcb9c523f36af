package txn

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"sharq/log/clock"
)

type marker struct {
	tp     TopicPartition
	pid    int64
	epoch  int16
	commit bool
}

type fakeMarkers struct {
	mu    sync.Mutex
	got   []marker
	fail  error
	wrote chan marker // if set, every written marker is sent here too
}

func (f *fakeMarkers) WriteMarker(tp TopicPartition, pid int64, epoch int16, commit bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.got = append(f.got, marker{tp, pid, epoch, commit})
	if f.wrote != nil {
		f.wrote <- marker{tp, pid, epoch, commit}
	}
	return nil
}

type fakeOffsets struct{ done []string }

func (f *fakeOffsets) CompleteTxnOffsets(g string, pid int64, commit bool) error {
	s := "abort"
	if commit {
		s = "commit"
	}
	f.done = append(f.done, g+":"+s)
	return nil
}

type harness struct {
	t       *testing.T
	store   *MemStore
	markers *fakeMarkers
	offsets *fakeOffsets
	clk     *clock.Fake
	ids     *IDAllocator
	c       *Coordinator
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, store: NewMemStore(), markers: &fakeMarkers{}, offsets: &fakeOffsets{}, clk: clock.NewFake(time.UnixMilli(1_000_000))}
	next := int64(1000)
	h.ids = &IDAllocator{Reserve: func(_ context.Context, n int64) (int64, error) { f := next; next += n; return f, nil }}
	h.open()
	return h
}

func (h *harness) open() {
	c, err := New(Config{Store: h.store, IDs: h.ids, Markers: h.markers, Offsets: h.offsets,
		Clock:           h.clk,
		PartitionExists: func(tp TopicPartition) bool { return tp.Topic != "missing" }})
	if err != nil {
		h.t.Fatal(err)
	}
	h.c = c
}

func (h *harness) init(id string) ProducerIDAndEpoch {
	h.t.Helper()
	pe, err := h.c.InitProducerID(context.Background(), id, 60000, nil)
	if err != nil {
		h.t.Fatalf("init %s: %v", id, err)
	}
	return pe
}

var tpA = TopicPartition{"a", 0}

func TestInitProducerID(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.c.InitProducerID(ctx, "", 1000, nil); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("empty id: %v", err)
	}
	for _, to := range []int32{0, -1, 15*60*1000 + 1} {
		if _, err := h.c.InitProducerID(ctx, "x", to, nil); !errors.Is(err, ErrInvalidTransactionTimeout) {
			t.Fatalf("timeout %d: %v", to, err)
		}
	}
	p1 := h.init("x")
	if p1.Epoch != 0 {
		t.Fatalf("first init epoch %d", p1.Epoch)
	}
	p2 := h.init("x")
	if p2.ProducerID != p1.ProducerID || p2.Epoch != 1 {
		t.Fatalf("re-init = %+v", p2)
	}
	// the old producer is fenced
	if _, err := h.c.AddPartitions("x", p1.ProducerID, p1.Epoch, []TopicPartition{tpA}, true); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("zombie add: %v", err)
	}
	if _, err := h.c.EndTxn("x", p1.ProducerID, p1.Epoch, true, true); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("zombie end: %v", err)
	}
	// KIP-360 expected epoch: a stale one is fenced, the current one bumps
	if _, err := h.c.InitProducerID(ctx, "x", 1000, &ProducerIDAndEpoch{ProducerID: 5, Epoch: 0}); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("wrong expected pid: %v", err)
	}
	p3, err := h.c.InitProducerID(ctx, "x", 1000, &p2)
	if err != nil || p3.Epoch != 2 {
		t.Fatalf("expected-epoch init = %+v, %v", p3, err)
	}
	// retry of that call returns the same epoch
	if p4, err := h.c.InitProducerID(ctx, "x", 1000, &p2); err != nil || p4 != p3 {
		t.Fatalf("retry = %+v, %v", p4, err)
	}
}

func TestCommitAbortTV2(t *testing.T) {
	h := newHarness(t)
	p := h.init("x")
	if _, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, true, true); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("commit without a transaction: %v", err)
	}
	if errs, err := h.c.AddPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA, {"missing", 0}}, true); err != nil ||
		!errors.Is(errs[TopicPartition{"missing", 0}], ErrUnknownTopicOrPartition) || !errors.Is(errs[tpA], ErrOperationNotAttempted) {
		t.Fatalf("unknown topic: %v %v", errs, err)
	}
	if _, err := h.c.AddPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA}, true); err != nil {
		t.Fatal(err)
	}
	if err := h.c.AddGroup("x", p.ProducerID, p.Epoch, "g", true); err != nil {
		t.Fatal(err)
	}
	if v, err := h.c.VerifyPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA, {"b", 0}}); err != nil || v[tpA] != nil || !errors.Is(v[TopicPartition{"b", 0}], ErrTransactionAbortable) {
		t.Fatalf("verify: %v %v", v, err)
	}
	next, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, true, true)
	if err != nil || next.ProducerID != p.ProducerID || next.Epoch != p.Epoch+1 {
		t.Fatalf("commit = %+v, %v", next, err)
	}
	want := []marker{{tpA, p.ProducerID, p.Epoch + 1, true}}
	if !reflect.DeepEqual(h.markers.got, want) || !reflect.DeepEqual(h.offsets.done, []string{"g:commit"}) {
		t.Fatalf("markers %+v offsets %v", h.markers.got, h.offsets.done)
	}
	// a retry of the commit (old epoch) succeeds without new markers
	if r, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, true, true); err != nil || r != next {
		t.Fatalf("commit retry = %+v, %v", r, err)
	}
	// abort of an empty transaction bumps the epoch (TV2)
	a, err := h.c.EndTxn("x", next.ProducerID, next.Epoch, false, true)
	if err != nil || a.Epoch != next.Epoch+1 {
		t.Fatalf("empty abort = %+v, %v", a, err)
	}
	// the wrong epoch and an unknown id
	if _, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, false, true); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("stale abort: %v", err)
	}
	if _, err := h.c.EndTxn("nope", 1, 0, true, true); !errors.Is(err, ErrInvalidProducerIDMapping) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := h.c.EndTxn("x", 77, a.Epoch, true, true); !errors.Is(err, ErrInvalidProducerIDMapping) {
		t.Fatalf("wrong pid: %v", err)
	}
}

func TestTV1EndTxn(t *testing.T) {
	h := newHarness(t)
	p := h.init("x")
	if _, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, false, false); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("TV1 abort of Empty: %v", err)
	}
	if _, err := h.c.AddPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, false, false); err != nil {
		t.Fatal(err)
	}
	if h.markers.got[0].epoch != p.Epoch {
		t.Fatalf("TV1 marker epoch %d, want %d", h.markers.got[0].epoch, p.Epoch)
	}
	if _, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, false, false); err != nil {
		t.Fatalf("TV1 abort retry: %v", err)
	}
	if _, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, true, false); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("TV1 commit after abort: %v", err)
	}
}

// A re-init with a transaction open aborts it with a fenced epoch.
func TestReinitAbortsOpenTransaction(t *testing.T) {
	h := newHarness(t)
	p := h.init("x")
	if _, err := h.c.AddPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA}, true); err != nil {
		t.Fatal(err)
	}
	p2 := h.init("x")
	if len(h.markers.got) != 1 || h.markers.got[0].commit || h.markers.got[0].epoch <= p.Epoch {
		t.Fatalf("markers %+v", h.markers.got)
	}
	if p2.Epoch <= h.markers.got[0].epoch {
		t.Fatalf("new epoch %d not above the abort marker's %d", p2.Epoch, h.markers.got[0].epoch)
	}
}

func TestTimeoutsAndExpiry(t *testing.T) {
	h := newHarness(t)
	p := h.init("x")
	if _, err := h.c.AddPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA}, true); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(59 * time.Second)
	if got := h.c.AbortTimedOut(); len(got) != 0 {
		t.Fatalf("aborted before the timeout: %v", got)
	}
	h.clk.Advance(2 * time.Second)
	if got := h.c.AbortTimedOut(); !reflect.DeepEqual(got, []string{"x"}) {
		t.Fatalf("timed out = %v", got)
	}
	if len(h.markers.got) != 1 || h.markers.got[0].commit {
		t.Fatalf("markers %+v", h.markers.got)
	}
	if _, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, true, true); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("commit after timeout: %v", err)
	}
	d, err := h.c.Describe("x")
	if err != nil || d.Metadata.State != CompleteAbort {
		t.Fatalf("describe = %+v, %v", d, err)
	}
	h.clk.Advance(7*24*time.Hour - time.Second)
	if got := h.c.ExpireIDs(); len(got) != 0 {
		t.Fatalf("expired early: %v", got)
	}
	h.clk.Advance(time.Second)
	if got := h.c.ExpireIDs(); !reflect.DeepEqual(got, []string{"x"}) {
		t.Fatalf("expired = %v", got)
	}
	if _, err := h.c.Describe("x"); !errors.Is(err, ErrTransactionalIDNotFound) {
		t.Fatalf("describe expired: %v", err)
	}
	h.open()
	if _, err := h.c.Describe("x"); !errors.Is(err, ErrTransactionalIDNotFound) {
		t.Fatalf("expired id came back after restart: %v", err)
	}
}

// Run aborts a timed-out transaction on its own abort interval, on the
// coordinator's clock, and returns once its context is done.
func TestRunAbortsOnClock(t *testing.T) {
	h := newHarness(t)
	p := h.init("x") // 60 s transaction timeout
	if _, err := h.c.AddPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA}, true); err != nil {
		t.Fatal(err)
	}
	h.markers.wrote = make(chan marker, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.c.Run(ctx, 10*time.Second, time.Hour)
	}()
	h.clk.BlockUntil(2) // both tickers armed
	h.clk.Advance(70 * time.Second)
	m := <-h.markers.wrote
	if m.tp != tpA || m.commit || m.pid != p.ProducerID {
		t.Fatalf("marker %+v, want an abort of %v", m, tpA)
	}
	if d, err := h.c.Describe("x"); err != nil || d.Metadata.State != CompleteAbort {
		t.Fatalf("describe = %+v, %v", d, err)
	}
	cancel()
	<-done
	if n := h.clk.Pending(); n != 0 {
		t.Fatalf("%d timers left armed after Run returned", n)
	}
}

// A decision whose markers failed is durable and completed later, also
// after a restart; meanwhile the producer gets CONCURRENT_TRANSACTIONS.
func TestPreparedSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	p := h.init("x")
	if _, err := h.c.AddPartitions("x", p.ProducerID, p.Epoch, []TopicPartition{tpA, {"b", 1}}, true); err != nil {
		t.Fatal(err)
	}
	h.markers.fail = errors.New("disk gone")
	next, err := h.c.EndTxn("x", p.ProducerID, p.Epoch, true, true)
	if err != nil {
		t.Fatalf("commit with failing markers: %v", err)
	}
	if _, err := h.c.AddPartitions("x", next.ProducerID, next.Epoch, []TopicPartition{tpA}, true); !errors.Is(err, ErrConcurrentTransactions) {
		t.Fatalf("add while prepared: %v", err)
	}
	h.open() // restart
	d, _ := h.c.Describe("x")
	if d.Metadata.State != PrepareCommit || len(d.Metadata.Partitions) != 2 {
		t.Fatalf("after restart: %+v", d.Metadata)
	}
	h.markers.fail = nil
	if n := h.c.CompleteUnfinished(); n != 1 {
		t.Fatalf("completed %d", n)
	}
	if len(h.markers.got) != 2 || !h.markers.got[0].commit {
		t.Fatalf("markers %+v", h.markers.got)
	}
	if l, _, _ := h.c.List(ListFilter{StateNames: []string{"CompleteCommit"}, MinDurationMs: -1}); len(l) != 1 || l[0].ID != "x" {
		t.Fatalf("list = %+v", l)
	}
}

func TestList(t *testing.T) {
	h := newHarness(t)
	a := h.init("a")
	h.init("b")
	if _, err := h.c.AddPartitions("a", a.ProducerID, a.Epoch, []TopicPartition{tpA}, true); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(5 * time.Second)
	cases := []struct {
		f    ListFilter
		want []string
		unk  []string
	}{
		{ListFilter{MinDurationMs: -1}, []string{"a", "b"}, nil},
		{ListFilter{StateNames: []string{"Ongoing"}, MinDurationMs: -1}, []string{"a"}, nil},
		{ListFilter{StateNames: []string{"Bogus"}, MinDurationMs: -1}, nil, []string{"Bogus"}},
		{ListFilter{ProducerIDs: []int64{a.ProducerID}, MinDurationMs: -1}, []string{"a"}, nil},
		{ListFilter{StateNames: []string{"Ongoing"}, MinDurationMs: 4000}, []string{"a"}, nil},
		{ListFilter{StateNames: []string{"Ongoing"}, MinDurationMs: 6000}, nil, nil},
	}
	for i, tc := range cases {
		l, unk, err := h.c.List(tc.f)
		var ids []string
		for _, d := range l {
			ids = append(ids, d.ID)
		}
		if err != nil || !reflect.DeepEqual(ids, tc.want) || !reflect.DeepEqual(unk, tc.unk) {
			t.Errorf("case %d: %v %v %v", i, ids, unk, err)
		}
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	m := Metadata{ProducerID: 1, Epoch: 2, State: Ongoing, Partitions: []TopicPartition{{"t", 1}}, Groups: []string{"g"}}
	f.Add(EncodeMetadata(&m))
	f.Add([]byte{'t', 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMetadata(b)
		if err != nil {
			return
		}
		if got := EncodeMetadata(&m); string(got) != string(b) {
			t.Fatalf("round trip differs")
		}
	})
}
