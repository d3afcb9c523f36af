// Package interop runs Apache Kafka's own Java tools (and, for reference, the
// Apache Kafka broker itself) against a broker, so that sharq is tested with
// the exact programs operators use. The jars come from Maven (see pom.xml and
// fetch-jars.sh) into a cache outside the repo; tools are started by main
// class the way bin/kafka-run-class.sh starts them.
//
// The code here returns errors and knows nothing about testing.T; the test
// files decide whether a missing JVM skips or fails.
package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// KafkaVersion is the Apache Kafka release the suite pins (pom.xml profile
// kafka-4.4.0); ClientsVersion41 is the oldest client with share groups.
const (
	KafkaVersion     = "4.4.0"
	ClientsVersion41 = "4.1.2"
)

// Main classes of the tools in Kafka 4.4 (checked against the 4.4.0 jars:
// most tools moved from core's kafka.* to kafka-tools' org.apache.kafka.tools.*
// in 3.x/4.0; the broker and the storage tool stayed in core, in Scala).
const (
	ClassKafka               = "kafka.Kafka"
	ClassStorage             = "kafka.tools.StorageTool"
	ClassTopics              = "org.apache.kafka.tools.TopicCommand"
	ClassConfigs             = "org.apache.kafka.tools.ConfigCommand"
	ClassClientMetrics       = "org.apache.kafka.tools.ClientMetricsCommand"
	ClassFeatures            = "org.apache.kafka.tools.FeatureCommand"
	ClassBrokerAPIVersions   = "org.apache.kafka.tools.BrokerApiVersionsCommand"
	ClassConsoleProducer     = "org.apache.kafka.tools.ConsoleProducer"
	ClassConsoleConsumer     = "org.apache.kafka.tools.consumer.ConsoleConsumer"
	ClassConsoleShareConsume = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"
	ClassConsumerGroups      = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
	ClassShareGroups         = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
	ClassGroups              = "org.apache.kafka.tools.GroupsCommand"
	ClassProducerPerf        = "org.apache.kafka.tools.ProducerPerformance"
	ClassShareConsumerPerf   = "org.apache.kafka.tools.ShareConsumerPerformance"
	ClassGetOffsets          = "org.apache.kafka.tools.GetOffsetShell"
	ClassMetadataQuorum      = "org.apache.kafka.tools.MetadataQuorumCommand"
	ClassDumpLogSegments     = "org.apache.kafka.tools.DumpLogSegments"
)

// ErrNoJava and ErrNoJars say why the tools cannot run; the tests skip on
// them locally and fail on them in CI.
var (
	ErrNoJava = errors.New("java not found")
	ErrNoJars = errors.New("kafka jars not fetched")
	ErrNoMvn  = errors.New("mvn not found")
)

// CacheDir is where fetch-jars.sh puts the jars:
// $SHARQ_INTEROP_CACHE, else $HOME/.cache/sharq-interop.
func CacheDir() string {
	if d := os.Getenv("SHARQ_INTEROP_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "sharq-interop")
	}
	return filepath.Join(home, ".cache", "sharq-interop")
}

// LibDir is the lib/ directory of one jar set ("kafka-4.4.0" or
// "kafka-clients-4.1.2") in cache.
func LibDir(cache, set string) string { return filepath.Join(cache, set, "lib") }

// JarsComplete reports whether fetch-jars.sh finished copying lib.
func JarsComplete(lib string) bool {
	_, err := os.Stat(filepath.Join(lib, ".complete"))
	return err == nil
}

// FetchJars runs fetch-jars.sh (idempotent; a no-op when the jars are there).
// script is the path of fetch-jars.sh.
func FetchJars(ctx context.Context, script, cache string) (string, error) {
	if _, err := exec.LookPath("mvn"); err != nil {
		return "", ErrNoMvn
	}
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "SHARQ_INTEROP_CACHE="+cache)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("fetch jars with %s: %w", script, err)
	}
	return string(out), nil
}

