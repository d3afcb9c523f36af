package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMixedKill9Soak (issue 26 item 2): a mixed workload against a real
// sharq process killed with SIGKILL at a random moment, cycle after cycle,
// in both flush modes. At once, every cycle:
//   - an idempotent producer with acks=all (topics soak.idem, soak.shr and
//     the compacted soak.cmp);
//   - a transactional consume-transform-produce loop (GroupTransactSession:
//     soak.idem -> soak.out, read_committed, every fourth transaction
//     aborted);
//   - a share group accepting, releasing (once) and rejecting records of
//     soak.shr, rejected ones going to the dead-letter topic dlq.soak;
//   - a consumer group committing offsets of soak.idem;
//   - the log cleaner compacting soak.cmp;
//   - schema registrations on the schema registry.
//
// After every restart: the records acknowledged in the cycle before are
// there unchanged, committed offsets (both groups) have not moved back,
// the schemas registered in the cycle before are there with their ids, and
// the LSO of soak.out is not stuck (it passes every high watermark seen
// more than lsoGrace ago). Throughout: no record whose acceptance was
// acknowledged is delivered again. At the end: every acknowledged record
// once, unchanged; every committed transaction whole and every aborted one
// invisible under read_committed, and no source record in two committed
// transactions; every durably rejected record in the DLQ (copies counted);
// the compacted topic's last value per key equal to the model of the
// latest value per key; every schema.
//
// In the normal suite it runs soakDefaultCycles cycles per mode; with the
// build tag sharqsoak the default is 1,000 (soak_long_test.go), and
// SHARQ_SOAK_CYCLES overrides both (SHARQ_SOAK_DEADLINE=40m stops cycling
// after that long, still with the final check):
//
//	nice -n 10 go test -tags sharqsoak ./cmd/sharq -run TestMixedKill9Soak -v -timeout 4h
//
// Every figure is printed on a "SOAK" line.
func TestMixedKill9Soak(t *testing.T) {
	cycles := soakDefaultCycles
	if v, err := strconv.Atoi(os.Getenv("SHARQ_SOAK_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	modes := []struct {
		name  string
		flush []string
	}{
		{"flush-per-message", []string{"--override", "log.flush.interval.messages=1"}},
		{"default-flush", nil},
	}
	if m := os.Getenv("SHARQ_SOAK_MODE"); m != "" {
		modes = slices.DeleteFunc(modes, func(x struct {
			name  string
			flush []string
		}) bool {
			return x.name != m
		})
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			s := &soak{t: t, mode: m.name, extra: m.flush, model: newSoakModel()}
			s.run(cycles)
		})
	}
}

const (
	soakPartitions = 3
	lsoGrace       = 12 * time.Second // transaction timeout 2 s + the abort scan + a restart
	txnTimeoutMs   = 2000
)

type pk struct {
	p int32
	o int64
}

type ackedRec struct {
	topic string
	p     int32
	o     int64
	key   string
}

type txnRec struct{ n int }

type schemaReg struct {
	id     int
	schema string
}

type soakModel struct {
	mu sync.Mutex
	// acked: value -> where it was acknowledged; produced counts attempts.
	acked    map[string]ackedRec
	produced int
	// cycleAcked: the values acknowledged in the current cycle.
	cycleAcked []string
	// transactions by id: committed (EndTxn answered commit), aborted
	// (answered abort), unknown (no answer: either outcome, all or none).
	committed, aborted, unknown map[string]int
	// share: offsets of soak.shr whose accept or reject was acknowledged.
	accepted, rejected map[pk]bool
	released           map[pk]bool
	redelivered        []string // violations
	shareDeliveries    int
	// committed offsets acknowledged to the consumer group, per partition.
	cgCommitted map[int32]int64
	// observed committed offsets of the transactional group.
	ctpSeen map[int32]int64
	// compacted topic: per key the seq of the latest acknowledged value,
	// and every seq produced (acknowledged or not).
	cmpAcked    map[string]int
	cmpProduced map[string][]int
	// schemas: subject -> registration; cycleSchemas those of this cycle.
	schemas      map[string]schemaReg
	cycleSchemas []string
	// LSO samples of soak.out: when, and the high watermark then.
	lsoSamples []lsoSample
	violations []string
	// stuckClients counts, per worker, cycles whose client did not return
	// within 20 s of the kill (a client-side hang against a dead broker).
	stuckClients map[string]int
}

