// Command kfake runs franz-go's pkg/kfake as a standalone single-broker
// server for the side-by-side benchmark (sharq/bench). It listens on
// 127.0.0.1:-port, persists to -data-dir (kfake writes segments to disk there,
// relying on the page cache like Kafka's default), prints
// "ready listeners=PLAINTEXT://host:port" once listening, and exits on
// SIGTERM or SIGINT after closing the cluster (which flushes its data).
//
// It is kept in sharq's module so the benchmark builds it with `go build`
// from the pinned kfake version in go.mod.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "listener port on 127.0.0.1 (0: any free port)")
	dataDir := flag.String("data-dir", "", "persistence directory (empty: memory only)")
	flag.Parse()

	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(*port),
	}
	if *dataDir != "" {
		opts = append(opts, kfake.DataDir(*dataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake: %v\n", err)
		os.Exit(1)
	}
	addrs := c.ListenAddrs()
	if len(addrs) == 0 {
		fmt.Fprintln(os.Stderr, "kfake: no listener")
		os.Exit(1)
	}
	fmt.Printf("ready listeners=PLAINTEXT://%s\n", addrs[0])

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	done := make(chan struct{})
	go func() {
		c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-sigs:
		os.Exit(1)
	}
}
