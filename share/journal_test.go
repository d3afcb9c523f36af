package share

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type journalRec struct {
	key Key
	st  State
}

// journalRecs returns n distinct records over a few keys.
func journalRecs(n int) []journalRec {
	out := make([]journalRec, n)
	for i := range out {
		off := int64(100 * i)
		out[i] = journalRec{
			key: Key{Group: fmt.Sprintf("g%d", i%3), TopicID: topic(byte(i % 5)), Partition: int32(i % 7)},
			st: State{StartOffset: off, StateEpoch: int32(i % 4), DeliveryCompleteCount: 2, Batches: []StateBatch{
				{off, off + 1, Acknowledged, 1}, {off + 5, off + 5 + int64(i), Available, int16(1 + i%3)},
			}},
		}
	}
	return out
}

func openJournal(t *testing.T, path string, opts JournalOptions) *Journal {
	t.Helper()
	j, err := OpenJournal(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func writeJournal(t *testing.T, path string, recs []journalRec) {
	t.Helper()
	j, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := j.Append(r.key, &r.st); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func replayAll(j *Journal) ([]journalRec, int, error) {
	var got []journalRec
	n, err := j.Replay(func(k Key, st *State) error {
		c := *st
		c.Batches = append([]StateBatch(nil), st.Batches...)
		got = append(got, journalRec{k, c})
		return nil
	})
	return got, n, err
}

// recordEnds returns the file offset after each record of a valid journal.
func recordEnds(t *testing.T, path string, recs []journalRec) []int64 {
	t.Helper()
	var ends []int64
	var size int64
	for _, r := range recs {
		kb, err := AppendKey(nil, r.key)
		if err != nil {
			t.Fatal(err)
		}
		body := int64(len(EncodeState(nil, &r.st)) + len(kb) + 1) // keys here are < 128 bytes
		size += journalHeader + body
		ends = append(ends, size)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != size {
		t.Fatalf("journal size = %v, %v; computed %d", fi.Size(), err, size)
	}
	return ends
}

func TestJournalRoundTrip(t *testing.T) {
	for _, syncEvery := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", syncEvery), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "share.journal")
			recs := journalRecs(500)
			j := openJournal(t, path, JournalOptions{SyncEveryWrite: syncEvery})
			if n, err := j.Replay(func(Key, *State) error { return nil }); n != 0 || err != nil {
				t.Fatalf("replay of new journal = %d, %v", n, err)
			}
			for _, r := range recs {
				if err := j.Append(r.key, &r.st); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j2 := openJournal(t, path, JournalOptions{SyncEveryWrite: syncEvery})
			got, n, err := replayAll(j2)
			if err != nil || n != len(recs) || !reflect.DeepEqual(got, recs) {
				t.Fatalf("replay = %d records, %v; equal %v", n, err, reflect.DeepEqual(got, recs))
			}
			// Appending after a replay continues the file.
			extra := journalRecs(3)
			for _, r := range extra {
				if err := j2.Append(r.key, &r.st); err != nil {
					t.Fatal(err)
				}
			}
			got, n, err = replayAll(j2)
			if want := append(recs, extra...); err != nil || n != len(want) || !reflect.DeepEqual(got, want) {
				t.Fatalf("replay after append = %d records, %v", n, err)
			}
		})
	}
}

func TestJournalTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.journal")
	recs := journalRecs(4)
	writeJournal(t, path, recs)
	ends := recordEnds(t, path, recs)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lastStart := ends[len(ends)-2]
	for cut := lastStart; cut < ends[len(ends)-1]; cut++ {
		torn := filepath.Join(dir, fmt.Sprintf("torn-%d.journal", cut))
		if err := os.WriteFile(torn, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		var logBuf bytes.Buffer
		j := openJournal(t, torn, JournalOptions{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
		got, n, err := replayAll(j)
		if err != nil || n != len(recs)-1 || !reflect.DeepEqual(got, recs[:len(recs)-1]) {
			t.Fatalf("cut at %d: replay = %d records, %v", cut, n, err)
		}
		if fi, err := os.Stat(torn); err != nil || fi.Size() != lastStart {
			t.Fatalf("cut at %d: file not truncated to %d: %v %v", cut, lastStart, fi.Size(), err)
		}
		if cut > lastStart && !strings.Contains(logBuf.String(), "torn final write") {
			t.Fatalf("cut at %d: no log of the cut: %q", cut, logBuf.String())
		}
		// The journal is usable after the cut: a new record follows the
		// last good one.
		if err := j.Append(recs[3].key, &recs[3].st); err != nil {
			t.Fatal(err)
		}
		if got, n, err := replayAll(j); err != nil || n != len(recs) || !reflect.DeepEqual(got, recs) {
			t.Fatalf("cut at %d: replay after re-append = %d, %v", cut, n, err)
		}
	}
}

// TestJournalCorruptMiddle: one damaged record costs only itself: replay
// skips it and replays every record after it (it used to cut them all as
// a torn tail), reports where and what, names the share-partition when the
// key survived, and cuts only damage at the very end.
func TestJournalCorruptMiddle(t *testing.T) {
	recs := journalRecs(6)
	cases := []struct {
		name     string
		at       func(ends []int64) int64 // byte to damage
		lost     int                      // the record lost
		tail     bool
		keyKnown bool
	}{
		{"crc of record 2", func(e []int64) int64 { return e[1] + 4 }, 2, false, true},
		{"state of record 3", func(e []int64) int64 { return e[3] - 2 }, 3, false, true},
		{"length of record 0", func(e []int64) int64 { return 0 }, 0, false, true},
		{"length of record 4", func(e []int64) int64 { return e[3] }, 4, false, true},
		{"key of record 1", func(e []int64) int64 { return e[0] + journalHeader + 1 }, 1, false, false},
		{"last byte", func(e []int64) int64 { return e[5] - 1 }, 5, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "share.journal")
			writeJournal(t, path, recs)
			ends := recordEnds(t, path, recs)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[tc.at(ends)] ^= 0x80
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var logBuf bytes.Buffer
			j := openJournal(t, path, JournalOptions{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
			got, n, err := replayAll(j)
			want := append(append([]journalRec{}, recs[:tc.lost]...), recs[tc.lost+1:]...)
			if err != nil || n != len(want) || !reflect.DeepEqual(got, want) {
				t.Fatalf("replay = %d records, %v; want the %d other than record %d", n, err, len(want), tc.lost)
			}
			start := int64(0)
			if tc.lost > 0 {
				start = ends[tc.lost-1]
			}
			dmg := j.Damage()
			if len(dmg) != 1 || dmg[0].Offset != start || dmg[0].Bytes != ends[tc.lost]-start || dmg[0].Tail != tc.tail || dmg[0].Torn {
				t.Fatalf("damage %+v, want one at %d of %d bytes (tail %v)", dmg, start, ends[tc.lost]-start, tc.tail)
			}
			if dmg[0].KeyKnown != tc.keyKnown || (tc.keyKnown && dmg[0].Key != recs[tc.lost].key) {
				t.Fatalf("damage names key %v (%v), want %v (%v)", dmg[0].Key, dmg[0].KeyKnown, recs[tc.lost].key, tc.keyKnown)
			}
			wantSize := ends[5]
			msg := "skipping a corrupt record in the middle"
			if tc.tail {
				wantSize, msg = start, "corrupt final record"
			}
			if j.Size() != wantSize {
				t.Fatalf("size after replay = %d, want %d", j.Size(), wantSize)
			}
			if !strings.Contains(logBuf.String(), msg) || !strings.Contains(logBuf.String(), "level=ERROR") {
				t.Fatalf("log %q lacks an error %q", logBuf.String(), msg)
			}
		})
	}
}

// A record whose checksum matches but whose content does not decode is
// not a torn write: replay fails and keeps the file.
func TestJournalUndecodableRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "share.journal")
	body := append([]byte{3}, "abc"...) // key "abc" is not a share key
	rec := make([]byte, journalHeader, journalHeader+len(body))
	rec = append(rec, body...)
	putRecordHeader(rec)
	if err := os.WriteFile(path, rec, 0o644); err != nil {
		t.Fatal(err)
	}
	j := openJournal(t, path, JournalOptions{})
	if _, _, err := replayAll(j); !errors.Is(err, ErrCorruptJournal) {
		t.Fatalf("replay err = %v, want ErrCorruptJournal", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(rec)) {
		t.Fatalf("file changed: %v %v", fi.Size(), err)
	}
}

func TestJournalReplayCallbackError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "share.journal")
	writeJournal(t, path, journalRecs(3))
	j := openJournal(t, path, JournalOptions{})
	boom := errors.New("boom")
	calls := 0
	n, err := j.Replay(func(Key, *State) error {
		calls++
		if calls == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("replay = %d, %v", n, err)
	}
	if got, n, err := replayAll(j); err != nil || n != 3 || len(got) != 3 {
		t.Fatalf("records lost after a callback error: %d, %v", n, err)
	}
}

func TestJournalReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "share.journal")
	recs := journalRecs(10)
	j := openJournal(t, path, JournalOptions{})
	for _, r := range recs {
		if err := j.Append(r.key, &r.st); err != nil {
			t.Fatal(err)
		}
	}
	if j.Size() == 0 {
		t.Fatal("size 0 after appends")
	}
	if err := j.Reset(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 || j.Size() != 0 {
		t.Fatalf("after reset: file %v %v, size %d", fi.Size(), err, j.Size())
	}
	if err := j.Append(recs[7].key, &recs[7].st); err != nil {
		t.Fatal(err)
	}
	if got, n, err := replayAll(j); err != nil || n != 1 || !reflect.DeepEqual(got, recs[7:8]) {
		t.Fatalf("replay after reset = %d, %v", n, err)
	}
}

func TestJournalAppendRejectsBadKey(t *testing.T) {
	j := openJournal(t, filepath.Join(t.TempDir(), "share.journal"), JournalOptions{})
	st := State{StartOffset: 1}
	if err := j.Append(Key{Group: "a\x00b"}, &st); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("append err = %v", err)
	}
	if j.Size() != 0 {
		t.Fatalf("size = %d after a refused append", j.Size())
	}
}

