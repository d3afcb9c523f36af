package docker

// The drop-in tests: sharq's image, built offline with build.sh, under each
// stock Testcontainers module unchanged (Java's KafkaContainer and
// ConfluentKafkaContainer, testcontainers-go's kafka module,
// testcontainers-python's KafkaContainer in its default and KRaft modes,
// @testcontainers/kafka in KRaft and ZooKeeper mode) and under a compose
// file written for apache/kafka. Each produces and consumes with a consumer
// group and a share group from the host, through the mapped port, and from
// a second container on the module's Docker network, through the module's
// BROKER listener.
//
// Module programs (tc/<lang>) own their container, as a user's test would.
// They speak a line protocol with this test; stdout lines starting with
// "SHARQTC " are requests or reports, the rest is logged on failure:
//
//	SHARQTC timing start-ms=N first-record-ms=M
//	        the module's start call took N ms; the first record was
//	        acknowledged M ms after the start call began
//	SHARQTC check network NETWORK BOOTSTRAP NAME
//	        run the client check (tc/go check.go) in a container made from
//	        the sharq image on NETWORK against BOOTSTRAP; answer "ok" (or
//	        the failure) on the program's stdin
//	SHARQTC check host BOOTSTRAP NAME
//	        the same from the host (Node: kafkajs has no share consumer)
//	SHARQTC done
//	        the program stopped its container and is about to exit 0

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// requireEnv makes a missing engine or toolchain a failure (.ci/test sets
// it in CI).
const requireEnv = "SHARQTEST_REQUIRE_DOCKER"

// maxImageBytes is the image budget, the same bound as cmd/sharq's
// dockerfile_test.go (which says why it is 24.5 MB, not #28's 24 MB goal).
const maxImageBytes = 24_500_000

var (
	tmpRoot  string // removed by TestMain
	fixtures struct {
		sync.Mutex
		image, tcBin string
		images       []string // tags to remove
		err          map[string]error
	}
)

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "sharq-docker-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	// A module program that failed or was killed may leave its container
	// behind (no reaper here): remove what runs the image under test.
	for _, tag := range fixtures.images {
		if out, err := exec.Command("docker", "ps", "-aq", "--filter", "ancestor="+tag).Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			exec.Command("docker", append([]string{"rm", "-f", "-v"}, strings.Fields(string(out))...)...).Run()
		}
	}
	for _, tag := range fixtures.images {
		exec.Command("docker", "rmi", "-f", tag).Run()
	}
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// unavailable skips the test (or fails it, when requireEnv is set).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s (%s=1: the Docker tests are required)", msg, requireEnv)
	}
	t.Skip(msg)
}

// needDocker skips or fails the test without a Docker engine.
func needDocker(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		unavailable(t, "no Docker engine to run sharq's image: no docker on PATH (.ci/test installs docker.io and starts dockerd)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info").CombinedOutput(); err != nil {
		unavailable(t, "no Docker engine to run sharq's image: docker info failed (no daemon? .ci/test starts dockerd): %s", lastLine(string(out)))
	}
}

func needTool(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "%s not found: this module's check needs it", tool)
		}
	}
}

// fixture runs build once per test binary; a failure is remembered.
func fixture(t *testing.T, name string, field *string, build func() (string, error)) string {
	t.Helper()
	fixtures.Lock()
	defer fixtures.Unlock()
	if fixtures.err == nil {
		fixtures.err = map[string]error{}
	}
	if err, failed := fixtures.err[name]; failed {
		t.Fatalf("%s: %v (failed before)", name, err)
	}
	if *field == "" {
		v, err := build()
		if err != nil {
			fixtures.err[name] = err
			t.Fatalf("%s: %v", name, err)
		}
		*field = v
	}
	return *field
}

