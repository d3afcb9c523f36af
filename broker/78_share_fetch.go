package broker

// ShareFetch: v1-2
//
// Behavior:
// * Share sessions keyed by (GroupId, MemberId): epoch 0 opens one (acks
//   in it are INVALID_REQUEST; an old session of the key is replaced
//   without releasing its records), later epochs must be exactly the next
//   one (SHARE_SESSION_NOT_FOUND / INVALID_SHARE_SESSION_EPOCH, top level),
//   Topics adds partitions and ForgottenTopicsData removes them, -1 applies
//   the acks, fetches nothing, closes the session and releases what the
//   member holds. group.share.max.share.sessions bounds the sessions:
//   SHARE_SESSION_LIMIT_REACHED.
// * Piggy-backed acknowledgements are applied first, per partition, and
//   every partition that carried acks is answered with its
//   AcknowledgeErrorCode.
// * Records are acquired for the member from every partition of the
//   session (whole log batches in batch_optimized mode, at most MaxRecords
//   in record_limit mode), starting from the share-partition's next fetch
//   offset; share-partitions initialise on first use from the group's
//   share.auto.offset.reset (latest by default).
// * Nothing acquirable: the request parks until an append, a release or a
//   lock expiry wakes it, or MaxWaitMs passes.
// * AcquisitionLockTimeoutMs is the group's record lock duration.
// * IsRenewAck (v2) requests carry acks only: every fetch limit must be 0.
//
// Version notes:
// * v2: ShareAcquireMode (KIP-1206) and IsRenewAck / RENEW acks (KIP-1222).

import (
	"errors"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/share"
)

func init() { regKey(78, 1, 2, handleShareFetch) }

const (
	shareEpochOpen  = 0
	shareEpochClose = -1
)

// shareAckInput is one partition's acknowledgements from a request.
type shareAckInput struct {
	key     sharePartKey
	batches []share.AckBatch
}

// shareResult is one partition's answer.
type shareResult struct {
	key      sharePartKey
	code     int16
	ackCode  int16
	acked    bool
	added    bool
	records  []byte
	acquired []share.AcquiredRecords
}

func validShareIDs(group, member *string) bool {
	return group != nil && strings.TrimSpace(*group) != "" &&
		member != nil && strings.TrimSpace(*member) != "" && len(*member) <= 36
}

