package broker

import (
	"errors"
	"io"
	"testing"
)

// trickle yields n bytes in reads of at most step bytes, then err.
type trickle struct {
	n, step int
	err     error
}

func (r *trickle) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(len(p), r.step, r.n)
	r.n -= k
	return k, nil
}

// TestReadBodyAllocatesAsBytesArrive: a frame that declares 100 MiB and
// sends 300 KiB costs a buffer of about that, not of the declared size.
func TestReadBodyAllocatesAsBytesArrive(t *testing.T) {
	cases := []struct {
		name     string
		declared int
		sent     int
		buf      []byte
		wantErr  error
		maxCap   int
	}{
		{"huge declared, little sent", 100 << 20, 300 << 10, make([]byte, 0, 4096), io.ErrUnexpectedEOF, 2*(300<<10) + readChunk},
		{"complete frame into a small buffer", 200 << 10, 200 << 10, nil, nil, 200 << 10},
		{"reuses a big enough buffer", 1000, 1000, make([]byte, 0, 4096), nil, 4096},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &trickle{n: tc.sent, step: 8 << 10, err: io.EOF}
			got, err := readBody(r, tc.buf, tc.declared)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if len(got) != tc.sent {
				t.Fatalf("read %d bytes, want %d", len(got), tc.sent)
			}
			if cap(got) > tc.maxCap {
				t.Fatalf("buffer of %d bytes for %d received, want at most %d", cap(got), tc.sent, tc.maxCap)
			}
		})
	}
}

// TestRecycleDropsBigBuffers: a connection does not keep a big frame's
// buffer once the frame is handled.
func TestRecycleDropsBigBuffers(t *testing.T) {
	if c := cap(recycle(make([]byte, 50<<20))); c > retainFrameBuf {
		t.Fatalf("kept a %d-byte buffer", c)
	}
	small := make([]byte, 100, 64<<10)
	if got := recycle(small); cap(got) != cap(small) || len(got) != 0 {
		t.Fatalf("small buffer not reused: len %d cap %d", len(got), cap(got))
	}
}