// image is sharq's image built by build.sh, tagged NAME:8.0.0 and
// NAME:7.9.0 (Node's module reads the tag as a Confluent Platform version:
// 8.0.0 and later KRaft, earlier ZooKeeper; Python's with_kraft wants 7.0.0
// or later).
func image(t *testing.T) string {
	t.Helper()
	needDocker(t)
	return fixture(t, "build.sh", &fixtures.image, func() (string, error) {
		repo := "sharq-test-" + randomHex(4)
		tag := repo + ":8.0.0"
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		out, err := exec.CommandContext(ctx, "bash", "build.sh", tag).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("bash docker/build.sh %s: %v\n%s", tag, err, out)
		}
		fixtures.images = append(fixtures.images, tag, repo+":7.9.0")
		if out, err := exec.Command("docker", "tag", tag, repo+":7.9.0").CombinedOutput(); err != nil {
			return "", fmt.Errorf("docker tag: %v\n%s", err, out)
		}
		t.Logf("built %s with docker/build.sh in %v", tag, time.Since(start).Round(time.Millisecond))
		return tag, nil
	})
}

// tcBin is tc/go built static, for the host and for containers.
func tcBin(t *testing.T) string {
	t.Helper()
	return fixture(t, "tc/go", &fixtures.tcBin, func() (string, error) {
		bin := filepath.Join(tmpRoot, "tc")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, ".")
		cmd.Dir = "tc/go"
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build in docker/tc/go: %v\n%s", err, out)
		}
		return bin, nil
	})
}

// setup runs tc/setup.sh for a language and returns what it printed.
func setup(t *testing.T, what string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", "tc/setup.sh", what)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		unavailable(t, "tc/setup.sh %s: %v\n%s", what, err, stderr.String())
	}
	return strings.TrimSpace(lastLine(string(out)))
}

// moduleEnv is the environment the module programs run in: Testcontainers'
// reaper image cannot be pulled here, and this machine may itself be a
// container, where the libraries would reach the engine's mapped ports
// through the default gateway instead of loopback.
func moduleEnv() []string {
	env := append(os.Environ(), "TESTCONTAINERS_RYUK_DISABLED=true", "KAFKAJS_NO_PARTITIONER_WARNING=1")
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		env = append(env, "TESTCONTAINERS_HOST_OVERRIDE=localhost")
	}
	return env
}

// runModule runs a module program to its end, answering its requests.
func runModule(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	img := image(t)
	bin := tcBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	full := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	full.Dir, full.Env = cmd.Dir, append(moduleEnv(), cmd.Env...)
	var logs lockedBuffer
	full.Stderr = &logs
	stdout, err := full.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := full.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := full.Start(); err != nil {
		t.Fatal(err)
	}
	done, timing := false, ""
	var failures []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		req, ok := strings.CutPrefix(line, "SHARQTC ")
		if !ok {
			fmt.Fprintln(&logs, line)
			continue
		}
		f := strings.Fields(req)
		switch {
		case len(f) > 0 && f[0] == "timing":
			timing = strings.Join(f[1:], " ")
		case len(f) == 1 && f[0] == "done":
			done = true
		case len(f) == 5 && f[0] == "check" && f[1] == "network":
			answer(t, stdin, req, clientInNetwork(ctx, img, bin, f[2], f[3], f[4], 20), &failures)
		case len(f) == 4 && f[0] == "check" && f[1] == "host":
			answer(t, stdin, req, clientOnHost(ctx, bin, f[2], f[3], 20), &failures)
		default:
			failures = append(failures, "unknown request: "+line)
			fmt.Fprintln(stdin, "fail: unknown request")
		}
	}
	stdin.Close()
	err = full.Wait()
	took := time.Since(start).Round(time.Millisecond)
	if err != nil || !done || timing == "" || len(failures) > 0 {
		t.Fatalf("%s: exit %v, done %v, timing %q, failures %q (after %v)\n%s", strings.Join(cmd.Args, " "), err, done, timing, failures, took, logs.tail(200))
	}
	t.Logf("passed in %v (%s)", took, timing)
}

