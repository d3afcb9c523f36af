package broker

// The transaction coordinator (txn) on the node's state store, and what it
// needs from the broker: markers written into partition logs, staged
// offsets completed in the group coordinator, partition existence.

import (
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"sharq/group"
	"sharq/log"
	"sharq/log/statejournal"
	"sharq/txn"
)

// newTxnCoordinator opens the transaction coordinator on the node's state
// store, with state changes committed through the state journal sj (one
// write(2) per change, as Kafka's __transaction_state reaches the page
// cache; see log/statejournal).
func (s *Server) newTxnCoordinator(db *pebble.DB, sj *statejournal.Journal, gc *group.Coordinator) (*txn.Coordinator, error) {
	return txn.New(txn.Config{
		Store:           txn.NewJournaledStore(db, sj),
		IDs:             s.producerIDs,
		Markers:         markerWriter{s},
		Offsets:         gc,
		PartitionExists: s.txnPartitionExists,
		Logger:          s.logger.With("component", "transactions"),
		Settings: func() txn.Settings {
			c := s.effectiveConfig()
			return txn.Settings{
				MaxTimeout:   time.Duration(c.TransactionMaxTimeoutMs) * time.Millisecond,
				IDExpiration: time.Duration(c.TransactionalIDExpirationMs) * time.Millisecond,
			}
		},
	})
}

func (s *Server) txnPartitionExists(tp txn.TopicPartition) bool {
	t := s.meta.Image().Topics[tp.Topic]
	return t != nil && tp.Partition >= 0 && int(tp.Partition) < len(t.Partitions)
}

// markerWriter writes transaction markers into this node's partition logs.
type markerWriter struct{ s *Server }

func (m markerWriter) WriteMarker(tp txn.TopicPartition, pid int64, epoch int16, commit bool) error {
	return m.s.writeMarker(tp.Topic, tp.Partition, pid, epoch, commit, 0)
}

func (s *Server) writeMarker(topic string, part int32, pid int64, epoch int16, commit bool, coordinatorEpoch int32) error {
	p := s.partitionFor(topic, part)
	if p == nil {
		if s.txnPartitionExists(txn.TopicPartition{Topic: topic, Partition: part}) {
			return log.ErrClosed
		}
		return nil // deleted with its data: nothing to mark
	}
	t := s.meta.Image().Topics[topic]
	leaderEpoch := int32(-1)
	if t != nil && int(part) < len(t.Partitions) {
		leaderEpoch = t.Partitions[part].LeaderEpoch
	}
	l, err := p.acquire()
	if err != nil {
		return err
	}
	_, err = l.AppendMarker(pid, epoch, commit, coordinatorEpoch, leaderEpoch)
	p.release()
	if errors.Is(err, log.ErrInvalidProducerEpoch) {
		// A newer epoch already wrote here: this marker can never apply
		// and retrying it would hold the transaction forever.
		s.logger.Warn("transaction marker refused", "topic", topic, "partition", part, "producer_id", pid, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	p.wake()
	return nil
}
