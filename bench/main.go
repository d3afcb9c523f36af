// Command bench runs sharq, Apache Kafka 4.4 and franz-go's kfake side by
// side on this machine with the same workloads and the same clients, and
// writes a markdown report with PNG charts:
//
//	go run ./bench -out bench/results            # full: 3 interleaved runs
//	go run ./bench -quick -out /tmp/bench         # small counts, 1 run
//
// Each run starts every broker in turn (sharq, kafka, kfake, then again) on a
// fresh data dir, runs the workloads against it and stops it, so that drift
// of a shared machine hits all brokers alike. A workload declares the API keys
// it needs; a broker that does not advertise them gets "n/a" in the report.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	cfg := defaultConfig(false)
	quick := flag.Bool("quick", false, "small record counts and 1 run (a sanity check, not a measurement)")
	out := flag.String("out", "bench/results", "directory for <date>.md and its charts")
	runs := flag.Int("runs", 0, "interleaved runs of the whole set (default 3, quick 1)")
	brokers := flag.String("brokers", "sharq,kafka,kfake", "brokers to run, in this order within a run")
	clients := flag.String("clients", "all", "all: Kafka's perf tools and franz-go; go: franz-go only (no JVM clients)")
	big := flag.Bool("big", false, "also measure sharq's RSS with 10 GB stored (full mode; needs 25 GB free)")
	workdir := flag.String("workdir", "", "scratch directory for data dirs and binaries (default: a temp dir, removed after)")
	sharqBin := flag.String("sharq-bin", "", "measure this sharq binary instead of a release build of ./cmd/sharq")
	baseBin := flag.String("base-bin", "", "broker \"sharq-base\" (name it in -brokers): this sharq binary, e.g. built from main, measured in the same interleaved runs as sharq, with a sharq/sharq-base ratio column")
	verbose := flag.Bool("v", false, "debug logging")
	only := flag.String("only", "", "run only the workloads whose name matches this regexp, and no start-up or memory series unless it matches \"start-up\" (for iterating, not for a report)")
	compression := flag.String("compression", "", "codec of the franz-go producer rows: none, gzip, snappy, lz4 or zstd (default: franz-go's, snappy)")
	shareRecords := flag.Int("share-records", 0, "records each accept-all share-group run consumes (default 1000000, quick 3000)")
	restartParts := flag.String("restart-partitions", "", "partition counts of the \"restart with N partitions\" rows, comma-separated (default 100,1000,10000; quick 100,1000)")
	flag.Parse()

	if *quick {
		cfg = defaultConfig(true)
	}
	cfg.Out = *out
	if *shareRecords > 0 {
		cfg.ShareRecords = *shareRecords
	}
	if *runs > 0 {
		cfg.Runs = *runs
	}
	cfg.Brokers = splitList(*brokers)
	if *restartParts != "" {
		cfg.RestartPartitions = nil
		for _, f := range splitList(*restartParts) {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				fmt.Fprintf(os.Stderr, "bench: -restart-partitions: %q is not a partition count\n", f)
				os.Exit(2)
			}
			cfg.RestartPartitions = append(cfg.RestartPartitions, n)
		}
	}
	switch *clients {
	case "all":
		cfg.JVMClients = true
	case "go":
		cfg.JVMClients = false
	default:
		fmt.Fprintf(os.Stderr, "bench: -clients must be all or go, not %q\n", *clients)
		os.Exit(2)
	}
	cfg.Big = *big && !*quick
	switch *compression {
	case "", "none", "gzip", "snappy", "lz4", "zstd":
		cfg.Compression = *compression
	default:
		fmt.Fprintf(os.Stderr, "bench: -compression must be none, gzip, snappy, lz4 or zstd, not %q\n", *compression)
		os.Exit(2)
	}
	cfg.WorkDir = *workdir
	cfg.SharqBin = *sharqBin
	cfg.BaseBin = *baseBin
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: -only: %v\n", err)
			os.Exit(2)
		}
		cfg.Only = re
		cfg.Big = false
	}
	cfg.Command = "go run ./bench " + strings.Join(os.Args[1:], " ")

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, _, err := run(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (%d charts) in %v\n", rep.Markdown, len(rep.Charts), time.Since(start).Round(time.Second))
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
