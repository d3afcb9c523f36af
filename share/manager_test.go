package share

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"sharq/log/clock"
)

// memLog is a PartitionLog over raw batch framing (rawBatches).
type memLog struct {
	mu      sync.Mutex
	data    []byte
	end     int64
	watches map[chan struct{}]struct{}
	// Transactions (tests that set them): lso < 0 means no open
	// transaction (the LSO is the end).
	lso     int64
	aborted []AbortedTxn
}

// appendRaw appends prepared batches of n offsets in all.
func (l *memLog) appendRaw(b []byte, n int) {
	l.mu.Lock()
	l.data = append(l.data, b...)
	l.end += int64(n)
	l.mu.Unlock()
}

func (l *memLog) LastStableOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lso > 0 && l.lso < l.end {
		return l.lso
	}
	return l.end
}

func (l *memLog) AbortedTransactions(from, upTo int64, dst []AbortedTxn) []AbortedTxn {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.aborted {
		if a.FirstOffset < upTo {
			dst = append(dst, a)
		}
	}
	return dst
}

func (l *memLog) append(n int) {
	l.mu.Lock()
	l.data = append(l.data, rawBatches(l.end, []int{100}, []int{n})...)
	l.end += int64(n)
	for ch := range l.watches {
		select {
		case ch <- struct{}{}:
		default:
		}
		delete(l.watches, ch)
	}
	l.mu.Unlock()
}

func (l *memLog) LogStartOffset() int64 { return 0 }
func (l *memLog) HighWatermark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}
func (l *memLog) Read(offset int64, maxBytes int32, dst []byte) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for pos := 0; pos < len(l.data); {
		h, size, _ := ParseBatchHeader(l.data[pos:])
		if h.LastOffset >= offset {
			return append(dst, l.data[pos:]...), nil
		}
		pos += size
	}
	return dst, nil
}
func (l *memLog) OffsetForTimestamp(int64) (int64, int64, error) {
	return -1, -1, errors.New("no index")
}
func (l *memLog) Watch(ch chan struct{}) {
	l.mu.Lock()
	if l.watches == nil {
		l.watches = map[chan struct{}]struct{}{}
	}
	l.watches[ch] = struct{}{}
	l.mu.Unlock()
}
func (l *memLog) Unwatch(ch chan struct{}) {
	l.mu.Lock()
	delete(l.watches, ch)
	l.mu.Unlock()
}

type memLogs struct{ l *memLog }

func (m memLogs) Partition(_ [16]byte, p int32) (PartitionLog, int16) {
	if p != 0 {
		return nil, codeUnknownTopicOrPart
	}
	return m.l, 0
}
func (memLogs) ReadErrorCode(error) int16 { return codeUnknownServerError }

func newTestManager(t *testing.T) (*Manager, *memLog, *clock.Fake) {
	t.Helper()
	lg := &memLog{}
	clock := clock.NewFake(time.Unix(1000, 0))
	m, err := NewManager(Options{
		Persister: NewMemPersister(),
		Logs:      memLogs{lg},
		Clock:     clock,
		Settings: func(string) Settings {
			return Settings{LockDuration: time.Second, DeliveryLimit: 5, AutoOffsetReset: "earliest",
				RenewEnabled: true, MaxSessions: 10, FetchMaxBytes: 1 << 20}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, lg, clock
}

func fetchOnce(t *testing.T, m *Manager, sc *Scratch, member string, epoch int32, acks ...AckBatch) *PartitionResult {
	t.Helper()
	req := sc.Reset()
	req.Group, req.Member, req.Conn, req.Epoch, req.MaxRecords = "g", member, member, epoch, 100
	sc.AddPartition([16]byte{1}, 0)
	for _, a := range acks {
		types := make([]int8, len(a.Types))
		for i, ty := range a.Types {
			types[i] = int8(ty)
		}
		sc.AddAck(a.FirstOffset, a.LastOffset, types)
	}
	res := m.Fetch(context.Background(), sc)
	if res.ErrorCode != 0 || len(res.Partitions) != 1 {
		t.Fatalf("fetch by %s at epoch %d: %+v", member, epoch, res)
	}
	return &res.Partitions[0]
}

// Lock timers run on the Manager's clock: an acquisition that is neither
// acked nor renewed goes back to Available when the fake clock passes its
// deadline, and another member gets it with delivery count 2.
func TestManagerLockExpiryOnClock(t *testing.T) {
	m, lg, clock := newTestManager(t)
	lg.append(10)
	var a, b Scratch
	r := fetchOnce(t, m, &a, "a", 0)
	if len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 9, 1}) || len(r.Records) == 0 {
		t.Fatalf("first acquisition: %+v", r)
	}
	if r := fetchOnce(t, m, &b, "b", 0); len(r.Acquired) != 0 {
		t.Fatalf("b acquired locked records: %+v", r.Acquired)
	}
	clock.Advance(999 * time.Millisecond)
	if r := fetchOnce(t, m, &b, "b", 1); len(r.Acquired) != 0 {
		t.Fatalf("b acquired before the lock expired: %+v", r.Acquired)
	}
	clock.Advance(time.Millisecond)
	r = fetchOnce(t, m, &b, "b", 2)
	if len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 9, 2}) {
		t.Fatalf("after expiry b got %+v, want 0-9 delivery 2", r.Acquired)
	}
	// a's late accept is refused; b's goes through and moves the SPSO.
	if r := fetchOnce(t, m, &a, "a", 1, AckBatch{0, 9, []AckType{AckAccept}}); r.AckCode != codeInvalidRecordState {
		t.Fatalf("a's ack after losing the lock: code %d", r.AckCode)
	}
	if r := fetchOnce(t, m, &b, "b", 3, AckBatch{0, 9, []AckType{AckAccept}}); r.AckCode != 0 {
		t.Fatalf("b's ack: code %d", r.AckCode)
	}
	if spso, _, ok := m.Offsets(Key{Group: "g", TopicID: [16]byte{1}}); !ok || spso != 10 {
		t.Fatalf("SPSO %d (ok %v), want 10", spso, ok)
	}
}

