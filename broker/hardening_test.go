package broker_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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
