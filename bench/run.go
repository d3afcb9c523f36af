package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"sharq/interop"
)

// run builds the brokers, runs cfg.Runs interleaved rounds and writes the
// report.
func run(ctx context.Context, cfg config, log *slog.Logger) (report, *results, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	began := time.Now()
	if cfg.ModuleDir == "" {
		dir, err := findModule()
		if err != nil {
			return report{}, nil, err
		}
		cfg.ModuleDir = dir
	}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "sharq-bench-")
		if err != nil {
			return report{}, nil, fmt.Errorf("work dir: %w", err)
		}
		defer os.RemoveAll(dir)
		cfg.WorkDir = dir
	} else if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return report{}, nil, fmt.Errorf("work dir: %w", err)
	}

	var notes []string
	var java *interop.Java
	if contains(cfg.Brokers, "kafka") || cfg.JVMClients {
		j, err := setupJava(ctx, cfg.ModuleDir, cfg.WorkDir)
		if err != nil {
			log.Warn("Kafka and its tools will not run", "err", err)
			notes = append(notes, "No JVM: "+firstLine(err.Error())+"; Kafka and its tools were not run.")
		} else {
			java = j
		}
	}
	var active []broker
	for _, name := range cfg.Brokers {
		switch name {
		case "sharq", "kfake":
			pkg := "./cmd/sharq"
			if name == "kfake" {
				pkg = "./bench/kfake"
			}
			bin := filepath.Join(cfg.WorkDir, name)
			if name == "sharq" && cfg.SharqBin != "" {
				bin = cfg.SharqBin
				notes = append(notes, "sharq: prebuilt binary "+bin+" (-sharq-bin).")
			} else if name == "kfake" && cfg.KfakeBin != "" {
				bin = cfg.KfakeBin
				notes = append(notes, "kfake: prebuilt binary "+bin+".")
			} else {
				log.Info("building", "pkg", pkg)
				if err := releaseBuild(ctx, cfg.ModuleDir, pkg, bin); err != nil {
					return report{}, nil, err
				}
			}
			if name == "sharq" {
				active = append(active, newSharq(bin))
			} else {
				active = append(active, newKfake(bin))
			}
		case "sharq-base":
			if cfg.BaseBin == "" {
				return report{}, nil, fmt.Errorf("broker sharq-base needs -base-bin")
			}
			b := newSharq(cfg.BaseBin).(*goBroker)
			b.nm = "sharq-base"
			active = append(active, b)
			notes = append(notes, "sharq-base: binary "+cfg.BaseBin+" (-base-bin).")
		case "kafka":
			if java != nil {
				active = append(active, &kafkaBroker{j: java})
			}
		default:
			return report{}, nil, fmt.Errorf("unknown broker %q (want sharq, sharq-base, kafka, kfake)", name)
		}
	}
	clientJava := java
	if !cfg.JVMClients {
		clientJava = nil
		notes = append(notes, "Clients: franz-go only (-clients go); Kafka's perf tools were not run.")
	}

	res := newResults(cfg.Brokers)
	ws := append(buildWorkloads(cfg), tlsWorkloads(cfg)...)
	if cfg.Only != nil {
		kept := ws[:0]
		for _, w := range ws {
			if cfg.Only.MatchString(w.name) {
				kept = append(kept, w)
			}
		}
		ws = kept
		series := "no start-up series"
		if cfg.startupWanted() {
			series = "with the start-up series"
		}
		notes = append(notes, fmt.Sprintf("Partial run: only workloads matching %q, %s.", cfg.Only, series))
	}
	for i := 0; i < cfg.Runs; i++ {
		for _, b := range active {
			log.Info("session", "run", i+1, "of", cfg.Runs, "broker", b.name())
			if err := session(ctx, cfg, b, clientJava, ws, res, i, log); err != nil {
				if ctx.Err() != nil {
					return report{}, nil, ctx.Err()
				}
				log.Error("session failed", "broker", b.name(), "run", i+1, "err", err)
				notes = append(notes, fmt.Sprintf("Run %d, %s: %s", i+1, b.name(), firstLine(err.Error())))
			}
		}
	}

	notes = append(notes,
		fmt.Sprintf("Start-up: process start to the first answered ApiVersions, median of %d starts per run (Kafka: %d)%s; "+
			"\"empty\" is one data dir without topics (the first start creates its metadata, the others restart on it).",
			cfg.StartupRuns, cfg.KafkaStartupRuns, map[bool]string{true: "; fewer Kafka starts in quick mode because each takes seconds", false: ""}[cfg.Quick]),
		"Kafka: single-node KRaft (combined broker+controller) from the 4.4.0 jars with kafka-server-start.sh's JVM flags (-Xmx1G -Xms1G, G1). "+
			"sharq and kfake: release builds (go build -trimpath -ldflags=\"-s -w\"); kfake persists to its data dir.",
		fmt.Sprintf("Warm-up: before the workloads each broker gets %d records of 100 B produced and read back, unmeasured "+
			"(the JVM broker's JIT needs it; idle RSS is read before).", cfg.WarmupRecords),
		"Produce: acks=all, 3 partitions, random values. franz-go latency is per record from Produce to its acknowledgement; "+
			"kafka-producer-perf-test prints its own.",
		"Fetch: both consumers read the topic the franz-go producer wrote, from the start. kafka-consumer-perf-test joins a "+
			"consumer group (its fetch.* figures, rebalance excluded); the franz-go consumer assigns partitions directly. "+
			"Its \"time waiting for Fetch responses\" sums each Fetch from the request written to the response read whole "+
			"(the broker's share of the run); franz-go sends the next Fetch only once the last one was polled, so the rest of "+
			"the run is the client's own decoding.",
		fmt.Sprintf("Share groups: share.auto.offset.reset=earliest on each new group; each accept-all run consumes %d records "+
			"of %d B and each run with 1 ms per record %d; franz-go counts from the first delivered record to "+
			"the last; kafka-share-consumer-perf-test includes the group join in its figure and has no processing-delay option.",
			cfg.ShareRecords, cfg.ShareValueSize, cfg.ShareSlowRecords),
		fmt.Sprintf("Share groups, slow consumers: share consumers spending 1 ms on each of %d records (Java: SlowShareConsumer in "+
			"interop/java, Kafka 4.4's KafkaShareConsumer, implicit acknowledgement); the group joins before the records are "+
			"produced in 16 KB batches to a new 2-partition topic; parallel efficiency = (records x 1 ms / consumers) / time from "+
			"the first record delivered to the last processed. The 1 ms is paced (each consumer sleeps to a deadline advanced 1 ms per "+
			"record) so sleep overshoot on a loaded machine is not counted as broker time; records are produced round robin. The poll-100 row: consumers poll at most 100 records and flush "+
			"their acks each time (FlushAcks), %d records from a topic written in 16 KB batches.",
			cfg.ShareSlowRecords, cfg.SharePollRecords),
		"Memory: RSS of the broker process from /proc/<pid>/status; peak per workload is VmHWM after a clear_refs reset, "+
			"backed by 25 ms VmRSS polling.",
		"Broker CPU: user + system CPU seconds of the broker process (all threads) from /proc/<pid>/stat over each workload, "+
			"in 10 ms ticks; share workloads count from after their topic was filled. The clients run on the same 2 cores, "+
			"so a broker that needs less CPU leaves more to them.",
	)
	if wantsTLS(ws) {
		notes = append(notes, tlsNote(cfg))
	}
	meta := reportMeta{
		Date:     began.UTC().Format("2006-01-02"),
		When:     began.UTC().Format(time.RFC3339),
		Command:  cfg.Command,
		Machine:  machineLine(),
		Runs:     cfg.Runs,
		Quick:    cfg.Quick,
		Duration: time.Since(began).Round(time.Second).String(),
		Notes:    notes,
	}
	rep, err := writeReport(cfg.Out, meta, res)
	return rep, res, err
}

