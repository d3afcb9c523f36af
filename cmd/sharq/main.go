// Command sharq is a Kafka-protocol broker with native share groups.
//
//	sharq                              serve with embedded defaults (PLAINTEXT://localhost:9092, ./sharq-data)
//	sharq --config FILE                YAML or a Kafka server.properties
//	sharq --override key=value ...     like kafka-server-start.sh
//	sharq --check-config               validate and exit
//	sharq --help                       every key with its default
//	sharq config [text|markdown]       the configuration reference
//	sharq migrate share-offsets ...    share groups' start offsets through MirrorMaker 2 (docs/migrating-to-kafka.md)
//
// Environment: SHARQ_<KEY> (dots as underscores, upper case), and the
// apache/kafka image's KAFKA_<KEY> and CLUSTER_ID below it. Once the
// listeners accept connections sharq prints one line to stdout starting with
// "ready" (ready listeners=... [schema.registry.listeners=...], and, when
// configured through KAFKA_* variables, the lines Kafka prints when it
// serves: see kafkaReadyLines); logs go to stderr. SIGTERM or SIGINT shuts
// down gracefully; a second signal exits at once.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"sharq/broker"
	"sharq/config"
)

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr, nil))
}

// shutdownTimeout bounds the graceful part of a shutdown; connections still
// busy after it are closed.
const shutdownTimeout = 10 * time.Second

// releaseDelay is how long after ready the start-up pages are released.
// Releasing takes about a millisecond and unmaps code the first requests
// run; done at once it delayed the first ApiVersions answer by about as
// much again, measured, while clients that connect at ready are served well
// within this delay.
const releaseDelay = 100 * time.Millisecond

// run is main without the process: it returns the exit code. stop, when not
// nil, replaces OS signals (tests).
func run(args, environ []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "ctl" {
		return runCtl(args[1:], environ, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "config" {
		format := "text"
		if len(args) > 1 {
			format = args[1]
		}
		if err := config.WriteReference(stdout, format); err != nil {
			fmt.Fprintln(stderr, "sharq:", err)
			return 2
		}
		return 0
	}
	cfg, action, err := config.Load(args, environ, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "sharq:", err)
		return 2
	}
	switch action {
	case config.ActionHelp:
		if err := config.WriteHelp(stdout); err != nil {
			fmt.Fprintln(stderr, "sharq:", err)
			return 2
		}
		return 0
	case config.ActionCheck:
		fmt.Fprintln(stdout, "configuration ok")
		return 0
	}
	logger := cfg.NewLogger(stderr)

	// A start that fails before serving (a port in use) must not leave a
	// data directory behind that it has just initialised.
	fresh := emptyOrMissing(cfg.LogDirs)
	_, statErr := os.Stat(cfg.LogDirs)
	missing := errors.Is(statErr, fs.ErrNotExist)
	srv, err := broker.New(cfg, logger)
	if err != nil {
		logger.Error("start failed", "err", err)
		if fresh {
			removeFresh(cfg.LogDirs, missing, logger)
		}
		return 1
	}
	if err := srv.Listen(); err != nil {
		logger.Error("start failed", "err", err)
		srv.Shutdown(context.Background())
		if fresh {
			removeFresh(cfg.LogDirs, missing, logger)
		}
		return 1
	}

	if stop == nil {
		sig := make(chan os.Signal, 2)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		defer signal.Stop(sig)
		stop = sig
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve() }()

	var names []string
	for _, l := range srv.Advertised() {
		names = append(names, l.String())
	}
	ready := "ready listeners=" + strings.Join(names, ",")
	if sr := srv.SchemaRegistryAddrs(); len(sr) > 0 {
		ready += " schema.registry.listeners=" + strings.Join(sr, ",")
	}
	fmt.Fprintln(stdout, ready)
	if cfg.KafkaEnvironment() {
		for _, line := range kafkaReadyLines(cfg.NodeID, time.Now()) {
			fmt.Fprintln(stdout, line)
		}
	}
	logger.Info("sharq ready", "listeners", strings.Join(names, ","), "schema.registry.listeners", strings.Join(srv.SchemaRegistryAddrs(), ","), "log.dirs", cfg.LogDirs)
	// Start-up code and data are not needed again; see exepages_linux.go.
	time.AfterFunc(releaseDelay, func() {
		if err := releaseExePages(); err != nil {
			logger.Debug("start-up pages kept mapped", "err", err)
		}
	})

	select {
	case s := <-stop:
		logger.Info("shutting down", "signal", s.String())
	case err := <-serveErr:
		logger.Error("server stopped", "err", err)
		srv.Shutdown(context.Background())
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			logger.Error("shutdown", "err", err)
			return 1
		}
	case s := <-stop:
		logger.Error("second signal: exiting without a clean shutdown", "signal", s.String())
		return 1
	}
	if err := <-serveErr; err != nil && !errors.Is(err, broker.ErrServerClosed) {
		logger.Error("serve", "err", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}

// kafkaReadyLines are the lines Kafka's broker logs once it serves, in
// Kafka's log layout, each with the text a tool written for Kafka's images
// waits for:
//   - "Transitioning from RECOVERY to RUNNING": Testcontainers for Java
//     (KafkaContainer, ConfluentKafkaContainer) and for Go (the kafka module);
//   - "Kafka Server started": testcontainers-python's KafkaContainer in KRaft
//     mode (with_kraft);
//   - "[KafkaServer id=N] started": testcontainers-python's default
//     (ZooKeeper) mode.
//
// They are printed only when sharq was configured through the apache/kafka
// image's KAFKA_* environment (always so in sharq's image): that is when it
// stands in for Kafka, and a sharq started the sharq way keeps the one
// "ready" line. The part in parentheses, where Kafka names its logger, says
// who printed them.
func kafkaReadyLines(nodeID int32, now time.Time) []string {
	ts := now.Format("2006-01-02 15:04:05.000")
	ts = ts[:len(ts)-4] + "," + ts[len(ts)-3:] // log4j's comma before the milliseconds
	const who = " (sharq: ready, in Kafka's words)"
	return []string{
		fmt.Sprintf("[%s] INFO [BrokerLifecycleManager id=%d] The broker has been unfenced. Transitioning from RECOVERY to RUNNING.%s", ts, nodeID, who),
		fmt.Sprintf("[%s] INFO [KafkaRaftServer nodeId=%d] Kafka Server started%s", ts, nodeID, who),
		fmt.Sprintf("[%s] INFO [KafkaServer id=%d] started%s", ts, nodeID, who),
	}
}

// version is set at build time (-ldflags "-X main.version=v1.2.3"); else
// the module version or VCS revision the binary was built from is shown.
var version = ""

// versionLine is what sharq --version prints.
func versionLine() string {
	v, rev, dirty := version, "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-dirty"
		}
		v += " (" + rev + ")"
	}
	return fmt.Sprintf("sharq %s, Apache Kafka 4.4 protocol, %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// emptyOrMissing reports whether dir does not exist or holds nothing.
func emptyOrMissing(dir string) bool {
	entries, err := os.ReadDir(dir)
	return errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0
}

// removeFresh empties dir, which this start found empty, and removes it
// when this start created it.
func removeFresh(dir string, missing bool, logger *slog.Logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			logger.Warn("could not remove what the failed start initialised", "path", filepath.Join(dir, e.Name()), "err", err)
		}
	}
	if missing {
		os.Remove(dir) // this start made it
	}
	logger.Info("removed what the failed start had just initialised in the data directory", "log.dirs", dir)
}