// Java runs Kafka's main classes from one lib/ directory.
type Java struct {
	Bin  string // java executable
	Lib  string // directory of jars; the class path is Lib/*
	Conf string // directory holding the generated log4j2 configs

	// CDS is the AppCDS archive used to cut tool start-up (about 1.4 s to
	// 0.7 s here); "" disables it. The first run of CDSFrom dumps it: the
	// archive holds the classes that run loaded, so it should be a tool that
	// uses the admin client, not the storage tool.
	CDS     string
	CDSFrom string
	cdsOnce sync.Once
	cdsMu   sync.RWMutex
	cdsOK   bool
}

// NewJava finds java ($JAVA_HOME/bin/java, else PATH) and checks lib holds a
// complete jar set. conf is a writable directory for the logging configs.
// cds is a directory for the class-data-sharing archive ("" = no archive).
func NewJava(lib, conf, cds string) (*Java, error) {
	bin := ""
	if h := os.Getenv("JAVA_HOME"); h != "" {
		if _, err := os.Stat(filepath.Join(h, "bin", "java")); err == nil {
			bin = filepath.Join(h, "bin", "java")
		}
	}
	if bin == "" {
		p, err := exec.LookPath("java")
		if err != nil {
			return nil, ErrNoJava
		}
		bin = p
	}
	if !JarsComplete(lib) {
		return nil, fmt.Errorf("%w: no complete jar set in %s (run interop/fetch-jars.sh)", ErrNoJars, lib)
	}
	if err := os.MkdirAll(conf, 0o755); err != nil {
		return nil, fmt.Errorf("create conf dir %s: %w", conf, err)
	}
	for name, text := range map[string]string{
		"log4j2-tools.properties":  toolsLog4j2,
		"log4j2-server.properties": serverLog4j2,
	} {
		if err := os.WriteFile(filepath.Join(conf, name), []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
	}
	j := &Java{Bin: bin, Lib: lib, Conf: conf, CDSFrom: ClassTopics}
	if cds != "" {
		key, err := cdsKey(bin, lib)
		if err == nil {
			if err := os.MkdirAll(cds, 0o755); err == nil {
				j.CDS = filepath.Join(cds, "tools-"+key+".jsa")
			}
		}
	}
	return j, nil
}

// cdsKey names the archive after the JVM and the jar set: an archive made by
// another JVM or for other jars is refused by the JVM (with a warning), so a
// new key avoids dumping over and over into the same stale file.
func cdsKey(bin, lib string) (string, error) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	stamp, err := os.ReadFile(filepath.Join(lib, ".complete"))
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%d\n%d\n%s\n%s", real, st.Size(), st.ModTime().UnixNano(), lib, stamp)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Tools log WARN and above to stderr only, as config/tools-log4j2.yaml does
// in the distribution; stdout stays the tool's own output. Properties format
// because YAML would need jackson-dataformat-yaml wiring into log4j2.
const toolsLog4j2 = `status = warn
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = STDERR
`

// The reference broker logs INFO to stdout, which StartKafka sends to a file.
const serverLog4j2 = `status = warn
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.state.name = state.change.logger
logger.state.level = WARN
`

// toolFlags are kafka-run-class.sh's defaults for a command-line tool
// (-Xmx256M, headless) minus the server GC tuning, plus C1-only JIT and the
// serial collector: a tool lives a second or two, and on a 2-core machine the
// C2 compiler and G1 threads only compete with the broker under test.
// Unified JVM logging (e.g. CDS warnings) defaults to stdout, which would mix
// with tool output, so it is sent to stderr.
var toolFlags = []string{
	"-Xmx256M", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
	"-Djava.awt.headless=true", "-Xlog:disable", "-Xlog:all=warning:stderr",
}

// Result is what a tool run printed.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int // -1 when killed or not started
	Elapsed  time.Duration
}

// ErrExit is wrapped by Run when the tool exited non-zero.
var ErrExit = errors.New("tool exited non-zero")

