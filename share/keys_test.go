package share

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"sharq/log"
	"sharq/log/clock"
	"sharq/log/recordbatch"
)

// keyedBatch builds a v2 batch of len(keys) records at base; a nil key is
// a null key. gz compresses the records section with gzip.
func keyedBatch(base int64, keys [][]byte, gz bool) []byte {
	var recs []byte
	for i, k := range keys {
		recs = recordbatch.AppendRecord(recs, &recordbatch.Record{OffsetDelta: int32(i), Key: k, Value: []byte("v")})
	}
	h := recordbatch.Header{BaseOffset: base, Magic: recordbatch.MagicV2, LastOffsetDelta: int32(len(keys) - 1),
		ProducerID: -1, RecordCount: int32(len(keys))}
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(recs)
		w.Close()
		recs, h.Attributes = buf.Bytes(), 1
	}
	b := append(h.AppendTo(nil), recs...)
	recordbatch.Seal(b)
	return b
}

func TestAppendRecordKeys(t *testing.T) {
	keys := [][]byte{[]byte("a"), nil, []byte("b"), []byte(""), []byte("a")}
	want := []uint64{HashKey([]byte("a"), false), 0, HashKey([]byte("b"), false), HashKey(nil, false), HashKey([]byte("a"), false)}
	for _, tc := range []struct {
		name string
		gz   bool
		dec  Decompressor
		err  bool
	}{
		{"plain", false, nil, false},
		{"gzip", true, log.Decompress, false},
		{"gzip without a decompressor", true, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := AppendRecordKeys(nil, keyedBatch(10, keys, tc.gz), tc.dec, nil)
			if tc.err {
				if err == nil || len(got) != 0 {
					t.Fatalf("got %v, %v; want an error and nothing appended", got, err)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("got %v, %v; want %v", got, err, want)
			}
		})
	}
	if want[1] != 0 || want[3] == 0 || want[0] == want[2] {
		t.Fatalf("hashes: null %d, empty %d, a %d, b %d", want[1], want[3], want[0], want[2])
	}
	// Truncated records are an error, never a panic.
	b := keyedBatch(0, keys, false)
	binary.BigEndian.PutUint32(b[recordbatch.OffBatchLength:], uint32(len(b)-5-recordbatch.LengthOverhead))
	if _, _, err := AppendRecordKeys(nil, b[:len(b)-5], nil, nil); err == nil {
		t.Fatal("truncated batch decoded")
	}
}

// FuzzRecordKeys: arbitrary batch bytes never panic; on success there is
// one key per offset of the batch.
func FuzzRecordKeys(f *testing.F) {
	f.Add(keyedBatch(0, [][]byte{[]byte("k"), nil}, false))
	f.Add(keyedBatch(5, [][]byte{[]byte("x")}, true))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, err := AppendRecordKeys(nil, b, log.Decompress, nil)
		if err != nil {
			if len(got) != 0 {
				t.Fatalf("error %v with %d keys appended", err, len(got))
			}
			return
		}
		h, _ := recordbatch.Next(b)
		if int64(len(got)) != int64(h.LastOffsetDelta)+1 {
			t.Fatalf("%d keys for a batch of %d offsets", len(got), h.LastOffsetDelta+1)
		}
	})
}

