package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// scenarioClientMetrics: KIP-714 client metrics subscriptions through
// kafka-client-metrics.sh (--alter / --list / --describe / --delete) and
// kafka-configs.sh --entity-type client-metrics, recorded for the golden
// diff; then, on sharq only, a Java producer (enable.metrics.push is on by
// default) pushes under the subscription and its metrics appear on sharq's
// metrics listener. Kafka has no such listener (it hands pushed metrics to
// an exporter plugin, and without one does not even advertise the
// telemetry APIs).
func scenarioClientMetrics(t *testing.T, tg Target) {
	steps := []struct {
		name, cls string
		args      []string
		fail      bool
		want      string
	}{
		{"alter", ClassClientMetrics, []string{"--alter", "--name", "interop-sub", "--metrics", "org.apache.kafka.producer.,org.apache.kafka.consumer.",
			"--interval", "1000", "--match", "client_id=interop-telemetry.*,client_software_name=apache-kafka-java"}, false, "Altered client metrics config for interop-sub."},
		{"list", ClassClientMetrics, []string{"--list"}, false, "interop-sub"},
		{"describe", ClassClientMetrics, []string{"--describe", "--name", "interop-sub"}, false, "interval.ms=1000"},
		{"describe-all", ClassClientMetrics, []string{"--describe"}, false, "interop-sub"},
		{"configs-describe", ClassConfigs, []string{"--describe", "--entity-type", "client-metrics", "--entity-name", "interop-sub"}, false, "interval.ms=1000"},
		{"configs-alter", ClassConfigs, []string{"--alter", "--entity-type", "client-metrics", "--entity-name", "interop-sub", "--add-config", "interval.ms=2000"}, false, "Completed updating config for client-metric interop-sub."},
		{"configs-describe-after", ClassConfigs, []string{"--describe", "--entity-type", "client-metrics", "--entity-name", "interop-sub"}, false, "interval.ms=2000"},
		{"bad-interval", ClassClientMetrics, []string{"--alter", "--name", "interop-sub", "--interval", "50"}, true, ""},
		{"bad-match", ClassClientMetrics, []string{"--alter", "--name", "interop-sub", "--match", "client_colour=red"}, true, ""},
		{"bad-key", ClassConfigs, []string{"--alter", "--entity-type", "client-metrics", "--entity-name", "interop-sub", "--add-config", "colour=red"}, true, ""},
		{"delete", ClassClientMetrics, []string{"--delete", "--name", "interop-sub"}, false, "Deleted client metrics config for interop-sub."},
		{"list-after", ClassClientMetrics, []string{"--list"}, false, ""},
	}
	for _, s := range steps {
		res, err := tool(t, tg, "client-metrics/"+s.name, "", s.cls, args(tg, s.args...)...)
		if s.fail {
			if err == nil && res.ExitCode == 0 {
				t.Errorf("%s: succeeded:\n%s", s.name, res.Stdout)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", s.name, err, res.Stdout, res.Stderr)
		}
		if !strings.Contains(res.Stdout, s.want) {
			t.Errorf("%s: stdout lacks %q:\n%s", s.name, s.want, res.Stdout)
		}
		if s.name == "list-after" && strings.Contains(res.Stdout, "interop-sub") {
			t.Errorf("deleted subscription still listed:\n%s", res.Stdout)
		}
	}
	if _, ok := tg.APIs[71]; !ok {
		t.Logf("%s does not advertise GetTelemetrySubscriptions (no telemetry exporter): no push to check", tg.Name)
		return
	}
	if targetKind(tg.Name) == "sharq" {
		clientMetricsPush(t)
	}
}

// clientMetricsPush starts a sharq with a metrics listener, subscribes
// clients whose id starts with interop-telemetry to the producer metrics
// every 500 ms, runs kafka-producer-perf-test with such an id for a few
// seconds and watches /metrics for its series; then the same for a console
// consumer under a second subscription to the consumer metrics.
func clientMetricsPush(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := StartSharq(ctx, buildSharq(t), t.TempDir(), time.Minute, "--override", fmt.Sprintf("metrics.listener=127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(30 * time.Second)
	tg := p.Target
	mustTool(t, tg, "", "", ClassClientMetrics, args(tg, "--alter", "--name", "producers", "--metrics", "org.apache.kafka.producer.",
		"--interval", "500", "--match", "client_id=interop-telemetry.*")...)
	mustTool(t, tg, "", "", ClassTopics, args(tg, "--create", "--topic", "telemetry", "--partitions", "1")...)

	// 60 records at 10/s: the producer lives about 6 s, many push
	// intervals; its series go when it disconnects.
	watchClientSeries(t, port, "interop-telemetry-1", "org.apache.kafka.producer.", p, func() {
		mustTool(t, tg, "", "", ClassProducerPerf, "--bootstrap-server", tg.Bootstrap, "--topic", "telemetry",
			"--num-records", "60", "--record-size", "16", "--throughput", "10", "--command-property", "client.id=interop-telemetry-1")
	})
	// A consumer (classic group) under a second subscription: it reads the
	// 60 records, then waits 8 s for more.
	mustTool(t, tg, "", "", ClassClientMetrics, args(tg, "--alter", "--name", "consumers", "--metrics", "org.apache.kafka.consumer.",
		"--interval", "500", "--match", "client_id=interop-telemetry-c.*")...)
	watchClientSeries(t, port, "interop-telemetry-c1", "org.apache.kafka.consumer.", p, func() {
		mustTool(t, tg, "", "", ClassConsoleConsumer, args(tg, "--topic", "telemetry", "--from-beginning", "--timeout-ms", "8000",
			"--command-property", "client.id=interop-telemetry-c1")...)
	})
}

// watchClientSeries runs client and fails unless, while it runs, sharq's
// metrics listener shows a sharq_client_metric series of clientID whose
// name starts with prefix.
func watchClientSeries(t *testing.T, port int, clientID, prefix string, p *Process, client func()) {
	t.Helper()
	series := regexp.MustCompile(`(?m)^sharq_client_metric\{[^}]*client_id="` + regexp.QuoteMeta(clientID) + `"[^}]*name="` + regexp.QuoteMeta(prefix) + `[^"]+"[^}]*\} \S+$`)
	found := make(chan string, 1)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		for ctx.Err() == nil {
			if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port)); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if m := series.FindString(string(body)); m != "" {
					found <- m
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	client()
	select {
	case m := <-found:
		t.Logf("pushed series on /metrics: %s", m)
	case <-time.After(5 * time.Second):
		t.Errorf("no sharq_client_metric series of %s (%s...) while it ran\n--- sharq log ---\n%s", clientID, prefix, p.LogTail(3000))
	}
}
