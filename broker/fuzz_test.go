package broker

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
)

// newFuzzServer opens a server on a temp dir without listening.
func newFuzzServer(t testing.TB) *Server {
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	s.advertised = []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}
	return s
}

// newFuzzConn is a conn whose peer discards everything and whose context is
// already cancelled, so long-polls answer at once.
func newFuzzConn(t testing.TB, s *Server) *conn {
	a, b := net.Pipe()
	go io.Copy(io.Discard, b)
	t.Cleanup(func() { a.Close(); b.Close() })
	c := s.newConn(a, 0)
	c.cancel()
	return c
}

// FuzzHandleFrame feeds arbitrary request frames (without the size prefix)
// through header parsing, decoding and the handlers: nothing may panic.
func FuzzHandleFrame(f *testing.F) {
	// Seeds: a valid request of every registered API at its min and max
	// version, plus truncations of them.
	for _, e := range registeredAPIs() {
		for _, v := range []int16{e.minVersion, e.maxVersion} {
			req := kmsg.RequestForKey(e.key)
			req.SetVersion(v)
			if d, ok := req.(interface{ Default() }); ok {
				d.Default()
			}
			req.SetVersion(v)
			b := binary.BigEndian.AppendUint16(nil, uint16(e.key))
			b = binary.BigEndian.AppendUint16(b, uint16(v))
			b = binary.BigEndian.AppendUint32(b, 1)
			b = binary.BigEndian.AppendUint16(b, 1)
			b = append(b, 'f')
			if req.IsFlexible() {
				b = append(b, 0)
			}
			b = req.AppendTo(b)
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})

	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) < 8 {
			return // the reader rejects these before handleFrame
		}
		c := newFuzzConn(t, s)
		_ = c.handleFrame(frame)
	})
}

func TestSkipTags(t *testing.T) {
	cases := []struct {
		in   []byte
		rest int
		ok   bool
	}{
		{[]byte{0}, 0, true},
		{[]byte{0, 9, 9}, 2, true},
		{[]byte{1, 5, 2, 'a', 'b', 7}, 1, true},
		{[]byte{1, 5, 9, 'a'}, 0, false},
		{[]byte{}, 0, false},
		{[]byte{0x80}, 0, false},
	}
	for i, c := range cases {
		rest, err := skipTags(c.in)
		if (err == nil) != c.ok {
			t.Errorf("case %d: err %v", i, err)
			continue
		}
		if c.ok && len(rest) != c.rest {
			t.Errorf("case %d: %d bytes left, want %d", i, len(rest), c.rest)
		}
	}
}
