package group

// Transactional offset commits (TxnOffsetCommit): offsets a transaction
// stages in a group stay invisible (OffsetFetch does not return them;
// require_stable answers UNSTABLE_OFFSET_COMMIT) until the transaction
// coordinator completes the transaction: committed on COMMIT, dropped on
// ABORT. Staged offsets are durable like committed ones, so they survive a
// restart until their transaction's outcome is known.

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble"
)

// TxnKeyPrefix is the prefix of staged transactional offsets in the shared
// state store.
const TxnKeyPrefix = "gp/"

// TxnStore is the part of an offset store that keeps staged transactional
// offsets. CompleteTxn applies (commit) or drops the staged offsets of
// (group, producerID) in one durable write.
type TxnStore interface {
	StageTxn(group string, producerID int64, offsets map[TopicPartition]Offset) error
	CompleteTxn(group string, producerID int64, commit bool) error
	LoadTxn() (map[string]map[int64]map[TopicPartition]Offset, error)
}

// TxnCommitRequest is a TxnOffsetCommit for one group. v0-2 carry no
// member: MemberID "", InstanceID nil, Generation -1 (Kafka's defaults),
// which is also what a producer sends that only knows the group id.
type TxnCommitRequest struct {
	Group      string
	ProducerID int64
	MemberID   string
	InstanceID *string // nil = Kafka's null
	Generation int32
	Offsets    map[TopicPartition]Offset
	// KIP1319Errors picks TxnOffsetCommit v6's errors: GROUP_ID_NOT_FOUND
	// for a member's commit (generation >= 0) to a group that does not
	// exist and STALE_MEMBER_EPOCH for a wrong consumer member epoch,
	// where earlier versions get ILLEGAL_GENERATION for both.
	KIP1319Errors bool
}

func (c *Coordinator) txnStore() (TxnStore, error) {
	ts, ok := c.store.(TxnStore)
	if !ok {
		return nil, fmt.Errorf("offset store %T keeps no transactional offsets", c.store)
	}
	return ts, nil
}

// TxnCommitOffsets validates the committer by Kafka 4.4's rules for
// transactional commits (validateCommitLocked with txn set: a commit
// without member is accepted whatever the group's members and state, one
// with a member is checked like an OffsetCommit but never answered
// REBALANCE_IN_PROGRESS) and stages the offsets for the producer's
// transaction.
func (c *Coordinator) TxnCommitOffsets(req TxnCommitRequest) (map[TopicPartition]error, error) {
	if req.Group == "" {
		return nil, ErrInvalidGroupID
	}
	if c.notOurs(req.Group) {
		// A share group's id (Kafka: ShareGroup.validateOffsetCommit).
		return nil, errNotConsumerGroup(req.Group)
	}
	ts, err := c.txnStore()
	if err != nil {
		return nil, err
	}
	io := c.ioLock(req.Group)
	io.Lock()
	defer io.Unlock()
	ok, perr, err := c.acceptOffsets(commitCheck{group: req.Group, memberID: req.MemberID, instanceID: req.InstanceID,
		generation: req.Generation, txn: true, newErrors: req.KIP1319Errors}, req.Offsets)
	if err != nil || len(ok) == 0 {
		return perr, err
	}
	if err := ts.StageTxn(req.Group, req.ProducerID, ok); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.pending == nil {
		c.mu.pending = map[string]map[int64]map[TopicPartition]Offset{}
	}
	byPID := c.mu.pending[req.Group]
	if byPID == nil {
		byPID = map[int64]map[TopicPartition]Offset{}
		c.mu.pending[req.Group] = byPID
	}
	offs := byPID[req.ProducerID]
	if offs == nil {
		offs = map[TopicPartition]Offset{}
		byPID[req.ProducerID] = offs
	}
	for tp, o := range ok {
		offs[tp] = o
	}
	return perr, nil
}

// CompleteTxnOffsets makes the offsets the producer staged in group
// committed offsets (commit) or drops them (abort). Nothing staged is not
// an error (a retried completion).
func (c *Coordinator) CompleteTxnOffsets(group string, producerID int64, commit bool) error {
	ts, err := c.txnStore()
	if err != nil {
		return err
	}
	io := c.ioLock(group)
	io.Lock()
	defer io.Unlock()
	c.mu.Lock()
	staged := c.mu.pending[group][producerID]
	c.mu.Unlock()
	if len(staged) == 0 {
		return nil
	}
	if err := ts.CompleteTxn(group, producerID, commit); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.pending[group], producerID)
	if len(c.mu.pending[group]) == 0 {
		delete(c.mu.pending, group)
	}
	if !commit {
		return nil
	}
	offs := c.mu.offsets[group]
	if offs == nil {
		offs = map[TopicPartition]Offset{}
		c.mu.offsets[group] = offs
	}
	for tp, o := range staged {
		offs[tp] = o
	}
	return nil
}

// PendingTxnPartitions returns the partitions of group with offsets staged
// by an open transaction (OffsetFetch require_stable).
func (c *Coordinator) PendingTxnPartitions(group string) map[TopicPartition]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[TopicPartition]bool
	for _, offs := range c.mu.pending[group] {
		for tp := range offs {
			if out == nil {
				out = map[TopicPartition]bool{}
			}
			out[tp] = true
		}
	}
	return out
}

