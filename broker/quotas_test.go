package broker_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestClientQuotasAdmin: AlterClientQuotas stores what kafka-configs.sh
// --entity-type clients|users sends, DescribeClientQuotas filters it as
// Kafka does, removals and refusals answer per entry.
func TestClientQuotasAdmin(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	name := func(s string) *string { return &s }
	alter := []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: name("app")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: name("alice")}, {Type: "client-id"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 2048}, {Key: "request_percentage", Value: 12.5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 4096}}},
	}
	res, err := adm.AlterClientQuotas(ctx, alter)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("alter %v: %v %s", r.Entity, r.Err, r.ErrMessage)
		}
	}
	describe := func(strict bool, comps ...kadm.DescribeClientQuotaComponent) []kadm.DescribedClientQuota {
		t.Helper()
		d, err := adm.DescribeClientQuotas(ctx, strict, comps)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := describe(false, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchName: name("app"), MatchType: 0}); len(d) != 1 ||
		len(d[0].Values) != 1 || d[0].Values[0].Key != "producer_byte_rate" || d[0].Values[0].Value != 1024 {
		t.Errorf("exact client-id app: %+v", d)
	}
	// Any client-id entity, non-strict: app and alice/<default>.
	if d := describe(false, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchType: 2}); len(d) != 2 {
		t.Errorf("any client-id: %+v", d)
	}
	// Strict: only entities of client-id alone.
	if d := describe(true, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchType: 2}); len(d) != 1 {
		t.Errorf("any client-id, strict: %+v", d)
	}
	if d := describe(true, kadm.DescribeClientQuotaComponent{Type: "user", MatchType: 1}); len(d) != 1 || d[0].Values[0].Value != 4096 {
		t.Errorf("default user: %+v", d)
	}
	// Removal, then the entity is gone.
	res, err = adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: alter[0].Entity, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Remove: true}}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("remove: %v %+v", err, res)
	}
	if d := describe(false, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchName: name("app"), MatchType: 0}); len(d) != 0 {
		t.Errorf("after removal: %+v", d)
	}
	for _, bad := range []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: name("x")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "no_such_quota", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: name("x")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1.5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: name("1.2.3.4")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: name("x")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "controller_mutation_rate", Value: 1}}},
	} {
		res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{bad})
		if err != nil || res[0].Err == nil || res[0].ErrMessage == "" {
			t.Errorf("%+v accepted: %v %+v", bad, err, res)
		}
	}
	// Stored in the metadata: a restart keeps them.
	b.Restart()
	d, err := newAdmin(t, b).DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: 1}})
	if err != nil || len(d) != 1 {
		t.Errorf("after restart: %v %+v", err, d)
	}
}

// TestProduceQuotaHoldsRate: a franz-go producer under producer_byte_rate
// is throttled (throttle_time_ms, then a muted connection) to within 10 %
// of the quota once its first window is spent.
func TestProduceQuotaHoldsRate(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		// Two one-second samples: the burst a fresh client may send before
		// it is throttled is one second's worth, so the test is short.
		c.QuotaWindowNum, c.QuotaWindowSizeSeconds = 2, 1
	}))
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "quota"); err != nil {
		t.Fatal(err)
	}
	const rate = 256 << 10
	name := "quota-producer"
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &name}},
		Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: rate}}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("%v %+v", err, res)
	}
	var throttled atomic.Int64
	hook := throttleHook(func(d time.Duration) { throttled.Add(int64(d)) })
	p := newClient(t, b, kgo.ClientID(name), kgo.DefaultProduceTopic("quota"), kgo.ProducerLinger(0),
		// The quota counts request bytes: uncompressed, the record bytes.
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(16<<10), kgo.WithHooks(hook))
	value := bytes.Repeat([]byte("q"), 1000)
	var acked atomic.Int64
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	marks := make(chan int64, 2)
	go func() {
		defer cancel()
		for _, at := range []time.Duration{1500 * time.Millisecond, 4500 * time.Millisecond} {
			select {
			case <-time.After(time.Until(start.Add(at))):
			case <-runCtx.Done():
				return
			}
			marks <- acked.Load()
		}
	}()
	for runCtx.Err() == nil {
		p.Produce(runCtx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			if err == nil {
				acked.Add(int64(len(r.Value)))
			}
		})
	}
	if len(marks) != 2 {
		t.Fatal("producer stopped early")
	}
	from, to := <-marks, <-marks
	got := float64(to-from) / 3
	t.Logf("%.0f B/s from 1.5 s to 4.5 s (quota %d B/s); throttled %v in total", got, rate, time.Duration(throttled.Load()))
	if got < rate*0.9 || got > rate*1.1 {
		t.Errorf("produce rate %.0f B/s, want %d ± 10 %%", got, rate)
	}
	if throttled.Load() == 0 {
		t.Error("no response carried a throttle time")
	}
}

type throttleHook func(time.Duration)

func (h throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) { h(d) }
