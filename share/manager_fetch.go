package share

import (
	"context"
	"time"
)

func contains(tps []TopicPartition, tp TopicPartition) bool {
	for _, t := range tps {
		if t == tp {
			return true
		}
	}
	return false
}

// resolve finds r's log and share-partition, once per request.
func (m *Manager) resolve(req *FetchRequest, r *PartitionResult) {
	if r.resolved {
		return
	}
	r.resolved = true
	group := req.Group
	if req.NotLeader != nil && req.NotLeader(r.TopicID, r.Partition) {
		r.log, r.logCode = nil, codeNotLeaderOrFollower
		return
	}
	r.log, r.logCode = m.logs.Partition(r.TopicID, r.Partition)
	if r.log == nil {
		if r.logCode == 0 {
			r.logCode = codeUnknownTopicOrPart
		}
		return
	}
	p, err := m.part(r.key(group))
	if err != nil {
		m.logger.Error("share-partition", "err", err)
		r.logCode = codeKafkaStorage
		return
	}
	r.p = p
}

// Fetch serves a ShareFetch: the session step, the piggy-backed
// acknowledgements, then acquisition from the session's partitions,
// parking until something is acquirable, MaxWait passes or ctx ends.
func (m *Manager) Fetch(ctx context.Context, sc *Scratch) *Result {
	req := &sc.Req
	res := sc.resetResult()
	st := m.settings(req.Group)
	res.LockDuration = st.LockDuration
	sc.buf = sc.buf[:0] // the last response using it is written

	// Rows for acked partitions come first, in request order, then the
	// session's (the order of the answer).
	for i := range req.Partitions {
		if len(req.Partitions[i].Acks) > 0 {
			sc.result(req.Partitions[i].TopicPartition).Acked = true
		}
	}
	closing, code, msg := m.sessionStep(req, true, sc)
	if code != 0 {
		res.ErrorCode, res.ErrorMessage = code, msg
		res.Partitions = res.Partitions[:0]
		return res
	}
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		if len(fp.Acks) > 0 {
			r := sc.result(fp.TopicPartition)
			if req.denied(fp.TopicPartition) {
				r.AckCode = codeTopicAuthFailed
				continue
			}
			r.AckCode = m.acknowledge(req, r, fp.Acks, req.RenewOnly)
		}
	}
	if closing {
		m.releaseMember(req.Group, req.Member, sc.keys)
		return res
	}
	if req.RenewOnly {
		return res
	}
	for _, tp := range sc.keys {
		r := sc.result(tp)
		if req.Epoch == EpochOpen || contains(sc.added, tp) {
			r.Added = true
		}
	}
	// sc.result may have moved the rows: index them only now.
	sc.fetch = sc.fetch[:0]
	for _, tp := range sc.keys {
		for i := range res.Partitions {
			if res.Partitions[i].TopicPartition == tp {
				if req.denied(tp) {
					res.Partitions[i].Code = codeTopicAuthFailed
				} else {
					sc.fetch = append(sc.fetch, i)
				}
				break
			}
		}
	}
	m.fetchLoop(ctx, req, &st, sc)
	return res
}

// Acknowledge serves a ShareAcknowledge: the session step, then each
// partition's acknowledgements; every listed partition is answered.
func (m *Manager) Acknowledge(sc *Scratch) *Result {
	req := &sc.Req
	res := sc.resetResult()
	res.LockDuration = m.settings(req.Group).LockDuration
	closing, code, _ := m.sessionStep(req, false, sc)
	if code != 0 {
		res.ErrorCode = code
		return res
	}
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		r := sc.row(fp.TopicPartition)
		if req.denied(fp.TopicPartition) {
			r.Code = codeTopicAuthFailed
		} else if len(fp.Acks) > 0 {
			r.Code = m.acknowledge(req, r, fp.Acks, req.RenewOnly)
		}
	}
	if closing {
		m.releaseMember(req.Group, req.Member, sc.keys)
	}
	return res
}

