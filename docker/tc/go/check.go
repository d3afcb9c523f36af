package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// check is the client side every stock module is put through, from the
// host and from inside the Docker network: a topic NAME with n records
// produced, all of them read back by the consumer group NAME-group and by
// the share group NAME-share (each record acknowledged, every
// acknowledgement answered without error). firstRecord, when not nil, is
// called once the first record is acknowledged by the broker.
func check(ctx context.Context, bootstrap, name string, n int, firstRecord func()) error {
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.RetryTimeout(30 * time.Second)}
	admin, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := createTopic(ctx, admin, name); err != nil {
		return err
	}

	producer, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(name))...)
	if err != nil {
		return err
	}
	defer producer.Close()
	if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte(name + "-0")}).FirstErr(); err != nil {
		return fmt.Errorf("produce the first record: %w", err)
	}
	if firstRecord != nil {
		firstRecord()
	}
	var rest []*kgo.Record
	for i := 1; i < n; i++ {
		rest = append(rest, &kgo.Record{Key: []byte(strconv.Itoa(i % 7)), Value: []byte(name + "-" + strconv.Itoa(i))})
	}
	if err := producer.ProduceSync(ctx, rest...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}

	group, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(name+"-group"), kgo.ConsumeTopics(name),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())...)
	if err != nil {
		return err
	}
	defer group.Close()
	if err := consumeAll(ctx, group, name, n, nil); err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	if err := group.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("consumer group commit: %w", err)
	}

	// A share group starts at the end of the log unless told otherwise.
	if err := setGroupConfig(ctx, admin, name+"-share", "share.auto.offset.reset", "earliest"); err != nil {
		return err
	}
	var ackMu sync.Mutex
	var ackErrs []error
	share, err := kgo.NewClient(append(opts, kgo.ShareGroup(name+"-share"), kgo.ConsumeTopics(name),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.ShareAckCallback(func(_ *kgo.Client, res kgo.ShareAckResults) {
			ackMu.Lock()
			defer ackMu.Unlock()
			for _, r := range res {
				if r.Err != nil {
					ackErrs = append(ackErrs, fmt.Errorf("%s/%d: %w", r.Topic, r.Partition, r.Err))
				}
			}
		}))...)
	if err != nil {
		return err
	}
	defer share.Close()
	if err := consumeAll(ctx, share, name, n, func(r *kgo.Record) { share.MarkAcks(kgo.AckAccept, r) }); err != nil {
		return fmt.Errorf("share group: %w", err)
	}
	if err := share.FlushAcks(ctx); err != nil {
		return fmt.Errorf("share group acknowledgements: %w", err)
	}
	ackMu.Lock()
	defer ackMu.Unlock()
	return errors.Join(ackErrs...)
}

// consumeAll polls until every value NAME-0 .. NAME-(n-1) was seen.
func consumeAll(ctx context.Context, cl *kgo.Client, name string, n int, each func(*kgo.Record)) error {
	seen := map[string]bool{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%d of %d records: %w", len(seen), n, err)
		}
		var errs []error
		fs.EachError(func(t string, p int32, err error) { errs = append(errs, fmt.Errorf("%s/%d: %w", t, p, err)) })
		if err := errors.Join(errs...); err != nil {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)] = true
			if each != nil {
				each(r)
			}
		})
	}
	for i := range n {
		if v := name + "-" + strconv.Itoa(i); !seen[v] {
			return fmt.Errorf("record %s not delivered", v)
		}
	}
	return nil
}

func createTopic(ctx context.Context, cl *kgo.Client, name string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, 3, 1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

func setGroupConfig(ctx context.Context, cl *kgo.Client, group, key, value string) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = key, &value
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("set %s of group %s: %w", key, group, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("set %s of group %s: %w", key, group, err)
		}
	}
	return nil
}