// session is one broker's part of one run: workloads on a fresh data dir,
// then the start-up series, then the runs with data stored.
func session(ctx context.Context, cfg config, b broker, java *interop.Java, ws []workload, res *results, run int, log *slog.Logger) error {
	dir := filepath.Join(cfg.WorkDir, fmt.Sprintf("run%d-%s", run+1, b.name()))
	defer os.RemoveAll(dir)
	name := b.name()

	// The TLS rows need an SSL listener beside PLAINTEXT; other sessions
	// start the brokers as they always did.
	var (
		nd      node
		err     error
		tlsAddr string
		tlsMat  *tlsMaterial
	)
	tp, canTLS := b.(tlsPreparer)
	if wantsTLS(ws) && canTLS {
		if tlsMat, err = newTLSMaterial(filepath.Join(dir, "tls")); err != nil {
			return err
		}
		nd, tlsAddr, err = tp.prepareTLS(ctx, filepath.Join(dir, "main"), tlsMat)
		if errors.Is(err, errNoTLS) {
			tlsAddr, tlsMat = "", nil
			nd, err = b.prepare(ctx, filepath.Join(dir, "main"))
		}
	} else {
		nd, err = b.prepare(ctx, filepath.Join(dir, "main"))
	}
	if err != nil {
		return err
	}
	p, _, err := startAndWait(ctx, nd)
	if err != nil {
		return err
	}
	defer stopBroker(p, log)
	if err := interop.WaitReady(ctx, p, 2*time.Minute); err != nil {
		return err
	}
	apis, err := interop.ProbeAPIVersions(ctx, p.Bootstrap)
	if err != nil {
		return err
	}
	if err := sleepCtx(ctx, cfg.IdleSettle); err != nil {
		return err
	}
	if rss, err := statusKB(p.Pid(), "VmRSS"); err == nil {
		res.add(metricDef{secMemory, "idle RSS, empty", "MiB", false}, name, float64(rss)/1024)
	}
	e := &env{cfg: cfg, broker: name, addr: p.Bootstrap, java: java, log: log,
		topics: map[string]bool{}, filled: map[string]bool{}, pid: p.Pid(), tlsAddr: tlsAddr, tlsMat: tlsMat}
	if cfg.WarmupRecords > 0 {
		if err := warmup(ctx, e, cfg.WarmupRecords); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	for _, w := range ws {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runWorkload(ctx, e, apis, w, res)
	}
	stopBroker(p, log)
	if cfg.restartWanted() {
		for _, parts := range cfg.RestartPartitions {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := partitionsSeries(ctx, cfg, b, filepath.Join(dir, fmt.Sprintf("parts%d", parts)), parts, res, log); err != nil {
				log.Error("restart with partitions", "broker", name, "partitions", parts, "err", err)
			}
		}
	}
	if !cfg.startupWanted() {
		return nil
	}

	n := cfg.StartupRuns
	if name == "kafka" {
		n = cfg.KafkaStartupRuns
	}
	emptyDef := metricDef{secStartup, "start-up, empty data dir", "ms", false}
	if ms, err := startupSeries(ctx, b, filepath.Join(dir, "startup"), n, log, nil); err != nil {
		res.na(emptyDef, name, "error: "+firstLine(err.Error()))
		log.Error("start-up series", "broker", name, "err", err)
	} else {
		res.add(emptyDef, name, ms)
	}

	if cfg.StoredBytes > 0 {
		if err := storedSeries(ctx, cfg, b, filepath.Join(dir, "stored"), n, res, log); err != nil {
			log.Error("start-up with data stored", "broker", name, "err", err)
		}
	}
	if cfg.Big {
		bigRows := []metricDef{
			{secMemory, fmt.Sprintf("peak RSS writing %s", gib(cfg.BigBytes)), "MiB", false},
			{secMemory, fmt.Sprintf("idle RSS after restart with %s stored", gib(cfg.BigBytes)), "MiB", false},
			{secMemory, fmt.Sprintf("peak RSS reading %s from the start", gib(cfg.BigBytes)), "MiB", false},
		}
		if name != "sharq" {
			for _, d := range bigRows {
				res.na(d, name, "measured for sharq only")
			}
		} else if free, err := freeBytes(cfg.WorkDir); err != nil || free < cfg.BigMinFree {
			why := fmt.Sprintf("skipped: %s free in %s, need %s", gib(free), cfg.WorkDir, gib(cfg.BigMinFree))
			if err != nil {
				why = "skipped: " + err.Error()
			}
			log.Warn("big data set", "why", why)
			for _, d := range bigRows {
				res.na(d, name, why)
			}
		} else if err := bigSeries(ctx, cfg, b, filepath.Join(dir, "big"), bigRows, res, log); err != nil {
			log.Error("RSS with data stored", "broker", name, "err", err)
			for _, d := range bigRows {
				res.na(d, name, "error: "+firstLine(err.Error()))
			}
		}
	}
	return nil
}

// warmup produces n records of 100 B to a topic of its own and reads them
// back, unmeasured. Idle RSS is read before it.
func warmup(ctx context.Context, e *env, n int) error {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	if err := e.ensureTopic(ctx, "warmup", 3); err != nil {
		return err
	}
	if _, err := goProduce(ctx, e.addr, "warmup", n, 100); err != nil {
		return err
	}
	_, _, err := goConsume(ctx, e.addr, "warmup", n)
	return err
}

func gib(b int64) string { return fmt.Sprintf("%.0f GiB", float64(b)/(1<<30)) }

// startAndWait starts nd and polls ApiVersions until it is answered,
// returning the time from just before the process start.
func startAndWait(ctx context.Context, nd node) (*interop.Process, time.Duration, error) {
	t0 := time.Now()
	p, err := nd.start()
	if err != nil {
		return nil, 0, err
	}
	limit := time.NewTimer(3 * time.Minute)
	defer limit.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := interop.ProbeAPIVersions(pctx, p.Bootstrap)
		cancel()
		if err == nil {
			return p, time.Since(t0), nil
		}
		select {
		case <-p.Exited():
			return nil, 0, fmt.Errorf("%s exited during start-up\n%s", p.Name, p.LogTail(3000))
		case <-limit.C:
			_, _ = p.Stop(stopGrace)
			return nil, 0, fmt.Errorf("%s did not answer ApiVersions within 3m: %w\n%s", p.Name, err, p.LogTail(3000))
		case <-ctx.Done():
			_, _ = p.Stop(stopGrace)
			return nil, 0, ctx.Err()
		case <-time.After(time.Millisecond):
			// Connection refused comes back at once; polling every
			// millisecond keeps the error of a 10 ms start-up small.
		}
	}
}