// acknowledge applies one partition's acknowledgements and returns the
// partition's error code. Acks that must survive a crash are persisted
// (synced) before this returns.
func (m *Manager) acknowledge(req *FetchRequest, r *PartitionResult, batches []AckBatch, renew bool) int16 {
	if err := checkAckBatches(batches, renew); err != nil {
		return ErrorCode(err)
	}
	member := req.Member
	m.resolve(req, r)
	if r.log == nil {
		if r.logCode == codeUnknownTopicID || r.logCode == codeKafkaStorage || r.logCode == codeNotLeaderOrFollower {
			return r.logCode
		}
		return codeUnknownTopicOrPart
	}
	p := r.p
	if m.faults.armedAcks.Load() > 0 { // injected ack failures (manager_faults.go)
		if code := m.failAck(p.key, batches); code != 0 {
			return code
		}
	}
	p.mu.Lock()
	now := m.clock.Now()
	eff, err := p.sp.Acknowledge(member, now, batches)
	if err != nil {
		p.mu.Unlock()
		return ErrorCode(err)
	}
	// How long the records were held: fair acquisition's floor.
	var acked int64
	for i := range batches {
		if b := &batches[i]; len(b.Types) != 1 || b.Types[0] != AckRenew {
			p.fair.acked(member, b.FirstOffset, b.LastOffset, now)
			acked += b.LastOffset - b.FirstOffset + 1
		}
	}
	p.fair.ackedRecords(member, acked, now)
	w := p.stageKafkaWriteLocked(eff)
	m.afterLocked(p, eff)
	p.mu.Unlock()
	if err := m.commit(p, w); err != nil {
		m.logger.Error("persist acknowledgement", "err", err)
		return codeKafkaStorage
	}
	return 0
}

// An acquisition takes about MaxRecords records (500 by default) in whole
// batches, so reading the request's MaxBytes share of the log (tens of MB)
// copies far more than it can use. A share-partition's log read is sized
// from the bytes per offset its last read saw (1.5x MaxRecords' worth, at
// least readMin), and is at most readBytes (Kafka's consumer reads at most
// 1 MiB per partition by default too) until a read has been seen. A first
// batch bigger than the size is still read whole.
const (
	readBytes = 1 << 20
	readMin   = 64 << 10
)

// readSize is how many bytes to read for an acquisition of maxRecords.
func (p *part) readSize(maxRecords, maxBytes int) int {
	n := readBytes
	if p.bytesPerOffset > 0 {
		n = max(readMin, int(min(float64(maxRecords)*p.bytesPerOffset*1.5, 1<<30)))
	}
	return max(1, min(n, maxBytes, 1<<30))
}

// noteRead keeps the bytes per offset of data, whole v2 batches as the log
// returns them.
func (p *part) noteRead(data []byte) {
	var first, last int64 = 0, -1
	batches := 0
	for off := 0; off < len(data); {
		h, size, ok := ParseBatchHeader(data[off:])
		if !ok {
			break
		}
		if off == 0 {
			first = h.BaseOffset
		}
		last, off = h.LastOffset, off+size
		batches++
	}
	if span := last - first + 1; span > 0 && last >= first {
		p.bytesPerOffset = float64(len(data)) / float64(span)
	}
	if batches > 0 {
		p.batchBytes = len(data) / batches
	}
}

// holderMaxWait bounds the park of a ShareFetch whose member still holds
// acquired records in one of its share-partitions. Clients that fetch ahead
// (franz-go sends the next ShareFetch as soon as the application takes a
// batch) carry the acknowledgements of what they hold only on the request
// after the parked one, so a full in-flight window would otherwise wait out
// MaxWaitMs for acks its own holders cannot send: every member stalls
// together. Answering such a fetch early is what Kafka does on MaxWaitMs,
// only sooner; a holder still processing re-polls at most every
// holderMaxWait.
const holderMaxWait = 5 * time.Millisecond

