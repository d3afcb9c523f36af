package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/interop"
)

// errNotFilled: a fetch workload reads what the franz-go producer wrote.
var errNotFilled = errors.New("the franz-go producer did not fill the topic")

// env is what a workload gets: one running broker.
type env struct {
	cfg    config
	broker string
	addr   string
	java   *interop.Java // nil: no JVM clients
	log    *slog.Logger
	topics map[string]bool // created in this broker session
	filled map[string]bool // share topics already filled

	tlsAddr string       // the SSL listener, "" without one (tls.go)
	tlsMat  *tlsMaterial // its certificate

	pid     int           // the broker process
	cpuFrom time.Duration // its CPU time when the running workload's measured part began
}

func (e *env) ensureTopic(ctx context.Context, topic string, partitions int32) error {
	if e.topics[topic] {
		return nil
	}
	if err := createTopic(ctx, e.addr, topic, partitions); err != nil {
		return err
	}
	e.topics[topic] = true
	return nil
}

// workload is one measured step. It declares the API keys it needs, so a
// broker that does not advertise them is reported n/a instead of failing,
// and the rows it fills, so those rows exist even when it cannot run.
type workload struct {
	name    string // also the label of its peak RSS row
	needs   []int16
	jvm     bool // uses Kafka's Java tools
	tls     bool // runs on the broker's SSL listener (tls.go)
	compact bool // needs a log cleaner (compaction.go); kfake has none
	metrics []metricDef
	run     func(ctx context.Context, e *env) ([]float64, error) // one value per metric, in order
}

// missing names the keys of needs that apis lacks.
func missing(apis map[int16]int16, needs []int16) []string {
	var out []string
	for _, k := range needs {
		if _, ok := apis[k]; !ok {
			name := kmsg.NameForKey(k)
			if name == "" {
				name = fmt.Sprintf("key %d", k)
			}
			out = append(out, name)
		}
	}
	return out
}

// API keys by name, as kmsg numbers them.
const (
	keyProduce             = 0
	keyFetch               = 1
	keyListOffsets         = 2
	keyMetadata            = 3
	keyOffsetCommit        = 8
	keyOffsetFetch         = 9
	keyFindCoordinator     = 10
	keyJoinGroup           = 11
	keyHeartbeat           = 12
	keySyncGroup           = 14
	keyInitProducerID      = 22
	keyEndTxn              = 26
	keyShareGroupHeartbeat = 76
	keyShareFetch          = 78
	keyShareAcknowledge    = 79
)

var (
	needsProduce  = []int16{keyProduce, keyMetadata, keyInitProducerID}
	needsFetch    = []int16{keyFetch, keyListOffsets, keyMetadata}
	needsGroupCon = []int16{keyFetch, keyListOffsets, keyFindCoordinator, keyJoinGroup, keySyncGroup, keyHeartbeat, keyOffsetFetch, keyOffsetCommit}
	needsShare    = []int16{keyShareFetch, keyShareAcknowledge, keyShareGroupHeartbeat, keyFindCoordinator}
	needsTxn      = []int16{keyProduce, keyMetadata, keyInitProducerID, keyFindCoordinator, keyEndTxn}
)

// txnRecords is the size of a transaction in the transactional workloads.
const txnRecords = 1000

func sizeLabel(size int) string {
	if size%1024 == 0 {
		return fmt.Sprintf("%d KB", size/1024)
	}
	return fmt.Sprintf("%d B", size)
}

func goTopic(size int) string { return fmt.Sprintf("go-%d", size) }

