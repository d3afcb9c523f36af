package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
)

// fetchReq builds a Fetch; kgo sends it at the highest common version (18),
// so the topic goes by id.
func fetchReq(sessionID, epoch int32, topic string, id [16]byte, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 0
	req.MaxBytes = 1 << 20
	req.SessionID, req.SessionEpoch = sessionID, epoch
	if topic != "" {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset = offset
		rp.PartitionMaxBytes = 1 << 20
		rp.CurrentLeaderEpoch = -1
		rp.LastFetchedEpoch = -1
		rp.LogStartOffset = -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func TestFetchSessions(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, "sess", 1, nil)
	cl := newClient(t, b, kgo.DefaultProduceTopic("sess"))
	produceSync(t, cl, &kgo.Record{Value: []byte("one")})
	ctx := testCtx(t)
	id := topicIDs(t, adm, "sess")

	// Epoch 0 opens a full session and answers the partition.
	resp, err := fetchReq(0, 0, "sess", id, 0).RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.SessionID == 0 || len(resp.Topics) != 1 {
		t.Fatalf("open: error %d session %d topics %d", resp.ErrorCode, resp.SessionID, len(resp.Topics))
	}
	if p := resp.Topics[0].Partitions[0]; p.HighWatermark != 1 || len(p.RecordBatches) == 0 {
		t.Fatalf("open: error %d hw %d, %d bytes", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}
	sid := resp.SessionID

	// Epoch 1 with the next offset and nothing new: the partition is left out.
	resp, err = fetchReq(sid, 1, "sess", id, 1).RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Fatalf("incremental, unchanged: error %d topics %+v", resp.ErrorCode, resp.Topics)
	}
	// New data: epoch 2 lists nothing, yet the partition comes back.
	produceSync(t, cl, &kgo.Record{Value: []byte("two")})
	resp, err = fetchReq(sid, 2, "", id, 0).RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].HighWatermark != 2 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("incremental with new data: %+v", resp.Topics)
	}
	// A stale epoch and an unknown session are top-level errors.
	resp, _ = fetchReq(sid, 2, "", id, 0).RequestWith(ctx, cl)
	if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Errorf("stale epoch: error %d", resp.ErrorCode)
	}
	resp, _ = fetchReq(sid+1, 1, "", id, 0).RequestWith(ctx, cl)
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Errorf("unknown session: error %d", resp.ErrorCode)
	}
	// Epoch -1 closes it.
	resp, _ = fetchReq(sid, -1, "sess", id, 0).RequestWith(ctx, cl)
	if resp.ErrorCode != 0 || resp.SessionID != 0 {
		t.Errorf("close: error %d session %d", resp.ErrorCode, resp.SessionID)
	}
	resp, _ = fetchReq(sid, 3, "", id, 0).RequestWith(ctx, cl)
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Errorf("closed session still answers: error %d", resp.ErrorCode)
	}
	// Epoch 0 with a session id replaces that session with a new full one.
	resp, _ = fetchReq(0, 0, "sess", id, 0).RequestWith(ctx, cl)
	old := resp.SessionID
	resp, _ = fetchReq(old, 0, "sess", id, 0).RequestWith(ctx, cl)
	if resp.ErrorCode != 0 || resp.SessionID == 0 || resp.SessionID == old || len(resp.Topics) != 1 {
		t.Errorf("reset session: error %d session %d (old %d) topics %d", resp.ErrorCode, resp.SessionID, old, len(resp.Topics))
	}
	resp, _ = fetchReq(old, 1, "", id, 0).RequestWith(ctx, cl)
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Errorf("replaced session still answers: error %d", resp.ErrorCode)
	}
	// Out of range offsets are a partition error.
	resp, _ = fetchReq(0, -1, "sess", id, 99).RequestWith(ctx, cl)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Errorf("offset 99: error %d", p.ErrorCode)
	}
}
