package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFaultsRdkafka: librdkafka (confluent-kafka for Python) through
// injected timeouts and disconnects, with the rules set from sharq.faults
// at start. The idempotent producer gets REQUEST_TIMED_OUT twice and a
// connection closed once, each after its records were appended; the
// consumer's fetch connection is closed twice. Every record is read back
// once, and each rule fired as often as it was told. sharq only: Kafka
// has no fault rules.
func TestFaultsRdkafka(t *testing.T) {
	needPython(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	rules := `[{"api":"Produce","error":"REQUEST_TIMED_OUT","after":true,"count":2},` +
		`{"api":"Produce","close":true,"after":true,"count":1},` +
		`{"api":"Fetch","close":true,"count":2}]`
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := StartSharq(ctx, buildSharq(t), t.TempDir(), time.Minute,
		"--override", fmt.Sprintf("metrics.listener=127.0.0.1:%d", port), "--override", "sharq.faults="+rules)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(30 * time.Second)
	tg := p.Target
	const topic = "interop-rdkafka-faults"
	rdkafkaProduce(t, tg, "rdkafka-faults/produce", topic, "none")
	events, _ := rdkafka(t, tg, "rdkafka-faults/consume-assign", nil, "consume-assign", "--topic", topic,
		"--count", fmt.Sprint(rdkafkaRecords), "--timeout", "60")
	checkRdRecords(t, "rdkafka-faults/consume-assign", events)
	// Nothing written twice: the logs hold exactly the records produced.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != rdkafkaRecords {
		t.Errorf("log end offsets sum to %d, want %d: a retried batch was appended twice", total, rdkafkaRecords)
	}

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/faults", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Rules []struct {
			ID    int64 `json:"id"`
			Count int64 `json:"count"`
			Hits  int64 `json:"hits"`
		} `json:"rules"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Rules) != 3 {
		t.Fatalf("GET /api/v1/faults: %v %+v", err, list)
	}
	for _, r := range list.Rules {
		if r.Hits != r.Count {
			t.Errorf("rule %d: %d hits, want %d", r.ID, r.Hits, r.Count)
		}
	}
}
