package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sharq/interop"
)

// broker is one of the systems under test. prepare makes a fresh data dir
// (formatted, for Kafka) that node.start can start on as often as needed.
type broker interface {
	name() string
	prepare(ctx context.Context, dir string) (node, error)
}

type node interface {
	// start launches the process and returns without waiting for it.
	start() (*interop.Process, error)
}

// stopGrace bounds a graceful stop; Kafka flushes and closes its logs.
const stopGrace = 60 * time.Second

// releaseBuild compiles a main package with the flags of a release build
// (the Dockerfile's): no cgo, no symbol table, no DWARF, no local paths.
// Without CGO_ENABLED=0 a machine with a C compiler builds a dynamically
// linked binary, which starts and maps memory differently from what ships.
// kfake gets the same flags as sharq so that neither binary carries weight
// the other does not.
func releaseBuild(ctx context.Context, moduleDir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// goBroker is sharq or kfake: a Go binary given its port and data dir on the
// command line.
type goBroker struct {
	nm   string
	bin  string
	args func(port int, data string) []string
}

func (b *goBroker) name() string { return b.nm }

func (b *goBroker) prepare(_ context.Context, dir string) (node, error) {
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", data, err)
	}
	port, err := interop.FreePort()
	if err != nil {
		return nil, err
	}
	return &goNode{b: b, dir: dir, data: data, port: port}, nil
}

type goNode struct {
	b    *goBroker
	dir  string
	data string
	port int
}

func (n *goNode) start() (*interop.Process, error) {
	logPath := filepath.Join(n.dir, n.b.nm+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(n.b.bin, n.b.args(n.port, n.data)...)
	cmd.Dir = n.dir
	cmd.Env = brokerEnv(os.Environ())
	cmd.Stdout = logf
	cmd.Stderr = logf
	return interop.StartCommand(cmd, n.b.nm, logPath, fmt.Sprintf("127.0.0.1:%d", n.port))
}

// brokerEnv drops SHARQ_* variables: sharq reads them as configuration, and
// the benchmark measures the defaults.
func brokerEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SHARQ_") {
			out = append(out, kv)
		}
	}
	return out
}

func newSharq(bin string) broker {
	return &goBroker{nm: "sharq", bin: bin, args: func(port int, data string) []string {
		return []string{
			"--override", fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d", port),
			"--override", "log.dirs=" + data,
		}
	}}
}

func newKfake(bin string) broker {
	return &goBroker{nm: "kfake", bin: bin, args: func(port int, data string) []string {
		return []string{"-port", fmt.Sprint(port), "-data-dir", data}
	}}
}

// kafkaBroker is Apache Kafka 4.4 in KRaft combined mode from the interop
// jars, with kafka-server-start.sh's default JVM flags (1 GB heap).
type kafkaBroker struct{ j *interop.Java }

func (b *kafkaBroker) name() string { return "kafka" }

func (b *kafkaBroker) prepare(ctx context.Context, dir string) (node, error) {
	n, err := interop.FormatKafka(ctx, b.j, dir)
	if err != nil {
		return nil, err
	}
	return kafkaNode{n}, nil
}

type kafkaNode struct{ n *interop.KafkaNode }

func (k kafkaNode) start() (*interop.Process, error) { return k.n.Start(interop.KafkaServerJVMFlags) }

// errJVM says why Kafka or its tools cannot run here.
var errJVM = errors.New("no JVM for Kafka")

// setupJava finds java and the Kafka 4.4 jars, fetching them with
// interop/fetch-jars.sh when mvn is there.
func setupJava(ctx context.Context, moduleDir, workDir string) (*interop.Java, error) {
	cache := interop.CacheDir()
	lib := interop.LibDir(cache, "kafka-"+interop.KafkaVersion)
	if _, err := exec.LookPath("java"); err != nil && os.Getenv("JAVA_HOME") == "" {
		return nil, fmt.Errorf("%w: %w", errJVM, interop.ErrNoJava)
	}
	if !interop.JarsComplete(lib) {
		if out, err := interop.FetchJars(ctx, filepath.Join(moduleDir, "interop", "fetch-jars.sh"), cache); err != nil {
			return nil, fmt.Errorf("%w: %w\n%s", errJVM, err, out)
		}
	}
	j, err := interop.NewJava(lib, filepath.Join(workDir, "jvm-conf"), filepath.Join(cache, "kafka-"+interop.KafkaVersion, "cds"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errJVM, err)
	}
	return j, nil
}

// findModule walks up from the working directory to sharq's go.mod.
func findModule() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "module sharq") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("sharq's go.mod not found above the working directory")
		}
		dir = parent
	}
}
