package config

// pendingKeys are keys sharq will honour once the feature behind them lands
// (consumer groups, share groups, transactions, compaction, ...). Until then
// they are accepted with the usual "has no effect" warning and the reference
// says so, so that nothing claims to work before it does. Remove a key from
// this list in the change that makes it work.
var pendingKeys = []string{
	// Groups (classic, consumer, share). The consumer group coordinator
	// assigns at once on every change, so the assignment intervals do not
	// apply; classic/consumer conversion is not implemented.
	"group.consumer.assignment.interval.ms", "group.consumer.max.assignment.interval.ms",
	"group.consumer.migration.policy", "group.consumer.min.assignment.interval.ms",
	// The share group coordinator also assigns at once and has only the
	// simple assignor.
	"group.share.assignment.interval.ms", "group.share.assignors",
	"group.share.max.assignment.interval.ms", "group.share.min.assignment.interval.ms",
	// So does the streams group coordinator.
	"group.streams.assignment.interval.ms", "group.streams.max.assignment.interval.ms",
	"group.streams.min.assignment.interval.ms",
	// Producer-id expiry (the log uses Kafka's default, 1 day).
	"producer.id.expiration.ms",
	// Storage details the log does not implement yet.
	"log.preallocate", "log.index.size.max.bytes", "log.roll.jitter.ms", "log.roll.jitter.hours",
	"log.segment.delete.delay.ms",
}

// pendingTopicKeys are the topic-level counterparts.
var pendingTopicKeys = []string{"preallocate", "segment.index.bytes", "segment.jitter.ms", "file.delete.delay.ms"}

func init() {
	for _, name := range pendingKeys {
		k, ok := brokerIndex[name]
		if !ok {
			panic("config: pending key " + name + " is not in the key table")
		}
		k.impl = false
	}
	for _, name := range pendingTopicKeys {
		k, ok := topicIndex[name]
		if !ok {
			panic("config: pending topic key " + name + " is not in the topic table")
		}
		k.impl = false
	}
}
