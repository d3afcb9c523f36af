package share

// LeaderChanged is what a share-partition does when its topic partition
// gets a new leader (virtual brokers, docs/virtual-brokers.md). On Kafka
// the old leader drops the share-partition and the new one loads it from
// the persisted state: every acquisition in flight is lost, so those
// records are delivered again (their acknowledgements from before the move
// then fail). Here the share-partition stays in memory, so the move is its
// locks expiring at once, for every group on the partition. It returns how
// many records became available again.
func (m *Manager) LeaderChanged(topicID [16]byte, partition int32) (int64, error) {
	m.mu.Lock()
	var parts []*part
	for k, p := range m.parts {
		if k.TopicID == topicID && k.Partition == partition {
			parts = append(parts, p)
		}
	}
	m.mu.Unlock()
	var total int64
	var firstErr error
	for _, p := range parts {
		n, err := m.expireLocks(p, nil)
		total += n
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return total, firstErr
}
