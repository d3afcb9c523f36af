package broker

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"sharq/raftmeta"
	"sharq/share"
)

// Share-partition gauges, read from the lock managers at scrape time.
var (
	shareLabels       = []string{"group", "topic", "partition"}
	descShareSPSO     = prometheus.NewDesc("sharq_share_partition_start_offset", "Share-partition start offset (SPSO).", shareLabels, nil)
	descShareSPEO     = prometheus.NewDesc("sharq_share_partition_end_offset", "Share-partition end offset (SPEO): the last in-flight offset.", shareLabels, nil)
	descShareAcquired = prometheus.NewDesc("sharq_share_partition_acquired_records", "Records currently acquired (locked) by members.", shareLabels, nil)
	descShareAvail    = prometheus.NewDesc("sharq_share_partition_available_records", "Records available for redelivery inside the in-flight window.", shareLabels, nil)
	descShareLag      = prometheus.NewDesc("sharq_share_partition_lag", "Share-partition lag (KIP-1226): high watermark - SPSO - records already delivered past SPSO.", shareLabels, nil)
	descShareMembers  = prometheus.NewDesc("sharq_share_group_members", "Members of a share group.", []string{"group"}, nil)

	// Counters kept by the lock manager in memory: they restart at 0 when
	// the share-partition is loaded again (broker restart, state reload).
	descShareDeliveries = prometheus.NewDesc("sharq_share_partition_deliveries_total",
		"Records acquired by share consumers, every delivery (in memory: resets when the share-partition is reloaded, e.g. on restart).", shareLabels, nil)
	descShareRedeliveries = prometheus.NewDesc("sharq_share_partition_redeliveries_total",
		"Records acquired with delivery count > 1 (in memory: resets when the share-partition is reloaded, e.g. on restart).", shareLabels, nil)
	descShareArchivedByLimit = prometheus.NewDesc("sharq_share_partition_archived_by_limit_total",
		"Records archived on release or lock expiry because the delivery count limit was reached (in memory: resets when the share-partition is reloaded, e.g. on restart).", shareLabels, nil)
	descShareRejected = prometheus.NewDesc("sharq_share_partition_rejected_total",
		"Records acknowledged with Reject (in memory: resets when the share-partition is reloaded, e.g. on restart).", shareLabels, nil)
	descShareLockExpiries = prometheus.NewDesc("sharq_share_partition_lock_expiries_total",
		"Records whose acquisition lock expired (in memory: resets when the share-partition is reloaded, e.g. on restart).", shareLabels, nil)
	descShareArchiving = prometheus.NewDesc("sharq_share_partition_archiving_records",
		"Records in the Archiving state: waiting for their dead-letter write (KIP-1191).", shareLabels, nil)
	descShareBackoff = prometheus.NewDesc("sharq_share_partition_backoff_records",
		"Available records waiting out a redelivery backoff (sharq.share.redelivery.backoff.ms); part of sharq_share_partition_available_records.", shareLabels, nil)
	descShareBackoffs = prometheus.NewDesc("sharq_share_partition_backoffs_total",
		"Records made to wait out a redelivery backoff after a release or lock expiry (in memory: resets when the share-partition is reloaded, e.g. on restart).", shareLabels, nil)

	// Dead-letter writes per share group and source topic (since start).
	dlqLabels         = []string{"group", "topic"}
	descShareDLQWrite = prometheus.NewDesc("sharq_share_dlq_records_total",
		"Records written to the share group's dead-letter topic (KIP-1191), by source topic (since start).", dlqLabels, nil)
	descShareDLQFail = prometheus.NewDesc("sharq_share_dlq_failures_total",
		"Records archived without a dead-letter write: misconfigured DLQ or retries exhausted (since start).", dlqLabels, nil)
)

type shareCollector struct{ s *Server }

func (c shareCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descShareSPSO, descShareSPEO, descShareAcquired, descShareAvail, descShareLag, descShareMembers,
		descShareDeliveries, descShareRedeliveries, descShareArchivedByLimit, descShareRejected, descShareLockExpiries,
		descShareArchiving, descShareBackoff, descShareBackoffs, descShareDLQWrite, descShareDLQFail} {
		ch <- d
	}
}

func (c shareCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.s.coordinatorsLoaded() {
		return
	}
	st := c.s.share
	if st == nil {
		return
	}
	img := c.s.meta.Image()
	// Copy under the coordinator's lock, build metrics (labels can fail)
	// with no lock held.
	type members struct {
		group string
		n     int
	}
	var groups []members
	st.WithCoordinator(func(co *share.Coordinator) {
		for _, id := range co.GroupIDs() {
			groups = append(groups, members{id, len(co.Group(id).Members)})
		}
	})
	for _, g := range groups {
		ch <- prometheus.MustNewConstMetric(descShareMembers, prometheus.GaugeValue, float64(g.n), labelValue(g.group))
	}
	for _, v := range st.Partitions(0) {
		t := img.TopicsByID[raftmeta.UUID(v.Key.TopicID)]
		if t == nil || !v.Initialised {
			continue
		}
		sum, stats := v.Summary, v.Stats
		labels := []string{labelValue(v.Key.Group), labelValue(t.Name), strconv.Itoa(int(v.Key.Partition))}
		ch <- prometheus.MustNewConstMetric(descShareSPSO, prometheus.GaugeValue, float64(sum.StartOffset), labels...)
		ch <- prometheus.MustNewConstMetric(descShareSPEO, prometheus.GaugeValue, float64(sum.EndOffset), labels...)
		ch <- prometheus.MustNewConstMetric(descShareAcquired, prometheus.GaugeValue, float64(sum.Acquired), labels...)
		ch <- prometheus.MustNewConstMetric(descShareAvail, prometheus.GaugeValue, float64(sum.Available), labels...)
		if v.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(descShareLag, prometheus.GaugeValue, float64(v.Lag), labels...)
		}
		ch <- prometheus.MustNewConstMetric(descShareDeliveries, prometheus.CounterValue, float64(stats.Deliveries), labels...)
		ch <- prometheus.MustNewConstMetric(descShareRedeliveries, prometheus.CounterValue, float64(stats.Redeliveries), labels...)
		ch <- prometheus.MustNewConstMetric(descShareArchivedByLimit, prometheus.CounterValue, float64(stats.ArchivedByLimit), labels...)
		ch <- prometheus.MustNewConstMetric(descShareRejected, prometheus.CounterValue, float64(stats.Rejected), labels...)
		ch <- prometheus.MustNewConstMetric(descShareLockExpiries, prometheus.CounterValue, float64(stats.LockExpiries), labels...)
		ch <- prometheus.MustNewConstMetric(descShareArchiving, prometheus.GaugeValue, float64(sum.Archiving), labels...)
		ch <- prometheus.MustNewConstMetric(descShareBackoff, prometheus.GaugeValue, float64(sum.Backoff), labels...)
		ch <- prometheus.MustNewConstMetric(descShareBackoffs, prometheus.CounterValue, float64(stats.Backoffs), labels...)
	}
	for _, d := range st.DLQStats() {
		ch <- prometheus.MustNewConstMetric(descShareDLQWrite, prometheus.CounterValue, float64(d.Records), labelValue(d.Group), labelValue(d.Topic))
		ch <- prometheus.MustNewConstMetric(descShareDLQFail, prometheus.CounterValue, float64(d.Failures), labelValue(d.Group), labelValue(d.Topic))
	}
}
