package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MirrorMaker 2 (4.3.1, dedicated mode) between sharq and the shared 3-node
// Kafka 4.4 cluster (issue 30): what a client reads on both sides is
// diffed. Each test has its own sharq, its own MirrorMaker and topic and
// group names of its own on the cluster.

var (
	mirrorOnce sync.Once
	mirrorJava *Java
	mirrorErr  error
)

// needMirrorMaker returns a runner for the MirrorMaker 2 jar set (fetched
// with the others by fetch-jars.sh); like needJava it skips locally and
// fails in CI when the jars are missing.
func needMirrorMaker(t testing.TB) *Java {
	t.Helper()
	needJava(t) // fetches every jar set when the 4.4 one is missing
	mirrorOnce.Do(func() {
		cache := CacheDir()
		// A cache filled before the MirrorMaker set was added to pom.xml
		// has the 4.4 set only.
		if !JarsComplete(MirrorLib(cache)) && os.Getenv("SHARQ_INTEROP_FETCH") != "0" {
			script, err := filepath.Abs("fetch-jars.sh")
			if err != nil {
				mirrorErr = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			out, err := FetchJars(ctx, script, cache)
			cancel()
			if err != nil {
				mirrorErr = fmt.Errorf("%w\n%s", err, out)
				return
			}
		}
		mirrorJava, mirrorErr = NewJava(MirrorLib(cache), filepath.Join(workDir, "conf-mm2"), "")
	})
	if mirrorErr != nil {
		msg := fmt.Sprintf("interop: MirrorMaker %s unavailable: %v (run interop/fetch-jars.sh)", MirrorVersion, mirrorErr)
		if inCI() || !(errors.Is(mirrorErr, ErrNoJars) || errors.Is(mirrorErr, ErrNoMvn)) {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return mirrorJava
}

// mm2Props is a dedicated-mode mm2.properties mirroring from src to dst
// (cluster aliases) with topic names kept (IdentityReplicationPolicy: a
// migration, not an active/active pair), group offsets translated and
// written to the target every second, and every internal topic's
// replication factor fitted to the cluster it lands on (srcRF for the
// offset-syncs topic on the source, dstRF for the rest on the target).
// extra lines follow and override.
func mm2Props(src, srcBootstrap string, srcRF int, dst, dstBootstrap string, dstRF int, extra ...string) string {
	lines := []string{
		"clusters=" + src + "," + dst,
		src + ".bootstrap.servers=" + srcBootstrap,
		dst + ".bootstrap.servers=" + dstBootstrap,
		src + "->" + dst + ".enabled=true",
		dst + "->" + src + ".enabled=false",
		// Without this MirrorMaker still runs a worker for the disabled
		// flow to emit heartbeats, which creates its internal topics on
		// the source with the target's replication factors.
		dst + "->" + src + ".emit.heartbeats.enabled=false",
		"replication.policy.class=org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"tasks.max=2",
		"sync.topic.configs.enabled=true",
		"sync.topic.acls.enabled=false",
		"sync.group.offsets.enabled=true",
		"sync.group.offsets.interval.seconds=1",
		"emit.checkpoints.interval.seconds=1",
		"emit.heartbeats.interval.seconds=1",
		"refresh.topics.interval.seconds=2",
		"refresh.groups.interval.seconds=2",
		// An offset sync for every record, so that translated group
		// offsets are exact instead of falling back to the last sync.
		"offset.lag.max=0",
		// Only committed records are mirrored; MirrorMaker's consumer
		// reads uncommitted ones by default.
		src + ".consumer.isolation.level=read_committed",
		fmt.Sprintf("replication.factor=%d", dstRF),
		fmt.Sprintf("checkpoints.topic.replication.factor=%d", dstRF),
		fmt.Sprintf("heartbeats.topic.replication.factor=%d", dstRF),
		fmt.Sprintf("offset-syncs.topic.replication.factor=%d", srcRF),
		fmt.Sprintf("config.storage.replication.factor=%d", dstRF),
		fmt.Sprintf("offset.storage.replication.factor=%d", dstRF),
		fmt.Sprintf("status.storage.replication.factor=%d", dstRF),
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// startMM2 starts MirrorMaker with props in a temp dir and stops it in
// t.Cleanup, logging its tail when the test failed.
func startMM2(t *testing.T, props string) *Process {
	t.Helper()
	j := needMirrorMaker(t)
	dir := t.TempDir()
	p, err := StartMirrorMaker(j, dir, props, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := p.Stop(30 * time.Second); err != nil {
			t.Errorf("stop MirrorMaker: %v", err)
		}
		if t.Failed() {
			t.Logf("MirrorMaker log tail (%s):\n%s", p.Log, p.LogTail(8000))
		}
	})
	return p
}

// startSharqT starts a sharq of its own, stopped in t.Cleanup.
func startSharqT(t *testing.T, dir string, extra ...string) *Process {
	t.Helper()
	bin := buildSharq(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := StartSharq(ctx, bin, dir, time.Minute, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = p.Stop(30 * time.Second)
		if t.Failed() {
			t.Logf("sharq log tail (%s):\n%s", p.Log, p.LogTail(6000))
		}
	})
	return p
}

func newClient(t testing.TB, bootstrap string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(bootstrap, ",")...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// mrec is a record as a client reads it, without its offset (offsets
// differ between the sides wherever the source holds transaction markers).
type mrec struct {
	Partition int32
	Key       string
	Value     string
	Null      bool // a tombstone: nil value, not empty
	Headers   string
	Timestamp int64
}

func toMrec(r *kgo.Record) mrec {
	var h []string
	for _, x := range r.Headers {
		h = append(h, fmt.Sprintf("%q=%q", x.Key, x.Value))
	}
	return mrec{Partition: r.Partition, Key: string(r.Key), Value: string(r.Value), Null: r.Value == nil,
		Headers: strings.Join(h, ","), Timestamp: r.Timestamp.UnixMilli()}
}

// readTopic reads topic from the start with read_committed until it has
// want records (per-partition order kept, partitions in order), or fails
// after limit. It then checks that no record follows: the partitions' last
// stable offsets are compared with what was read when exact is set (a
// target written by MirrorMaker holds no control records).
func readTopic(t testing.TB, bootstrap, topic string, want int, limit time.Duration) []mrec {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var got []mrec
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s at %s: %d of %d records within %v", topic, bootstrap, len(got), want, limit)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Logf("fetch %s/%d: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, toMrec(r)) })
	}
	sort.SliceStable(got, func(i, j int) bool { return got[i].Partition < got[j].Partition })
	return got
}

// endOffsets returns topic's end offsets (read_committed: last stable).
func endOffsets(t testing.TB, bootstrap, topic string) map[int32]int64 {
	t.Helper()
	out, err := tryEndOffsets(t, bootstrap, topic)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryEndOffsets is endOffsets for a poll: a topic just created may not be
// served by its leader yet.
func tryEndOffsets(t testing.TB, bootstrap, topic string) (map[int32]int64, error) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, bootstrap))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lo, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	var perr error
	lo.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			perr = fmt.Errorf("end offset %s/%d: %w", o.Topic, o.Partition, o.Err)
		}
		out[o.Partition] = o.Offset
	})
	return out, perr
}

