package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchReadCommittedAbortedRanges: each partition of a read_committed
// Fetch gets the aborted transactions of its own data (the connection's
// reused buffer is split per partition), and read_uncommitted gets null.
func TestFetchReadCommittedAbortedRanges(t *testing.T) {
	s, c := benchServer(t)
	if _, err := s.createTopic(c.ctx, "bench2", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	// bench-0: producer 7 aborts its 2nd and 4th transactions; bench2-0:
	// producer 9 aborts its 1st.
	write := func(topic string, pid int64, aborts map[int]bool) {
		p := s.partitionFor(topic, 0)
		l, err := p.acquire()
		if err != nil {
			t.Fatal(err)
		}
		defer p.release()
		seq := int32(0)
		for tx := 0; tx < 4; tx++ {
			if _, err := l.Append(benchTxnBatch(5, 10, pid, 0, seq), 0); err != nil {
				t.Fatal(err)
			}
			seq += 5
			if _, err := l.AppendMarker(pid, 0, !aborts[tx], 0, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("bench", 7, map[int]bool{1: true, 3: true})
	write("bench2", 9, map[int]bool{0: true})

	for _, iso := range []int8{1, 0} {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		req.ReplicaID = -1
		req.MaxBytes = 1 << 20
		req.SessionEpoch = -1
		req.IsolationLevel = iso
		for _, topic := range []string{"bench", "bench2"} {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 1 << 20
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		r := &request{s: s, c: c, ctx: c.ctx, key: 1, version: 12}
		kresp, err := handleFetch(r, req)
		if err != nil {
			t.Fatal(err)
		}
		// Encode and decode, as the client sees it.
		raw := kresp.AppendTo(nil)
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 12
		if err := resp.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		got := map[string][]kmsg.FetchResponseTopicPartitionAbortedTransaction{}
		for _, rt := range resp.Topics {
			p := rt.Partitions[0]
			if p.ErrorCode != 0 {
				t.Fatalf("%s: error %d", rt.Topic, p.ErrorCode)
			}
			if iso == 0 && p.AbortedTransactions != nil {
				t.Fatalf("read_uncommitted %s: aborted %v, want null", rt.Topic, p.AbortedTransactions)
			}
			got[rt.Topic] = p.AbortedTransactions
		}
		if iso == 0 {
			continue
		}
		// Each transaction is 5 records and a marker: 6 offsets.
		want := map[string][]kmsg.FetchResponseTopicPartitionAbortedTransaction{
			"bench":  {{ProducerID: 7, FirstOffset: 6}, {ProducerID: 7, FirstOffset: 18}},
			"bench2": {{ProducerID: 9, FirstOffset: 0}},
		}
		for topic, w := range want {
			g := got[topic]
			if len(g) != len(w) {
				t.Fatalf("%s: aborted %+v, want %+v", topic, g, w)
			}
			for i := range w {
				if g[i].ProducerID != w[i].ProducerID || g[i].FirstOffset != w[i].FirstOffset {
					t.Fatalf("%s: aborted %+v, want %+v", topic, g, w)
				}
			}
		}
	}
}

// TestFetchReadCommittedAllocs: a read_committed Fetch whose data has
// aborted transactions allocates no more than a read_uncommitted one of
// the same data (the aborted list lives in the connection's buffer).
func TestFetchReadCommittedAllocs(t *testing.T) {
	s, c := benchServer(t)
	p := s.partitionFor("bench", 0)
	l, err := p.acquire()
	if err != nil {
		t.Fatal(err)
	}
	seq := int32(0)
	for tx := 0; tx < 20; tx++ {
		if _, err := l.Append(benchTxnBatch(10, 10, 7, 0, seq), 0); err != nil {
			t.Fatal(err)
		}
		seq += 10
		if _, err := l.AppendMarker(7, 0, tx%3 != 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	p.release()
	allocs := map[int8]float64{}
	for _, iso := range []int8{0, 1} {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		req.ReplicaID = -1
		req.MaxBytes = 1 << 20
		req.SessionEpoch = -1
		req.IsolationLevel = iso
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "bench"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		frame := encodeFrame(req)
		if err := c.handleFrame(frame); err != nil { // grow the buffers
			t.Fatal(err)
		}
		allocs[iso] = testing.AllocsPerRun(50, func() {
			if err := c.handleFrame(frame); err != nil {
				t.Fatal(err)
			}
		})
	}
	if allocs[1] > allocs[0] {
		t.Fatalf("read_committed Fetch: %.1f allocs, read_uncommitted %.1f", allocs[1], allocs[0])
	}
}
