//go:build soak

package interop

// The reliability soak: a real sharq process under the faults
// docs/durability.md's "Reliability" section makes promises about. Not in CI's default path
// (build tag soak); bounded by its phase sizes, a few minutes in all:
//
//	go test -tags soak ./interop -run TestSoak -v -timeout 20m
//
// SHARQ_SOAK_CYCLES (kill -9 cycles, default 20), SHARQ_SOAK_FUZZ (hostile
// requests, default 20000), SHARQ_SOAK_CONNS (connections held, default
// 2000) resize it. Every figure is printed on a "SOAK" line.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func soakInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func soakf(t *testing.T, format string, args ...any) {
	t.Helper()
	line := "SOAK " + fmt.Sprintf(format, args...)
	t.Log(line)
	fmt.Println(line)
}

// rssMiB reads a process's resident set size.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return -1
}

func TestSoak(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 18*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "sharq")
	if err := BuildSharq(ctx, "..", bin); err != nil {
		t.Fatal(err)
	}
	t.Run("kill9", func(t *testing.T) { soakKill9(ctx, t, bin) })
	t.Run("hostile requests", func(t *testing.T) { soakFuzz(ctx, t, bin) })
	t.Run("connections", func(t *testing.T) { soakConns(ctx, t, bin) })
	t.Run("oversized frames", func(t *testing.T) { soakOversized(ctx, t, bin) })
}

