package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// This file exposes what the end-to-end benchmark (sharq/bench) needs beyond
// the test suite: a Kafka data dir that can be started more than once (the
// start-up benchmark restarts the broker on the same data), tools run with
// chosen JVM flags, and a probe that stops at ApiVersions.

// KafkaServerJVMFlags are the flags bin/kafka-server-start.sh gives the
// broker when no KAFKA_HEAP_OPTS / KAFKA_JVM_PERFORMANCE_OPTS are set: a 1 GB
// heap and kafka-run-class.sh's G1 tuning. The benchmark uses them so that
// Kafka runs as an operator would run it by default.
var KafkaServerJVMFlags = []string{
	"-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
	"-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
}

// KafkaToolJVMFlags are kafka-run-class.sh's defaults for a tool started by
// the perf-test scripts (kafka-producer-perf-test.sh sets -Xmx512M): unlike
// Run's flags they keep the C2 compiler, so a long perf run is not limited by
// an unoptimised client.
var KafkaToolJVMFlags = []string{
	"-Xmx512M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
	"-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
}

// RunWithFlags runs main class cls like Run, but with the given JVM flags in
// place of Run's short-lived-tool flags (no CDS archive either). Unified JVM
// logging still goes to stderr and log4j2 still uses the quiet tools config.
func (j *Java) RunWithFlags(ctx context.Context, jvmFlags []string, cls string, args ...string) (Result, error) {
	flags := append([]string(nil), jvmFlags...)
	flags = append(flags, "-Xlog:disable", "-Xlog:all=warning:stderr",
		"-Dlog4j2.configurationFile="+filepath.Join(j.Conf, "log4j2-tools.properties"))
	return j.exec(ctx, nil, flags, cls, args...)
}

// KafkaNode is a formatted single-node KRaft data dir with its ports, which
// can be started, stopped and started again on the same data.
type KafkaNode struct {
	Dir            string // holds server.properties, data/ and server.log
	Port           int    // PLAINTEXT listener
	ControllerPort int
	j              *Java
	props          string
}

// FormatKafka writes server.properties (KafkaConfig) for two free ports and
// formats dir/data with kafka-storage format --standalone.
func FormatKafka(ctx context.Context, j *Java, dir string) (*KafkaNode, error) {
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", data, err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cport, err := freePort()
	if err != nil {
		return nil, err
	}
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte(KafkaConfig(data, port, cport)), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", props, err)
	}
	clusterID, err := RandomClusterID()
	if err != nil {
		return nil, err
	}
	res, err := j.Run(ctx, nil, ClassStorage, "format", "--standalone", "-t", clusterID, "-c", props)
	if err != nil {
		return nil, fmt.Errorf("kafka-storage format: %w\n%s%s", err, res.Stdout, res.Stderr)
	}
	return &KafkaNode{Dir: dir, Port: port, ControllerPort: cport, j: j, props: props}, nil
}

// Start launches the broker with jvmFlags (nil: KafkaServerJVMFlags) and
// returns at once; the caller waits with WaitReady or its own probe. The log
// is appended to, so restarts keep the earlier output.
func (n *KafkaNode) Start(jvmFlags []string) (*Process, error) {
	if jvmFlags == nil {
		jvmFlags = KafkaServerJVMFlags
	}
	logPath := filepath.Join(n.Dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logf.Close() // the child has its own descriptor
	args := append([]string(nil), jvmFlags...)
	args = append(args, "-Xlog:disable", "-Xlog:all=warning:stderr",
		"-Dlog4j2.configurationFile="+filepath.Join(n.j.Conf, "log4j2-server.properties"),
		"-Dkafka.logs.dir="+n.Dir,
		"-cp", filepath.Join(n.j.Lib, "*"), ClassKafka, n.props)
	cmd := exec.Command(n.j.Bin, args...)
	cmd.Dir = n.Dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	p, err := startProcess(cmd, "kafka", logPath)
	if err != nil {
		return nil, err
	}
	p.Bootstrap = fmt.Sprintf("127.0.0.1:%d", n.Port)
	p.BrokerID = 1
	return p, nil
}

// StartCommand starts cmd as a broker process named name whose output goes
// to logPath (the caller sets cmd.Stdout/Stderr), with the same lifetime
// handling as the brokers this package starts (killed with the parent on
// Linux, Stop sends SIGTERM). bootstrap is the listener the caller chose.
func StartCommand(cmd *exec.Cmd, name, logPath, bootstrap string) (*Process, error) {
	p, err := startProcess(cmd, name, logPath)
	if err != nil {
		return nil, err
	}
	p.Bootstrap = bootstrap
	return p, nil
}

// WaitReady polls p with Probe (ApiVersions, then Metadata listing a live
// broker and a controller) until it answers, p exits, or limit passes.
func WaitReady(ctx context.Context, p *Process, limit time.Duration) error {
	return waitReady(ctx, p, limit)
}

// Pid is the broker's process id, for reading /proc/<pid>/status.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) { return freePort() }

// ProbeAPIVersions sends one ApiVersions v3 to addr and returns the
// advertised API keys with their max versions. Unlike Probe it does not ask
// for Metadata: the start-up benchmark stops its clock at the first answered
// ApiVersions.
func ProbeAPIVersions(ctx context.Context, addr string) (map[int16]int16, error) {
	conn, _, resp, err := dialAPIVersions(ctx, addr, "sharq-bench")
	if err != nil {
		return nil, err
	}
	conn.Close()
	keys := make(map[int16]int16, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		keys[k.ApiKey] = k.MaxVersion
	}
	return keys, nil
}