func handleShareFetch(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareFetchRequest)
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	top := func(code int16, msg string) (kmsg.Response, error) {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp, nil
	}
	if !r.s.shareGroupsEnabled() {
		return top(errUnsupportedVersion, "")
	}
	if !validShareIDs(req.GroupID, req.MemberID) {
		return top(errInvalidRequest, "GroupId and MemberId must be set; MemberId at most 36 characters")
	}
	if req.IsRenewAck && (req.MaxBytes != 0 || req.MinBytes != 0 || req.MaxRecords != 0 || req.MaxWaitMillis != 0) {
		return top(errInvalidRequest, "a renew-only request must have MaxBytes, MinBytes, MaxRecords and MaxWaitMs of 0")
	}
	if !r.authorize(resGroup, *req.GroupID, opRead) {
		return top(kerr.GroupAuthorizationFailed.Code, "")
	}
	group, member := *req.GroupID, *req.MemberID
	r.c.fetchBuf = r.c.fetchBuf[:0] // the last response using it is written
	settings := r.s.shareSettings(group)
	resp.AcquisitionLockTimeoutMillis = int32(settings.lockDuration / time.Millisecond)
	st := r.s.share

	var acks []shareAckInput
	var listed []sharePartKey
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			k := sharePartKey{group: group, topicID: t.TopicID, partition: p.Partition}
			listed = append(listed, k)
			if len(p.AcknowledgementBatches) > 0 {
				in := shareAckInput{key: k}
				for _, b := range p.AcknowledgementBatches {
					in.batches = append(in.batches, share.AckBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, Types: ackTypes(b.AcknowledgeTypes)})
				}
				acks = append(acks, in)
			}
		}
	}

	// 1. The session. Its epoch advances before anything else happens, so
	// later partition-level failures do not roll it back (as in Kafka).
	skey := shareSessionKey{group, member}
	st.mu.Lock()
	sess := st.sessions[skey]
	added := map[sharePartKey]bool{}
	closing := false
	switch req.ShareSessionEpoch {
	case shareEpochOpen:
		if len(acks) > 0 {
			st.mu.Unlock()
			return top(errInvalidRequest, "acknowledgements are not allowed when opening a share session")
		}
		if sess == nil && len(st.sessions) >= int(r.s.effectiveConfig().GroupShareMaxShareSessions) {
			st.mu.Unlock()
			return top(kerr.ShareSessionLimitReached.Code, "")
		}
		sess = &shareSession{key: skey, epoch: 1}
		st.sessions[skey] = sess
		for _, k := range listed {
			sess.add(k)
			added[k] = true
		}
	case shareEpochClose:
		if sess == nil {
			st.mu.Unlock()
			return top(kerr.ShareSessionNotFound.Code, "")
		}
		closing = true
		delete(st.sessions, skey)
	default:
		if sess == nil {
			st.mu.Unlock()
			return top(kerr.ShareSessionNotFound.Code, "")
		}
		if req.ShareSessionEpoch != sess.epoch {
			st.mu.Unlock()
			return top(kerr.InvalidShareSessionEpoch.Code, "")
		}
		sess.epoch = nextShareEpoch(sess.epoch)
		for _, k := range listed {
			if sess.add(k) {
				added[k] = true
			}
		}
		for _, f := range req.ForgottenTopicsData {
			for _, p := range f.Partitions {
				sess.forget(sharePartKey{group: group, topicID: f.TopicID, partition: p})
			}
		}
	}
	sess.conn = r.c
	fetchKeys := append([]sharePartKey(nil), sess.parts...)
	st.mu.Unlock()

	results := map[sharePartKey]*shareResult{}
	order := []sharePartKey{}
	result := func(k sharePartKey) *shareResult {
		if res := results[k]; res != nil {
			return res
		}
		res := &shareResult{key: k}
		results[k] = res
		order = append(order, k)
		return res
	}

	// Share groups need READ on every topic they fetch from or
	// acknowledge (Kafka: TOPIC_AUTHORIZATION_FAILED per partition).
	readable := r.shareTopicReader()
	allowed := fetchKeys[:0]
	for _, k := range fetchKeys {
		if !readable(k.topicID) {
			result(k).code = kerr.TopicAuthorizationFailed.Code
			continue
		}
		allowed = append(allowed, k)
	}
	fetchKeys = allowed

	// 2. Acknowledgements.
	for _, a := range acks {
		res := result(a.key)
		res.acked = true
		if !readable(a.key.topicID) {
			res.ackCode = kerr.TopicAuthorizationFailed.Code
			continue
		}
		res.ackCode = r.s.shareAcknowledge(member, a.key, a.batches, req.IsRenewAck)
	}

	if closing {
		st.releaseMember(member, fetchKeys)
	} else if !req.IsRenewAck {
		// 3. Acquire, parking until something is acquirable.
		for _, k := range fetchKeys {
			if added[k] || req.ShareSessionEpoch == shareEpochOpen {
				result(k).added = true
			}
		}
		r.shareFetchLoop(req, member, fetchKeys, settings, result)
	}

	// 4. The answer: partitions with records, errors or acks, and those
	// new to the session.
	var cur *kmsg.ShareFetchResponseTopic
	for _, k := range order {
		res := results[k]
		if len(res.acquired) == 0 && res.code == 0 && !res.acked && !res.added {
			continue
		}
		if cur == nil || cur.TopicID != k.topicID {
			resp.Topics = append(resp.Topics, kmsg.NewShareFetchResponseTopic())
			cur = &resp.Topics[len(resp.Topics)-1]
			cur.TopicID = k.topicID
		}
		p := kmsg.NewShareFetchResponseTopicPartition()
		p.Partition = k.partition
		p.ErrorCode = res.code
		p.AcknowledgeErrorCode = res.ackCode
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
		p.Records = res.records
		if p.Records == nil {
			p.Records = []byte{}
		}
		for _, a := range res.acquired {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.FirstOffset, a.LastOffset, a.DeliveryCount
			p.AcquiredRecords = append(p.AcquiredRecords, ar)
		}
		cur.Partitions = append(cur.Partitions, p)
	}
	return resp, nil
}

func nextShareEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

func ackTypes(in []int8) []share.AckType {
	out := make([]share.AckType, len(in))
	for i, t := range in {
		out[i] = share.AckType(t)
	}
	return out
}

// An acquisition takes about MaxRecords records (500 by default) in whole
// batches, so reading the request's MaxBytes share of the log (tens of MB)
// copies far more than it can use. A share-partition's log read is sized
// from the bytes per offset its last read saw (1.5x MaxRecords' worth, at
// least shareReadMin), and is at most shareReadBytes (Kafka's consumer
// reads at most 1 MiB per partition by default too) until a read has been
// seen. A first batch bigger than the size is still read whole.
const (
	shareReadBytes = 1 << 20
	shareReadMin   = 64 << 10
)

// readSize is how many bytes to read for an acquisition of maxRecords.
func (p *sharePart) readSize(maxRecords, maxBytes int) int {
	n := shareReadBytes
	if p.bytesPerOffset > 0 {
		n = max(shareReadMin, int(min(float64(maxRecords)*p.bytesPerOffset*1.5, 1<<30)))
	}
	return max(1, min(n, maxBytes, 1<<30))
}

// noteRead keeps the bytes per offset of data, whole v2 batches as the log
// returns them.
func (p *sharePart) noteRead(data []byte) {
	var first, last int64 = 0, -1
	for off := 0; off < len(data); {
		h, size, ok := share.ParseBatchHeader(data[off:])
		if !ok {
			break
		}
		if off == 0 {
			first = h.BaseOffset
		}
		last, off = h.LastOffset, off+size
	}
	if span := last - first + 1; span > 0 && last >= first {
		p.bytesPerOffset = float64(len(data)) / float64(span)
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

// shareFetchLoop acquires from the session's partitions, parking when
// nothing can be acquired.
func (r *request) shareFetchLoop(req *kmsg.ShareFetchRequest, member string, keys []sharePartKey, settings shareSettings, result func(sharePartKey) *shareResult) {
	deadline := time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	var w *waiter
	var timer *time.Timer
	var parked []func()
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		for _, undo := range parked {
			undo()
		}
	}()
	// Rotate the partitions by the session epoch so none starves.
	if n := len(keys); n > 1 {
		shift := int(req.ShareSessionEpoch) % n
		if shift < 0 {
			shift += n
		}
		keys = append(keys[shift:len(keys):len(keys)], keys[:shift]...)
	}
	for {
		any := r.shareAcquireAll(req, member, keys, settings, result)
		if any || req.MaxWaitMillis <= 0 || !time.Now().Before(deadline) || r.ctx.Err() != nil {
			return
		}
		if w == nil {
			w = newWaiter()
			if r.s.share.holdsAny(member, keys) {
				if d := time.Now().Add(holderMaxWait); d.Before(deadline) {
					deadline = d
				}
			}
			timer = time.NewTimer(time.Until(deadline))
		} else {
			select {
			case <-w.ch:
			case <-timer.C:
				r.shareAcquireAll(req, member, keys, settings, result)
				return
			case <-r.ctx.Done():
				return
			}
		}
		// (Re-)register on every log partition and share-partition, then
		// try again before waiting so a wake-up in between is not lost.
		for _, undo := range parked {
			undo()
		}
		parked = parked[:0]
		img := r.s.meta.Image()
		for _, k := range keys {
			if t := resolveTopic(img, k.topicID); t != nil {
				if pt := r.s.partitionFor(t.Name, k.partition); pt != nil {
					pt.addWaiter(w)
					parked = append(parked, func() { pt.removeWaiter(w) })
				}
			}
			if sp, err := r.s.share.part(k); err == nil {
				sp.addWaiter(w)
				parked = append(parked, func() { sp.removeWaiter(w) })
			}
		}
	}
}

// shareAcquireAll acquires from each partition until MaxRecords are taken;
// it reports whether anything was acquired or failed (both answer at once).
func (r *request) shareAcquireAll(req *kmsg.ShareFetchRequest, member string, keys []sharePartKey, settings shareSettings, result func(sharePartKey) *shareResult) bool {
	img := r.s.meta.Image()
	remaining := int(req.MaxRecords)
	if remaining <= 0 {
		remaining = 500
	}
	maxBytes := int(req.MaxBytes)
	if maxBytes <= 0 || maxBytes > int(r.s.effectiveConfig().FetchMaxBytes) {
		maxBytes = int(r.s.effectiveConfig().FetchMaxBytes)
	}
	perPartition := maxBytes
	if len(keys) > 0 {
		perPartition = max(maxBytes/len(keys), 1)
	}
	got := false
	for _, k := range keys {
		res := result(k)
		if len(res.acquired) > 0 || remaining <= 0 {
			continue
		}
		t := resolveTopic(img, k.topicID)
		if t == nil {
			res.code = errUnknownTopicID
			got = true
			continue
		}
		pt := r.s.partitionFor(t.Name, k.partition)
		if pt == nil {
			res.code = errUnknownTopicOrPartition
			if int(k.partition) < len(t.Partitions) {
				res.code = errNotLeaderOrFollower
			}
			got = true
			continue
		}
		if _, err := pt.acquire(); err != nil {
			res.code = log.ErrorCode(err)
			got = true
			continue
		}
		n, code := r.s.share.acquire(member, k, pt, settings, share.AcquireRequest{
			MaxRecords: remaining, BatchSize: int(req.BatchSize), Mode: share.AcquireMode(req.ShareAcquireMode),
		}, perPartition, res, &r.c.fetchBuf)
		pt.release()
		res.code = code
		if code != 0 || n > 0 {
			got = true
		}
		remaining -= int(n)
	}
	return got
}

// acquire takes records for member from one share-partition into res and
// returns how many offsets it acquired.
// settings are the group's, read once per request by the caller.
// Log bytes are read into *buf (appended): the connection's fetch buffer,
// which outlives the response it backs because a connection writes each
// response before it handles the next request.
func (st *shareState) acquire(member string, k sharePartKey, pt *partition, settings shareSettings, areq share.AcquireRequest, maxBytes int, res *shareResult, buf *[]byte) (int64, int16) {
	p, err := st.part(k)
	if err != nil {
		st.s.logger.Error("share-partition", "err", err)
		return 0, errKafkaStorage
	}
	p.mu.Lock()
	p.sp.SetConfig(settings.partitionConfig())
	w := st.initLocked(p, pt, settings)
	n, code, aw := st.acquireLocked(p, member, pt, areq, maxBytes, res, buf)
	w = w.or(aw)
	p.mu.Unlock()
	if err := st.commit(p, w); err != nil {
		st.s.logger.Error("persist share-partition", "err", err)
		res.acquired, res.records = res.acquired[:0], nil
		return 0, errKafkaStorage
	}
	return n, code
}

// acquireLocked is acquire's work under the share-partition's lock; the
// caller commits the write it staged.
func (st *shareState) acquireLocked(p *sharePart, member string, pt *partition, areq share.AcquireRequest, maxBytes int, res *shareResult, buf *[]byte) (int64, int16, pendingWrite) {
	if p.sp.Full() && pt.log().LogStartOffset() <= p.sp.StartOffset() {
		// Nothing to take and no log-start move to apply: skip the read.
		return 0, 0, pendingWrite{}
	}
	hw := pt.log().HighWatermark()
	from := max(p.sp.NextFetchOffset(), pt.log().LogStartOffset())
	bounds := share.Bounds{LogStart: pt.log().LogStartOffset(), HighWatermark: hw, LastStable: hw}
	var data []byte
	if from < hw {
		before := len(*buf)
		out, err := pt.log().Read(from, int32(p.readSize(areq.MaxRecords, maxBytes)), *buf)
		if err != nil && !errors.Is(err, log.ErrOffsetOutOfRange) {
			return 0, log.ErrorCode(err), pendingWrite{}
		}
		// Full slice expression: nothing appended to the buffer later may
		// write into this partition's bytes.
		data = out[before:len(out):len(out)]
		*buf = out
		p.noteRead(data)
	}
	var src share.RawBatches
	src.Reset(from, data, bounds, nil)
	var ar share.AcquireResult
	eff, err := p.sp.Acquire(member, time.Now(), areq, &src, &ar)
	if err != nil {
		return 0, share.ErrorCode(err), pendingWrite{}
	}
	w := p.stageLocked(eff)
	st.afterLocked(p, eff)
	if len(ar.Acquired) == 0 {
		// Nothing refers to what was read: give the space back, or a
		// long-poll that re-polls a full window would grow the buffer
		// by a read per try.
		*buf = (*buf)[:len(*buf)-len(data)]
		return 0, 0, w
	}
	res.acquired = append(res.acquired[:0], ar.Acquired...)
	res.records = share.SliceBatches(data, ar.RecordsFirst, ar.RecordsLast)
	return ar.Count, 0, w
}

// shareAcknowledge applies one partition's acknowledgements and returns the
// partition's error code. Acks that must survive a crash are persisted
// (synced) before this returns.
func (s *Server) shareAcknowledge(member string, k sharePartKey, batches []share.AckBatch, renew bool) int16 {
	if code := validateAckBatches(batches, renew); code != 0 {
		return code
	}
	img := s.meta.Image()
	t := resolveTopic(img, k.topicID)
	if t == nil {
		return errUnknownTopicID
	}
	if s.partitionFor(t.Name, k.partition) == nil {
		return errUnknownTopicOrPartition
	}
	st := s.share
	st.mu.Lock()
	p := st.parts[k]
	st.mu.Unlock()
	if p == nil {
		return errUnknownTopicOrPartition
	}
	p.mu.Lock()
	eff, err := p.sp.Acknowledge(member, time.Now(), batches)
	if err != nil {
		p.mu.Unlock()
		return share.ErrorCode(err)
	}
	w := p.stageLocked(eff)
	st.afterLocked(p, eff)
	p.mu.Unlock()
	if err := st.commit(p, w); err != nil {
		s.logger.Error("persist acknowledgement", "err", err)
		return errKafkaStorage
	}
	return 0
}

// validateAckBatches applies the request-level checks Kafka's handler makes
// before touching record state (INVALID_REQUEST for the partition).
func validateAckBatches(batches []share.AckBatch, renew bool) int16 {
	prevLast := int64(-1)
	for i, b := range batches {
		switch {
		case b.FirstOffset > b.LastOffset, len(b.Types) == 0,
			i > 0 && b.FirstOffset <= prevLast,
			len(b.Types) > 1 && int64(len(b.Types)) != b.LastOffset-b.FirstOffset+1:
			return errInvalidRequest
		}
		for _, t := range b.Types {
			if t < share.AckGap || t > share.AckRenew || (t == share.AckRenew && !renew) {
				return errInvalidRequest
			}
		}
		prevLast = b.LastOffset
	}
	return 0
}
