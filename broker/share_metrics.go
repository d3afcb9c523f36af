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
)

type shareCollector struct{ s *Server }

func (c shareCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descShareSPSO, descShareSPEO, descShareAcquired, descShareAvail, descShareLag, descShareMembers,
		descShareDeliveries, descShareRedeliveries, descShareArchivedByLimit, descShareRejected, descShareLockExpiries} {
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
	// Copy what the scrape needs under the lock and build the metrics after
	// it: a metric that cannot be built must fail the scrape, never leave
	// every share and group API waiting on a mutex a panic left locked.
	parts, members := c.snapshot(st)
	for _, m := range members {
		ch <- prometheus.MustNewConstMetric(descShareMembers, prometheus.GaugeValue, float64(m.n), labelValue(m.group))
	}
	for _, p := range parts {
		t := img.TopicsByID[raftmeta.UUID(p.key.topicID)]
		if t == nil {
			continue
		}
		hw := int64(-1)
		if pt := c.s.partitionFor(t.Name, p.key.partition); pt != nil {
			if st, ok := pt.stats(); ok {
				hw = st.HighWatermark
			}
		}
		sum, lag, stats, initialised := p.metricsSnapshot(hw)
		if !initialised {
			continue
		}
		labels := []string{labelValue(p.key.group), labelValue(t.Name), strconv.Itoa(int(p.key.partition))}
		ch <- prometheus.MustNewConstMetric(descShareSPSO, prometheus.GaugeValue, float64(sum.StartOffset), labels...)
		ch <- prometheus.MustNewConstMetric(descShareSPEO, prometheus.GaugeValue, float64(sum.EndOffset), labels...)
		ch <- prometheus.MustNewConstMetric(descShareAcquired, prometheus.GaugeValue, float64(sum.Acquired), labels...)
		ch <- prometheus.MustNewConstMetric(descShareAvail, prometheus.GaugeValue, float64(sum.Available), labels...)
		if lag >= 0 {
			ch <- prometheus.MustNewConstMetric(descShareLag, prometheus.GaugeValue, float64(lag), labels...)
		}
		ch <- prometheus.MustNewConstMetric(descShareDeliveries, prometheus.CounterValue, float64(stats.Deliveries), labels...)
		ch <- prometheus.MustNewConstMetric(descShareRedeliveries, prometheus.CounterValue, float64(stats.Redeliveries), labels...)
		ch <- prometheus.MustNewConstMetric(descShareArchivedByLimit, prometheus.CounterValue, float64(stats.ArchivedByLimit), labels...)
		ch <- prometheus.MustNewConstMetric(descShareRejected, prometheus.CounterValue, float64(stats.Rejected), labels...)
		ch <- prometheus.MustNewConstMetric(descShareLockExpiries, prometheus.CounterValue, float64(stats.LockExpiries), labels...)
	}
}

type shareGroupMembers struct {
	group string
	n     int
}

// snapshot copies the share-partitions and member counts under st.mu.
func (c shareCollector) snapshot(st *shareState) ([]*sharePart, []shareGroupMembers) {
	st.mu.Lock()
	defer st.mu.Unlock()
	parts := make([]*sharePart, 0, len(st.parts))
	for _, p := range st.parts {
		parts = append(parts, p)
	}
	ids := st.coord.GroupIDs()
	members := make([]shareGroupMembers, 0, len(ids))
	for _, id := range ids {
		members = append(members, shareGroupMembers{id, len(st.coord.Group(id).Members)})
	}
	return parts, members
}

// metricsSnapshot reads a share-partition's gauges and counters under its
// lock; lag is -1 when hw is unknown.
func (p *sharePart) metricsSnapshot(hw int64) (sum share.Summary, lag int64, stats share.Stats, initialised bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lag = -1
	initialised = p.sp.Initialised()
	if initialised {
		sum = p.sp.Summary()
		if hw >= 0 {
			lag = p.sp.Lag(hw)
		}
	}
	return sum, lag, p.sp.Stats(), initialised
}
