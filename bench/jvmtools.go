package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sharq/interop"
)

// Kafka's perf tools run with kafka-run-class.sh's default JVM flags
// (interop.KafkaToolJVMFlags), the same for every broker.

// ErrParse is returned when a tool's output lacks its summary.
var ErrParse = errors.New("perf tool output not understood")

// producerPerf is kafka-producer-perf-test's final summary line.
type producerPerf struct {
	Records       int64
	RecordsPerSec float64
	MBPerSec      float64
	AvgMs, MaxMs  float64
	P50, P95, P99 float64
	P999          float64
}

// "1000 records sent, 1234.5 records/sec (0.12 MB/sec), 5.67 ms avg latency,
// 89.00 ms max latency, 4 ms 50th, 10 ms 95th, 20 ms 99th, 80 ms 99.9th."
var producerSummary = regexp.MustCompile(`(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ` +
	`([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th`)

func parseProducerPerf(out string) (producerPerf, error) {
	var last []string
	for _, line := range strings.Split(out, "\n") {
		if m := producerSummary.FindStringSubmatch(line); m != nil {
			last = m
		}
	}
	if last == nil {
		return producerPerf{}, fmt.Errorf("%w: no producer summary line", ErrParse)
	}
	var p producerPerf
	var err error
	p.Records, err = strconv.ParseInt(last[1], 10, 64)
	if err != nil {
		return producerPerf{}, fmt.Errorf("%w: records %q", ErrParse, last[1])
	}
	fs := []*float64{&p.RecordsPerSec, &p.MBPerSec, &p.AvgMs, &p.MaxMs, &p.P50, &p.P95, &p.P99, &p.P999}
	for i, dst := range fs {
		if *dst, err = strconv.ParseFloat(last[i+2], 64); err != nil {
			return producerPerf{}, fmt.Errorf("%w: field %q", ErrParse, last[i+2])
		}
	}
	return p, nil
}

// parseConsumerPerf reads the header and data line that
// kafka-consumer-perf-test and kafka-share-consumer-perf-test print
// ("start.time, end.time, data.consumed.in.MB, MB.sec, ...") into a map by
// column name. Only the first data line after the header is read.
func parseConsumerPerf(out string) (map[string]string, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	var header []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if header == nil {
			if strings.HasPrefix(line, "start.time") {
				header = splitCSV(line)
			}
			continue
		}
		vals := splitCSV(line)
		if len(vals) != len(header) {
			continue // a warning line between header and data
		}
		m := make(map[string]string, len(header))
		for i, h := range header {
			m[h] = vals[i]
		}
		return m, nil
	}
	if header == nil {
		return nil, fmt.Errorf("%w: no start.time header", ErrParse)
	}
	return nil, fmt.Errorf("%w: no data line under the header", ErrParse)
}

func splitCSV(line string) []string {
	f := strings.Split(line, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// consumerFigures picks records/s and MB/s from a consumer perf map. The
// fetch.* columns (time spent fetching, rebalance excluded) are preferred
// where the tool prints them, to match the franz-go consumer, which has no
// group to join.
func consumerFigures(m map[string]string, want int64) (recPerSec, mbPerSec float64, err error) {
	get := func(keys ...string) (float64, error) {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return 0, fmt.Errorf("%w: %s=%q", ErrParse, k, v)
				}
				return f, nil
			}
		}
		return 0, fmt.Errorf("%w: none of %v", ErrParse, keys)
	}
	n, err := get("data.consumed.in.nMsg")
	if err != nil {
		return 0, 0, err
	}
	if int64(n) < want {
		return 0, 0, fmt.Errorf("consumed %d of %d records", int64(n), want)
	}
	if recPerSec, err = get("fetch.nMsg.sec", "nMsg.sec"); err != nil {
		return 0, 0, err
	}
	if mbPerSec, err = get("fetch.MB.sec", "MB.sec"); err != nil {
		return 0, 0, err
	}
	return recPerSec, mbPerSec, nil
}

// runTool runs a perf tool. A failure's first line is short (it ends up in
// a table cell); the lines after it carry the full output for the log.
func runTool(ctx context.Context, j *interop.Java, cls string, args ...string) (string, error) {
	res, err := j.RunWithFlags(ctx, interop.KafkaToolJVMFlags, cls, args...)
	if err != nil {
		short := cls[strings.LastIndexByte(cls, '.')+1:]
		return "", fmt.Errorf("%s exit %d: %s\n%w\nstdout:\n%s\nstderr:\n%s", short, res.ExitCode,
			cause(res.Stderr), err, tail(res.Stdout, 2000), tail(res.Stderr, 2000))
	}
	return res.Stdout, nil
}

// cause picks the most telling line of a JVM's stderr: the last exception
// message ("Caused by: ..." or "x.y.SomeException: ..."), else the last line.
func cause(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "at ") || strings.HasPrefix(l, "...") {
			continue
		}
		if strings.Contains(l, "Exception") || strings.Contains(l, "Error") {
			last = l
		}
	}
	if last == "" && len(lines) > 0 {
		last = strings.TrimSpace(lines[len(lines)-1])
	}
	return strings.TrimPrefix(last, "Caused by: ")
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func jvmProduce(ctx context.Context, j *interop.Java, addr, topic string, n, size int) (producerPerf, error) {
	out, err := runTool(ctx, j, interop.ClassProducerPerf,
		"--bootstrap-server", addr, "--topic", topic,
		"--num-records", strconv.Itoa(n), "--record-size", strconv.Itoa(size),
		"--throughput", "-1", "--command-property", "acks=all")
	if err != nil {
		return producerPerf{}, err
	}
	p, err := parseProducerPerf(out)
	if err != nil {
		return producerPerf{}, fmt.Errorf("%w\n%s", err, tail(out, 2000))
	}
	if p.Records != int64(n) {
		return producerPerf{}, fmt.Errorf("producer perf sent %d of %d records", p.Records, n)
	}
	return p, nil
}

const classConsumerPerf = "org.apache.kafka.tools.ConsumerPerformance"

func jvmConsume(ctx context.Context, j *interop.Java, addr, topic, group string, n int) (float64, float64, error) {
	out, err := runTool(ctx, j, classConsumerPerf,
		"--bootstrap-server", addr, "--topic", topic, "--group", group,
		"--num-records", strconv.Itoa(n), "--timeout", "30000")
	if err != nil {
		return 0, 0, err
	}
	m, err := parseConsumerPerf(out)
	if err != nil {
		return 0, 0, fmt.Errorf("%w\n%s", err, tail(out, 2000))
	}
	return consumerFigures(m, int64(n))
}

func jvmShareConsume(ctx context.Context, j *interop.Java, addr, topic, group string, threads, n int) (float64, error) {
	out, err := runTool(ctx, j, interop.ClassShareConsumerPerf,
		"--bootstrap-server", addr, "--topic", topic, "--group", group,
		"--threads", strconv.Itoa(threads), "--num-records", strconv.Itoa(n), "--timeout", "30000")
	if err != nil {
		return 0, err
	}
	m, err := parseConsumerPerf(out)
	if err != nil {
		return 0, fmt.Errorf("%w\n%s", err, tail(out, 2000))
	}
	rps, _, err := consumerFigures(m, int64(n))
	return rps, err
}
