package broker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// within runs f with a context that ends after d, and fails the test if f
// has not returned by then: a broker that deadlocks fails the test instead
// of hanging it.
func within(t *testing.T, what string, d time.Duration, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		if ctx.Err() != nil {
			stuck(t, fmt.Sprintf("%s: no answer in %v: %v", what, d, err))
		}
		if err != nil {
			// Not fatal: the next steps show whether the broker is stuck.
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(d + 5*time.Second):
		stuck(t, fmt.Sprintf("%s: no answer in %v", what, d))
	}
}

// stuck ends the test binary: a broker that deadlocked cannot be stopped, so
// t.Fatal (whose cleanup stops the broker) would hang until -timeout.
func stuck(t *testing.T, msg string) {
	t.Helper()
	fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s (deadlock?)\n", t.Name(), msg)
	os.Exit(1)
}

// TestMetricsNonUTF8GroupIDs: group ids that are not valid UTF-8 (Kafka
// accepts any bytes) are scraped as quoted label values, two of them never
// share a series, and after two scrapes every group API still answers and
// the share group still serves its member.
func TestMetricsNonUTF8GroupIDs(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	adm := newAdmin(t, b)
	const topic = "utf8"
	shareA, shareB, consumer := "share-\xff", "share-\xfe", "cg-\xc3\x28"
	mustCreateTopic(t, adm, topic, 1, nil)
	var recs []*kgo.Record
	for i := range 4 {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))})
	}
	produceSync(t, newClient(t, b), recs...)

	// Two share groups whose ids differ only in an invalid byte, each with
	// a member and a loaded share-partition; a consumer group with commits.
	mA := joinShare(t, b, shareA, "member-a-0123456789ab", topic)
	mA.fetch(t, 10)
	mB := joinShare(t, b, shareB, "member-b-0123456789ab", topic)
	mB.fetch(t, 10)
	offs := kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 2, LeaderEpoch: -1}}}
	if err := adm.CommitAllOffsets(testCtx(t), consumer, offs); err != nil {
		t.Fatalf("commit: %v", err)
	}

	for i := range 2 {
		var page string
		within(t, "scrape", 10*time.Second, func(ctx context.Context) (err error) {
			page, err = scrape(ctx, b)
			return err
		})
		for _, series := range []string{
			`sharq_share_group_members{group="\"share-\\xff\""}`,
			`sharq_share_group_members{group="\"share-\\xfe\""}`,
			`sharq_share_partition_start_offset{group="\"share-\\xff\"",partition="0",topic="utf8"}`,
			`sharq_consumer_group_committed_offset{group="\"cg-\\xc3(\"",partition="0",topic="utf8"}`,
		} {
			if _, ok := metricValue(page, series); !ok {
				t.Errorf("scrape %d: no %s in\n%s", i, series, grepLines(page, "group="))
			}
		}
	}

	const d = 10 * time.Second
	within(t, "ListGroups", d, func(ctx context.Context) error {
		ls, err := adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		for _, g := range []string{shareA, shareB, consumer} {
			if _, ok := ls[g]; !ok {
				t.Errorf("ListGroups lacks %q: %v", g, ls.Groups())
			}
		}
		return nil
	})
	within(t, "DescribeGroups", d, func(ctx context.Context) error {
		_, err := adm.DescribeGroups(ctx, consumer, shareA)
		return err
	})
	within(t, "ShareGroupDescribe", d, func(ctx context.Context) error {
		ds, err := adm.DescribeShareGroups(ctx, shareA, shareB)
		if err != nil {
			return err
		}
		if g := ds[shareA]; g.Err != nil || len(g.Members) != 1 {
			t.Errorf("describe %q: %v, %d members", shareA, g.Err, len(g.Members))
		}
		return nil
	})
	within(t, "DescribeShareGroupOffsets", d, func(ctx context.Context) error {
		_, err := adm.DescribeShareGroupOffsets(ctx, shareA)
		return err
	})
	within(t, "ShareGroupHeartbeat", d, func(ctx context.Context) error {
		hb := kmsg.NewPtrShareGroupHeartbeatRequest()
		hb.GroupID, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = shareA, "member-c-0123456789ab", 0, []string{topic}
		resp, err := hb.RequestWith(ctx, mA.cl)
		if err == nil && resp.ErrorCode != 0 {
			t.Errorf("heartbeat: error code %d", resp.ErrorCode)
		}
		return err
	})
	within(t, "DeleteGroups", d, func(ctx context.Context) error {
		resp, err := adm.DeleteGroups(ctx, consumer)
		if err != nil {
			return err
		}
		if r := resp[consumer]; r.Err != nil {
			t.Errorf("delete %q: %v", consumer, r.Err)
		}
		return nil
	})
	within(t, "scrape after", d, func(ctx context.Context) error {
		_, err := scrape(ctx, b)
		return err
	})
}