// soakKill9: producers with acks=all against sharq in always-sync mode
// (log.flush.interval.messages=1: nothing is acknowledged before it is
// fsynced), the process killed with SIGKILL at a random moment, again and
// again; then every acknowledged record must be readable.
func soakKill9(ctx context.Context, t *testing.T, bin string) {
	cycles := soakInt("SHARQ_SOAK_CYCLES", 20)
	dir := t.TempDir()
	overrides := []string{"log.flush.interval.messages=1", "num.partitions=3"}
	const topic = "soak"
	var (
		mu      sync.Mutex
		acked   = map[string]bool{}
		seq     int
		readyMs []float64
	)
	for c := 0; c < cycles; c++ {
		start := time.Now()
		p, err := StartSharq(ctx, bin, dir, 60*time.Second, overrideArgs(overrides)...)
		if err != nil {
			t.Fatalf("cycle %d: restart after kill -9: %v", c, err)
		}
		readyMs = append(readyMs, float64(time.Since(start).Milliseconds()))
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap), kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.AllowAutoTopicCreation(), kgo.MaxBufferedRecords(5000),
			kgo.RecordDeliveryTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		// Cancelling pctx unblocks a Produce waiting for buffer space
		// once the broker is dead, and fails what is still buffered.
		pctx, stopProducing := context.WithCancel(ctx)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				seq++
				v := fmt.Sprintf("c%03d-%09d", c, seq)
				mu.Unlock()
				cl.Produce(pctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
					if err == nil {
						mu.Lock()
						acked[string(r.Value)] = true
						mu.Unlock()
					}
				})
			}
		}()
		// The load runs for a random while; the kill lands wherever the
		// producer is.
		time.Sleep(time.Duration(300+rand.IntN(1200)) * time.Millisecond)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-p.done
		close(stop)
		stopProducing()
		wg.Wait()
		cl.Close() // outstanding records fail: they were never acknowledged
	}
	p, err := StartSharq(ctx, bin, dir, 60*time.Second, overrideArgs(overrides)...)
	if err != nil {
		t.Fatalf("final restart: %v", err)
	}
	defer p.Stop(30 * time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[string]map[int32]kgo.Offset{topic: {}}
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		offsets[topic][o.Partition] = kgo.NewOffset().AtStart()
		want += o.Offset
	})
	cons, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap), kgo.ConsumePartitions(offsets))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	found := map[string]int{}
	var read int64
	deadline := time.Now().Add(2 * time.Minute)
	for read < want && time.Now().Before(deadline) {
		fs := cons.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			found[string(r.Value)]++
			read++
		})
	}
	lost, dups := 0, 0
	for v := range acked {
		if found[v] == 0 {
			lost++
		}
	}
	for _, n := range found {
		if n > 1 {
			dups += n - 1
		}
	}
	soakf(t, "kill9 cycles=%d produced=%d acked=%d stored=%d lost=%d duplicates=%d restart_to_ready_ms_median=%.0f max=%.0f",
		cycles, seq, len(acked), read, lost, dups, median(readyMs), maxOf(readyMs))
	if lost > 0 {
		t.Errorf("%d acknowledged records lost after kill -9", lost)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// soakFuzz sends requests of every advertised API and version with random
// field values (and some frames of random bytes) and counts what the
// broker did: answered, closed the connection (Kafka's answer to a request
// it cannot decode), hung, crashed, or recovered a panic.
func soakFuzz(ctx context.Context, t *testing.T, bin string) {
	n := soakInt("SHARQ_SOAK_FUZZ", 20000)
	dir := t.TempDir()
	p, err := StartSharq(ctx, bin, dir, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(30 * time.Second)
	ranges, err := APIVersionRanges(ctx, p.Bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int16
	for k := range ranges {
		keys = append(keys, k)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var conn net.Conn
	dialed := 0
	redial := func() {
		if conn != nil {
			conn.Close()
		}
		conn, err = net.Dial("tcp", p.Bootstrap)
		if err != nil {
			t.Fatalf("dial after %d connections: %v", dialed, err)
		}
		dialed++
	}
	redial()
	defer func() { conn.Close() }()
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("soak"))
	var answered, closed, hung, rawFrames int
	var hungAPIs []string
	start := time.Now()
	for i := 0; i < n; i++ {
		var frame []byte
		var what string
		if i%10 == 9 {
			// Random bytes after a sane header of a random API.
			k := keys[rng.IntN(len(keys))]
			body := make([]byte, rng.IntN(200))
			for j := range body {
				body[j] = byte(rng.Uint32())
			}
			frame = binary.BigEndian.AppendUint32(nil, uint32(len(body)+10))
			frame = binary.BigEndian.AppendUint16(frame, uint16(k))
			frame = binary.BigEndian.AppendUint16(frame, uint16(ranges[k].Max))
			frame = binary.BigEndian.AppendUint32(frame, uint32(i))
			frame = binary.BigEndian.AppendUint16(frame, 0xffff) // null client id
			frame = append(frame, body...)
			rawFrames++
			what = fmt.Sprintf("random bytes as %s v%d", kmsg.NameForKey(k), ranges[k].Max)
		} else {
			k := keys[rng.IntN(len(keys))]
			r := ranges[k]
			req := kmsg.RequestForKey(k)
			req.SetVersion(r.Min + int16(rng.IntN(int(r.Max-r.Min)+1)))
			fillRandom(rng, reflect.ValueOf(req).Elem(), k, 0)
			if pr, ok := req.(*kmsg.ProduceRequest); ok && pr.Acks == 0 {
				pr.Acks = 1 // acks=0 is answered with silence, by Kafka too
			}
			frame = formatter.AppendRequest(nil, req, int32(i))
			what = fmt.Sprintf("%s v%d", kmsg.NameForKey(k), req.GetVersion())
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(frame); err != nil {
			closed++
			redial()
			continue
		}
		if _, err := readResponse(conn); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				hung++
				hungAPIs = append(hungAPIs, what)
			} else {
				closed++
			}
			redial()
			continue
		}
		answered++
		select {
		case <-p.done:
			t.Fatalf("sharq exited after %d hostile requests", i)
		default:
		}
	}
	crashed := 0
	select {
	case <-p.done:
		crashed = 1
	default:
	}
	logText := readAll(p.Log)
	panics := strings.Count(logText, "panic serving connection")
	where := map[string]int{}
	for _, line := range strings.Split(logText, "\n") {
		if strings.Contains(line, "panic serving connection") {
			if _, v, ok := strings.Cut(line, "panic="); ok {
				msg, _, _ := strings.Cut(v, " stack=")
				if m := handlerFrame.FindString(v); m != "" {
					msg += " at " + m
				}
				where[msg]++
			}
		}
	}
	for w, c := range where {
		t.Logf("recovered panic x%d: %s", c, w)
	}
	soakf(t, "fuzz requests=%d random_frames=%d answered=%d closed=%d hung=%d crashes=%d recovered_panics=%d connections=%d in=%s",
		n, rawFrames, answered, closed, hung, crashed, panics, dialed, time.Since(start).Round(time.Second))
	if crashed > 0 || hung > 0 {
		t.Errorf("%d crashes, %d requests unanswered for 10 s: %v", crashed, hung, hungAPIs)
	}
	// A recovered panic is a bug too (issue 14 item 2), but it is h14a's to
	// fix; the soak reports the count.
	if pr := os.Getenv("SHARQ_SOAK_FAIL_ON_PANIC"); pr != "" && panics > 0 {
		t.Errorf("%d recovered panics", panics)
	}
}

// handlerFrame finds the broker handler file in a logged stack.
var handlerFrame = regexp.MustCompile(`broker/[0-9]{2}_[a-z_]+\.go:[0-9]+`)

func readAll(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// readResponse reads one response frame.
func readResponse(c net.Conn) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	_, err := io.ReadFull(c, b)
	return b, err
}

// fillRandom sets v's exported fields to random values: small numbers
// mostly, with the extremes now and then, short strings, short arrays.
// Partition and replica counts of CreateTopics and CreatePartitions stay
// small: a huge count is a resource request (issue 14 item 5), not the
// decoder input this phase is about.
func fillRandom(rng *rand.Rand, v reflect.Value, key int16, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			name := v.Type().Field(i).Name
			if !f.CanSet() || name == "Version" || name == "UnknownTags" {
				continue
			}
			if (key == 19 || key == 37) && (name == "NumPartitions" || name == "Count" || name == "ReplicationFactor") {
				f.SetInt(int64(rng.IntN(8)) - 1)
				continue
			}
			// Waits are the client's to ask for (a long-poll of MaxInt32 ms
			// is a long-poll, not a hang): keep them short.
			if strings.Contains(name, "Timeout") || strings.Contains(name, "MaxWait") || strings.Contains(name, "Millis") {
				if f.CanInt() {
					f.SetInt(int64(rng.IntN(100)))
					continue
				}
			}
			fillRandom(rng, f, key, depth+1)
		}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		switch rng.IntN(20) {
		case 0:
			v.SetInt(-1 << (bits - 1))
		case 1:
			v.SetInt(1<<(bits-1) - 1)
		case 2:
			v.SetInt(-1)
		default:
			v.SetInt(int64(rng.IntN(70)) - 3)
		}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(rng.IntN(300)))
	case reflect.Float64:
		v.SetFloat(rng.Float64() * 100)
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.String:
		v.SetString(randomString(rng))
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			return // nil
		}
		e := reflect.New(v.Type().Elem())
		fillRandom(rng, e.Elem(), key, depth+1)
		v.Set(e)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rng.IntN(40))
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			v.SetBytes(b)
			return
		}
		n := rng.IntN(3)
		if depth > 6 {
			n = 0
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			fillRandom(rng, s.Index(i), key, depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillRandom(rng, v.Index(i), key, depth+1)
		}
	}
}

