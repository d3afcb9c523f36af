package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
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
)

// maxBinaryBytes is the binary's budget. It was 20 MB until TLS (PKCS12,
// encrypted PEM keys), SASL/SCRAM, ACLs, transactions, quotas and the
// dead-letter queues landed together and the stripped binary reached
// 20.0 MB; 21 MB kept a tight bound (a new dependency that costs more
// must say why). The schema registry took it to 24.3 MB with the format
// libraries (santhosh-tekuri/jsonschema, bufbuild/protocompile and the
// protobuf runtime's descriptors); with the formats' own parsers and the
// format packages built without inlining (the Dockerfile's go build line)
// it is 21.9 MB, and 22.5 MB keeps the bound tight.
const maxBinaryBytes = 22_500_000

// maxImageBytes is the image's: the binary, Debian's static busybox (2.0
// MB: the shell userland the stock Testcontainers modules' start scripts
// need) and the shims. #28's goal was 24 MB; virtual brokers, fault
// injection and sharq migrate took the binary to 22.35 MB and the image to
// 24.34 MB (the hand-written /metrics took 0.2 MB back), so the bound is
// 24.5 MB: a minimal busybox built from source (about 1.5 MB less) is the
// way back under 24 MB.
const maxImageBytes = 24_500_000

// imageUser is the USER the final stage must name and own its writable
// directories with.
const imageUser = "65532:65532"

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
	final []dfInstr         // the final stage's instructions
}

// imageEnv is the value the image's environment gives a key: SHARQ_* wins
// over the apache/kafka image's KAFKA_* convention, as in config.Load.
func imageEnv(env map[string]string, kafkaName string) string {
	if v, ok := env["SHARQ_"+kafkaName]; ok {
		return v
	}
	return env["KAFKA_"+kafkaName]
}

// rootfsInstalled lists the absolute paths docker/rootfs.sh installs a file
// at ("$root/PATH" in the script).
func rootfsInstalled(script string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`"\$root(/[^"$]+)"`).FindAllStringSubmatch(script, -1) {
		out = append(out, m[1])
	}
	return out
}

