package share

import (
	"encoding/binary"
	"testing"
)

// rawBatches builds v2 batch framing (base offset, length, magic, last
// offset delta) for noteRead; the bodies are padding.
func rawBatches(base int64, sizes []int, counts []int) []byte {
	var out []byte
	for i, size := range sizes {
		b := make([]byte, size)
		binary.BigEndian.PutUint64(b, uint64(base))
		binary.BigEndian.PutUint32(b[8:], uint32(size-12))
		b[16] = 2 // magic
		binary.BigEndian.PutUint32(b[23:], uint32(counts[i]-1))
		out = append(out, b...)
		base += int64(counts[i])
	}
	return out
}

func TestShareReadSize(t *testing.T) {
	for _, tc := range []struct {
		name              string
		data              []byte
		maxRecords, limit int
		want              int
	}{
		{"nothing read yet: the cap", nil, 500, 50 << 20, readBytes},
		{"nothing read yet, small request limit", nil, 500, 4096, 4096},
		{"100 bytes per offset: 1.5 x 500 records", rawBatches(10, []int{10000, 10000}, []int{100, 100}), 500, 50 << 20, 75000},
		{"tiny records: the floor", rawBatches(0, []int{1000}, []int{100}), 500, 50 << 20, readMin},
		{"big records: past the cap", rawBatches(0, []int{1 << 20}, []int{100}), 500, 50 << 20, 500 * (1 << 20) / 100 * 3 / 2},
		{"request limit wins", rawBatches(0, []int{10000}, []int{100}), 500, 1000, 1000},
		{"corrupt framing ignored", []byte{1, 2, 3}, 500, 50 << 20, readBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p part
			p.noteRead(tc.data)
			if got := p.readSize(tc.maxRecords, tc.limit); got != tc.want {
				t.Fatalf("readSize = %d, want %d (bytes per offset %.1f)", got, tc.want, p.bytesPerOffset)
			}
		})
	}
}

func FuzzNoteRead(f *testing.F) {
	f.Add(rawBatches(5, []int{100, 200}, []int{3, 4}))
	f.Add([]byte{})
	f.Add(make([]byte, 27))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p part
		p.noteRead(data)
		if p.bytesPerOffset < 0 {
			t.Fatalf("negative bytes per offset %f", p.bytesPerOffset)
		}
		if n := p.readSize(500, 50<<20); n < 1 || n > 50<<20 {
			t.Fatalf("readSize %d out of range", n)
		}
	})
}
