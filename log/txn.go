package log

// Transactions in a partition log: transaction markers (control batches),
// the open transactions per producer, the last stable offset and reads
// bounded by it. The aborted-transaction index is in txnindex.go.

import (
	"encoding/binary"
	"fmt"

	"sharq/log/recordbatch"
)

// Control record types (Kafka's ControlRecordType).
const (
	controlAbort  = 0
	controlCommit = 1
)

// markerSize is the size of a transaction marker batch: the v2 header and
// one record whose key is version+type (4 bytes) and whose value is
// version+coordinatorEpoch (6 bytes).
const markerSize = batchHeaderSize + 17

// AbortedTxn is an aborted transaction as Fetch reports it (recordbatch's,
// the one type share takes too).
type AbortedTxn = recordbatch.AbortedTxn

// txnState is the transaction view of one partition. Guarded by Log.mu,
// written with Log.appendMu held.
type txnState struct {
	// ongoing maps producer id to the first offset of its open transaction.
	ongoing map[int64]int64
	// firstUnstable is the smallest value of ongoing, -1 if none.
	firstUnstable int64
	// aborted is the aborted-transaction index of every segment, by
	// ascending lastOffset (see txnindex.go).
	aborted []abortedTxn
}

func (t *txnState) recompute() {
	t.firstUnstable = -1
	for _, f := range t.ongoing {
		if t.firstUnstable < 0 || f < t.firstUnstable {
			t.firstUnstable = f
		}
	}
}

// buildMarker lays out a COMMIT or ABORT control batch as Kafka's
// EndTransactionMarker does.
func buildMarker(producerID int64, epoch int16, commit bool, coordinatorEpoch int32, nowMs int64) []byte {
	h := batchHeader{
		Magic: magicV2, Attributes: attrTransactional | attrControl, BaseTimestamp: nowMs, MaxTimestamp: nowMs,
		ProducerID: producerID, ProducerEpoch: epoch, BaseSequence: -1, RecordCount: 1,
	}
	b := h.AppendTo(make([]byte, 0, markerSize))
	typ := uint16(controlAbort)
	if commit {
		typ = controlCommit
	}
	var key [4]byte // version 0, type
	binary.BigEndian.PutUint16(key[2:], typ)
	var value [6]byte // version 0, coordinator epoch
	binary.BigEndian.PutUint32(value[2:], uint32(coordinatorEpoch))
	b = recordbatch.AppendRecord(b, &recordbatch.Record{Key: key[:], Value: value[:]})
	recordbatch.Seal(b)
	return b
}

// controlType returns the control record type of a control batch's first
// record, given the bytes after the batch header.
func controlType(records []byte) (int16, bool) {
	typ, _, ok := controlRecord(records)
	return typ, ok
}

// controlRecord parses a marker's record: its type and (from the
// EndTransactionMarker value) the coordinator epoch, -1 if absent.
func controlRecord(records []byte) (typ int16, coordinatorEpoch int32, ok bool) {
	p := records
	if _, n := binary.Varint(p); n <= 0 {
		return 0, -1, false
	} else {
		p = p[n:]
	}
	if len(p) < 1 {
		return 0, -1, false
	}
	p = p[1:]     // attributes
	for range 2 { // timestamp delta, offset delta
		_, n := binary.Varint(p)
		if n <= 0 {
			return 0, -1, false
		}
		p = p[n:]
	}
	kl, n := binary.Varint(p)
	if n <= 0 || kl < 4 || int64(len(p)-n) < kl {
		return 0, -1, false
	}
	p = p[n:]
	typ = int16(binary.BigEndian.Uint16(p[2:]))
	p = p[kl:]
	coordinatorEpoch = -1
	if vl, n := binary.Varint(p); n > 0 && vl >= 6 && int64(len(p)-n) >= 6 {
		coordinatorEpoch = int32(binary.BigEndian.Uint32(p[n+2:]))
	}
	return typ, coordinatorEpoch, true
}