// A parked ShareFetch is woken by an append to the log, and a connection
// that goes away releases what its member held (count back to 0).
func TestManagerParkAndReleaseConn(t *testing.T) {
	m, lg, _ := newTestManager(t)
	var a Scratch
	fetchOnce(t, m, &a, "a", 0)
	done := make(chan *PartitionResult, 1)
	go func() {
		req := a.Reset()
		req.Group, req.Member, req.Conn, req.Epoch, req.MaxRecords = "g", "a", "a", 1, 100
		req.MaxWait = time.Hour // only the append can end it
		res := m.Fetch(context.Background(), &a)
		done <- &res.Partitions[0]
	}()
	// The append wakes the fetch whether it parked already or not.
	lg.append(5)
	r := <-done
	if len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 4, 1}) {
		t.Fatalf("woken fetch got %+v", r.Acquired)
	}
	m.ReleaseConn("a")
	var b Scratch
	r = fetchOnce(t, m, &b, "b", 0)
	if len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 4, 1}) {
		t.Fatalf("after the connection closed b got %+v, want 0-4 delivery 1", r.Acquired)
	}
}

func (l *memLog) Pin() error { return nil }
func (l *memLog) Unpin()     {}

// KafkaOffsets is the start offset Kafka's DescribeShareGroupOffsets
// shows: absent until the first acknowledgement is written, then the SPSO
// from before each written acknowledgement (Kafka moves its cached SPSO
// after the write), while Offsets is the live SPSO.
func TestManagerKafkaOffsets(t *testing.T) {
	m, lg, _ := newTestManager(t)
	lg.append(10)
	k := Key{Group: "g", TopicID: [16]byte{1}}
	var a Scratch
	// Fetched (initialised, acquired) but never acknowledged: "-".
	if r := fetchOnce(t, m, &a, "a", 0); len(r.Acquired) != 1 {
		t.Fatalf("acquired %+v", r.Acquired)
	}
	if start, lag, ok := m.KafkaOffsets(k); ok || start != -1 || lag != -1 {
		t.Errorf("before any ack: %d %d %v, want -1 -1 false", start, lag, ok)
	}
	if spso, _, ok := m.Offsets(k); !ok || spso != 0 {
		t.Errorf("live SPSO %d %v, want 0", spso, ok)
	}
	// Accept 0-4: the write carries SPSO 0; live 5. Lag: 5 records left.
	fetchOnce(t, m, &a, "a", 1, AckBatch{0, 4, []AckType{AckAccept}})
	if start, lag, ok := m.KafkaOffsets(k); !ok || start != 0 || lag != 5 {
		t.Errorf("after the first ack: %d %d %v, want 0 5", start, lag, ok)
	}
	// Accept 5-9: the write carries SPSO 5; live 10.
	fetchOnce(t, m, &a, "a", 2, AckBatch{5, 9, []AckType{AckAccept}})
	if start, _, _ := m.KafkaOffsets(k); start != 5 {
		t.Errorf("after the second ack: %d, want 5", start)
	}
	if spso, _, _ := m.Offsets(k); spso != 10 {
		t.Errorf("live SPSO %d, want 10", spso)
	}
}