// buildWorkloads lists the workloads of one broker session, in order. The
// fetch workloads read what the franz-go producer wrote, so they follow it.
func buildWorkloads(cfg config) []workload {
	var ws []workload
	for _, size := range cfg.ValueSizes {
		n := cfg.ProduceRecords[size]
		lbl := sizeLabel(size)
		topic := fmt.Sprintf("perf-%d", size)
		name := "kafka-producer-perf-test " + lbl
		ws = append(ws, workload{
			name: name, needs: needsProduce, jvm: true,
			metrics: []metricDef{
				{secProduce, name + ": throughput", "records/s", true},
				{secProduce, name + ": avg latency", "ms", false},
				{secProduce, name + ": p50 latency", "ms", false},
				{secProduce, name + ": p99 latency", "ms", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if err := e.ensureTopic(ctx, topic, 3); err != nil {
					return nil, err
				}
				p, err := jvmProduce(ctx, e.java, e.addr, topic, n, size)
				if err != nil {
					return nil, err
				}
				return []float64{p.RecordsPerSec, p.AvgMs, p.P50, p.P99}, nil
			},
		})
	}
	for _, size := range cfg.ValueSizes {
		n := cfg.ProduceRecords[size]
		lbl := sizeLabel(size)
		topic := goTopic(size)
		name := "franz-go producer " + lbl
		ws = append(ws, workload{
			name: name, needs: needsProduce,
			metrics: []metricDef{
				{secProduce, name + ": throughput", "records/s", true},
				{secProduce, name + ": p50 latency", "ms", false},
				{secProduce, name + ": p99 latency", "ms", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if err := e.ensureTopic(ctx, topic, 3); err != nil {
					return nil, err
				}
				p, err := goProduce(ctx, e.addr, topic, n, size, cfg.producerCompression()...)
				if err != nil {
					return nil, err
				}
				e.filled[topic] = true
				return []float64{p.RecordsPerSec, p.P50, p.P99}, nil
			},
		})
	}
	for _, size := range cfg.ValueSizes {
		if size != 100 {
			continue
		}
		n := max(cfg.ProduceRecords[size]/txnRecords, 1) * txnRecords
		lbl := sizeLabel(size)
		topic := fmt.Sprintf("go-txn-%d", size)
		name := "franz-go transactional producer " + lbl + ", 1,000-record transactions"
		ws = append(ws, workload{
			name: name, needs: needsTxn,
			metrics: []metricDef{
				{secProduce, name + ": throughput", "records/s", true},
				{secProduce, name + ": commit p50 latency", "ms", false},
				{secProduce, name + ": commit p99 latency", "ms", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if err := e.ensureTopic(ctx, topic, 3); err != nil {
					return nil, err
				}
				p, err := goTxnProduce(ctx, e.addr, topic, n, size, txnRecords)
				if err != nil {
					return nil, err
				}
				e.filled[topic] = true
				return []float64{p.RecordsPerSec, p.P50, p.P99}, nil
			},
		})
		cname := "franz-go read_committed consumer " + lbl + " (transactional topic)"
		ws = append(ws, workload{
			name: cname, needs: needsFetch,
			metrics: []metricDef{
				{secFetch, cname + ": throughput", "records/s", true},
				{secFetch, cname + ": bandwidth", "MB/s", true},
				{secFetch, cname + ": time waiting for Fetch responses", "ms", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if !e.filled[topic] {
					return nil, errNotFilled
				}
				r, err := goConsumeTimed(ctx, e.addr, topic, n, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
				if err != nil {
					return nil, err
				}
				return []float64{r.rate, r.mbPerSec, r.fetchWaitMs}, nil
			},
		})
	}
	for _, size := range cfg.ValueSizes {
		n := cfg.ProduceRecords[size]
		lbl := sizeLabel(size)
		topic := goTopic(size)
		name := "kafka-consumer-perf-test " + lbl
		ws = append(ws, workload{
			name: name, needs: needsGroupCon, jvm: true,
			metrics: []metricDef{
				{secFetch, name + ": throughput", "records/s", true},
				{secFetch, name + ": bandwidth", "MB/s", true},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if !e.filled[topic] {
					return nil, errNotFilled
				}
				group := fmt.Sprintf("bench-consumer-%d-%d", size, time.Now().UnixNano())
				r, mb, err := jvmConsume(ctx, e.java, e.addr, topic, group, n)
				if err != nil {
					return nil, err
				}
				return []float64{r, mb}, nil
			},
		})
		gname := "franz-go consumer " + lbl
		ws = append(ws, workload{
			name: gname, needs: needsFetch,
			metrics: []metricDef{
				{secFetch, gname + ": throughput", "records/s", true},
				{secFetch, gname + ": bandwidth", "MB/s", true},
				{secFetch, gname + ": time waiting for Fetch responses", "ms", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if !e.filled[topic] {
					return nil, errNotFilled
				}
				r, err := goConsumeTimed(ctx, e.addr, topic, n)
				if err != nil {
					return nil, err
				}
				return []float64{r.rate, r.mbPerSec, r.fetchWaitMs}, nil
			},
		})
	}
	for _, parts := range cfg.SharePartitions {
		// Two fills of the same records: franz-go's default producer (up to
		// 1 MB batches, thousands of records each) and Kafka's producer
		// default batch.size of 16 KB (about 120 records of 100 B). Share
		// groups hand out whole log batches (KIP-932's batch-optimised
		// acquisition), so the batch size decides how many records one
		// member takes at a time: both shapes are measured.
		// A tenth more than any run consumes, so a run can reach its count
		// while a member still holds a few acquired records.
		fill := max(cfg.ShareRecords, cfg.ShareSlowRecords, cfg.SharePollRecords) * 11 / 10
		prepFor := func(topic string, opts ...kgo.Opt) func(context.Context, *env, string) error {
			return func(ctx context.Context, e *env, group string) error {
				if !e.filled[topic] {
					if err := e.ensureTopic(ctx, topic, int32(parts)); err != nil {
						return err
					}
					if _, err := goProduce(ctx, e.addr, topic, fill, cfg.ShareValueSize, opts...); err != nil {
						return fmt.Errorf("fill %s: %w", topic, err)
					}
					e.filled[topic] = true
				}
				return setShareEarliest(ctx, e.addr, group)
			}
		}
		topic, topic16k := fmt.Sprintf("share-p%d", parts), fmt.Sprintf("share16k-p%d", parts)
		prep, prep16k := prepFor(topic), prepFor(topic16k, kgo.ProducerBatchMaxBytes(16384))
		for _, cons := range cfg.ShareConsumers {
			shape := fmt.Sprintf("%d consumer(s), %d partitions", cons, parts)
			name := "franz-go share, " + shape
			ws = append(ws, workload{
				name: name, needs: needsShare,
				metrics: []metricDef{{secShare, name + ", accept all", "records/s", true}},
				run: func(ctx context.Context, e *env) ([]float64, error) {
					group := fmt.Sprintf("bench-share-%d-%d-%d", parts, cons, time.Now().UnixNano())
					if err := prep(ctx, e, group); err != nil {
						return nil, err
					}
					e.measureFromHere()
					r, err := goShareConsume(ctx, e.addr, topic, group, cons, cfg.ShareRecords, 0)
					return []float64{r}, err
				},
			})
			kname := "franz-go share, " + shape + ", 16 KB batches"
			ws = append(ws, workload{
				name: kname, needs: needsShare,
				metrics: []metricDef{{secShare, kname + ", accept all", "records/s", true}},
				run: func(ctx context.Context, e *env) ([]float64, error) {
					group := fmt.Sprintf("bench-share16k-%d-%d-%d", parts, cons, time.Now().UnixNano())
					if err := prep16k(ctx, e, group); err != nil {
						return nil, err
					}
					e.measureFromHere()
					r, err := goShareConsume(ctx, e.addr, topic16k, group, cons, cfg.ShareRecords, 0)
					return []float64{r}, err
				},
			})
			jname := "kafka-share-consumer-perf-test, " + shape
			ws = append(ws, workload{
				name: jname, needs: needsShare, jvm: true,
				metrics: []metricDef{{secShare, jname + ", accept all", "records/s", true}},
				run: func(ctx context.Context, e *env) ([]float64, error) {
					group := fmt.Sprintf("bench-jshare-%d-%d-%d", parts, cons, time.Now().UnixNano())
					if err := prep(ctx, e, group); err != nil {
						return nil, err
					}
					e.measureFromHere()
					r, err := jvmShareConsume(ctx, e.java, e.addr, topic, group, cons, cfg.ShareRecords)
					return []float64{r}, err
				},
			})
			sname := "franz-go share, " + shape + ", 1 ms per record"
			ws = append(ws, workload{
				name: sname, needs: needsShare,
				metrics: []metricDef{{secShare, sname, "records/s", true}},
				run: func(ctx context.Context, e *env) ([]float64, error) {
					group := fmt.Sprintf("bench-slow-%d-%d-%d", parts, cons, time.Now().UnixNano())
					if err := prep(ctx, e, group); err != nil {
						return nil, err
					}
					e.measureFromHere()
					r, err := goShareConsume(ctx, e.addr, topic, group, cons, cfg.ShareSlowRecords, time.Millisecond)
					return []float64{r}, err
				},
			})
		}
	}
	ws = append(ws, slowWorkloads(cfg)...)
	ws = append(ws, compactionWorkloads(cfg)...) // compaction.go
	return ws
}

// peakDef is the memory row of a workload.
func peakDef(w workload) metricDef {
	return metricDef{secMemory, "peak RSS during " + w.name, "MiB", false}
}

// runWorkload runs w against e, or records why it cannot run.
func runWorkload(ctx context.Context, e *env, apis map[int16]int16, w workload, r *results) {
	rows := append(append([]metricDef(nil), w.metrics...), peakDef(w), cpuDef(w))
	skip := func(why string) {
		for _, d := range rows {
			r.na(d, e.broker, why)
		}
	}
	if miss := missing(apis, w.needs); len(miss) > 0 {
		skip("broker lacks " + strings.Join(miss, ", "))
		return
	}
	if w.jvm && e.java == nil {
		skip("no JVM clients")
		return
	}
	if w.tls && e.tlsAddr == "" {
		skip("no TLS listener")
		return
	}
	if w.compact && e.broker == "kfake" {
		// kfake stores compacted topics but never cleans them: the run
		// would only wait for a size that does not shrink.
		skip(errNoCleaner)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	// The franz-go clients run in this process: collect what earlier
	// workloads left on its heap so that collecting it does not land in
	// this workload's timing (it did, and it varied from run to run).
	runtime.GC()
	mw := watchMem(e.pid)
	start := time.Now()
	e.cpuFrom = -1
	e.measureFromHere()
	vals, err := w.run(ctx, e)
	peak := mw.Stop()
	cpuTo, cpuErr := cpuTime(e.pid)
	if err == nil && len(vals) != len(w.metrics) {
		err = fmt.Errorf("workload returned %d values for %d rows", len(vals), len(w.metrics))
	}
	if err == nil && cpuErr != nil {
		err = fmt.Errorf("broker CPU time after the run: %w", cpuErr)
	}
	if err == nil && e.cpuFrom < 0 {
		err = errors.New("broker CPU time before the run could not be read")
	}
	if err != nil {
		e.log.Error("workload failed", "broker", e.broker, "workload", w.name, "err", err.Error())
		skip("error: " + firstLine(err.Error()))
		return
	}
	e.log.Info("workload", "broker", e.broker, "workload", w.name, "values", vals,
		"peak_rss_mib", fmt.Sprintf("%.1f", peak), "broker_cpu", cpuTo-e.cpuFrom, "took", time.Since(start).Round(time.Millisecond))
	for i, d := range w.metrics {
		r.add(d, e.broker, vals[i])
	}
	r.add(peakDef(w), e.broker, peak)
	r.add(cpuDef(w), e.broker, (cpuTo - e.cpuFrom).Seconds())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}
