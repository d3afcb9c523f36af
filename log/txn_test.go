package log

import (
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

func txnBatch(pid int64, epoch int16, seq int32, records int) []byte {
	s := idem(pid, epoch, seq, records)
	s.txn = true
	return makeBatch(s)
}

// txnScript drives one partition through open, committed and aborted
// transactions and checks LSO, read_committed bounds and the aborted index
// after each step.
func TestTransactionsInLog(t *testing.T) {
	for _, reopen := range []string{"none", "clean", "crash"} {
		t.Run(reopen, func(t *testing.T) {
			mem := NewMemFS()
			f := newFixture(t, mem)
			cfg := Config{FlushMessages: 1} // every append durable: the crash loses nothing
			l := f.log(cfg)
			// 0-1 plain, 2-4 txn A (pid 1), 5-6 txn B (pid 2)
			mustAppend(t, l, makeBatch(plain(2)))
			mustAppend(t, l, txnBatch(1, 0, 0, 3))
			if got := l.LastStableOffset(); got != 2 {
				t.Fatalf("LSO with A open = %d, want 2", got)
			}
			mustAppend(t, l, txnBatch(2, 0, 0, 2))
			// a non-transactional write from a producer with an open txn
			if _, err := l.Append(makeBatch(idem(1, 0, 3, 1)), 0); !errors.Is(err, ErrInvalidTxnState) || ErrorCode(err) != 48 {
				t.Fatalf("non-txn write in open txn: %v", err)
			}
			b, err := l.ReadCommitted(0, 1<<20, nil)
			if err != nil || NextOffsetAfter(b) != 2 {
				t.Fatalf("read_committed below LSO: next %d, err %v", NextOffsetAfter(b), err)
			}
			// commit A at 7: LSO moves to B's first offset
			if _, err := l.AppendMarker(1, 0, true, 0, 0); err != nil {
				t.Fatal(err)
			}
			if got := l.LastStableOffset(); got != 5 {
				t.Fatalf("LSO after commit A = %d, want 5", got)
			}
			// abort B at 8
			if _, err := l.AppendMarker(2, 0, false, 0, 0); err != nil {
				t.Fatal(err)
			}
			if got, hw := l.LastStableOffset(), l.HighWatermark(); got != hw || hw != 9 {
				t.Fatalf("LSO after abort B = %d, hw %d, want 9", got, hw)
			}
			// a stale marker epoch is refused
			mustAppend(t, l, txnBatch(2, 1, 0, 1)) // 9: B's next txn at epoch 1
			if _, err := l.AppendMarker(2, 0, false, 0, 0); !errors.Is(err, ErrInvalidProducerEpoch) {
				t.Fatalf("stale marker: %v", err)
			}
			if _, err := l.AppendMarker(2, 1, false, 0, 0); err != nil { // 10
				t.Fatal(err)
			}
			switch reopen {
			case "clean":
				f.reopen()
				l = f.log(cfg)
			case "crash":
				img := mem.CrashClone(rand.New(rand.NewPCG(1, 1)))
				// an unclean stop: the producer snapshot is at offset 0 at most,
				// so the markers are replayed and the index rebuilt from the log
				f.m.Close()
				if err := img.Remove(f.partDir() + "/" + segmentName(0, txnIndexSuffix)); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				f.fs = img
				f.open()
				l = f.log(cfg)
			}
			want := []AbortedTxn{{ProducerID: 2, FirstOffset: 5}, {ProducerID: 2, FirstOffset: 9}}
			if got := l.AbortedTransactions(0, 11, nil); !reflect.DeepEqual(got, want) {
				t.Fatalf("aborted [0,11) = %+v, want %+v", got, want)
			}
			if got := l.AbortedTransactions(9, 11, nil); !reflect.DeepEqual(got, want[1:]) {
				t.Fatalf("aborted [9,11) = %+v", got)
			}
			if got := l.AbortedTransactions(0, 5, nil); len(got) != 0 {
				t.Fatalf("aborted [0,5) = %+v, want none", got)
			}
			if got := l.LastStableOffset(); got != 11 {
				t.Fatalf("LSO = %d, want 11", got)
			}
			data, err := l.readSmallFile(segmentName(0, txnIndexSuffix))
			if err != nil {
				t.Fatalf("txnindex: %v", err)
			}
			entries, err := decodeTxnIndex(data, 0)
			if err != nil || len(entries) != 2 || entries[0] != (abortedTxn{producerID: 2, first: 5, last: 8, lso: 9}) || entries[1].last != 10 {
				t.Fatalf("txnindex entries %+v, err %v", entries, err)
			}
		})
	}
}

// An open transaction survives a crash: the LSO stays at its first offset
// until the marker comes, then advances.
func TestOpenTransactionAcrossCrash(t *testing.T) {
	mem := NewMemFS()
	f := newFixture(t, mem)
	l := f.log(Config{FlushMessages: 1})
	mustAppend(t, l, makeBatch(plain(1)))
	mustAppend(t, l, txnBatch(7, 3, 0, 2))
	img := mem.CrashClone(rand.New(rand.NewPCG(2, 2)))
	f.m.Close()
	f.fs = img
	f.open()
	l = f.log(Config{FlushMessages: 1})
	if got := l.LastStableOffset(); got != 1 {
		t.Fatalf("LSO after crash = %d, want 1", got)
	}
	if open := l.OpenTransactions(); !reflect.DeepEqual(open, map[int64]int64{7: 1}) {
		t.Fatalf("open = %v", open)
	}
	if _, err := l.AppendMarker(7, 4, false, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := l.LastStableOffset(); got != 4 {
		t.Fatalf("LSO after abort = %d, want 4", got)
	}
}

// Retention deletes a segment's transaction index with it.
func TestTxnIndexRetention(t *testing.T) {
	f := newFixture(t, NewMemFS())
	cfg := Config{SegmentBytes: 200, RetentionMs: -1}
	l := f.log(cfg)
	mustAppend(t, l, txnBatch(1, 0, 0, 1))
	if _, err := l.AppendMarker(1, 0, false, 0, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		mustAppend(t, l, makeBatch(plain(2)))
	}
	if got := l.AbortedTransactions(0, 100, nil); len(got) != 1 {
		t.Fatalf("aborted before retention: %+v", got)
	}
	cfg.RetentionBytes = 150
	l.SetConfig(cfg)
	if err := l.applyRetention(f.now); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() == 0 {
		t.Fatal("retention deleted nothing")
	}
	if got := l.AbortedTransactions(0, 100, nil); len(got) != 0 {
		t.Fatalf("aborted after retention: %+v", got)
	}
	if _, err := l.readSmallFile(segmentName(0, txnIndexSuffix)); !isNotExist(err) {
		t.Fatalf("txnindex of deleted segment: %v", err)
	}
}

func TestMarkerLayout(t *testing.T) {
	for _, commit := range []bool{false, true} {
		b := buildMarker(5, 2, commit, 9, 1234)
		lim := validateLimits{allowControl: true}
		h, _, err := validateBatch(b, &lim)
		if err != nil {
			t.Fatal(err)
		}
		typ, ce, ok := controlRecord(b[batchHeaderSize:])
		if ce != 9 {
			t.Fatalf("coordinator epoch %d, want 9", ce)
		}
		want := int16(controlAbort)
		if commit {
			want = controlCommit
		}
		if !ok || typ != want || h.ProducerID != 5 || h.ProducerEpoch != 2 || h.Attributes != attrControl|attrTransactional {
			t.Fatalf("marker commit=%v: type %d ok %v header %+v", commit, typ, ok, h)
		}
	}
}

func FuzzTxnIndex(f *testing.F) {
	a := abortedTxn{producerID: 1, first: 2, last: 3, lso: 4}
	f.Add(a.appendTo(nil))
	f.Add([]byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := decodeTxnIndex(b, 0)
		if err != nil {
			return
		}
		var out []byte
		for i := range entries {
			out = entries[i].appendTo(out)
		}
		if string(out) != string(b[:len(b)/txnIndexEntry*txnIndexEntry]) {
			t.Fatalf("round trip differs")
		}
	})
}

// FuzzControlRecord: marker records come from disk (replay) and from the
// WriteTxnMarkers path; the parser must never panic or read out of range.
func FuzzControlRecord(f *testing.F) {
	f.Add(buildMarker(1, 2, true, 3, 4)[batchHeaderSize:])
	f.Add([]byte{0x20, 0, 0, 0, 8, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, ce, ok := controlRecord(b)
		if !ok && (typ != 0 || ce != -1) {
			t.Fatalf("failed parse returned %d %d", typ, ce)
		}
	})
}

// syncHookFS calls onSync before each fsync of a file whose name ends in
// suffix: a test looks at the log while the write path waits on the disk.
type syncHookFS struct {
	FS
	suffix string
	onSync func()
}

func (s *syncHookFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, s.suffix) {
		return f, err
	}
	return &syncHookFile{File: f, onSync: s.onSync}, nil
}