type lsoSample struct {
	at time.Time
	hw int64
}

func newSoakModel() *soakModel {
	return &soakModel{
		acked: map[string]ackedRec{}, committed: map[string]int{}, aborted: map[string]int{}, unknown: map[string]int{},
		accepted: map[pk]bool{}, rejected: map[pk]bool{}, released: map[pk]bool{},
		cgCommitted: map[int32]int64{}, ctpSeen: map[int32]int64{},
		cmpAcked: map[string]int{}, cmpProduced: map[string][]int{}, schemas: map[string]schemaReg{},
		stuckClients: map[string]int{},
	}
}

func (m *soakModel) violate(format string, args ...any) {
	m.mu.Lock()
	m.violations = append(m.violations, fmt.Sprintf(format, args...))
	m.mu.Unlock()
}

type soak struct {
	t       *testing.T
	mode    string
	extra   []string
	dir     string
	model   *soakModel
	readyMs []float64
	p       *proc
}

func (s *soak) args() []string {
	return append([]string{
		"--override", "num.partitions=1",
		"--override", "group.initial.rebalance.delay.ms=0",
		"--override", "log.cleaner.backoff.ms=200",
		"--override", "transaction.abort.timed.out.transaction.cleanup.interval.ms=500",
		"--override", "errors.deadletterqueue.auto.create.topics.enable=true",
		"--override", "schema.registry.listeners=http://127.0.0.1:0",
	}, s.extra...)
}

func (s *soak) start() {
	s.p = startSharq(s.t, s.dir, s.args()...)
	s.readyMs = append(s.readyMs, float64(s.p.ready.Microseconds())/1000)
}

func (s *soak) kill() {
	s.p.cmd.Process.Kill()
	<-s.p.exited
}

func soakf(t *testing.T, format string, args ...any) {
	t.Helper()
	line := "SOAK " + fmt.Sprintf(format, args...)
	t.Log(line)
	fmt.Println(line)
}

func (s *soak) run(cycles int) {
	t := s.t
	s.dir = t.TempDir()
	if keep := os.Getenv("SHARQ_SOAK_KEEP"); keep != "" { // keep the data for a post-mortem
		s.dir = filepath.Join(keep, s.mode)
		os.MkdirAll(s.dir, 0o755)
	}
	s.start()
	s.setup()
	began := time.Now()
	// SHARQ_SOAK_DEADLINE (a duration) ends the cycling early, still with
	// the final check, so a long run always reports its figures.
	deadline, _ := time.ParseDuration(os.Getenv("SHARQ_SOAK_DEADLINE"))
	for c := range cycles {
		if deadline > 0 && time.Since(began) > deadline {
			soakf(t, "mode=%s SHARQ_SOAK_DEADLINE %v reached after %d cycles", s.mode, deadline, c)
			cycles = c
			break
		}
		s.cycle(c) // ends with the kill
		s.start()
		s.checkRestart(c)
		if len(s.model.violations) > 0 {
			cycles = c + 1
			break
		}
		if (c+1)%50 == 0 {
			soakf(t, "mode=%s progress cycles=%d acked=%d elapsed=%s", s.mode, c+1, len(s.model.acked), time.Since(began).Round(time.Second))
		}
	}
	s.final(cycles, time.Since(began))
	s.kill()
}

func (s *soak) ctx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func (s *soak) admin() (*kgo.Client, *kadm.Client) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.p.addr))
	if err != nil {
		s.t.Fatal(err)
	}
	return cl, kadm.NewClient(cl)
}

