package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker"
	"sharq/broker/brokertest"
	"sharq/broker/fault"
	"sharq/config"
)

// Tests in this file drive fault rules against franz-go clients: each
// shows the client recovering as it does from the same answer on Kafka.

func ruleBroker(t *testing.T, opts ...brokertest.Option) *brokertest.Broker {
	opts = append([]brokertest.Option{brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" })}, opts...)
	return brokertest.New(t, opts...)
}

// control calls the control API and decodes its JSON answer into out
// (nil: ignore), failing the test unless the status is want.
func control(t *testing.T, b *brokertest.Broker, method, path, body string, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, "http://"+b.Server.AdminAddr()+broker.ControlPrefix+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
}

func addRule(t *testing.T, b *brokertest.Broker, rule string) fault.Rule {
	t.Helper()
	var r fault.Rule
	control(t, b, "POST", "faults", rule, 200, &r)
	return r
}

func ruleStatus(t *testing.T, b *brokertest.Broker, id int64) fault.Status {
	t.Helper()
	var st fault.Status
	control(t, b, "GET", fmt.Sprintf("faults/%d", id), "", 200, &st)
	return st
}

// checkExactlyOnce consumes topic and checks it holds each of n values
// once: nothing lost, nothing written twice.
func checkExactlyOnce(t *testing.T, b *brokertest.Broker, topic string, partitions int32, n int) {
	t.Helper()
	recs := consumeN(t, b, topic, partitions, n)
	seen := map[string]int{}
	for _, r := range recs {
		seen[string(r.Value)]++
	}
	for i := 0; i < n; i++ {
		if c := seen[fmt.Sprint(i)]; c != 1 {
			t.Errorf("value %d stored %d times", i, c)
		}
	}
	ends, err := newAdmin(t, b).ListEndOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != int64(n) {
		t.Errorf("log end offsets sum to %d, want %d (duplicates)", total, n)
	}
}

// TestFaultProduceNotLeaderRecovers: the example rule. An
// idempotent producer retries NOT_LEADER_OR_FOLLOWER after a metadata
// refresh; all records land once.
func TestFaultProduceNotLeaderRecovers(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	mustCreateTopic(t, newAdmin(t, b), "nl", 3, nil)
	r := addRule(t, b, `{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","count":3}`)
	// A leader error makes kgo refresh metadata, no sooner than its min
	// age (5s by default) after the last refresh.
	cl := newClient(t, b, kgo.ProducerLinger(time.Millisecond), kgo.MetadataMinAge(10*time.Millisecond))
	produceValues(t, cl, "nl", 0, 200)
	if st := ruleStatus(t, b, r.ID); st.Hits != 3 || !st.Done {
		t.Fatalf("rule after produce: %+v", st)
	}
	checkExactlyOnce(t, b, "nl", 3, 200)

	// Its hits are in /metrics.
	resp, err := http.Get("http://" + b.Server.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`sharq_faults_injected_total{effect="error",rule="%d"} 3`, r.ID); !bytes.Contains(body, []byte(want)) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// TestFaultProduceTimedOutAfterAppend: REQUEST_TIMED_OUT answered after the
// append. The idempotent producer resends the same batches; the broker
// recognises their sequence numbers, so nothing is lost and nothing is
// duplicated.
func TestFaultProduceTimedOutAfterAppend(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	mustCreateTopic(t, newAdmin(t, b), "rto", 2, nil)
	r := addRule(t, b, `{"api":"Produce","error":"REQUEST_TIMED_OUT","after":true,"count":4}`)
	cl := newClient(t, b, kgo.ProducerLinger(time.Millisecond))
	produceValues(t, cl, "rto", 0, 300)
	if st := ruleStatus(t, b, r.ID); st.Hits != 4 {
		t.Fatalf("rule after produce: %+v", st)
	}
	checkExactlyOnce(t, b, "rto", 2, 300)
}

// TestFaultProduceCloseAfterAppend: the connection drops after the append,
// before the answer; the producer reconnects and resends, deduplicated.
func TestFaultProduceCloseAfterAppend(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	mustCreateTopic(t, newAdmin(t, b), "cla", 1, nil)
	r := addRule(t, b, `{"api":"Produce","close":true,"after":true,"count":2}`)
	cl := newClient(t, b, kgo.ProducerLinger(time.Millisecond), kgo.MetadataMinAge(10*time.Millisecond))
	produceValues(t, cl, "cla", 0, 100)
	if st := ruleStatus(t, b, r.ID); st.Hits != 2 {
		t.Fatalf("rule after produce: %+v", st)
	}
	checkExactlyOnce(t, b, "cla", 1, 100)
}

// TestFaultProducePerPartition: one partition of a request fails
// NOT_LEADER_OR_FOLLOWER without being appended while the other appends.
func TestFaultProducePerPartition(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	mustCreateTopic(t, newAdmin(t, b), "pp", 2, nil)
	r := addRule(t, b, `{"api":"Produce","topic":"pp","partition":1,"error":"NOT_LEADER_OR_FOLLOWER","count":1}`)
	cl := newClient(t, b)
	td, err := newAdmin(t, b).ListTopics(testCtx(t), "pp")
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = "pp", td["pp"].ID // kgo picks the version: v13 names topics by id
	for p := int32(0); p < 2; p++ {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p
		rp.Records = oneRecordBatch()
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int32]int16{}
	offsets := map[int32]int64{}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			codes[p.Partition], offsets[p.Partition] = p.ErrorCode, p.BaseOffset
		}
	}
	if codes[0] != 0 || offsets[0] != 0 || codes[1] != kerr.NotLeaderForPartition.Code || offsets[1] != -1 {
		t.Fatalf("codes %v offsets %v", codes, offsets)
	}
	ends, err := newAdmin(t, b).ListEndOffsets(testCtx(t), "pp")
	if err != nil {
		t.Fatal(err)
	}
	if o0, _ := ends.Lookup("pp", 0); o0.Offset != 1 {
		t.Errorf("partition 0 end %d, want 1", o0.Offset)
	}
	if o1, _ := ends.Lookup("pp", 1); o1.Offset != 0 {
		t.Errorf("partition 1 end %d, want 0: the failed partition was appended", o1.Offset)
	}
	if st := ruleStatus(t, b, r.ID); st.Hits != 1 {
		t.Errorf("rule %+v", st)
	}
}

// TestFaultConsumerThroughClosedConnection: the consumer's fetch
// connection is closed twice; it reconnects and reads everything once.
func TestFaultConsumerThroughClosedConnection(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	mustCreateTopic(t, newAdmin(t, b), "cc", 2, nil)
	produceValues(t, newClient(t, b), "cc", 0, 100)
	r := addRule(t, b, `{"api":"Fetch","close":true,"count":2}`)
	recs := consumeN(t, b, "cc", 2, 100)
	if len(recs) != 100 {
		t.Fatalf("%d records", len(recs))
	}
	if st := ruleStatus(t, b, r.ID); st.Hits != 2 {
		t.Errorf("rule %+v", st)
	}
}

// TestFaultHungFetch: a fetch is never answered; the client's request
// timeout closes the connection and the next fetch reads the records.
func TestFaultHungFetch(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	mustCreateTopic(t, newAdmin(t, b), "hung", 1, nil)
	produceValues(t, newClient(t, b), "hung", 0, 10)
	r := addRule(t, b, `{"api":"Fetch","no_answer":true,"count":1}`)
	recs := consumeN(t, b, "hung", 1, 10, kgo.FetchMaxWait(100*time.Millisecond), kgo.RequestTimeoutOverhead(300*time.Millisecond))
	if len(recs) != 10 {
		t.Fatalf("%d records", len(recs))
	}
	if st := ruleStatus(t, b, r.ID); st.Hits != 1 {
		t.Errorf("rule %+v", st)
	}
}

// TestFaultEffects checks the remaining effects one request at a time:
// a top-level error, latency, a throttle, and the filters on group and
// client id; a rule given in sharq.faults is live from start.
func TestFaultEffects(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t, brokertest.WithSetting("sharq.faults", `[{"api":"ListGroups","client_id":"boot","error":"COORDINATOR_NOT_AVAILABLE","count":1}]`))
	ctx := testCtx(t)

	// Straight to the broker: kgo's sharded ListGroups would retry the
	// retriable error.
	boot := newClient(t, b, kgo.ClientID("boot")).Broker(int(b.Config.NodeID))
	lg := kmsg.NewPtrListGroupsRequest()
	resp, err := lg.RequestWith(ctx, boot)
	if err != nil || resp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("ListGroups from config rule: %v %+v", err, resp)
	}
	if resp, err = lg.RequestWith(ctx, boot); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("ListGroups after count 1: %v %+v", err, resp)
	}

	cl := newClient(t, b)
	addRule(t, b, `{"api":"Metadata","throttle_ms":250,"latency_ms":60,"count":1}`)
	md := kmsg.NewPtrMetadataRequest()
	start := time.Now()
	mresp, err := md.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 60*time.Millisecond {
		t.Errorf("answer after %v, latency 60ms", took)
	}
	if mresp.ThrottleMillis != 250 {
		t.Errorf("throttle_time_ms %d, want 250", mresp.ThrottleMillis)
	}

	// kgo sends OffsetFetch v8+, where the group's error is in Groups[].
	gr := addRule(t, b, `{"api":"OffsetFetch","group":"g1","error":"GROUP_AUTHORIZATION_FAILED"}`)
	direct := cl.Broker(int(b.Config.NodeID))
	for _, tc := range []struct {
		group string
		want  int16
	}{{"g2", 0}, {"g1", kerr.GroupAuthorizationFailed.Code}} {
		of := kmsg.NewPtrOffsetFetchRequest()
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = tc.group
		of.Groups = append(of.Groups, g)
		resp, err := of.RequestWith(ctx, direct)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].Group != tc.group || resp.Groups[0].ErrorCode != tc.want {
			t.Errorf("OffsetFetch %s: %v %+v, want code %d", tc.group, err, resp, tc.want)
		}
	}
	control(t, b, "DELETE", fmt.Sprintf("faults/%d", gr.ID), "", 204, nil)
	control(t, b, "DELETE", fmt.Sprintf("faults/%d", gr.ID), "", 404, nil)
}