func answer(t *testing.T, stdin io.Writer, req string, err error, failures *[]string) {
	t.Helper()
	if err != nil {
		*failures = append(*failures, req+": "+err.Error())
		fmt.Fprintln(stdin, "fail:", strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	t.Logf("%s: ok", req)
	fmt.Fprintln(stdin, "ok")
}

// clientInNetwork runs the client check in a container made from the sharq
// image, with the static tc binary copied in, on a module's network.
func clientInNetwork(ctx context.Context, img, bin, network, bootstrap, name string, n int) error {
	out, err := exec.CommandContext(ctx, "docker", "create", "--network", network, "--entrypoint", "/tmp/tc",
		img, "client", bootstrap, name, strconv.Itoa(n)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker create: %v: %s", err, out)
	}
	id := lastLine(string(out))
	defer exec.Command("docker", "rm", "-f", id).Run()
	if out, err := exec.CommandContext(ctx, "docker", "cp", bin, id+":/tmp/tc").CombinedOutput(); err != nil {
		return fmt.Errorf("docker cp: %v: %s", err, out)
	}
	if out, err := exec.CommandContext(ctx, "docker", "start", "-a", id).CombinedOutput(); err != nil {
		return fmt.Errorf("client in network %s against %s: %v: %s", network, bootstrap, err, out)
	}
	return nil
}

func clientOnHost(ctx context.Context, bin, bootstrap, name string, n int) error {
	if out, err := exec.CommandContext(ctx, bin, "client", bootstrap, name, strconv.Itoa(n)).CombinedOutput(); err != nil {
		return fmt.Errorf("client on the host against %s: %v: %s", bootstrap, err, out)
	}
	return nil
}

func TestGoModule(t *testing.T) {
	bin := tcBin(t)
	runModule(t, exec.Command(bin, "module", image(t)))
}

func TestJavaModules(t *testing.T) {
	needTool(t, "java", "javac", "mvn")
	img := image(t)
	lib := setup(t, "java")
	classes := filepath.Join(tmpRoot, "java")
	javac := "javac"
	if out, err := exec.Command(javac, "-d", classes, "-cp", filepath.Join(lib, "*"), "tc/java/TcKafka.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	for _, which := range []string{"apache", "confluent"} {
		t.Run(which, func(t *testing.T) {
			runModule(t, exec.Command("java", "-Dorg.slf4j.simpleLogger.log.org.apache.kafka=warn",
				"-cp", classes+string(os.PathListSeparator)+filepath.Join(lib, "*"), "TcKafka", which, img))
		})
	}
}

func TestPythonModule(t *testing.T) {
	needTool(t, "python3")
	img := image(t)
	py := setup(t, "python")
	for _, mode := range []string{"default", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			runModule(t, exec.Command(py, "tc/python/tc_kafka.py", mode, img))
		})
	}
}

func TestNodeModule(t *testing.T) {
	needTool(t, "npm", "python3")
	img := image(t)
	dir := setup(t, "node")
	script, err := filepath.Abs("tc/node/tc_kafka.js")
	if err != nil {
		t.Fatal(err)
	}
	repo, _, _ := strings.Cut(img, ":")
	for _, tc := range []struct{ mode, tag string }{{"kraft", "8.0.0"}, {"zookeeper", "7.9.0"}} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, "bin", "node"), script, repo+":"+tc.tag)
			cmd.Env = []string{"NODE_PATH=" + filepath.Join(dir, "node_modules")}
			runModule(t, cmd)
		})
	}
}

