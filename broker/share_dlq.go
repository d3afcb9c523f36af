package broker

import (
	"errors"
	"fmt"

	"sharq/log"
	"sharq/log/recordbatch"
	"sharq/raftmeta"
	"sharq/share"
)

// shareDLQ is share.DLQ over this node's topics: the share manager decides
// what goes to a dead-letter topic and when; this writes it.
type shareDLQ struct{ s *Server }

func (d shareDLQ) Topic(name string) (int32, bool, bool) {
	t := d.s.meta.Image().Topics[name]
	if t == nil {
		return 0, false, false
	}
	return int32(len(t.Partitions)), t.Configs["errors.deadletterqueue.group.enable"] == "true", true
}

// CreateTopic creates a dead-letter topic as Kafka's DLQ manager does:
// partitions and replication factor -1 (the broker defaults),
// errors.deadletterqueue.group.enable=true and message.timestamp.type
// CreateTime (each record carries the time of its dead-letter write).
func (d shareDLQ) CreateTopic(name string) error {
	_, err := d.s.createTopic(d.s.ctx, name, -1, -1, map[string]string{
		"errors.deadletterqueue.group.enable": "true",
		"message.timestamp.type":              "CreateTime",
	}, false)
	var te *topicCreateError
	if errors.As(err, &te) && te.code == errTopicAlreadyExists {
		return nil
	}
	return err
}

func (d shareDLQ) TopicName(id [16]byte) string {
	if t := d.s.meta.Image().TopicsByID[raftmeta.UUID(id)]; t != nil {
		return t.Name
	}
	return ""
}

// dlqDecompressor unpacks compressed source batches for copied records.
// dlqMaxInflate bounds one batch's decompressed records when the dead-letter
// copy reads them: a batch produced through sharq was checked on produce, so
// only a damaged file could inflate further.
const dlqMaxInflate = 256 << 20

// SourceRecords reads the keys and values of offsets first..last of a
// source partition (a copy-enabled dead-letter write), decompressing
// batches as needed.
func (d shareDLQ) SourceRecords(topicID [16]byte, partition int32, first, last int64) (map[int64]share.SourceRecord, error) {
	t := d.s.meta.Image().TopicsByID[raftmeta.UUID(topicID)]
	if t == nil {
		return nil, fmt.Errorf("source topic %s not found", raftmeta.UUID(topicID))
	}
	pt := d.s.partitionFor(t.Name, partition)
	if pt == nil {
		return nil, fmt.Errorf("source partition %s-%d not here", t.Name, partition)
	}
	l, err := pt.acquire()
	if err != nil {
		return nil, fmt.Errorf("source partition %s-%d: %w", t.Name, partition, err)
	}
	defer pt.release()
	out := map[int64]share.SourceRecord{}
	for off := first; off <= last; {
		data, err := l.Read(off, 1<<20, nil)
		if err != nil {
			return out, fmt.Errorf("read %s-%d at %d: %w", t.Name, partition, off, err)
		}
		next, err := collectRecords(data, first, last, out)
		if err != nil {
			return out, fmt.Errorf("decode %s-%d at %d: %w", t.Name, partition, off, err)
		}
		if next <= off {
			break // nothing more in the log
		}
		off = next
	}
	return out, nil
}

// collectRecords adds the records of whole v2 batches in data with offsets
// in [first, last] to out and returns the offset after the last batch.
func collectRecords(data []byte, first, last int64, out map[int64]share.SourceRecord) (int64, error) {
	return walkRecords(data, first, last, dlqMaxInflate, func(off, _ int64, rec *recordbatch.Record) {
		out[off] = share.SourceRecord{Key: rec.Key, Value: rec.Value}
	})
}

