package broker

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareFetchBench drives ShareFetch v2 requests through the handler on one
// connection: each request accepts what the previous one acquired
// (piggy-backed acks) and acquires the next batch.
type shareFetchBench struct {
	s     *Server
	r     *request
	req   *kmsg.ShareFetchRequest
	types []int8
	next  int64 // next offset to acquire
}

func newShareFetchBench(tb testing.TB, batches int) *shareFetchBench {
	s, c := benchServer(tb)
	if err := s.awaitCoordinators(s.ctx); err != nil {
		tb.Fatal(err)
	}
	p := s.partitionFor("bench", 0)
	batch := benchBatch(10, 100)
	for i := 0; i < batches; i++ {
		benchAppend(tb, p, batch)
	}
	group, member := "bench-group", "bench-member-0000000000000000000000"
	if err := s.meta.AlterGroupConfigs(context.Background(), group, map[string]string{"share.auto.offset.reset": "earliest"}, nil); err != nil {
		tb.Fatal(err)
	}
	fb := &shareFetchBench{s: s, r: &request{s: s, c: c, ctx: c.ctx, key: 78, version: 2}}
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID = &group, &member
	req.MaxBytes, req.MaxRecords, req.BatchSize = 1<<20, 10, 10
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = [16]byte(s.meta.Image().Topics["bench"].ID)
	rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	fb.req = req
	// Open the session: acquires the first batch.
	fb.fetch(tb)
	return fb
}

// fetch sends one request acking [next-10, next-1] (when next > 0).
func (fb *shareFetchBench) fetch(tb testing.TB) {
	req := fb.req
	p := &req.Topics[0].Partitions[0]
	if req.ShareSessionEpoch > 0 {
		p.AcknowledgementBatches = p.AcknowledgementBatches[:0]
		ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset = fb.next-10, fb.next-1
		fb.types = append(fb.types[:0], 1)
		ab.AcknowledgeTypes = fb.types
		p.AcknowledgementBatches = append(p.AcknowledgementBatches, ab)
	}
	kresp, err := handleShareFetch(fb.r, req)
	if err != nil {
		tb.Fatal(err)
	}
	resp := kresp.(*kmsg.ShareFetchResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		tb.Fatalf("share fetch: %+v", resp)
	}
	rp := resp.Topics[0].Partitions[0]
	if rp.ErrorCode != 0 || rp.AcknowledgeErrorCode != 0 || len(rp.AcquiredRecords) != 1 || rp.AcquiredRecords[0].FirstOffset != fb.next {
		tb.Fatalf("share fetch at %d: partition %+v", fb.next, rp)
	}
	fb.next = rp.AcquiredRecords[0].LastOffset + 1
	if req.ShareSessionEpoch == 0 {
		p.PartitionMaxBytes = 0
	}
	req.ShareSessionEpoch++
}

// BenchmarkShareFetch is one ShareFetch with piggy-backed accepts that
// acquires the next 10-record batch: allocs/op are per request.
func BenchmarkShareFetch(b *testing.B) {
	const chunk = 2000
	fb := newShareFetchBench(b, chunk)
	left := chunk - 1
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if left == 0 {
			b.StopTimer()
			p := fb.s.partitionFor("bench", 0)
			batch := benchBatch(10, 100)
			for j := 0; j < chunk; j++ {
				benchAppend(b, p, batch)
			}
			left = chunk
			b.StartTimer()
		}
		fb.fetch(b)
		left--
	}
}

// A ShareFetch with piggy-backed acks, decoded, handled and answered
// through handleFrame, allocates at most 5 times (it was 26 allocations and
// 1.3 KB before the share manager, the per-connection scratch and the
// reused ShareFetch decoder; the issue bounds it at 5).
func TestShareFetchAllocs(t *testing.T) {
	fb := newShareFetchBench(t, 400)
	for i := 0; i < 20; i++ { // warm the scratch and the log's buffers
		fb.fetch(t)
	}
	// AllocsPerRun calls the function runs+1 times; every frame acks what
	// the previous one acquired (10-record batches, in order).
	const runs = 200
	frames := make([][]byte, runs+1)
	req := fb.req
	p := &req.Topics[0].Partitions[0]
	for i := range frames {
		p.AcknowledgementBatches = p.AcknowledgementBatches[:0]
		ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = fb.next-10, fb.next-1, []int8{1}
		p.AcknowledgementBatches = append(p.AcknowledgementBatches, ab)
		frames[i] = encodeFrame(req)
		req.ShareSessionEpoch++
		fb.next += 10
	}
	c, n := fb.r.c, 0
	allocs := testing.AllocsPerRun(runs, func() {
		if err := c.handleFrame(frames[n]); err != nil {
			t.Fatal(err)
		}
		n++
	})
	if allocs > 5 {
		t.Fatalf("%.1f allocations per ShareFetch frame, want <= 5", allocs)
	}
	if st := fb.s.share.Partitions(0); len(st) != 1 || st[0].SPSO != fb.next-10 {
		t.Fatalf("after the frames the share-partition is %+v, want SPSO %d (every frame's acks applied)", st, fb.next-10)
	}
}

