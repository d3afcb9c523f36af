package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// secCompaction is the log cleaner's section of the report.
const secCompaction = "Compaction"

// cleanerBytes is how much log each cleaner workload writes and then has
// compacted.
const cleanerBytes = 32 << 20

// errNoCleaner is why a broker without a log cleaner has no compaction rows.
const errNoCleaner = "no log cleaner"

var needsCompaction = []int16{keyProduce, keyMetadata, 32 /* DescribeConfigs */, 44 /* IncrementalAlterConfigs */, 35 /* DescribeLogDirs */}

// compactionWorkloads measure the log cleaner: 32 MiB of records whose keys
// repeat ten times (10 % of the records are live) are produced to a
// compacted topic with 1 MiB segments while min.compaction.lag.ms holds the
// cleaner off; then the lag is set to 0 and the time until the partition's
// size (DescribeLogDirs) stops shrinking is measured. Both brokers get
// log.cleaner.backoff.ms=100 (a dynamic broker config in both), so a
// cleaner thread looks within 0.1 s. The figure is the log's bytes before
// cleaning over that time.
func compactionWorkloads(cfg config) []workload {
	var ws []workload
	for _, size := range []int{100, 1024} {
		name := "log cleaner, " + sizeLabel(size) + " values, 10 % live keys"
		topic := fmt.Sprintf("compacted-%d", size)
		ws = append(ws, workload{
			name: name, needs: needsCompaction, compact: true,
			metrics: []metricDef{
				{secCompaction, name + ": cleaned", "MB/s", true},
				{secCompaction, name + ": size after / before", "%", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				return runCompaction(ctx, e.addr, topic, size)
			},
		})
	}
	_ = cfg
	return ws
}

func runCompaction(ctx context.Context, addr, topic string, size int) ([]float64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	backoff := "100"
	if err := alterOK(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.cleaner.backoff.ms", Value: &backoff}})); err != nil {
		return nil, fmt.Errorf("set log.cleaner.backoff.ms: %w", err)
	}
	hour := "3600000"
	res, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{
		"cleanup.policy":        kadm.StringPtr("compact"),
		"segment.bytes":         kadm.StringPtr("1048576"),
		"min.compaction.lag.ms": &hour,
	}, topic)
	if err != nil {
		return nil, err
	}
	if r := res[topic]; r.Err != nil {
		return nil, fmt.Errorf("create %s: %w (%s)", topic, r.Err, r.ErrMessage)
	}
	pl, err := payload(size)
	if err != nil {
		return nil, err
	}
	records := cleanerBytes / (size + 30)
	keys := records / 10
	for i := 0; i < records; i++ {
		off := (i * 61) % 4096
		r := &kgo.Record{Key: []byte(fmt.Sprintf("key-%09d", i%keys)), Value: pl[off : off+size]}
		cl.Produce(ctx, r, func(_ *kgo.Record, perr error) {
			if perr != nil && err == nil {
				err = perr
			}
		})
	}
	if ferr := cl.Flush(ctx); ferr != nil {
		return nil, ferr
	}
	if err != nil {
		return nil, fmt.Errorf("produce to %s: %w", topic, err)
	}
	before, err := partitionSize(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	zero := "0"
	start := time.Now()
	if err := alterOK(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "min.compaction.lag.ms", Value: &zero}}, topic)); err != nil {
		return nil, fmt.Errorf("enable cleaning: %w", err)
	}
	last, lastChange := before, start
	for {
		if time.Since(lastChange) > 3*time.Second && last < before {
			break
		}
		if time.Since(start) > 5*time.Minute {
			return nil, errors.New("the log was not cleaned within 5 minutes")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		sz, err := partitionSize(ctx, adm, topic)
		if err != nil {
			return nil, err
		}
		if sz != last {
			last, lastChange = sz, time.Now()
		}
	}
	took := lastChange.Sub(start).Seconds()
	return []float64{float64(before) / took / 1e6, 100 * float64(last) / float64(before)}, nil
}

// partitionSize is partition 0's size as DescribeLogDirs reports it.
func partitionSize(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	dirs, err := adm.DescribeAllLogDirs(ctx, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		return 0, fmt.Errorf("describe log dirs: %w", err)
	}
	var size int64 = -1
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == topic && p.Partition == 0 {
				size = p.Size
			}
		})
	})
	if size < 0 {
		return 0, errors.New("DescribeLogDirs does not list " + topic + "-0 (" + strconv.Itoa(len(dirs)) + " brokers)")
	}
	return size, nil
}

// alterOK is the first error of an IncrementalAlterConfigs answer.
func alterOK(rs kadm.AlterConfigsResponses, err error) error {
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("%s: %w (%s)", r.Name, r.Err, r.ErrMessage)
		}
	}
	return nil
}