// walkRecords calls fn for each record of the whole v2 batches in data
// with an offset in [first, last], control batches skipped, compressed ones
// unpacked (at most maxInflate bytes each), with the record's timestamp
// (the batch's for LogAppendTime). It returns the offset after the last
// batch, -1 when data holds none.
func walkRecords(data []byte, first, last int64, maxInflate int, fn func(offset, timestamp int64, rec *recordbatch.Record)) (int64, error) {
	next := int64(-1)
	for len(data) > 0 {
		h, ok := recordbatch.Next(data)
		if !ok {
			break
		}
		batch := data[:h.Size]
		data = data[h.Size:]
		next = h.LastOffset() + 1
		if h.Control() || h.LastOffset() < first || h.BaseOffset > last {
			continue
		}
		body := batch[recordbatch.HeaderSize:]
		if c := h.Compression(); c != 0 {
			dec, err := log.Decompress(nil, c, body, maxInflate)
			if err != nil {
				return next, fmt.Errorf("decompress batch at %d: %w", h.BaseOffset, err)
			}
			body = dec
		}
		logAppendTime := h.Attributes&recordbatch.AttrTimestampType != 0
		rd := recordbatch.NewReader(body, h.RecordCount)
		var rec recordbatch.Record
		for rd.Next(&rec) {
			off := h.BaseOffset + int64(rec.OffsetDelta)
			ts := h.BaseTimestamp + rec.TimestampDelta
			if logAppendTime {
				ts = h.MaxTimestamp
			}
			if off >= first && off <= last {
				fn(off, ts, &rec)
			}
		}
		if err := rd.Err(); err != nil {
			return next, fmt.Errorf("batch at %d: %w", h.BaseOffset, err)
		}
	}
	return next, nil
}

// Append writes dead-letter records to one partition as one uncompressed
// CreateTime batch, as a producer with acks=1 would.
func (d shareDLQ) Append(topic string, partition int32, recs []share.DLQRecord) error {
	t := d.s.meta.Image().Topics[topic]
	if t == nil || int(partition) >= len(t.Partitions) {
		return fmt.Errorf("%w: %s-%d", errDLQNoPartition, topic, partition)
	}
	pt := d.s.partitionFor(topic, partition)
	if pt == nil {
		return fmt.Errorf("%w: %s-%d", errDLQNoPartition, topic, partition)
	}
	l, err := pt.acquire()
	if err != nil {
		return fmt.Errorf("dead-letter partition %s-%d: %w", topic, partition, err)
	}
	defer pt.release()
	batch := encodeDLQBatch(recs)
	if _, err := l.Append(batch, t.Partitions[partition].LeaderEpoch); err != nil {
		return fmt.Errorf("append to %s-%d (%d): %w", topic, partition, log.ErrorCode(err), err)
	}
	pt.wake()
	return nil
}

var errDLQNoPartition = errors.New("dead-letter partition not served here")

// encodeDLQBatch builds one v2 batch of recs (Kafka's
// MemoryRecords.withRecords(Compression.NONE, ...): no producer id,
// CreateTime, base timestamp of the first record).
func encodeDLQBatch(recs []share.DLQRecord) []byte {
	base := recs[0].Timestamp
	h := recordbatch.Header{
		LeaderEpoch: -1, Magic: recordbatch.MagicV2, LastOffsetDelta: int32(len(recs) - 1),
		BaseTimestamp: base, MaxTimestamp: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		RecordCount: int32(len(recs)),
	}
	for _, r := range recs {
		h.MaxTimestamp = max(h.MaxTimestamp, r.Timestamp)
	}
	b := h.AppendTo(nil)
	var headers []byte
	for i, r := range recs {
		headers = headers[:0]
		for _, hd := range r.Headers {
			headers = recordbatch.AppendHeader(headers, []byte(hd.Key), hd.Value)
		}
		b = recordbatch.AppendRecord(b, &recordbatch.Record{TimestampDelta: r.Timestamp - base, OffsetDelta: int32(i),
			Key: r.Key, Value: r.Value, HeaderCount: int32(len(r.Headers)), Headers: headers})
	}
	recordbatch.Seal(b)
	return b
}