// Through the Manager, with real (compressed) record bytes: members never
// hold two records of one key, and a record of a held key waits while
// other keys flow.
func TestManagerKeyOrdered(t *testing.T) {
	m, lg, clock, _ := newTestManagerWith(t, func(s *Settings) { s.KeyOrdered = true })
	m.decompress = log.Decompress
	k := func(s string) []byte { return []byte(s) }
	lg.mu.Lock()
	lg.data = append(lg.data, keyedBatch(0, [][]byte{k("a"), k("b"), k("a"), nil}, true)...)
	lg.data = append(lg.data, keyedBatch(4, [][]byte{k("c"), k("b")}, false)...)
	lg.end = 6
	lg.mu.Unlock()
	var a, b Scratch
	r := fetchOnce(t, m, &a, "a", 0)
	if fmt.Sprint(r.Acquired) != "[{0 1 1} {3 4 1}]" {
		t.Fatalf("a got %v, want 0-1 and 3-4 (2 and 5 wait for keys a and b)", r.Acquired)
	}
	if r := fetchOnce(t, m, &b, "b", 0); len(r.Acquired) != 0 {
		t.Fatalf("b got %v while a holds every key", r.Acquired)
	}
	// a accepts 0 (key a) and releases 1 (key b) and takes 1 again and 2,
	// never 5 (key b behind 1).
	r = fetchOnce(t, m, &a, "a", 1, AckBatch{0, 0, []AckType{AckAccept}}, AckBatch{1, 1, []AckType{AckRelease}})
	if r.AckCode != 0 || fmt.Sprint(r.Acquired) != "[{1 1 2} {2 2 1}]" {
		t.Fatalf("a after its acks got %v (ack code %d), want 1 (again) and 2", r.Acquired, r.AckCode)
	}
	if r := fetchOnce(t, m, &b, "b", 1); len(r.Acquired) != 0 {
		t.Fatalf("b got %v; 5 must wait for 1 (key b)", r.Acquired)
	}
	// a's locks expire: 1 is still first of key b, so 5 keeps waiting.
	clock.Advance(time.Second)
	if r := fetchOnce(t, m, &b, "b", 2); fmt.Sprint(r.Acquired) != "[{1 1 3} {2 4 2}]" {
		t.Fatalf("after a's locks expired b got %v, want 1 (count 3) and 2-4 (count 2)", r.Acquired)
	}
}

// After a restart the keys are read again from the log: a key-ordered
// share-partition restored from its persisted state delivers the rest in
// key order and drains.
func TestManagerKeyOrderedRestart(t *testing.T) {
	lg := &memLog{}
	per := NewMemPersister()
	settings := func(string) Settings {
		return Settings{LockDuration: time.Second, DeliveryLimit: 5, AutoOffsetReset: "earliest",
			RenewEnabled: true, MaxSessions: 10, FetchMaxBytes: 1 << 20, KeyOrdered: true}
	}
	open := func() *Manager {
		m, err := NewManager(Options{Persister: per, Logs: memLogs{lg}, Clock: clock.NewFake(time.Unix(1000, 0)), Settings: settings, Decompress: log.Decompress})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	keys := func(ks ...string) [][]byte {
		var out [][]byte
		for _, k := range ks {
			out = append(out, []byte(k))
		}
		return out
	}
	lg.mu.Lock()
	lg.data = append(lg.data, keyedBatch(0, keys("a", "b", "a", "b"), true)...)
	lg.data = append(lg.data, keyedBatch(4, keys("c", "a"), false)...)
	lg.end = 6
	lg.mu.Unlock()
	m := open()
	var a Scratch
	if r := fetchOnce(t, m, &a, "a", 0); fmt.Sprint(r.Acquired) != "[{0 1 1} {4 4 1}]" {
		t.Fatalf("before the restart a got %v", r.Acquired)
	}
	// 0 accepted, 1 released: persisted; 4 is still held at the restart.
	fetchOnce(t, m, &a, "a", 1, AckBatch{0, 0, []AckType{AckAccept}}, AckBatch{1, 1, []AckType{AckRelease}})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = open()
	t.Cleanup(func() { m.Close() })
	var b Scratch
	order := map[string][]int64{}
	keyOf := []string{"a", "b", "a", "b", "c", "a"}
	// Each fetch accepts what the previous one acquired.
	var acks []AckBatch
	for epoch := int32(0); epoch < 20; epoch++ {
		r := fetchOnce(t, m, &b, "b", epoch, acks...)
		if r.AckCode != 0 {
			t.Fatalf("acks %v: code %d", acks, r.AckCode)
		}
		acks = acks[:0]
		held := map[string]bool{}
		for _, ar := range r.Acquired {
			for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
				k := keyOf[o]
				if held[k] {
					t.Fatalf("key %s twice in one acquisition: %v", k, r.Acquired)
				}
				held[k] = true
				order[k] = append(order[k], o)
			}
			acks = append(acks, AckBatch{ar.FirstOffset, ar.LastOffset, []AckType{AckAccept}})
		}
		if len(acks) == 0 {
			break
		}
	}
	// 1 (b, released) and 2 (a) and 4 (c) first; 3 and 5 behind 1 and 2.
	if got := fmt.Sprint(order); got != "map[a:[2 5] b:[1 3] c:[4]]" {
		t.Errorf("delivered after the restart %s", got)
	}
	if spso, _, ok := m.Offsets(Key{Group: "g", TopicID: [16]byte{1}}); !ok || spso != 6 {
		t.Fatalf("SPSO %d after the drain, want 6 (order %v)", spso, order)
	}
}
