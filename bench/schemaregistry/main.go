// Command schemaregistry measures sharq's schema registry: start-up time and
// idle RSS with the registry off and on (interleaved runs, fresh data dirs),
// register / lookup / get-by-id latency, a serializer round trip through the
// registry, and memory and start-up with 10,000 schemas registered.
//
//	go run ./bench/schemaregistry [-runs 5] [-schemas 10000] [-sharq-bin PATH] [-out FILE]
//
// It prints a markdown report (the figures in docs/schema-registry.md).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

func main() {
	runs := flag.Int("runs", 5, "interleaved off/on start-up runs")
	schemas := flag.Int("schemas", 10000, "schemas registered for the memory and restart figures")
	samples := flag.Int("samples", 1000, "requests per latency figure")
	bin := flag.String("sharq-bin", "", "sharq binary (default: go build ./cmd/sharq)")
	base := flag.String("base-bin", "", "also start this sharq binary (e.g. built from main, without the registry) in the interleaved start-up runs")
	out := flag.String("out", "", "write the report here too")
	startupOnly := flag.Bool("startup-only", false, "only the interleaved start-up and idle RSS runs")
	flag.Parse()
	work, err := os.MkdirTemp("", "srbench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	if *bin == "" {
		*bin = filepath.Join(work, "sharq")
		// As the Dockerfile builds the release binary: without cgo the
		// start-up pages are released once ready (cmd/sharq/exepages_linux.go).
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-gcflags=sharq/schema/avro=-l",
			"-gcflags=sharq/schema/jsonschema=-l", "-gcflags=sharq/schema/protobuf=-l", "-o", *bin, "./cmd/sharq")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fail(fmt.Errorf("go build ./cmd/sharq: %w", err))
		}
	}
	var rep bytes.Buffer
	w := io.MultiWriter(os.Stdout, &rep)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "# Schema registry measurements\n\nload average at start: %s\n", strings.TrimSpace(string(load)))

	// Start-up and idle RSS, off and on, interleaved.
	var startOff, startOn, rssOff, rssOn, startBase, rssBase, anonOff, anonOn, anonBase, cpuOff, cpuOn, cpuBase []float64
	for i := 0; i < *runs; i++ {
		if *base != "" {
			p := start(*base, filepath.Join(work, fmt.Sprintf("s%d-base", i)), false)
			time.Sleep(2 * time.Second)
			startBase, rssBase, anonBase, cpuBase = append(startBase, p.ready), append(rssBase, p.rssMiB()), append(anonBase, p.anonMiB()), append(cpuBase, p.cpu)
			p.stop()
		}
		for _, on := range []bool{false, true} {
			p := start(*bin, filepath.Join(work, fmt.Sprintf("s%d-%v", i, on)), on)
			time.Sleep(2 * time.Second)
			rss, anon := p.rssMiB(), p.anonMiB()
			p.stop()
			if on {
				startOn, rssOn, anonOn, cpuOn = append(startOn, p.ready), append(rssOn, rss), append(anonOn, anon), append(cpuOn, p.cpu)
			} else {
				startOff, rssOff, anonOff, cpuOff = append(startOff, p.ready), append(rssOff, rss), append(anonOff, anon), append(cpuOff, p.cpu)
			}
		}
	}
	fmt.Fprintf(w, "\n## Start-up and idle RSS (%d interleaved runs each, fresh data dir, RSS 2 s after ready)\n\n", *runs)
	fmt.Fprintf(w, "| binary, registry | start to ready, median (min-max) | CPU until ready | idle RSS, median (min-max) | of which anonymous |\n|---|---|---|---|---|\n")
	row := func(name string, start, cpu, rss, anon []float64) {
		fmt.Fprintf(w, "| %s | %s ms | %s ms | %s MiB | %s MiB |\n", name, spread(start, 1), spread(cpu, 0), spread(rss, 2), spread(anon, 2))
	}
	diff := func(name string, s1, c1, r1, a1, s0, c0, r0, a0 []float64) {
		fmt.Fprintf(w, "| %s, medians | %+.1f ms | %+.0f ms | %+.2f MiB | %+.2f MiB |\n", name,
			median(s1)-median(s0), median(c1)-median(c0), median(r1)-median(r0), median(a1)-median(a0))
	}
	if *base != "" {
		row("base ("+filepath.Base(*base)+")", startBase, cpuBase, rssBase, anonBase)
	}
	row("this, off", startOff, cpuOff, rssOff, anonOff)
	row("this, on and empty", startOn, cpuOn, rssOn, anonOn)
	diff("on - off", startOn, cpuOn, rssOn, anonOn, startOff, cpuOff, rssOff, anonOff)
	if *base != "" {
		diff("off - base", startOff, cpuOff, rssOff, anonOff, startBase, cpuBase, rssBase, anonBase)
	}

	if *startupOnly {
		if *out != "" {
			if err := os.WriteFile(*out, rep.Bytes(), 0o644); err != nil {
				fail(err)
			}
		}
		return
	}
	// Latencies on one registry.
	dir := filepath.Join(work, "lat")
	p := start(*bin, dir, true)
	cl, err := sr.NewClient(sr.URLs(p.registry))
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	const versions = 10
	subjects := (*samples + versions - 1) / versions
	var reg []float64
	ids := map[string]int{}
	for s := 0; s < subjects; s++ {
		for v := 1; v <= versions; v++ {
			subject := fmt.Sprintf("lat-%d-value", s)
			t0 := time.Now()
			got, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: avroRecord(s, v)})
			reg = append(reg, ms(time.Since(t0)))
			if err != nil {
				fail(fmt.Errorf("register %s v%d: %w", subject, v, err))
			}
			ids[fmt.Sprintf("%d/%d", s, v)] = got.ID
		}
	}
	var look, byID, round []float64
	for i := 0; i < *samples; i++ {
		s, v := i%subjects, 1+i%versions
		t0 := time.Now()
		got, err := cl.LookupSchema(ctx, fmt.Sprintf("lat-%d-value", s), sr.Schema{Schema: avroRecord(s, v)})
		look = append(look, ms(time.Since(t0)))
		if err != nil || got.ID != ids[fmt.Sprintf("%d/%d", s, v)] {
			fail(fmt.Errorf("lookup %d/%d: %+v %v", s, v, got, err))
		}
		t0 = time.Now()
		if _, err := cl.SchemaByID(ctx, got.ID); err != nil {
			fail(err)
		}
		byID = append(byID, ms(time.Since(t0)))
	}
	// A serializer round trip as a cold client does it: look the schema up
	// under its subject, encode, fetch the schema by the id in the bytes,
	// decode.
	for i := 0; i < *samples; i++ {
		s := i % subjects
		t0 := time.Now()
		fresh, _ := sr.NewClient(sr.URLs(p.registry))
		got, err := fresh.LookupSchema(ctx, fmt.Sprintf("lat-%d-value", s), sr.Schema{Schema: avroRecord(s, 1)})
		if err != nil {
			fail(err)
		}
		var serde sr.Serde
		serde.Register(got.ID, int64(0),
			sr.EncodeFn(func(v any) ([]byte, error) { return binary.AppendVarint(nil, v.(int64)), nil }),
			sr.DecodeFn(func(b []byte, v any) error { n, _ := binary.Varint(b); *(v.(*int64)) = n; return nil }))
		b, err := serde.Encode(int64(i))
		if err != nil {
			fail(err)
		}
		id, _, _ := new(sr.ConfluentHeader).DecodeID(b)
		if _, err := fresh.SchemaByID(ctx, id); err != nil {
			fail(err)
		}
		var back int64
		if err := serde.Decode(b, &back); err != nil || back != int64(i) {
			fail(fmt.Errorf("decode: %d %v", back, err))
		}
		round = append(round, ms(time.Since(t0)))
	}
	fmt.Fprintf(w, "\n## Latency over HTTP/1.1 on loopback, one client, sequential\n\n")
	fmt.Fprintf(w, "| request | n | p50 | p99 |\n|---|---|---|---|\n")
	fmt.Fprintf(w, "| register (new version, BACKWARD check against the previous) | %d | %.3f ms | %.3f ms |\n", len(reg), pct(reg, 50), pct(reg, 99))
	fmt.Fprintf(w, "| lookup (POST /subjects/{s}) | %d | %.3f ms | %.3f ms |\n", len(look), pct(look, 50), pct(look, 99))
	fmt.Fprintf(w, "| get by id (GET /schemas/ids/{id}) | %d | %.3f ms | %.3f ms |\n", len(byID), pct(byID, 50), pct(byID, 99))
	fmt.Fprintf(w, "| serializer round trip, cold client (lookup, encode, get by id, decode) | %d | %.3f ms | %.3f ms |\n", len(round), pct(round, 50), pct(round, 99))

	// Memory with many schemas, and a restart reading them.
	rssEmpty := p.rssMiB()
	p.stop()
	dir = filepath.Join(work, "mem")
	p = start(*bin, dir, true)
	time.Sleep(2 * time.Second)
	rssStart := p.rssMiB()
	t0 := time.Now()
	registerMany(p.registry, *schemas)
	took := time.Since(t0)
	time.Sleep(2 * time.Second)
	rssFull := p.rssMiB()
	p.stop()
	var restart, restartCPU, rssRestart []float64
	for i := 0; i < 3; i++ {
		p = start(*bin, dir, true)
		time.Sleep(2 * time.Second)
		restart, restartCPU, rssRestart = append(restart, p.ready), append(restartCPU, p.cpu), append(rssRestart, p.rssMiB())
		p.stop()
	}
	fmt.Fprintf(w, "\n## %d schemas (%d subjects x 10 versions, Avro records of 1-10 fields)\n\n", *schemas, *schemas/10)
	fmt.Fprintf(w, "| figure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| registering them, 4 clients | %.1f s (%.0f/s) |\n", took.Seconds(), float64(*schemas)/took.Seconds())
	fmt.Fprintf(w, "| RSS, registry on and empty (2 s after ready) | %.1f MiB |\n", rssStart)
	fmt.Fprintf(w, "| RSS with them registered (2 s after the last) | %.1f MiB (+%.1f MiB) |\n", rssFull, rssFull-rssStart)
	fmt.Fprintf(w, "| restart with them: start to ready (3 runs) | %s ms, %s ms CPU |\n", spread(restart, 1), spread(restartCPU, 0))
	fmt.Fprintf(w, "| RSS after that restart | %s MiB |\n", spread(rssRestart, 1))
	_ = rssEmpty
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "\nload average at the end: %s\n", strings.TrimSpace(string(load)))
	if *out != "" {
		if err := os.WriteFile(*out, rep.Bytes(), 0o644); err != nil {
			fail(err)
		}
	}
}