func sumOffsets(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// diffRecords reports the first differences between two record lists.
func diffRecords(a, b []mrec) string {
	var sb strings.Builder
	n := max(len(a), len(b))
	shown := 0
	for i := 0; i < n && shown < 5; i++ {
		var x, y string
		if i < len(a) {
			x = fmt.Sprintf("%+v", a[i])
		}
		if i < len(b) {
			y = fmt.Sprintf("%+v", b[i])
		}
		if x != y {
			fmt.Fprintf(&sb, "#%d\n  source %s\n  target %s\n", i, x, y)
			shown++
		}
	}
	return sb.String()
}

// waitFor polls cond every 250 ms until it holds or limit passes; msg says
// what was awaited (cond's last error is appended).
func waitFor(t testing.TB, limit time.Duration, msg string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", msg, limit, err)
		}
		<-tick.C
	}
}

// topicSpec is a topic the source gets before MirrorMaker starts.
type topicSpec struct {
	name       string
	partitions int32
	configs    map[string]*string
}

func strp(s string) *string { return &s }

func createTopics(t testing.TB, bootstrap string, rf int16, specs ...topicSpec) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, bootstrap))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range specs {
		r, err := adm.CreateTopic(ctx, s.partitions, rf, s.configs, s.name)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			t.Fatalf("create topic %s on %s: %v", s.name, bootstrap, err)
		}
	}
}

