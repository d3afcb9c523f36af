package broker_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"sharq/broker/brokertest"
	"sharq/config"
)

// gauge reads one unlabelled series from b's /metrics page.
func gauge(t *testing.T, b *brokertest.Broker, name string) float64 {
	t.Helper()
	v, ok := metricValue(scrapeMetrics(t, b), name)
	if !ok {
		t.Fatalf("/metrics lacks %s", name)
	}
	return v
}

// waitMetric polls /metrics until name reaches at least want.
func waitMetric(t *testing.T, b *brokertest.Broker, name string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for gauge(t, b, name) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed below %v", name, want)
		}
		time.Sleep(5 * time.Millisecond) // polling an observable, not a sync sleep
	}
}

// bigApiVersions is an ApiVersions v0 frame padded to size bytes of frame
// (after the length prefix); the broker answers it whatever the padding.
func bigApiVersions(size int) []byte {
	f := frame(18, 0, 7, make([]byte, size-14))
	if binary.BigEndian.Uint32(f) != uint32(size) {
		panic("bad frame size")
	}
	return f
}

// TestQueuedMaxRequestBytesBoundsInFlight: eight connections send 1 MiB
// frames at once under a 2 MiB queued.max.request.bytes. Two are read, six
// wait unread; all are answered, and the bytes in flight never exceed the
// bound. Without the bound all eight bodies were buffered at once.
func TestQueuedMaxRequestBytesBoundsInFlight(t *testing.T) {
	t.Parallel()
	const frameSize, bound, conns = 1 << 20, 2 << 20, 8
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.MetricsListener = "127.0.0.1:0"
		c.SocketRequestMaxBytes = frameSize
		c.QueuedMaxRequestBytes = bound
	}))
	f := bigApiVersions(frameSize)
	half := len(f) / 2
	cs := make([]net.Conn, conns)
	for i := range cs {
		cs[i] = dial(t, b.Addr)
		if _, err := cs[i].Write(f[:half]); err != nil {
			t.Fatal(err)
		}
	}
	// Two frames hold the whole bound; the other six wait for room.
	waitMetric(t, b, "sharq_request_bytes_waiting_connections", conns-bound/frameSize)
	if got := gauge(t, b, "sharq_request_bytes_in_flight"); got != bound {
		t.Fatalf("in flight %v with %d connections waiting, want %d", got, conns-bound/frameSize, bound)
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(f[half:]); err != nil {
				errs <- err
				return
			}
			resp, err := readResponse(c)
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(resp[:4], []byte{0, 0, 0, 7}) {
				errs <- errors.New("wrong correlation id")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if peak := gauge(t, b, "sharq_request_bytes_in_flight_peak"); peak > bound || peak < frameSize {
		t.Errorf("peak in flight %v, want within [%d, %d]", peak, frameSize, bound)
	}
	if w := gauge(t, b, "sharq_request_bytes_waits_total"); w < conns-bound/frameSize {
		t.Errorf("%v frames waited, want at least %d", w, conns-bound/frameSize)
	}
	if got := gauge(t, b, "sharq_request_bytes_in_flight"); got != 0 {
		t.Errorf("in flight %v after every frame was answered, want 0", got)
	}
}

// TestStalledFrameClosed: slowloris connections, which start a frame and
// then send nothing or dribble a byte at a time, are closed once
// sharq.request.read.timeout.ms has passed, and give their bytes back.
func TestStalledFrameClosed(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.MetricsListener = "127.0.0.1:0"
		c.RequestReadTimeoutMs = timeout.Milliseconds()
	}))
	declare50MiB := binary.BigEndian.AppendUint32(nil, 50<<20)
	cases := []struct {
		name    string
		first   []byte
		dribble bool
	}{
		{"half a header", declare50MiB[:2], false},
		{"header then nothing", declare50MiB, false},
		{"part of the body then nothing", append(append([]byte{}, declare50MiB...), frame(18, 0, 1, make([]byte, 1000))[4:]...), false},
		{"body dribbled a byte at a time", declare50MiB, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, b.Addr)
			start := time.Now()
			if _, err := c.Write(tc.first); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			if tc.dribble {
				go func() {
					tick := time.NewTicker(timeout / 10)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							if _, err := c.Write([]byte{0}); err != nil {
								return
							}
						}
					}
				}()
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := c.Read(make([]byte, 1))
			if err != io.EOF && !errors.Is(err, net.ErrClosed) && !isReset(err) {
				t.Fatalf("read = %v, want the broker to close the connection", err)
			}
			if d := time.Since(start); d < timeout*9/10 {
				t.Fatalf("closed after %v, before the %v request-read timeout", d, timeout)
			}
		})
	}
	t.Cleanup(func() {
		// The subtests ran: every reservation must have been returned.
		if got := gauge(t, b, "sharq_request_bytes_in_flight"); got != 0 {
			t.Errorf("in flight %v after the stalled connections closed, want 0", got)
		}
	})
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && strings.Contains(oe.Err.Error(), "reset")
}