// TestCompose: the compose file written for apache/kafka, with only the
// image changed, from the host and from a container on the compose network
// through its PLAINTEXT listener (broker:19092).
func TestCompose(t *testing.T) {
	img := image(t)
	bin := tcBin(t)
	compose := composeCommand(t)
	port := freePort(t)
	project := "sharqtest" + randomHex(4)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runCtx := func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, compose[0], append(compose[1:], append([]string{"-p", project, "-f", "compose/docker-compose.yml"}, args...)...)...)
		cmd.Env = append(os.Environ(), "IMAGE="+img, "HOST_PORT="+strconv.Itoa(port))
		return cmd.CombinedOutput()
	}
	run := func(args ...string) ([]byte, error) { return runCtx(ctx, args...) }
	start := time.Now()
	// Down even when up fails half way; not with ctx, which is over by the
	// time cleanups run.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := runCtx(ctx, "down", "-v", "--timeout", "0"); err != nil {
			t.Errorf("%s down: %v\n%s", strings.Join(compose, " "), err, out)
		}
	})
	if out, err := run("up", "-d"); err != nil {
		t.Fatalf("%s up: %v\n%s", strings.Join(compose, " "), err, out)
	}
	id, err := run("ps", "-q", "broker")
	if err != nil {
		t.Fatalf("ps: %v\n%s", err, id)
	}
	if err := waitReady(ctx, lastLine(string(id))); err != nil {
		out, _ := run("logs")
		t.Fatalf("%v\n%s", err, out)
	}
	ready := time.Since(start)
	if err := clientOnHost(ctx, bin, "localhost:"+strconv.Itoa(port), "compose-host", 20); err != nil {
		t.Fatal(err)
	}
	first := time.Since(start)
	if err := clientInNetwork(ctx, img, bin, project+"_default", "broker:19092", "compose-network", 20); err != nil {
		out, _ := run("logs")
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s: up to ready %v, to the host check's end %v", strings.Join(compose, " "), ready.Round(time.Millisecond), first.Round(time.Millisecond))
}

// composeCommand is `docker compose` where the plugin is installed, else
// docker-compose.
func composeCommand(t *testing.T) []string {
	t.Helper()
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	unavailable(t, "neither docker compose nor docker-compose is installed (.ci/test installs docker-compose)")
	return nil
}

// waitReady follows a container's logs until sharq's ready line.
func waitReady(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", "logs", "-f", id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()
	defer cancel()
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "ready listeners=") {
			return nil
		}
	}
	return fmt.Errorf("container %s: no ready line", id)
}