// produceFixture writes n records per partition with keys, values, headers
// (every 7th keyless when keyless is set) and explicit timestamps (some an hour old, so that a mirror that stamps
// its own time is caught), acks=all, idempotent.
func produceFixture(t testing.TB, bootstrap, topic string, partitions int32, n int, tag string, keyless bool) {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var rs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			r := &kgo.Record{Partition: p, Key: []byte(fmt.Sprintf("k%d-%d", p, i)),
				Value:     []byte(fmt.Sprintf("%s value %d/%d \x00\xff", tag, p, i)),
				Timestamp: base.Add(time.Duration(p*1000+int32(i)) * time.Millisecond),
				Headers:   []kgo.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}, {Key: "empty", Value: nil}}}
			if keyless && i%7 == 3 {
				r.Key = nil // keyless records too (not on a compacted topic)
			}
			rs = append(rs, r)
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce %s to %s: %v", topic, bootstrap, err)
	}
}

// mmDescribeTopic returns partition count and the non-default configs of
// topic.
func mmDescribeTopic(t testing.TB, bootstrap, topic string) (int, map[string]string) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, bootstrap))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe configs %s: %v", topic, err)
	}
	cfg := map[string]string{}
	if r, err := rc.On(topic, nil); err == nil {
		for _, c := range r.Configs {
			if c.Source == 1 && c.Value != nil { // DYNAMIC_TOPIC_CONFIG
				cfg[c.Key] = *c.Value
			}
		}
	}
	return len(td[topic].Partitions), cfg
}

func topicExists(t testing.TB, bootstrap, topic string) bool {
	t.Helper()
	adm := kadm.NewClient(newClient(t, bootstrap))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	return td.Has(topic) && td[topic].Err == nil
}

// groupOffsets returns the committed offsets of group on topic.
func groupOffsets(t testing.TB, bootstrap, group, topic string) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(newClient(t, bootstrap))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	os, err := adm.FetchOffsets(ctx, group)
	out := map[int32]int64{}
	if err != nil {
		return out
	}
	os.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out
}

// mmConsumeGroup reads n records of topic as a member of group from the
// committed offsets (start when none), commits exactly what it read and
// leaves the group.
func mmConsumeGroup(t testing.TB, bootstrap, group, topic string, n int, limit time.Duration) []mrec {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var got []mrec
	var recs []*kgo.Record
	for len(got) < n {
		fs := cl.PollRecords(ctx, n-len(got))
		if ctx.Err() != nil {
			t.Fatalf("group %s read %d of %d records of %s at %s within %v", group, len(got), n, topic, bootstrap, limit)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, toMrec(r)); recs = append(recs, r) })
	}
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
	cl.Close() // leaves the group: MirrorMaker only writes offsets of groups without members
	return got
}

func TestMirrorMaker2(t *testing.T) {
	needMirrorMaker(t)
	c := sharedCluster(t)
	// The last test of the binary that uses the cluster (go test runs
	// mm2_bench_test.go's TestMirrorMaker2Throughput before this file's
	// tests) stops it, so that its three idle JVMs do not slow the rest
	// of the suite; TestMain stops it otherwise.
	t.Cleanup(func() {
		if err := stopSharedCluster(); err != nil {
			t.Errorf("stop the Kafka cluster: %v", err)
		}
	})
	t.Run("sharq-to-kafka", func(t *testing.T) { testMM2SharqToKafka(t, c) })
	t.Run("kafka-to-sharq", func(t *testing.T) { testMM2KafkaToSharq(t, c) })
	t.Run("sharq-kill9", func(t *testing.T) { testMM2SharqKill(t, c) })
	t.Run("refused-topic", func(t *testing.T) { testMM2RefusedTopic(t, c) })
	t.Run("kafka-to-sharq-eos", func(t *testing.T) { testMM2KafkaToSharqEOS(t, c) })
}