// AppendMarker writes a transaction marker (COMMIT or ABORT control batch)
// for producerID, which ends its open transaction in this partition, as
// Kafka's WriteTxnMarkers does. A marker older than the producer's epoch is
// ErrInvalidProducerEpoch. Writing a marker for a producer without an open
// transaction here is allowed and harmless (a coordinator retry).
func (l *Log) AppendMarker(producerID int64, epoch int16, commit bool, coordinatorEpoch, leaderEpoch int32) (AppendResult, error) {
	b := buildMarker(producerID, epoch, commit, coordinatorEpoch, l.now().UnixMilli())
	return l.appendBatch(b, leaderEpoch, true)
}

// checkMarker applies Kafka's epoch rule to a marker.
func (ps *producerState) checkMarker(h *batchHeader) error {
	if e := ps.m[h.ProducerID]; e != nil && h.ProducerEpoch < e.epoch {
		return fmt.Errorf("%w: marker epoch %d of producer %d is older than its current epoch %d", ErrInvalidProducerEpoch, h.ProducerEpoch, h.ProducerID, e.epoch)
	}
	return nil
}

// txnChange is what a transactional batch does to a partition's
// transaction view, worked out by prepareTxnAppend before the batch is
// published and applied by applyTxnLocked as it is.
type txnChange struct {
	// opens: a data batch that opens its producer's transaction here,
	// whose first offset is first.
	opens bool
	// ends: a marker that ends the producer's open transaction here.
	ends bool
	// first is the first offset of the transaction opened or ended.
	first int64
	// aborted: the ends marker is an ABORT; its index entry (already in
	// the segment's .txnindex file) joins the in-memory index.
	aborted    bool
	abortEntry abortedTxn
	// coordinatorEpoch is a marker's coordinator epoch, for the producer
	// state once producers.update has run.
	coordinatorEpoch int32
}

// prepareTxnAppend works out the transaction change of batch h, written at
// h.BaseOffset into the segment at segBase but not yet visible to readers.
// An ABORT marker's aborted-index entry is written and fsynced to the
// segment's .txnindex file here, so that readers see it the moment they see
// the marker. It must run before producers.update. Called with appendMu
// held.
func (l *Log) prepareTxnAppend(h *batchHeader, batch []byte, segBase int64) (txnChange, error) {
	var tc txnChange
	pid := h.ProducerID
	e := l.producers.m[pid]
	if h.Attributes&attrControl == 0 {
		// applyTxnLocked ignores it if the transaction is open already.
		tc.opens, tc.first = true, h.BaseOffset
		if e != nil && e.txnFirst >= 0 {
			tc.first = e.txnFirst
		}
		return tc, nil
	}
	typ, ce, _ := controlRecord(batch[batchHeaderSize:])
	tc.coordinatorEpoch = ce
	if e == nil || e.txnFirst < 0 {
		return tc, nil
	}
	tc.ends, tc.first = true, e.txnFirst
	if typ != controlAbort {
		return tc, nil
	}
	// The entry's lastStableOffset is the partition's LSO once this
	// transaction is gone: the oldest other open transaction, or the
	// offset after the marker.
	lso := int64(-1)
	l.mu.RLock()
	for other, f := range l.txn.ongoing {
		if other != pid && (lso < 0 || f < lso) {
			lso = f
		}
	}
	l.mu.RUnlock()
	if lso < 0 {
		lso = h.BaseOffset + 1
	}
	tc.aborted = true
	tc.abortEntry = abortedTxn{producerID: pid, first: e.txnFirst, last: h.BaseOffset, lso: lso, segment: segBase}
	if err := l.persistAborted(&tc.abortEntry); err != nil {
		return tc, err
	}
	return tc, nil
}

// applyTxnLocked applies tc to the open transactions and the aborted index,
// in the critical section that publishes the batch. Called with appendMu
// and mu held.
func (l *Log) applyTxnLocked(h *batchHeader, tc txnChange) {
	pid := h.ProducerID
	switch {
	case tc.opens:
		if _, ok := l.txn.ongoing[pid]; ok {
			return
		}
		if l.txn.ongoing == nil {
			l.txn.ongoing = map[int64]int64{}
		}
		l.txn.ongoing[pid] = tc.first
		if l.txn.firstUnstable < 0 || tc.first < l.txn.firstUnstable {
			l.txn.firstUnstable = tc.first
		}
	case tc.ends:
		delete(l.txn.ongoing, pid)
		l.txn.recompute()
		if tc.aborted {
			l.txn.aborted = append(l.txn.aborted, tc.abortEntry)
		}
	}
}