// checkDockerfile returns what the Dockerfile src says and every rule it
// breaks; goVersion is go.mod's, rootfs the text of docker/rootfs.sh.
func checkDockerfile(src, goVersion, rootfs string) (out dockerfileChecked, problems []string) {
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
	// docker/rootfs.sh lays out the file system around the binary.
	rootfsOut := ""
	for _, in := range build.instrs {
		if in.cmd != "RUN" || !strings.Contains(in.args, "docker/rootfs.sh") {
			continue
		}
		for _, seg := range strings.Split(in.args, "&&") {
			words, err := shellWords(strings.TrimSpace(seg))
			if err != nil {
				return out, append(problems, fmt.Sprintf("line %d: %v", in.line, err))
			}
			i := slices.Index(words, "docker/rootfs.sh")
			if i < 0 {
				continue
			}
			if len(words) != i+4 {
				bad("line %d: docker/rootfs.sh takes OUT SHARQ BUSYBOX, got %q", in.line, words[i+1:])
				continue
			}
			rootfsOut = words[i+1]
			if words[i+2] != out.build.output {
				bad("line %d: docker/rootfs.sh lays out %s, not the go build output %s", in.line, words[i+2], out.build.output)
			}
		}
	}
	if rootfsOut == "" {
		bad("no RUN ... docker/rootfs.sh OUT SHARQ BUSYBOX in the build stage")
	}

	byCmd := map[string][]dfInstr{}
	out.env = map[string]string{}
	out.final = final.instrs
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
	if !slices.Contains(ports, "8081") && !slices.Contains(ports, "8081/tcp") {
		bad("EXPOSE %v lacks 8081 (the schema registry)", ports)
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
	// The directories the user writes are COPYed from OUT/owned/ with the
	// USER's ownership; the data directory is one of them.
	owned := map[string]bool{}
	rootCopied := false
	for _, in := range byCmd["COPY"] {
		f := strings.Fields(in.args)
		if len(f) < 3 || !slices.Contains(f, "--from=build") {
			continue
		}
		src, dst := f[len(f)-2], f[len(f)-1]
		switch {
		case rootfsOut != "" && strings.TrimSuffix(src, "/") == rootfsOut+"/rootfs" && dst == "/":
			rootCopied = true
		case rootfsOut != "" && strings.HasPrefix(src, rootfsOut+"/owned/"):
			if !slices.Contains(f, "--chown="+imageUser) {
				bad("line %d: COPY %s: want --chown=%s (the USER writes there)", in.line, src, imageUser)
			}
			if want := strings.TrimPrefix(src, rootfsOut+"/owned"); dst != want {
				bad("line %d: COPY %s to %s, want %s", in.line, src, dst, want)
			}
			owned[dst] = true
		}
	}
	if rootfsOut != "" && !rootCopied {
		bad("no COPY --from=build %s/rootfs/ / in the final stage", rootfsOut)
	}
	if dir := imageEnv(out.env, "LOG_DIRS"); dir == "" || !slices.Contains(volumes, dir) {
		bad("data directory KAFKA_LOG_DIRS=%q is not a VOLUME (%v)", dir, volumes)
	} else if !owned[dir] {
		bad("data directory %s is not COPYed from the build stage's owned/ with --chown=%s", dir, imageUser)
	}
	if imageEnv(out.env, "ADVERTISED_LISTENERS") == "" {
		bad("no ENV KAFKA_ADVERTISED_LISTENERS (or SHARQ_ADVERTISED_LISTENERS)")
	}
	if l := imageEnv(out.env, "LISTENERS"); !strings.Contains(l, "://0.0.0.0:9092") {
		bad("KAFKA_LISTENERS=%q: want a listener on 0.0.0.0:9092 (reachable through the port mapping)", l)
	}
	if l := imageEnv(out.env, "SCHEMA_REGISTRY_LISTENERS"); l != "http://0.0.0.0:8081" {
		bad("KAFKA_SCHEMA_REGISTRY_LISTENERS=%q: want the schema registry on http://0.0.0.0:8081", l)
	}
	if e := byCmd["ENTRYPOINT"]; len(e) != 1 {
		bad("final stage has %d ENTRYPOINT instructions, want 1", len(e))
	} else {
		var argv []string
		if err := json.Unmarshal([]byte(e[0].args), &argv); err != nil || len(argv) == 0 {
			bad("ENTRYPOINT %s: want the exec form", e[0].args)
		} else if !slices.Contains(rootfsInstalled(rootfs), argv[0]) {
			bad("ENTRYPOINT %s is not a file docker/rootfs.sh installs", argv[0])
		}
	}
	return out, problems
}

// readDockerfile reads the Dockerfile and docker/rootfs.sh and checks the
// one against the rules.
func readDockerfile(t *testing.T) (dockerfileChecked, string) {
	t.Helper()
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	rootfs, err := os.ReadFile("../../docker/rootfs.sh")
	if err != nil {
		t.Fatal(err)
	}
	df, problems := checkDockerfile(string(src), goModVersion(t), string(rootfs))
	for _, p := range problems {
		t.Error("Dockerfile: " + p)
	}
	return df, string(src)
}

// TestDockerfile checks the Dockerfile's instructions, builds the binary
// with its `go build` line and checks that it is static and small enough,
// checks that docker/build.sh lays out the file system the Dockerfile's
// final stage copies (with the same binary), and, when a Docker daemon
// answers and the Dockerfile's base images are there, that both build the
// same image.
func TestDockerfile(t *testing.T) {
	df, src := readDockerfile(t)
	if t.Failed() {
		return
	}
	if img := regexp.MustCompile(`(?m)^FROM (\S+)`).FindStringSubmatch(src); img != nil && !strings.Contains(img[1], "@sha256:") {
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
		if fi.Size() > maxBinaryBytes {
			t.Errorf("binary is %d bytes, over its budget of %d", fi.Size(), maxBinaryBytes)
		}
		if runtime.GOOS != "linux" {
			return
		}
		// The image's environment is a valid configuration.
		cmd = exec.CommandContext(ctx, bin, "--check-config")
		cmd.Env = []string{"HOME=" + t.TempDir()}
		for k, v := range df.env {
			if k == "KAFKA_LOG_DIRS" || k == "SHARQ_LOG_DIRS" {
				v = t.TempDir()
			}
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "configuration ok") || strings.Contains(string(out), "level=WARN") {
			t.Errorf("the image's ENV does not check cleanly: %v\n%s", err, out)
		}
	})

	layout := t.TempDir()
	t.Run("layout", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("docker/build.sh lays out a linux file system with linux tools")
		}
		testImageLayout(t, df, bin, layout)
	})

	t.Run("image", func(t *testing.T) {
		if reason := dockerUnavailable(); reason != "" {
			t.Skip(reason + " (docker/docker_test.go runs the image)")
		}
		if _, err := os.Stat(filepath.Join(layout, "Dockerfile")); err != nil {
			t.Skip("no build.sh context (the layout subtest did not make one)")
		}
		testSameImage(t, src, layout)
	})
}

