package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs the quick mode, trimmed further, against sharq and kfake with
// the franz-go clients only: no JVM is needed, so it runs everywhere. Every
// row must hold a positive number for both brokers unless the broker does not
// advertise the APIs the workload needs (sharq's share groups, for now) or
// the row belongs to Kafka's Java tools, which this test leaves out.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real brokers; skipped with -short")
	}
	cfg := defaultConfig(true)
	cfg.Brokers = []string{"sharq", "kfake"}
	cfg.JVMClients = false
	cfg.Out = t.TempDir()
	cfg.WorkDir = t.TempDir()
	cfg.Command = "go test ./bench -run TestSmoke"
	// BENCH_SHARQ_BIN measures a prebuilt sharq, e.g. while the work tree
	// does not build.
	cfg.SharqBin = os.Getenv("BENCH_SHARQ_BIN")
	buildSmokeBrokers(t, &cfg)
	cfg.ProduceRecords = map[int]int{100: 5000, 1024: 2000}
	cfg.ShareConsumers = []int{1, 3}
	cfg.SharePartitions = []int{2}
	cfg.ShareRecords, cfg.ShareSlowRecords, cfg.SharePollRecords = 1000, 100, 1000
	cfg.StartupRuns = 3
	cfg.WarmupRecords = 1000
	cfg.IdleSettle = 100 * time.Millisecond
	cfg.Timeout = time.Minute

	// The budget covers the smoke run only: the binaries are built above.
	ctx, cancel := context.WithTimeout(context.Background(), smokeBudget)
	defer cancel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	rep, r, err := run(ctx, cfg, log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, logs.String())
	}

	md, err := os.ReadFile(rep.Markdown)
	if err != nil {
		t.Fatalf("read report: %v", err)
	}
	for _, want := range []string{"## Produce", "## Fetch", "## Share groups", "## Start-up", "## Memory",
		"| sharq | kfake | sharq/kfake |", "Machine: nproc", cfg.Command} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	if len(rep.Charts) == 0 {
		t.Fatal("no charts written")
	}
	for _, c := range rep.Charts {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatalf("read chart: %v", err)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s is not a PNG", c)
		}
		if filepath.Dir(c) != filepath.Join(cfg.Out, strings.TrimSuffix(filepath.Base(rep.Markdown), ".md")) {
			t.Errorf("chart %s not beside the report", c)
		}
		if !bytes.Contains(md, []byte(filepath.Base(c))) {
			t.Errorf("report does not link %s", filepath.Base(c))
		}
	}

	rows := 0
	for _, d := range r.defs {
		for _, br := range cfg.Brokers {
			s, ok := r.stats(d.Name, br)
			if ok {
				// A smoke-sized workload can use less than one 10 ms
				// tick of broker CPU; every other figure is positive.
				if d.Section == secCPU {
					if !(s.Median >= 0) || math.IsInf(s.Median, 0) {
						t.Errorf("%s / %s: %v, want a non-negative number", br, d.Name, s.Median)
					}
				} else if !(s.Median > 0) || math.IsInf(s.Median, 0) {
					t.Errorf("%s / %s: %v, want a positive number", br, d.Name, s.Median)
				}
				rows++
				continue
			}
			why := r.notes[d.Name][br]
			switch {
			case strings.HasPrefix(why, "broker lacks"), why == "no JVM clients",
				why == "no TLS listener" && br == "kfake",
				why == errNoCleaner && br == "kfake":
			default:
				t.Errorf("%s / %s: no value (%q)", br, d.Name, why)
			}
		}
	}
	// Both brokers produce, fetch, start and idle; kfake has share groups.
	for _, br := range cfg.Brokers {
		for _, name := range []string{"franz-go producer 100 B: throughput", "franz-go consumer 1 KB: bandwidth",
			"start-up, empty data dir", "idle RSS, empty", "peak RSS during franz-go producer 1 KB",
			"broker CPU during franz-go producer 1 KB"} {
			if _, ok := r.stats(name, br); !ok {
				t.Errorf("%s: no value for %q", br, name)
			}
		}
	}
	for _, br := range cfg.Brokers {
		if _, ok := r.stats("franz-go share, 3 consumer(s), 2 partitions, 1 ms per record", br); !ok {
			t.Errorf("%s: no share-group figure", br)
		}
	}
	// sharq serves the TLS rows on its SSL listener.
	for _, name := range []string{"TLS 1.3 connection set-up (TCP + handshake + ApiVersions), 4 clients: rate",
		"TLS 1.2 connection set-up (TCP + handshake + ApiVersions), 4 clients: rate",
		"franz-go producer over TLS 100 B: throughput", "franz-go consumer over TLS 1 KB: throughput"} {
		if _, ok := r.stats(name, "sharq"); !ok {
			t.Errorf("sharq: no value for %q (%q)", name, r.notes[name]["sharq"])
		}
	}
	if rows < 20 {
		t.Errorf("only %d values", rows)
	}
	if t.Failed() {
		t.Logf("log:\n%s", logs.String())
	}
}