func (s *soak) setup() {
	t := s.t
	ctx, cancel := s.ctx(30 * time.Second)
	defer cancel()
	cl, adm := s.admin()
	defer cl.Close()
	one := map[string]*string{}
	for topic, n := range map[string]int32{"soak.idem": soakPartitions, "soak.shr": 1, "soak.out": 1} {
		if r, err := adm.CreateTopics(ctx, n, 1, one, topic); err != nil || r.Error() != nil {
			t.Fatalf("create %s: %v %v", topic, err, r.Error())
		}
	}
	cmp := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "segment.ms": kadm.StringPtr("500"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"), "min.compaction.lag.ms": kadm.StringPtr("0")}
	if r, err := adm.CreateTopics(ctx, 1, 1, cmp, "soak.cmp"); err != nil || r.Error() != nil {
		t.Fatalf("create soak.cmp: %v %v", err, r.Error())
	}
	setGroupConfigs(t, ctx, cl, "soak.sg", map[string]string{
		"share.auto.offset.reset":           "earliest",
		"errors.deadletterqueue.topic.name": "dlq.soak",
	})
}

// cycle runs the workload for a random while; the kill follows.
func (s *soak) cycle(c int) {
	m := s.model
	m.mu.Lock()
	m.cycleAcked, m.cycleSchemas = nil, nil
	m.mu.Unlock()
	ctx, stop := context.WithCancel(context.Background())
	workers := map[string]func(context.Context, int){"producer": s.produce, "transactions": s.transform, "share": s.share, "consumer group": s.consume, "schemas": s.register}
	done := make(chan string, len(workers))
	for name, w := range workers {
		go func() { w(ctx, c); done <- name }()
	}
	time.Sleep(time.Duration(400+rand.IntN(1200)) * time.Millisecond) // the kill lands wherever the workload is
	s.kill()
	stop()
	// The broker is gone, so a worker still blocked after this long is
	// stuck in its client library against a dead address, not waiting on
	// sharq: it is counted, its stack logged once, and left behind (it
	// holds nothing the next cycle uses).
	left := map[string]bool{}
	for name := range workers {
		left[name] = true
	}
	timeout := time.After(20 * time.Second)
	for len(left) > 0 {
		select {
		case name := <-done:
			delete(left, name)
		case <-timeout:
			for name := range left {
				s.model.mu.Lock()
				s.model.stuckClients[name]++
				first := s.model.stuckClients[name] == 1
				s.model.mu.Unlock()
				if first {
					buf := make([]byte, 1<<20)
					buf = buf[:runtime.Stack(buf, true)]
					s.t.Logf("cycle %d: the %s worker is stuck 20 s after the kill; goroutines:\n%s", c, name, stuckStacks(buf))
				}
			}
			return
		}
	}
}

// stuckStacks keeps the goroutines of a stack dump that are inside
// franz-go, where a stuck worker waits.
func stuckStacks(dump []byte) string {
	var out []string
	for _, g := range strings.Split(string(dump), "\n\n") {
		if strings.Contains(g, "soak_test.go") && strings.Contains(g, "franz-go") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

func soakClient(addr string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(2 * time.Second),
		kgo.DialTimeout(time.Second), kgo.RequestTimeoutOverhead(2 * time.Second)}, opts...)...)
}

// produce: the idempotent producer, acks=all.
func (s *soak) produce(ctx context.Context, c int) {
	m := s.model
	cl, err := soakClient(s.p.addr, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(2000), kgo.RecordDeliveryTimeout(3*time.Second),
		kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		return
	}
	defer func() { go cl.Close() }()
	for seq := 0; ctx.Err() == nil; seq++ {
		m.mu.Lock()
		m.produced++
		n := m.produced
		m.mu.Unlock()
		var r *kgo.Record
		switch seq % 4 {
		case 0, 1:
			r = &kgo.Record{Topic: "soak.idem", Value: fmt.Appendf(nil, "i|c%04d|%09d", c, n)}
			r.Key = append([]byte("k"), r.Value...)
		case 2:
			r = &kgo.Record{Topic: "soak.shr", Value: fmt.Appendf(nil, "s|c%04d|%09d", c, n)}
		default:
			key := fmt.Sprintf("k%02d", n/4%40)
			r = &kgo.Record{Topic: "soak.cmp", Key: []byte(key), Value: fmt.Appendf(nil, "%s|%09d", key, n)}
			m.mu.Lock()
			m.cmpProduced[key] = append(m.cmpProduced[key], n)
			m.mu.Unlock()
		}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				return
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			v := string(r.Value)
			m.acked[v] = ackedRec{topic: r.Topic, p: r.Partition, o: r.Offset, key: string(r.Key)}
			m.cycleAcked = append(m.cycleAcked, v)
			if r.Topic == "soak.cmp" {
				seq, _ := strconv.Atoi(v[strings.IndexByte(v, '|')+1:])
				if seq > m.cmpAcked[string(r.Key)] {
					m.cmpAcked[string(r.Key)] = seq
				}
			}
		})
		// About 500 records a second: a thousand cycles stay within what
		// the final check can read back and the model can hold.
		time.Sleep(2 * time.Millisecond)
	}
}