// Run runs main class cls with args, like bin/kafka-run-class.sh, feeding it
// stdin (nil = empty) and capturing stdout and stderr separately. A non-zero
// exit gives an error wrapping ErrExit together with the full Result; ctx
// ending kills the JVM.
func (j *Java) Run(ctx context.Context, stdin io.Reader, cls string, args ...string) (Result, error) {
	flags := append([]string(nil), toolFlags...)
	flags = append(flags, "-Dlog4j2.configurationFile="+filepath.Join(j.Conf, "log4j2-tools.properties"))
	dumping := false
	// Another test binary may be dumping the same archive.
	tmp := fmt.Sprintf("%s.%d.tmp", j.CDS, os.Getpid())
	if j.CDS != "" && (cls == j.CDSFrom || j.cdsReady()) {
		// One run dumps the archive; the runs that start meanwhile go
		// without it rather than wait.
		j.cdsOnce.Do(func() {
			if _, err := os.Stat(j.CDS); err == nil {
				j.setCDS(true)
				return
			}
			dumping = true
		})
		switch {
		case dumping:
			flags = append(flags, "-XX:ArchiveClassesAtExit="+tmp)
		case j.cdsReady():
			flags = append(flags, "-XX:SharedArchiveFile="+j.CDS)
		}
	}
	res, err := j.exec(ctx, stdin, flags, cls, args...)
	if dumping {
		if err == nil {
			if rerr := os.Rename(tmp, j.CDS); rerr == nil {
				j.setCDS(true)
			}
		} else {
			_ = os.Remove(tmp)
		}
	}
	return res, err
}

func (j *Java) setCDS(ok bool) {
	j.cdsMu.Lock()
	j.cdsOK = ok
	j.cdsMu.Unlock()
}

func (j *Java) cdsReady() bool {
	j.cdsMu.RLock()
	defer j.cdsMu.RUnlock()
	return j.cdsOK
}

func (j *Java) command(ctx context.Context, flags []string, cls string, args ...string) *exec.Cmd {
	argv := append(append([]string(nil), flags...), "-cp", filepath.Join(j.Lib, "*"), cls)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, j.Bin, argv...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	dieWithParent(cmd)
	// The tools resolve relative paths against the working directory; the
	// generated conf dir is a neutral one that exists.
	cmd.Dir = j.Conf
	return cmd
}

func (j *Java) exec(ctx context.Context, stdin io.Reader, flags []string, cls string, args ...string) (Result, error) {
	return j.wait(ctx, j.command(ctx, flags, cls, args...), stdin, cls, args)
}

// wait runs cmd to its end, capturing both streams.
func (j *Java) wait(ctx context.Context, cmd *exec.Cmd, stdin io.Reader, cls string, args []string) (Result, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.Stdin = stdin
	start := time.Now()
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: -1, Elapsed: time.Since(start)}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ctx.Err() == nil {
			return res, fmt.Errorf("%s %s: %w (exit %d)", shortClass(cls), strings.Join(args, " "), ErrExit, res.ExitCode)
		}
		if ctx.Err() != nil {
			return res, fmt.Errorf("%s %s: %w", shortClass(cls), strings.Join(args, " "), ctx.Err())
		}
		return res, fmt.Errorf("run %s: %w", shortClass(cls), err)
	}
	return res, nil
}

func shortClass(cls string) string {
	if i := strings.LastIndexByte(cls, '.'); i >= 0 {
		return cls[i+1:]
	}
	return cls
}

// RunClasspath runs main class cls like Run but with classpath instead of
// Lib/* (e.g. a compiled test program and another client version's lib),
// without the class-data-sharing archive (it belongs to Lib's jars).
func (j *Java) RunClasspath(ctx context.Context, stdin io.Reader, classpath []string, cls string, args ...string) (Result, error) {
	flags := append([]string(nil), toolFlags...)
	flags = append(flags, "-Dlog4j2.configurationFile="+filepath.Join(j.Conf, "log4j2-tools.properties"))
	cmd := j.command(ctx, flags, cls, args...)
	// command put -cp Lib/* right after the flags.
	for i, a := range cmd.Args {
		if a == "-cp" {
			cmd.Args[i+1] = strings.Join(classpath, string(os.PathListSeparator))
			break
		}
	}
	return j.wait(ctx, cmd, stdin, cls, args)
}

