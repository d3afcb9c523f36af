package broker

import (
	"strconv"

	"sharq/raftmeta"
	"sharq/share"
)

// Share-partition gauges, read from the lock managers at scrape time.
var (
	shareLabels       = []string{"group", "topic", "partition"}
	descShareSPSO     = newDesc("sharq_share_partition_start_offset", "Share-partition start offset (SPSO).", kindGauge, shareLabels...)
	descShareSPEO     = newDesc("sharq_share_partition_end_offset", "Share-partition end offset (SPEO): the last in-flight offset.", kindGauge, shareLabels...)
	descShareAcquired = newDesc("sharq_share_partition_acquired_records", "Records currently acquired (locked) by members.", kindGauge, shareLabels...)
	descShareAvail    = newDesc("sharq_share_partition_available_records", "Records available for redelivery inside the in-flight window.", kindGauge, shareLabels...)
	descShareLag      = newDesc("sharq_share_partition_lag", "Share-partition lag (KIP-1226): high watermark - SPSO - records already delivered past SPSO.", kindGauge, shareLabels...)
	descShareMembers  = newDesc("sharq_share_group_members", "Members of a share group.", kindGauge, "group")

	// Counters kept by the lock manager in memory: they restart at 0 when
	// the share-partition is loaded again (broker restart, state reload).
	descShareDeliveries      = newDesc("sharq_share_partition_deliveries_total", "Records acquired by share consumers, every delivery (in memory: resets when the share-partition is reloaded, e.g. on restart).", kindCounter, shareLabels...)
	descShareRedeliveries    = newDesc("sharq_share_partition_redeliveries_total", "Records acquired with delivery count > 1 (in memory: resets when the share-partition is reloaded, e.g. on restart).", kindCounter, shareLabels...)
	descShareArchivedByLimit = newDesc("sharq_share_partition_archived_by_limit_total", "Records archived on release or lock expiry because the delivery count limit was reached (in memory: resets when the share-partition is reloaded, e.g. on restart).", kindCounter, shareLabels...)
	descShareRejected        = newDesc("sharq_share_partition_rejected_total", "Records acknowledged with Reject (in memory: resets when the share-partition is reloaded, e.g. on restart).", kindCounter, shareLabels...)
	descShareLockExpiries    = newDesc("sharq_share_partition_lock_expiries_total", "Records whose acquisition lock expired (in memory: resets when the share-partition is reloaded, e.g. on restart).", kindCounter, shareLabels...)
	descShareArchiving       = newDesc("sharq_share_partition_archiving_records", "Records in the Archiving state: waiting for their dead-letter write (KIP-1191).", kindGauge, shareLabels...)
	descShareBackoff         = newDesc("sharq_share_partition_backoff_records", "Available records waiting out a redelivery backoff (sharq.share.redelivery.backoff.ms); part of sharq_share_partition_available_records.", kindGauge, shareLabels...)
	descShareBackoffs        = newDesc("sharq_share_partition_backoffs_total", "Records made to wait out a redelivery backoff after a release or lock expiry (in memory: resets when the share-partition is reloaded, e.g. on restart).", kindCounter, shareLabels...)

	// Dead-letter writes per share group and source topic (since start).
	dlqLabels         = []string{"group", "topic"}
	descShareDLQWrite = newDesc("sharq_share_dlq_records_total", "Records written to the share group's dead-letter topic (KIP-1191), by source topic (since start).", kindCounter, dlqLabels...)
	descShareDLQFail  = newDesc("sharq_share_dlq_failures_total", "Records archived without a dead-letter write: misconfigured DLQ or retries exhausted (since start).", kindCounter, dlqLabels...)
)

func collectShare(s *Server, e *expo) {
	if !s.coordinatorsLoaded() {
		return
	}
	st := s.share
	if st == nil {
		return
	}
	img := s.meta.Image()
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
		e.add(descShareMembers, float64(g.n), labelValue(g.group))
	}
	for _, v := range st.Partitions(0) {
		t := img.TopicsByID[raftmeta.UUID(v.Key.TopicID)]
		if t == nil || !v.Initialised {
			continue
		}
		sum, stats := v.Summary, v.Stats
		labels := []string{labelValue(v.Key.Group), labelValue(t.Name), strconv.Itoa(int(v.Key.Partition))}
		e.add(descShareSPSO, float64(sum.StartOffset), labels...)
		e.add(descShareSPEO, float64(sum.EndOffset), labels...)
		e.add(descShareAcquired, float64(sum.Acquired), labels...)
		e.add(descShareAvail, float64(sum.Available), labels...)
		if v.Lag >= 0 {
			e.add(descShareLag, float64(v.Lag), labels...)
		}
		e.add(descShareDeliveries, float64(stats.Deliveries), labels...)
		e.add(descShareRedeliveries, float64(stats.Redeliveries), labels...)
		e.add(descShareArchivedByLimit, float64(stats.ArchivedByLimit), labels...)
		e.add(descShareRejected, float64(stats.Rejected), labels...)
		e.add(descShareLockExpiries, float64(stats.LockExpiries), labels...)
		e.add(descShareArchiving, float64(sum.Archiving), labels...)
		e.add(descShareBackoff, float64(sum.Backoff), labels...)
		e.add(descShareBackoffs, float64(stats.Backoffs), labels...)
	}
	for _, d := range st.DLQStats() {
		e.add(descShareDLQWrite, float64(d.Records), labelValue(d.Group), labelValue(d.Topic))
		e.add(descShareDLQFail, float64(d.Failures), labelValue(d.Group), labelValue(d.Topic))
	}
}
