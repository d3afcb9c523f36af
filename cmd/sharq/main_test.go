package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
)

// The test binary doubles as the sharq binary: with SHARQTEST_MAIN set it
// runs main with the arguments after "--", so subprocess tests need no
// separate build.
func TestMain(m *testing.M) {
	if os.Getenv("SHARQTEST_MAIN") == "1" {
		args := os.Args[1:]
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		os.Exit(run(args, os.Environ(), os.Stdout, os.Stderr, nil))
	}
	os.Exit(m.Run())
}

// proc is a sharq subprocess.
type proc struct {
	cmd  *exec.Cmd
	addr string
	// schemaRegistry is the first schema registry listener, when on.
	schemaRegistry string
	ready          time.Duration // process start to the ready line
	stderr         *lockedBuffer
	exited         chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startSharq runs sharq on a free port with dir as log.dirs and waits for
// its ready line.
func startSharq(t *testing.T, dir string, extra ...string) *proc {
	t.Helper()
	args := []string{"-test.run=^$", "--",
		"--override", "listeners=PLAINTEXT://127.0.0.1:0",
		"--override", "log.dirs=" + dir}
	args = append(args, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SHARQTEST_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.exited
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-lines:
		p.ready = time.Since(start)
		const prefix = "ready listeners=PLAINTEXT://"
		if !strings.HasPrefix(line, prefix) {
			t.Fatalf("first stdout line %q, want %q...", line, prefix)
		}
		fields := strings.Fields(strings.TrimPrefix(line, prefix))
		p.addr = fields[0]
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "schema.registry.listeners="); ok {
				p.schemaRegistry = strings.Split(v, ",")[0]
			}
		}
	case err := <-p.exited:
		t.Fatalf("sharq exited before ready: %v\n%s", err, p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("no ready line\n%s", p.stderr)
	}
	return p
}

func TestReadyLineAndSigterm(t *testing.T) {
	t.Parallel()
	p := startSharq(t, t.TempDir())
	t.Logf("process start to ready on an empty data dir: %v", p.ready)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit within 10s of SIGTERM")
	}
}

func TestBadConfigStopsStartup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--override", "no.such.key=1"}, "no.such.key"},
		{[]string{"--override", "num.partitions=zero"}, "num.partitions"},
		{[]string{"--override", "listeners=PLAINTEXT://127.0.0.1:notaport"}, "listeners"},
	}
	for _, c := range cases {
		var stderr strings.Builder
		code := run(c.args, nil, io.Discard, &stderr, nil)
		if code == 0 {
			t.Errorf("%v: exit 0", c.args)
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: message %q does not name %s", c.args, stderr.String(), c.want)
		}
	}
}

func TestHelpListsKeys(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if code := run([]string{"--help"}, nil, &out, io.Discard, nil); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, k := range []string{"listeners", "log.dirs", "log.segment.bytes", "num.partitions", "auto.create.topics.enable"} {
		if !strings.Contains(out.String(), k) {
			t.Errorf("--help does not list %s", k)
		}
	}
}

// TestKill9LosesNothingAcknowledged kills sharq with SIGKILL in the middle of
// an acks=all produce under log.flush.interval.messages=1 (fsync before every
// answer) and checks that every acknowledged record is there after restart.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	signalDuringProduce(t, syscall.SIGKILL, "--override", "log.flush.interval.messages=1")
}

// TestSigtermLosesNothingAcknowledged stops sharq with SIGTERM in the middle
// of a produce under the default flush policy (the OS flushes): the graceful
// shutdown answers or refuses what is in flight and flushes, so every
// acknowledged record is there after restart, and sharq exits 0.
func TestSigtermLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	signalDuringProduce(t, syscall.SIGTERM)
}

func signalDuringProduce(t *testing.T, sig syscall.Signal, extra ...string) {
	dir := t.TempDir()
	p := startSharq(t, dir, append([]string{"--override", "num.partitions=2"}, extra...)...)

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic("crash"),
		kgo.AllowAutoTopicCreation(), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordRetries(0), kgo.ProducerLinger(0), kgo.RetryTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan struct{})
	producing := make(chan struct{})
	go func() {
		defer close(producing)
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			default:
			}
			v := fmt.Sprintf("rec-%06d", i)
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err == nil {
					mu.Lock()
					acked[string(r.Value)] = true
					n := len(acked)
					mu.Unlock()
					if n == 2000 {
						close(killed)
					}
				}
			})
		}
	}()
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatalf("never reached 2000 acknowledged records\n%s", p.stderr)
	}
	p.cmd.Process.Signal(sig)
	exitErr := <-p.exited
	if sig == syscall.SIGTERM && exitErr != nil {
		t.Errorf("exit after SIGTERM during produce: %v\n%s", exitErr, p.stderr)
	}
	cancel()
	cl.Close()
	// The producing goroutine adds to wg: it must be done before Wait.
	<-producing
	wg.Wait()
	mu.Lock()
	want := len(acked)
	mu.Unlock()
	t.Logf("%d records acknowledged before %v", want, sig)

	b := brokertest.New(t, brokertest.WithDir(dir))
	got := map[string]bool{}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(b.Addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"crash": {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	// Read up to the end offsets as they are after recovery.
	end := endOffsets(t, consumer, "crash")
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	read := map[int32]int64{}
	for read[0] < end[0] || read[1] < end[1] {
		fs := consumer.PollFetches(pctx)
		if pctx.Err() != nil {
			t.Fatalf("reading back: %v (read %v of %v)", pctx.Err(), read, end)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[string(r.Value)] = true
			read[r.Partition] = r.Offset + 1
		})
	}
	for v := range acked {
		if !got[v] {
			t.Fatalf("acknowledged record %s lost after %v (%d acknowledged, %d recovered)", v, sig, want, len(got))
		}
	}
	t.Logf("recovered %d records, all %d acknowledged ones among them", len(got), want)
}

func endOffsets(t *testing.T, cl *kgo.Client, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := map[int32]int64{}
	for _, p := range []int32{0, 1} {
		req := listOffsetsLatest(topic, p)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = resp.Topics[0].Partitions[0].Offset
	}
	return out
}

func listOffsetsLatest(topic string, partition int32) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = partition
	rp.Timestamp = -1
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestVersion(t *testing.T) {
	var out strings.Builder
	if code := run([]string{"--version"}, nil, &out, io.Discard, nil); code != 0 || !strings.HasPrefix(out.String(), "sharq ") || !strings.Contains(out.String(), "Kafka 4.4") {
		t.Errorf("exit %d, %q", code, out.String())
	}
}

// TestFailedBindLeavesNoDataDir: a start that cannot bind its port exits 1
// and takes away the data directory it had just created.
func TestFailedBindLeavesNoDataDir(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	var stderr strings.Builder
	code := run([]string{"--override", "listeners=PLAINTEXT://" + ln.Addr().String(), "--override", "log.dirs=" + dir}, nil, io.Discard, &stderr, nil)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("data dir left behind after a failed bind: %v\n%s", err, stderr.String())
	}
}
