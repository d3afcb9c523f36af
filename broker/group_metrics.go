package broker

import (
	"strconv"

	"sharq/group"
)

// Consumer group offsets and lag, read from the group coordinator at
// scrape time: the commit path pays nothing for them.
var (
	groupLabels        = []string{"group", "topic", "partition"}
	descGroupCommitted = newDesc("sharq_consumer_group_committed_offset", "Offset a consumer group committed for a partition.", kindGauge, groupLabels...)
	descGroupLag       = newDesc("sharq_consumer_group_lag", "Consumer group lag: high watermark - committed offset (0 when the commit is past it); only partitions with a committed offset.", kindGauge, groupLabels...)
)

// collectGroups emits one series per committed (group, partition). Each
// group costs one short hold of the coordinator's lock (a map copy); the
// high watermark is read from the partition without the group lock held.
func collectGroups(s *Server, e *expo) {
	if !s.coordinatorsLoaded() {
		return
	}
	gc := s.coord.groups
	if gc == nil {
		return
	}
	hwOf := func(tp group.TopicPartition) (int64, bool) {
		if p := s.partitionFor(tp.Topic, tp.Partition); p != nil {
			if st, ok := p.stats(); ok {
				return st.HighWatermark, true
			}
		}
		return 0, false // topic deleted or not served here: no high watermark
	}
	for _, g := range gc.ListGroups() {
		lags, err := s.groupLags(g.ID, hwOf)
		if err != nil {
			continue // closing, or the group went away since ListGroups
		}
		for _, l := range lags {
			if l.committed < 0 {
				continue
			}
			labels := []string{labelValue(g.ID), labelValue(l.tp.Topic), strconv.Itoa(int(l.tp.Partition))}
			e.add(descGroupCommitted, float64(l.committed), labels...)
			if l.lag >= 0 {
				e.add(descGroupLag, float64(l.lag), labels...)
			}
		}
	}
}

// groupLag is a consumer group's committed offset for one partition, with
// the partition's high watermark (-1 when it is not served here) and the
// lag (-1 when unknown): what both the metrics and /ui show.
type groupLag struct {
	tp        group.TopicPartition
	committed int64
	hw, lag   int64
}

// groupLags reads a group's committed offsets (an admin read: no member id,
// epoch -1) and pairs each with the high watermark hwOf reports.
func (s *Server) groupLags(id string, hwOf func(group.TopicPartition) (int64, bool)) ([]groupLag, error) {
	offs, err := s.coord.groups.FetchOffsets(id, "", -1, nil, true)
	if err != nil {
		return nil, err
	}
	out := make([]groupLag, 0, len(offs))
	for tp, o := range offs {
		l := groupLag{tp: tp, committed: o.Offset, hw: -1, lag: -1}
		if hw, ok := hwOf(tp); ok {
			l.hw = hw
			if o.Offset >= 0 {
				l.lag = max(0, hw-o.Offset)
			}
		}
		out = append(out, l)
	}
	return out, nil
}
