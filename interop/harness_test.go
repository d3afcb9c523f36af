package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment:
//
//	SHARQ_INTEROP_TARGET  sharq (default) | kafka | both | comma list (see targetNames)
//	SHARQ_INTEROP_GOLDEN  1: run two targets (default kafka,sharq), record and diff
//	                      their outputs (diffs are logged); strict: diffs fail the test
//	SHARQ_INTEROP_GOLDEN_DIR  where outputs and summary.txt go (default: a new temp dir, kept)
//	SHARQ_INTEROP_CACHE   jar cache (default $HOME/.cache/sharq-interop)
//	SHARQ_INTEROP_FETCH   0: never run fetch-jars.sh from the test
//	SHARQ_INTEROP_JVMS    tool JVMs at once (default 2)
//	SHARQ_INTEROP_CDS     0: no class-data-sharing archive for the tools
//	CI                    true: missing java/mvn/jars fail instead of skip

var (
	workDir string // per test binary, removed by TestMain

	javaOnce sync.Once
	javaEnv  *Java
	javaErr  error

	jvmSem chan struct{}

	sharqOnce sync.Once
	sharqBin  string
	sharqErr  error

	recOnce sync.Once
	rec     *Recorder
	recErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sharq-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(2)
	}
	workDir = dir
	n := 2
	if v, err := strconv.Atoi(os.Getenv("SHARQ_INTEROP_JVMS")); err == nil && v > 0 {
		n = v
	}
	jvmSem = make(chan struct{}, n)
	code := m.Run()
	if err := stopSharedCluster(); err != nil {
		fmt.Fprintln(os.Stderr, "interop: stop shared Kafka cluster:", err)
		if code == 0 {
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func inCI() bool { return os.Getenv("CI") == "true" }

// needJava returns the Kafka 4.4 tool runner, fetching the jars first when
// they are missing and mvn is there. Without java, mvn or jars it skips the
// test locally and fails it in CI, where the suite must really run.
func needJava(t testing.TB) *Java {
	t.Helper()
	javaOnce.Do(func() {
		cache := CacheDir()
		lib := LibDir(cache, "kafka-"+KafkaVersion)
		if !JarsComplete(lib) && os.Getenv("SHARQ_INTEROP_FETCH") != "0" {
			script, err := filepath.Abs("fetch-jars.sh")
			if err != nil {
				javaErr = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			out, err := FetchJars(ctx, script, cache)
			cancel()
			if err != nil {
				javaErr = fmt.Errorf("%w\n%s", err, out)
				return
			}
		}
		cds := filepath.Join(cache, "kafka-"+KafkaVersion, "cds")
		if os.Getenv("SHARQ_INTEROP_CDS") == "0" {
			cds = ""
		}
		javaEnv, javaErr = NewJava(lib, filepath.Join(workDir, "conf"), cds)
	})
	if javaErr != nil {
		msg := fmt.Sprintf("interop: Apache Kafka %s tools unavailable: %v\n"+
			"(needs java 17+ and maven; run interop/fetch-jars.sh)", KafkaVersion, javaErr)
		if inCI() {
			t.Fatal(msg)
		}
		if errors.Is(javaErr, ErrNoJava) || errors.Is(javaErr, ErrNoJars) || errors.Is(javaErr, ErrNoMvn) {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return javaEnv
}

// recorder returns the golden recorder, or nil outside golden mode.
func recorder(t testing.TB) *Recorder {
	t.Helper()
	if goldenMode() == "" {
		return nil
	}
	recOnce.Do(func() {
		dir := os.Getenv("SHARQ_INTEROP_GOLDEN_DIR")
		if dir == "" {
			dir, recErr = os.MkdirTemp("", "sharq-interop-golden-")
			if recErr != nil {
				return
			}
		}
		rec, recErr = NewRecorder(dir)
	})
	if recErr != nil {
		t.Fatalf("golden recorder: %v", recErr)
	}
	return rec
}

// goldenMode is "", "1" or "strict".
func goldenMode() string {
	switch v := os.Getenv("SHARQ_INTEROP_GOLDEN"); v {
	case "", "0":
		return ""
	case "strict":
		return v
	default:
		return "1"
	}
}

// targetNames says which brokers the scenarios run against:
// SHARQ_INTEROP_TARGET is sharq, kafka, both (= kafka,sharq) or a comma list
// in which a name's kind is the name without trailing digits, so that
// "kafka,kafka2" compares two Apache Kafka runs (a check of the masks).
// Golden mode needs exactly two targets and defaults to kafka,sharq.
func targetNames(t testing.TB) []string {
	t.Helper()
	v := os.Getenv("SHARQ_INTEROP_TARGET")
	switch v {
	case "":
		if goldenMode() != "" {
			return []string{"kafka", "sharq"}
		}
		return []string{"sharq"}
	case "both":
		return []string{"kafka", "sharq"}
	}
	var names []string
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if k := targetKind(n); k != "kafka" && k != "sharq" {
			t.Fatalf("SHARQ_INTEROP_TARGET=%q: %q is not sharq or kafka (optionally with a digit suffix)", v, n)
		}
		if slices.Contains(names, n) {
			t.Fatalf("SHARQ_INTEROP_TARGET=%q names %q twice", v, n)
		}
		names = append(names, n)
	}
	if goldenMode() != "" && len(names) != 2 {
		t.Fatalf("golden mode compares two targets; SHARQ_INTEROP_TARGET=%q names %d", v, len(names))
	}
	return names
}

func targetKind(name string) string { return strings.TrimRight(name, "0123456789") }

// startTarget starts a fresh broker of the named kind, stopped in t.Cleanup.
func startTarget(t *testing.T, name string) Target {
	t.Helper()
	j := needJava(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var p *Process
	var err error
	start := time.Now()
	switch targetKind(name) {
	case "kafka":
		p, err = StartKafka(ctx, j, dir)
	case "sharq":
		bin := buildSharq(t)
		p, err = StartSharq(ctx, bin, dir, time.Minute)
	default:
		t.Fatalf("unknown target %q", name)
	}
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p.Name = name
	p.APIs, err = APIKeys(ctx, p.Bootstrap)
	if err != nil {
		_, _ = p.Stop(30 * time.Second)
		t.Fatalf("%s ApiVersions: %v", name, err)
	}
	t.Logf("%s ready at %s after %v (log %s)", name, p.Bootstrap, time.Since(start).Round(time.Millisecond), p.Log)
	if r := recorder(t); r != nil {
		r.AddLiteral(name, dir, "<DIR>")
	}
	t.Cleanup(func() {
		stopStart := time.Now()
		code, err := p.Stop(30 * time.Second)
		t.Logf("%s stopped with exit code %d after %v", name, code, time.Since(stopStart).Round(time.Millisecond))
		if err != nil {
			t.Errorf("stop %s: %v\n%s", name, err, p.LogTail(4000))
			return
		}
		// Apache Kafka's JVM ends with 143 (128+SIGTERM) after its
		// shutdown hook; sharq must treat SIGTERM as a clean exit.
		if targetKind(name) == "sharq" && code != 0 {
			t.Errorf("sharq exited %d after SIGTERM, want 0\n%s", code, p.LogTail(4000))
		}
		if t.Failed() {
			t.Logf("%s log tail:\n%s", name, p.LogTail(6000))
		}
	})
	return p.Target
}

func buildSharq(t testing.TB) string {
	t.Helper()
	sharqOnce.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			sharqErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		sharqBin = filepath.Join(workDir, "sharq")
		sharqErr = BuildSharq(ctx, root, sharqBin)
	})
	if sharqErr != nil {
		t.Fatalf("build sharq: %v", sharqErr)
	}
	return sharqBin
}

// tool runs one Kafka tool against tg, bounded by the JVM semaphore and a
// timeout. step names the output for the golden comparison ("" = not
// recorded). It does not judge the exit code; see mustTool.
func tool(t testing.TB, tg Target, step, stdin, cls string, args ...string) (Result, error) {
	t.Helper()
	return runTool(t, tg, step, stdin, cls, true, args...)
}

// runTool is tool; with slot false it takes no JVM slot, for a scenario that
// holds them all (see holdAllJVMSlots).
func runTool(t testing.TB, tg Target, step, stdin, cls string, slot bool, args ...string) (Result, error) {
	t.Helper()
	j := needJava(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if slot {
		select {
		case jvmSem <- struct{}{}:
		case <-ctx.Done():
			t.Fatalf("%s: waited too long for a JVM slot", step)
		}
	}
	var in *strings.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	var res Result
	var err error
	if in != nil {
		res, err = j.Run(ctx, in, cls, args...)
	} else {
		res, err = j.Run(ctx, nil, cls, args...)
	}
	if slot {
		<-jvmSem
	}
	t.Logf("%s %s: exit %d in %v", shortClass(cls), step, res.ExitCode, res.Elapsed.Round(time.Millisecond))
	if r := recorder(t); r != nil && step != "" {
		text := fmt.Sprintf("exit %d\n%s", res.ExitCode, res.Stdout)
		if rerr := r.Record(tg.Name, step, text); rerr != nil {
			t.Error(rerr)
		}
		if res.Stderr != "" {
			if rerr := r.Record(tg.Name, step+".stderr", res.Stderr); rerr != nil {
				t.Error(rerr)
			}
		}
	}
	return res, err
}

// mustToolOwnRows is mustTool for a listing of every group on the broker:
// other scenarios' groups come and go on the shared broker at their own
// pace on each target, so the golden output keeps only the header and the
// rows whose first column is one of own, with the columns joined by single
// spaces (the listing pads them to its longest name).
func mustToolOwnRows(t testing.TB, tg Target, step, cls string, own []string, args ...string) Result {
	t.Helper()
	res, err := tool(t, tg, "", "", cls, args...)
	if err != nil {
		t.Fatalf("%s: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", step, err, res.Stdout, res.Stderr)
	}
	if r := recorder(t); r != nil {
		var sb strings.Builder
		fmt.Fprintf(&sb, "exit %d\n", res.ExitCode)
		for i, line := range strings.Split(strings.TrimRight(res.Stdout, "\n"), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && (i == 0 && f[0] == "GROUP" || slices.Contains(own, f[0])) {
				sb.WriteString(strings.Join(f, " ") + "\n")
			}
		}
		if rerr := r.Record(tg.Name, step, sb.String()); rerr != nil {
			t.Error(rerr)
		}
		if res.Stderr != "" {
			if rerr := r.Record(tg.Name, step+".stderr", res.Stderr); rerr != nil {
				t.Error(rerr)
			}
		}
	}
	return res
}

// mustTool is tool that fails the test on a non-zero exit, showing both
// streams.
func mustTool(t testing.TB, tg Target, step, stdin, cls string, args ...string) Result {
	t.Helper()
	res, err := tool(t, tg, step, stdin, cls, args...)
	if err != nil {
		t.Fatalf("%s: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", step, err, res.Stdout, res.Stderr)
	}
	return res
}

// bs is the --bootstrap-server argument pair for tg.
func bs(tg Target) []string { return []string{"--bootstrap-server", tg.Bootstrap} }

func args(tg Target, rest ...string) []string { return append(bs(tg), rest...) }

// holdAllJVMSlots takes every JVM slot, so that a scenario running several
// JVMs at once (long-lived consumers plus tools) keeps the machine's JVM
// count bounded; the returned func gives them back. The scenario then runs
// its tools with runTool(..., slot=false, ...).
func holdAllJVMSlots(t testing.TB) func() {
	t.Helper()
	timer := time.NewTimer(3 * time.Minute)
	defer timer.Stop()
	n := 0
	for n < cap(jvmSem) {
		select {
		case jvmSem <- struct{}{}:
			n++
		case <-timer.C:
			for ; n > 0; n-- {
				<-jvmSem
			}
			t.Fatalf("waited too long for all %d JVM slots", cap(jvmSem))
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for i := 0; i < n; i++ {
				<-jvmSem
			}
		})
	}
}