type syncHookFile struct {
	File
	onSync func()
}

func (f *syncHookFile) Sync() error {
	f.onSync()
	return f.File.Sync()
}

// TestAbortVisibleWithItsIndexEntry: while an ABORT marker's aborted-index
// entry is being fsynced, a read_committed reader must not see the aborted
// data without the entry. The marker used to be published (moving the LSO
// past the aborted data) before the entry reached the in-memory index, and
// a fetch in that window handed the aborted records out as committed (the
// franz-go transactional chain test saw more records than were produced).
func TestAbortVisibleWithItsIndexEntry(t *testing.T) {
	var l *Log
	checks := 0
	check := func(when string) {
		t.Helper()
		b, err := l.ReadCommitted(0, 1<<20, nil)
		if err != nil {
			t.Fatalf("%s: read_committed: %v", when, err)
		}
		upTo := NextOffsetAfter(b)
		ab := l.AbortedTransactions(0, upTo, nil)
		// offsets 2-4 are the aborted transaction of producer 2
		if upTo > 2 && !reflect.DeepEqual(ab, []AbortedTxn{{ProducerID: 2, FirstOffset: 2}}) {
			t.Errorf("%s: read_committed returns offsets below %d (LSO %d) with aborted transactions %v: the aborted data of producer 2 reads as committed",
				when, upTo, l.LastStableOffset(), ab)
		}
	}
	fsys := &syncHookFS{FS: NewMemFS(), suffix: txnIndexSuffix, onSync: func() {
		checks++
		check("during the abort index fsync")
	}}
	f := newFixture(t, fsys)
	l = f.log(Config{})
	mustAppend(t, l, makeBatch(plain(2)))  // 0-1
	mustAppend(t, l, txnBatch(2, 0, 0, 3)) // 2-4
	if got := l.LastStableOffset(); got != 2 {
		t.Fatalf("LSO with the transaction open = %d, want 2", got)
	}
	if _, err := l.AppendMarker(2, 0, false, 0, 0); err != nil { // 5
		t.Fatal(err)
	}
	if checks == 0 {
		t.Fatal("the abort index was never fsynced")
	}
	check("after the abort")
	if got := l.LastStableOffset(); got != 6 {
		t.Fatalf("LSO after the abort = %d, want 6", got)
	}
}
