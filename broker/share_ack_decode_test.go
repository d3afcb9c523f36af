package broker

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func sampleShareAck(version int16) *kmsg.ShareAcknowledgeRequest {
	g, m := "group", "member-1"
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = version
	req.GroupID, req.MemberID = &g, &m
	req.ShareSessionEpoch, req.IsRenewAck = 7, version >= 2
	for ti := 0; ti < 2; ti++ {
		t := kmsg.NewShareAcknowledgeRequestTopic()
		t.TopicID[0] = byte(ti + 1)
		for pi := 0; pi < 2; pi++ {
			p := kmsg.NewShareAcknowledgeRequestTopicPartition()
			p.Partition = int32(pi)
			for bi := 0; bi < 2; bi++ {
				ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
				ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = int64(10*bi), int64(10*bi+2), []int8{1, 2, 3}
				p.AcknowledgementBatches = append(p.AcknowledgementBatches, ab)
			}
			t.Partitions = append(t.Partitions, p)
		}
		req.Topics = append(req.Topics, t)
	}
	return req
}

// checkAckSameAsKmsg decodes body with the reused decoder and with kmsg:
// both fail, or both give a request that encodes to the same bytes.
func checkAckSameAsKmsg(t *testing.T, d *shareAckDecoder, version int16, body []byte) {
	t.Helper()
	want := kmsg.NewPtrShareAcknowledgeRequest()
	want.SetVersion(version)
	werr := want.ReadFrom(body)
	got, gerr := d.decode(version, body)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("v%d: kmsg error %v, decoder error %v", version, werr, gerr)
	}
	if werr == nil && !bytes.Equal(got.AppendTo(nil), want.AppendTo(nil)) {
		t.Fatalf("v%d: decoder gave %+v, kmsg %+v", version, got, want)
	}
}

// The reused decoder agrees with kmsg, also when one connection's
// requests shrink and grow (reused slices must not leak old entries), and
// on every truncation of a body.
func TestShareAckDecodeMatchesKmsg(t *testing.T) {
	var d shareAckDecoder
	for _, v := range []int16{1, 2} {
		big := sampleShareAck(v)
		small := sampleShareAck(v)
		small.Topics = small.Topics[:1]
		small.Topics[0].Partitions = small.Topics[0].Partitions[:1]
		small.Topics[0].Partitions[0].AcknowledgementBatches = small.Topics[0].Partitions[0].AcknowledgementBatches[:1]
		small.Topics[0].Partitions[0].AcknowledgementBatches[0].AcknowledgeTypes = []int8{1}
		small.MemberID = nil
		for _, req := range []*kmsg.ShareAcknowledgeRequest{big, small, big} {
			checkAckSameAsKmsg(t, &d, v, req.AppendTo(nil))
		}
		body := big.AppendTo(nil)
		for cut := 0; cut < len(body); cut += 5 {
			checkAckSameAsKmsg(t, &d, v, body[:cut])
		}
	}
}

func FuzzShareAckDecode(f *testing.F) {
	for _, v := range []int16{1, 2} {
		f.Add(int16(v), sampleShareAck(v).AppendTo(nil))
	}
	f.Add(int16(2), []byte{0, 0})
	var d shareAckDecoder
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		if version < 1 || version > 2 {
			version = 1 + version&1
		}
		checkAckSameAsKmsg(t, &d, version, body)
	})
}

// BenchmarkShareAckDecode: one ShareAcknowledge body (several topics,
// partitions and acknowledgement batches) into the reused request.
func BenchmarkShareAckDecode(b *testing.B) {
	var d shareAckDecoder
	body := sampleShareAck(2).AppendTo(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.decode(2, body); err != nil {
			b.Fatal(err)
		}
	}
}