// fetchLoop acquires from the session's partitions, parking when nothing
// can be acquired.
func (m *Manager) fetchLoop(ctx context.Context, req *FetchRequest, st *Settings, sc *Scratch) {
	if sc.wake == nil {
		sc.wake = make(chan struct{}, 1)
	}
	// Rotate the partitions by the session epoch so none starves.
	shift := 0
	if n := len(sc.fetch); n > 1 {
		shift = int(req.Epoch) % n
		if shift < 0 {
			shift += n
		}
	}
	if m.acquireAll(req, st, sc, shift) || req.MaxWait <= 0 || ctx.Err() != nil {
		return
	}
	deadline := m.clock.Now().Add(req.MaxWait)
	if m.holdsAny(req.Member, sc) {
		if d := m.clock.Now().Add(holderMaxWait); d.Before(deadline) {
			deadline = d
		}
	}
	timeout := make(chan struct{}, 1)
	timer := m.clock.AfterFunc(deadline.Sub(m.clock.Now()), func() { timeout <- struct{}{} })
	defer timer.Stop()
	select {
	case <-sc.wake: // a token left by an earlier request
	default:
	}
	rows := sc.res.Partitions
	// This member now waits on each share-partition: fair acquisition
	// (fair.go) limits what the others take while it does.
	for _, i := range sc.fetch {
		if p := rows[i].p; p != nil {
			p.mu.Lock()
			p.fair.park(req.Member)
			p.mu.Unlock()
		}
	}
	defer m.unpark(sc)
	for {
		// (Re-)register on every log and share-partition, then try again
		// before waiting so a wake-up in between is not lost.
		for _, i := range sc.fetch {
			r := &rows[i]
			if r.log != nil {
				r.log.Watch(sc.wake)
			}
			if r.p != nil {
				r.p.addWaiter(sc.wake)
			}
		}
		if sc.sess != nil && sc.sess.evicted.Load() {
			return // its session was evicted: the member holds nothing now
		}
		if m.acquireAll(req, st, sc, shift) {
			return
		}
		select {
		case <-sc.wake:
		case <-timeout:
			if sc.sess == nil || !sc.sess.evicted.Load() {
				m.acquireAll(req, st, sc, shift)
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

func (m *Manager) unpark(sc *Scratch) {
	rows := sc.res.Partitions
	for _, i := range sc.fetch {
		r := &rows[i]
		if r.log != nil {
			r.log.Unwatch(sc.wake)
		}
		if p := r.p; p != nil {
			p.mu.Lock()
			delete(p.waiters, sc.wake)
			p.fair.unpark(sc.Req.Member, m.clock.Now())
			p.mu.Unlock()
		}
	}
}

// holdsAny reports whether member holds acquired records in any of the
// session's share-partitions.
func (m *Manager) holdsAny(member string, sc *Scratch) bool {
	for _, i := range sc.fetch {
		p := sc.res.Partitions[i].p
		if p == nil {
			continue
		}
		p.mu.Lock()
		held := p.sp.Holds(member)
		p.mu.Unlock()
		if held {
			return true
		}
	}
	return false
}

// acquireAll acquires from each partition until MaxRecords are taken; it
// reports whether anything was acquired or failed (both answer at once).
func (m *Manager) acquireAll(req *FetchRequest, st *Settings, sc *Scratch, shift int) bool {
	remaining := req.MaxRecords
	if remaining <= 0 {
		remaining = DefaultMaxRecords
	}
	maxBytes := req.MaxBytes
	if maxBytes <= 0 || maxBytes > st.FetchMaxBytes {
		maxBytes = st.FetchMaxBytes
	}
	n := len(sc.fetch)
	perPartition := maxBytes
	if n > 0 {
		perPartition = max(maxBytes/n, 1)
	}
	got := false
	for j := 0; j < n; j++ {
		r := &sc.res.Partitions[sc.fetch[(j+shift)%n]]
		if len(r.Acquired) > 0 || remaining <= 0 {
			continue
		}
		m.resolve(req, r)
		if r.log == nil {
			r.Code = r.logCode
			got = true
			continue
		}
		areq := AcquireRequest{MaxRecords: remaining, BatchSize: req.BatchSize, Mode: req.Mode}
		taken, code := m.acquire(req.Member, r, st, areq, perPartition, sc)
		r.Code = code
		if code != 0 || taken > 0 {
			got = true
		}
		remaining -= int(taken)
	}
	return got
}

// acquire takes records for member from one share-partition into r and
// returns how many offsets it acquired. Log bytes are read into sc.buf
// (appended).
func (m *Manager) acquire(member string, r *PartitionResult, st *Settings, areq AcquireRequest, maxBytes int, sc *Scratch) (int64, int16) {
	if err := r.log.Pin(); err != nil {
		if code := m.logs.ReadErrorCode(err); code != 0 {
			return 0, code
		}
		return 0, codeKafkaStorage
	}
	defer r.log.Unpin()
	p := r.p
	p.mu.Lock()
	p.sp.SetConfig(st.PartitionConfig())
	w := m.initLocked(p, r.log, st)
	n, code, aw := m.acquireLocked(p, member, r, areq, maxBytes, st.FairAcquisition, sc)
	w = w.or(aw)
	p.mu.Unlock()
	if err := m.commit(p, w); err != nil {
		m.logger.Error("persist share-partition", "err", err)
		r.Acquired, r.Records = r.Acquired[:0], nil
		return 0, codeKafkaStorage
	}
	return n, code
}

// acquireLocked is acquire's work under the share-partition's lock; the
// caller commits the write it staged.
func (m *Manager) acquireLocked(p *part, member string, r *PartitionResult, areq AcquireRequest, maxBytes int, fair bool, sc *Scratch) (int64, int16, pendingWrite) {
	lg := r.log
	logStart := lg.LogStartOffset()
	now := m.clock.Now()
	if p.sp.FullAt(now) && logStart <= p.sp.StartOffset() {
		// Nothing to take and no log-start move to apply: skip the read.
		return 0, 0, pendingWrite{}
	}
	hw := lg.HighWatermark()
	from := max(p.sp.FetchOffset(now), logStart)
	bounds := Bounds{LogStart: logStart, HighWatermark: hw, LastStable: hw}
	end := hw
	rc := p.sp.Config().ReadCommitted
	if rc {
		// Kafka's read_committed share fetch: the LSO bounds acquisition.
		end = lg.LastStableOffset()
		bounds.LastStable = end
	}
	limit := int64(-1)
	if fair {
		limit = p.fairLimit(member, fairWeight(p, sc), end, m.clock.Now())
		limit = p.applyFairLimit(limit, &areq)
	}
	var data []byte
	var aborted []AbortedTxn
	// limit 0: this member holds its share already. Nothing is read, and
	// Acquire only applies a log-start move, as any acquisition does.
	if from < end && limit != 0 {
		before := len(sc.buf)
		out, err := lg.Read(from, int32(p.readSize(areq.MaxRecords, maxBytes)), sc.buf)
		if err != nil {
			if code := m.logs.ReadErrorCode(err); code != 0 {
				return 0, code, pendingWrite{}
			}
		}
		if len(out) < before {
			out = sc.buf
		}
		// Full slice expression: nothing appended to the buffer later may
		// write into this partition's bytes.
		data = out[before:len(out):len(out)]
		sc.buf = out
		p.noteRead(data)
		if rc {
			sc.aborted = lg.AbortedTransactions(from, end, sc.aborted[:0])
			aborted = sc.aborted
		}
	}
	sc.src.Decompress = m.decompress
	sc.src.Reset(from, data, bounds, aborted)
	eff, err := p.sp.Acquire(member, now, areq, &sc.src, &sc.ar)
	sc.src.Reset(0, nil, Bounds{}, nil) // keep no reference to the bytes
	if err != nil {
		return 0, ErrorCode(err), pendingWrite{}
	}
	w := p.stageLocked(eff)
	m.afterLocked(p, eff)
	if len(sc.ar.Acquired) == 0 {
		// Nothing refers to what was read: give the space back, or a
		// long-poll that re-polls a full window would grow the buffer
		// by a read per try.
		sc.buf = sc.buf[:len(sc.buf)-len(data)]
		return 0, 0, w
	}
	if fair {
		p.fair.note(member, sc.ar.RecordsLast, sc.ar.Count, now)
		p.fair.served(member, now)
		if limit > 0 {
			// The rest of what was acquirable is for the members
			// waiting: wake them.
			p.wakeLocked()
		}
	}
	r.Acquired = append(r.Acquired[:0], sc.ar.Acquired...)
	r.Records = SliceBatches(data, sc.ar.RecordsFirst, sc.ar.RecordsLast)
	return sc.ar.Count, 0, w
}
