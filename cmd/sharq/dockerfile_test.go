package main

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxImageBytes is the image budget. The final stage is scratch plus the
// binary, so the binary must fit in it. It was 20 MB until TLS (PKCS12,
// encrypted PEM keys), SASL/SCRAM, ACLs, transactions, quotas and the
// dead-letter queues landed together and the stripped binary reached
// 20.0 MB; 21 MB keeps a tight bound (a new dependency that costs more
// must say why).
const maxImageBytes = 21_000_000

// dfInstr is one Dockerfile instruction, continuation lines joined.
type dfInstr struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
	line int
}

// dfStage is one FROM and the instructions under it.
type dfStage struct {
	image, name string
	instrs      []dfInstr
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped, backslash continuations joined.
func parseDockerfile(src string) ([]dfInstr, error) {
	var out []dfInstr
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue // also inside a continuation, as Docker does
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(strings.TrimSpace(body) + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dfInstr{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("line %d: continuation at end of file", start)
	}
	return out, nil
}

func dockerStages(instrs []dfInstr) ([]dfStage, error) {
	var stages []dfStage
	for _, in := range instrs {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			st := dfStage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				return nil, fmt.Errorf("line %d: FROM %s: want IMAGE [AS NAME]", in.line, in.args)
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.cmd == "ARG" {
				continue
			}
			return nil, fmt.Errorf("line %d: %s before FROM", in.line, in.cmd)
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	return stages, nil
}

// shellWords splits a shell command line into words: quotes and
// backslashes as in sh, no expansions (a `$` is an error: the test could not
// reproduce what the shell would build).
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			return nil, fmt.Errorf("variable expansion in %q", s)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '$' {
					return nil, fmt.Errorf("variable expansion in %q", s)
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`, s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// envPairs parses ENV's KEY=VALUE form (several pairs, values quoted or not).
func envPairs(args string) (map[string]string, error) {
	words, err := shellWords(args)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("ENV %q: want KEY=VALUE (the legacy KEY VALUE form is not used here)", args)
		}
		out[k] = v
	}
	return out, nil
}

// goBuild is the Dockerfile's `go build` command.
type goBuild struct {
	env    []string // VAR=value words before `go`
	args   []string // after `go build`, in order
	output string   // the -o path inside the image
}

// withOutput returns the build arguments writing to path instead.
func (gb goBuild) withOutput(path string) []string {
	out := slices.Clone(gb.args)
	for j := range out {
		switch {
		case out[j] == "-o" && j+1 < len(out):
			out[j+1] = path
		case strings.HasPrefix(out[j], "-o="):
			out[j] = "-o=" + path
		}
	}
	return out
}

func parseGoBuild(run string) (goBuild, bool, error) {
	for _, seg := range strings.Split(run, "&&") {
		words, err := shellWords(strings.TrimSpace(seg))
		if err != nil {
			return goBuild{}, false, err
		}
		var gb goBuild
		i := 0
		for ; i < len(words) && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-"); i++ {
			gb.env = append(gb.env, words[i])
		}
		if len(words) < i+2 || words[i] != "go" || words[i+1] != "build" {
			continue
		}
		gb.args = words[i+2:]
		for j, w := range gb.args {
			switch {
			case w == "-o" && j+1 < len(gb.args):
				gb.output = gb.args[j+1]
			case strings.HasPrefix(w, "-o="):
				gb.output = strings.TrimPrefix(w, "-o=")
			}
		}
		return gb, true, nil
	}
	return goBuild{}, false, nil
}

// goModVersion is the `go` directive of go.mod.
func goModVersion(t *testing.T) string {
	t.Helper()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)\s*$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// dockerfileChecked is what TestDockerfile learns from the file.
type dockerfileChecked struct {
	build goBuild
	env   map[string]string // the final stage's ENV
}

// checkDockerfile returns what the Dockerfile src says and every rule it
// breaks; goVersion is go.mod's.
func checkDockerfile(src, goVersion string) (out dockerfileChecked, problems []string) {
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	instrs, err := parseDockerfile(src)
	if err != nil {
		return out, []string{err.Error()}
	}
	stages, err := dockerStages(instrs)
	if err != nil {
		return out, []string{err.Error()}
	}
	if len(stages) < 2 {
		return out, []string{fmt.Sprintf("%d stage(s): want a multi-stage build", len(stages))}
	}

	// Every base image is pinned: an exact x.y.z tag, a digest, or scratch.
	pinned := regexp.MustCompile(`^[a-z0-9./-]+(:[A-Za-z0-9._-]*\d+\.\d+\.\d+[A-Za-z0-9._-]*)?(@sha256:[0-9a-f]{64})?$`)
	for _, st := range stages[:len(stages)-1] {
		m := pinned.FindStringSubmatch(st.image)
		if m == nil || (m[1] == "" && m[2] == "") {
			bad("build stage FROM %s: pin an exact version tag or a digest", st.image)
		}
	}
	build := stages[0]
	goImage := regexp.MustCompile(`^golang:(\d+\.\d+\.\d+)-[a-z0-9.]+(@sha256:[0-9a-f]{64})?$`).FindStringSubmatch(build.image)
	if goImage == nil {
		bad("build stage FROM %s: want golang:X.Y.Z-<variant>", build.image)
	} else if goImage[1] != goVersion {
		bad("build stage uses Go %s, go.mod says %s", goImage[1], goVersion)
	}

	final := stages[len(stages)-1]
	distroless := regexp.MustCompile(`^gcr\.io/distroless/static[a-z0-9-]*(:[a-z0-9._-]+)?@sha256:[0-9a-f]{64}$`)
	if final.image != "scratch" && !distroless.MatchString(final.image) {
		bad("final stage FROM %s: want scratch or distroless static pinned by digest", final.image)
	}

	found := false
	for _, in := range build.instrs {
		if in.cmd != "RUN" {
			continue
		}
		gb, ok, err := parseGoBuild(in.args)
		if err != nil {
			return out, append(problems, fmt.Sprintf("line %d: %v", in.line, err))
		}
		if !ok {
			continue
		}
		found = true
		if !slices.Contains(gb.env, "CGO_ENABLED=0") {
			bad("line %d: go build without CGO_ENABLED=0 (env %v)", in.line, gb.env)
		}
		if gb.output == "" {
			bad("line %d: go build without -o", in.line)
		}
		out.build = gb
	}
	if !found {
		return out, append(problems, "no RUN ... go build in the build stage")
	}

	byCmd := map[string][]dfInstr{}
	out.env = map[string]string{}
	for _, in := range final.instrs {
		byCmd[in.cmd] = append(byCmd[in.cmd], in)
		if in.cmd == "ENV" {
			kv, err := envPairs(in.args)
			if err != nil {
				return out, append(problems, fmt.Sprintf("line %d: %v", in.line, err))
			}
			for k, v := range kv {
				out.env[k] = v
			}
		}
	}
	if u := byCmd["USER"]; len(u) != 1 {
		bad("final stage has %d USER instructions, want 1", len(u))
	} else if m := regexp.MustCompile(`^(\d+)(:(\d+))?$`).FindStringSubmatch(u[0].args); m == nil || m[1] == "0" || m[3] == "0" {
		bad("USER %s: want a numeric non-root uid[:gid] (scratch has no /etc/passwd)", u[0].args)
	}
	var ports []string
	for _, in := range byCmd["EXPOSE"] {
		ports = append(ports, strings.Fields(in.args)...)
	}
	if !slices.Contains(ports, "9092") && !slices.Contains(ports, "9092/tcp") {
		bad("EXPOSE %v lacks 9092", ports)
	}
	var volumes []string
	for _, in := range byCmd["VOLUME"] {
		if strings.HasPrefix(in.args, "[") {
			var vs []string
			if err := json.Unmarshal([]byte(in.args), &vs); err != nil {
				return out, append(problems, fmt.Sprintf("line %d: VOLUME %s: %v", in.line, in.args, err))
			}
			volumes = append(volumes, vs...)
		} else {
			volumes = append(volumes, strings.Fields(in.args)...)
		}
	}
	if dir := out.env["SHARQ_LOG_DIRS"]; dir == "" || !slices.Contains(volumes, dir) {
		bad("data directory SHARQ_LOG_DIRS=%q is not a VOLUME (%v)", dir, volumes)
	}
	if out.env["SHARQ_ADVERTISED_LISTENERS"] == "" {
		bad("no ENV SHARQ_ADVERTISED_LISTENERS")
	}
	if l := out.env["SHARQ_LISTENERS"]; !strings.Contains(l, "://0.0.0.0:9092") {
		bad("SHARQ_LISTENERS=%q: want a listener on 0.0.0.0:9092 (reachable through the port mapping)", l)
	}
	if e := byCmd["ENTRYPOINT"]; len(e) != 1 {
		bad("final stage has %d ENTRYPOINT instructions, want 1", len(e))
	} else {
		var argv []string
		if err := json.Unmarshal([]byte(e[0].args), &argv); err != nil || len(argv) == 0 {
			bad("ENTRYPOINT %s: want the exec form (scratch has no shell)", e[0].args)
		} else if !slices.ContainsFunc(byCmd["COPY"], func(in dfInstr) bool {
			f := strings.Fields(in.args)
			return len(f) >= 3 && f[len(f)-2] == out.build.output && f[len(f)-1] == argv[0]
		}) {
			bad("ENTRYPOINT %s is not the go build output %s copied from the build stage", argv[0], out.build.output)
		}
	}
	return out, problems
}

// TestDockerfile checks the Dockerfile's instructions, builds the binary
// with its `go build` line and checks that it is static and small enough,
// and, when a Docker daemon answers, builds and runs the image.
func TestDockerfile(t *testing.T) {
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df, problems := checkDockerfile(string(src), goModVersion(t))
	for _, p := range problems {
		t.Error("Dockerfile: " + p)
	}
	if t.Failed() {
		return
	}
	if img := regexp.MustCompile(`(?m)^FROM (\S+)`).FindStringSubmatch(string(src)); img != nil && !strings.Contains(img[1], "@sha256:") {
		t.Logf("build image %s is pinned by tag only (no digest)", img[1])
	}
	if testing.Short() {
		t.Skip("builds the image binary: skipped with -short")
	}

	bin := filepath.Join(t.TempDir(), "sharq")
	t.Run("static binary", func(t *testing.T) {
		args := append([]string{"build"}, df.build.withOutput(bin)...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = "../.." // the Dockerfile builds from the repository root
		cmd.Env = append(os.Environ(), df.build.env...)
		cmd.Env = append(cmd.Env, "GOOS=linux") // the image's OS, whatever the host
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the binary has a PT_INTERP header: it is dynamically linked")
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
			t.Errorf("the binary needs shared libraries %v (%v)", libs, err)
		}
		fi, err := os.Stat(bin)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("binary %d bytes (%.1f MB), go build %s", fi.Size(), float64(fi.Size())/1e6, strings.Join(df.build.args, " "))
		if fi.Size() > maxImageBytes {
			t.Errorf("binary is %d bytes: the image would exceed %d", fi.Size(), maxImageBytes)
		}
		if runtime.GOOS != "linux" {
			return
		}
		// The image's environment is a valid configuration.
		cmd = exec.CommandContext(ctx, bin, "--check-config")
		cmd.Env = []string{"HOME=" + t.TempDir()}
		for k, v := range df.env {
			if k == "SHARQ_LOG_DIRS" {
				v = t.TempDir()
			}
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "configuration ok") {
			t.Errorf("the image's ENV does not check: %v\n%s", err, out)
		}
	})

	t.Run("image", func(t *testing.T) {
		if reason := dockerUnavailable(); reason != "" {
			t.Skip(reason)
		}
		testDockerImage(t)
	})
}

// dockerUnavailable says why the image cannot be built here ("" if it can).
func dockerUnavailable() string {
	if _, err := exec.LookPath("docker"); err != nil {
		return "no docker on PATH"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info").CombinedOutput(); err != nil {
		return "docker info failed (no daemon?): " + strings.TrimSpace(lastLine(string(out)))
	}
	return ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func docker(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// testDockerImage builds the image, checks its size, runs it with a
// host port mapped to 9092 and asks ApiVersions through that port.
func testDockerImage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tag := "sharq-dockerfile-test:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	docker(t, ctx, "build", "-t", tag, "../..")
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", tag).Run() })

	size, err := strconv.ParseInt(docker(t, ctx, "image", "inspect", "-f", "{{.Size}}", tag), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s: %d bytes (%.1f MB)", tag, size, float64(size)/1e6)
	if size > maxImageBytes {
		t.Errorf("image is %d bytes, over %d", size, maxImageBytes)
	}

	id := docker(t, ctx, "run", "-d", "-p", "127.0.0.1::9092", tag)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", "-v", id).Run() }) // -v: the data volume too
	addr := lastLine(docker(t, ctx, "port", id, "9092/tcp"))
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatalf("docker port: %q", addr)
	}

	// Follow the container's stdout until the ready line (the stream ends
	// if the container exits first).
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer rcancel()
	logs := exec.CommandContext(rctx, "docker", "logs", "-f", id)
	stdout, err := logs.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := logs.Start(); err != nil {
		t.Fatal(err)
	}
	ready := false
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "ready listeners=") {
			ready = true
			break
		}
	}
	rcancel()
	logs.Wait()
	if !ready {
		t.Fatalf("no ready line from the container:\n%s", dockerLogs(id))
	}

	versions, err := apiVersionsV0(ctx, addr)
	if err != nil {
		t.Fatalf("ApiVersions through %s: %v\n%s", addr, err, dockerLogs(id))
	}
	if !slices.Contains(versions, 18) || !slices.Contains(versions, 0) {
		t.Errorf("ApiVersions lists keys %v: want Produce (0) and ApiVersions (18)", versions)
	}
}

func dockerLogs(id string) string {
	out, _ := exec.Command("docker", "logs", id).CombinedOutput()
	return string(out)
}

// apiVersionsV0 sends one ApiVersions v0 request over a plain connection
// and returns the API keys of a successful answer.
func apiVersionsV0(ctx context.Context, addr string) ([]int16, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	const corr = 7
	// Request header v1: key, version, correlation id, client id.
	body := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	body = binary.BigEndian.AppendUint16(body, 0)
	body = binary.BigEndian.AppendUint32(body, corr)
	body = binary.BigEndian.AppendUint16(body, uint16(len("dockerfile-test")))
	body = append(body, "dockerfile-test"...)
	body = req.AppendTo(body)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	if _, err := conn.Write(append(frame, body...)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, fmt.Errorf("read response size: %w", err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("response size %d", n)
	}
	resp := make([]byte, n)
	if _, err := io.ReadFull(conn, resp); err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if got := binary.BigEndian.Uint32(resp); got != corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	r := kmsg.NewPtrApiVersionsResponse()
	r.Version = 0
	if err := r.ReadFrom(resp[4:]); err != nil {
		return nil, fmt.Errorf("decode ApiVersions: %w", err)
	}
	if r.ErrorCode != 0 {
		return nil, fmt.Errorf("ApiVersions error code %d", r.ErrorCode)
	}
	var keys []int16
	for _, k := range r.ApiKeys {
		keys = append(keys, k.ApiKey)
	}
	return keys, nil
}

// The parser tests: what the Dockerfile test relies on to read the file.
func TestDockerfileParsers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  bool
	}{
		{`CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sharq ./cmd/sharq`, []string{"CGO_ENABLED=0", "go", "build", "-trimpath", "-ldflags=-s -w", "-o", "/out/sharq", "./cmd/sharq"}, false},
		{`a 'b c' "d \"e\"" f\ g`, []string{"a", "b c", `d "e"`, "f g"}, false},
		{`go build -ldflags="-X main.v=$VERSION"`, nil, true},
		{`echo "open`, nil, true},
		{`echo 'open`, nil, true},
		{``, nil, false},
	} {
		got, err := shellWords(c.in)
		if (err != nil) != c.err || (!c.err && !slices.Equal(got, c.want)) {
			t.Errorf("shellWords(%q) = %q, %v; want %q (error %v)", c.in, got, err, c.want, c.err)
		}
	}

	instrs, err := parseDockerfile("# c\nFROM a:1.2.3 AS b\nRUN x \\\n# inside\n && y\n\nENV K=v \\\n    L=\"w x\"\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []dfInstr{{"FROM", "a:1.2.3 AS b", 2}, {"RUN", "x && y", 3}, {"ENV", `K=v L="w x"`, 7}}
	if !slices.Equal(instrs, want) {
		t.Errorf("parseDockerfile: %+v, want %+v", instrs, want)
	}
	if env, err := envPairs(instrs[2].args); err != nil || env["K"] != "v" || env["L"] != "w x" || len(env) != 2 {
		t.Errorf("envPairs: %v %v", env, err)
	}
	if _, err := parseDockerfile("RUN x \\\n"); err == nil {
		t.Error("a continuation at the end of the file parsed")
	}
	if _, err := dockerStages([]dfInstr{{"RUN", "x", 1}}); err == nil {
		t.Error("RUN before FROM accepted")
	}

	gb, ok, err := parseGoBuild(`CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o=/x ./cmd/sharq && mkdir -p /d`)
	if err != nil || !ok || gb.output != "/x" || !slices.Equal(gb.env, []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}) || !slices.Equal(gb.withOutput("/y"), []string{"-trimpath", "-o=/y", "./cmd/sharq"}) {
		t.Errorf("parseGoBuild: %+v %v %v", gb, ok, err)
	}
	if _, ok, _ := parseGoBuild(`go mod download`); ok {
		t.Error("go mod download taken for go build")
	}
}

// TestDockerfileRules: the checker accepts the repository's Dockerfile and
// catches each rule broken on a copy of it.
func TestDockerfileRules(t *testing.T) {
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goModVersion(t)
	if _, problems := checkDockerfile(string(src), goVersion); len(problems) > 0 {
		t.Fatalf("the repository's Dockerfile: %v", problems)
	}
	lines := strings.Split(string(src), "\n")
	// edit rewrites the first line matching re (which must exist).
	edit := func(t *testing.T, re, repl string) string {
		t.Helper()
		r := regexp.MustCompile(re)
		for i, l := range lines {
			if r.MatchString(l) {
				out := slices.Clone(lines)
				out[i] = r.ReplaceAllString(l, repl)
				return strings.Join(out, "\n")
			}
		}
		t.Fatalf("no line matches %s", re)
		return ""
	}
	for _, c := range []struct {
		name, re, repl string
		want           string // a substring of one problem
	}{
		{"floating Go tag", `^FROM golang:\S+`, "FROM golang:1.26-bookworm", "pin an exact version"},
		{"other Go version", `^FROM golang:\S+`, "FROM golang:1.25.1-bookworm", "go.mod says " + goVersion},
		{"latest final image", `^FROM scratch`, "FROM debian:latest", "want scratch or distroless"},
		{"unpinned distroless", `^FROM scratch`, "FROM gcr.io/distroless/static:nonroot", "want scratch or distroless"},
		{"cgo", `CGO_ENABLED=0 `, "", "without CGO_ENABLED=0"},
		{"root", `^USER .*`, "USER 0:0", "non-root"},
		{"named user", `^USER .*`, "USER sharq", "non-root"},
		{"no user", `^USER .*`, "", "0 USER"},
		{"no 9092", `^EXPOSE .*`, "EXPOSE 29092", "lacks 9092"},
		{"no volume", `^VOLUME .*`, "VOLUME /tmp", "is not a VOLUME"},
		{"no advertised listeners", `SHARQ_ADVERTISED_LISTENERS=\S+`, "SHARQ_X=1", "SHARQ_ADVERTISED_LISTENERS"},
		{"loopback listener", `SHARQ_LISTENERS=\S+`, "SHARQ_LISTENERS=PLAINTEXT://127.0.0.1:9092", "0.0.0.0:9092"},
		{"shell entrypoint", `^ENTRYPOINT .*`, "ENTRYPOINT /sharq", "exec form"},
		{"other entrypoint", `^ENTRYPOINT .*`, `ENTRYPOINT ["/bin/sharq"]`, "not the go build output"},
		{"single stage", `^FROM scratch`, "", "multi-stage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mutated := edit(t, c.re, c.repl)
			_, problems := checkDockerfile(mutated, goVersion)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("problems %q lack %q", problems, c.want)
			}
		})
	}
}