// LastStableOffset is the end of what read_committed consumers may see: the
// first offset of the oldest open transaction, or the high watermark.
func (l *Log) LastStableOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.lsoLocked()
}

func (l *Log) lsoLocked() int64 {
	hw := l.hwLocked()
	if f := l.txn.firstUnstable; f >= 0 && f < hw {
		return f
	}
	return hw
}

// ReadCommitted is Read for read_committed consumers: batches only below
// the last stable offset.
func (l *Log) ReadCommitted(offset int64, maxBytes int32, dst []byte) ([]byte, error) {
	return l.read(offset, maxBytes, dst, true)
}

// OpenTransactions returns, per producer with an open transaction in this
// partition, the first offset of that transaction (DescribeProducers).
func (l *Log) OpenTransactions() map[int64]int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[int64]int64, len(l.txn.ongoing))
	for k, v := range l.txn.ongoing {
		out[k] = v
	}
	return out
}

// ProducerInfo is one producer's state in a partition (DescribeProducers).
type ProducerInfo struct {
	ProducerID         int64
	Epoch              int16
	LastSequence       int32
	LastTimestamp      int64
	CurrentTxnFirstOff int64 // -1 if none
	CoordinatorEpoch   int32 // of the last marker, -1 if none
}

// Producers returns the producer state of the partition.
func (l *Log) Producers() []ProducerInfo {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	out := make([]ProducerInfo, 0, len(l.producers.m))
	for id, e := range l.producers.m {
		out = append(out, ProducerInfo{ProducerID: id, Epoch: e.epoch, LastSequence: e.lastSeq(), LastTimestamp: e.lastTimestamp, CurrentTxnFirstOff: e.txnFirst, CoordinatorEpoch: e.coordinatorEpoch})
	}
	return out
}

// NextOffsetAfter returns the offset after the last whole batch in
// batches (as Read returns them), or -1 if there is none.
func NextOffsetAfter(batches []byte) int64 {
	next := int64(-1)
	for len(batches) >= batchHeaderSize {
		size := int64(int32(binary.BigEndian.Uint32(batches[offBatchLength:]))) + batchLengthOverhead
		if size < batchHeaderSize || size > int64(len(batches)) {
			break
		}
		next = int64(binary.BigEndian.Uint64(batches)) + int64(int32(binary.BigEndian.Uint32(batches[offLastOffsetDelta:]))) + 1
		batches = batches[size:]
	}
	return next
}

// replayMarker reads the type of a marker met while replaying the log and
// records the transaction it aborted. first is the first offset of the
// transaction the marker ended.
func (l *Log) replayMarker(out *[]abortedTxn, ps *producerState, s *segment, h *batchHeader, pos, first int64) error {
	buf := make([]byte, 24)
	n := min(int64(len(buf)), int64(h.Size)-batchHeaderSize)
	if n <= 0 {
		return nil
	}
	if err := readFull(s.log, buf[:n], pos+batchHeaderSize); err != nil {
		return fmt.Errorf("%w: read %s: %w", ErrStorage, s.logPath, err)
	}
	typ, ce, ok := controlRecord(buf[:n])
	if e := ps.m[h.ProducerID]; e != nil && ok {
		e.coordinatorEpoch = ce
	}
	if !ok || typ != controlAbort || first < 0 {
		return nil
	}
	lso := int64(-1)
	for _, e := range ps.m {
		if e.txnFirst >= 0 && (lso < 0 || e.txnFirst < lso) {
			lso = e.txnFirst
		}
	}
	if lso < 0 {
		lso = h.BaseOffset + 1
	}
	*out = append(*out, abortedTxn{producerID: h.ProducerID, first: first, last: h.BaseOffset, lso: lso, segment: s.base})
	return nil
}
