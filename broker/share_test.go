package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

type tpo struct {
	p   int32
	off int64
}

// TestShareGroupThreeConsumers: three franz-go share consumers on a
// 2-partition topic all receive records, and when every record is accepted
// each is delivered exactly once. The group uses the default
// share.auto.offset.reset=latest, so a producer runs until the
// share-partitions have initialised; every record at or after the first
// offset delivered on a partition must then be delivered once.
func TestShareGroupThreeConsumers(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, group = "queue", "workers"
	mustCreateTopic(t, adm, topic, 2, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var mu sync.Mutex
	seen := map[tpo]int{}
	byConsumer := map[int]int{}
	first := map[int32]int64{}
	var wg sync.WaitGroup
	stopConsumers := make(chan struct{})
	for i := 0; i < 3; i++ {
		cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
		wg.Add(1)
		go func(i int, cl *kgo.Client) {
			defer wg.Done()
			for {
				select {
				case <-stopConsumers:
					cl.Close()
					return
				default:
				}
				pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
				fs := cl.PollFetches(pctx)
				pcancel()
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					k := tpo{r.Partition, r.Offset}
					seen[k]++
					byConsumer[i]++
					if f, ok := first[r.Partition]; !ok || r.Offset < f {
						first[r.Partition] = r.Offset
					}
					mu.Unlock()
					cl.MarkAcks(kgo.AckAccept, r)
				})
				if ctx.Err() != nil {
					return
				}
			}
		}(i, cl)
	}

	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	produced := 0
	for {
		var recs []*kgo.Record
		for j := 0; j < 10; j++ {
			recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(produced)), Value: []byte(fmt.Sprint(produced))})
			produced++
		}
		produceSync(t, producer, recs...)
		mu.Lock()
		ready := len(first) == 2 && len(byConsumer) == 3
		mu.Unlock()
		if ready && produced >= 300 {
			break
		}
		if ctx.Err() != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("consumers never all received records: by consumer %v, first offsets %v", byConsumer, first)
		}
	}
	end := listEnd(t, adm, topic)
	// Wait until everything from the first delivered offsets is in.
	for {
		mu.Lock()
		done := true
		for p := int32(0); p < 2; p++ {
			for off := first[p]; off < end[p]; off++ {
				if seen[tpo{p, off}] == 0 {
					done = false
				}
			}
		}
		mu.Unlock()
		if done {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("not every record was delivered")
		}
		waitALittle(ctx)
	}
	close(stopConsumers)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for k, n := range seen {
		if n != 1 {
			t.Errorf("partition %d offset %d delivered %d times", k.p, k.off, n)
		}
	}
	if len(byConsumer) != 3 {
		t.Errorf("records by consumer: %v", byConsumer)
	}
	t.Logf("delivered %d records; by consumer %v; first offsets %v; end offsets %v", len(seen), byConsumer, first, end)
}

func listEnd(t testing.TB, adm *kadm.Client, topic string) map[int32]int64 {
	t.Helper()
	res, err := adm.ListEndOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	res.Each(func(lo kadm.ListedOffset) { out[lo.Partition] = lo.Offset })
	return out
}

// waitALittle yields to the consumers between checks of shared state; the
// loop it sits in ends on its own condition, not on the wait.
func waitALittle(ctx context.Context) {
	t := time.NewTimer(20 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// shareConsume polls one share consumer, handing each record to fn, until
// fn returns true or the context ends.
func shareConsume(t *testing.T, ctx context.Context, cl *kgo.Client, fn func(r *kgo.Record) bool) {
	t.Helper()
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if !done && fn(r) {
				done = true
			}
		})
		if done {
			return
		}
	}
	t.Fatalf("share consume: %v", ctx.Err())
}

