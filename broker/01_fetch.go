package broker

// Fetch: v4-18
//
// Behavior:
// * Returns stored record batches unchanged, whole batches only: at most
//   PartitionMaxBytes per partition and MaxBytes in all, except that the
//   first partition with data returns at least one batch even if it is
//   larger (so a consumer can always make progress).
// * Long-poll: when fewer than MinBytes are available the request parks on
//   every partition it reads until an append wakes it, MaxWaitMs passes or
//   the connection closes; then it reads again and answers.
// * Incremental fetch sessions (KIP-227): epoch 0 opens a full session
//   (closing the one named by SessionId, if any),
//   later epochs list only changed partitions (and forgotten ones) and the
//   response lists only partitions with data or changed offsets; epoch -1
//   closes. Session errors are top-level FETCH_SESSION_ID_NOT_FOUND /
//   INVALID_FETCH_SESSION_EPOCH.
// * CurrentLeaderEpoch newer than ours: UNKNOWN_LEADER_EPOCH; older:
//   FENCED_LEADER_EPOCH. LastFetchedEpoch (v12+) that diverged from the log
//   answers DivergingEpoch.
// * LastStableOffset is the partition's last stable offset (the first
//   offset of its oldest open transaction, else the high watermark).
//   read_committed (IsolationLevel 1) reads only below it and gets the
//   aborted transactions of the data returned (from the .txnindex), so the
//   client drops their records; read_uncommitted gets none (null).
//
// Version notes:
// * v7: sessions; v11: rack / preferred read replica (always -1 here);
//   v12: flexible, diverging epoch; v13: topic ids; v15: ReplicaState.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/raftmeta"
)

func init() { regKey(1, 4, 18, handleFetch, coordinatorFree, waitsInHandler) }

// Session id/epoch values with special meaning.
const (
	fetchSessionNone  = 0
	fetchEpochInitial = 0
	fetchEpochFinal   = -1
)

// fetchItem is one partition of a fetch, in response order.
type fetchItem struct {
	key fetchKey
	cp  *cachedPartition // the session's entry, or a request-local one

	// Filled by a read.
	p          *partition
	errorCode  int16
	hw, lso    int64
	logStart   int64
	start, end int // slice of the read buffer
	diverging  *kmsg.FetchResponseTopicPartitionDivergingEpoch
	leaderHint kmsg.FetchResponseTopicPartitionCurrentLeader
	// read_committed: the aborted transactions of the data read, as
	// [abStart, abEnd) of the connection's fetchAborted.
	abStart, abEnd int
}

