package broker_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
	"sharq/config"
)

// scrapeMetrics returns the /metrics page of b's admin listener.
func scrapeMetrics(t *testing.T, b *brokertest.Broker) string {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, "http://"+b.Server.AdminAddr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(body)
}

// metricValue finds the sample `series value` (series = name{labels} with
// labels in the exposition's sorted order) in a text page.
func metricValue(page, series string) (float64, bool) {
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestMetricsConsumerGroupLagAndShareCounters: a consumer group that
// committed offset 4 of 10 records shows committed 4 and lag 6; a share
// group that rejects 3 records and releases 3 (delivered again, accepted)
// shows exact delivery counters.
func TestMetricsConsumerGroupLagAndShareCounters(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	adm := newAdmin(t, b)
	const topic, group, shareGroup = "lagged", "lag-g", "lag-sg"
	mustCreateTopic(t, adm, topic, 1, nil)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Value: []byte(strconv.Itoa(i))})
	}
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic)), recs...)

	ctx := testCtx(t)
	offs := kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 4, LeaderEpoch: -1}}}
	if err := adm.CommitAllOffsets(ctx, group, offs); err != nil {
		t.Fatalf("commit: %v", err)
	}
	// The share group reads from offset 0 (set while it is empty).
	if _, err := adm.AlterShareGroupOffsets(ctx, shareGroup, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}}); err != nil {
		t.Fatal(err)
	}

	// Offsets 0-2 rejected, 7-9 released on their first delivery and
	// accepted on the second, the rest accepted.
	cl := newClient(t, b, kgo.ShareGroup(shareGroup), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	redelivered := 0
	shareConsume(t, sctx, cl, func(r *kgo.Record) bool {
		switch {
		case r.Offset <= 2:
			cl.MarkAcks(kgo.AckReject, r)
		case r.Offset >= 7 && r.DeliveryCount() == 1:
			cl.MarkAcks(kgo.AckRelease, r)
		default:
			if r.DeliveryCount() > 1 {
				redelivered++
			}
			cl.MarkAcks(kgo.AckAccept, r)
		}
		return redelivered == 3
	})
	if err := cl.FlushAcks(sctx); err != nil {
		t.Fatalf("flush acks: %v", err)
	}

	page := scrapeMetrics(t, b)
	gl := `{group="` + group + `",partition="0",topic="` + topic + `"}`
	sl := `{group="` + shareGroup + `",partition="0",topic="` + topic + `"}`
	for _, c := range []struct {
		series string
		want   float64
	}{
		{"sharq_consumer_group_committed_offset" + gl, 4},
		{"sharq_consumer_group_lag" + gl, 6},
		{"sharq_share_partition_deliveries_total" + sl, 13},
		{"sharq_share_partition_redeliveries_total" + sl, 3},
		{"sharq_share_partition_rejected_total" + sl, 3},
		{"sharq_share_partition_archived_by_limit_total" + sl, 0},
		{"sharq_share_partition_lock_expiries_total" + sl, 0},
		{"sharq_share_partition_start_offset" + sl, 10},
		{"sharq_share_partition_lag" + sl, 0},
	} {
		got, ok := metricValue(page, c.series)
		if !ok {
			t.Errorf("/metrics lacks %s", c.series)
		} else if got != c.want {
			t.Errorf("%s = %v, want %v", c.series, got, c.want)
		}
	}
	// A share group has no committed offsets: no consumer group series.
	if strings.Contains(page, `sharq_consumer_group_lag{group="`+shareGroup+`"`) {
		t.Errorf("share group %s reported as a consumer group", shareGroup)
	}
	for _, name := range []string{"sharq_consumer_group_lag", "sharq_share_partition_deliveries_total"} {
		if !strings.Contains(page, "# TYPE "+name+" ") {
			t.Errorf("/metrics lacks the TYPE line of %s", name)
		}
	}
	if !strings.Contains(page, "# TYPE sharq_share_partition_deliveries_total counter") {
		t.Error("deliveries is not exposed as a counter")
	}
}