// transform: consume-transform-produce in transactions.
func (s *soak) transform(ctx context.Context, c int) {
	m := s.model
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(s.p.addr), kgo.RetryTimeout(2*time.Second), kgo.DialTimeout(time.Second),
		kgo.TransactionalID("soak.ctp"), kgo.TransactionTimeout(txnTimeoutMs*time.Millisecond),
		kgo.ConsumerGroup("soak.ctp"), kgo.ConsumeTopics("soak.idem"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.DefaultProduceTopic("soak.out"))
	if err != nil {
		return
	}
	defer func() { go sess.Close() }()
	for i := 0; ctx.Err() == nil; i++ {
		recs := sess.PollRecords(ctx, 20).Records()
		if len(recs) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return
		}
		id := fmt.Sprintf("c%04d-t%05d", c, i)
		for j, r := range recs {
			sess.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s|%d|%d|%s", id, j, len(recs), r.Value)}, nil)
		}
		try := kgo.TryCommit
		if i%4 == 3 {
			try = kgo.TryAbort
		}
		m.mu.Lock()
		m.unknown[id] = len(recs) // until EndTxn answers
		m.mu.Unlock()
		committed, err := sess.End(ctx, try)
		m.mu.Lock()
		if err == nil {
			delete(m.unknown, id)
			if committed {
				m.committed[id] = len(recs)
			} else {
				m.aborted[id] = len(recs)
			}
		}
		m.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// share: a share consumer accepting most records, releasing some once and
// rejecting some; an acknowledgement counts once FlushAcks answered it.
func (s *soak) share(ctx context.Context, c int) {
	m := s.model
	// FlushAcks returns once every acknowledgement was sent and its
	// callback run, failed or not: an acknowledgement counts as answered
	// only if no callback reported an error meanwhile (the callback names
	// partitions, not offsets).
	var ackErrs atomic.Int64
	cl, err := soakClient(s.p.addr, kgo.ShareGroup("soak.sg"), kgo.ConsumeTopics("soak.shr"), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) {
			if !rs.Ok() {
				ackErrs.Add(1)
			}
		}))
	if err != nil {
		return
	}
	defer func() { go cl.Close() }()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		var acc, rej []pk
		fs.EachRecord(func(r *kgo.Record) {
			k := pk{r.Partition, r.Offset}
			m.mu.Lock()
			m.shareDeliveries++
			if m.accepted[k] || m.rejected[k] {
				m.redelivered = append(m.redelivered, fmt.Sprintf("cycle %d: offset %d (%s) delivered again after its acknowledgement was answered", c, r.Offset, r.Value))
			}
			release := r.Offset%10 == 1 && !m.released[k]
			if release {
				m.released[k] = true
			}
			m.mu.Unlock()
			switch {
			case release:
				cl.MarkAcks(kgo.AckRelease, r)
			case r.Offset%10 == 3:
				cl.MarkAcks(kgo.AckReject, r)
				rej = append(rej, k)
			default:
				cl.MarkAcks(kgo.AckAccept, r)
				acc = append(acc, k)
			}
		})
		if len(acc)+len(rej) == 0 {
			continue
		}
		before := ackErrs.Load()
		if err := cl.FlushAcks(ctx); err != nil || ackErrs.Load() != before {
			return
		}
		m.mu.Lock()
		for _, k := range acc {
			m.accepted[k] = true
		}
		for _, k := range rej {
			m.rejected[k] = true
		}
		m.mu.Unlock()
	}
}

