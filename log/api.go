package log

// The types the broker exchanges with the storage engine. The methods live
// in manager.go (Manager), errors.go (ErrorCode) and, for Log, log.go and
// the files named for what they do (append.go, read.go, timestamp.go,
// retention.go, truncate.go, close.go, ...); api_test.go pins their
// signatures.

import (
	"errors"
	"log/slog"
	"time"

	"sharq/log/recordbatch"
)

// TimestampType is message.timestamp.type.
type TimestampType int8

const (
	CreateTime    TimestampType = 0
	LogAppendTime TimestampType = 1
)

// Config is the per-partition configuration (topic configs with broker
// defaults already applied by the caller). Zero values still get Kafka's
// defaults: SegmentBytes 1 GiB, IndexIntervalBytes 4096, MaxMessageBytes
// 1048588, RetentionMs 7 days (use -1 for unlimited; 0 is NOT "delete at
// once"), RetentionBytes unlimited; TimestampBeforeMaxMs/AfterMaxMs <= 0
// mean unlimited.
type Config struct {
	SegmentBytes         int64 // segment.bytes
	SegmentMs            int64 // segment.ms (0 = never roll by time)
	RetentionMs          int64 // retention.ms (-1 = unlimited)
	RetentionBytes       int64 // retention.bytes (-1 = unlimited)
	IndexIntervalBytes   int32 // index.interval.bytes
	MaxMessageBytes      int32 // max.message.bytes: largest batch accepted
	FlushMessages        int64 // flush.messages: 1 = fsync every append (group commit); <=0 or huge = leave it to the OS
	FlushMs              int64 // flush.ms: <= 0 = not time based
	TimestampType        TimestampType
	TimestampBeforeMaxMs int64 // message.timestamp.before.max.ms (CreateTime only)
	TimestampAfterMaxMs  int64 // message.timestamp.after.max.ms (CreateTime only)

	// cleanup.policy: compact and/or delete. With neither set the policy
	// is delete (the zero Config keeps its meaning).
	CleanupCompact bool
	CleanupDelete  bool
	// Compaction (cleanup.policy=compact, cleaner.go).
	DeleteRetentionMs      int64   // delete.retention.ms (0 = Kafka's 1 day; < 0 = 0)
	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio (0 = clean whenever something is dirty)
	MinCompactionLagMs     int64   // min.compaction.lag.ms
	MaxCompactionLagMs     int64   // max.compaction.lag.ms (<= 0 = unlimited)

	// rollMs is segment.ms, or max.compaction.lag.ms if that is sooner on a
	// compacted topic (Kafka's LogConfig.maxSegmentMs, KIP-354).
	rollMs int64
}

// Options are the manager-wide settings.
type Options struct {
	FS     FS           // nil = the real OS file system
	Logger *slog.Logger // nil = discard
	Now    func() time.Time
	// RetentionCheckInterval is log.retention.check.interval.ms.
	RetentionCheckInterval time.Duration
	// OfflineRetryInterval is how long an offline partition (one whose log
	// could not be opened or failed on its write path) answers its error
	// before the next use tries to open it again; 0 = 10s, < 0 = every use.
	OfflineRetryInterval time.Duration
	// MaxOpenLogs bounds the partition logs open at once (each holds three
	// file descriptors per segment); past it the least recently used are
	// closed. 0 = from RLIMIT_NOFILE: (soft limit - 512) / 16, at least 16.
	MaxOpenLogs int
	// Cleaner holds the log.cleaner.* settings.
	Cleaner CleanerOptions
}

// AppendResult says where an appended batch landed.
type AppendResult struct {
	BaseOffset     int64
	LastOffset     int64
	LogAppendTime  int64 // -1 unless the topic uses LogAppendTime
	LogStartOffset int64
	Duplicate      bool // an idempotent retry: offsets are those of the original append
}

// Sentinel errors; ErrorCode maps them (wrapped or not) to Kafka error codes.
var (
	ErrCorruptMessage       = errors.New("corrupt message")           // CORRUPT_MESSAGE (2)
	ErrInvalidRecord        = recordbatch.ErrInvalidRecord            // INVALID_RECORD (87)
	ErrMessageTooLarge      = errors.New("message too large")         // MESSAGE_TOO_LARGE (10)
	ErrInvalidTimestamp     = errors.New("invalid timestamp")         // INVALID_TIMESTAMP (32)
	ErrOffsetOutOfRange     = errors.New("offset out of range")       // OFFSET_OUT_OF_RANGE (1)
	ErrOutOfOrderSequence   = errors.New("out of order sequence")     // OUT_OF_ORDER_SEQUENCE_NUMBER (45)
	ErrInvalidProducerEpoch = errors.New("invalid producer epoch")    // INVALID_PRODUCER_EPOCH (47)
	ErrUnknownProducerID    = errors.New("unknown producer id")       // UNKNOWN_PRODUCER_ID (59)
	ErrUnsupportedMagic     = errors.New("unsupported record magic")  // UNSUPPORTED_FOR_MESSAGE_FORMAT (43)
	ErrClosed               = errors.New("log closed")                // NOT_LEADER_OR_FOLLOWER (6)
	ErrInvalidTxnState      = errors.New("invalid transaction state") // INVALID_TXN_STATE (48)
	ErrStorage              = errors.New("storage error")             // KAFKA_STORAGE_ERROR (56)
)
