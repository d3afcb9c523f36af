package log

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"
)

// A scan without CRC checks reads only batch headers; it must reach exactly
// the verdict, end, next offset and per-batch callbacks of the scan that
// reads whole batches, for well-formed files and for every kind of damage a
// header shows.
func TestHeaderOnlyScanMatchesFullScan(t *testing.T) {
	var good []byte
	next := int64(0)
	for i, n := range []int{3, 1, 40, 7, 200, 2} {
		b := makeBatch(plain(n))
		binary.BigEndian.PutUint64(b, uint64(next))
		next += int64(n)
		if i == 2 {
			// Records the CRC would reject: invisible without CRC checks.
			b[len(b)-1] ^= 0xff
		}
		good = append(good, b...)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	second := len(makeBatch(plain(3)))
	cases := map[string][]byte{
		"whole":            good,
		"torn tail":        good[:len(good)-5],
		"short tail":       good[:second+20],
		"bad magic":        mutate(func(b []byte) []byte { b[second+16] = 1; return b }),
		"base offset gap":  mutate(func(b []byte) []byte { binary.BigEndian.PutUint64(b[second:], 99); return b }),
		"length too small": mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[second+8:], 3); return b }),
		"length past end":  mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[second+8:], 1<<30); return b }),
		"negative delta":   mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[second+23:], 0xffffffff); return b }),
		"empty":            nil,
	}
	type call struct{ pos, base, last int64 }
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := NewMemFS()
			f, err := fsys.OpenFile("seg.log", os.O_CREATE|os.O_RDWR, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > 0 {
				if _, err := f.WriteAt(data, 0); err != nil {
					t.Fatal(err)
				}
			}
			s := &segment{log: f, logPath: "seg.log", epochLimit: math.MaxInt32}
			scan := func(headerOnly bool) (scanResult, []call) {
				var calls []call
				fn := func(h *batchHeader, pos int64) { calls = append(calls, call{pos, h.BaseOffset, h.LastOffset()}) }
				var res scanResult
				var err error
				if headerOnly {
					res, err = scanSegment(s, 0, int64(len(data)), 0, false, fn)
				} else {
					res, err = fullScan(s, int64(len(data)), fn)
				}
				if err != nil {
					t.Fatal(err)
				}
				return res, calls
			}
			hr, hc := scan(true)
			fr, fc := scan(false)
			if hr != fr || !reflect.DeepEqual(hc, fc) {
				t.Fatalf("header-only scan %+v %v\nfull scan        %+v %v", hr, hc, fr, fc)
			}
			switch name {
			case "whole":
				if hr.reason != "" || hr.next != next || len(hc) != 6 {
					t.Fatalf("whole file: %+v, %d batches", hr, len(hc))
				}
			case "empty":
				if hr.reason != "" || len(hc) != 0 {
					t.Fatalf("empty file: %+v, %d batches", hr, len(hc))
				}
			default:
				if hr.reason == "" {
					t.Fatalf("damage not reported: %+v", hr)
				}
			}
		})
	}
}

// fullScan is scanSegment's loop with whole batches read and checked by
// checkStored without CRC: what every CRC-less scan did before header-only
// scanning.
func fullScan(s *segment, end int64, fn func(h *batchHeader, pos int64)) (scanResult, error) {
	sc := newScanner(s.log, 0, end)
	res := scanResult{end: 0, next: 0}
	for {
		b, reason, err := sc.next()
		if err != nil {
			return res, fmt.Errorf("read: %w", err)
		}
		if b == nil {
			res.reason, res.at = reason, sc.pos
			return res, nil
		}
		if r := checkStored(b, res.next, false); r != "" {
			res.reason, res.at = r, sc.pos
			return res, nil
		}
		h := parseHeader(b)
		fn(&h, sc.pos)
		sc.advance(int64(h.Size))
		res.end, res.next = sc.pos, h.LastOffset()+1
	}
}
