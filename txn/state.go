package txn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// State is a transaction's state, as Kafka's TransactionState.
type State int8

const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	Dead
	PrepareEpochFence
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String is Kafka's state name (ListTransactions, DescribeTransactions).
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// ParseState parses a Kafka state name.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}

// TopicPartition names a partition by topic name.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// noProducerID and noEpoch are Kafka's RecordBatch.NO_PRODUCER_ID/EPOCH.
const (
	noProducerID = -1
	noEpoch      = -1
)

func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// Metadata is the durable state of one transactional id (Kafka's
// TransactionMetadata as written to __transaction_state).
type Metadata struct {
	ProducerID     int64
	PrevProducerID int64
	NextProducerID int64
	Epoch          int16
	LastEpoch      int16
	TimeoutMs      int32
	State          State
	Partitions     []TopicPartition // sorted
	Groups         []string         // consumer groups with staged offsets (AddOffsetsToTxn), sorted
	StartMs        int64            // txnStartTimestamp, -1 if none
	LastUpdateMs   int64
	TV2            bool // the client used transaction version 2 for the current transaction
}

func (m *Metadata) hasPartition(tp TopicPartition) bool {
	i := sort.Search(len(m.Partitions), func(i int) bool { return !tpLess(m.Partitions[i], tp) })
	return i < len(m.Partitions) && m.Partitions[i] == tp
}

func (m *Metadata) hasGroup(g string) bool {
	i := sort.SearchStrings(m.Groups, g)
	return i < len(m.Groups) && m.Groups[i] == g
}

func tpLess(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

func addPartitions(dst []TopicPartition, add []TopicPartition) []TopicPartition {
	out := append([]TopicPartition(nil), dst...)
	for _, tp := range add {
		i := sort.Search(len(out), func(i int) bool { return !tpLess(out[i], tp) })
		if i < len(out) && out[i] == tp {
			continue
		}
		out = append(out, TopicPartition{})
		copy(out[i+1:], out[i:])
		out[i] = tp
	}
	return out
}

func addGroup(dst []string, g string) []string {
	i := sort.SearchStrings(dst, g)
	if i < len(dst) && dst[i] == g {
		return dst
	}
	out := append([]string(nil), dst[:i]...)
	out = append(out, g)
	return append(out, dst[i:]...)
}

// Record format (value of key "t/" + transactional id):
//
//	magic 't' | version u8 (1) | producerId i64 | prevProducerId i64 |
//	nextProducerId i64 | epoch i16 | lastEpoch i16 | timeoutMs i32 |
//	state u8 | flags u8 (bit 0: TV2) | startMs i64 | lastUpdateMs i64 |
//	uvarint n | n x (uvarint len, topic, partition i32) |
//	uvarint g | g x (uvarint len, group)
const (
	recordMagic   = 't'
	recordVersion = 1
	recordFixed   = 2 + 8*3 + 2*2 + 4 + 2 + 8*2
)

// ErrCorruptRecord is returned for a stored record that does not decode.
var ErrCorruptRecord = errors.New("corrupt transaction state record")

// EncodeMetadata is the store's value format.
func EncodeMetadata(m *Metadata) []byte {
	b := make([]byte, 0, recordFixed+16*len(m.Partitions))
	b = append(b, recordMagic, recordVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(m.ProducerID))
	b = binary.BigEndian.AppendUint64(b, uint64(m.PrevProducerID))
	b = binary.BigEndian.AppendUint64(b, uint64(m.NextProducerID))
	b = binary.BigEndian.AppendUint16(b, uint16(m.Epoch))
	b = binary.BigEndian.AppendUint16(b, uint16(m.LastEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(m.TimeoutMs))
	var flags byte
	if m.TV2 {
		flags |= 1
	}
	b = append(b, byte(m.State), flags)
	b = binary.BigEndian.AppendUint64(b, uint64(m.StartMs))
	b = binary.BigEndian.AppendUint64(b, uint64(m.LastUpdateMs))
	b = binary.AppendUvarint(b, uint64(len(m.Partitions)))
	for _, tp := range m.Partitions {
		b = binary.AppendUvarint(b, uint64(len(tp.Topic)))
		b = append(b, tp.Topic...)
		b = binary.BigEndian.AppendUint32(b, uint32(tp.Partition))
	}
	b = binary.AppendUvarint(b, uint64(len(m.Groups)))
	for _, g := range m.Groups {
		b = binary.AppendUvarint(b, uint64(len(g)))
		b = append(b, g...)
	}
	return b
}

// DecodeMetadata parses EncodeMetadata's output.
func DecodeMetadata(b []byte) (Metadata, error) {
	var m Metadata
	if len(b) < recordFixed || b[0] != recordMagic {
		return m, ErrCorruptRecord
	}
	if b[1] != recordVersion {
		return m, fmt.Errorf("transaction record version %d: %w", b[1], ErrCorruptRecord)
	}
	p := b[2:]
	m.ProducerID = int64(binary.BigEndian.Uint64(p))
	m.PrevProducerID = int64(binary.BigEndian.Uint64(p[8:]))
	m.NextProducerID = int64(binary.BigEndian.Uint64(p[16:]))
	m.Epoch = int16(binary.BigEndian.Uint16(p[24:]))
	m.LastEpoch = int16(binary.BigEndian.Uint16(p[26:]))
	m.TimeoutMs = int32(binary.BigEndian.Uint32(p[28:]))
	m.State = State(p[32])
	m.TV2 = p[33]&1 != 0
	m.StartMs = int64(binary.BigEndian.Uint64(p[34:]))
	m.LastUpdateMs = int64(binary.BigEndian.Uint64(p[42:]))
	p = p[50:]
	if int(m.State) >= len(stateNames) || b[2+33]&^1 != 0 {
		return m, ErrCorruptRecord
	}
	// only the shortest uvarint is valid, so equal states encode equally
	canonical := func(n uint64, w int) bool { return w > 0 && w == len(binary.AppendUvarint(nil, n)) }
	str := func() (string, bool) {
		n, w := binary.Uvarint(p)
		if !canonical(n, w) || n > uint64(len(p)-w) {
			return "", false
		}
		s := string(p[w : w+int(n)])
		p = p[w+int(n):]
		return s, true
	}
	n, w := binary.Uvarint(p)
	if !canonical(n, w) || n > uint64(len(p)) {
		return m, ErrCorruptRecord
	}
	p = p[w:]
	for i := uint64(0); i < n; i++ {
		t, ok := str()
		if !ok || len(p) < 4 {
			return m, ErrCorruptRecord
		}
		m.Partitions = append(m.Partitions, TopicPartition{Topic: t, Partition: int32(binary.BigEndian.Uint32(p))})
		p = p[4:]
	}
	n, w = binary.Uvarint(p)
	if !canonical(n, w) || n > uint64(len(p)) {
		return m, ErrCorruptRecord
	}
	p = p[w:]
	for i := uint64(0); i < n; i++ {
		g, ok := str()
		if !ok {
			return m, ErrCorruptRecord
		}
		m.Groups = append(m.Groups, g)
	}
	if len(p) != 0 {
		return m, ErrCorruptRecord
	}
	return m, nil
}