func stopBroker(p *interop.Process, log *slog.Logger) {
	select {
	case <-p.Exited():
		return
	default:
	}
	// The JVM exits with 128+SIGTERM after running Kafka's shutdown hook.
	if code, err := p.Stop(stopGrace); err != nil || (code != 0 && !(p.Name == "kafka" && code == 143)) {
		log.Warn("broker stop", "broker", p.Name, "exit", code, "err", err)
	}
}

// startupSeries starts a broker n times on the data dir prepared in dir (or
// on nd when given) and returns the median start-up in ms.
func startupSeries(ctx context.Context, b broker, dir string, n int, log *slog.Logger, nd node) (float64, error) {
	if nd == nil {
		var err error
		if nd, err = b.prepare(ctx, dir); err != nil {
			return 0, err
		}
	}
	var ms []float64
	for i := 0; i < n; i++ {
		p, d, err := startAndWait(ctx, nd)
		if err != nil {
			return 0, err
		}
		stopBroker(p, log)
		ms = append(ms, float64(d)/float64(time.Millisecond))
	}
	log.Info("start-up", "broker", b.name(), "dir", filepath.Base(dir), "ms", ms)
	return median(ms), nil
}

// storedSeries fills a fresh data dir with cfg.StoredBytes and times
// restarts on it; it also reads the idle RSS with that data.
func storedSeries(ctx context.Context, cfg config, b broker, dir string, n int, res *results, log *slog.Logger) error {
	name := b.name()
	startDef := metricDef{secStartup, fmt.Sprintf("start-up, %s stored", gib(cfg.StoredBytes)), "ms", false}
	rssDef := metricDef{secMemory, fmt.Sprintf("idle RSS after restart with %s stored", gib(cfg.StoredBytes)), "MiB", false}
	fail := func(err error) error {
		res.na(startDef, name, "error: "+firstLine(err.Error()))
		res.na(rssDef, name, "error: "+firstLine(err.Error()))
		return err
	}
	nd, err := b.prepare(ctx, dir)
	if err != nil {
		return fail(err)
	}
	if err := fillNode(ctx, cfg, nd, cfg.StoredBytes, log); err != nil {
		return fail(err)
	}
	ms, err := startupSeries(ctx, b, dir, n, log, nd)
	if err != nil {
		return fail(err)
	}
	res.add(startDef, name, ms)
	rss, err := idleRSS(ctx, cfg, nd, log)
	if err != nil {
		res.na(rssDef, name, "error: "+firstLine(err.Error()))
		return err
	}
	res.add(rssDef, name, rss)
	return nil
}