func handleFetch(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FetchRequest)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	s := r.s
	img := s.meta.Image()

	// 1. Resolve the session into the list of partitions to read.
	var sess *fetchSession
	var items []fetchItem
	full := true
	switch {
	case req.SessionID == fetchSessionNone && req.SessionEpoch == fetchEpochInitial:
		sess = s.fetchSessions.create()
	case req.SessionID == fetchSessionNone && req.SessionEpoch == fetchEpochFinal:
		// Sessionless full fetch.
	case req.SessionEpoch == fetchEpochFinal:
		s.fetchSessions.remove(req.SessionID)
	case req.SessionEpoch == fetchEpochInitial:
		// KIP-227: epoch 0 with a session id closes that session and opens
		// a new full one (clients reset sessions this way).
		s.fetchSessions.remove(req.SessionID)
		sess = s.fetchSessions.create()
	case req.SessionID == fetchSessionNone:
		resp.ErrorCode = errInvalidFetchSessionEpoch
		return resp, nil
	default:
		sess = s.fetchSessions.get(req.SessionID)
		if sess == nil {
			resp.ErrorCode = errFetchSessionIDNotFound
			return resp, nil
		}
		full = false
	}
	if sess != nil {
		sess.mu.Lock()
		if !full && req.SessionEpoch != sess.epoch {
			sess.mu.Unlock()
			resp.ErrorCode = errInvalidFetchSessionEpoch
			return resp, nil
		}
	}
	keyOf := func(name string, id [16]byte, part int32) fetchKey {
		if r.version >= 13 {
			return fetchKey{topicID: id, part: part}
		}
		return fetchKey{topic: name, part: part}
	}
	if sess != nil {
		for _, ft := range req.ForgottenTopics {
			for _, part := range ft.Partitions {
				sess.forget(keyOf(ft.Topic, ft.TopicID, part))
			}
		}
	}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			k := keyOf(rt.Topic, rt.TopicID, rp.Partition)
			cp := cachedPartition{
				fetchOffset: rp.FetchOffset, maxBytes: rp.PartitionMaxBytes,
				currentLeaderEpoch: rp.CurrentLeaderEpoch, lastFetchedEpoch: rp.LastFetchedEpoch,
				sentHW: -1, sentLSO: -1, sentLogStart: -1,
			}
			if sess != nil {
				sess.upsert(k, cp)
			} else {
				items = append(items, fetchItem{key: k, cp: &cp})
			}
		}
	}
	if sess != nil {
		for _, k := range sess.order {
			items = append(items, fetchItem{key: k, cp: sess.parts[k]})
		}
		if !full {
			// A new session already expects epoch 1.
			sess.epoch = nextFetchEpoch(sess.epoch)
		}
		resp.SessionID = sess.id
		sess.mu.Unlock()
	}

	// 2. Read, parking until MinBytes are there or MaxWaitMs passes.
	buf := r.c.fetchBuf[:0]
	if r.c.fetchAborted == nil {
		r.c.fetchAborted = make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, 0, 4)
	}
	deadline := time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	var w *waiter
	var timer *time.Timer
	for {
		var total int
		var anyError bool
		buf, total, anyError = r.readItems(img, items, req, buf[:0])
		if total >= int(req.MinBytes) || anyError || req.MaxWaitMillis <= 0 || !time.Now().Before(deadline) || r.ctx.Err() != nil {
			break
		}
		if w == nil {
			// Register before reading again so an append between the read
			// above and the wait below is not missed.
			w = newWaiter()
			for i := range items {
				if p := items[i].p; p != nil {
					p.addWaiter(w)
				}
			}
			timer = time.NewTimer(time.Until(deadline))
			continue
		}
		select {
		case <-w.ch:
			for i := range items {
				if p := items[i].p; p != nil {
					p.addWaiter(w)
				}
			}
			continue
		case <-timer.C:
		case <-r.ctx.Done():
		}
		buf, _, _ = r.readItems(img, items, req, buf[:0])
		break
	}
	if w != nil {
		timer.Stop()
		for i := range items {
			if p := items[i].p; p != nil {
				p.removeWaiter(w)
			}
		}
	}
	r.c.fetchBuf = buf

	// 3. Build the response; an incremental one skips unchanged partitions.
	if sess != nil {
		sess.mu.Lock()
		defer sess.mu.Unlock()
	}
	var cur *kmsg.FetchResponseTopic
	for i := range items {
		it := &items[i]
		changed := it.errorCode != 0 || it.end > it.start || it.diverging != nil ||
			!it.cp.sent || it.cp.sentHW != it.hw || it.cp.sentLSO != it.lso || it.cp.sentLogStart != it.logStart
		if !full && !changed {
			continue
		}
		it.cp.sent, it.cp.sentHW, it.cp.sentLSO, it.cp.sentLogStart = true, it.hw, it.lso, it.logStart
		if cur == nil || cur.Topic != it.key.topic || cur.TopicID != it.key.topicID {
			resp.Topics = append(resp.Topics, kmsg.NewFetchResponseTopic())
			cur = &resp.Topics[len(resp.Topics)-1]
			cur.Topic, cur.TopicID = it.key.topic, it.key.topicID
		}
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition = it.key.part
		rp.ErrorCode = it.errorCode
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = it.hw, it.lso, it.logStart
		rp.PreferredReadReplica = -1
		rp.CurrentLeader = it.leaderHint
		if it.diverging != nil {
			rp.DivergingEpoch = *it.diverging
		}
		// Kafka never writes a null records field (librdkafka refuses one:
		// "invalid MessageSetSize -1"); read_committed gets an
		// aborted-transactions list (empty when none), read_uncommitted null.
		rp.RecordBatches = emptyRecords
		if it.end > it.start {
			rp.RecordBatches = buf[it.start:it.end]
		}
		if req.IsolationLevel == 1 {
			// Non-nil even when empty: kmsg encodes nil as a null array.
			rp.AbortedTransactions = r.c.fetchAborted[it.abStart:it.abEnd:it.abEnd]
		}
		cur.Partitions = append(cur.Partitions, rp)
	}
	return resp, nil
}

// emptyRecords is zero-length and not nil, which kmsg encodes as empty
// rather than null; shared and never appended to.
var emptyRecords = []byte{}

func nextFetchEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// readItems reads every item into buf and reports the bytes read and
// whether any partition has an error (which answers at once).
func (r *request) readItems(img *raftmeta.Image, items []fetchItem, req *kmsg.FetchRequest, buf []byte) ([]byte, int, bool) {
	total := 0
	anyError := false
	committed := req.IsolationLevel == 1
	r.c.fetchAborted = r.c.fetchAborted[:0]
	// fetch.max.bytes caps what the client asks for, as in Kafka.
	maxBytes := int(req.MaxBytes)
	if limit := int(r.s.effectiveConfig().FetchMaxBytes); maxBytes <= 0 || maxBytes > limit {
		maxBytes = limit
	}
	for i := range items {
		it := &items[i]
		it.errorCode, it.start, it.end, it.diverging = 0, len(buf), len(buf), nil
		it.abStart, it.abEnd = len(r.c.fetchAborted), len(r.c.fetchAborted)
		it.hw, it.lso, it.logStart = -1, -1, -1
		it.leaderHint = kmsg.FetchResponseTopicPartitionCurrentLeader{LeaderID: -1, LeaderEpoch: -1}
		var topic *raftmeta.Topic
		if r.version >= 13 {
			topic = img.TopicsByID[raftmeta.UUID(it.key.topicID)]
		} else {
			topic = img.Topics[it.key.topic]
		}
		if topic == nil && r.version < 13 && !r.fetchAllowed(req, it.key.topic) {
			it.errorCode = kerr.TopicAuthorizationFailed.Code
			anyError = true
			continue
		}
		if topic == nil {
			it.errorCode = errUnknownTopicOrPartition
			if r.version >= 13 {
				it.errorCode = errUnknownTopicID
			}
			anyError = true
			continue
		}
		if !r.fetchAllowed(req, topic.Name) {
			it.errorCode = kerr.TopicAuthorizationFailed.Code
			anyError = true
			continue
		}
		if isInternalTopic(topic.Name) {
			it.errorCode = r.s.internalTopicRead("Fetch", topic.Name)
			anyError = true
			continue
		}
		it.p = r.s.partitionFor(topic.Name, it.key.part)
		if it.p == nil {
			it.errorCode = errUnknownTopicOrPartition
			if it.key.part >= 0 && int(it.key.part) < len(topic.Partitions) {
				it.errorCode = errNotLeaderOrFollower
			}
			anyError = true
			continue
		}
		meta := topic.Partitions[it.key.part]
		l, err := it.p.acquire()
		if err != nil {
			it.errorCode = log.ErrorCode(err)
			anyError = true
			continue
		}
		it.hw = l.HighWatermark()
		it.lso = l.LastStableOffset()
		it.logStart = l.LogStartOffset()
		if e := it.cp.currentLeaderEpoch; e >= 0 && e != meta.LeaderEpoch {
			it.errorCode = kerr.FencedLeaderEpoch.Code
			if e > meta.LeaderEpoch {
				it.errorCode = kerr.UnknownLeaderEpoch.Code
			}
			it.leaderHint = kmsg.FetchResponseTopicPartitionCurrentLeader{LeaderID: meta.Leader, LeaderEpoch: meta.LeaderEpoch}
			anyError = true
			it.p.release()
			continue
		}
		if r.s.virtual && r.version < 11 && r.notLeader(meta) {
			// Kafka serves a consumer's Fetch v11+ from any in-sync
			// replica (KIP-392: FetchParams.fetchOnlyLeader is false once
			// the request carries client metadata), and every virtual
			// node that is up is one; before v11 only the leader reads.
			it.errorCode = errNotLeaderOrFollower
			anyError = true
			it.p.release()
			continue
		}
		if e := it.cp.lastFetchedEpoch; e >= 0 && r.version >= 12 {
			epoch, end := l.EndOffsetForEpoch(e)
			if epoch != e || end < it.cp.fetchOffset {
				it.diverging = &kmsg.FetchResponseTopicPartitionDivergingEpoch{Epoch: epoch, EndOffset: end}
				it.p.release()
				continue
			}
		}
		limit := int(it.cp.maxBytes)
		if rem := maxBytes - total; rem < limit {
			limit = rem
		}
		if limit <= 0 && total > 0 {
			it.p.release()
			continue
		}
		before := len(buf)
		var out []byte
		if committed {
			out, err = l.ReadCommitted(it.cp.fetchOffset, int32(max(limit, 1)), buf)
		} else {
			out, err = l.Read(it.cp.fetchOffset, int32(max(limit, 1)), buf)
		}
		if committed && err == nil && len(out) > before && (total == 0 || len(out)-before <= limit) {
			r.c.abortedScratch = l.AbortedTransactions(it.cp.fetchOffset, log.NextOffsetAfter(out[before:]), r.c.abortedScratch[:0])
			for _, a := range r.c.abortedScratch {
				r.c.fetchAborted = append(r.c.fetchAborted, kmsg.FetchResponseTopicPartitionAbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
			}
			it.abEnd = len(r.c.fetchAborted)
		}
		it.p.release()
		if err != nil {
			if errors.Is(err, log.ErrOffsetOutOfRange) {
				it.errorCode = errOffsetOutOfRange
			} else {
				it.errorCode = log.ErrorCode(err)
			}
			anyError = true
			continue
		}
		n := len(out) - before
		if total > 0 && n > limit {
			// Only the first partition with data may exceed the limits.
			out = out[:before]
			n = 0
		}
		buf = out
		it.start, it.end = before, len(buf)
		total += n
	}
	return buf, total, anyError
}

// fetchAllowed is Kafka's Fetch authorization: a follower (replica id set)
// needs CLUSTER_ACTION on the cluster, a consumer READ on the topic.
func (r *request) fetchAllowed(req *kmsg.FetchRequest, topic string) bool {
	if r.s.authz == nil {
		return true
	}
	if req.ReplicaID >= 0 || req.ReplicaState.ID >= 0 {
		return r.authorizeCluster(opClusterAction)
	}
	return r.authorize(resTopic, topic, opRead)
}
