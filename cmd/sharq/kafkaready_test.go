package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKafkaReadyLines: configured through KAFKA_* variables, sharq prints,
// after its ready line and while its listener accepts, a line each
// Testcontainers module's log wait matches (the modules' own regular
// expressions); configured the sharq way it prints the ready line alone.
func TestKafkaReadyLines(t *testing.T) {
	waits := map[string]*regexp.Regexp{
		"java, go":           regexp.MustCompile(`.*Transitioning from RECOVERY to RUNNING.*`),
		"python kraft":       regexp.MustCompile(`.*Kafka Server started.*`),
		"python zookeeper":   regexp.MustCompile(`.*\[KafkaServer id=\d+\] started.*`),
		"log4j layout, id 3": regexp.MustCompile(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] INFO \[\w+ (id|nodeId)=3\] `),
	}
	for _, tc := range []struct {
		name  string
		env   []string
		kafka bool
	}{
		{"KAFKA_*", []string{"KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:0", "KAFKA_NODE_ID=3"}, true},
		{"SHARQ_*", []string{"SHARQ_LISTENERS=PLAINTEXT://127.0.0.1:0", "SHARQ_NODE_ID=3"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(tc.env, "SHARQ_LOG_DIRS="+t.TempDir())
			r, w := io.Pipe()
			stop := make(chan os.Signal, 1)
			code := make(chan int, 1)
			go func() {
				code <- run(nil, env, w, io.Discard, stop)
				w.Close()
			}()
			sc := bufio.NewScanner(r)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if len(lines) == 1 {
					addr := strings.TrimPrefix(lines[0], "ready listeners=PLAINTEXT://")
					conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
					if err != nil {
						t.Errorf("dial %s after the ready line: %v", addr, err)
					} else {
						conn.Close()
					}
					if !tc.kafka {
						stop <- syscall.SIGTERM
					}
				}
				if tc.kafka && len(lines) == 4 {
					stop <- syscall.SIGTERM
				}
			}
			if c := <-code; c != 0 {
				t.Fatalf("exit code %d; stdout %q", c, lines)
			}
			if len(lines) == 0 || !strings.HasPrefix(lines[0], "ready listeners=") {
				t.Fatalf("stdout %q: want the ready line first", lines)
			}
			if !tc.kafka {
				if len(lines) != 1 {
					t.Errorf("stdout %q: want the ready line alone", lines)
				}
				return
			}
			for name, re := range waits {
				n := 0
				for _, l := range lines[1:] {
					if re.MatchString(l) {
						n++
					}
				}
				want := 1
				if strings.HasPrefix(name, "log4j") {
					want = 3
				}
				if n != want {
					t.Errorf("%s: %d lines match %s, want %d\n%s", name, n, re, want, strings.Join(lines, "\n"))
				}
			}
		})
	}
}