// partitionsSeries creates a topic of parts partitions with one record in
// each, then restarts the broker on it: median time to the first answered
// ApiVersions over the start-up runs, and, after one more start and the
// idle settle, the open file descriptors and RSS.
func partitionsSeries(ctx context.Context, cfg config, b broker, dir string, parts int, res *results, log *slog.Logger) error {
	name := b.name()
	label := fmt.Sprintf("restart with %d partitions", parts)
	rows := []metricDef{
		{secStartup, label + ": time to ready", "ms", false},
		{secStartup, label + ": open file descriptors", "fds", false},
		{secMemory, "idle RSS after " + label, "MiB", false},
	}
	fail := func(err error) error {
		for _, d := range rows {
			res.na(d, name, "error: "+firstLine(err.Error()))
		}
		return err
	}
	defer os.RemoveAll(dir)
	nd, err := b.prepare(ctx, dir)
	if err != nil {
		return fail(err)
	}
	p, _, err := startAndWait(ctx, nd)
	if err != nil {
		return fail(err)
	}
	err = interop.WaitReady(ctx, p, 2*time.Minute)
	if err == nil {
		err = createTopic(ctx, p.Bootstrap, "parts", int32(parts))
	}
	if err == nil {
		err = produceEachPartition(ctx, p.Bootstrap, "parts", parts)
	}
	stopBroker(p, log)
	if err != nil {
		return fail(err)
	}
	n := cfg.StartupRuns
	if name == "kafka" {
		n = cfg.KafkaStartupRuns
	}
	ms, err := startupSeries(ctx, b, dir, n, log, nd)
	if err != nil {
		return fail(err)
	}
	p, _, err = startAndWait(ctx, nd)
	if err != nil {
		return fail(err)
	}
	defer stopBroker(p, log)
	if err := interop.WaitReady(ctx, p, 2*time.Minute); err != nil {
		return fail(err)
	}
	if err := sleepCtx(ctx, cfg.IdleSettle); err != nil {
		return fail(err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.Pid()))
	if err != nil {
		return fail(err)
	}
	rss, err := statusKB(p.Pid(), "VmRSS")
	if err != nil {
		return fail(err)
	}
	log.Info(label, "broker", name, "ready_ms", ms, "fds", len(fds), "rss_mib", float64(rss)/1024)
	res.add(rows[0], name, ms)
	res.add(rows[1], name, float64(len(fds)))
	res.add(rows[2], name, float64(rss)/1024)
	return nil
}