// TestImage: `docker run` with no arguments as today (the PLAINTEXT and
// DOCKER listeners, Kafka's readiness lines), the size budget, the time to
// ready and the memory sharq holds idle and after a workload, the Node
// module's in-container port checks, and the entry point passing sharq's
// own arguments through.
func TestImage(t *testing.T) {
	img := image(t)
	bin := tcBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	size, err := strconv.ParseInt(dockerOut(t, ctx, "image", "inspect", "-f", "{{.Size}}", img), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %d bytes (%.1f MB)", size, float64(size)/1e6)
	if size > maxImageBytes {
		t.Errorf("image is %d bytes, over %d", size, maxImageBytes)
	}

	network := "sharq-test-" + randomHex(4)
	dockerOut(t, ctx, "network", "create", network)
	t.Cleanup(func() { exec.Command("docker", "network", "rm", network).Run() })
	// Time to ready, three runs, medians: from `docker run` (the engine's
	// work included) and from the container's start (StartedAt) to the
	// ready line's log timestamp.
	var runTimes, startTimes []time.Duration
	var id string
	for i := 0; i < 3; i++ {
		start := time.Now()
		id = dockerOut(t, ctx, "run", "-d", "--network", network, "--network-alias", "sharq", "-p", "127.0.0.1::9092", "-p", "127.0.0.1::8081", img)
		t.Cleanup(func() { exec.Command("docker", "rm", "-f", "-v", id).Run() })
		if err := waitReady(ctx, id); err != nil {
			t.Fatalf("%v\n%s", err, dockerLogs(id))
		}
		runTimes = append(runTimes, time.Since(start))
		startTimes = append(startTimes, startToReady(t, ctx, id))
		if i < 2 {
			exec.Command("docker", "rm", "-f", "-v", id).Run()
		}
	}
	slices.Sort(runTimes)
	slices.Sort(startTimes)
	t.Logf("to the ready line: from docker run median %v %v, from the container's start median %v %v",
		runTimes[1].Round(time.Millisecond), runTimes, startTimes[1].Round(time.Millisecond), startTimes)
	logs := dockerLogs(id)
	for _, want := range []string{"ready listeners=PLAINTEXT://localhost:9092,DOCKER://sharq:29092", "schema.registry.listeners=http://",
		"Transitioning from RECOVERY to RUNNING", "Kafka Server started", "[KafkaServer id=1] started"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("the image's own configuration warns:\n%s", logs)
	}

	// The schema registry is on by default: a schema registered and read
	// back through the mapped 8081 port.
	registryRoundTrip(t, ctx, dockerOut(t, ctx, "port", id, "8081/tcp"))

	// Node's InternalPortCheck, its three commands verbatim: one must
	// succeed once the port is bound.
	if !nodePortBound(ctx, id, 9092) {
		t.Error("none of @testcontainers' in-container port checks sees port 9092 bound")
	}

	// Memory: idle, after the modules' check (20 records) and after 2000
	// records, each produced and read by a consumer group and a share
	// group, through the DOCKER listener from the network.
	idle := rss(t, ctx, id)
	if err := clientInNetwork(ctx, img, bin, network, "sharq:29092", "image-network-20", 20); err != nil {
		t.Fatal(err)
	}
	small := rss(t, ctx, id)
	if err := clientInNetwork(ctx, img, bin, network, "sharq:29092", "image-network-2000", 2000); err != nil {
		t.Fatal(err)
	}
	large := rss(t, ctx, id)
	t.Logf("sharq RSS in the container: idle %s; after the 20-record check %s; after 2000 more records %s", idle, small, large)

	// The entry point: sharq's flags and subcommands reach sharq.
	if out := dockerOut(t, ctx, "run", "--rm", img, "--check-config"); !strings.Contains(out, "configuration ok") {
		t.Errorf("--check-config: %q", out)
	}
	if out := dockerOut(t, ctx, "run", "--rm", img, "version"); !strings.HasPrefix(out, "sharq ") {
		t.Errorf("version: %q", out)
	}
	if out := dockerOut(t, ctx, "run", "--rm", img, "sharq", "--check-config"); !strings.Contains(out, "configuration ok") {
		t.Errorf("sharq --check-config: %q", out)
	}
}

// startToReady is the time from the container's start to sharq's ready
// line, both as the engine stamped them.
func startToReady(t *testing.T, ctx context.Context, id string) time.Duration {
	t.Helper()
	started, err := time.Parse(time.RFC3339Nano, dockerOut(t, ctx, "inspect", "-f", "{{.State.StartedAt}}", id))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "docker", "logs", "-t", id).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		stamp, rest, _ := strings.Cut(line, " ")
		if strings.HasPrefix(rest, "ready listeners=") {
			ready, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				t.Fatal(err)
			}
			return ready.Sub(started)
		}
	}
	t.Fatalf("no ready line in\n%s", out)
	return 0
}

// nodePortBound runs @testcontainers' InternalPortCheck commands.
func nodePortBound(ctx context.Context, id string, port int) bool {
	hex := fmt.Sprintf("%04x", port)
	for _, cmd := range [][]string{
		{"/bin/sh", "-c", "cat /proc/net/tcp* | awk '{print $2}' | grep -i :" + hex},
		{"/bin/sh", "-c", fmt.Sprintf("nc -vz -w 1 localhost %d", port)},
		{"/bin/bash", "-c", fmt.Sprintf("</dev/tcp/localhost/%d", port)},
	} {
		if exec.CommandContext(ctx, "docker", append([]string{"exec", id}, cmd...)...).Run() == nil {
			return true
		}
	}
	return false
}