// scrape is scrapeMetrics for a goroutine: it returns its failure.
func scrape(ctx context.Context, b *brokertest.Broker) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.Server.AdminAddr()+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	return string(body), err
}

func grepLines(page, sub string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestBadPartitionIndexes: partition indexes a topic does not have answer
// as Kafka does instead of dropping the connection: DescribeShareGroupOffsets
// reports them as without state, and DescribeTopicPartitions refuses a
// negative cursor (or a cursor topic not asked for) with INVALID_REQUEST.
func TestBadPartitionIndexes(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	cl := newClient(t, b)
	mustCreateTopic(t, newAdmin(t, b), "bad-idx", 2, nil)
	ctx := testCtx(t)

	o := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	o.Version = 1
	o.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "sg", Topics: []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{
		{Topic: "bad-idx", Partitions: []int32{-1, 0, 2, -2147483648, 2147483647}},
	}}}
	oresp, err := o.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("DescribeShareGroupOffsets: %v", err)
	}
	if len(oresp.Groups) != 1 || oresp.Groups[0].ErrorCode != 0 || len(oresp.Groups[0].Topics) != 1 {
		t.Fatalf("DescribeShareGroupOffsets: %+v", oresp)
	}
	for _, p := range oresp.Groups[0].Topics[0].Partitions {
		if p.ErrorCode != 0 || p.StartOffset != -1 || p.Lag != -1 {
			t.Errorf("partition %d: error %d, start %d, lag %d; want 0, -1, -1", p.Partition, p.ErrorCode, p.StartOffset, p.Lag)
		}
	}

	cases := []struct {
		name   string
		topics []string
		cursor *kmsg.DescribeTopicPartitionsRequestCursor
		want   int16
		parts  int
	}{
		{"negative cursor", []string{"bad-idx"}, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "bad-idx", Partition: -1}, 42, 0},
		{"min cursor", []string{"bad-idx"}, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "bad-idx", Partition: -2147483648}, 42, 0},
		{"cursor topic not listed", []string{"bad-idx"}, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "other", Partition: 0}, 42, 0},
		{"cursor past the end", []string{"bad-idx"}, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "bad-idx", Partition: 2147483647}, 0, 0},
		{"cursor at 1", []string{"bad-idx"}, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "bad-idx", Partition: 1}, 0, 1},
	}
	for _, c := range cases {
		r := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, name := range c.topics {
			r.Topics = append(r.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: name})
		}
		r.ResponsePartitionLimit, r.Cursor = 100, c.cursor
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != c.want || len(resp.Topics[0].Partitions) != c.parts {
			t.Errorf("%s: %+v; want error %d and %d partitions", c.name, resp.Topics, c.want, c.parts)
		}
	}
}

