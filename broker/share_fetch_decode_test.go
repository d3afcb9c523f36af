package broker

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func shareFetchBody(req *kmsg.ShareFetchRequest) []byte { return req.AppendTo(nil) }

func sampleShareFetch(version int16) *kmsg.ShareFetchRequest {
	g, m := "group", "member-1"
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = version
	req.GroupID, req.MemberID = &g, &m
	req.ShareSessionEpoch, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = 3, 500, 1, 1<<20, 500, 500
	req.ShareAcquireMode, req.IsRenewAck = 1, version >= 2
	for ti := 0; ti < 2; ti++ {
		t := kmsg.NewShareFetchRequestTopic()
		t.TopicID[0] = byte(ti + 1)
		for pi := 0; pi < 2; pi++ {
			p := kmsg.NewShareFetchRequestTopicPartition()
			p.Partition = int32(pi)
			ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
			ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = 10, 12, []int8{1, 2, 3}
			p.AcknowledgementBatches = append(p.AcknowledgementBatches, ab)
			t.Partitions = append(t.Partitions, p)
		}
		req.Topics = append(req.Topics, t)
	}
	f := kmsg.NewShareFetchRequestForgottenTopicsData()
	f.TopicID[0], f.Partitions = 9, []int32{4, 5}
	req.ForgottenTopicsData = append(req.ForgottenTopicsData, f)
	return req
}

// checkSameAsKmsg decodes body with the reused decoder and with kmsg: both
// fail, or both give a request that encodes to the same bytes.
func checkSameAsKmsg(t *testing.T, d *shareFetchDecoder, version int16, body []byte) {
	t.Helper()
	want := kmsg.NewPtrShareFetchRequest()
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
// requests shrink and grow (reused slices must not leak old entries).
func TestShareFetchDecodeMatchesKmsg(t *testing.T) {
	var d shareFetchDecoder
	for _, v := range []int16{1, 2} {
		big := sampleShareFetch(v)
		small := sampleShareFetch(v)
		small.Topics = small.Topics[:1]
		small.Topics[0].Partitions = small.Topics[0].Partitions[:1]
		small.Topics[0].Partitions[0].AcknowledgementBatches = nil
		small.ForgottenTopicsData = nil
		small.GroupID = nil
		for _, req := range []*kmsg.ShareFetchRequest{big, small, big} {
			checkSameAsKmsg(t, &d, v, shareFetchBody(req))
		}
		body := shareFetchBody(big)
		for cut := 0; cut < len(body); cut += 7 {
			checkSameAsKmsg(t, &d, v, body[:cut])
		}
	}
}

func FuzzShareFetchDecode(f *testing.F) {
	for _, v := range []int16{1, 2} {
		f.Add(int16(v), shareFetchBody(sampleShareFetch(v)))
	}
	f.Add(int16(2), []byte{0, 0})
	var d shareFetchDecoder
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		if version < 1 || version > 2 {
			version = 1 + version&1
		}
		checkSameAsKmsg(t, &d, version, body)
	})
}