// Offsets never acquired are INVALID_RECORD_STATE, as Kafka answers ("Batch
// record not found"), not INVALID_REQUEST (issue 14, item 10).
func TestShareAcknowledgeNeverAcquired(t *testing.T) {
	s, c := benchServer(t)
	if err := s.awaitCoordinators(s.ctx); err != nil {
		t.Fatal(err)
	}
	r := &request{s: s, c: c, ctx: c.ctx, key: 78, version: 2}
	group, member := "g-never", "member-never-acquired"
	tid := [16]byte(s.meta.Image().Topics["bench"].ID)
	open := kmsg.NewPtrShareFetchRequest()
	open.Version = 1
	open.GroupID, open.MemberID = &group, &member
	open.MaxBytes, open.MaxRecords = 1<<20, 10
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = tid
	rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	open.Topics = append(open.Topics, rt)
	kresp, err := handleShareFetch(r, open)
	if err != nil {
		t.Fatal(err)
	}
	if code := kresp.(*kmsg.ShareFetchResponse).ErrorCode; code != 0 {
		t.Fatalf("open session: error %d", code)
	}
	ack := kmsg.NewPtrShareAcknowledgeRequest()
	ack.Version = 1
	ack.GroupID, ack.MemberID = &group, &member
	ack.ShareSessionEpoch = 1
	at := kmsg.NewShareAcknowledgeRequestTopic()
	at.TopicID = tid
	ap := kmsg.NewShareAcknowledgeRequestTopicPartition()
	ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = 0, 4, []int8{1}
	ap.AcknowledgementBatches = append(ap.AcknowledgementBatches, ab)
	at.Partitions = append(at.Partitions, ap)
	ack.Topics = append(ack.Topics, at)
	r.key = 79
	aresp, err := handleShareAcknowledge(r, ack)
	if err != nil {
		t.Fatal(err)
	}
	resp := aresp.(*kmsg.ShareAcknowledgeResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("acknowledge: %+v", resp)
	}
	if got := resp.Topics[0].Partitions[0].ErrorCode; got != kerr.InvalidRecordState.Code {
		t.Fatalf("ack of never-acquired offsets: error %d, want INVALID_RECORD_STATE (%d)", got, kerr.InvalidRecordState.Code)
	}
}

// BenchmarkShareFetchFrame is BenchmarkShareFetch through handleFrame:
// decoding the request and encoding the response included (the frame of
// each request is built outside the timer).
func BenchmarkShareFetchFrame(b *testing.B) {
	const chunk = 2000
	fb := newShareFetchBench(b, chunk)
	left := chunk - 1
	c := fb.r.c
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if left == 0 {
			p := fb.s.partitionFor("bench", 0)
			batch := benchBatch(10, 100)
			for j := 0; j < chunk; j++ {
				benchAppend(b, p, batch)
			}
			left = chunk
		}
		req := fb.req
		p := &req.Topics[0].Partitions[0]
		p.AcknowledgementBatches = p.AcknowledgementBatches[:0]
		ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = fb.next-10, fb.next-1, []int8{1}
		p.AcknowledgementBatches = append(p.AcknowledgementBatches, ab)
		frame := encodeFrame(req)
		b.StartTimer()
		if err := c.handleFrame(frame); err != nil {
			b.Fatal(err)
		}
		req.ShareSessionEpoch++
		fb.next += 10
		left--
	}
}

// benchAppend appends a copy of batch to p's log (pinned for the append).
func benchAppend(tb testing.TB, p *partition, batch []byte) {
	tb.Helper()
	l, err := p.acquire()
	if err != nil {
		tb.Fatal(err)
	}
	defer p.release()
	if _, err := l.Append(append([]byte(nil), batch...), 0); err != nil {
		tb.Fatal(err)
	}
}

// shareAckBench holds a session whose member acquired the records of the
// bench partition, and builds ShareAcknowledge frames accepting them 10 at
// a time, in order.
type shareAckBench struct {
	fb    *shareFetchBench
	req   *kmsg.ShareAcknowledgeRequest
	acked int64 // next offset to accept
	held  int64 // end of what the member acquired
}

// ackChunk batches of 10 records are acquired at a time: under the
// share-partition's 2000 in-flight records.
const ackChunk = 150

