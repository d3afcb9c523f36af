package main

// sharq ctl: the control API (broker/control.go) from a shell or a CI step.
//
//	sharq ctl [--addr URL] [--user U --password P] NOUN VERB [ARGS...]
//
// Each area adds its commands from init() with regCtl, as the broker's
// control routes register with regControl. The answer's JSON is printed
// as the broker sent it; a refusal prints its message and exits 1; a usage
// error exits 2.

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
)

// ctlCommand turns a command's arguments into one HTTP request.
type ctlCommand struct {
	words string // "node stop"
	usage string // "ID"
	help  string
	// build returns the method, the path below /api/v1/ and the JSON body
	// (nil for none); an error is a usage error.
	build func(args []string) (method, path string, body any, err error)
}

var ctlCommands []ctlCommand

func regCtl(c ctlCommand) { ctlCommands = append(ctlCommands, c) }

// errCtlUsage marks a usage error (exit 2).
var errCtlUsage = errors.New("usage")

func runCtl(args []string, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sharq ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr(environ, "SHARQ_CTL_ADDR", "http://localhost:9644"), "the broker's metrics.listener URL (env SHARQ_CTL_ADDR)")
	user := fs.String("user", envOr(environ, "SHARQ_CTL_USER", ""), "basic auth user (env SHARQ_CTL_USER)")
	pass := fs.String("password", envOr(environ, "SHARQ_CTL_PASSWORD", ""), "basic auth password (env SHARQ_CTL_PASSWORD)")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the answer")
	fs.Usage = func() { ctlUsage(fs, stderr) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	cmd, cargs := findCtl(rest)
	if cmd == nil {
		ctlUsage(fs, stderr)
		return 2
	}
	method, path, body, err := cmd.build(cargs)
	if err != nil {
		fmt.Fprintf(stderr, "sharq ctl %s: %v\nusage: sharq ctl %s %s\n", cmd.words, err, cmd.words, cmd.usage)
		return 2
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			fmt.Fprintln(stderr, "sharq ctl:", err)
			return 2
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, strings.TrimRight(*addr, "/")+"/api/v1/"+path, rd)
	if err != nil {
		fmt.Fprintln(stderr, "sharq ctl:", err)
		return 2
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if *user != "" {
		req.SetBasicAuth(*user, *pass)
	}
	resp, err := (&http.Client{Timeout: *timeout}).Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "sharq ctl:", err)
		return 1
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode >= 300 {
		var ce struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(out, &ce) == nil && ce.Message != "" {
			fmt.Fprintf(stderr, "sharq ctl %s: %s (HTTP %d)\n", cmd.words, ce.Message, resp.StatusCode)
		} else {
			fmt.Fprintf(stderr, "sharq ctl %s: HTTP %d: %s\n", cmd.words, resp.StatusCode, bytes.TrimSpace(out))
		}
		return 1
	}
	stdout.Write(out)
	return 0
}

// findCtl picks the command whose words start args, the longest first.
func findCtl(args []string) (*ctlCommand, []string) {
	var best *ctlCommand
	n := 0
	for i := range ctlCommands {
		w := strings.Fields(ctlCommands[i].words)
		if len(w) <= len(args) && len(w) > n && strings.Join(args[:len(w)], " ") == ctlCommands[i].words {
			best, n = &ctlCommands[i], len(w)
		}
	}
	return best, args[n:]
}

func ctlUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintln(w, "usage: sharq ctl [flags] COMMAND [ARGS...]\n\ncommands:")
	cmds := append([]ctlCommand(nil), ctlCommands...)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].words < cmds[j].words })
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-40s %s\n", c.words+" "+c.usage, c.help)
	}
	fmt.Fprintln(w, "\nflags:")
	fs.PrintDefaults()
}

func envOr(environ []string, key, def string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	if v, ok := os.LookupEnv(key); ok && environ == nil {
		return v
	}
	return def
}
