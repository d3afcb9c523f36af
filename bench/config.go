package main

import (
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// config is one benchmark invocation. defaultConfig gives the full and the
// quick sizes; the smoke test trims it further.
type config struct {
	Out        string
	Runs       int
	Quick      bool
	Brokers    []string       // "sharq", "kafka", "kfake", in run order
	JVMClients bool           // run Kafka's perf tools as clients as well as franz-go
	Big        bool           // sharq RSS with 10 GB stored
	WorkDir    string         // "" = a temp dir removed afterwards
	Command    string         // how the run was invoked, for the report
	ModuleDir  string         // "" = found from the working directory
	SharqBin   string         // a prebuilt sharq to measure instead of building ./cmd/sharq
	KfakeBin   string         // a prebuilt kfake (release flags) instead of building ./bench/kfake
	BaseBin    string         // broker "sharq-base": another sharq binary to compare with, in the same run
	Only       *regexp.Regexp // nil = every workload; else only matching ones, and no start-up series
	// Compression is the franz-go producer rows' codec: "" keeps franz-go's
	// default (snappy), else none, gzip, snappy, lz4 or zstd.
	Compression string

	// Produce: records per value size; the fetch workloads read the topics
	// the franz-go producer wrote.
	ValueSizes     []int
	ProduceRecords map[int]int

	// Share groups: every group reads the same pre-filled topic from the
	// start (share.auto.offset.reset=earliest).
	ShareConsumers   []int
	SharePartitions  []int
	ShareRecords     int // per accept-all run
	ShareSlowRecords int // per run with 1 ms of processing per record
	SharePollRecords int // per run of consumers that poll 100 records and flush acks each time
	ShareValueSize   int

	StartupRuns      int   // sharq and kfake
	KafkaStartupRuns int   // the JVM broker takes seconds per start
	StoredBytes      int64 // 0: no "start with data stored" measurement
	BigBytes         int64 // with Big: bytes stored for sharq's bounded-RSS check
	BigMinFree       int64 // with Big: skip unless this much disk is free
	// RestartPartitions: partition counts of the "restart with N
	// partitions" rows (one record in each partition before the restart).
	RestartPartitions []int

	// WarmupRecords are produced and read back before the workloads, so
	// that the JVM broker's JIT has compiled its hot paths; not measured.
	WarmupRecords int

	IdleSettle time.Duration // wait after ready before reading idle RSS
	Timeout    time.Duration // per workload
}

func defaultConfig(quick bool) config {
	if quick {
		return config{
			Runs: 1, Quick: true, Brokers: []string{"sharq", "kafka", "kfake"}, JVMClients: true,
			ValueSizes:     []int{100, 1024},
			ProduceRecords: map[int]int{100: 20000, 1024: 5000},
			ShareConsumers: []int{1, 3, 10}, SharePartitions: []int{2, 6},
			ShareRecords: 3000, ShareSlowRecords: 300, SharePollRecords: 3000, ShareValueSize: 100,
			StartupRuns: 5, KafkaStartupRuns: 2, WarmupRecords: 5000,
			RestartPartitions: []int{100, 1000},
			IdleSettle:        300 * time.Millisecond, Timeout: 3 * time.Minute,
		}
	}
	return config{
		Runs: 3, Brokers: []string{"sharq", "kafka", "kfake"}, JVMClients: true,
		ValueSizes:     []int{100, 1024},
		ProduceRecords: map[int]int{100: 1000000, 1024: 300000},
		ShareConsumers: []int{1, 3, 10}, SharePartitions: []int{2, 6},
		// A million records: at 100k, a run with 1 MB batches was ~11
		// fetches and 40–180 ms long, so group start-up and single
		// scheduling hiccups swung the figure by 2x between runs.
		ShareRecords: 1000000, ShareSlowRecords: 5000, SharePollRecords: 300000, ShareValueSize: 100,
		StartupRuns: 20, KafkaStartupRuns: 20, WarmupRecords: 200000,
		StoredBytes: 1 << 30, BigBytes: 10 << 30, BigMinFree: 25 << 30,
		RestartPartitions: []int{100, 1000, 10000},
		IdleSettle:        2 * time.Second, Timeout: 10 * time.Minute,
	}
}

// restartWanted: the "restart with N partitions" rows, in a full run or a
// partial one whose pattern matches "restart with".
func (c config) restartWanted() bool {
	return c.Only == nil || c.Only.MatchString("restart with")
}

// startupWanted: a full run measures start-up; a partial one (-only) only
// when its pattern matches "start-up".
func (c config) startupWanted() bool {
	return c.Only == nil || c.Only.MatchString("start-up")
}

// producerCompression is the franz-go producer option for c.Compression.
func (c config) producerCompression() []kgo.Opt {
	codec := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	if cd, ok := codec[c.Compression]; ok {
		return []kgo.Opt{kgo.ProducerBatchCompression(cd)}
	}
	return nil
}
