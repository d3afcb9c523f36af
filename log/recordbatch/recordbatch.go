// Package recordbatch is the one codec of Kafka's v2 RecordBatch header
// (DefaultRecordBatch): its layout, decoding and checksum. The partition log
// (sharq/log) validates and indexes batches with it, the share-partitions
// (sharq/share) walk batch boundaries with it, and the broker checks produce
// framing with it. It is a leaf package so that share can use it without
// importing log (../shared/DESIGN.md: share reads log only through its own
// interface).
package recordbatch

import (
	"encoding/binary"

	"sharq/log/crc32c"
)

// v2 RecordBatch header layout (all big-endian). The CRC covers everything
// from attributes to the end of the batch, so base offset and partition
// leader epoch can be assigned in place without recomputing it.
const (
	OffBaseOffset      = 0  // int64
	OffBatchLength     = 8  // int32: bytes after this field
	OffLeaderEpoch     = 12 // int32
	OffMagic           = 16 // int8
	OffCRC             = 17 // uint32, CRC-32C of [OffAttributes:]
	OffAttributes      = 21 // int16
	OffLastOffsetDelta = 23 // int32
	OffBaseTimestamp   = 27 // int64
	OffMaxTimestamp    = 35 // int64
	OffProducerID      = 43 // int64
	OffProducerEpoch   = 51 // int16
	OffBaseSequence    = 53 // int32
	OffRecordCount     = 57 // int32
	HeaderSize         = 61

	// LengthOverhead is what the batch length does not count: the base
	// offset and the length itself.
	LengthOverhead = 12

	AttrCompressionMask = 0x07
	AttrTimestampType   = 0x08 // LogAppendTime when set
	AttrTransactional   = 0x10
	AttrControl         = 0x20

	MagicV2 = 2
)

// Header is the decoded fixed part of a v2 RecordBatch.
type Header struct {
	BaseOffset      int64
	Size            int32 // the whole batch in bytes (batch length + LengthOverhead)
	LeaderEpoch     int32
	Magic           int8
	CRC             uint32
	Attributes      int16
	LastOffsetDelta int32
	BaseTimestamp   int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	RecordCount     int32
}

// Parse decodes the first HeaderSize bytes of b (it panics on fewer, like
// an index out of range: check the length first, or use Next).
func Parse(b []byte) Header {
	_ = b[HeaderSize-1]
	return Header{
		BaseOffset:      int64(binary.BigEndian.Uint64(b[OffBaseOffset:])),
		Size:            int32(binary.BigEndian.Uint32(b[OffBatchLength:])) + LengthOverhead,
		LeaderEpoch:     int32(binary.BigEndian.Uint32(b[OffLeaderEpoch:])),
		Magic:           int8(b[OffMagic]),
		CRC:             binary.BigEndian.Uint32(b[OffCRC:]),
		Attributes:      int16(binary.BigEndian.Uint16(b[OffAttributes:])),
		LastOffsetDelta: int32(binary.BigEndian.Uint32(b[OffLastOffsetDelta:])),
		BaseTimestamp:   int64(binary.BigEndian.Uint64(b[OffBaseTimestamp:])),
		MaxTimestamp:    int64(binary.BigEndian.Uint64(b[OffMaxTimestamp:])),
		ProducerID:      int64(binary.BigEndian.Uint64(b[OffProducerID:])),
		ProducerEpoch:   int16(binary.BigEndian.Uint16(b[OffProducerEpoch:])),
		BaseSequence:    int32(binary.BigEndian.Uint32(b[OffBaseSequence:])),
		RecordCount:     int32(binary.BigEndian.Uint32(b[OffRecordCount:])),
	}
}

// Next decodes the v2 batch at the start of b when it is whole: ok is false
// for a short buffer, a length below the header, a batch running past b, a
// magic other than 2 or a negative last offset delta. It does not check the
// CRC (Checksum does).
func Next(b []byte) (h Header, ok bool) {
	if len(b) < HeaderSize {
		return h, false
	}
	h = Parse(b)
	if h.Size < HeaderSize || int(h.Size) > len(b) || h.Magic != MagicV2 || h.LastOffsetDelta < 0 {
		return Header{}, false
	}
	return h, true
}

// AbortedTxn is an aborted transaction as Fetch and ShareFetch report it
// (a FetchResponse AbortedTransactions entry): the producer and the first
// offset of its aborted data. It is here, beside the control batches that
// end transactions, so that sharq/log returns and sharq/share takes one
// type without importing each other.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// LastOffset is the offset of the batch's last record.
func (h *Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression is the codec id (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
func (h *Header) Compression() int { return int(h.Attributes & AttrCompressionMask) }

// Transactional reports a batch of a transactional producer.
func (h *Header) Transactional() bool { return h.Attributes&AttrTransactional != 0 }

// Control reports a control batch (transaction marker).
func (h *Header) Control() bool { return h.Attributes&AttrControl != 0 }

// Checksum computes the CRC-32C a whole v2 batch b must carry at OffCRC.
func Checksum(b []byte) uint32 { return crc32c.Checksum(b[OffAttributes:]) }

// AppendTo appends h as a v2 header (HeaderSize bytes) to dst. The batch
// length and CRC are written as h has them: Seal sets both once the records
// follow.
func (h *Header) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.BaseOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Size-LengthOverhead))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.LeaderEpoch))
	dst = append(dst, byte(h.Magic))
	dst = binary.BigEndian.AppendUint32(dst, h.CRC)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Attributes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.LastOffsetDelta))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.BaseTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.MaxTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.BaseSequence))
	return binary.BigEndian.AppendUint32(dst, uint32(h.RecordCount))
}

// Seal sets the batch length and CRC of b, a whole v2 batch (header and
// records section, compressed if its attributes say so).
func Seal(b []byte) {
	binary.BigEndian.PutUint32(b[OffBatchLength:], uint32(len(b)-LengthOverhead))
	binary.BigEndian.PutUint32(b[OffCRC:], Checksum(b))
}
