package broker_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"sharq/broker/brokertest"
)

// TestUpdateFeatures drives UpdateFeatures v0-v2 as kafka-features.sh and
// Kafka's admin client send it: --dry-run validates only, a disable and an
// upgrade show in ApiVersions, refusals carry Kafka's message for every
// feature (v0-1) or at the top (v2), and streams.version is finalized at 1.
func TestUpdateFeatures(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	cl := newClient(t, b)
	finalized := func() map[string]int16 {
		req := kmsg.NewPtrApiVersionsRequest()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int16{}
		for _, f := range resp.FinalizedFeatures {
			out[f.Name] = f.MaxVersionLevel
		}
		return out
	}
	if lvl := finalized()["streams.version"]; lvl != 1 {
		t.Errorf("streams.version finalized at %d, want 1 as Kafka 4.4", lvl)
	}
	// kgo sends the highest version both sides know; pin it per client.
	clients := map[int16]*kgo.Client{}
	for v := int16(0); v <= 2; v++ {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(57, v)
		clients[v] = newClient(t, b, kgo.MaxVersions(vs))
	}
	update := func(v int16, name string, level int16, typ int8, validateOnly bool) *kmsg.UpdateFeaturesResponse {
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.ValidateOnly = validateOnly
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType, u.AllowDowngrade = name, level, typ, typ != 1
		req.FeatureUpdates = append(req.FeatureUpdates, u)
		resp, err := req.RequestWith(ctx, clients[v])
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != v {
			t.Fatalf("sent v%d, want v%d", resp.Version, v)
		}
		return resp
	}
	for v := int16(0); v <= 2; v++ {
		// v0 has no ValidateOnly.
		if r := update(v, "group.version", 0, 2, true); v > 0 && (r.ErrorCode != 0 || finalized()["group.version"] != 1) {
			t.Fatalf("v%d dry-run disable: error %d, group.version %d", v, r.ErrorCode, finalized()["group.version"])
		}
		if r := update(v, "group.version", 0, 2, false); r.ErrorCode != 0 {
			t.Fatalf("v%d disable: %+v", v, r)
		}
		if _, ok := finalized()["group.version"]; ok {
			t.Fatalf("v%d: group.version still finalized", v)
		}
		if r := update(v, "group.version", 1, 1, false); r.ErrorCode != 0 || finalized()["group.version"] != 1 {
			t.Fatalf("v%d upgrade: %+v", v, r)
		}
		r := update(v, "streams.version", 2, 1, false)
		const want = "The update failed for all features since the following feature had an error: Invalid update version 2 for feature streams.version. Local controller 1 only supports versions 0-1"
		if r.ErrorCode != kerr.InvalidUpdateVersion.Code || r.ErrorMessage == nil || *r.ErrorMessage != want {
			t.Errorf("v%d streams.version=2: %d %v", v, r.ErrorCode, r.ErrorMessage)
		}
		if (v < 2) != (len(r.Results) == 1) {
			t.Errorf("v%d: %d results", v, len(r.Results))
		}
		if v < 2 && len(r.Results) == 1 && (r.Results[0].ErrorCode != kerr.InvalidUpdateVersion.Code || !strings.Contains(*r.Results[0].ErrorMessage, "streams.version")) {
			t.Errorf("v%d result %+v", v, r.Results[0])
		}
	}
}

// TestDescribeQuorum: the single node is leader and only voter of
// __cluster_metadata-0, its log end offset at or beyond the high watermark,
// with a directory id that survives a restart; another partition is
// UNKNOWN_TOPIC_OR_PARTITION.
func TestDescribeQuorum(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	describe := func(cl *kgo.Client, topic string, part int32) *kmsg.DescribeQuorumResponse {
		req := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = topic
		rt.Partitions = append(rt.Partitions, kmsg.DescribeQuorumRequestTopicPartition{Partition: part})
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	check := func(cl *kgo.Client) [16]byte {
		resp := describe(cl, "__cluster_metadata", 0)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("%+v", resp)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch < 1 || p.HighWatermark < 1 || len(p.CurrentVoters) != 1 || len(p.Observers) != 0 {
			t.Fatalf("partition %+v", p)
		}
		v := p.CurrentVoters[0]
		if v.ReplicaID != 1 || v.LogEndOffset < p.HighWatermark || v.LastFetchTimestamp <= 0 || v.ReplicaDirectoryID == ([16]byte{}) {
			t.Errorf("voter %+v (high watermark %d)", v, p.HighWatermark)
		}
		if len(resp.Nodes) != 1 || resp.Nodes[0].NodeID != 1 {
			t.Errorf("nodes %+v", resp.Nodes)
		}
		return v.ReplicaDirectoryID
	}
	dir := check(newClient(t, b))
	if r := describe(newClient(t, b), "__cluster_metadata", 1); r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("partition 1: %+v", r.Topics[0].Partitions[0])
	}
	b.Restart()
	if again := check(newClient(t, b)); again != dir {
		t.Errorf("directory id changed over a restart: %x, then %x", dir, again)
	}
}