// rss is the resident set of the container's sharq process, read from the
// host's /proc: the total, and its anonymous part (heap, stacks) beside the
// file-backed one (the binary's pages).
func rss(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	out := dockerOut(t, ctx, "top", id, "-eo", "pid,comm")
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) != 2 || f[1] != "sharq" {
			continue
		}
		status, err := os.ReadFile("/proc/" + f[0] + "/status")
		if err != nil {
			t.Fatal(err)
		}
		mib := func(field string) float64 {
			m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB`).FindSubmatch(status)
			if m == nil {
				t.Fatalf("no %s in /proc/%s/status", field, f[0])
			}
			kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
			return float64(kb) / 1024
		}
		return fmt.Sprintf("%.1f MiB (anonymous %.1f, file %.1f)", mib("VmRSS"), mib("RssAnon"), mib("RssFile"))
	}
	t.Fatalf("no sharq process in the container:\n%s", out)
	return ""
}

// TestShims: the shell userland and the shims the modules' scripts use,
// in a container as its user: bash, hostname -i, sed -i on the start
// scripts, kafka-storage, zookeeper-server-start holding its port.
func TestShims(t *testing.T) {
	img := image(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := `set -e
bash -c 'source /etc/confluent/docker/bash-config; [[ -n "$(hostname -i)" ]] && echo bash-ok'
sed -i '/KAFKA_ZOOKEEPER_CONNECT/d' /etc/confluent/docker/configure
echo 'kafka-storage format --ignore-formatted -t "$(kafka-storage random-uuid)" -c /etc/kafka/kafka.properties' >> /etc/confluent/docker/configure
echo '' > /etc/confluent/docker/ensure
/etc/confluent/docker/configure && /etc/confluent/docker/ensure && echo scripts-ok
id=$(kafka-storage random-uuid); echo "uuid=$id"
kafka-storage nope 2>/dev/null && echo "kafka-storage accepted an unknown command"
printf 'clientPort=2199\n' > zookeeper.properties
zookeeper-server-start zookeeper.properties &
while ! cat /proc/net/tcp* | awk '{print $2}' | grep -qi :0897; do sleep 0.1; done
echo zookeeper-port-ok
`
	out := dockerOut(t, ctx, "run", "--rm", "--entrypoint", "sh", img, "-c", script)
	for _, want := range []string{"bash-ok", "scripts-ok", "zookeeper-port-ok", "nothing to do, sharq initialises", "sharq needs no ZooKeeper; port 2199"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if m := regexp.MustCompile(`uuid=(\S*)`).FindStringSubmatch(out); m == nil || !regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{21}$`).MatchString(m[1]) {
		t.Errorf("kafka-storage random-uuid printed %q", m)
	}
	if strings.Contains(out, "accepted an unknown") {
		t.Error(out)
	}
}

func dockerOut(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func dockerLogs(id string) string {
	out, _ := exec.Command("docker", "logs", id).CombinedOutput()
	return string(out)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// tail is the last n lines.
func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := strings.Split(strings.TrimRight(l.b.String(), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// registryRoundTrip registers an Avro schema with the registry at addr
// (host:port, as `docker port` prints it) and fetches it back by id.
func registryRoundTrip(t *testing.T, ctx context.Context, addr string) {
	t.Helper()
	if i := strings.IndexByte(addr, '\n'); i >= 0 {
		addr = addr[:i] // one line per address family
	}
	base := "http://" + strings.TrimSpace(addr)
	const schema = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"}]}`
	body, _ := json.Marshal(map[string]string{"schema": schema})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/subjects/docker-user-value/versions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("register through %s: %v", base, err)
	}
	var reg struct{ ID int }
	err = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || reg.ID <= 0 {
		t.Fatalf("register through %s: status %d, id %d, %v", base, resp.StatusCode, reg.ID, err)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/schemas/ids/%d", base, reg.ID), nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("get schema %d: %v", reg.ID, err)
	}
	var got struct{ Schema string }
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || got.Schema != schema {
		t.Fatalf("get schema %d: status %d, %q, %v", reg.ID, resp.StatusCode, got.Schema, err)
	}
	t.Logf("schema registry through %s: registered and fetched id %d", base, reg.ID)
}
