package share

import (
	"strconv"
	"strings"
	"time"
)

// Settings are a share group's effective configs: the broker's group.share.*
// defaults with the group's overrides (kafka-configs --entity-type groups)
// applied by WithOverrides. The broker builds them per request.
type Settings struct {
	LockDuration      time.Duration // share.record.lock.duration.ms
	DeliveryLimit     int           // share.delivery.count.limit
	MaxRecordLocks    int           // share.partition.max.record.locks
	SessionTimeout    time.Duration // share.session.timeout.ms
	HeartbeatInterval time.Duration // share.heartbeat.interval.ms
	MaxSize           int           // group.share.max.size
	AutoOffsetReset   string        // share.auto.offset.reset
	ReadCommitted     bool          // share.isolation.level=read_committed
	RenewEnabled      bool          // share.renew.acknowledge.enable
	// FairAcquisition: sharq.share.fair.acquisition.enable (fair.go).
	FairAcquisition bool

	// Dead-letter queues (KIP-1191).
	DLQEnabled    bool   // share.version >= 2
	DLQTopic      string // errors.deadletterqueue.topic.name (group)
	DLQCopy       bool   // errors.deadletterqueue.copy.record.enable (group)
	DLQAutoCreate bool   // errors.deadletterqueue.auto.create.topics.enable (broker)
	DLQPrefix     string // errors.deadletterqueue.topic.name.prefix (broker)

	// sharq's own group configs (off by default).
	Backoff       Backoff // sharq.share.redelivery.backoff.ms / .max.ms / .multiplier
	KeyOrdered    bool    // sharq.share.key.ordered.enable
	PersistCounts bool    // sharq.share.delivery.count.persist

	// Broker-wide limits a ShareFetch obeys.
	MaxSessions   int // group.share.max.share.sessions
	FetchMaxBytes int // fetch.max.bytes
}

// WithOverrides applies a group's dynamic configs (validated when they were
// set; a value that does not parse leaves the default).
func (s Settings) WithOverrides(overrides map[string]string) Settings {
	ms := func(name string, dst *time.Duration) {
		if v, ok := overrides[name]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				*dst = time.Duration(n) * time.Millisecond
			}
		}
	}
	num := func(name string, dst *int) {
		if v, ok := overrides[name]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				*dst = n
			}
		}
	}
	ms("share.record.lock.duration.ms", &s.LockDuration)
	ms("share.session.timeout.ms", &s.SessionTimeout)
	ms("share.heartbeat.interval.ms", &s.HeartbeatInterval)
	num("share.delivery.count.limit", &s.DeliveryLimit)
	num("share.partition.max.record.locks", &s.MaxRecordLocks)
	if v, ok := overrides["share.auto.offset.reset"]; ok {
		s.AutoOffsetReset = v
	}
	if v := overrides["share.isolation.level"]; v == "read_committed" {
		s.ReadCommitted = true
	}
	if v := overrides["share.renew.acknowledge.enable"]; v == "false" {
		s.RenewEnabled = false
	}
	if v, ok := overrides[FairAcquisitionKey]; ok {
		s.FairAcquisition = !strings.EqualFold(strings.TrimSpace(v), "false")
	}
	if v, ok := overrides["errors.deadletterqueue.topic.name"]; ok {
		s.DLQTopic = strings.TrimSpace(v)
	}
	if v := overrides["errors.deadletterqueue.copy.record.enable"]; v == "true" {
		s.DLQCopy = true
	}
	ms("sharq.share.redelivery.backoff.ms", &s.Backoff.Initial)
	ms("sharq.share.redelivery.backoff.max.ms", &s.Backoff.Max)
	if v, ok := overrides["sharq.share.redelivery.backoff.multiplier"]; ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 1 {
			s.Backoff.Multiplier = f
		}
	}
	if v := overrides["sharq.share.key.ordered.enable"]; v == "true" {
		s.KeyOrdered = true
	}
	if v := overrides["sharq.share.delivery.count.persist"]; v == "true" {
		s.PersistCounts = true
	}
	return s
}

// FairAcquisitionKey is the group config that turns fair acquisition
// (fair.go) off; it is on by default.
const FairAcquisitionKey = "sharq.share.fair.acquisition.enable"

// PartitionConfig is the share-partition part of the settings.
func (s Settings) PartitionConfig() Config {
	return Config{
		DeliveryCountLimit: s.DeliveryLimit,
		RecordLockDuration: s.LockDuration,
		MaxRecordLocks:     s.MaxRecordLocks,
		ReadCommitted:      s.ReadCommitted,
		RenewDisabled:      !s.RenewEnabled,
		DLQ:                s.DLQEnabled && s.DLQTopic != "",
		Backoff:            s.Backoff,
		KeyOrdered:         s.KeyOrdered,
		PersistCounts:      s.PersistCounts,
	}
}

// GroupConfig is the coordinator part of the settings.
func (s Settings) GroupConfig() GroupConfig {
	return GroupConfig{SessionTimeout: s.SessionTimeout, HeartbeatInterval: s.HeartbeatInterval, MaxSize: s.MaxSize}
}