// smokeBudget bounds TestSmoke's run against both brokers, once they are
// built: it catches a hang, not slowness. The run takes under a minute on
// an idle 2-core machine; at a load average of 60 on those 2 cores it took
// more than 3 minutes (kfake's restart with 1,000 partitions ran out).
const smokeBudget = 6 * time.Minute

// buildSmokeBrokers release-builds sharq (unless cfg.SharqBin names one) and
// kfake before TestSmoke's timed part. From empty Go caches on a loaded
// 2-core machine sharq's build alone took almost three minutes, so inside
// the smoke budget it was killed. The builds get whatever the test binary's
// own deadline leaves beyond the smoke budget (at most 20 minutes), so a
// slow build fails with its own message instead of a test-binary panic.
func buildSmokeBrokers(t *testing.T, cfg *config) {
	t.Helper()
	budget := 20 * time.Minute
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - smokeBudget - 30*time.Second; left < budget {
			budget = left
		}
	}
	if budget <= 0 {
		t.Fatalf("the test deadline leaves no time to build sharq and kfake before the %v smoke run", smokeBudget)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	dir, err := findModule()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	began := time.Now()
	if cfg.SharqBin == "" {
		cfg.SharqBin = filepath.Join(bin, "sharq")
		if err := releaseBuild(ctx, dir, "./cmd/sharq", cfg.SharqBin); err != nil {
			t.Fatalf("build sharq (budget %v): %v", budget, err)
		}
	}
	cfg.KfakeBin = filepath.Join(bin, "kfake")
	if err := releaseBuild(ctx, dir, "./bench/kfake", cfg.KfakeBin); err != nil {
		t.Fatalf("build kfake (budget %v): %v", budget, err)
	}
	t.Logf("built the brokers in %v (outside the %v smoke budget)", time.Since(began).Round(time.Second), smokeBudget)
}

