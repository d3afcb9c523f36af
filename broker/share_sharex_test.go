package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
)

// TestShareRedeliveryBackoff: with sharq.share.redelivery.backoff.ms a
// record released by a franz-go share consumer comes back only after the
// backoff (200 ms, then 400 ms), while a record produced behind it is
// delivered at once.
func TestShareRedeliveryBackoff(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	adm := newAdmin(t, b)
	const topic, group = "retry", "backoff"
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	setGroupConfig(t, b, group, "share.delivery.count.limit", "3")
	setGroupConfig(t, b, group, "sharq.share.redelivery.backoff.ms", "200")
	setGroupConfig(t, b, group, "sharq.share.redelivery.backoff.multiplier", "2")
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic))
	produceSync(t, producer, &kgo.Record{Value: []byte("poison")})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	var at []time.Time
	otherAt := time.Time{}
	shareConsume(t, ctx, cl, func(r *kgo.Record) bool {
		switch string(r.Value) {
		case "poison":
			at = append(at, time.Now())
			cl.MarkAcks(kgo.AckRelease, r)
			if len(at) == 1 {
				if err := cl.FlushAcks(ctx); err != nil {
					t.Errorf("flush acks: %v", err)
				}
				produceSync(t, producer, &kgo.Record{Value: []byte("other")})
			}
		default:
			otherAt = time.Now()
			cl.MarkAcks(kgo.AckAccept, r)
		}
		return len(at) == 3
	})
	for i, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} {
		if gap := at[i+1].Sub(at[i]); gap < want {
			t.Errorf("delivery %d came %v after delivery %d, backoff %v", i+2, gap, i+1, want)
		}
	}
	if otherAt.IsZero() || !otherAt.Before(at[1]) {
		t.Errorf("the record behind the waiting one was delivered at %v, the redelivery at %v", otherAt, at[1])
	}
}