// consume: a consumer group committing what it read, synchronously.
func (s *soak) consume(ctx context.Context, c int) {
	m := s.model
	cl, err := soakClient(s.p.addr, kgo.ConsumerGroup("soak.cg"), kgo.ConsumeTopics("soak.idem"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return
	}
	defer func() { go cl.Close() }() // against a dead broker Close retries; the next cycle need not wait
	for ctx.Err() == nil {
		recs := cl.PollRecords(ctx, 200).Records()
		if len(recs) == 0 {
			continue
		}
		if err := cl.CommitRecords(ctx, recs...); err != nil {
			return
		}
		m.mu.Lock()
		for _, r := range recs {
			if r.Offset+1 > m.cgCommitted[r.Partition] {
				m.cgCommitted[r.Partition] = r.Offset + 1
			}
		}
		m.mu.Unlock()
	}
}

// register: schema registrations, one new subject at a time.
func (s *soak) register(ctx context.Context, c int) {
	m := s.model
	if s.p.schemaRegistry == "" {
		return
	}
	for i := 0; ctx.Err() == nil; i++ {
		subject := fmt.Sprintf("soak-c%04d-%d-value", c, i)
		schema := fmt.Sprintf(`{"type":"record","name":"R%d_%d","fields":[{"name":"f","type":"string"}]}`, c, i)
		body, _ := json.Marshal(map[string]string{"schema": schema})
		req, _ := http.NewRequestWithContext(ctx, "POST", s.p.schemaRegistry+"/subjects/"+subject+"/versions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			m.violate("cycle %d: schema registration of %s answered %d %s", c, subject, resp.StatusCode, b)
			return
		}
		var out struct{ ID int }
		if json.Unmarshal(b, &out) != nil || out.ID <= 0 {
			m.violate("cycle %d: schema registration of %s answered %s", c, subject, b)
			return
		}
		m.mu.Lock()
		m.schemas[subject] = schemaReg{id: out.ID, schema: schema}
		m.cycleSchemas = append(m.cycleSchemas, subject)
		m.mu.Unlock()
		time.Sleep(20 * time.Millisecond) // a registration rate, not a flood
	}
}

// checkRestart checks, right after the restart that followed cycle c,
// what the cycle acknowledged.
func (s *soak) checkRestart(c int) {
	m := s.model
	ctx, cancel := s.ctx(30 * time.Second)
	defer cancel()
	cl, adm := s.admin()
	defer cl.Close()

	// The records acknowledged in the cycle, read back where acknowledged.
	m.mu.Lock()
	want := map[string]map[int32]map[int64]string{}
	for _, v := range m.cycleAcked {
		a := m.acked[v]
		if want[a.topic] == nil {
			want[a.topic] = map[int32]map[int64]string{}
		}
		if want[a.topic][a.p] == nil {
			want[a.topic][a.p] = map[int64]string{}
		}
		want[a.topic][a.p][a.o] = v
	}
	m.mu.Unlock()
	for topic, parts := range want {
		if topic == "soak.cmp" {
			continue // the cleaner removes superseded values: checked against the model at the end
		}
		for p, offs := range parts {
			s.checkOffsets(ctx, topic, p, offs, c)
		}
	}

	// Committed offsets never move back.
	for group, floor := range map[string]map[int32]int64{"soak.cg": m.cgCommitted, "soak.ctp": m.ctpSeen} {
		got, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			m.violate("cycle %d: fetch offsets of %s: %v", c, group, err)
			continue
		}
		m.mu.Lock()
		for p := int32(0); p < soakPartitions; p++ {
			o, ok := got.Lookup("soak.idem", p)
			at := int64(-1)
			if ok {
				at = o.At
			}
			if f, had := floor[p]; had && at < f {
				m.violations = append(m.violations, fmt.Sprintf("cycle %d: %s committed offset of partition %d moved back to %d from %d", c, group, p, at, f))
			}
			if group == "soak.ctp" && at > floor[p] {
				floor[p] = at
			}
		}
		m.mu.Unlock()
	}

	// Schemas of the cycle.
	m.mu.Lock()
	subjects := slices.Clone(m.cycleSchemas)
	m.mu.Unlock()
	for _, subj := range subjects {
		s.checkSchema(ctx, subj, c)
	}

	// The LSO of soak.out passes every high watermark older than lsoGrace.
	hw, lso := s.outOffsets(ctx, adm)
	now := time.Now()
	m.mu.Lock()
	if hw >= 0 {
		m.lsoSamples = append(m.lsoSamples, lsoSample{now, hw})
	}
	kept := m.lsoSamples[:0]
	for _, smp := range m.lsoSamples {
		if now.Sub(smp.at) > lsoGrace {
			if lso >= 0 && lso < smp.hw {
				m.violations = append(m.violations, fmt.Sprintf("cycle %d: LSO of soak.out %d is stuck below %d, the high watermark %v ago", c, lso, smp.hw, now.Sub(smp.at).Round(time.Millisecond)))
			}
			continue
		}
		kept = append(kept, smp)
	}
	m.lsoSamples = kept
	m.violations = append(m.violations, m.redelivered...)
	m.redelivered = nil
	m.mu.Unlock()
	for _, v := range m.violations {
		s.t.Errorf("%s", v)
	}
}

