package share

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"
)

// The issue 6 "Done" scenarios at the share-partition level.
func TestDoneScenarios(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	at := func(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	t.Run("released every time: counts 1..limit then archived", func(t *testing.T) {
		for _, limit := range []int{2, 5, 10} {
			p := New(Config{DeliveryCountLimit: limit})
			p.Initialise(0, 0)
			var src MemSource
			src.Append(1)
			var res AcquireResult
			var counts []int16
			for i := range 20 {
				mustAcquire(t, p, "m", at(int64(i)), &src, &res, 500)
				if len(res.Acquired) == 0 {
					break
				}
				counts = append(counts, res.Acquired[0].DeliveryCount)
				eff := mustAck(t, p, "m", at(int64(i)), AckBatch{0, 0, []AckType{AckRelease}})
				if last := len(counts) == limit; eff.Durable != last || eff.SPSOMoved != last {
					t.Fatalf("limit %d delivery %d: effects %+v", limit, len(counts), eff)
				}
			}
			if len(counts) != limit {
				t.Fatalf("limit %d: delivered %d times (%v)", limit, len(counts), counts)
			}
			for i, c := range counts {
				if int(c) != i+1 {
					t.Fatalf("limit %d: counts %v", limit, counts)
				}
			}
			if p.StartOffset() != 1 || p.DeliveryCompleteCount() != 0 || p.Lag(1) != 0 {
				t.Fatalf("limit %d: SPSO %d after archive", limit, p.StartOffset())
			}
		}
	})

	t.Run("rejected record never comes back", func(t *testing.T) {
		p := New(Config{})
		p.Initialise(0, 0)
		var src MemSource
		src.Append(3)
		var res AcquireResult
		mustAcquire(t, p, "a", at(0), &src, &res, 500)
		mustAck(t, p, "a", at(1), AckBatch{0, 2, []AckType{AckRelease, AckReject, AckRelease}})
		for i := range 10 {
			mustAcquire(t, p, "b", at(int64(2+i)), &src, &res, 500)
			for _, a := range res.Acquired {
				if a.FirstOffset <= 1 && a.LastOffset >= 1 {
					t.Fatalf("rejected offset 1 redelivered: %+v", res.Acquired)
				}
			}
			var acks []AckBatch
			for _, a := range res.Acquired {
				acks = append(acks, AckBatch{a.FirstOffset, a.LastOffset, []AckType{AckRelease}})
			}
			mustAck(t, p, "b", at(int64(2+i)), acks...)
		}
	})

	t.Run("held past the lock: another member gets count 2", func(t *testing.T) {
		p := New(Config{RecordLockDuration: 15 * time.Second})
		p.Initialise(0, 0)
		var src MemSource
		src.Append(10)
		var res AcquireResult
		mustAcquire(t, p, "a", at(0), &src, &res, 500)
		dl, ok := p.NextDeadline()
		if !ok || !dl.Equal(at(15000)) {
			t.Fatalf("deadline %v %v", dl, ok)
		}
		mustAcquire(t, p, "b", at(14999), &src, &res, 500)
		if len(res.Acquired) != 0 {
			t.Fatalf("b acquired locked records %+v", res.Acquired)
		}
		changed, eff := p.ExpireLocks(dl, nil)
		if !eff.Available || len(changed) != 1 || changed[0].State != Available {
			t.Fatalf("expiry: %+v %+v", changed, eff)
		}
		if _, ok := p.NextDeadline(); ok {
			t.Fatal("a deadline remains after expiry")
		}
		mustAcquire(t, p, "b", at(15001), &src, &res, 500)
		if want := []AcquiredRecords{{0, 9, 2}}; !reflect.DeepEqual(res.Acquired, want) {
			t.Fatalf("b got %+v, want %+v", res.Acquired, want)
		}
		if _, err := p.Acknowledge("a", at(15002), []AckBatch{{0, 9, []AckType{AckAccept}}}); !errors.Is(err, ErrInvalidRecordState) || ErrorCode(err) != 121 {
			t.Fatalf("late ack from a: %v", err)
		}
	})

	t.Run("member dies: records redelivered", func(t *testing.T) {
		p := New(Config{})
		p.Initialise(0, 0)
		var src MemSource
		src.Append(5)
		var res AcquireResult
		mustAcquire(t, p, "a", at(0), &src, &res, 500)
		changed, eff := p.ReleaseMember("a", at(1), nil)
		if !eff.Available || len(changed) != 1 {
			t.Fatalf("release: %+v %+v", changed, eff)
		}
		mustAcquire(t, p, "b", at(2), &src, &res, 500)
		if want := []AcquiredRecords{{0, 4, 1}}; !reflect.DeepEqual(res.Acquired, want) {
			t.Fatalf("b got %+v, want %+v", res.Acquired, want)
		}
	})

	t.Run("renew keeps the lock", func(t *testing.T) {
		p := New(Config{RecordLockDuration: 15 * time.Second})
		p.Initialise(0, 0)
		var src MemSource
		src.Append(5)
		var res AcquireResult
		mustAcquire(t, p, "a", at(0), &src, &res, 500)
		for i := int64(1); i <= 5; i++ {
			eff := mustAck(t, p, "a", at(i*10000), AckBatch{0, 4, []AckType{AckRenew}})
			if eff.Persist {
				t.Fatalf("renew persisted: %+v", eff)
			}
			if changed, _ := p.ExpireLocks(at(i*10000+14999), nil); len(changed) != 0 {
				t.Fatalf("renewed lock expired: %+v", changed)
			}
		}
		mustAck(t, p, "a", at(60000), AckBatch{0, 4, []AckType{AckAccept}})
		if p.StartOffset() != 5 {
			t.Fatalf("SPSO %d", p.StartOffset())
		}
	})
}

func TestUninitialised(t *testing.T) {
	p := New(Config{})
	var res AcquireResult
	if _, err := p.Acquire("a", time.Now(), AcquireRequest{}, &MemSource{}, &res); !errors.Is(err, ErrNotInitialised) {
		t.Fatalf("acquire: %v", err)
	}
	if _, err := p.Acknowledge("a", time.Now(), nil); !errors.Is(err, ErrNotInitialised) {
		t.Fatalf("ack: %v", err)
	}
	if p.Lag(10) != -1 || p.NextFetchOffset() != -1 {
		t.Fatal("lag/next fetch offset of an uninitialised partition")
	}
}

func TestResolveStartOffset(t *testing.T) {
	b := Bounds{LogStart: 10, HighWatermark: 50, LastStable: 40}
	for _, tc := range []struct {
		r    OffsetReset
		dur  int64
		want int64
	}{{ResetLatest, 0, 50}, {ResetEarliest, 0, 10}, {ResetByDuration, 30, 30}, {ResetByDuration, 3, 10}} {
		if got := ResolveStartOffset(tc.r, b, tc.dur); got != tc.want {
			t.Errorf("ResolveStartOffset(%d, %d) = %d, want %d", tc.r, tc.dur, got, tc.want)
		}
	}
}

// batchSource is an endless log of fixed-size batches, without memory.
type batchSource struct {
	size int64
	end  int64
}

func (s *batchSource) Bounds() Bounds {
	return Bounds{HighWatermark: s.end, LastStable: s.end}
}

func (s *batchSource) Batch(off int64) (BatchHeader, bool) {
	if off >= s.end {
		return BatchHeader{}, false
	}
	base := off / s.size * s.size
	return BatchHeader{BaseOffset: base, LastOffset: base + s.size - 1, RecordCount: int32(s.size)}, true
}

func TestAcquireAckAllocs(t *testing.T) {
	p := New(Config{})
	p.Initialise(0, 0)
	src := &batchSource{size: 500, end: 1 << 40}
	var res AcquireResult
	batches := make([]AckBatch, 1)
	types := []AckType{AckAccept}
	now := time.UnixMilli(0)
	cycle := func() {
		if _, err := p.Acquire("member-1", now, AcquireRequest{MaxRecords: 500, BatchSize: 500}, src, &res); err != nil || res.Count != 500 {
			t.Fatalf("acquire: %v %d", err, res.Count)
		}
		batches[0] = AckBatch{res.Acquired[0].FirstOffset, res.Acquired[0].LastOffset, types}
		if _, err := p.Acknowledge("member-1", now, batches); err != nil {
			t.Fatal(err)
		}
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("acquire+ack allocates %.1f times", n)
	}
}

func BenchmarkAcquireAccept(b *testing.B) {
	p := New(Config{})
	p.Initialise(0, 0)
	src := &batchSource{size: 500, end: 1 << 60}
	var res AcquireResult
	batches := make([]AckBatch, 1)
	types := []AckType{AckAccept}
	now := time.UnixMilli(0)
	b.ReportAllocs()
	for b.Loop() {
		p.Acquire("member-1", now, AcquireRequest{MaxRecords: 500, BatchSize: 500}, src, &res)
		batches[0] = AckBatch{res.Acquired[0].FirstOffset, res.Acquired[0].LastOffset, types}
		if _, err := p.Acknowledge("member-1", now, batches); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*500/b.Elapsed().Seconds(), "records/s")
}

// Three members with several batches in flight, each accepting its oldest.
func BenchmarkAcquireAcceptInterleaved(b *testing.B) {
	p := New(Config{})
	p.Initialise(0, 0)
	src := &batchSource{size: 500, end: 1 << 60}
	var res AcquireResult
	members := []string{"m1", "m2", "m3"}
	held := make([][2]int64, 0, 8)
	batches := make([]AckBatch, 1)
	types := []AckType{AckAccept}
	now := time.UnixMilli(0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m := members[i%3]
		p.Acquire(m, now, AcquireRequest{MaxRecords: 500, BatchSize: 500}, src, &res)
		held = append(held, [2]int64{res.RecordsFirst, res.RecordsLast})
		if len(held) == 3 {
			mm := members[(i-2+3)%3]
			batches[0] = AckBatch{held[0][0], held[0][1], types}
			if _, err := p.Acknowledge(mm, now, batches); err != nil {
				b.Fatal(err)
			}
			held = append(held[:0], held[1:]...)
		}
		i++
	}
	b.ReportMetric(float64(b.N)*500/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkAcquireRelease(b *testing.B) {
	p := New(Config{DeliveryCountLimit: 10})
	p.Initialise(0, 0)
	src := &batchSource{size: 500, end: 1 << 60}
	var res AcquireResult
	batches := make([]AckBatch, 1)
	release := []AckType{AckRelease}
	now := time.UnixMilli(0)
	b.ReportAllocs()
	for b.Loop() {
		// Released 9 times (below the limit), so the same batch cycles
		// until it archives and the next one comes in.
		p.Acquire("member-1", now, AcquireRequest{MaxRecords: 500, BatchSize: 500}, src, &res)
		batches[0] = AckBatch{res.Acquired[0].FirstOffset, res.Acquired[0].LastOffset, release}
		if _, err := p.Acknowledge("member-1", now, batches); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*500/b.Elapsed().Seconds(), "records/s")
}

// Many members, each acquiring a batch, then one expiry releases them all.
func BenchmarkExpire(b *testing.B) {
	const inFlight = 100
	p := New(Config{MaxRecordLocks: 10000, DeliveryCountLimit: 10})
	p.Initialise(0, 0)
	src := &batchSource{size: 50, end: 1 << 60}
	var res AcquireResult
	members := make([]string, inFlight)
	for i := range members {
		members[i] = "member-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	var changed []InFlightRange
	ms := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range members {
			p.Acquire(m, time.UnixMilli(ms), AcquireRequest{MaxRecords: 50, BatchSize: 50}, src, &res)
		}
		ms += 31000
		changed, _ = p.ExpireLocks(time.UnixMilli(ms), changed[:0])
		if len(changed) == 0 {
			b.Fatal("nothing expired")
		}
		// Accept everything so the window keeps moving.
		for _, m := range members {
			p.Acquire(m, time.UnixMilli(ms), AcquireRequest{MaxRecords: 50, BatchSize: 50}, src, &res)
			for _, a := range res.Acquired {
				if _, err := p.Acknowledge(m, time.UnixMilli(ms), []AckBatch{{a.FirstOffset, a.LastOffset, []AckType{AckAccept}}}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// The broker's path: raw batches from a log read, Records sliced to the
// acquired span; offsets released after the read started are not mistaken
// for compaction holes.
func TestAcquireFromRawBatches(t *testing.T) {
	var log []byte
	for _, base := range []int64{0, 5, 10, 15} {
		log = append(log, rawBatch(base, 5, 0, -1)...)
	}
	batchLen := len(rawBatch(0, 5, 0, -1))
	bounds := Bounds{HighWatermark: 20, LastStable: 20}
	p := New(Config{})
	p.Initialise(0, 0)
	var src RawBatches
	var res AcquireResult
	now := time.UnixMilli(0)

	src.Reset(p.NextFetchOffset(), log, bounds, nil)
	mustAcquire(t, p, "a", now, &src, &res, 7)
	if want := []AcquiredRecords{{0, 9, 1}}; !reflect.DeepEqual(res.Acquired, want) {
		t.Fatalf("acquired %+v, want %+v", res.Acquired, want)
	}
	if recs := SliceBatches(log, res.RecordsFirst, res.RecordsLast); len(recs) != 2*batchLen {
		t.Fatalf("Records holds %d bytes, want two batches", len(recs))
	}

	// The broker reads at the next fetch offset (10)...
	from := p.NextFetchOffset()
	src.Reset(from, log[2*batchLen:], bounds, nil)
	// ...and before it acquires, a releases 0-4 (an ack needs no fetch lock).
	mustAck(t, p, "a", now, AckBatch{0, 4, []AckType{AckRelease}})
	mustAcquire(t, p, "b", now, &src, &res, 500)
	if want := []AcquiredRecords{{10, 19, 1}}; !reflect.DeepEqual(res.Acquired, want) {
		t.Fatalf("acquired %+v, want %+v", res.Acquired, want)
	}
	var view []InFlightRange
	view = p.InFlight(view)
	if view[0].FirstOffset != 0 || view[0].LastOffset != 4 || view[0].State != Available {
		t.Fatalf("released offsets not left Available: %+v", view)
	}
	// The next read starts at 0 and gets them, with count 2.
	src.Reset(p.NextFetchOffset(), log, bounds, nil)
	mustAcquire(t, p, "b", now, &src, &res, 500)
	if want := []AcquiredRecords{{0, 4, 2}}; !reflect.DeepEqual(res.Acquired, want) {
		t.Fatalf("acquired %+v, want %+v", res.Acquired, want)
	}
}

func TestParseAutoOffsetReset(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want OffsetReset
		dur  time.Duration
		ok   bool
	}{
		{"latest", ResetLatest, 0, true},
		{"EARLIEST", ResetEarliest, 0, true},
		{"by_duration:PT1H", ResetByDuration, time.Hour, true},
		{"by_duration:P1DT30M", ResetByDuration, 24*time.Hour + 30*time.Minute, true},
		{"by_duration:PT0.5S", ResetByDuration, 500 * time.Millisecond, true},
		{"by_duration:P2D", ResetByDuration, 48 * time.Hour, true},
		{"by_duration:-PT1H", 0, 0, false},
		{"by_duration:PT", 0, 0, false},
		{"by_duration:P1H", 0, 0, false},
		{"by_duration:PT1M1H", 0, 0, false},
		{"by_duration:1H", 0, 0, false},
		{"by_duration:", 0, 0, false},
		{"none", 0, 0, false},
	} {
		got, d, err := ParseAutoOffsetReset(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (got != tc.want || d != tc.dur)) {
			t.Errorf("ParseAutoOffsetReset(%q) = %v, %v, %v", tc.in, got, d, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidOffsetReset) {
			t.Errorf("ParseAutoOffsetReset(%q) error %v does not wrap ErrInvalidOffsetReset", tc.in, err)
		}
	}
}

// The persistence path of a write: AppendState + EncodeState of a window
// with a few dozen ranges.
func BenchmarkAppendStateEncode(b *testing.B) {
	p := New(Config{})
	p.Initialise(0, 0)
	src := &batchSource{size: 50, end: 1 << 40}
	var res AcquireResult
	now := time.UnixMilli(0)
	p.Acquire("m", now, AcquireRequest{MaxRecords: 2000}, src, &res)
	types := []AckType{AckAccept, AckRelease, AckReject, AckAccept}
	for off := int64(1); off < 2000; off += 40 {
		if _, err := p.Acknowledge("m", now, []AckBatch{{off, off + 3, types}}); err != nil {
			b.Fatal(err)
		}
	}
	var st State
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		p.AppendState(&st)
		buf = EncodeState(buf[:0], &st)
	}
	b.ReportMetric(float64(len(st.Batches)), "batches")
	b.ReportMetric(float64(len(buf)), "bytes")
}

// The broker's real path: a raw 500-record batch walked by RawBatches.
func BenchmarkAcquireAcceptRaw(b *testing.B) {
	p := New(Config{})
	p.Initialise(0, 0)
	data := rawBatch(0, 500, 0, -1)
	var src RawBatches
	var res AcquireResult
	batches := make([]AckBatch, 1)
	types := []AckType{AckAccept}
	now := time.UnixMilli(0)
	b.ReportAllocs()
	for b.Loop() {
		from := p.NextFetchOffset()
		binary.BigEndian.PutUint64(data, uint64(from))
		src.Reset(from, data, Bounds{HighWatermark: from + 500, LastStable: from + 500}, nil)
		p.Acquire("member-1", now, AcquireRequest{MaxRecords: 500, BatchSize: 500}, &src, &res)
		batches[0] = AckBatch{res.Acquired[0].FirstOffset, res.Acquired[0].LastOffset, types}
		if _, err := p.Acknowledge("member-1", now, batches); err != nil {
			b.Fatal(err)
		}
		if len(SliceBatches(data, res.RecordsFirst, res.RecordsLast)) != len(data) {
			b.Fatal("records not sliced")
		}
	}
	b.ReportMetric(float64(b.N)*500/b.Elapsed().Seconds(), "records/s")
}

// Full is true exactly when Acquire can take nothing: the window at its
// lock limit and nothing Available inside it.
func TestFull(t *testing.T) {
	now := time.UnixMilli(0)
	var res AcquireResult
	take := func(p *SharePartition, src BatchSource) {
		t.Helper()
		if _, err := p.Acquire("m", now, AcquireRequest{MaxRecords: 500}, src, &res); err != nil {
			t.Fatal(err)
		}
	}
	// Batches of 30 records, a window of 50 locks: one acquisition of two
	// batches (60 offsets) fills it.
	newPart := func() (*SharePartition, BatchSource) {
		p := New(Config{MaxRecordLocks: 50, DeliveryCountLimit: 5})
		return p, &batchSource{size: 30, end: 1000}
	}

	p, _ := newPart()
	if p.Full() {
		t.Fatal("uninitialised partition reported full")
	}
	p, src := newPart()
	p.Initialise(0, 0)
	if p.Full() {
		t.Fatal("empty window reported full")
	}
	p.Acquire("m", now, AcquireRequest{MaxRecords: 20}, src, &res)
	if p.Full() {
		t.Fatalf("window of %d under 50 locks reported full", p.EndOffset()-p.StartOffset()+1)
	}
	take(p, src)
	if !p.Full() {
		t.Fatalf("window %d..%d at the lock limit with everything acquired not full", p.StartOffset(), p.EndOffset())
	}
	// Full means Acquire takes nothing.
	take(p, src)
	if res.Count != 0 {
		t.Fatalf("Acquire on a full window took %d", res.Count)
	}
	// A release inside the window makes it acquirable again.
	if _, err := p.Acknowledge("m", now, []AckBatch{{FirstOffset: 35, LastOffset: 35, Types: []AckType{AckRelease}}}); err != nil {
		t.Fatal(err)
	}
	if p.Full() {
		t.Fatal("window with a released offset reported full")
	}
	take(p, src)
	if res.Count != 1 || !p.Full() {
		t.Fatalf("re-acquired %d, full %v; want 1 and full again", res.Count, p.Full())
	}
	// Accepting the first batch moves SPSO and frees locks.
	if _, err := p.Acknowledge("m", now, []AckBatch{{FirstOffset: 0, LastOffset: 29, Types: []AckType{AckAccept}}}); err != nil {
		t.Fatal(err)
	}
	if p.Full() {
		t.Fatalf("window %d..%d after the first batch was accepted reported full", p.StartOffset(), p.EndOffset())
	}
}