// TestBuildScriptGoBuild: docker/build.sh builds the binary with the
// Dockerfile's `go build` line.
func TestBuildScriptGoBuild(t *testing.T) {
	df, _ := readDockerfile(t)
	script, err := os.ReadFile("../../docker/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	var gb goBuild
	found := false
	for _, line := range strings.Split(string(script), "\n") {
		i := strings.Index(line, "CGO_ENABLED=0")
		if i < 0 || !strings.Contains(line, "go build") {
			continue
		}
		// The output path is the one expansion; the rest must read as
		// the Dockerfile's words do.
		cmd := strings.TrimSuffix(strings.TrimSpace(line[i:]), ")")
		cmd = strings.ReplaceAll(cmd, `"$work/sharq"`, "OUT")
		var ok bool
		if gb, ok, err = parseGoBuild(cmd); err != nil || !ok {
			t.Fatalf("docker/build.sh: %q: %v", cmd, err)
		}
		found = true
	}
	if !found {
		t.Fatal("docker/build.sh has no CGO_ENABLED=0 ... go build line")
	}
	if want := df.build.withOutput("OUT"); !slices.Equal(gb.args, want) {
		t.Errorf("docker/build.sh: go build %q\nthe Dockerfile:     go build %q", gb.args, want)
	}
	if !slices.Contains(gb.env, "CGO_ENABLED=0") {
		t.Errorf("docker/build.sh builds with env %v", gb.env)
	}
}

// testImageLayout runs docker/build.sh --context and checks what it wrote
// against the Dockerfile's final stage: the same instructions (COPY
// reading the context instead of the build stage), every COPY source
// there, the same binary as the Dockerfile's go build line makes (bin), an
// entry point that runs it, the shell userland and shims the stock
// Testcontainers modules' scripts call on the image's PATH, and the modes
// they need.
func testImageLayout(t *testing.T, df dockerfileChecked, bin, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "docker/build.sh", "--context", dir)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "busybox") && os.Getenv("CI") != "true" {
			t.Skipf("docker/build.sh --context: no busybox-static to be had here: %s", lastLine(string(out)))
		}
		t.Fatalf("docker/build.sh --context: %v\n%s", err, out)
	}
	gen, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseDockerfile(string(gen))
	if err != nil {
		t.Fatal(err)
	}
	want := []dfInstr{{cmd: "FROM", args: "scratch"}}
	for _, in := range df.final {
		if in.cmd == "COPY" {
			a := strings.Replace(" "+in.args, " --from=build ", " ", 1)
			in.args = strings.TrimSpace(strings.Replace(a, " /out/", " ", 1))
		}
		want = append(want, dfInstr{cmd: in.cmd, args: in.args})
	}
	for i := range got {
		got[i].line = 0
	}
	if !slices.Equal(got, want) {
		t.Errorf("build.sh's Dockerfile:\n%v\nthe Dockerfile's final stage:\n%v", got, want)
	}
	for _, in := range got {
		if in.cmd != "COPY" {
			continue
		}
		f := strings.Fields(in.args)
		if _, err := os.Stat(filepath.Join(dir, f[len(f)-2])); err != nil {
			t.Errorf("COPY %s: %v", in.args, err)
		}
	}

	root := filepath.Join(dir, "rootfs")
	if a, b := fileHash(t, bin), fileHash(t, filepath.Join(root, "sharq")); a != b {
		t.Errorf("/sharq in build.sh's layout differs from the Dockerfile's go build output (%s, %s)", b, a)
	}
	var argv []string
	for _, in := range got {
		if in.cmd == "ENTRYPOINT" {
			json.Unmarshal([]byte(in.args), &argv)
		}
	}
	if len(argv) == 0 {
		t.Fatal("no ENTRYPOINT")
	}
	if entry, err := os.ReadFile(filepath.Join(root, argv[0])); err != nil {
		t.Error(err)
	} else if argv[0] != "/sharq" && !regexp.MustCompile(`(?m)^\s*("" \| -\*\)\s*)?exec /sharq "\$@"`).Match(entry) {
		t.Errorf("ENTRYPOINT %s does not exec /sharq with its arguments", argv[0])
	}

	// What the modules' scripts and wait strategies call, found on PATH as
	// the image sets it (owned/ holds the files the user may rewrite).
	// resolve follows symbolic links inside the layout, as the image's
	// file system would.
	resolve := func(base, p string) (string, os.FileInfo) {
		for range 8 {
			fi, err := os.Lstat(filepath.Join(base, p))
			if err != nil {
				return "", nil
			}
			if fi.Mode()&os.ModeSymlink == 0 {
				return filepath.Join(base, p), fi
			}
			target, err := os.Readlink(filepath.Join(base, p))
			if err != nil {
				return "", nil
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			p = target
		}
		return "", nil
	}
	lookup := func(name string) (string, os.FileInfo) {
		dirs := strings.Split(df.env["PATH"], ":")
		if strings.HasPrefix(name, "/") {
			dirs, name = []string{filepath.Dir(name)}, filepath.Base(name)
		}
		for _, d := range dirs {
			for _, base := range []string{root, filepath.Join(dir, "owned")} {
				if p, fi := resolve(base, filepath.Join(d, name)); fi != nil {
					return p, fi
				}
			}
		}
		return "", nil
	}
	for _, name := range []string{"sh", "bash", "sed", "hostname", "cat", "awk", "grep", "nc", "sleep", "cut", "tr", "head",
		"base64", "id", "kafka-storage", "zookeeper-server-start", "sharq", "/bin/sh", "/bin/bash",
		"/etc/kafka/docker/run", "/etc/confluent/docker/run", "/etc/confluent/docker/configure",
		"/etc/confluent/docker/ensure", "/etc/confluent/docker/launch"} {
		if p, fi := lookup(name); fi == nil {
			t.Errorf("%s: not in the image (PATH %s)", name, df.env["PATH"])
		} else if fi.Mode()&0o111 != 0o111 {
			t.Errorf("%s (%s): mode %v, want executable by everyone", name, p, fi.Mode())
		}
	}
	if _, fi := lookup("/etc/confluent/docker/bash-config"); fi == nil {
		t.Error("no /etc/confluent/docker/bash-config")
	}
	if fi, err := os.Stat(filepath.Join(root, "tmp")); err != nil || fi.Mode()&(os.ModeSticky|0o777) != os.ModeSticky|0o777 {
		t.Errorf("/tmp: %v %v, want drwxrwxrwt (the modules copy their start scripts there)", fi.Mode(), err)
	}
	if configure, err := os.ReadFile(filepath.Join(dir, "owned/etc/confluent/docker/configure")); err != nil || !bytes.HasSuffix(configure, []byte("\n")) ||
		bytes.Contains(configure, []byte("KAFKA_ZOOKEEPER_CONNECT")) {
		t.Errorf("configure must end in a newline (the modules append to it) and name no line they delete: %v", err)
	}
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
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

// testSameImage builds the image both ways, the Dockerfile (when its base
// images are on this machine: no registry is needed then) and build.sh's
// context, and compares their file systems entry by entry (path, type,
// mode, owner, link target, size) and their configuration.
func testSameImage(t *testing.T, src, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	for _, m := range regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(src, -1) {
		if m[1] == "scratch" {
			continue
		}
		if exec.CommandContext(ctx, "docker", "image", "inspect", m[1]).Run() != nil {
			t.Skipf("base image %s is not on this machine and no registry may be reachable: the Dockerfile is checked by its instructions, docker/build.sh's image by docker/docker_test.go", m[1])
		}
	}
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	fromFile, fromScript := "sharq-dockerfile-test:"+suffix, "sharq-buildsh-test:"+suffix
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", fromFile, fromScript).Run() })
	docker(t, ctx, "build", "-q", "-t", fromFile, "../..")
	docker(t, ctx, "build", "-q", "-t", fromScript, dir)
	a, b := imageListing(t, ctx, fromFile), imageListing(t, ctx, fromScript)
	if !slices.Equal(a, b) {
		t.Errorf("the images differ:\nDockerfile: %v\nbuild.sh:   %v", a, b)
	}
	for _, img := range []string{fromFile, fromScript} {
		size, err := strconv.ParseInt(docker(t, ctx, "image", "inspect", "-f", "{{.Size}}", img), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if size > maxImageBytes {
			t.Errorf("%s is %d bytes, over %d", img, size, maxImageBytes)
		}
	}
	cfg := `{{json .Config.Env}} {{json .Config.Entrypoint}} {{json .Config.Cmd}} {{.Config.User}} {{.Config.WorkingDir}} {{json .Config.Volumes}} {{json .Config.ExposedPorts}}`
	if x, y := docker(t, ctx, "image", "inspect", "-f", cfg, fromFile), docker(t, ctx, "image", "inspect", "-f", cfg, fromScript); x != y {
		t.Errorf("configuration differs:\nDockerfile: %s\nbuild.sh:   %s", x, y)
	}
}

// imageListing is every entry of an image's file system, from docker
// export of a container made from it (not started).
func imageListing(t *testing.T, ctx context.Context, img string) []string {
	t.Helper()
	id := docker(t, ctx, "create", img)
	defer exec.Command("docker", "rm", "-f", id).Run()
	cmd := exec.CommandContext(ctx, "docker", "export", id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var list []string
	tr := tar.NewReader(out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		// docker create adds these for every container.
		switch strings.TrimSuffix(h.Name, "/") {
		case ".dockerenv", "dev", "proc", "sys", "etc/hosts", "etc/hostname", "etc/resolv.conf", "etc/mtab":
			continue
		}
		if strings.HasPrefix(h.Name, "dev/") || strings.HasPrefix(h.Name, "proc/") || strings.HasPrefix(h.Name, "sys/") {
			continue
		}
		list = append(list, fmt.Sprintf("%s %c %o %d:%d %s %d", h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Linkname, h.Size))
	}
	slices.Sort(list)
	return list
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
	rootfs, err := os.ReadFile("../../docker/rootfs.sh")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goModVersion(t)
	if _, problems := checkDockerfile(string(src), goVersion, string(rootfs)); len(problems) > 0 {
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
		{"no 8081", `^EXPOSE .*`, "EXPOSE 9092 29092", "lacks 8081"},
		{"registry off", `KAFKA_SCHEMA_REGISTRY_LISTENERS=\S+`, "KAFKA_X=1", "schema registry on http://0.0.0.0:8081"},
		{"no volume", `^VOLUME .*`, "VOLUME /tmp", "is not a VOLUME"},
		{"no advertised listeners", `KAFKA_ADVERTISED_LISTENERS=\S+`, "KAFKA_X=1", "KAFKA_ADVERTISED_LISTENERS"},
		{"loopback listener", `KAFKA_LISTENERS=\S+`, "KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:9092", "0.0.0.0:9092"},
		{"SHARQ_* wins", `KAFKA_LISTENERS=\S+`, "SHARQ_LISTENERS=PLAINTEXT://127.0.0.1:9092", "0.0.0.0:9092"},
		{"shell entrypoint", `^ENTRYPOINT .*`, "ENTRYPOINT /sharq", "exec form"},
		{"other entrypoint", `^ENTRYPOINT .*`, `ENTRYPOINT ["/bin/sharq"]`, "not a file docker/rootfs.sh installs"},
		{"single stage", `^FROM scratch`, "", "multi-stage"},
		{"rootfs of another binary", `docker/rootfs.sh /out /out/sharq`, "docker/rootfs.sh /out /out/other", "not the go build output"},
		{"no rootfs", `docker/rootfs.sh /out`, "docker/other.sh /out", "no RUN ... docker/rootfs.sh"},
		{"rootfs not copied", `^COPY --from=build /out/rootfs/ /`, "COPY --from=build /out/rootfs/ /opt", "no COPY --from=build /out/rootfs/ /"},
		{"data dir owned by root", `^COPY --from=build --chown=65532:65532 /out/owned/var/lib/sharq`, "COPY --from=build /out/owned/var/lib/sharq", "want --chown=65532:65532"},
		{"start scripts moved", `/out/owned/etc/confluent/docker /etc/confluent/docker`, "/out/owned/etc/confluent/docker /etc/confluent", "want /etc/confluent/docker"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mutated := edit(t, c.re, c.repl)
			_, problems := checkDockerfile(mutated, goVersion, string(rootfs))
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("problems %q lack %q", problems, c.want)
			}
		})
	}
}