func (s *MemStore) StageTxn(group string, pid int64, offsets map[TopicPartition]Offset) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.txn == nil {
		s.txn = map[string]map[int64]map[TopicPartition]Offset{}
	}
	g := s.txn[group]
	if g == nil {
		g = map[int64]map[TopicPartition]Offset{}
		s.txn[group] = g
	}
	if g[pid] == nil {
		g[pid] = map[TopicPartition]Offset{}
	}
	for tp, o := range offsets {
		g[pid][tp] = o
	}
	return nil
}

func (s *MemStore) CompleteTxn(group string, pid int64, commit bool) error {
	s.mu.Lock()
	staged := s.txn[group][pid]
	delete(s.txn[group], pid)
	s.mu.Unlock()
	if commit && len(staged) > 0 {
		return s.Commit(group, staged)
	}
	return nil
}

func (s *MemStore) LoadTxn() (map[string]map[int64]map[TopicPartition]Offset, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[int64]map[TopicPartition]Offset{}
	for g, byPID := range s.txn {
		for pid, offs := range byPID {
			if out[g] == nil {
				out[g] = map[int64]map[TopicPartition]Offset{}
			}
			c := map[TopicPartition]Offset{}
			for tp, o := range offs {
				c[tp] = o
			}
			out[g][pid] = c
		}
	}
	return out, nil
}

// Staged key: "gp/" uvarint(len(group)) group be64(producerId)
// uvarint(len(topic)) topic be32(partition); value as committed offsets.
func txnPrefix(group string, pid int64) []byte {
	b := append([]byte(nil), TxnKeyPrefix...)
	b = binary.AppendUvarint(b, uint64(len(group)))
	b = append(b, group...)
	return binary.BigEndian.AppendUint64(b, uint64(pid))
}

func txnKey(group string, pid int64, tp TopicPartition) []byte {
	b := txnPrefix(group, pid)
	b = binary.AppendUvarint(b, uint64(len(tp.Topic)))
	b = append(b, tp.Topic...)
	return binary.BigEndian.AppendUint32(b, uint32(tp.Partition))
}

func decodeTxnKey(k []byte) (string, int64, TopicPartition, error) {
	if len(k) < len(TxnKeyPrefix) || string(k[:len(TxnKeyPrefix)]) != TxnKeyPrefix {
		return "", 0, TopicPartition{}, ErrCorruptOffset
	}
	k = k[len(TxnKeyPrefix):]
	str := func() (string, bool) {
		n, w := binary.Uvarint(k)
		if w <= 0 || n > uint64(len(k)-w) {
			return "", false
		}
		s := string(k[w : w+int(n)])
		k = k[w+int(n):]
		return s, true
	}
	g, ok := str()
	if !ok || len(k) < 8 {
		return "", 0, TopicPartition{}, ErrCorruptOffset
	}
	pid := int64(binary.BigEndian.Uint64(k))
	k = k[8:]
	t, ok := str()
	if !ok || len(k) != 4 {
		return "", 0, TopicPartition{}, ErrCorruptOffset
	}
	return g, pid, TopicPartition{Topic: t, Partition: int32(binary.BigEndian.Uint32(k))}, nil
}

func (s *PebbleStore) StageTxn(group string, pid int64, offsets map[TopicPartition]Offset) error {
	b := s.db.NewBatch()
	defer b.Close()
	for tp, o := range offsets {
		if err := b.Set(txnKey(group, pid, tp), EncodeOffset(o), nil); err != nil {
			return fmt.Errorf("stage offsets of group %s: %w", group, err)
		}
	}
	if err := s.commit(b); err != nil {
		return fmt.Errorf("stage offsets of group %s: %w", group, err)
	}
	return nil
}

func (s *PebbleStore) CompleteTxn(group string, pid int64, commit bool) error {
	lo := txnPrefix(group, pid)
	hi := prefixEnd(lo)
	b := s.db.NewBatch()
	defer b.Close()
	if commit {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return fmt.Errorf("complete offsets of group %s: %w", group, err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			_, _, tp, err := decodeTxnKey(it.Key())
			if err == nil {
				err = b.Set(offsetKey(group, tp), append([]byte(nil), it.Value()...), nil)
			}
			if err != nil {
				it.Close()
				return fmt.Errorf("complete offsets of group %s: %w", group, err)
			}
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("complete offsets of group %s: %w", group, err)
		}
	}
	if err := b.DeleteRange(lo, hi, nil); err != nil {
		return fmt.Errorf("complete offsets of group %s: %w", group, err)
	}
	if err := s.commit(b); err != nil {
		return fmt.Errorf("complete offsets of group %s: %w", group, err)
	}
	return nil
}

func (s *PebbleStore) LoadTxn() (map[string]map[int64]map[TopicPartition]Offset, error) {
	lo := []byte(TxnKeyPrefix)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("load staged offsets: %w", err)
	}
	defer it.Close()
	out := map[string]map[int64]map[TopicPartition]Offset{}
	for ok := it.First(); ok; ok = it.Next() {
		g, pid, tp, err := decodeTxnKey(it.Key())
		if err != nil {
			return nil, fmt.Errorf("load staged offsets: key %x: %w", it.Key(), err)
		}
		o, err := DecodeOffset(it.Value())
		if err != nil {
			return nil, fmt.Errorf("load staged offsets of group %s: %w", g, err)
		}
		if out[g] == nil {
			out[g] = map[int64]map[TopicPartition]Offset{}
		}
		if out[g][pid] == nil {
			out[g][pid] = map[TopicPartition]Offset{}
		}
		out[g][pid][tp] = o
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("load staged offsets: %w", err)
	}
	return out, nil
}