// warmUp produces until the share-partition has initialised (at the
// default share.auto.offset.reset=latest) and the consumer sees a record,
// which it accepts.
func warmUp(t *testing.T, ctx context.Context, producer, consumer *kgo.Client) {
	t.Helper()
	warm := make(chan struct{})
	defer close(warm)
	go func() {
		for {
			select {
			case <-warm:
				return
			default:
			}
			// Errors show up as the consumer never seeing a record.
			producer.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")})
			waitALittle(ctx)
		}
	}()
	shareConsume(t, ctx, consumer, func(r *kgo.Record) bool {
		consumer.MarkAcks(kgo.AckAccept, r)
		return true
	})
}

// TestShareReleaseRejectLimits: a record released every time is delivered
// exactly group.share.delivery.count.limit times with counts 1..5 and then
// archived; a rejected record never comes back.
func TestShareReleaseRejectLimits(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "poison"
	mustCreateTopic(t, adm, topic, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ShareGroup("limits"), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))

	warmUp(t, ctx, producer, cl)

	produceSync(t, producer, &kgo.Record{Value: []byte("poison")}, &kgo.Record{Value: []byte("reject-me")})
	var counts []int32
	rejected := 0
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		switch string(r.Value) {
		case "poison":
			counts = append(counts, r.DeliveryCount())
			cl.MarkAcks(kgo.AckRelease, r)
		case "reject-me":
			rejected++
			cl.MarkAcks(kgo.AckReject, r)
		default:
			cl.MarkAcks(kgo.AckAccept, r)
		}
		return len(counts) == 5
	})
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatalf("flush acks: %v", err)
	}
	// A marker after them: once it arrives, neither may come back.
	produceSync(t, producer, &kgo.Record{Value: []byte("marker")})
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		switch string(r.Value) {
		case "poison":
			counts = append(counts, r.DeliveryCount())
		case "reject-me":
			rejected++
		}
		cl.MarkAcks(kgo.AckAccept, r)
		return string(r.Value) == "marker"
	})
	if fmt.Sprint(counts) != "[1 2 3 4 5]" {
		t.Errorf("released record delivery counts %v, want [1 2 3 4 5]", counts)
	}
	if rejected != 1 {
		t.Errorf("rejected record delivered %d times", rejected)
	}
}

// TestShareLockExpiryAndDeadMember: records held past the lock duration go
// to another member with delivery count 2, and a member whose connection
// dies has its records redelivered at once.
func TestShareLockExpiryAndDeadMember(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.GroupShareMinRecordLockDurationMs, c.GroupShareRecordLockDurationMs = 1000, 1000
	}))
	adm := newAdmin(t, b)
	const topic, group = "locks", "lockers"
	mustCreateTopic(t, adm, topic, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	holder := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	warmUp(t, ctx, producer, holder)

	// The holder takes "held", never acknowledges it and stops fetching
	// (kgo would otherwise fetch it again itself once the lock expires).
	produceSync(t, producer, &kgo.Record{Value: []byte("held")})
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool {
		if string(r.Value) == "held" {
			holder.PauseFetchTopics(topic)
			return true
		}
		holder.MarkAcks(kgo.AckAccept, r)
		return false
	})
	// A second member gets it after the 1 s lock expires, with count 2.
	other := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	start := time.Now()
	shareConsume(t, ctx, other, func(r *kgo.Record) bool {
		if string(r.Value) != "held" {
			other.MarkAcks(kgo.AckAccept, r)
			return false
		}
		if r.DeliveryCount() != 2 {
			t.Errorf("redelivered with count %d, want 2", r.DeliveryCount())
		}
		other.MarkAcks(kgo.AckAccept, r)
		return true
	})
	t.Logf("redelivered after %v (lock 1 s)", time.Since(start))
	if err := other.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}

	// A member that dies: its connection closes and its records come back
	// without waiting for the lock (the default 30 s would time the test out).
	holder.ResumeFetchTopics(topic)
	produceSync(t, producer, &kgo.Record{Value: []byte("orphan")})
	other.PauseFetchTopics(topic)
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool {
		if string(r.Value) == "orphan" {
			return true
		}
		holder.MarkAcks(kgo.AckAccept, r)
		return false
	})
	holder.Close()
	other.ResumeFetchTopics(topic)
	shareConsume(t, ctx, other, func(r *kgo.Record) bool {
		other.MarkAcks(kgo.AckAccept, r)
		return string(r.Value) == "orphan"
	})
}