// outOffsets answers soak.out's high watermark and last stable offset.
func (s *soak) outOffsets(ctx context.Context, adm *kadm.Client) (hw, lso int64) {
	hw, lso = -1, -1
	if ends, err := adm.ListEndOffsets(ctx, "soak.out"); err == nil {
		if o, ok := ends.Lookup("soak.out", 0); ok && o.Err == nil {
			hw = o.Offset
		}
	}
	if ends, err := adm.ListCommittedOffsets(ctx, "soak.out"); err == nil {
		if o, ok := ends.Lookup("soak.out", 0); ok && o.Err == nil {
			lso = o.Offset
		}
	}
	return hw, lso
}

// checkOffsets reads partition p of topic at the given offsets and
// requires each to hold its acknowledged value.
func (s *soak) checkOffsets(ctx context.Context, topic string, p int32, offs map[int64]string, c int) {
	lo := int64(-1)
	for o := range offs {
		if lo < 0 || o < lo {
			lo = o
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.p.addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(lo)}}),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		s.t.Fatal(err)
	}
	defer cl.Close()
	left := len(offs)
	for left > 0 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if v, ok := offs[r.Offset]; ok {
				if string(r.Value) != v {
					s.model.violate("cycle %d: %s-%d offset %d holds %q, acknowledged %q", c, topic, p, r.Offset, r.Value, v)
				}
				delete(offs, r.Offset)
				left--
			}
		})
	}
	if left > 0 {
		s.model.violate("cycle %d: %d acknowledged records of %s-%d missing after the restart", c, left, topic, p)
	}
}

func (s *soak) checkSchema(ctx context.Context, subject string, c int) {
	m := s.model
	m.mu.Lock()
	want := m.schemas[subject]
	m.mu.Unlock()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.p.schemaRegistry+"/subjects/"+subject+"/versions/1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.violate("cycle %d: schema %s: %v", c, subject, err)
		return
	}
	defer resp.Body.Close()
	var got struct {
		ID     int
		Schema string
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.ID != want.id || got.Schema != want.schema {
		m.violate("cycle %d: schema %s after the restart: %d %s, want id %d", c, subject, resp.StatusCode, b, want.id)
	}
}

// readAll reads a whole topic (read_committed when committed) and returns
// its records.
func (s *soak) readAll(topic string, parts int32, committed bool) []*kgo.Record {
	ctx, cancel := s.ctx(2 * time.Minute)
	defer cancel()
	cl, adm := s.admin()
	defer cl.Close()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		s.t.Fatal(err)
	}
	offsets := map[int32]kgo.Offset{}
	hw := map[int32]int64{}
	for p := range parts {
		offsets[p] = kgo.NewOffset().AtStart()
		o, ok := ends.Lookup(topic, p)
		if !ok || o.Err != nil {
			s.model.violate("final: end offset of %s-%d: %v", topic, p, o.Err)
			continue
		}
		hw[p] = o.Offset
	}
	opts := []kgo.Opt{kgo.SeedBrokers(s.p.addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}), kgo.FetchMaxWait(100 * time.Millisecond)}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	rd, err := kgo.NewClient(opts...)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rd.Close()
	var out []*kgo.Record
	pos := map[int32]int64{}
	idle := 0
	for ctx.Err() == nil {
		finished := true
		for p, h := range hw {
			if pos[p] < h-1 {
				finished = false
			}
		}
		if finished || idle > 20 {
			break
		}
		pctx, pc := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := rd.PollFetches(pctx)
		pc()
		n := 0
		for _, fe := range fs.Errors() {
			if ctx.Err() == nil && !errorsIsDeadline(fe.Err) {
				s.model.violate("final: reading %s-%d: %v", fe.Topic, fe.Partition, fe.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			pos[r.Partition] = r.Offset
			n++
		})
		if n == 0 {
			idle++ // read_committed ends before the high watermark, at the LSO; markers end partitions early
		} else {
			idle = 0
		}
	}
	return out
}

