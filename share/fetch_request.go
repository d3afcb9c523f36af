package share

import "time"

// FetchPartition is one partition of a ShareFetch or ShareAcknowledge
// request with its acknowledgements.
type FetchPartition struct {
	TopicPartition
	Acks []AckBatch
}

// FetchRequest is a decoded ShareFetch. ShareAcknowledge uses the session,
// group and partition fields only.
type FetchRequest struct {
	Group, Member string
	// Conn identifies the connection (comparable, e.g. a pointer): the
	// session is bound to it (ReleaseConn).
	Conn       any
	Epoch      int32
	RenewOnly  bool // IsRenewAck: acks only, RENEW allowed
	MaxWait    time.Duration
	MaxRecords int
	BatchSize  int
	MaxBytes   int
	Mode       AcquireMode
	Partitions []FetchPartition
	Forgotten  []TopicPartition
	// Readable, when set, says whether the principal may READ a topic:
	// partitions of others answer TOPIC_AUTHORIZATION_FAILED, their acks
	// are not applied and nothing is acquired from them.
	Readable func(topicID [16]byte) bool
	// NotLeader, when set, says whether the node the request came to does
	// not lead a partition (virtual brokers): such a partition is answered
	// NOT_LEADER_OR_FOLLOWER, its acks are not applied and nothing is
	// acquired from it, as a Kafka broker answers for a partition it does
	// not lead.
	NotLeader func(topicID [16]byte, partition int32) bool
}

func (req *FetchRequest) denied(tp TopicPartition) bool {
	return req.Readable != nil && !req.Readable(tp.TopicID)
}

// PartitionResult is one partition's answer.
type PartitionResult struct {
	TopicPartition
	Code     int16 // ErrorCode (ShareFetch) or the partition's ErrorCode (ShareAcknowledge)
	AckCode  int16 // AcknowledgeErrorCode (ShareFetch)
	Acked    bool  // the request carried acks for it
	Added    bool  // new to the session
	Records  []byte
	Acquired []AcquiredRecords

	// Resolved once per request: the log and the share-partition.
	resolved bool
	log      PartitionLog
	logCode  int16
	p        *part
}

// Answer reports whether a ShareFetch response lists the partition:
// records, an error, acks or new to the session.
func (r *PartitionResult) Answer() bool {
	return len(r.Acquired) > 0 || r.Code != 0 || r.Acked || r.Added
}

// Result is a ShareFetch or ShareAcknowledge answer. It lives in the
// Scratch it was computed in and is valid until the Scratch's next use.
type Result struct {
	ErrorCode    int16
	ErrorMessage string
	LockDuration time.Duration // AcquisitionLockTimeoutMs
	Partitions   []PartitionResult
}

// Scratch is per-connection memory reused by every ShareFetch and
// ShareAcknowledge of that connection (one request in flight at a time).
// The Records of a Result point into it, so the broker must write the
// response before the connection's next request, which it does.
type Scratch struct {
	Req FetchRequest

	res     Result
	types   []AckType
	batches []AckBatch
	keys    []TopicPartition
	added   []TopicPartition
	sess    *session // the request's share session (sessionStep)
	fetch   []int    // indexes into res.Partitions of the session's partitions
	buf     []byte
	ar      AcquireResult
	src     RawBatches
	aborted []AbortedTxn
	wake    chan struct{}
}

// Reset starts a new request in the scratch and returns it.
func (sc *Scratch) Reset() *FetchRequest {
	parts, forgotten := sc.Req.Partitions[:0], sc.Req.Forgotten[:0]
	sc.Req = FetchRequest{Partitions: parts, Forgotten: forgotten}
	sc.types, sc.batches = sc.types[:0], sc.batches[:0]
	return &sc.Req
}

// Poison overwrites the request and answer memory the scratch reuses (the
// partitions, acknowledgements and their types, the record bytes read for
// the answer) with garbage, as the next request would overwrite it. The
// broker's sharqpoison test build calls it once each request is answered,
// so that anything the share manager kept of a request shows at once.
func (sc *Scratch) Poison() {
	const garbage = "\xde\xad\xbe\xef-poisoned"
	req := &sc.Req
	req.Group, req.Member, req.Epoch = garbage, garbage, -1
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		fp.TopicID, fp.Partition = [16]byte{0xde, 0xad, 0xbe, 0xef}, -1
	}
	for i := range req.Forgotten {
		req.Forgotten[i] = TopicPartition{[16]byte{0xde, 0xad, 0xbe, 0xef}, -1}
	}
	for i := range sc.batches {
		sc.batches[i].FirstOffset, sc.batches[i].LastOffset = -1, -2
	}
	for i := range sc.types {
		sc.types[i] = -1
	}
	for i := range sc.buf {
		sc.buf[i] = 0xde
	}
	for i := range sc.res.Partitions {
		r := &sc.res.Partitions[i]
		r.TopicID, r.Partition, r.Code, r.AckCode = [16]byte{0xde, 0xad, 0xbe, 0xef}, -1, -1, -1
		for j := range r.Acquired {
			r.Acquired[j] = AcquiredRecords{FirstOffset: -1, LastOffset: -2, DeliveryCount: -1}
		}
	}
}

// AddPartition appends a partition to the request.
func (sc *Scratch) AddPartition(topicID [16]byte, partition int32) {
	sc.Req.Partitions = append(sc.Req.Partitions, FetchPartition{TopicPartition: TopicPartition{topicID, partition}})
}

// AddAck appends an acknowledgement batch to the last partition added; the
// wire types are copied.
func (sc *Scratch) AddAck(first, last int64, types []int8) {
	start := len(sc.types)
	for _, t := range types {
		sc.types = append(sc.types, AckType(t))
	}
	sc.batches = append(sc.batches, AckBatch{FirstOffset: first, LastOffset: last, Types: sc.types[start:len(sc.types):len(sc.types)]})
	fp := &sc.Req.Partitions[len(sc.Req.Partitions)-1]
	// Batches of one partition are added together, so they are adjacent.
	n := len(fp.Acks) + 1
	fp.Acks = sc.batches[len(sc.batches)-n : len(sc.batches) : len(sc.batches)]
}

// AddForgotten appends a ForgottenTopicsData partition.
func (sc *Scratch) AddForgotten(topicID [16]byte, partition int32) {
	sc.Req.Forgotten = append(sc.Req.Forgotten, TopicPartition{topicID, partition})
}

func (sc *Scratch) resetResult() *Result {
	sc.res = Result{Partitions: sc.res.Partitions[:0]}
	return &sc.res
}

// result returns the row of tp, adding it (reusing its old memory) when
// the request has none yet.
func (sc *Scratch) result(tp TopicPartition) *PartitionResult {
	rows := sc.res.Partitions
	for i := range rows {
		if rows[i].TopicPartition == tp {
			return &rows[i]
		}
	}
	return sc.row(tp)
}

// row adds a row for tp (ShareAcknowledge answers every listed partition,
// even one listed twice).
func (sc *Scratch) row(tp TopicPartition) *PartitionResult {
	rows := sc.res.Partitions
	if len(rows) < cap(rows) {
		rows = rows[:len(rows)+1]
		r := &rows[len(rows)-1]
		*r = PartitionResult{TopicPartition: tp, Acquired: r.Acquired[:0]}
	} else {
		rows = append(rows, PartitionResult{TopicPartition: tp})
	}
	sc.res.Partitions = rows
	return &rows[len(rows)-1]
}
