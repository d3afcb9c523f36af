package broker

// Request memory poisoning (go test -tags sharqpoison). A request's bytes
// live in one of the connection's two frame buffers, which the next frame
// but one overwrites; kmsg copies strings out of the frame but every []byte
// field (and kmsg.Tags) aliases it, and the ShareFetch and ShareAcknowledge
// decoders reuse their memory from one request to the next. Anything kept
// beyond the request must therefore be copied (the rule is in conn.go). A
// retained alias shows up only when a later frame happens to overwrite it,
// so under the sharqpoison tag the connection overwrites all of it with
// poisonPattern as soon as the request is answered: a kept slice is then
// garbage at once and deterministically, and the suite's client tests see
// it. Without the tag poisonFrames is false and the calls compile away.

// poisonPattern: as lengths and counts (int16 0xdead, int32 0xdeadbeef)
// it is negative, as acknowledge types invalid, and it is easy to spot in a
// hex dump.
var poisonPattern = [...]byte{0xde, 0xad, 0xbe, 0xef}

// poisonString replaces the reused decoders' cached strings, so that a kept
// pointer to one (req.GroupID is &decoder.group) reads as garbage too.
const poisonString = "\xde\xad\xbe\xef-poisoned"

// poisonBytes overwrites b with poisonPattern.
func poisonBytes(b []byte) {
	if len(b) == 0 {
		return
	}
	n := copy(b, poisonPattern[:])
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}

const (
	poisonInt8  = -0x22 // 0xde
	poisonInt32 = -0x21524111
	poisonInt64 = -0x2152411021524111
)

// poisonRequest overwrites what the request just answered may not leave
// behind: its frame, the reused share decoders, the share scratch's request
// half and the connection's request struct. It runs after the response is
// written (handleFrame returned), where the frame would be recycled.
func (c *conn) poisonRequest(frame []byte) {
	poisonBytes(frame)
	if d := c.sfDecoder; d != nil {
		d.poison()
	}
	if d := c.saDecoder; d != nil {
		d.poison()
	}
	if c.share != nil {
		c.share.Scratch.Poison()
	}
	// Kept only while the next request is the same client's.
	c.cur = request{s: c.s, c: c, ctx: c.ctx, key: -1, version: -1, correlationID: poisonInt32, clientID: poisonString}
}

func (d *shareFetchDecoder) poison() {
	d.group, d.member = poisonString, poisonString
	req := &d.req
	req.ShareSessionEpoch, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = poisonInt32, poisonInt32, poisonInt32, poisonInt32
	req.MaxRecords, req.BatchSize = poisonInt32, poisonInt32
	for i := range req.Topics {
		t := &req.Topics[i]
		poisonBytes(t.TopicID[:])
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.Partition, p.PartitionMaxBytes = poisonInt32, poisonInt32
			poisonAckBatches(p.AcknowledgementBatches)
		}
	}
	for i := range req.ForgottenTopicsData {
		f := &req.ForgottenTopicsData[i]
		poisonBytes(f.TopicID[:])
		for j := range f.Partitions {
			f.Partitions[j] = poisonInt32
		}
	}
}

func (d *shareAckDecoder) poison() {
	d.group, d.member = poisonString, poisonString
	req := &d.req
	req.ShareSessionEpoch = poisonInt32
	for i := range req.Topics {
		t := &req.Topics[i]
		poisonBytes(t.TopicID[:])
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.Partition = poisonInt32
			poisonAckBatches(p.AcknowledgementBatches)
		}
	}
}

func poisonAckBatches[B ~ackBatch](batches []B) {
	for k := range batches {
		b := ackBatch(batches[k])
		b.FirstOffset, b.LastOffset = poisonInt64, poisonInt64
		for x := range b.AcknowledgeTypes {
			b.AcknowledgeTypes[x] = poisonInt8
		}
		batches[k] = B(b)
	}
}
