package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestKgoSuite runs franz-go's own kgo tests (the package of the franz-go
// version in go.mod, from the module cache) against each target with
// KGO_SEEDS and KGO_TEST_RF=1, and reports how many top-level tests pass,
// fail and skip. It takes minutes, so it runs only with SHARQ_KGO_SUITE=1
// (interop/kgo-suite.sh), never in CI's default path. SHARQ_KGO_SUITE_RUN
// passes a -run pattern through, to run one of its tests against a broker.
func TestKgoSuite(t *testing.T) {
	if os.Getenv("SHARQ_KGO_SUITE") != "1" {
		t.Skip("set SHARQ_KGO_SUITE=1 (or run interop/kgo-suite.sh) to run franz-go's kgo suite")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/twmb/franz-go").Output()
	if err != nil {
		t.Fatalf("locate franz-go in the module cache: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "pkg", "kgo")
	for _, name := range targetNames(t) {
		t.Run(name, func(t *testing.T) {
			tg := startTarget(t, name)
			timeout := 30 * time.Minute
			ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
			defer cancel()
			args := []string{"test", "-count=1", "-json", "-timeout", timeout.String()}
			if run := os.Getenv("SHARQ_KGO_SUITE_RUN"); run != "" {
				args = append(args, "-run", run)
			}
			cmd := exec.CommandContext(ctx, "go", append(args, ".")...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "KGO_SEEDS="+tg.Bootstrap, "KGO_TEST_RF=1", "GOWORK=off", "GOFLAGS=-mod=mod")
			if v := os.Getenv("KGO_TEST_RECORDS"); v != "" {
				cmd.Env = append(cmd.Env, "KGO_TEST_RECORDS="+v)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			runErr := cmd.Run()
			res := map[string]string{}
			output := map[string][]string{}
			sc := bufio.NewScanner(&stdout)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				var ev struct{ Action, Test, Output string }
				if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" {
					continue
				}
				top, _, sub := strings.Cut(ev.Test, "/")
				if ev.Action == "output" {
					output[top] = append(output[top], ev.Output)
					continue
				}
				if sub {
					continue
				}
				switch ev.Action {
				case "pass", "fail", "skip":
					res[ev.Test] = ev.Action
				}
			}
			counts := map[string][]string{}
			for test, r := range res {
				counts[r] = append(counts[r], test)
			}
			for _, l := range counts {
				sort.Strings(l)
			}
			summary := fmt.Sprintf("%s: franz-go kgo suite in %v: %d passed, %d failed, %d skipped of %d (go test: %v)\nfailed: %v\nskipped: %v\n",
				name, time.Since(start).Round(time.Second), len(counts["pass"]), len(counts["fail"]), len(counts["skip"]), len(res), runErr, counts["fail"], counts["skip"])
			// A failure's last lines of output say why, without the
			// whole -json stream.
			for _, test := range counts["fail"] {
				lines := output[test]
				if len(lines) > 20 {
					lines = lines[len(lines)-20:]
				}
				summary += fmt.Sprintf("--- %s (last lines):\n%s", test, strings.Join(lines, ""))
			}
			t.Log(summary)
			if f := os.Getenv("SHARQ_KGO_SUITE_OUT"); f != "" {
				fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err == nil {
					fh.WriteString(summary)
					fh.Close()
				}
			}
			if len(res) == 0 {
				t.Fatalf("no test results\n%s", stderr.String())
			}
		})
	}
}
