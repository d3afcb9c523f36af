package share

import (
	"reflect"
	"testing"
	"time"

	"sharq/log/recordbatch"
)

// share.isolation.level=read_committed through the Manager: acquisition
// stops at the LSO, an aborted transaction's records are archived (never
// delivered) and the SPSO moves past them and past the markers; a
// read_uncommitted group over the same log gets everything. Marker offsets
// are acquired with their neighbours (the client gap-acknowledges them, as
// Kafka's does) but their records are never delivered as data.
func TestManagerReadCommitted(t *testing.T) {
	const tx, ctl = recordbatch.AttrTransactional, recordbatch.AttrTransactional | recordbatch.AttrControl
	for _, tc := range []struct {
		name          string
		readCommitted bool
		first         []AcquiredRecords // first fetch, open transaction at 6
		spso          int64             // after accepting the first fetch
		second        []AcquiredRecords // after the open transaction commits
	}{
		{"read_committed", true, []AcquiredRecords{{0, 2, 1}, {5, 5, 1}}, 6, []AcquiredRecords{{6, 8, 1}}},
		{"read_uncommitted", false, []AcquiredRecords{{0, 7, 1}}, 8, []AcquiredRecords{{8, 8, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, lg, _ := newTestManager(t)
			m.settings = func(string) Settings {
				return Settings{LockDuration: time.Second, DeliveryLimit: 5, AutoOffsetReset: "earliest",
					RenewEnabled: true, MaxSessions: 10, FetchMaxBytes: 1 << 20, ReadCommitted: tc.readCommitted}
			}
			var data []byte
			data = append(data, rawBatch(0, 2, tx, 1)...)  // committed txn of producer 1
			data = append(data, rawBatch(2, 1, ctl, 1)...) // its COMMIT marker
			data = append(data, rawBatch(3, 2, tx, 2)...)  // aborted txn of producer 2
			data = append(data, rawBatch(5, 1, ctl, 2)...) // its ABORT marker
			data = append(data, rawBatch(6, 2, tx, 3)...)  // open txn of producer 3
			lg.appendRaw(data, 8)
			lg.mu.Lock()
			lg.lso, lg.aborted = 6, []AbortedTxn{{ProducerID: 2, FirstOffset: 3}}
			lg.mu.Unlock()

			var a Scratch
			r := fetchOnce(t, m, &a, "a", 0)
			if !reflect.DeepEqual(r.Acquired, tc.first) {
				t.Fatalf("first fetch acquired %+v, want %+v", r.Acquired, tc.first)
			}
			var acks []AckBatch
			for _, ar := range r.Acquired {
				acks = append(acks, AckBatch{ar.FirstOffset, ar.LastOffset, []AckType{AckAccept}})
			}
			r = fetchOnce(t, m, &a, "a", 1, acks...)
			if r.AckCode != 0 {
				t.Fatalf("accept: code %d", r.AckCode)
			}
			if len(r.Acquired) != 0 {
				t.Fatalf("fetch with the transaction open acquired %+v", r.Acquired)
			}
			if spso, _, ok := m.Offsets(Key{Group: "g", TopicID: [16]byte{1}}); !ok || spso != tc.spso {
				t.Fatalf("SPSO %d (ok %v), want %d", spso, ok, tc.spso)
			}

			// Producer 3 commits: the LSO moves to the end.
			lg.appendRaw(rawBatch(8, 1, ctl, 3), 1)
			lg.mu.Lock()
			lg.lso = -1
			lg.mu.Unlock()
			r = fetchOnce(t, m, &a, "a", 2)
			if !reflect.DeepEqual(r.Acquired, tc.second) {
				t.Fatalf("after the commit acquired %+v, want %+v", r.Acquired, tc.second)
			}
		})
	}
}
