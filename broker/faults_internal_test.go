package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/fault"
)

// TestFaultEntityShapes: the APIs whose answers list topic-partitions are
// the ones a rule can fail one partition of.
func TestFaultEntityShapes(t *testing.T) {
	for key, want := range map[int16]bool{
		0: true, 1: true, 2: true, 8: true, 19: true, 20: true, 78: true, 79: true,
		18: false, 10: false, 11: false, 17: false,
	} {
		if got := supportsEntities(key); got != want {
			t.Errorf("%s: supportsEntities %v, want %v", kmsg.NameForKey(key), got, want)
		}
	}
}

// TestFaultAddEntityErrors: a failed partition is answered as Kafka
// answers an error (offsets -1, no current leader), beside the partition
// served for real, and replaces what the handler answered for it.
func TestFaultAddEntityErrors(t *testing.T) {
	resp := kmsg.NewPtrProduceResponse()
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = "t"
	ok := kmsg.NewProduceResponseTopicPartition()
	ok.Partition, ok.BaseOffset = 0, 41
	served := kmsg.NewProduceResponseTopicPartition()
	served.Partition, served.BaseOffset = 2, 7
	rt.Partitions = append(rt.Partitions, ok, served)
	resp.Topics = append(resp.Topics, rt)
	addEntityErrors(resp, []fault.Entity{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}, {Topic: "u", Partition: 0}}, 6)
	got := map[string]kmsg.ProduceResponseTopicPartition{}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			got[tp.Topic+"-"+string(rune('0'+p.Partition))] = p
		}
	}
	if p := got["t-0"]; p.ErrorCode != 0 || p.BaseOffset != 41 {
		t.Errorf("served partition changed: %+v", p)
	}
	for _, k := range []string{"t-1", "t-2", "u-0"} {
		p := got[k]
		if p.ErrorCode != 6 || p.BaseOffset != -1 || p.LogStartOffset != -1 || p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1 {
			t.Errorf("%s: %+v", k, p)
		}
	}
	if len(resp.Topics) != 2 || len(resp.Topics[0].Partitions) != 3 {
		t.Errorf("topics %+v", resp.Topics)
	}
}

// BenchmarkHandleProduceRuleElsewhere is BenchmarkHandleProduce while a
// rule for another API is live: what a live rule costs requests it does
// not hit (describing the request for the rule engine).
func BenchmarkHandleProduceRuleElsewhere(b *testing.B) {
	s, c := benchServer(b)
	if _, err := s.Faults().Add(mustParseRule(b, `{"api":"Fetch","latency_ms":1}`)); err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 12, 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "bench"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = benchBatch(10, 100)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	frame := encodeFrame(req)
	work := make([]byte, len(frame))
	b.ReportAllocs()
	b.SetBytes(int64(len(rp.Records)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(work, frame)
		if err := c.handleFrame(work); err != nil {
			b.Fatal(err)
		}
	}
}

func mustParseRule(tb testing.TB, s string) fault.Rule {
	r, err := fault.ParseRules(s)
	if err != nil || len(r) != 1 {
		tb.Fatalf("%s: %v", s, err)
	}
	return r[0]
}