func (s *soak) final(cycles int, took time.Duration) {
	t := s.t
	m := s.model
	// Let the LSO settle: every open transaction times out.
	ctx, cancel := s.ctx(60 * time.Second)
	defer cancel()
	cl, adm := s.admin()
	defer cl.Close()
	for {
		hw, lso := s.outOffsets(ctx, adm)
		if hw == lso && hw >= 0 {
			break
		}
		if ctx.Err() != nil {
			m.violate("final: LSO of soak.out %d stuck below the high watermark %d", lso, hw)
			break
		}
		time.Sleep(100 * time.Millisecond) // the transaction timeout runs on the broker's clock
	}

	// Every acknowledged record once, unchanged.
	found := map[string]int{}
	changed := 0
	for _, topic := range []string{"soak.idem", "soak.shr"} {
		parts := int32(1)
		if topic == "soak.idem" {
			parts = soakPartitions
		}
		for _, r := range s.readAll(topic, parts, false) {
			v := string(r.Value)
			found[v]++
			if a, ok := m.acked[v]; ok && (a.p != r.Partition || a.o != r.Offset || a.key != string(r.Key)) {
				changed++
			}
		}
	}
	lost, dups, acked := 0, 0, 0
	for v, a := range m.acked {
		if a.topic == "soak.cmp" {
			continue
		}
		acked++
		if found[v] == 0 {
			lost++
			if lost <= 5 {
				m.violate("final: acknowledged record %s (%s-%d@%d) missing", v, a.topic, a.p, a.o)
			}
		}
	}
	for _, n := range found {
		if n > 1 {
			dups += n - 1
		}
	}
	if changed > 0 || dups > 0 {
		m.violate("final: %d acknowledged records moved or changed, %d duplicates", changed, dups)
	}

	// Transactions under read_committed.
	perTxn := map[string]int{}
	sources := map[string]int{}
	for _, r := range s.readAll("soak.out", 1, true) {
		f := strings.SplitN(string(r.Value), "|", 4)
		if len(f) != 4 {
			m.violate("final: soak.out holds %q", r.Value)
			continue
		}
		perTxn[f[0]]++
		sources[f[3]]++
	}
	torn, abortedSeen, missingTxn, twice := 0, 0, 0, 0
	for id, n := range perTxn {
		switch {
		case m.aborted[id] > 0:
			abortedSeen++
		case m.committed[id] > 0 && n != m.committed[id], m.unknown[id] > 0 && n != m.unknown[id]:
			torn++
		}
	}
	for id := range m.committed {
		if perTxn[id] == 0 {
			missingTxn++
		}
	}
	for _, n := range sources {
		if n > 1 {
			twice++
		}
	}
	if torn+abortedSeen+missingTxn+twice > 0 {
		m.violate("final: transactions: %d partly visible, %d aborted visible, %d committed missing, %d source records in two committed transactions", torn, abortedSeen, missingTxn, twice)
	}

	// The DLQ holds every durably rejected record. Records rejected just
	// before a kill are Archiving on disk and written again when the
	// share-partition loads, which a member's fetch does: a consumer
	// comes back (accepting what it is given) until the DLQ is complete.
	dead := map[int64]int{}
	s.drainShare(func() bool {
		dead = map[int64]int{}
		for _, r := range s.readAll("dlq.soak", 1, false) {
			for _, h := range r.Headers {
				if h.Key == "__dlq.errors.offset" {
					off, _ := strconv.ParseInt(string(h.Value), 10, 64)
					dead[off]++
				}
			}
		}
		for k := range m.rejected {
			if dead[k.o] == 0 {
				return false
			}
		}
		return true
	})
	dlqMissing, dlqCopies, dlqOther := 0, 0, 0
	for k := range m.rejected {
		switch n := dead[k.o]; {
		case n == 0:
			dlqMissing++
		case n > 1:
			dlqCopies += n - 1
		}
	}
	dlqUnconfirmed := 0
	for off := range dead {
		switch {
		case m.rejected[pk{0, off}]:
		case off%10 == 3:
			dlqUnconfirmed++ // rejected, the answer cut off by the kill
		default:
			dlqOther++ // archived by the delivery count limit: kills in the middle of deliveries
		}
	}
	if dlqMissing > 0 {
		m.violate("final: %d of %d durably rejected records not in the DLQ", dlqMissing, len(m.rejected))
	}

	// The compacted topic against the model of the latest value per key.
	last := map[string]int{}
	cmpRecords := 0
	for _, r := range s.readAll("soak.cmp", 1, false) {
		cmpRecords++
		v := string(r.Value)
		seq, _ := strconv.Atoi(v[strings.IndexByte(v, '|')+1:])
		if seq < last[string(r.Key)] {
			m.violate("final: soak.cmp key %s goes back from %d to %d", r.Key, last[string(r.Key)], seq)
		}
		last[string(r.Key)] = seq
	}
	cmpWrong := 0
	cmpProduced := 0
	for key, seq := range m.cmpAcked {
		cmpProduced += len(m.cmpProduced[key])
		got := last[key]
		// The latest acknowledged value, or one produced after it whose
		// answer the kill cut off.
		if got < seq || !slices.Contains(m.cmpProduced[key], got) {
			cmpWrong++
			if cmpWrong <= 5 {
				m.violate("final: soak.cmp key %s ends with seq %d, latest acknowledged %d", key, got, seq)
			}
		}
	}

	// Every schema.
	subjects := make([]string, 0, len(m.schemas))
	for subj := range m.schemas {
		subjects = append(subjects, subj)
	}
	sort.Strings(subjects)
	for _, subj := range subjects {
		s.checkSchema(ctx, subj, cycles)
	}

	p50, p90, p99, pmax := percentiles(s.readyMs)
	soakf(t, "mode=%s cycles=%d took=%s produced=%d acked=%d lost=%d changed=%d duplicates=%d", s.mode, cycles, took.Round(time.Second), m.produced, acked, lost, changed, dups)
	soakf(t, "mode=%s transactions committed=%d aborted=%d unknown=%d partly_visible=%d aborted_visible=%d committed_missing=%d source_twice=%d", s.mode, len(m.committed), len(m.aborted), len(m.unknown), torn, abortedSeen, missingTxn, twice)
	soakf(t, "mode=%s share deliveries=%d accepted=%d rejected=%d released=%d redelivered_after_ack=%d dlq_missing=%d dlq_extra_copies=%d dlq_rejects_unanswered=%d dlq_delivery_limit=%d", s.mode, m.shareDeliveries, len(m.accepted), len(m.rejected), len(m.released), countRedelivered(m.violations), dlqMissing, dlqCopies, dlqUnconfirmed, dlqOther)
	soakf(t, "mode=%s compacted keys=%d produced=%d records_after_cleaning=%d wrong_latest=%d; schemas=%d; consumer_group_partitions=%d", s.mode, len(m.cmpAcked), cmpProduced, cmpRecords, cmpWrong, len(m.schemas), len(m.cgCommitted))
	soakf(t, "mode=%s clients stuck after a kill (left behind): %v", s.mode, m.stuckClients)
	soakf(t, "mode=%s restart_to_ready_ms p50=%.1f p90=%.1f p99=%.1f max=%.1f (n=%d)", s.mode, p50, p90, p99, pmax, len(s.readyMs))
	for _, v := range m.violations {
		t.Errorf("%s", v)
	}
}