// TestShareAdmin: AlterShareGroupOffsets on an empty group (which is also
// how a test reads a topic from the start), DescribeShareGroupOffsets with
// lag, ShareGroupDescribe, and DeleteShareGroupOffsets.
func TestShareAdmin(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, group = "adminq", "admins"
	mustCreateTopic(t, adm, topic, 1, nil)
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	for i := 0; i < 10; i++ {
		produceSync(t, producer, &kgo.Record{Value: []byte(fmt.Sprint(i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	alter, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := alter.Lookup(topic, 0); err != nil {
		t.Fatalf("alter share offsets: %v", err)
	}
	offsets := func() kadm.ShareOffset {
		t.Helper()
		d, err := adm.DescribeShareGroupOffsets(ctx, group)
		if err != nil || d.Error() != nil {
			t.Fatalf("describe share offsets: %v %v", err, d.Error())
		}
		so, _ := d[group].Offsets.Lookup(topic, 0)
		return so
	}
	if so := offsets(); so.StartOffset != 0 || so.Lag != 10 {
		t.Fatalf("after reset: start %d lag %d, want 0 and 10", so.StartOffset, so.Lag)
	}

	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	got := 0
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		cl.MarkAcks(kgo.AckAccept, r)
		got++
		return got == 10
	})
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	// Kafka shows the persisted start offset, written with the SPSO from
	// before the last acknowledgement, so below 10; the live SPSO is 10.
	if so := offsets(); so.StartOffset < 0 || so.StartOffset >= 10 || so.Lag != 0 {
		t.Errorf("after accepting all: start %d lag %d, want the SPSO before the last ack (0-9) and 0", so.StartOffset, so.Lag)
	}
	if spso, ok := b.Server.ShareStartOffset(group, topic, 0); !ok || spso != 10 {
		t.Errorf("live SPSO %d %v, want 10", spso, ok)
	}
	dg, err := adm.DescribeShareGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	g := dg[group]
	if g.Err != nil || g.GroupState != "Stable" || len(g.Members) != 1 || g.Assignor != "simple" {
		t.Fatalf("describe share group: %+v", g)
	}
	alter, err = adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}})
	if err == nil {
		err, _ = alter.Lookup(topic, 0)
	}
	if err == nil {
		t.Error("altering offsets of a group with a member succeeded")
	}
	cl.Close()
	dg, _ = adm.DescribeShareGroups(ctx, group)
	if s := dg[group].GroupState; s != "Empty" {
		t.Errorf("after the member left: %s", s)
	}
	del, err := adm.DeleteShareGroupOffsets(ctx, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := del.Lookup(topic); err != nil {
		t.Fatalf("delete share offsets: %v", err)
	}
	d, _ := adm.DescribeShareGroupOffsets(ctx, group)
	if so, ok := d[group].Offsets.Lookup(topic, 0); ok && so.StartOffset >= 0 {
		t.Errorf("offsets still described after delete: %+v", so)
	}
}

func TestShareGroupsListedAndDeleted(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "listed", 1, nil)
	ctx := testCtx(t)
	alter, err := adm.AlterShareGroupOffsets(ctx, "sg", kadm.Offsets{"listed": {0: {Topic: "listed", Partition: 0, At: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := alter.Lookup("listed", 0); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrListGroupsRequest()
	req.TypesFilter = []string{"Share"}
	resp, err := req.RequestWith(ctx, newClient(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Groups) != 1 || resp.Groups[0].Group != "sg" || resp.Groups[0].GroupType != "share" || resp.Groups[0].GroupState != "Empty" || resp.Groups[0].ProtocolType != "share" {
		t.Fatalf("list share groups: %+v", resp.Groups)
	}
	// The group and its offsets outlive a restart.
	b.Restart()
	adm = newAdmin(t, b)
	if resp, err = req.RequestWith(ctx, newClient(t, b)); err != nil || len(resp.Groups) != 1 {
		t.Fatalf("share groups after restart: %+v %v", resp, err)
	}
	d, _ := adm.DescribeShareGroupOffsets(ctx, "sg")
	if so, ok := d["sg"].Offsets.Lookup("listed", 0); !ok || so.StartOffset != 0 {
		t.Fatalf("share offsets after restart: %+v", so)
	}
	dr, err := adm.DeleteGroups(ctx, "sg")
	if err != nil || dr.Error() != nil {
		t.Fatalf("delete share group: %v %v", err, dr.Error())
	}
	d, _ = adm.DescribeShareGroupOffsets(ctx, "sg")
	if so, ok := d["sg"].Offsets.Lookup("listed", 0); ok && so.StartOffset >= 0 {
		t.Errorf("state survived the group's deletion: %+v", so)
	}
}

// TestShareRenewKeepsLock: a holder that renews its lock (KIP-1222) keeps
// the record past the lock duration; nobody else gets it.
func TestShareRenewKeepsLock(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.GroupShareMinRecordLockDurationMs, c.GroupShareRecordLockDurationMs = 1000, 2000
	}))
	adm := newAdmin(t, b)
	const topic, group = "renewed", "renewers"
	mustCreateTopic(t, adm, topic, 1, nil)
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic)), &kgo.Record{Value: []byte("mine")})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}}); err != nil {
		t.Fatal(err)
	}
	holder := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	var rec *kgo.Record
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool { rec = r; return true })
	holder.PauseFetchTopics(topic)

	other := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	stolen := make(chan *kgo.Record, 1)
	go func() {
		for ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			fs := other.PollFetches(pctx)
			pcancel()
			fs.EachRecord(func(r *kgo.Record) {
				select {
				case stolen <- r:
				default:
				}
			})
		}
	}()
	// Renew every 300 ms for more than two lock durations (2 s each: room
	// for a slow CI machine between renewals).
	renewUntil := time.Now().Add(4500 * time.Millisecond)
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(renewUntil) {
		holder.MarkAcks(kgo.AckRenew, rec)
		if err := holder.FlushAcks(ctx); err != nil {
			t.Fatalf("renew: %v", err)
		}
		select {
		case r := <-stolen:
			t.Fatalf("record %q went to another member while renewed (count %d)", r.Value, r.DeliveryCount())
		case <-tick.C:
		}
	}
	holder.MarkAcks(kgo.AckAccept, rec)
	if err := holder.FlushAcks(ctx); err != nil {
		t.Fatalf("accept after renewing: %v", err)
	}
	select {
	case r := <-stolen:
		t.Fatalf("record %q went to another member", r.Value)
	default:
	}
}

func TestShareStateGoesWithItsTopic(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	ctx := testCtx(t)
	mustCreateTopic(t, adm, "doomed", 1, nil)
	if _, err := adm.AlterShareGroupOffsets(ctx, "sg", kadm.Offsets{"doomed": {0: {Topic: "doomed", Partition: 0, At: 0}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DeleteTopics(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	mustCreateTopic(t, adm, "doomed", 1, nil)
	d, err := adm.DescribeShareGroupOffsets(ctx, "sg")
	if err != nil {
		t.Fatal(err)
	}
	if so, ok := d["sg"].Offsets.Lookup("doomed", 0); ok && so.StartOffset >= 0 {
		t.Errorf("share state of a deleted topic survived into its namesake: %+v", so)
	}
}