// Javac compiles sources against classpath into outDir with the javac
// next to j.Bin (else javac on PATH).
func (j *Java) Javac(ctx context.Context, classpath []string, outDir string, sources ...string) error {
	javac := filepath.Join(filepath.Dir(j.Bin), "javac")
	if real, err := filepath.EvalSymlinks(j.Bin); err == nil {
		if p := filepath.Join(filepath.Dir(real), "javac"); fileExists(p) {
			javac = p
		}
	}
	if !fileExists(javac) {
		p, err := exec.LookPath("javac")
		if err != nil {
			return fmt.Errorf("%w: javac", ErrNoJava)
		}
		javac = p
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", outDir, err)
	}
	argv := append([]string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-nowarn", "-encoding", "UTF-8",
		"-cp", strings.Join(classpath, string(os.PathListSeparator)), "-d", outDir}, sources...)
	cmd := exec.CommandContext(ctx, javac, argv...)
	dieWithParent(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("javac %s: %w\n%s", strings.Join(sources, " "), err, out)
	}
	return nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Background is a tool JVM left running (e.g. a console consumer with no
// message limit) until Stop.
type Background struct {
	cmd    *exec.Cmd
	stdout *lockedBuffer
	stderr *lockedBuffer
	cls    string
	done   chan struct{}
	start  time.Time
	once   sync.Once
}

// Start starts main class cls from Lib/* in the background. ctx ending
// kills it; Stop ends it with SIGTERM first, which runs the tool's
// shutdown hook as Ctrl-C would.
func (j *Java) Start(ctx context.Context, cls string, args ...string) (*Background, error) {
	flags := append([]string(nil), toolFlags...)
	flags = append(flags, "-Dlog4j2.configurationFile="+filepath.Join(j.Conf, "log4j2-tools.properties"))
	if j.CDS != "" && j.cdsReady() {
		flags = append(flags, "-XX:SharedArchiveFile="+j.CDS)
	}
	cmd := j.command(ctx, flags, cls, args...)
	b := &Background{cmd: cmd, cls: cls, stdout: &lockedBuffer{written: make(chan struct{}, 1)}, stderr: &lockedBuffer{},
		done: make(chan struct{}), start: time.Now()}
	cmd.Stdout = b.stdout
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", shortClass(cls), err)
	}
	go func() {
		_ = cmd.Wait()
		close(b.done)
	}()
	return b, nil
}

// Stdout and Stderr return what the tool printed so far.
func (b *Background) Stdout() string { return b.stdout.String() }
func (b *Background) Stderr() string { return b.stderr.String() }

// Written receives a token after the tool wrote to stdout (tokens do not
// pile up: one stands for any number of writes since the last receive).
func (b *Background) Written() <-chan struct{} { return b.stdout.written }

// Exited is closed when the process has ended.
func (b *Background) Exited() <-chan struct{} { return b.done }

// Stop sends SIGTERM and waits up to grace for the exit (then kills). It
// returns the exit code; a JVM ended by SIGTERM after its shutdown hooks
// exits 143.
func (b *Background) Stop(grace time.Duration) (Result, error) {
	b.once.Do(func() { _ = b.cmd.Process.Signal(syscall.SIGTERM) })
	var err error
	select {
	case <-b.done:
	case <-time.After(grace):
		_ = b.cmd.Process.Kill()
		<-b.done
		err = fmt.Errorf("%s did not exit within %v of SIGTERM; killed", shortClass(b.cls), grace)
	}
	res := Result{Stdout: b.Stdout(), Stderr: b.Stderr(), ExitCode: -1, Elapsed: time.Since(b.start)}
	if b.cmd.ProcessState != nil {
		res.ExitCode = b.cmd.ProcessState.ExitCode()
	}
	return res, err
}

// lockedBuffer collects a child's output; written (if set) gets a token
// after each write, so that a reader can wait for output instead of polling.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	if l.written != nil {
		select {
		case l.written <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