// TestFaultControlAPI: the routes' refusals and the long poll.
func TestFaultControlAPI(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	control(t, b, "POST", "faults", `{"api":"Produce"}`, 400, nil)
	control(t, b, "POST", "faults", `{"api":"Produce","error":6,"colour":1}`, 400, nil)
	control(t, b, "POST", "faults", `{"api":"Produce","error":6,"scope":"request"}`, 400, nil) // Produce has no top-level error
	control(t, b, "POST", "faults", `{"api":"SaslHandshake","error":6,"scope":"entity"}`, 400, nil)
	control(t, b, "GET", "faults/x", "", 400, nil)
	control(t, b, "GET", "faults/99", "", 404, nil)
	r := addRule(t, b, `{"api":"ListGroups","error":"CLUSTER_AUTHORIZATION_FAILED"}`)
	control(t, b, "GET", fmt.Sprintf("faults/%d/wait?hits=1&timeout_ms=20", r.ID), "", 408, nil)

	done := make(chan fault.Status, 1)
	go func() {
		var st fault.Status
		control(t, b, "GET", fmt.Sprintf("faults/%d/wait?hits=2&timeout_ms=30000", r.ID), "", 200, &st)
		done <- st
	}()
	cl := newClient(t, b).Broker(int(b.Config.NodeID))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		select {
		case st := <-done:
			if st.Hits < 2 {
				t.Fatalf("wait answered at %d hits", st.Hits)
			}
			var list broker.ControlFaults
			control(t, b, "GET", "faults", "", 200, &list)
			if len(list.Rules) != 1 || list.Rules[0].ID != r.ID || list.Rules[0].Hits < 2 {
				t.Fatalf("list %+v", list)
			}
			return
		default:
		}
		if _, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFaultNodeFilter: with virtual brokers a rule's node filter matches
// the node whose listener the connection was accepted on.
func TestFaultNodeFilter(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.VirtualBrokers = 3
		c.MetricsListener = "127.0.0.1:0"
	}))
	cl := newClient(t, b)
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	node := b.Config.NodeID + 1
	addRule(t, b, fmt.Sprintf(`{"api":"ListGroups","node":%d,"error":"CLUSTER_AUTHORIZATION_FAILED"}`, node))
	for _, n := range []int32{b.Config.NodeID, node, b.Config.NodeID + 2} {
		want := int16(0)
		if n == node {
			want = kerr.ClusterAuthorizationFailed.Code
		}
		resp := onNode(t, cl, n, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
		if resp.ErrorCode != want {
			t.Errorf("ListGroups on node %d: code %d, want %d", n, resp.ErrorCode, want)
		}
	}
}