// avroRecord is version v of subject s's record: v fields, each added with
// a default, so every version is BACKWARD compatible with the one before.
func avroRecord(s, v int) string {
	fields := []map[string]any{{"name": "id", "type": "long"}}
	for i := 1; i < v; i++ {
		fields = append(fields, map[string]any{"name": fmt.Sprintf("f%d", i), "type": "string", "default": ""})
	}
	b, _ := json.Marshal(map[string]any{"type": "record", "name": fmt.Sprintf("R%d", s), "namespace": "bench", "fields": fields})
	return string(b)
}

// registerMany registers n schemas, 10 versions a subject, with 4 clients.
func registerMany(url string, n int) {
	const workers = 4
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			cl, err := sr.NewClient(sr.URLs(url))
			if err != nil {
				errs <- err
				return
			}
			for s := w; s < n/10; s += workers {
				for v := 1; v <= 10; v++ {
					if _, err := cl.CreateSchema(context.Background(), fmt.Sprintf("mem-%d-value", s), sr.Schema{Schema: avroRecord(s, v)}); err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			fail(err)
		}
	}
}

type proc struct {
	cmd      *exec.Cmd
	ready    float64 // ms from exec to the ready line
	cpu      float64 // CPU ms used until the ready line (user + system)
	registry string
	done     chan struct{}
}