func TestParseProducerPerf(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    producerPerf
		wantErr bool
	}{
		{
			name: "interim lines then summary",
			out: "5000 records sent, 999.2 records/sec (0.10 MB/sec), 12.3 ms avg latency, 40.0 ms max latency.\n" +
				"20000 records sent, 4812.3 records/sec (0.46 MB/sec), 5.67 ms avg latency, 89.00 ms max latency, " +
				"4 ms 50th, 10 ms 95th, 20 ms 99th, 80 ms 99.9th.\n",
			want: producerPerf{Records: 20000, RecordsPerSec: 4812.3, MBPerSec: 0.46, AvgMs: 5.67, MaxMs: 89,
				P50: 4, P95: 10, P99: 20, P999: 80},
		},
		{name: "no summary", out: "5000 records sent, 999.2 records/sec (0.10 MB/sec), 12.3 ms avg latency, 40.0 ms max latency.\n", wantErr: true},
		{name: "empty", out: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProducerPerf(tt.out)
			if tt.wantErr {
				if !errors.Is(err, ErrParse) {
					t.Fatalf("err = %v, want ErrParse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseConsumerPerf(t *testing.T) {
	const header = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, " +
		"rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	const data = "2026-11-29 23:00:00:000, 2026-11-29 23:00:02:000, 9.5367, 4.7684, 100000, 50000.0, 300, 1700, 5.6098, 58823.5"
	tests := []struct {
		name     string
		out      string
		want     int64
		rps, mbs float64
		wantErr  bool
	}{
		{name: "fetch columns preferred", out: header + "\n" + data + "\n", want: 100000, rps: 58823.5, mbs: 5.6098},
		{name: "warning between", out: header + "\nWARNING: something\n" + data + "\n", want: 100000, rps: 58823.5, mbs: 5.6098},
		{name: "share tool columns", out: "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg\n" +
			"2026-11-29 23:00:00:000, 2026-11-29 23:00:01:000, 1.0, 1.0, 10000.0, 10000\n", want: 10000, rps: 10000, mbs: 1},
		{name: "too few records", out: header + "\n" + data + "\n", want: 200000, wantErr: true},
		{name: "no header", out: data + "\n", want: 1, wantErr: true},
		{name: "no data", out: header + "\n", want: 1, wantErr: true},
		{name: "bad number", out: "start.time, end.time, data.consumed.in.nMsg, nMsg.sec, MB.sec\na, b, 5, x, 1\n", want: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseConsumerPerf(tt.out)
			var rps, mbs float64
			if err == nil {
				rps, mbs, err = consumerFigures(m, tt.want)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got %v %v, want an error", rps, mbs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rps != tt.rps || mbs != tt.mbs {
				t.Fatalf("got %v rec/s %v MB/s, want %v %v", rps, mbs, tt.rps, tt.mbs)
			}
		})
	}
}

func TestParseStatusKB(t *testing.T) {
	status := []byte("Name:\tsharq\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t7\n")
	tests := []struct {
		field   string
		want    int64
		wantErr bool
	}{
		{"VmRSS", 10240, false},
		{"VmHWM", 20480, false},
		{"VmSwap", 0, true},
		{"Name", 0, true},
	}
	for _, tt := range tests {
		got, err := parseStatusKB(status, tt.field)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: got %d, %v; want %d, err %v", tt.field, got, err, tt.want, tt.wantErr)
		}
	}
	// The live process: the watcher must see our own RSS.
	w := watchMem(os.Getpid())
	if peak := w.Stop(); !(peak > 0) {
		t.Errorf("peak RSS of this process = %v MiB", peak)
	}
}

func TestStats(t *testing.T) {
	r := newResults([]string{"sharq", "kafka", "kfake"})
	d := metricDef{secProduce, "x", "records/s", true}
	for _, v := range []float64{3, 1, 2} {
		r.add(d, "sharq", v)
	}
	r.add(d, "kafka", 4)
	r.na(d, "kfake", "broker lacks ShareFetch")
	r.na(d, "kfake", "second reason is dropped")
	s, ok := r.stats("x", "sharq")
	if !ok || s.Median != 2 || s.Min != 1 || s.Max != 3 || s.N != 3 {
		t.Fatalf("stats = %+v", s)
	}
	if got := r.ratio("x", "sharq", "kafka"); got != 0.5 {
		t.Errorf("ratio = %v", got)
	}
	if got := r.ratio("x", "sharq", "kfake"); !math.IsNaN(got) {
		t.Errorf("ratio with n/a = %v", got)
	}
	if got := r.cell("x", "kfake"); got != "n/a (broker lacks ShareFetch)" {
		t.Errorf("cell = %q", got)
	}
	if got := r.cell("x", "sharq"); got != "2.00 [1.00..3.00]" {
		t.Errorf("cell = %q", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p50, p99 := percentile(sorted, 50), percentile(sorted, 99); p50 != 5 || p99 != 10 {
		t.Errorf("p50 %v p99 %v", p50, p99)
	}
	if got := missing(map[int16]int16{keyFetch: 17}, needsShare); len(got) != 4 || got[0] != "ShareFetch" {
		t.Errorf("missing = %v", got)
	}
	if got := slug("franz-go share, 3 consumer(s), 2 partitions"); got != "franz-go-share-3-consumer-s-2-partitions" {
		t.Errorf("slug = %q", got)
	}
}

func FuzzParsers(f *testing.F) {
	f.Add("20000 records sent, 4812.3 records/sec (0.46 MB/sec), 5.67 ms avg latency, 89.00 ms max latency, " +
		"4 ms 50th, 10 ms 95th, 20 ms 99th, 80 ms 99.9th.\n")
	f.Add("start.time, end.time, data.consumed.in.nMsg, nMsg.sec, MB.sec\na, b, 5, 1, 1\n")
	f.Add("VmRSS:\t 1 kB\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseProducerPerf(s)
		if m, err := parseConsumerPerf(s); err == nil {
			_, _, _ = consumerFigures(m, 0)
		}
		if v, err := parseStatusKB([]byte(s), "VmRSS"); err == nil && v < 0 {
			t.Fatalf("negative RSS %d", v)
		}
	})
}