// testMM2SharqToKafka: topics (partition counts, configs, a compacted one),
// records with keys, headers, timestamps and tombstones, committed and
// aborted transactions, and a consumer group that stopped half way move to
// the cluster; the group resumes there with nothing lost.
func testMM2SharqToKafka(t *testing.T, c *KafkaCluster) {
	s := startSharqT(t, t.TempDir())
	const (
		plain   = "mig-s2k-plain"
		compact = "mig-s2k-compact"
		txnT    = "mig-s2k-txn"
		group   = "mig-s2k-group"
	)
	createTopics(t, s.Bootstrap, 1,
		topicSpec{plain, 3, map[string]*string{"retention.ms": strp("604800000"), "max.message.bytes": strp("2097152")}},
		topicSpec{compact, 2, map[string]*string{"cleanup.policy": strp("compact"), "min.compaction.lag.ms": strp("1000")}},
		topicSpec{txnT, 2, nil},
	)
	// MirrorMaker starts before the data: its checkpoint task translates
	// group offsets only from offset syncs it read live; of the syncs
	// already in the topic when it starts it keeps just the newest per
	// partition (MirrorMaker 3.7+), so a group that stopped before
	// MirrorMaker started translates only at the newest sync. The group
	// exists (offsets 0) before MirrorMaker starts, as a running consumer
	// would: the checkpoint connector starts no task without a group.
	{
		adm := kadm.NewClient(newClient(t, s.Bootstrap))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var zero kadm.Offsets
		for p := int32(0); p < 3; p++ {
			zero.AddOffset(plain, p, 0, -1)
		}
		r, err := adm.CommitOffsets(ctx, group, zero)
		if err == nil {
			err = r.Error()
		}
		cancel()
		if err != nil {
			t.Fatalf("commit group %s: %v", group, err)
		}
	}
	mm := startMM2(t, mm2Props("sharq", s.Bootstrap, 1, "kafka", c.Bootstrap, 3))
	if _, err := mm.WaitLog(context.Background(), regexp.MustCompile(`Started KafkaBasedLog for topic mm2-offset-syncs`), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	const perPartition = 40
	produceFixture(t, s.Bootstrap, plain, 3, perPartition, "plain", true)
	produceFixture(t, s.Bootstrap, compact, 2, 10, "v1", false)
	produceFixture(t, s.Bootstrap, compact, 2, 10, "v2", false) // same keys where keyed, newer values
	// Tombstones on the compacted topic.
	{
		cl := newClient(t, s.Bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: compact, Partition: 0, Key: []byte("k0-0")},
			&kgo.Record{Topic: compact, Partition: 1, Key: []byte("k1-1")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	committed := produceTxns(t, s.Bootstrap, txnT)

	// A consumer group read part of the plain topic and stopped.
	consumed := mmConsumeGroup(t, s.Bootstrap, group, plain, 50, time.Minute)
	srcGroup := groupOffsets(t, s.Bootstrap, group, plain)

	// A share group with start offsets on two topics, set with Kafka 4.4's
	// own tool (--from-file, KIP-1323) on sharq.
	const shareGroup = "mig-s2k-share"
	shareStart := map[string]int64{plain + ",0": 5, plain + ",1": 40, plain + ",2": 17, txnT + ",0": 13, txnT + ",1": 0}
	srcCSV := filepath.Join(t.TempDir(), "share-src.csv")
	writeCSV(t, srcCSV, shareStart)
	mustTool(t, s.Target, "", "", ClassShareGroups, args(s.Target, "--group", shareGroup, "--reset-offsets", "--from-file", srcCSV, "--execute")...)

	// Records: every topic's committed records, byte for byte.
	for _, tc := range []struct {
		topic string
		n     int
	}{{plain, 3 * perPartition}, {compact, 2*20 + 2}, {txnT, committed}} {
		src := readTopic(t, s.Bootstrap, tc.topic, tc.n, time.Minute)
		var dst []mrec
		waitFor(t, 3*time.Minute, "topic "+tc.topic+" created on the cluster", func() error {
			if !topicExists(t, c.Bootstrap, tc.topic) {
				return errors.New("missing")
			}
			return nil
		})
		dst = readTopic(t, c.Bootstrap, tc.topic, tc.n, 3*time.Minute)
		if d := diffRecords(src, dst); d != "" {
			t.Errorf("%s: records differ:\n%s", tc.topic, d)
		}
		if n := sumOffsets(endOffsets(t, c.Bootstrap, tc.topic)); n != int64(tc.n) {
			t.Errorf("%s: %d records on the cluster, want %d", tc.topic, n, tc.n)
		}
	}

	// Topic shape: partition counts, the configs set on sharq.
	for _, tp := range []string{plain, compact, txnT} {
		sn, scfg := mmDescribeTopic(t, s.Bootstrap, tp)
		dn, dcfg := mmDescribeTopic(t, c.Bootstrap, tp)
		if sn != dn {
			t.Errorf("%s: %d partitions on the cluster, %d on sharq", tp, dn, sn)
		}
		for k, v := range scfg {
			if dcfg[k] != v {
				t.Errorf("%s: config %s=%q on the cluster, %q on sharq", tp, k, dcfg[k], v)
			}
		}
		t.Logf("%s: %d partitions, sharq configs %v, cluster configs %v", tp, dn, scfg, dcfg)
	}

	// The group's offsets, translated by the checkpoint connector. They
	// may stay behind sharq's: MirrorMaker translates from the offset
	// syncs its store kept, which the consumer then re-reads (at least
	// once); ahead of sharq's would lose records. MirrorMaker 4.3.1 skips
	// offset syncs while 10 are in flight and keeps the rest sparsely, so
	// an offset in the middle of a burst of records may not translate at
	// all (runs of this test saw partition 1's offset 10 become 1, 9, or
	// nothing, and partition 2's offset 0 became 0 or nothing); the group
	// then starts there from auto.offset.reset (earliest). An offset at a
	// partition's end translates from the newest sync, which MirrorMaker
	// always sends and keeps, and must arrive.
	srcEnd := endOffsets(t, s.Bootstrap, plain)
	var dstGroup map[int32]int64
	waitFor(t, 2*time.Minute, "group "+group+"'s offsets on the cluster", func() error {
		dstGroup = groupOffsets(t, c.Bootstrap, group, plain)
		for p, o := range srcGroup {
			d, ok := dstGroup[p]
			if ok && d > o {
				t.Fatalf("group %s: partition %d translated to %d on the cluster, past %d on sharq: records lost", group, p, d, o)
			}
			if !ok && o > 0 && o == srcEnd[p] {
				return fmt.Errorf("cluster %v, sharq %v", dstGroup, srcGroup)
			}
		}
		return nil
	})
	// The group resumes on the cluster: what it reads there plus what it
	// read on sharq is every record, some twice.
	rest := mmConsumeGroup(t, c.Bootstrap, group, plain, 3*perPartition-int(sumOffsets(dstGroup)), 2*time.Minute)
	seen := map[string]int{}
	for _, r := range append(append([]mrec(nil), consumed...), rest...) {
		seen[fmt.Sprintf("%+v", r)]++
	}
	dups := 0
	for _, r := range readTopic(t, s.Bootstrap, plain, 3*perPartition, time.Minute) {
		n := seen[fmt.Sprintf("%+v", r)]
		if n == 0 {
			t.Errorf("group %s: record %+v read neither on sharq nor on the cluster", group, r)
		}
		dups += max(n-1, 0)
	}
	t.Logf("group %s: sharq offsets %v, translated %v; %d of %d records read twice", group, srcGroup, dstGroup, dups, 3*perPartition)

	testShareOffsets(t, s, c, shareGroup, shareStart)

	// sharq's internal topics were not mirrored: MirrorMaker's default
	// topics.exclude (__.*) keeps it from reading them, which sharq would
	// have refused and logged.
	if l := s.LogLines(regexp.MustCompile(`internal topic refused`)); len(l) > 0 {
		t.Errorf("MirrorMaker read an internal topic of sharq: %q", l)
	}
	if l := mm.LogLines(regexp.MustCompile(`TopicAuthorization|ERROR`)); len(l) > 0 {
		t.Errorf("MirrorMaker logged errors: %q", l)
	}
}

// produceTxns writes to topic (2 partitions) in transactions, committing
// some and aborting others, and returns how many records were committed.
func produceTxns(t testing.TB, bootstrap, topic string) int {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.TransactionalID("mig-txn-producer"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	committed := 0
	ts := time.Now().Add(-30 * time.Minute).Truncate(time.Millisecond)
	for i := 0; i < 6; i++ {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		commit := i%3 != 1
		for p := int32(0); p < 2; p++ {
			for k := 0; k < 5; k++ {
				r := &kgo.Record{Partition: p, Key: []byte(fmt.Sprintf("txn%d-%d", i, k)), Value: []byte(fmt.Sprintf("commit=%v", commit)),
					Timestamp: ts.Add(time.Duration(i*10+k) * time.Millisecond), Headers: []kgo.RecordHeader{{Key: "txn", Value: []byte(fmt.Sprint(i))}}}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		if commit {
			committed += 10
		}
	}
	return committed
}

func writeCSV(t testing.TB, path string, offsets map[string]int64) {
	t.Helper()
	var lines []string
	for tp, o := range offsets {
		lines = append(lines, fmt.Sprintf("%s,%d", tp, o))
	}
	sort.Strings(lines)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sourcePositions maps each source offset of topic's committed records to
// its position among them per partition: where MirrorMaker wrote it on the
// target.
func sourcePositions(t testing.TB, bootstrap, topic string) map[int32][]int64 {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(200*time.Millisecond))
	end := endOffsets(t, bootstrap, topic)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := map[int32][]int64{}
	pos := map[int32]int64{}
	done := func() bool {
		for p, e := range end {
			if pos[p] < e-1 && e > 0 {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read offsets of %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r.Offset)
			pos[r.Partition] = r.Offset
		})
		// The last offset of a transactional partition is a commit
		// marker; the last data record before the end ends the read.
		for p, e := range end {
			if n := len(out[p]); n > 0 && out[p][n-1] >= e-2 {
				pos[p] = e - 1
			}
		}
	}
	return out
}

// testShareOffsets: sharq migrate share-offsets translates the share
// group's start offsets through the offset-syncs topic (on sharq, the
// source), Kafka 4.4's kafka-share-groups.sh --reset-offsets --from-file
// applies them to the cluster, and no record at or after a start offset on
// sharq is before the start offset on the cluster (nothing skipped; records
// between are redelivered).
func testShareOffsets(t *testing.T, s *Process, c *KafkaCluster, group string, start map[string]int64) {
	bin := buildSharq(t)
	out := filepath.Join(t.TempDir(), "share-target.csv")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Exit 1 names a partition without an offset sync at or before its
	// start offset: MirrorMaker holds back syncs while 10 are in flight
	// (sending the newest with its next offset commit) and may never send
	// one for the first records of a partition. Such partitions are reset
	// to the earliest offset on the cluster, as the subcommand advises:
	// redelivered, not skipped.
	var last string
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		cmd := exec.CommandContext(ctx, bin, "migrate", "share-offsets", "--source", s.Bootstrap, "--group", group,
			"--target-alias", "kafka", "--out", out)
		cmd.Env = sharqEnv(os.Environ())
		b, err := cmd.CombinedOutput()
		last = string(b)
		if err == nil {
			break
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("sharq migrate share-offsets: %v\n%s", err, b)
		}
		if time.Now().After(deadline) {
			t.Logf("sharq migrate share-offsets left partitions out:\n%s", b)
			break
		}
		<-tick.C
	}
	csv, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("translated share offsets:\n%s", csv)
	ct := Target{Name: "kafka", Bootstrap: c.Bootstrap}
	mustTool(t, ct, "", "", ClassShareGroups, args(ct, "--group", group, "--reset-offsets", "--from-file", out, "--execute")...)
	leftOut := map[string][]string{}
	for tp := range start {
		topic, p, _ := strings.Cut(tp, ",")
		if !strings.Contains("\n"+string(csv), "\n"+tp+",") {
			leftOut[topic] = append(leftOut[topic], p)
		}
	}
	for topic, ps := range leftOut {
		sort.Strings(ps)
		if !strings.Contains(last, topic+"-"+ps[0]+" ") {
			t.Errorf("%s-%s missing from the CSV without a word on stderr:\n%s", topic, ps[0], last)
		}
		mustTool(t, ct, "", "", ClassShareGroups, args(ct, "--group", group, "--reset-offsets", "--to-earliest",
			"--topic", topic+":"+strings.Join(ps, ","), "--execute")...)
	}
	adm := kadm.NewClient(newClient(t, c.Bootstrap))
	got, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatalf("describe share group offsets on the cluster: %v", err)
	}
	positions := map[string]map[int32][]int64{}
	redelivered := 0
	for tp, up := range start {
		topic, ps, _ := strings.Cut(tp, ",")
		var p int32
		fmt.Sscan(ps, &p)
		if positions[topic] == nil {
			positions[topic] = sourcePositions(t, s.Bootstrap, topic)
		}
		// The target position of the first committed source record at
		// or after the start offset.
		exact := int64(len(positions[topic][p]))
		for i, o := range positions[topic][p] {
			if o >= up {
				exact = int64(i)
				break
			}
		}
		var have int64 = -1
		if o, ok := got[group].Offsets[topic][p]; ok && o.Err == nil {
			have = o.StartOffset
		}
		if have < 0 || have > exact {
			t.Errorf("share group %s %s-%d: start offset %d on the cluster, the first record not yet delivered on sharq (offset %d) is at %d there", group, topic, p, have, up, exact)
			continue
		}
		redelivered += int(exact - have)
	}
	t.Logf("share group %s: %d records before the translated start offsets would be redelivered on the cluster", group, redelivered)
}

// testMM2KafkaToSharq: a developer pulls topics of the cluster into a
// local sharq; what sharq serves equals what the cluster serves.
func testMM2KafkaToSharq(t *testing.T, c *KafkaCluster) {
	const (
		events  = "mig-k2s-events"
		compact = "mig-k2s-compact"
	)
	createTopics(t, c.Bootstrap, 3,
		topicSpec{events, 3, map[string]*string{"retention.ms": strp("86400000")}},
		topicSpec{compact, 1, map[string]*string{"cleanup.policy": strp("compact")}})
	produceFixture(t, c.Bootstrap, events, 3, 50, "k", true)
	produceFixture(t, c.Bootstrap, compact, 1, 20, "c", false)
	s := startSharqT(t, t.TempDir())
	startMM2(t, mm2Props("kafka", c.Bootstrap, 3, "sharq", s.Bootstrap, 1, "kafka->sharq.topics=mig-k2s-.*"))
	for _, tc := range []struct {
		topic string
		n     int
	}{{events, 150}, {compact, 20}} {
		src := readTopic(t, c.Bootstrap, tc.topic, tc.n, time.Minute)
		waitFor(t, 3*time.Minute, "topic "+tc.topic+" created on sharq", func() error {
			if !topicExists(t, s.Bootstrap, tc.topic) {
				return errors.New("missing")
			}
			return nil
		})
		dst := readTopic(t, s.Bootstrap, tc.topic, tc.n, 3*time.Minute)
		if d := diffRecords(src, dst); d != "" {
			t.Errorf("%s: records differ:\n%s", tc.topic, d)
		}
		if n := sumOffsets(endOffsets(t, s.Bootstrap, tc.topic)); n != int64(tc.n) {
			t.Errorf("%s: %d records on sharq, want %d", tc.topic, n, tc.n)
		}
		sn, scfg := mmDescribeTopic(t, c.Bootstrap, tc.topic)
		dn, dcfg := mmDescribeTopic(t, s.Bootstrap, tc.topic)
		if sn != dn {
			t.Errorf("%s: %d partitions on sharq, %d on the cluster", tc.topic, dn, sn)
		}
		for k, v := range scfg {
			if dcfg[k] != v {
				t.Errorf("%s: config %s=%q on sharq, %q on the cluster", tc.topic, k, dcfg[k], v)
			}
		}
	}
}

// testMM2SharqKill: sharq is killed with SIGKILL while MirrorMaker reads
// from it and comes back on the same data and port; every record sharq
// acknowledged, before and after, reaches the cluster (MirrorMaker resumes
// from its committed source offsets, so some may arrive twice).
func testMM2SharqKill(t *testing.T, c *KafkaCluster) {
	const topic = "mig-kill"
	dir := t.TempDir()
	s := startSharqT(t, dir)
	createTopics(t, s.Bootstrap, 1, topicSpec{topic, 2, nil})
	produceFixture(t, s.Bootstrap, topic, 2, 500, "before", false)
	startMM2(t, mm2Props("sharq", s.Bootstrap, 1, "kafka", c.Bootstrap, 3, "sharq->kafka.topics="+topic))
	waitFor(t, 3*time.Minute, "first records of "+topic+" on the cluster", func() error {
		if !topicExists(t, c.Bootstrap, topic) {
			return errors.New("topic missing")
		}
		end, err := tryEndOffsets(t, c.Bootstrap, topic)
		if err != nil {
			return err
		}
		if sumOffsets(end) == 0 {
			return errors.New("no record yet")
		}
		return nil
	})
	mirrored := sumOffsets(endOffsets(t, c.Bootstrap, topic))
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.Exited()
	t.Logf("sharq killed with %d of 1000 records on the cluster", mirrored)
	s2 := startSharqT(t, dir, "--override", "listeners=PLAINTEXT://"+s.Bootstrap)
	produceFixture(t, s2.Bootstrap, topic, 2, 500, "after", false)
	want := readTopic(t, s2.Bootstrap, topic, 2000, time.Minute)
	if len(want) != 2000 {
		t.Fatalf("sharq holds %d records after the restart, want 2000", len(want))
	}
	var got []mrec
	waitFor(t, 3*time.Minute, "every record on the cluster", func() error {
		end, err := tryEndOffsets(t, c.Bootstrap, topic)
		if err != nil {
			return err
		}
		n := sumOffsets(end)
		if n < 2000 {
			return fmt.Errorf("%d records", n)
		}
		got = readTopic(t, c.Bootstrap, topic, int(n), time.Minute)
		return nil
	})
	seen := map[string]int{}
	for _, r := range got {
		seen[fmt.Sprintf("%+v", r)]++
	}
	for _, r := range want {
		if seen[fmt.Sprintf("%+v", r)] == 0 {
			t.Errorf("record %+v acknowledged by sharq is missing on the cluster", r)
		}
	}
	t.Logf("%d records on the cluster for 2000 on sharq (%d redelivered after the kill)", len(got), len(got)-2000)
}

// testMM2RefusedTopic: a sharq topic the cluster refuses to create (its
// name collides with an existing topic's once '.' and '_' are the same, as
// Kafka's metric names make them) is reported in MirrorMaker's log, not
// silently dropped or merged into the other topic, while the other topics
// mirror on. sharq validates topic configs with Kafka's keys and rules
// (remote.storage.enable=true, for one, is refused by both alike), so a
// name is what the cluster can refuse that sharq accepted.
func testMM2RefusedTopic(t *testing.T, c *KafkaCluster) {
	const (
		ok       = "mig-bad-ok"
		collides = "mig-bad.x"
		existing = "mig-bad_x"
	)
	createTopics(t, c.Bootstrap, 3, topicSpec{existing, 1, nil})
	s := startSharqT(t, t.TempDir())
	createTopics(t, s.Bootstrap, 1, topicSpec{ok, 1, nil}, topicSpec{collides, 1, nil})
	produceFixture(t, s.Bootstrap, ok, 1, 10, "ok", false)
	produceFixture(t, s.Bootstrap, collides, 1, 10, "x", false)
	mm := startMM2(t, mm2Props("sharq", s.Bootstrap, 1, "kafka", c.Bootstrap, 3, `sharq->kafka.topics=mig-bad.*`))
	waitFor(t, 3*time.Minute, ok+" mirrored", func() error {
		if !topicExists(t, c.Bootstrap, ok) {
			return errors.New("missing")
		}
		end, err := tryEndOffsets(t, c.Bootstrap, ok)
		if err != nil {
			return err
		}
		if n := sumOffsets(end); n != 10 {
			return fmt.Errorf("%d records", n)
		}
		return nil
	})
	line, err := mm.WaitLog(context.Background(), regexp.MustCompile(`(?i)collides|mig-bad\.x.*(error|fail|could not)|(error|fail|could not).*mig-bad\.x`), 2*time.Minute)
	if err != nil {
		t.Fatalf("MirrorMaker did not report the refused topic %s: %v", collides, err)
	}
	t.Logf("MirrorMaker reported: %s", line)
	if why := mm.LogLines(regexp.MustCompile(`collides with existing topic`)); len(why) == 0 {
		t.Errorf("MirrorMaker's log does not say why %s was refused", collides)
	} else {
		t.Logf("because: %s", why[0])
	}
	if topicExists(t, c.Bootstrap, collides) {
		t.Errorf("%s exists on the cluster beside %s", collides, existing)
	}
	if n := sumOffsets(endOffsets(t, c.Bootstrap, existing)); n != 0 {
		t.Errorf("%d records of %s landed in %s", n, collides, existing)
	}
}

// testMM2KafkaToSharqEOS: MirrorMaker's exactly-once source mode (KIP-618)
// with sharq as the target, where its transactions run: each task's
// producer is transactional (fenced through Admin.fenceProducers, i.e.
// InitProducerId on sharq), and the records and the task's source offsets
// commit together. read_committed on sharq equals the cluster's records,
// and the commit markers show the writes were transactional.
func testMM2KafkaToSharqEOS(t *testing.T, c *KafkaCluster) {
	const topic = "mig-eos-events"
	createTopics(t, c.Bootstrap, 3, topicSpec{topic, 2, nil})
	produceFixture(t, c.Bootstrap, topic, 2, 100, "eos", true)
	s := startSharqT(t, t.TempDir())
	mm := startMM2(t, mm2Props("kafka", c.Bootstrap, 3, "sharq", s.Bootstrap, 1, "kafka->sharq.topics="+topic,
		// A worker setting of the target cluster's worker (KIP-618).
		"sharq.exactly.once.source.support=enabled"))
	src := readTopic(t, c.Bootstrap, topic, 200, time.Minute)
	waitFor(t, 3*time.Minute, "topic "+topic+" created on sharq", func() error {
		if !topicExists(t, s.Bootstrap, topic) {
			return errors.New("missing")
		}
		return nil
	})
	dst := readTopic(t, s.Bootstrap, topic, 200, 3*time.Minute)
	if d := diffRecords(src, dst); d != "" {
		t.Errorf("%s: records differ:\n%s", topic, d)
	}
	end := sumOffsets(endOffsets(t, s.Bootstrap, topic))
	if end <= 200 {
		t.Errorf("%s on sharq ends at %d for 200 records: no transaction markers, so not written transactionally", topic, end)
	}
	if l := mm.LogLines(regexp.MustCompile(`ERROR`)); len(l) > 0 {
		t.Errorf("MirrorMaker logged errors: %q", l)
	}
	t.Logf("%s: 200 records mirrored in transactions (sharq's log ends at %d)", topic, end)
}
