package broker_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// otlpGauge is an OTLP MetricsData with one gauge point (name, value,
// one attribute), written by hand as the client's exporter would.
func otlpGauge(name string, v float64, key, val string) []byte {
	field := func(b []byte, num int, p []byte) []byte {
		b = binary.AppendUvarint(b, uint64(num<<3|2))
		b = binary.AppendUvarint(b, uint64(len(p)))
		return append(b, p...)
	}
	kv := field(field(nil, 1, []byte(key)), 2, field(nil, 1, []byte(val)))
	pt := field(nil, 7, kv)
	pt = binary.AppendUvarint(pt, 4<<3|1)
	pt = binary.LittleEndian.AppendUint64(pt, math.Float64bits(v))
	metric := field(field(nil, 1, []byte(name)), 5, field(nil, 1, pt))
	return field(nil, 1, field(nil, 2, field(nil, 2, metric)))
}

// TestClientTelemetry: a client-metrics subscription made through
// IncrementalAlterConfigs (type 16, as kafka-client-metrics.sh does) is
// listed and described, a client asks for its subscription and pushes
// zstd-compressed OTLP, the point appears on /metrics and leaves with the
// client; Kafka's error codes for the refusals.
func TestClientTelemetry(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	ctx := testCtx(t)
	raw := newClient(t, b)

	alter := func(name string, cfgs ...kadm.AlterConfig) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
		for _, c := range cfgs {
			rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			rc.Name, rc.Value, rc.Op = c.Name, c.Value, kmsg.IncrementalAlterConfigOp(c.Op)
			res.Configs = append(res.Configs, rc)
		}
		req.Resources = append(req.Resources, res)
		resp, err := req.RequestWith(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		r := resp.Resources[0]
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		return r.ErrorCode, msg
	}
	s := func(v string) *string { return &v }
	if code, msg := alter("sub", kadm.AlterConfig{Name: "metrics", Value: s("org.apache.kafka.test.")},
		kadm.AlterConfig{Name: "interval.ms", Value: s("100")},
		kadm.AlterConfig{Name: "match", Value: s("client_id=telemetry-.*")}); code != 0 {
		t.Fatalf("alter: %d %s", code, msg)
	}
	for _, tc := range []struct {
		cfg  kadm.AlterConfig
		code int16
		msg  string
	}{
		{kadm.AlterConfig{Name: "interval.ms", Value: s("50")}, kerr.InvalidRequest.Code, "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 (1 hour)"},
		{kadm.AlterConfig{Name: "color", Value: s("red")}, kerr.InvalidRequest.Code, "Unknown client metrics configuration: color"},
		{kadm.AlterConfig{Name: "match", Value: s("client_colour=x")}, kerr.InvalidConfig.Code, "Illegal client matching pattern: client_colour=x"},
	} {
		if code, msg := alter("sub", tc.cfg); code != tc.code || msg != tc.msg {
			t.Errorf("alter %s: %d %q, want %d %q", tc.cfg.Name, code, msg, tc.code, tc.msg)
		}
	}
	// Listed (v0 and v1) and described with only its keys.
	lr := kmsg.NewPtrListConfigResourcesRequest()
	lr.ResourceTypes = []int8{16}
	lresp, err := lr.RequestWith(ctx, raw)
	if err != nil || len(lresp.ConfigResources) != 1 || lresp.ConfigResources[0].Name != "sub" {
		t.Fatalf("list: %v %+v", err, lresp)
	}
	dr := kmsg.NewPtrDescribeConfigsRequest()
	dres := kmsg.NewDescribeConfigsRequestResource()
	dres.ResourceType, dres.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "sub"
	dr.Resources = append(dr.Resources, dres)
	dresp, err := dr.RequestWith(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := dresp.Resources[0].Configs; len(got) != 3 || got[1].Name != "interval.ms" || *got[1].Value != "100" ||
		got[1].Source != kmsg.ConfigSourceClientMetricsConfig {
		t.Errorf("describe: %+v", dresp.Resources[0])
	}

	cl := newClient(t, b, kgo.ClientID("telemetry-app"))
	get := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	sub, err := get.RequestWith(ctx, cl)
	if err != nil || sub.ErrorCode != 0 {
		t.Fatalf("get: %v %+v", err, sub)
	}
	if sub.PushIntervalMillis != 100 || len(sub.RequestedMetrics) != 1 || sub.RequestedMetrics[0] != "org.apache.kafka.test." ||
		!sub.DeltaTemporality || sub.TelemetryMaxBytes != 1048576 || len(sub.AcceptedCompressionTypes) != 4 || sub.AcceptedCompressionTypes[0] != 4 {
		t.Errorf("subscription %+v", sub)
	}
	var zbuf bytes.Buffer
	zw, _ := zstd.NewWriter(&zbuf)
	zw.Write(otlpGauge("org.apache.kafka.test.gauge", 42, "node_id", "1"))
	zw.Close()
	push := kmsg.NewPtrPushTelemetryRequest()
	push.ClientInstanceID, push.SubscriptionID, push.CompressionType, push.Metrics = sub.ClientInstanceID, sub.SubscriptionID, 4, zbuf.Bytes()
	if resp, err := push.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("push: %v %+v", err, resp)
	}
	// At once again: too early.
	if resp, err := push.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Errorf("early push: %v %+v", err, resp)
	}
	// A stale subscription id.
	stale := *push
	stale.SubscriptionID++
	waitFor(t, "unknown subscription id", func() bool {
		resp, err := stale.RequestWith(ctx, cl)
		return err == nil && resp.ErrorCode == kerr.UnknownSubscriptionID.Code
	})

	metrics := func() string {
		resp, err := http.Get("http://" + b.Server.AdminAddr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	want := `sharq_client_metric{attributes="node_id=1",client_id="telemetry-app",client_instance_id="` + base64.RawURLEncoding.EncodeToString(sub.ClientInstanceID[:]) + `",name="org.apache.kafka.test.gauge"} 42`
	if m := metrics(); !strings.Contains(m, want) || !strings.Contains(m, "sharq_client_metrics_instances 1") {
		t.Errorf("/metrics lacks %s", want)
	}
	// A client no subscription matches gets the default interval and no
	// metrics.
	other := newClient(t, b, kgo.ClientID("other"))
	if o, err := get.RequestWith(ctx, other); err != nil || o.PushIntervalMillis != 300000 || len(o.RequestedMetrics) != 0 {
		t.Errorf("unmatched: %v %+v", err, o)
	}
	// Zero instance id on push: INVALID_REQUEST.
	if resp, err := kmsg.NewPtrPushTelemetryRequest().RequestWith(ctx, other); err != nil || resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("zero id push: %v %+v", err, resp)
	}
	// The client leaves: its series go.
	cl.Close()
	waitFor(t, "series gone", func() bool { return !strings.Contains(metrics(), "telemetry-app") })

	// Deleting every key removes the subscription.
	if code, msg := alter("sub", kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "metrics"}, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "interval.ms"},
		kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "match"}); code != 0 {
		t.Fatalf("delete: %d %s", code, msg)
	}
	if lresp, err := lr.RequestWith(ctx, raw); err != nil || len(lresp.ConfigResources) != 0 {
		t.Errorf("after delete: %v %+v", err, lresp)
	}
}