func randomString(rng *rand.Rand) string {
	switch rng.IntN(6) {
	case 0:
		return ""
	case 1:
		return "soak-topic"
	case 2:
		return string([]byte{0xff, 0xfe, 'x'}) // not UTF-8
	case 3:
		return strings.Repeat("a", 250)
	}
	var b strings.Builder
	for i := rng.IntN(12); i > 0; i-- {
		b.WriteByte("abcxyz._-0123"[rng.IntN(13)])
	}
	return b.String()
}

// soakConns holds many connections open, each having done a request, and
// checks the broker still answers.
func soakConns(ctx context.Context, t *testing.T, bin string) {
	n := soakInt("SHARQ_SOAK_CONNS", 2000)
	p, err := StartSharq(ctx, bin, t.TempDir(), 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(30 * time.Second)
	base := rssMiB(p.Pid())
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("soak"))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "soak", "1"
	frame := formatter.AppendRequest(nil, av, 1)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", p.Bootstrap)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(frame); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if _, err := readResponse(c); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	held := rssMiB(p.Pid())
	// With all of them open, a client still gets metadata, and every held
	// connection still answers.
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err != nil {
		t.Fatalf("metadata with %d connections held: %v", n, err)
	}
	alive := 0
	for _, c := range conns {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(frame); err == nil {
			if _, err := readResponse(c); err == nil {
				alive++
			}
		}
	}
	soakf(t, "connections held=%d answering=%d rss_mib_idle=%.1f rss_mib_held=%.1f", n, alive, base, held)
	if alive != n {
		t.Errorf("%d of %d held connections answer", alive, n)
	}
}

// soakOversized is issue 14's memory case: 10 connections declare 100 MiB
// frames and send 50 MiB of each, then stall. RSS is sampled throughout.
func soakOversized(ctx context.Context, t *testing.T, bin string) {
	const conns, declared, sent = 10, 100 << 20, 50 << 20
	const timeout = 3 * time.Second
	p, err := StartSharq(ctx, bin, t.TempDir(), 60*time.Second, "--override",
		fmt.Sprintf("sharq.request.read.timeout.ms=%d", timeout.Milliseconds()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(30 * time.Second)
	pid := p.Pid()
	base := rssMiB(pid)
	var peak float64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				peak = max(peak, rssMiB(pid))
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	closedByBroker := 0
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", p.Bootstrap)
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(3 * time.Minute))
			w := bufio.NewWriterSize(c, 1<<20)
			w.Write(binary.BigEndian.AppendUint32(nil, declared))
			chunk := make([]byte, 1<<20)
			for n := 0; n < sent; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					break
				}
			}
			w.Flush()
			// Stall: the broker must close us.
			if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
				mu.Lock()
				closedByBroker++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	after := rssMiB(pid)
	// The Go runtime returns freed pages to the OS over a few seconds.
	settle := time.Now().Add(10 * time.Second)
	for rssMiB(pid) > base+20 && time.Now().Before(settle) {
		time.Sleep(200 * time.Millisecond)
	}
	settled := rssMiB(pid)
	close(stopSampling)
	<-sampled
	soakf(t, "oversized connections=%d declared_mib=%d sent_mib=%d closed_by_broker=%d in=%s rss_mib_before=%.1f peak=%.1f at_end=%.1f settled=%.1f",
		conns, declared>>20, sent>>20, closedByBroker, elapsed.Round(time.Second), base, peak, after, settled)
	if closedByBroker != conns {
		t.Errorf("%d of %d stalled connections closed by the broker", closedByBroker, conns)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// overrideArgs turns key=value settings into StartSharq's --override arguments.
func overrideArgs(kv []string) []string {
	args := make([]string, 0, 2*len(kv))
	for _, o := range kv {
		args = append(args, "--override", o)
	}
	return args
}