// drainShare runs a share consumer that accepts what it is given (still
// checking nothing acknowledged comes back) until done reports true or a
// minute passes.
func (s *soak) drainShare(done func() bool) {
	m := s.model
	ctx, cancel := s.ctx(time.Minute)
	defer cancel()
	cl, err := soakClient(s.p.addr, kgo.ShareGroup("soak.sg"), kgo.ConsumeTopics("soak.shr"), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		s.t.Fatal(err)
	}
	defer cl.Close()
	for !done() && ctx.Err() == nil {
		pctx, pc := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pc()
		fs.EachRecord(func(r *kgo.Record) {
			k := pk{r.Partition, r.Offset}
			m.mu.Lock()
			if m.accepted[k] || m.rejected[k] {
				m.violations = append(m.violations, fmt.Sprintf("final: offset %d (%s) delivered again after its acknowledgement was answered", r.Offset, r.Value))
			}
			m.mu.Unlock()
			cl.MarkAcks(kgo.AckAccept, r)
		})
		cl.FlushAcks(ctx)
	}
}

func errorsIsDeadline(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

func countRedelivered(vs []string) int {
	n := 0
	for _, v := range vs {
		if strings.Contains(v, "delivered again") {
			n++
		}
	}
	return n
}

func percentiles(xs []float64) (p50, p90, p99, pmax float64) {
	if len(xs) == 0 {
		return
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.5), at(0.9), at(0.99), s[len(s)-1]
}
