package interop

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Target is a running broker a scenario talks to.
type Target struct {
	Name      string // "sharq" or "kafka"
	Bootstrap string // host:port of the PLAINTEXT listener
	BrokerID  int32  // node id, for kafka-configs --entity-name
	// APIs are the advertised API keys and max versions, read once the
	// broker is ready; scenarios needing an API it lacks are skipped.
	APIs map[int16]int16
}

// Process is a broker started by this package. Stop ends it.
type Process struct {
	Target
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid after done
	Log  string        // file with the broker's output
	once sync.Once
}

// Exited is closed when the broker process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Stop sends SIGTERM and waits up to grace for the process to exit, then
// kills it. It returns the exit code (-1 if killed by a signal).
func (p *Process) Stop(grace time.Duration) (int, error) {
	p.once.Do(func() { _ = p.cmd.Process.Signal(syscall.SIGTERM) })
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return -1, fmt.Errorf("%s did not exit within %v of SIGTERM; killed", p.Name, grace)
	}
	code := p.cmd.ProcessState.ExitCode()
	return code, nil
}

// LogTail returns the last n bytes of the broker's output, for failure
// messages.
func (p *Process) LogTail(n int) string { return tailFile(p.Log, n) }

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(read %s: %v)", path, err)
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func startProcess(cmd *exec.Cmd, name, logPath string) (*Process, error) {
	p := &Process{Target: Target{Name: name}, cmd: cmd, done: make(chan struct{}), Log: logPath}
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// freePort asks the kernel for an unused loopback port. The JVM broker has to
// be told its ports up front (the controller's goes into the formatted voter
// set), so there is a window in which another process may take it; StartKafka
// retries with new ports when the broker exits early.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// KafkaConfig is the reference broker's server.properties: single-node KRaft
// in combined mode on loopback, internal topics with one replica (their
// default of 3 cannot be met by one broker), no initial rebalance delay.
// Everything else stays at Kafka's defaults so that kafka-configs --all
// compares defaults with sharq's.
func KafkaConfig(dataDir string, port, controllerPort int) string {
	return fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%[3]s
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
`, port, controllerPort, dataDir)
}

// StartKafka formats dir and starts the Apache Kafka broker (kafka.Kafka)
// from j's jars, returning once it answers ApiVersions and Metadata with
// itself as a live broker. Share groups need no switch: a 4.4 format
// finalizes share.version=2 (checked by the features scenario).
func StartKafka(ctx context.Context, j *Java, dir string) (*Process, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		p, err := startKafkaOnce(ctx, j, filepath.Join(dir, fmt.Sprintf("try%d", attempt)))
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !errors.Is(err, errExitedEarly) || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

var errExitedEarly = errors.New("broker exited before it was ready")

// testKafkaJVMFlags are kafka-server-start.sh's flags with a smaller heap:
// a test broker needs far less than 1G.
var testKafkaJVMFlags = []string{
	"-Xmx512M", "-Xms256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
	"-Djava.awt.headless=true",
}

func startKafkaOnce(ctx context.Context, j *Java, dir string) (*Process, error) {
	node, err := FormatKafka(ctx, j, dir)
	if err != nil {
		return nil, err
	}
	p, err := node.Start(testKafkaJVMFlags)
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, p, 90*time.Second); err != nil {
		_, _ = p.Stop(10 * time.Second)
		return nil, fmt.Errorf("%w\n--- server.log tail ---\n%s", err, p.LogTail(4000))
	}
	return p, nil
}

// RandomClusterID makes a cluster id as kafka-storage random-uuid does (a
// random Kafka Uuid in URL-safe base64 without padding), without starting a
// JVM for it. Like Kafka it avoids a leading '-', which the tools' argument
// parsers would read as an option.
func RandomClusterID() (string, error) {
	var b [16]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("cluster id: %w", err)
		}
		id := base64.RawURLEncoding.EncodeToString(b[:])
		if id[0] != '-' && b != [16]byte{} {
			return id, nil
		}
	}
}

// waitReady polls the broker with real requests until it answers
// ApiVersions and lists a live broker and a controller in Metadata.
func waitReady(ctx context.Context, p *Process, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := Probe(ctx, p.Bootstrap); err == nil {
			return nil
		} else {
			last = err
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s: %w (%v)", p.Name, errExitedEarly, p.err)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %v: %w", p.Name, limit, last)
		case <-tick.C:
		}
	}
}

// Probe sends ApiVersions v3 and Metadata v12 to addr and checks that the
// broker lists itself alive with a known controller.
func Probe(ctx context.Context, addr string) error {
	_, err := probe(ctx, addr)
	return err
}

// APIKeys returns the API keys the broker at addr advertises, with their
// max versions.
func APIKeys(ctx context.Context, addr string) (map[int16]int16, error) {
	ranges, err := probe(ctx, addr)
	if err != nil {
		return nil, err
	}
	keys := make(map[int16]int16, len(ranges))
	for k, r := range ranges {
		keys[k] = r.Max
	}
	return keys, nil
}

// VersionRange is one API's advertised [Min, Max].
type VersionRange struct{ Min, Max int16 }

// APIVersionRanges returns the API keys the broker at addr advertises with
// their min and max versions (librdkafka, for one, looks at the minimums).
func APIVersionRanges(ctx context.Context, addr string) (map[int16]VersionRange, error) {
	return probe(ctx, addr)
}

func probe(ctx context.Context, addr string) (map[int16]VersionRange, error) {
	conn, f, avResp, err := dialAPIVersions(ctx, addr, "sharq-interop")
	if err != nil {
		return nil, err
	}
	defer conn.Close()

	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.Topics = []kmsg.MetadataRequestTopic{} // empty, not null: no topics
	mdResp := kmsg.NewPtrMetadataResponse()
	mdResp.Version = 12
	if err := roundTrip(conn, f, 2, md, mdResp); err != nil {
		return nil, fmt.Errorf("Metadata: %w", err)
	}
	if len(mdResp.Brokers) == 0 || mdResp.ControllerID < 0 {
		return nil, fmt.Errorf("Metadata: %d brokers, controller %d: not ready", len(mdResp.Brokers), mdResp.ControllerID)
	}
	keys := make(map[int16]VersionRange, len(avResp.ApiKeys))
	for _, k := range avResp.ApiKeys {
		keys[k.ApiKey] = VersionRange{Min: k.MinVersion, Max: k.MaxVersion}
	}
	return keys, nil
}

// dialAPIVersions connects to addr and sends one ApiVersions v3 (the
// first request of every Kafka client). The connection stays open for more
// requests; the caller closes it.
func dialAPIVersions(ctx context.Context, addr, client string) (net.Conn, *kmsg.RequestFormatter, *kmsg.ApiVersionsResponse, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	// A broker that accepts but never answers costs one attempt, not the
	// whole wait.
	dl := time.Now().Add(5 * time.Second)
	if cdl, ok := ctx.Deadline(); ok && cdl.Before(dl) {
		dl = cdl
	}
	_ = conn.SetDeadline(dl)
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID(client + "-probe"))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName = client
	av.ClientSoftwareVersion = "1"
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	if err := roundTrip(conn, f, 1, av, resp); err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("ApiVersions: %w", err)
	}
	if resp.ErrorCode != 0 {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("ApiVersions: error code %d", resp.ErrorCode)
	}
	return conn, f, resp, nil
}

func roundTrip(conn net.Conn, f *kmsg.RequestFormatter, corr int32, req kmsg.Request, resp kmsg.Response) error {
	if _, err := conn.Write(f.AppendRequest(nil, req, corr)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return fmt.Errorf("read size: %w", err)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < 4 || size > 16<<20 {
		return fmt.Errorf("bad response size %d", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(conn, body); err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		return fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	body = body[4:]
	// Response header v1 (flexible) ends with tagged fields, except for
	// ApiVersions whose response header is always v0.
	if resp.IsFlexible() && req.Key() != 18 {
		if len(body) < 1 || body[0] != 0 {
			return errors.New("unexpected tagged fields in response header")
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// BuildSharq compiles ./cmd/sharq of the module rooted at moduleDir into out.
func BuildSharq(ctx context.Context, moduleDir, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/sharq")
	cmd.Dir = moduleDir
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/sharq: %w\n%s", err, b)
	}
	return nil
}

// StartSharq runs the sharq binary on an ephemeral loopback port with a fresh
// data dir and waits for its "ready listeners=PLAINTEXT://host:port" line.
// extra arguments (--config FILE, more --override) follow the defaults.
func StartSharq(ctx context.Context, bin, dir string, limit time.Duration, extra ...string) (*Process, error) {
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", data, err)
	}
	logPath := filepath.Join(dir, "sharq.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", logPath, err)
	}
	// extra comes last: a later --override of the same key wins.
	cmd := exec.Command(bin, append([]string{
		"--override", "listeners=PLAINTEXT://127.0.0.1:0",
		"--override", "log.dirs=" + data}, extra...)...)
	cmd.Dir = dir
	cmd.Env = sharqEnv(os.Environ())
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("sharq stdout pipe: %w", err)
	}
	p, err := startProcess(cmd, "sharq", logPath)
	if err != nil {
		logf.Close()
		return nil, err
	}
	p.BrokerID = 1
	ready := make(chan string, 1)
	go func() {
		// Everything after the ready line is kept in the log file too; the
		// pipe must be drained or sharq would block writing to it.
		defer logf.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if !sent && strings.HasPrefix(line, "ready") {
				ready <- line
				sent = true
			}
		}
		_, _ = io.Copy(logf, stdout)
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case line := <-ready:
		addr, err := ParseReady(line)
		if err != nil {
			_, _ = p.Stop(10 * time.Second)
			return nil, err
		}
		p.Bootstrap = addr
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("sharq exited before ready (%v)\n--- sharq.log tail ---\n%s", p.err, p.LogTail(4000))
	case <-timer.C:
		_, _ = p.Stop(10 * time.Second)
		return nil, fmt.Errorf("sharq printed no ready line within %v\n--- sharq.log tail ---\n%s", limit, p.LogTail(4000))
	case <-ctx.Done():
		_, _ = p.Stop(10 * time.Second)
		return nil, ctx.Err()
	}
}

// sharqEnv drops the suite's own SHARQ_INTEROP_* variables: sharq reads
// SHARQ_* variables as configuration and rejects names it does not know.
func sharqEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SHARQ_INTEROP_") {
			out = append(out, kv)
		}
	}
	return out
}

// ErrBadReady is returned by ParseReady for a malformed ready line.
var ErrBadReady = errors.New("malformed ready line")

// ParseReady extracts the PLAINTEXT listener's host:port from sharq's
// "ready listeners=PLAINTEXT://127.0.0.1:41234[,NAME://h:p...] [k=v...]".
func ParseReady(line string) (string, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0] != "ready" {
		return "", fmt.Errorf("%w: %q", ErrBadReady, line)
	}
	for _, f := range fields[1:] {
		v, ok := strings.CutPrefix(f, "listeners=")
		if !ok {
			continue
		}
		for _, l := range strings.Split(v, ",") {
			name, hp, ok := strings.Cut(l, "://")
			if !ok || name != "PLAINTEXT" {
				continue
			}
			host, port, err := net.SplitHostPort(hp)
			if err != nil || host == "" {
				return "", fmt.Errorf("%w: listener %q", ErrBadReady, l)
			}
			if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 || strconv.Itoa(n) != port {
				return "", fmt.Errorf("%w: listener %q", ErrBadReady, l)
			}
			return hp, nil
		}
	}
	return "", fmt.Errorf("%w: no PLAINTEXT listener in %q", ErrBadReady, line)
}
