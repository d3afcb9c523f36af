package broker

import (
	"encoding/binary"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareFetch is the hot request of share consumers: its body is decoded
// into a per-connection request whose slices (topics, partitions,
// acknowledgement batches and their types) and strings (group and member
// id, the same on every request of a session) are reused, where kmsg's
// decoder allocates each of them anew. The result is what kmsg decodes:
// FuzzShareFetchDecode holds the two to the same bytes. A body with tagged
// fields (none defined for ShareFetch v1-2), trailing bytes, or anything
// this decoder does not read plainly (a short body, an over-long varint)
// goes to kmsg, which decides as for every other request.

// shareFetchDecoder is one connection's reused ShareFetch request.
type shareFetchDecoder struct {
	req           kmsg.ShareFetchRequest
	group, member string
}

type sfReader struct {
	b    []byte
	bad  bool
	tags bool // a tagged field was present: kmsg must decode this body
}

func (r *sfReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n > 5 || v > math.MaxInt32 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *sfReader) take(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.bad = true
		r.b = nil
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *sfReader) int8() int8 {
	if b := r.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *sfReader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *sfReader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// arrayLen is a compact array length: -1 for null. min is the encoded
// size of one element, to refuse counts the body cannot hold before
// anything is sized for them.
func (r *sfReader) arrayLen(min int) int {
	n := int64(r.uvarint()) - 1
	if r.bad || n > int64(len(r.b)) || (min > 0 && n*int64(min) > int64(len(r.b))) {
		r.bad = true
		return 0
	}
	return int(n)
}

// str reads a compact nullable string, keeping *cached when the bytes are
// the same: ok false for null.
func (r *sfReader) str(cached *string) (ok bool) {
	n := int64(r.uvarint()) - 1
	if r.bad || n < 0 {
		return false
	}
	b := r.take(int(n))
	if r.bad {
		return false
	}
	if string(b) != *cached {
		*cached = string(b)
	}
	return true
}

func (r *sfReader) skipTags() {
	if n := r.uvarint(); n != 0 && !r.bad {
		r.tags = true
	}
}

// ackBatch is the wire shape of an acknowledgement batch, which kmsg
// declares twice (ShareFetch's and ShareAcknowledge's) with the same
// fields.
type ackBatch = struct {
	FirstOffset      int64
	LastOffset       int64
	AcknowledgeTypes []int8
	UnknownTags      kmsg.Tags
}

// readAckBatches decodes a partition's acknowledgement batches into dst's
// memory, for either request.
func readAckBatches[B ~ackBatch](r *sfReader, dst []B) []B {
	batches := grow(dst, r.arrayLen(18))
	for k := range batches {
		ab := ackBatch(batches[k])
		ab.FirstOffset, ab.LastOffset, ab.UnknownTags = r.int64(), r.int64(), kmsg.Tags{}
		types := grow(ab.AcknowledgeTypes, r.arrayLen(1))
		for x := range types {
			types[x] = r.int8()
		}
		ab.AcknowledgeTypes = types
		r.skipTags()
		batches[k] = B(ab)
	}
	return batches
}

// grow returns s with length n, reusing its capacity (and the elements'
// own slices, which the caller resets).
func grow[T any](s []T, n int) []T {
	if n <= 0 {
		return s[:0]
	}
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// decode decodes a ShareFetch v1-2 body (after the request header).
func (d *shareFetchDecoder) decode(version int16, body []byte) (*kmsg.ShareFetchRequest, error) {
	req := &d.req
	topics, forgotten := req.Topics, req.ForgottenTopicsData
	*req = kmsg.ShareFetchRequest{Version: version}
	r := sfReader{b: body}
	if r.str(&d.group) {
		req.GroupID = &d.group
	}
	if r.str(&d.member) {
		req.MemberID = &d.member
	}
	req.ShareSessionEpoch = r.int32()
	req.MaxWaitMillis = r.int32()
	req.MinBytes = r.int32()
	req.MaxBytes = r.int32()
	req.MaxRecords = r.int32()
	req.BatchSize = r.int32()
	if version >= 2 {
		req.ShareAcquireMode = r.int8()
		req.IsRenewAck = r.int8() != 0
	}
	topics = grow(topics, r.arrayLen(18))
	for i := range topics {
		t := &topics[i]
		copy(t.TopicID[:], r.take(16))
		parts := grow(t.Partitions, r.arrayLen(6))
		for j := range parts {
			p := &parts[j]
			p.Partition, p.PartitionMaxBytes, p.UnknownTags = r.int32(), 0, kmsg.Tags{}
			p.AcknowledgementBatches = readAckBatches(&r, p.AcknowledgementBatches)
			r.skipTags()
		}
		t.Partitions, t.UnknownTags = parts, kmsg.Tags{}
		r.skipTags()
	}
	req.Topics = topics
	forgotten = grow(forgotten, r.arrayLen(18))
	for i := range forgotten {
		f := &forgotten[i]
		copy(f.TopicID[:], r.take(16))
		ps := grow(f.Partitions, r.arrayLen(4))
		for j := range ps {
			ps[j] = r.int32()
		}
		f.Partitions, f.UnknownTags = ps, kmsg.Tags{}
		r.skipTags()
	}
	req.ForgottenTopicsData = forgotten
	r.skipTags()
	if r.bad || r.tags || len(r.b) != 0 {
		full := kmsg.NewPtrShareFetchRequest()
		full.SetVersion(version)
		if err := full.ReadFrom(body); err != nil {
			return nil, err
		}
		return full, nil
	}
	return req, nil
}

// decodeShareFetch is ShareFetch's decodeFunc: the connection's reused
// decoder.
func decodeShareFetch(c *conn, version int16, body []byte) (kmsg.Request, error) {
	if c.sfDecoder == nil {
		c.sfDecoder = &shareFetchDecoder{}
	}
	req, err := c.sfDecoder.decode(version, body)
	if err != nil {
		return nil, err
	}
	return req, nil
}
