package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// ShareAcknowledge is the other hot request of share consumers (a client
// that flushes its acknowledgements after every poll sends one per poll):
// like ShareFetch (share_fetch_decode.go), its body is decoded into a
// per-connection request whose slices and strings are reused, and a body
// this decoder does not read plainly goes to kmsg. FuzzShareAckDecode holds
// the two to the same bytes.

// shareAckDecoder is one connection's reused ShareAcknowledge request.
type shareAckDecoder struct {
	req           kmsg.ShareAcknowledgeRequest
	group, member string
}

// decode decodes a ShareAcknowledge v1-2 body (after the request header).
func (d *shareAckDecoder) decode(version int16, body []byte) (*kmsg.ShareAcknowledgeRequest, error) {
	req := &d.req
	topics := req.Topics
	*req = kmsg.ShareAcknowledgeRequest{Version: version}
	r := sfReader{b: body}
	if r.str(&d.group) {
		req.GroupID = &d.group
	}
	if r.str(&d.member) {
		req.MemberID = &d.member
	}
	req.ShareSessionEpoch = r.int32()
	if version >= 2 {
		req.IsRenewAck = r.int8() != 0
	}
	topics = grow(topics, r.arrayLen(18))
	for i := range topics {
		t := &topics[i]
		copy(t.TopicID[:], r.take(16))
		parts := grow(t.Partitions, r.arrayLen(6))
		for j := range parts {
			p := &parts[j]
			p.Partition, p.UnknownTags = r.int32(), kmsg.Tags{}
			p.AcknowledgementBatches = readAckBatches(&r, p.AcknowledgementBatches)
			r.skipTags()
		}
		t.Partitions, t.UnknownTags = parts, kmsg.Tags{}
		r.skipTags()
	}
	req.Topics = topics
	r.skipTags()
	if r.bad || r.tags || len(r.b) != 0 {
		full := kmsg.NewPtrShareAcknowledgeRequest()
		full.SetVersion(version)
		if err := full.ReadFrom(body); err != nil {
			return nil, err
		}
		return full, nil
	}
	return req, nil
}

// decodeShareAcknowledge is ShareAcknowledge's decodeFunc: the
// connection's reused decoder.
func decodeShareAcknowledge(c *conn, version int16, body []byte) (kmsg.Request, error) {
	if c.saDecoder == nil {
		c.saDecoder = &shareAckDecoder{}
	}
	req, err := c.saDecoder.decode(version, body)
	if err != nil {
		return nil, err
	}
	return req, nil
}
