package log

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The log stores batches as produced and never needs their records, except
// to find one record's timestamp inside a compressed batch (ListOffsets
// MAX_TIMESTAMP). franz-go's decompressor handles Kafka's four codecs,
// including the xerial snappy framing Java producers write, and is already
// a dependency; a second implementation would only add risk.
var (
	decompressorOnce sync.Once
	decompressor     kgo.Decompressor
)

// decompressRecords returns the records section of a batch compressed with
// codec (the batch attributes' low three bits).
func decompressRecords(p []byte, codec int) ([]byte, error) {
	decompressorOnce.Do(func() { decompressor = kgo.DefaultDecompressor() })
	return decompressor.Decompress(p, kgo.CompressionCodecType(codec))
}
