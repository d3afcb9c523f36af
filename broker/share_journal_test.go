package broker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sharq/broker/brokertest"
	"sharq/config"
)

// Acknowledgements go through <log.dirs>/state/state.journal while the
// broker runs (with and without log.flush.interval.messages=1); a clean
// shutdown checkpoints it empty, and a restart does not redeliver what was
// accepted.
func TestShareJournalWiring(t *testing.T) {
	for _, flushEvery := range []int64{0, 1} { // 0: the default (no fsync)
		t.Run(fmt.Sprintf("flush_every=%d", flushEvery), func(t *testing.T) {
			var opts []brokertest.Option
			if flushEvery > 0 {
				opts = append(opts, brokertest.WithConfig(func(c *config.Config) { c.LogFlushIntervalMessages = flushEvery }))
			}
			br := brokertest.New(t, opts...)
			journal := filepath.Join(br.Dir, "state", "state.journal")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const topic, group, n = "jt", "jg", 20
			adm := newAdmin(t, br)
			mustCreateTopic(t, adm, topic, 1, nil)
			producer := newClient(t, br, kgo.DefaultProduceTopic(topic))
			for i := range n {
				if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}}); err != nil {
				t.Fatal(err)
			}
			consumer := newClient(t, br, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
			accepted := map[string]bool{}
			for len(accepted) == 0 && ctx.Err() == nil {
				consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
					if r.Offset < n/2 {
						consumer.MarkAcks(kgo.AckAccept, r)
						accepted[string(r.Value)] = true
					} else {
						consumer.MarkAcks(kgo.AckRelease, r)
					}
				})
				if err := consumer.FlushAcks(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if fi, err := os.Stat(journal); err != nil || fi.Size() == 0 {
				t.Fatalf("journal after answered acks: %v, %v", fi, err)
			}
			consumer.Close()
			br.Restart()
			if fi, err := os.Stat(journal); err != nil || fi.Size() != 0 {
				t.Fatalf("journal not checkpointed by the clean shutdown: %v, %v", fi, err)
			}
			again := newClient(t, br, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
			got := map[string]bool{}
			for len(got)+len(accepted) < n && ctx.Err() == nil {
				again.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
					if accepted[string(r.Value)] {
						t.Errorf("accepted record %s delivered again after restart", r.Value)
					}
					got[string(r.Value)] = true
					again.MarkAcks(kgo.AckAccept, r)
				})
			}
			if len(got)+len(accepted) != n {
				t.Fatalf("after restart: %d delivered + %d accepted, want %d", len(got), len(accepted), n)
			}
		})
	}
}
