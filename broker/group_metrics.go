package broker

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Consumer group offsets and lag, read from the group coordinator at
// scrape time: the commit path pays nothing for them.
var (
	groupLabels        = []string{"group", "topic", "partition"}
	descGroupCommitted = prometheus.NewDesc("sharq_consumer_group_committed_offset",
		"Offset a consumer group committed for a partition.", groupLabels, nil)
	descGroupLag = prometheus.NewDesc("sharq_consumer_group_lag",
		"Consumer group lag: high watermark - committed offset (0 when the commit is past it); only partitions with a committed offset.", groupLabels, nil)
)

// groupCollector emits one series per committed (group, partition). Each
// group costs one short hold of the coordinator's lock (a map copy); the
// high watermark is read from the partition without the group lock held.
type groupCollector struct{ s *Server }

func (c groupCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descGroupCommitted
	ch <- descGroupLag
}

func (c groupCollector) Collect(ch chan<- prometheus.Metric) {
	gc := c.s.coord.groups
	if gc == nil {
		return
	}
	for _, g := range gc.ListGroups() {
		// No member id and epoch -1: an admin read, not a member's.
		offs, err := gc.FetchOffsets(g.ID, "", -1, nil, true)
		if err != nil {
			continue // closing, or the group went away since ListGroups
		}
		for tp, o := range offs {
			if o.Offset < 0 {
				continue
			}
			labels := []string{g.ID, tp.Topic, strconv.Itoa(int(tp.Partition))}
			ch <- prometheus.MustNewConstMetric(descGroupCommitted, prometheus.GaugeValue, float64(o.Offset), labels...)
			p := c.s.partitionFor(tp.Topic, tp.Partition)
			if p == nil {
				continue // topic deleted or not served here: no high watermark
			}
			lag := max(0, p.log.HighWatermark()-o.Offset)
			ch <- prometheus.MustNewConstMetric(descGroupLag, prometheus.GaugeValue, float64(lag), labels...)
		}
	}
}