// fillNode starts nd, writes bytes of 1 KB records to topic "stored" and
// stops it.
func fillNode(ctx context.Context, cfg config, nd node, bytes int64, log *slog.Logger) error {
	p, _, err := startAndWait(ctx, nd)
	if err != nil {
		return err
	}
	defer stopBroker(p, log)
	if err := interop.WaitReady(ctx, p, 2*time.Minute); err != nil {
		return err
	}
	if err := createTopic(ctx, p.Bootstrap, "stored", 3); err != nil {
		return err
	}
	t0 := time.Now()
	if err := fillBytes(ctx, p.Bootstrap, "stored", bytes, 1024); err != nil {
		return err
	}
	log.Info("filled", "broker", p.Name, "bytes", bytes, "took", time.Since(t0).Round(time.Millisecond))
	return nil
}

func idleRSS(ctx context.Context, cfg config, nd node, log *slog.Logger) (float64, error) {
	p, _, err := startAndWait(ctx, nd)
	if err != nil {
		return 0, err
	}
	defer stopBroker(p, log)
	if err := interop.WaitReady(ctx, p, 2*time.Minute); err != nil {
		return 0, err
	}
	if err := sleepCtx(ctx, cfg.IdleSettle); err != nil {
		return 0, err
	}
	rss, err := statusKB(p.Pid(), "VmRSS")
	if err != nil {
		return 0, err
	}
	return float64(rss) / 1024, nil
}