func newShareAckBench(tb testing.TB) *shareAckBench {
	fb := newShareFetchBench(tb, ackChunk) // the session is open, [0, 9] acquired
	req := fb.req
	req.MaxRecords, req.BatchSize = ackChunk*10, ackChunk*10
	req.Topics[0].Partitions[0].AcknowledgementBatches = nil
	group, member := *req.GroupID, *req.MemberID
	ack := kmsg.NewPtrShareAcknowledgeRequest()
	ack.Version = 2
	ack.GroupID, ack.MemberID = &group, &member
	at := kmsg.NewShareAcknowledgeRequestTopic()
	at.TopicID = req.Topics[0].TopicID
	at.Partitions = append(at.Partitions, kmsg.NewShareAcknowledgeRequestTopicPartition())
	ack.Topics = append(ack.Topics, at)
	ab := &shareAckBench{fb: fb, req: ack, held: 10}
	ab.acquire(tb)
	return ab
}

// acquire takes every record of the log the member does not hold yet
// (the session's ShareFetches and ShareAcknowledges share its epoch).
func (ab *shareAckBench) acquire(tb testing.TB) {
	req := ab.fb.req
	req.ShareSessionEpoch = ab.req.ShareSessionEpoch
	if req.ShareSessionEpoch == 0 {
		req.ShareSessionEpoch = 1
	}
	end := ab.fb.s.partitionFor("bench", 0).HighWatermark()
	for ab.held < end { // a log read is bounded: fetch until all are taken
		kresp, err := handleShareFetch(ab.fb.r, req)
		if err != nil {
			tb.Fatal(err)
		}
		req.ShareSessionEpoch++
		tps := kresp.(*kmsg.ShareFetchResponse).Topics
		if len(tps) != 1 || len(tps[0].Partitions) != 1 || len(tps[0].Partitions[0].AcquiredRecords) == 0 {
			tb.Fatalf("acquire from %d: %+v", ab.held, tps)
		}
		acq := tps[0].Partitions[0].AcquiredRecords
		if acq[0].FirstOffset != ab.held {
			tb.Fatalf("acquire from %d: %+v", ab.held, acq)
		}
		ab.held = acq[len(acq)-1].LastOffset + 1
	}
	ab.req.ShareSessionEpoch = req.ShareSessionEpoch
}

// frame is the next request: it accepts the next 10 offsets, appending
// and acquiring more records first when the member holds no more.
func (ab *shareAckBench) frame(tb testing.TB) []byte {
	if ab.acked >= ab.held {
		p := ab.fb.s.partitionFor("bench", 0)
		batch := benchBatch(10, 100)
		for j := 0; j < ackChunk; j++ {
			benchAppend(tb, p, batch)
		}
		ab.acquire(tb)
	}
	p := &ab.req.Topics[0].Partitions[0]
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = ab.acked, ab.acked+9, []int8{1}
	p.AcknowledgementBatches = append(p.AcknowledgementBatches[:0], b)
	f := encodeFrame(ab.req)
	ab.req.ShareSessionEpoch++
	ab.acked += 10
	return f
}

// A ShareAcknowledge decoded, handled and answered through handleFrame
// allocates nothing once the connection's scratch is warm (it was 12
// allocations: kmsg's decoded request and a new response per request).
func TestShareAcknowledgeAllocs(t *testing.T) {
	ab := newShareAckBench(t)
	c := ab.fb.r.c
	for i := 0; i < 10; i++ { // warm the scratch
		if err := c.handleFrame(ab.frame(t)); err != nil {
			t.Fatal(err)
		}
	}
	// Frames built ahead stay within what the member holds.
	runs := int((ab.held-ab.acked)/10) - 1
	frames := make([][]byte, runs+1)
	for i := range frames {
		frames[i] = ab.frame(t)
	}
	n := 0
	allocs := testing.AllocsPerRun(runs, func() {
		if err := c.handleFrame(frames[n]); err != nil {
			t.Fatal(err)
		}
		n++
	})
	if allocs > 0 {
		t.Fatalf("%.1f allocations per ShareAcknowledge frame, want 0", allocs)
	}
	if st := ab.fb.s.share.Partitions(0); len(st) != 1 || st[0].SPSO != ab.acked {
		t.Fatalf("after the frames the share-partition is %+v, want SPSO %d (every frame's acks applied)", st, ab.acked)
	}
}

// BenchmarkShareAcknowledgeFrame is one ShareAcknowledge accepting 10
// records through handleFrame (the frame is built outside the timer).
func BenchmarkShareAcknowledgeFrame(b *testing.B) {
	ab := newShareAckBench(b)
	c := ab.fb.r.c
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		frame := ab.frame(b)
		b.StartTimer()
		if err := c.handleFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}
