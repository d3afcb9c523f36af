package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A Kafka Connect 4.4 distributed worker (ConnectDistributed from the 4.4
// runtime jars) against the target: it creates its three compacted
// internal topics, joins its group (the classic protocol with Connect's
// "connect" protocol type), and runs a file source connector whose lines
// must arrive on the topic, in order. The connector is java/LineSource.java:
// connect-file 4.4.0 (FileStreamSource) is not in Maven Central, and the
// 4.1.2 one there fails on the 4.4 runtime (NoClassDefFoundError:
// org.apache.kafka.common.utils.AppInfoParser in version()).

var lineSourceBuild compiled

func scenarioConnect(t *testing.T, tg Target) {
	j := needJava(t)
	classes := kafkaProgramClasspath(t, &lineSourceBuild, "LineSource", "classes-line-source", "*")
	const (
		prefix = "interop-connect"
		topic  = prefix + "-lines"
	)
	dir := t.TempDir()
	lines := []string{"first line", "second line", "third line", "fourth line", "fifth line"}
	input := filepath.Join(dir, "input.txt")
	if err := os.WriteFile(input, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	props := strings.Join([]string{
		"bootstrap.servers=" + tg.Bootstrap,
		"group.id=" + prefix,
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.storage.StringConverter",
		"config.storage.topic=" + prefix + "-configs",
		"offset.storage.topic=" + prefix + "-offsets",
		"status.storage.topic=" + prefix + "-status",
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"status.storage.replication.factor=1",
		"offset.flush.interval.ms=1000",
		fmt.Sprintf("listeners=http://127.0.0.1:%d", port),
		"plugin.discovery=only_scan",
	}, "\n") + "\n"
	worker := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(worker, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}

	release := holdAllJVMSlots(t)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := j.RunClasspath(ctx, nil, classes, "org.apache.kafka.connect.cli.ConnectDistributed", worker)
		done <- outcome{res, err}
	}()
	var exited *outcome
	fail := func(format string, args ...any) {
		t.Helper()
		cancel()
		o := exited
		if o == nil {
			v := <-done
			o = &v
		}
		t.Fatalf(format+"\n--- worker stdout (tail) ---\n%s\n--- worker stderr (tail) ---\n%s", append(args, tailString(o.res.Stdout, 6000), tailString(o.res.Stderr, 6000))...)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	hc := &http.Client{Timeout: 5 * time.Second}
	// The worker answers its REST API once it has joined the group and
	// read the config topic.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case o := <-done:
			exited = &o
			fail("Connect worker exited early: %v", o.err)
		default:
		}
		if code, _, err := httpDo(hc, "GET", base+"/connectors", nil); err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			fail("Connect worker's REST API not up within 2 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	cfg := map[string]any{"name": "file-source", "config": map[string]string{
		"connector.class": "LineSource$Connector",
		"tasks.max":       "1",
		"file":            input,
		"topic":           topic,
	}}
	body, _ := json.Marshal(cfg)
	// A worker that is still joining answers 409 (rebalance in progress).
	for {
		code, out, err := httpDo(hc, "POST", base+"/connectors", body)
		if err == nil && code == 201 {
			break
		}
		if time.Now().After(deadline) {
			fail("create connector: %d %s %v", code, out, err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The lines arrive, in order.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	for len(got) < len(lines) && time.Now().Before(deadline) {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if strings.Join(got, "|") != strings.Join(lines, "|") {
		fail("records on %s: %q, want %q", topic, got, lines)
	}

	// Connector and task RUNNING.
	var status struct {
		Connector struct{ State string } `json:"connector"`
		Tasks     []struct{ State string }
	}
	for {
		code, out, err := httpDo(hc, "GET", base+"/connectors/file-source/status", nil)
		if err == nil && code == 200 && json.Unmarshal(out, &status) == nil && status.Connector.State == "RUNNING" && len(status.Tasks) == 1 && status.Tasks[0].State == "RUNNING" {
			break
		}
		if time.Now().After(deadline) {
			fail("connector status: %d %s %v", code, out, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The worker's internal topics: compacted, with Connect's partition
	// counts (25 offsets, 5 status, 1 config).
	adm := kadm.NewClient(cl)
	internal := []string{prefix + "-configs", prefix + "-offsets", prefix + "-status"}
	td, err := adm.ListTopics(ctx, internal...)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, internal...)
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, n := range internal {
		policy := ""
		if r, err := rc.On(n, nil); err == nil {
			for _, c := range r.Configs {
				if c.Key == "cleanup.policy" && c.Value != nil {
					policy = *c.Value
				}
			}
		}
		summary = append(summary, fmt.Sprintf("%s partitions=%d cleanup.policy=%s", n, len(td[n].Partitions), policy))
		if policy != "compact" {
			t.Errorf("internal topic %s: cleanup.policy=%q, want compact", n, policy)
		}
	}
	sort.Strings(summary)
	text := strings.Join(summary, "\n") + "\n" + "records " + strings.Join(got, "|") + "\n"
	t.Logf("Connect:\n%s", text)
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "connect/summary", text); err != nil {
			t.Error(err)
		}
	}
	cancel()
	<-done
}

func httpDo(hc *http.Client, method, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}