// bigSeries is sharq's bounded-memory check: peak RSS while writing
// cfg.BigBytes, idle RSS after a restart on it, peak RSS reading it all.
func bigSeries(ctx context.Context, cfg config, b broker, dir string, rows []metricDef, res *results, log *slog.Logger) error {
	nd, err := b.prepare(ctx, dir)
	if err != nil {
		return err
	}
	p, _, err := startAndWait(ctx, nd)
	if err != nil {
		return err
	}
	if err := interop.WaitReady(ctx, p, 2*time.Minute); err != nil {
		stopBroker(p, log)
		return err
	}
	if err := createTopic(ctx, p.Bootstrap, "big", 3); err != nil {
		stopBroker(p, log)
		return err
	}
	mw := watchMem(p.Pid())
	err = fillBytes(ctx, p.Bootstrap, "big", cfg.BigBytes, 1024)
	writePeak := mw.Stop()
	stopBroker(p, log)
	if err != nil {
		return err
	}

	p, _, err = startAndWait(ctx, nd)
	if err != nil {
		return err
	}
	defer stopBroker(p, log)
	if err := interop.WaitReady(ctx, p, 2*time.Minute); err != nil {
		return err
	}
	if err := sleepCtx(ctx, cfg.IdleSettle); err != nil {
		return err
	}
	idle, err := statusKB(p.Pid(), "VmRSS")
	if err != nil {
		return err
	}
	mw = watchMem(p.Pid())
	_, _, err = goConsume(ctx, p.Bootstrap, "big", int(cfg.BigBytes/1024))
	readPeak := mw.Stop()
	if err != nil {
		return err
	}
	res.add(rows[0], b.name(), writePeak)
	res.add(rows[1], b.name(), float64(idle)/1024)
	res.add(rows[2], b.name(), readPeak)
	return nil
}

func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// machineLine describes the machine for the report: CPUs, memory, kernel,
// Go and Java versions.
func machineLine() string {
	mem := "? GiB"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, err := parseStatusKB(b, "MemTotal"); err == nil {
			mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	javaV := "no java"
	if out, err := exec.Command("java", "-version").CombinedOutput(); err == nil {
		javaV = firstLine(strings.TrimSpace(string(out)))
	} else if errors.Is(err, exec.ErrNotFound) {
		javaV = "no java"
	}
	return fmt.Sprintf("nproc %d, %s RAM, %s %s kernel %s, %s, %s",
		runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, kernel, runtime.Version(), javaV)
}
