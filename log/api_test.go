package log

import "context"

// The contract in api.go, checked by the compiler.
var (
	_ func(error) int16                                   = ErrorCode
	_ func(string, Options) (*Manager, error)             = NewManager
	_ func(*Manager, string, int32, Config) (*Log, error) = (*Manager).Open
	_ func(*Manager, string, int32) *Log                  = (*Manager).Get
	_ func(*Manager, string, int32) error                 = (*Manager).Delete
	_ func(*Manager, context.Context) error               = (*Manager).Run
	_ func(*Manager) error                                = (*Manager).Close
	_ func(*Log, []byte, int32) (AppendResult, error)     = (*Log).Append
	_ func(*Log, int64, int32, []byte) ([]byte, error)    = (*Log).Read
	_ func(*Log) int64                                    = (*Log).LogStartOffset
	_ func(*Log) int64                                    = (*Log).LogEndOffset
	_ func(*Log) int64                                    = (*Log).HighWatermark
	_ func(*Log, int64)                                   = (*Log).SetHighWatermark
	_ func(*Log, int64) (int64, int64, error)             = (*Log).OffsetForTimestamp
	_ func(*Log) (int64, int64, error)                    = (*Log).MaxTimestamp
	_ func(*Log, int64) (int64, error)                    = (*Log).DeleteRecordsBefore
	_ func(*Log, int64) error                             = (*Log).TruncateTo
	_ func(*Log, int32) (int32, int64)                    = (*Log).EndOffsetForEpoch
	_ func(*Log) int64                                    = (*Log).Size
	_ func(*Log, Config)                                  = (*Log).SetConfig
	_ func(*Log) error                                    = (*Log).Flush
)
