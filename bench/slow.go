package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/interop"
)

// The "share, slow consumers" section: share consumers that spend a fixed
// time on each record, joined before any record exists; the records are
// then produced in 16 KB batches (Kafka's producer default). How the broker
// hands records to members decides these rows, not CPU: parallel
// efficiency is the ideal time (records x delay / consumers) over the time
// taken from the first record delivered to the last processed.

const secSlow = "Share groups, slow consumers"

// slowBatchBytes is the producer batch size of the slow rows.
const slowBatchBytes = 16384

func slowWorkloads(cfg config) []workload {
	var ws []workload
	const parts = 2
	delay := time.Millisecond
	n := cfg.ShareSlowRecords
	for _, cons := range []int{3, 10} {
		shape := fmt.Sprintf("%d consumers, %d partitions, 1 ms per record, 16 KB batches produced after the join", cons, parts)
		name := "franz-go share, slow consumers, " + shape
		ws = append(ws, workload{
			name: name, needs: needsShareDescribe,
			metrics: []metricDef{
				{secSlow, name + ": parallel efficiency", "ideal time / time taken", true},
				{secSlow, name + ": throughput", "records/s", true},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				topic, group := freshShare("slow", parts)
				if err := prepSlow(ctx, e, topic, group, parts); err != nil {
					return nil, err
				}
				r, err := goShareRun(ctx, e.addr, topic, group, shareRun{consumers: cons, n: n, proc: delay,
					started: func(ctx context.Context) error {
						return joinThenProduce(ctx, e, topic, group, cons, n)
					}})
				if err != nil {
					return nil, err
				}
				e.log.Info("slow consumers", "broker", e.broker, "consumers", cons, "per_consumer", r.per, "spans", r.spans)
				return []float64{efficiency(n, cons, delay, r.elapsed), r.rate}, nil
			},
		})
		jname := "Java KafkaShareConsumer, slow consumers, " + shape
		ws = append(ws, workload{
			name: jname, needs: needsShareDescribe, jvm: true,
			metrics: []metricDef{
				{secSlow, jname + ": parallel efficiency", "ideal time / time taken", true},
				{secSlow, jname + ": throughput", "records/s", true},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				topic, group := freshShare("jslow", parts)
				if err := prepSlow(ctx, e, topic, group, parts); err != nil {
					return nil, err
				}
				elapsed, per, err := jvmSlowShare(ctx, e, topic, group, cons, n, delay)
				if err != nil {
					return nil, err
				}
				e.log.Info("slow consumers", "broker", e.broker, "consumers", cons, "per_consumer", per)
				return []float64{efficiency(n, cons, delay, elapsed), float64(n-1) / elapsed.Seconds()}, nil
			},
		})
	}
	// The per-request cost: small polls that flush their acks each time,
	// so every 100 records cost a ShareFetch and a ShareAcknowledge.
	pname := "franz-go share, 3 consumers, 2 partitions, 16 KB batches, poll 100 records and flush acks each time"
	ws = append(ws, workload{
		name: pname, needs: needsShare,
		metrics: []metricDef{{secShare, pname, "records/s", true}},
		run: func(ctx context.Context, e *env) ([]float64, error) {
			topic := fmt.Sprintf("share16k-p%d", parts)
			group := fmt.Sprintf("bench-poll100-%d", time.Now().UnixNano())
			fill := max(cfg.ShareRecords, cfg.ShareSlowRecords, cfg.SharePollRecords) * 11 / 10
			if !e.filled[topic] {
				if err := e.ensureTopic(ctx, topic, parts); err != nil {
					return nil, err
				}
				if _, err := goProduce(ctx, e.addr, topic, fill, cfg.ShareValueSize, kgo.ProducerBatchMaxBytes(slowBatchBytes)); err != nil {
					return nil, fmt.Errorf("fill %s: %w", topic, err)
				}
				e.filled[topic] = true
			}
			if err := setShareEarliest(ctx, e.addr, group); err != nil {
				return nil, err
			}
			e.measureFromHere()
			r, err := goShareRun(ctx, e.addr, topic, group, shareRun{consumers: 3, n: cfg.SharePollRecords, poll: 100})
			return []float64{r.rate}, err
		},
	})
	return ws
}

var needsShareDescribe = append(append([]int16(nil), needsShare...), keyShareGroupDescribe)

const keyShareGroupDescribe = 77

// efficiency is the ideal time of n records at delay each over consumers,
// divided by the time taken.
func efficiency(n, consumers int, delay, took time.Duration) float64 {
	ideal := time.Duration(n) * delay / time.Duration(consumers)
	return ideal.Seconds() / took.Seconds()
}

// freshShare names a new topic and group for one run.
func freshShare(prefix string, parts int) (topic, group string) {
	ts := time.Now().UnixNano()
	return fmt.Sprintf("%s-p%d-%d", prefix, parts, ts), fmt.Sprintf("bench-%s-%d", prefix, ts)
}

// prepSlow creates the (empty) topic and sets the group to start from the
// earliest offset, so no record produced while a share-partition is being
// initialised is skipped.
func prepSlow(ctx context.Context, e *env, topic, group string, parts int) error {
	if err := e.ensureTopic(ctx, topic, int32(parts)); err != nil {
		return err
	}
	if err := setShareEarliest(ctx, e.addr, group); err != nil {
		return err
	}
	e.measureFromHere()
	return nil
}

