package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
	"sharq/config"
	"sharq/share"
)

// TestFaultShareConsumer: franz-go share consumers through a forced lock
// expiry (the record goes to the other member with delivery count 2), an
// evicted share session (the member gets SHARE_SESSION_NOT_FOUND, opens a
// new session and goes on; what it held is delivered again), a failed
// acknowledgement and a forced redelivery (counted one more).
func TestFaultShareConsumer(t *testing.T) {
	t.Parallel()
	// A 5 s lock: the forced expiry is seen to act while the lock still
	// runs (expire-locks answers that it released the record); a record a
	// paused kgo consumer acquires and drops comes back after it.
	b := ruleBroker(t, brokertest.WithConfig(func(c *config.Config) {
		c.MetricsListener = "127.0.0.1:0"
		c.GroupShareMinRecordLockDurationMs, c.GroupShareRecordLockDurationMs = 1000, 5000
	}))
	const topic, group = "sq", "sg"
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, topic, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shareOpts := []kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100 * time.Millisecond)}
	holder := newClient(t, b, append(shareOpts, kgo.ClientID("holder"))...)
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	warmUp(t, ctx, producer, holder)

	// The holder takes "held" and stops fetching without acknowledging it.
	produceSync(t, producer, &kgo.Record{Value: []byte("held")})
	var heldOffset int64
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool {
		if string(r.Value) == "held" {
			heldOffset = r.Offset
			holder.PauseFetchTopics(topic)
			return true
		}
		holder.MarkAcks(kgo.AckAccept, r)
		return false
	})
	if err := holder.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	var res struct{ Records int64 }
	control(t, b, "POST", "share/groups/"+group+"/expire-locks", fmt.Sprintf(`{"topic":%q,"partition":0,"offsets":[%d]}`, topic, heldOffset), 200, &res)
	if res.Records != 1 {
		t.Fatalf("expire-locks released %d records, want 1", res.Records)
	}
	other := newClient(t, b, append(shareOpts, kgo.ClientID("other"))...)
	shareConsume(t, ctx, other, func(r *kgo.Record) bool {
		if string(r.Value) != "held" {
			other.MarkAcks(kgo.AckAccept, r)
			return false
		}
		if r.DeliveryCount() != 2 {
			t.Errorf("redelivered with count %d, want 2", r.DeliveryCount())
		}
		other.MarkAcks(kgo.AckAccept, r)
		return true
	})
	if err := other.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}

	// The holder's session is evicted while it holds "evicted"; it reopens
	// a session, gets "evicted" again and then newer records.
	other.PauseFetchTopics(topic)
	holder.ResumeFetchTopics(topic)
	produceSync(t, producer, &kgo.Record{Value: []byte("evicted")})
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool {
		if string(r.Value) == "evicted" {
			holder.PauseFetchTopics(topic)
			return true
		}
		holder.MarkAcks(kgo.AckAccept, r)
		return false
	})
	if err := holder.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	dg, err := adm.DescribeShareGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var holderID string
	for _, m := range dg[group].Members {
		if m.ClientID == "holder" {
			holderID = m.MemberID
		}
	}
	if holderID == "" {
		t.Fatalf("no member with client id holder in %+v", dg[group].Members)
	}
	control(t, b, "POST", "share/groups/"+group+"/members/"+holderID+"/evict", "", 204, nil)
	control(t, b, "POST", "share/groups/"+group+"/members/"+holderID+"/evict", "", 404, nil)
	holder.ResumeFetchTopics(topic)
	produceSync(t, producer, &kgo.Record{Value: []byte("after")})
	got := map[string]int32{}
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool {
		got[string(r.Value)] = r.DeliveryCount()
		holder.MarkAcks(kgo.AckAccept, r)
		return got["evicted"] > 0 && got["after"] > 0
	})
	if got["evicted"] < 2 {
		t.Errorf("the record held at eviction came back with delivery count %d, want at least 2", got["evicted"])
	}
	if err := holder.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}

	// The next acknowledgement of the partition fails: the record stays
	// acquired, so forcing a redelivery hands it out once more.
	control(t, b, "POST", "share/groups/"+group+"/fail-ack", fmt.Sprintf(`{"topic":%q,"partition":0}`, topic), 204, nil)
	produceSync(t, producer, &kgo.Record{Value: []byte("nack")})
	var nackCount int32
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool {
		if string(r.Value) != "nack" {
			holder.MarkAcks(kgo.AckAccept, r)
			return false
		}
		nackCount = r.DeliveryCount()
		holder.MarkAcks(kgo.AckAccept, r)
		return true
	})
	// kgo does not surface a refused ack from FlushAcks; the broker's
	// count below and the redelivery show it was refused.
	holder.FlushAcks(ctx)
	holder.PauseFetchTopics(topic)
	control(t, b, "POST", "share/groups/"+group+"/redeliver", fmt.Sprintf(`{"topic":%q,"partition":0}`, topic), 200, &res)
	if res.Records != 1 {
		t.Fatalf("redeliver released %d records after the failed ack, want 1", res.Records)
	}
	holder.ResumeFetchTopics(topic)
	shareConsume(t, ctx, holder, func(r *kgo.Record) bool {
		if string(r.Value) != "nack" {
			holder.MarkAcks(kgo.AckAccept, r)
			return false
		}
		if r.DeliveryCount() != nackCount+1 {
			t.Errorf("nack redelivered with count %d, want %d", r.DeliveryCount(), nackCount+1)
		}
		holder.MarkAcks(kgo.AckAccept, r)
		return true
	})

	var fc share.FaultCounts
	control(t, b, "GET", "share/faults", "", 200, &fc)
	if fc.LocksExpired != 1 || fc.SessionsEvicted != 1 || fc.AcksFailed != 1 || fc.Redelivered != 1 {
		t.Errorf("share faults %+v", fc)
	}
}