// cpuMs is the process's user and system time so far (/proc/pid/stat,
// clock ticks of 10 ms).
func (p *proc) cpuMs() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		fail(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 10
}

func start(bin, dir string, registry bool) *proc {
	args := []string{"--override", "listeners=PLAINTEXT://127.0.0.1:0", "--override", "log.dirs=" + dir}
	if registry {
		args = append(args, "--override", "schema.registry.listeners=http://127.0.0.1:0")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case line <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		close(p.done)
	}()
	select {
	case l := <-line:
		p.ready = ms(time.Since(t0))
		p.cpu = p.cpuMs()
		for _, f := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(f, "schema.registry.listeners="); ok {
				p.registry = strings.Split(v, ",")[0]
			}
		}
	case <-p.done:
		fail(fmt.Errorf("sharq exited before ready"))
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		fail(fmt.Errorf("no ready line"))
	}
	if registry && p.registry == "" {
		fail(fmt.Errorf("no schema registry in the ready line"))
	}
	return p
}

func (p *proc) rssMiB() float64 { return p.status("VmRSS:") }

// anonMiB is the resident memory not backed by the executable's file
// (heap, stacks): what the process itself holds.
func (p *proc) anonMiB() float64 { return p.status("RssAnon:") }

func (p *proc) status(field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		fail(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	fail(fmt.Errorf("no %s in /proc/%d/status", field, p.cmd.Process.Pid))
	return 0
}

func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

func median(xs []float64) float64 { return pct(xs, 50) }

func spread(xs []float64, prec int) string {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	f := "%." + strconv.Itoa(prec) + "f"
	return fmt.Sprintf(f+" ("+f+"-"+f+")", median(s), s[0], s[len(s)-1])
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "schemaregistry:", err)
	os.Exit(1)
}
