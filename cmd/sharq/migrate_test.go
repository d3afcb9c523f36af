package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func syncKey(topic string, partition int32) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(topic)))
	b = append(b, topic...)
	return binary.BigEndian.AppendUint32(b, uint32(partition))
}

func syncValue(up, down int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(up)), uint64(down))
}

func TestDecodeOffsetSync(t *testing.T) {
	for _, tc := range []struct {
		name       string
		key, value []byte
		want       offsetSync
		bad        bool
	}{
		{"ok", syncKey("orders", 3), syncValue(41, 40), offsetSync{"orders", 3, 41, 40}, false},
		{"empty topic", syncKey("", 0), syncValue(0, 0), offsetSync{"", 0, 0, 0}, false},
		{"short key", []byte{0}, syncValue(1, 1), offsetSync{}, true},
		{"topic longer than key", append(syncKey("orders", 3)[:4], 0), syncValue(1, 1), offsetSync{}, true},
		{"trailing key bytes", append(syncKey("a", 1), 9), syncValue(1, 1), offsetSync{}, true},
		{"negative topic length", []byte{0xff, 0xff, 0, 0, 0, 0}, syncValue(1, 1), offsetSync{}, true},
		{"short value", syncKey("a", 1), syncValue(1, 1)[:15], offsetSync{}, true},
		{"nil value", syncKey("a", 1), nil, offsetSync{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeOffsetSync(tc.key, tc.value)
			if tc.bad {
				if !errors.Is(err, errBadOffsetSync) {
					t.Fatalf("err %v, want errBadOffsetSync", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestTranslateShareOffset(t *testing.T) {
	tp := topicPartition{"t", 0}
	ix := syncIndex{}
	// Upstream 0..4 -> downstream 0..4; a transaction marker at upstream 5;
	// upstream 6 -> 5; then a restarted mirror re-wrote upstream 6 at 8.
	for _, s := range []offsetSync{{"t", 0, 0, 0}, {"t", 0, 2, 2}, {"t", 0, 4, 4}, {"t", 0, 6, 5}, {"t", 0, 6, 8}} {
		ix.add(s)
	}
	for _, tc := range []struct {
		up   int64
		want int64
		ok   bool
	}{
		{0, 0, true},
		{1, 1, true}, // after the sync at 0: one past its downstream
		{2, 2, true},
		{3, 3, true},
		{5, 5, true},   // the marker's offset: after sync 4 -> 5
		{6, 8, true},   // the later of two syncs for the same upstream offset
		{7, 9, true},   // past the last sync
		{-1, 0, false}, // before every sync
	} {
		got, ok := ix.translate(tp, tc.up)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("translate(%d) = %d, %v; want %d, %v", tc.up, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := ix.translate(topicPartition{"t", 1}, 3); ok {
		t.Error("a partition without syncs translated")
	}
	rows, missing := translateStartOffsets(ix, map[topicPartition]int64{tp: 3, {"t", 1}: 0, {"a", 0}: 1})
	var buf bytes.Buffer
	if err := writeShareCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "t,0,3\n" || len(missing) != 2 || missing[0] != "a-0 (start offset 1)" {
		t.Errorf("csv %q missing %q", buf.String(), missing)
	}
}

// appendRecord encodes one v2 record (no headers).
func appendRecord(b []byte, delta int32, key, value []byte) []byte {
	var body []byte
	body = append(body, 0)              // attributes
	body = binary.AppendVarint(body, 0) // timestamp delta
	body = binary.AppendVarint(body, int64(delta))
	body = binary.AppendVarint(body, int64(len(key)))
	body = append(body, key...)
	body = binary.AppendVarint(body, int64(len(value)))
	body = append(body, value...)
	body = binary.AppendVarint(body, 0) // headers
	b = binary.AppendVarint(b, int64(len(body)))
	return append(b, body...)
}

func syncBatch(first int64, attrs int16, syncs ...offsetSync) []byte {
	var recs []byte
	for i, s := range syncs {
		recs = appendRecord(recs, int32(i), syncKey(s.Topic, s.Partition), syncValue(s.Upstream, s.Downstream))
	}
	rb := kmsg.RecordBatch{FirstOffset: first, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(len(syncs) - 1),
		NumRecords: int32(len(syncs)), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, Records: recs}
	rb.Length = int32(49 + len(recs))
	return rb.AppendTo(nil)
}

func TestEachBatchSync(t *testing.T) {
	a := syncBatch(10, 0, offsetSync{"t", 0, 1, 1}, offsetSync{"t", 0, 2, 2})
	ctrl := syncBatch(12, 0x20, offsetSync{"x", 0, 0, 0}) // a control batch: skipped, not decoded
	b := syncBatch(13, 0, offsetSync{"t", 1, 7, 3})
	all := append(append(append([]byte(nil), a...), ctrl...), b...)
	ix := syncIndex{}
	// From offset 11: the first record of the first batch is skipped;
	// the last batch is cut short, as a Fetch at its byte limit cuts it.
	next, err := eachBatchSync(all[:len(all)-3], 11, ix)
	if err != nil || next != 13 {
		t.Fatalf("next %d err %v, want 13", next, err)
	}
	if len(ix[topicPartition{"t", 0}]) != 1 || ix[topicPartition{"t", 0}][0].Upstream != 2 || len(ix[topicPartition{"x", 0}]) != 0 {
		t.Fatalf("index %+v", ix)
	}
	next, err = eachBatchSync(b, next, ix)
	if err != nil || next != 14 || ix[topicPartition{"t", 1}][0].Downstream != 3 {
		t.Fatalf("next %d err %v index %+v", next, err, ix)
	}
	// A batch claiming two records but holding one is refused.
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: 1, NumRecords: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		Records: appendRecord(nil, 0, syncKey("t", 0), syncValue(1, 1))}
	rb.Length = int32(49 + len(rb.Records))
	if _, err := eachBatchSync(rb.AppendTo(nil), 0, syncIndex{}); !errors.Is(err, errBadRecord) {
		t.Fatalf("short batch: %v, want errBadRecord", err)
	}
}

// FuzzEachBatchSync: Fetch bytes from a broker never panic the decoder.
func FuzzEachBatchSync(f *testing.F) {
	f.Add(syncBatch(0, 0, offsetSync{"t", 0, 1, 1}, offsetSync{"t", 0, 2, 2}))
	f.Add(syncBatch(5, 0x20, offsetSync{"x", 0, 0, 0}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = eachBatchSync(b, 0, syncIndex{})
	})
}

func TestMigrateUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"no verb", nil, 2},
		{"unknown verb", []string{"topics"}, 2},
		{"no source", []string{"share-offsets", "--group", "g", "--target-alias", "k"}, 2},
		{"no group", []string{"share-offsets", "--source", "h:1", "--target-alias", "k"}, 2},
		{"neither alias nor topic", []string{"share-offsets", "--source", "h:1", "--group", "g"}, 2},
		{"both alias and topic", []string{"share-offsets", "--source", "h:1", "--group", "g", "--target-alias", "k", "--offset-syncs-topic", "t"}, 2},
		{"stray argument", []string{"share-offsets", "--source", "h:1", "--group", "g", "--target-alias", "k", "extra"}, 2},
		{"unreachable source", []string{"share-offsets", "--source", "127.0.0.1:1", "--group", "g", "--target-alias", "k", "--timeout", "2s"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := runMigrate(tc.args, &out, &errb); got != tc.want {
				t.Fatalf("exit %d, want %d\n%s", got, tc.want, errb.String())
			}
			if errb.Len() == 0 {
				t.Error("no message on stderr")
			}
		})
	}
}