// TestGroupTypeCollisions: a group id held by a group of one type is refused
// by the other types' APIs with Kafka's codes, and never becomes a second
// group of the same name.
func TestGroupTypeCollisions(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic = "collide"
	mustCreateTopic(t, adm, topic, 1, nil)
	ctx := testCtx(t)
	share := joinShare(t, b, "sg", "member-s-0123456789ab", topic)
	cl := share.cl

	// A consumer group and a simple (classic) group of their own.
	chb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	chb.Group, chb.MemberID, chb.MemberEpoch, chb.RebalanceTimeoutMillis, chb.SubscribedTopicNames = "cg", "member-c-0123456789ab", 0, 30000, []string{topic}
	if resp, err := chb.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("consumer group heartbeat: %v %+v", err, resp)
	}
	if err := adm.CommitAllOffsets(ctx, "simple", kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0, LeaderEpoch: -1}}}); err != nil {
		t.Fatalf("commit: %v", err)
	}

	check := func(what string, got, want int16, msg *string) {
		t.Helper()
		m := ""
		if msg != nil {
			m = *msg
		}
		if got != want {
			t.Errorf("%s: error %d (%q), want %d", what, got, m, want)
		}
	}

	// Consumer-side APIs on the share group's id.
	chb = kmsg.NewPtrConsumerGroupHeartbeatRequest()
	chb.Group, chb.MemberID, chb.MemberEpoch, chb.RebalanceTimeoutMillis, chb.SubscribedTopicNames = "sg", "member-c-0123456789ab", 0, 30000, []string{topic}
	if resp, err := chb.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else {
		check("ConsumerGroupHeartbeat on a share group", resp.ErrorCode, 69, resp.ErrorMessage)
		if resp.ErrorMessage == nil || *resp.ErrorMessage != "Group sg is not a consumer group." {
			t.Errorf("ConsumerGroupHeartbeat message %v", resp.ErrorMessage)
		}
	}
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis, jg.ProtocolType = "sg", 30000, 30000, "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	if resp, err := jg.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else {
		check("JoinGroup on a share group", resp.ErrorCode, 23, nil)
		if resp.MemberID != "" {
			t.Errorf("JoinGroup on a share group: member id %q", resp.MemberID)
		}
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 9, "sg", -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, TopicID: share.topicID, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	if resp, err := oc.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else {
		check("OffsetCommit on a share group", resp.Topics[0].Partitions[0].ErrorCode, 69, nil)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "sg", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0}}}}}
	if resp, err := of.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else {
		check("OffsetFetch on a share group", resp.Groups[0].ErrorCode, 69, nil)
	}
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = []string{"sg"}
	if resp, err := cd.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else {
		check("ConsumerGroupDescribe on a share group", resp.Groups[0].ErrorCode, 69, resp.Groups[0].ErrorMessage)
	}

	// Share-side APIs on the consumer and classic groups' ids.
	for _, g := range []string{"cg", "simple"} {
		hb := kmsg.NewPtrShareGroupHeartbeatRequest()
		hb.GroupID, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = g, "member-x-0123456789ab", 0, []string{topic}
		if resp, err := hb.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		} else {
			check("ShareGroupHeartbeat on group "+g, resp.ErrorCode, 69, resp.ErrorMessage)
		}
		sd := kmsg.NewPtrShareGroupDescribeRequest()
		sd.GroupIDs = []string{g}
		if resp, err := sd.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		} else {
			check("ShareGroupDescribe on group "+g, resp.Groups[0].ErrorCode, 69, resp.Groups[0].ErrorMessage)
		}
	}

	// One group per id, each of its own type; the share group still has
	// its member.
	ls, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"sg": "share", "cg": "consumer", "simple": "classic"}
	for id, typ := range want {
		if g, ok := ls[id]; !ok || g.GroupType != typ {
			t.Errorf("ListGroups %s: %+v, want type %s", id, g, typ)
		}
	}
	if len(ls) != len(want) {
		t.Errorf("ListGroups: %v", ls.Groups())
	}
	ds, err := adm.DescribeShareGroups(ctx, "sg")
	if err != nil || ds["sg"].Err != nil || len(ds["sg"].Members) != 1 {
		t.Errorf("share group after the collisions: %v %+v", err, ds["sg"])
	}
}

// TestTopicNameCollisions: topics whose names differ only in '.' versus '_'
// are refused as Kafka refuses them (their metric names would be equal).
func TestTopicNameCollisions(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "a.b", 1, nil)
	mustCreateTopic(t, adm, "ab", 1, nil) // no '.' or '_': no collision
	cases := []struct {
		name, msg string
		ok        bool
	}{
		{"a_b", "Topic 'a_b' collides with existing topic: a.b", false},
		{"a.b", "Topic 'a.b' already exists.", false},
		{"a-b", "", true},
		{"x.y_z", "", true},
	}
	for _, c := range cases {
		resp, err := adm.CreateTopics(testCtx(t), 1, 1, nil, c.name)
		if err != nil {
			t.Fatalf("create %s: %v", c.name, err)
		}
		r := resp[c.name]
		switch {
		case c.ok && r.Err != nil:
			t.Errorf("create %s: %v", c.name, r.Err)
		case !c.ok && r.ErrMessage != c.msg:
			t.Errorf("create %s: %v %q, want %q", c.name, r.Err, r.ErrMessage, c.msg)
		case c.name == "a_b" && !errors.Is(r.Err, kerr.InvalidTopicException):
			t.Errorf("create a_b: %v, want INVALID_TOPIC_EXCEPTION", r.Err)
		}
	}
	// And the mirror: x_y.z exists as x.y_z now.
	resp, err := adm.CreateTopics(testCtx(t), 1, 1, nil, "x_y.z")
	if err != nil || !errors.Is(resp["x_y.z"].Err, kerr.InvalidTopicException) || resp["x_y.z"].ErrMessage != "Topic 'x_y.z' collides with existing topic: x.y_z" {
		t.Errorf("create x_y.z: %v %+v", err, resp["x_y.z"])
	}
}
