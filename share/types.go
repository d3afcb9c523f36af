package share

import (
	"fmt"
	"time"
)

// RecordState is the state of an in-flight offset. The numeric values are
// Kafka's DeliveryState ids, which is also what the codec persists.
type RecordState int8

const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archiving    RecordState = 3 // KIP-1191: waiting for its dead-letter write, then Archived
	Archived     RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "Available"
	case Acquired:
		return "Acquired"
	case Acknowledged:
		return "Acknowledged"
	case Archiving:
		return "Archiving"
	case Archived:
		return "Archived"
	}
	return fmt.Sprintf("RecordState(%d)", int8(s))
}

// Terminal reports whether a record in this state is done for good.
// Archiving is not: SPSO stops at it until its dead-letter write settles.
func (s RecordState) Terminal() bool {
	return s == Acknowledged || s == Archived
}

// AckType is an AcknowledgeTypes entry on the wire.
type AckType int8

const (
	AckGap     AckType = 0 // internal: offsets with no data record (compaction hole, control marker)
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4 // KIP-1222, v2 requests with IsRenewAck only (checked by the broker)
)

// AcquireMode is ShareFetch v2 ShareAcquireMode (KIP-1206).
type AcquireMode int8

const (
	BatchOptimized AcquireMode = 0 // MaxRecords is soft: whole log batches
	RecordLimit    AcquireMode = 1 // MaxRecords is hard: a log batch may be split
)

// Kafka's defaults (SHARE-GROUPS.md section 8).
const (
	DefaultDeliveryCountLimit = 5
	DefaultRecordLockDuration = 30 * time.Second
	DefaultMaxRecordLocks     = 2000
	DefaultMaxRecords         = 500
)

// Config holds the effective group/broker settings of one share-partition.
// Zero values get Kafka's defaults. Range checks against the broker's
// min/max bounds are the config layer's job, not this package's.
type Config struct {
	DeliveryCountLimit int           // share.delivery.count.limit
	RecordLockDuration time.Duration // share.record.lock.duration.ms
	MaxRecordLocks     int           // share.partition.max.record.locks (in-flight window)
	ReadCommitted      bool          // share.isolation.level=read_committed
	RenewDisabled      bool          // share.renew.acknowledge.enable=false
	// DLQ: the group has a dead-letter topic and share.version >= 2
	// (Kafka's isDLQEnabledForGroup): rejected records and those released
	// or expired at the delivery limit go Archiving, not Archived.
	DLQ bool

	// sharq's own group configs (off by default; Kafka's behaviour then).
	Backoff       Backoff // sharq.share.redelivery.backoff.*
	KeyOrdered    bool    // sharq.share.key.ordered.enable
	PersistCounts bool    // sharq.share.delivery.count.persist
}

// Backoff is the redelivery backoff: a record released by its consumer or
// whose lock expired is acquirable again only after
// min(Max, Initial * Multiplier^(count-1)), count being the delivery count
// of the attempt that failed. Initial <= 0 turns it off; Multiplier 1 is a
// fixed delay. Best effort: the delay is kept in memory only (a restart
// makes waiting records available at once, with their persisted count).
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
}

// Default maximum and multiplier of the redelivery backoff.
const (
	DefaultBackoffMax        = 60 * time.Second
	DefaultBackoffMultiplier = 2.0
)

// Enabled reports whether released records wait before redelivery.
func (b Backoff) Enabled() bool { return b.Initial > 0 }

// Delay is the wait after the count-th delivery failed.
func (b Backoff) Delay(count int16) time.Duration {
	if b.Initial <= 0 {
		return 0
	}
	d := float64(b.Initial)
	for i := int16(1); i < count && d < float64(b.Max); i++ {
		d *= b.Multiplier
	}
	if d > float64(b.Max) {
		return b.Max
	}
	return time.Duration(d)
}

// Effective is the configuration with Kafka's (and sharq's) defaults
// filled in, as a share-partition uses it.
func (c Config) Effective() Config { return c.withDefaults() }

func (c Config) withDefaults() Config {
	if c.DeliveryCountLimit <= 0 {
		c.DeliveryCountLimit = DefaultDeliveryCountLimit
	}
	if c.DeliveryCountLimit > 32767 {
		c.DeliveryCountLimit = 32767
	}
	if c.RecordLockDuration <= 0 {
		c.RecordLockDuration = DefaultRecordLockDuration
	}
	if c.MaxRecordLocks <= 0 {
		c.MaxRecordLocks = DefaultMaxRecordLocks
	}
	if c.Backoff.Max <= 0 {
		c.Backoff.Max = DefaultBackoffMax
	}
	if c.Backoff.Max < c.Backoff.Initial {
		c.Backoff.Max = c.Backoff.Initial
	}
	if c.Backoff.Multiplier < 1 {
		c.Backoff.Multiplier = DefaultBackoffMultiplier
		if c.Backoff.Multiplier < 1 {
			c.Backoff.Multiplier = 1
		}
	}
	return c
}

// AcquiredRecords is one ShareFetchResponse AcquiredRecords entry.
type AcquiredRecords struct {
	FirstOffset   int64
	LastOffset    int64
	DeliveryCount int16
}

// AcquireRequest carries the ShareFetch parameters that shape an acquisition.
type AcquireRequest struct {
	MaxRecords int // <= 0 means DefaultMaxRecords
	BatchSize  int // preferred size of each AcquiredRecords entry; <= 0 means MaxRecords
	Mode       AcquireMode
}

// AcquireResult is caller-owned and reused across calls: Acquire resets it.
type AcquireResult struct {
	Acquired []AcquiredRecords
	// RecordsFirst..RecordsLast is the offset span whose covering log
	// batches must be returned as Records (-1, -1 when nothing was acquired).
	RecordsFirst, RecordsLast int64
	Count                     int64 // acquired offsets
}

func (r *AcquireResult) reset() {
	r.Acquired = r.Acquired[:0]
	r.RecordsFirst, r.RecordsLast, r.Count = -1, -1, 0
}

// AckBatch is one AcknowledgementBatches entry: either one type for the
// whole range or one type per offset.
type AckBatch struct {
	FirstOffset int64
	LastOffset  int64
	Types       []AckType
}

// InFlightRange is a read-only view of one range of the in-flight cache,
// also used to report what a lock expiry or a release changed.
type InFlightRange struct {
	FirstOffset   int64
	LastOffset    int64
	State         RecordState
	DeliveryCount int16
	Owner         string    // member id while Acquired
	LockDeadline  time.Time // zero unless Acquired
	// AvailableAt is when an Available range's redelivery backoff ends
	// (zero when it is not waiting one out).
	AvailableAt time.Time
	// KeyHeld (Window only, key-ordered delivery): the Available range
	// cannot be acquired now because its keys are held or wait behind
	// earlier records of the same keys.
	KeyHeld bool
}

// Effects tells the caller what a mutating call changed.
type Effects struct {
	SPSOMoved bool // the share-partition start offset advanced
	Available bool // records became available: wake parked ShareFetches
	Persist   bool // persistable state changed (the partition is dirty)
	Archiving bool // records went Archiving: their dead-letter writes are due
	Durable   bool // ... and it must be durable before the caller answers
}

func (e *Effects) merge(o Effects) {
	e.SPSOMoved = e.SPSOMoved || o.SPSOMoved
	e.Available = e.Available || o.Available
	e.Persist = e.Persist || o.Persist
	e.Durable = e.Durable || o.Durable
	e.Archiving = e.Archiving || o.Archiving
}