func putRecordHeader(rec []byte) {
	body := rec[journalHeader:]
	binary.BigEndian.PutUint32(rec[0:], uint32(len(body)))
	binary.BigEndian.PutUint32(rec[4:], crc32.Checksum(body, crc32c))
}

// encodeJournal returns the bytes a journal holds after appending recs.
func encodeJournal(t testing.TB, recs []journalRec) []byte {
	path := filepath.Join(t.TempDir(), "enc.journal")
	j, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, r := range recs {
		if err := j.Append(r.key, &r.st); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replayBytes replays a journal file holding data.
func replayBytes(t *testing.T, data []byte) ([]journalRec, int64, error) {
	got, size, _, err := replayBytesDamage(t, data)
	return got, size, err
}

// replayBytesDamage is replayBytes that also returns the damage found.
func replayBytesDamage(t *testing.T, data []byte) ([]journalRec, int64, []JournalDamage, error) {
	path := filepath.Join(t.TempDir(), "fuzz.journal")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	got, _, err := replayAll(j)
	if fi, serr := os.Stat(path); serr != nil || (err == nil && fi.Size() != j.Size()) {
		t.Fatalf("file size %v (%v) != journal size %d", fi.Size(), serr, j.Size())
	}
	return got, j.Size(), append([]JournalDamage(nil), j.Damage()...), err
}

// FuzzJournalReplay: replay of any bytes never panics; what it keeps is a
// prefix of the input that re-encodes byte for byte from the records it
// returned; and any cut of that good prefix replays exactly the records
// wholly inside the cut.
func FuzzJournalReplay(f *testing.F) {
	for _, n := range []int{0, 1, 3, 20} {
		valid := encodeJournal(f, journalRecs(n))
		f.Add(valid, uint32(len(valid)))
		if n > 0 {
			f.Add(valid[:len(valid)-1], uint32(len(valid)/2))
			f.Add(append(bytes.Clone(valid), 0, 0, 0, 9, 1, 2), uint32(7))
			flipped := bytes.Clone(valid)
			flipped[len(flipped)/2] ^= 1
			f.Add(flipped, uint32(len(valid)-3))
		}
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, uint32(4))
	f.Fuzz(func(t *testing.T, data []byte, cut uint32) {
		got, size, dmg, err := replayBytesDamage(t, data)
		if err != nil {
			if !errors.Is(err, ErrCorruptJournal) {
				t.Fatalf("replay error %v is not ErrCorruptJournal", err)
			}
			return
		}
		if size > int64(len(data)) {
			t.Fatalf("good size %d > input %d", size, len(data))
		}
		// The replayed records are the input less the damaged stretches.
		var kept []byte
		pos := int64(0)
		for _, d := range dmg {
			if d.Offset < pos || d.Offset+d.Bytes > int64(len(data)) {
				t.Fatalf("damage %+v out of order or bounds", d)
			}
			kept = append(kept, data[pos:d.Offset]...)
			pos = d.Offset + d.Bytes
		}
		kept = append(kept, data[pos:]...)
		good := encodeJournal(t, got)
		if !bytes.Equal(good, kept) {
			t.Fatalf("%d replayed records re-encode to %d bytes, the undamaged input is %d", len(got), len(good), len(kept))
		}
		size = int64(len(good))
		// Record boundaries of the good prefix.
		var ends []int64
		var off int64
		for off < size {
			off += journalHeader + int64(binary.BigEndian.Uint32(good[off:]))
			ends = append(ends, off)
		}
		c := int64(0)
		if size > 0 {
			c = int64(cut) % (size + 1)
		}
		want := 0
		for want < len(ends) && ends[want] <= c {
			want++
		}
		gotCut, sizeCut, err := replayBytes(t, good[:c])
		if err != nil || len(gotCut) != want || (want > 0 && !reflect.DeepEqual(gotCut, got[:want])) {
			t.Fatalf("cut at %d: %d records, %v; want %d", c, len(gotCut), err, want)
		}
		var wantSize int64
		if want > 0 {
			wantSize = ends[want-1]
		}
		if sizeCut != wantSize {
			t.Fatalf("cut at %d: good size %d, want %d", c, sizeCut, wantSize)
		}
	})
}