// joinThenProduce waits until the share group has consumers members with
// every partition assigned, then produces n records in 16 KB batches.
func joinThenProduce(ctx context.Context, e *env, topic, group string, consumers, n int) error {
	if err := waitShareMembers(ctx, e.addr, group, consumers); err != nil {
		return err
	}
	// Round robin: both partitions get the same number of records, so
	// the rows measure how the broker spreads them over members, not how
	// a sticky partitioner spread them over partitions.
	if _, err := goProduce(ctx, e.addr, topic, n, e.cfg.ShareValueSize, kgo.ProducerBatchMaxBytes(slowBatchBytes),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner())); err != nil {
		return fmt.Errorf("produce to %s: %w", topic, err)
	}
	return nil
}

// waitShareMembers polls ShareGroupDescribe until group has members
// members, each with at least one partition assigned, and the partitions
// have the same number of members give or take one (a group that joins one
// member at a time may pass through lopsided assignments; one that stays
// lopsided for settleFor is taken as it is).
func waitShareMembers(ctx context.Context, addr, group string, members int) error {
	// A broker that never assigns them (kfake and the Java client) fails
	// the row in a minute, not at the workload timeout.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer cl.Close()
	last := "no answer"
	const settleFor = 10 * time.Second
	settle := time.Now().Add(settleFor)
	for {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{group}
		resp, err := req.RequestWith(ctx, cl)
		switch {
		case err != nil:
			last = err.Error()
		case len(resp.Groups) != 1:
			last = fmt.Sprintf("%d groups described", len(resp.Groups))
		default:
			g := resp.Groups[0]
			assigned := 0
			perPartition := map[int32]int{}
			for _, m := range g.Members {
				if len(m.Assignment.TopicPartitions) > 0 {
					assigned++
				}
				for _, tp := range m.Assignment.TopicPartitions {
					for _, p := range tp.Partitions {
						perPartition[p]++
					}
				}
			}
			lo, hi := members, 0
			for _, n := range perPartition {
				lo, hi = min(lo, n), max(hi, n)
			}
			if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
				last = err.Error()
			} else if assigned >= members && (hi-lo <= 1 || time.Now().After(settle)) {
				// Balanced (members per partition within one), or as
				// balanced as the assignor gets in settleFor.
				return nil
			} else {
				last = fmt.Sprintf("%d of %d members assigned, members per partition %v", assigned, members, perPartition)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("share group %s never had %d members assigned (%s): %w", group, members, last, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The Java slow consumer (interop/java/SlowShareConsumer.java), compiled
// once per bench process against Kafka 4.4's clients.
var slowJava struct {
	once sync.Once
	cp   []string
	err  error
}

func slowJavaClasspath(ctx context.Context, e *env) ([]string, error) {
	slowJava.once.Do(func() {
		lib := interop.LibDir(interop.CacheDir(), "kafka-"+interop.KafkaVersion)
		if !interop.JarsComplete(lib) {
			slowJava.err = fmt.Errorf("Kafka %s jars missing in %s (run interop/fetch-jars.sh)", interop.KafkaVersion, lib)
			return
		}
		out := filepath.Join(e.cfg.WorkDir, "classes-slowshare")
		src := filepath.Join(e.cfg.ModuleDir, "interop", "java", "SlowShareConsumer.java")
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := e.java.Javac(cctx, []string{filepath.Join(lib, "kafka-clients-"+interop.KafkaVersion+".jar")}, out, src); err != nil {
			slowJava.err = fmt.Errorf("compile SlowShareConsumer: %w", err)
			return
		}
		slowJava.cp = []string{out, filepath.Join(lib, "*")}
	})
	return slowJava.cp, slowJava.err
}

var slowJavaDone = regexp.MustCompile(`done records=(\d+) elapsed_ms=([\d.]+) per_consumer=([\d,]+)`)

// jvmSlowShare runs SlowShareConsumer with consumers threads, produces n
// records once they joined, and returns the time from the first record
// delivered to the n-th processed, as the program measured it.
func jvmSlowShare(ctx context.Context, e *env, topic, group string, consumers, n int, delay time.Duration) (time.Duration, string, error) {
	cp, err := slowJavaClasspath(ctx, e)
	if err != nil {
		return 0, "", err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		res interop.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := e.java.RunClasspath(ctx, nil, cp, "SlowShareConsumer", e.addr, topic, group,
			strconv.Itoa(consumers), strconv.Itoa(n), strconv.FormatInt(delay.Milliseconds(), 10))
		done <- result{res, err}
	}()
	if err := joinThenProduce(ctx, e, topic, group, consumers, n); err != nil {
		cancel()
		r := <-done
		return 0, "", fmt.Errorf("%w\nstderr:\n%s", err, tail(r.res.Stderr, 2000))
	}
	// Ten times the ideal time and a minute more is a hang, not a figure.
	limit := time.AfterFunc(time.Minute+10*time.Duration(n)*delay/time.Duration(consumers), cancel)
	defer limit.Stop()
	r := <-done
	if r.err != nil {
		return 0, "", fmt.Errorf("SlowShareConsumer: %s\n%w\nstdout:\n%s\nstderr:\n%s", cause(r.res.Stderr), r.err, tail(r.res.Stdout, 2000), tail(r.res.Stderr, 2000))
	}
	m := slowJavaDone.FindStringSubmatch(r.res.Stdout)
	if m == nil {
		return 0, "", errors.New("SlowShareConsumer printed no done line\n" + tail(r.res.Stdout, 2000))
	}
	ms, err := strconv.ParseFloat(m[2], 64)
	if err != nil || ms <= 0 {
		return 0, "", fmt.Errorf("SlowShareConsumer elapsed %q", m[2])
	}
	return time.Duration(ms * float64(time.Millisecond)), m[3], nil
}
