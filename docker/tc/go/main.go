// Command tc is the Go side of sharq's drop-in container tests (docker/
// docker_test.go runs it; it is a module of its own so that
// testcontainers-go and its dependencies stay out of sharq's go.mod):
//
//	tc client BOOTSTRAP NAME [N]   the client check (check.go) against
//	                               BOOTSTRAP; built static, it also runs in
//	                               a container on a module's network
//	tc module IMAGE                testcontainers-go's kafka module, unchanged,
//	                               started with IMAGE, put through the check
//	                               from the host and (through the test) from
//	                               the module's Docker network
//
// The module programs of every language speak one line protocol with the
// test on stdout and stdin (see docker/docker_test.go).
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/kafka"
	"github.com/testcontainers/testcontainers-go/network"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: tc client BOOTSTRAP NAME [N] | tc module IMAGE")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "client":
		n := 20
		if len(os.Args) > 4 {
			if n, err = strconv.Atoi(os.Args[4]); err != nil || n < 1 {
				fmt.Fprintln(os.Stderr, "tc client: N must be a positive number")
				os.Exit(2)
			}
		}
		if len(os.Args) < 4 {
			fmt.Fprintln(os.Stderr, "usage: tc client BOOTSTRAP NAME [N]")
			os.Exit(2)
		}
		start := time.Now()
		if err = check(ctx, os.Args[2], os.Args[3], n, nil); err == nil {
			fmt.Printf("client %s: %d records produced, read by a consumer group and a share group in %v\n",
				os.Args[3], n, time.Since(start).Round(time.Millisecond))
		}
	case "module":
		if err = module(ctx, os.Args[2]); err == nil {
			fmt.Println("SHARQTC done")
		}
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tc:", err)
		os.Exit(1)
	}
}

func module(ctx context.Context, image string) error {
	nw, err := network.New(ctx)
	if err != nil {
		return fmt.Errorf("network: %w", err)
	}
	defer nw.Remove(context.Background())

	start := time.Now()
	kc, err := kafka.Run(ctx, image, network.WithNetwork([]string{"kafka"}, nw))
	// PID 1 is the module's `sh -c`, which ignores SIGTERM (as with Kafka's
	// images): stop at once instead of waiting out docker stop's 10 s.
	defer testcontainers.TerminateContainer(kc, testcontainers.StopTimeout(0))
	if err != nil {
		return fmt.Errorf("kafka.Run: %w", err)
	}
	started := time.Since(start)
	brokers, err := kc.Brokers(ctx)
	if err != nil {
		return err
	}
	var first time.Duration
	if err := check(ctx, brokers[0], "go-host", 20, func() { first = time.Since(start) }); err != nil {
		return fmt.Errorf("from the host (%s): %w", brokers[0], err)
	}
	fmt.Printf("SHARQTC timing start-ms=%d first-record-ms=%d\n", started.Milliseconds(), first.Milliseconds())
	// The module's BROKER listener, port 9092, advertised under the
	// container's host name; "kafka" is its network alias.
	return ask("check network " + nw.Name + " kafka:9092 go-network")
}

// ask prints a SHARQTC request and waits for the test's answer.
func ask(req string) error {
	fmt.Println("SHARQTC " + req)
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		return fmt.Errorf("%s: no answer: %w", req, err)
	}
	if line = strings.TrimSpace(line); line != "ok" {
		return fmt.Errorf("%s: %s", req, line)
	}
	return nil
}