// TestFaultShareDLQWriteFails: the next dead-letter write of the group
// fails; the broker retries it (after its 1 s backoff) and the record
// reaches the DLQ once, with the failure counted.
func TestFaultShareDLQWriteFails(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	adm := newAdmin(t, b)
	const topic, group, dlq = "dq", "dq-g", "dlq.dq"
	mustCreateTopic(t, adm, topic, 1, nil)
	mustCreateTopic(t, adm, dlq, 1, map[string]*string{"errors.deadletterqueue.group.enable": strp("true")})
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "errors.deadletterqueue.topic.name", dlq)
	control(t, b, "POST", "share/groups/"+group+"/fail-dlq", `{"count":1}`, 204, nil)
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic)), &kgo.Record{Value: []byte("bad")})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		cl.MarkAcks(kgo.AckReject, r)
		return true
	})
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	waitSPSO(t, ctx, b, group, topic, 0, 1)
	consumeN(t, b, dlq, 1, 1)
	var fc share.FaultCounts
	control(t, b, "GET", "share/faults", "", 200, &fc)
	if fc.DLQWritesFailed != 1 {
		t.Errorf("share faults %+v, want 1 DLQ write failed", fc)
	}
	page := scrapeMetrics(t, b)
	if got, ok := metricValue(page, `sharq_share_faults_injected_total{fault="dlq_writes_failed"}`); !ok || got != 1 {
		t.Errorf("sharq_share_faults_injected_total{fault=dlq_writes_failed} = %v (found %v), want 1", got, ok)
	}
}

// TestFaultShareFetchPartitionError: a rule fails the share-partition in
// ShareFetch (a custom-decoded request) twice with NOT_LEADER_OR_FOLLOWER;
// the share consumer refreshes its metadata and reads every record.
func TestFaultShareFetchPartitionError(t *testing.T) {
	t.Parallel()
	b := ruleBroker(t)
	const topic, group = "sfe", "sfe-g"
	mustCreateTopic(t, newAdmin(t, b), topic, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond), kgo.MetadataMinAge(10*time.Millisecond))
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	warmUp(t, ctx, producer, cl)
	r := addRule(t, b, fmt.Sprintf(`{"api":"ShareFetch","topic":%q,"partition":0,"error":"NOT_LEADER_OR_FOLLOWER","count":2}`, topic))
	for i := 0; i < 5; i++ {
		produceSync(t, producer, &kgo.Record{Value: []byte(fmt.Sprint("r", i))})
	}
	seen := map[string]bool{}
	shareConsume(t, ctx, cl, func(rec *kgo.Record) bool {
		seen[string(rec.Value)] = true
		cl.MarkAcks(kgo.AckAccept, rec)
		return len(seen) == 5+boolInt(seen["warm"])
	})
	for i := 0; i < 5; i++ {
		if !seen[fmt.Sprint("r", i)] {
			t.Errorf("r%d not delivered", i)
		}
	}
	if st := ruleStatus(t, b, r.ID); st.Hits != 2 {
		t.Errorf("rule %+v", st)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
