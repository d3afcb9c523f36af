package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
)

// isPoisoned reports whether b is a run of poisonPattern (at any phase).
func isPoisoned(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	phase := bytes.IndexByte(poisonPattern[:], b[0])
	if phase < 0 {
		return false
	}
	for i := range b {
		if b[i] != poisonPattern[(phase+i)%len(poisonPattern)] {
			return false
		}
	}
	return true
}

func TestPoisonBytes(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 17, 4096} {
		b := bytes.Repeat([]byte{7}, n)
		poisonBytes(b)
		if n > 0 && (!isPoisoned(b) || !isPoisoned(b[n/2:])) {
			t.Errorf("%d bytes poisoned as %x", n, b[:min(n, 16)])
		}
	}
}

// swapHandler replaces an API's handler until the test ends. The registry
// is global, so tests that use it do not run in parallel (parallel tests
// start only once every sequential test has returned).
func swapHandler(t *testing.T, key int16, h handlerFunc) {
	e := registry[key]
	old := e.handle
	e.handle = h
	t.Cleanup(func() { e.handle = old })
}

// poisonConn is a raw client connection to a listening server.
type poisonConn struct {
	t  *testing.T
	nc net.Conn
}

func (p *poisonConn) send(req kmsg.Request) {
	p.t.Helper()
	f := encodeFrame(req)
	if _, err := p.nc.Write(binary.BigEndian.AppendUint32(nil, uint32(len(f)))); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.nc.Write(f); err != nil {
		p.t.Fatal(err)
	}
}

func (p *poisonConn) answer() {
	p.t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(p.nc, hdr[:]); err != nil {
		p.t.Fatalf("read response: %v", err)
	}
	if _, err := io.CopyN(io.Discard, p.nc, int64(binary.BigEndian.Uint32(hdr[:]))); err != nil {
		p.t.Fatalf("read response: %v", err)
	}
}

func newPoisonServer(t *testing.T) *poisonConn {
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	cfg.Listeners = []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0, Protocol: "PLAINTEXT"}}
	cfg.AdvertisedListeners = nil
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		<-served
	})
	a := s.Advertised()[0]
	nc, err := net.Dial("tcp", net.JoinHostPort(a.Host, strconv.Itoa(a.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &poisonConn{t: t, nc: nc}
}

// TestPoisonCatchesKeptRequestMemory is the sharqpoison mode's own test:
// handlers that deliberately keep request memory (a JoinGroup's metadata,
// a slice of the frame, on the processor's path while the request is
// parked; a ShareAcknowledge's decoded types, group id and share scratch
// from the reused decoders, and an unknown tag's bytes from the frame, on
// the reader's inline path) find it poisoned from the next request on when
// the tag is set, and intact while their own request is still served. The
// checks run in later requests' handlers on the same connection, which is
// what a real retention bug looks like. Without the tag nothing is
// poisoned: the kept bytes go wrong only when a later frame happens to
// overwrite them, which is why the suite runs its client tests under the
// tag (.ci/test).
func TestPoisonCatchesKeptRequestMemory(t *testing.T) {
	p := newPoisonServer(t)
	type kept struct {
		what  string
		check func() bool // reports whether the memory is poisoned
	}
	// keep is appended to by the handlers and checked (then emptied) by
	// the probe's, all on the connection's goroutines, in request order.
	var keep []kept
	report := make(chan string, 16)
	checkKept := func() {
		for _, k := range keep {
			if got := k.check(); got != poisonFrames {
				report <- fmt.Sprintf("%s: poisoned %v, want %v (poisonFrames)", k.what, got, poisonFrames)
			}
		}
		keep = nil
		report <- ""
	}
	swapHandler(t, 60, func(r *request, kreq kmsg.Request) (kmsg.Response, error) {
		checkKept()
		return kreq.ResponseKind(), nil
	})
	drain := func() {
		t.Helper()
		for msg := range report {
			if msg == "" {
				return
			}
			t.Error(msg)
		}
	}

	// 1. A JoinGroup that keeps its metadata and parks until the reader
	// has read the next frame (into the other buffer).
	release := make(chan struct{})
	swapHandler(t, 11, func(r *request, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.JoinGroupRequest)
		md := req.Protocols[0].Metadata // the bug under test: no copy
		for deadline := time.Now().Add(20 * time.Second); r.c.queued.Load() < 2; {
			if time.Now().After(deadline) {
				report <- "the reader never queued the frame after the JoinGroup"
				break
			}
			time.Sleep(time.Millisecond)
		}
		<-release
		if isPoisoned(md) || !bytes.Equal(md, []byte("kept metadata of a parked join")) {
			report <- fmt.Sprintf("the parked JoinGroup's metadata changed while it was served: %q", md)
		}
		keep = append(keep, kept{"JoinGroup metadata (frame, processor path, parked)", func() bool { return isPoisoned(md) }})
		return req.ResponseKind(), nil
	})
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.MemberID, join.ProtocolType = 9, "g", "m", "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte("kept metadata of a parked join")}}
	probeReq := kmsg.NewPtrDescribeClusterRequest()
	p.send(join)
	p.send(probeReq)
	close(release)
	p.answer()
	p.answer()
	drain()

	// 2. ShareAcknowledges on the reader's inline path: one with an unknown
	// tag (kmsg decodes it; the tag's bytes are the frame's), then one the
	// reused decoder reads (its types and group id are decoder memory),
	// also keeping the share scratch the handler fills.
	inline := make(chan bool, 1)
	swapHandler(t, 79, func(r *request, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.ShareAcknowledgeRequest)
		isInline := r.c.queued.Load() == 0
		defer func() { inline <- isInline }()
		if !isInline {
			return req.ResponseKind(), nil // poisoned on the processor's path too, but that is not this step's
		}
		if req.UnknownTags.Len() > 0 {
			req.UnknownTags.Each(func(_ uint32, v []byte) {
				keep = append(keep, kept{"ShareAcknowledge unknown tag (frame, inline path)", func() bool { return isPoisoned(v) }})
			})
			return req.ResponseKind(), nil
		}
		types := req.Topics[0].Partitions[0].AcknowledgementBatches[0].AcknowledgeTypes
		group := req.GroupID
		sc := r.c.shareScratch()
		in := sc.Reset()
		sc.AddPartition(req.Topics[0].TopicID, req.Topics[0].Partitions[0].Partition)
		sc.AddAck(0, 2, types)
		scTypes := in.Partitions[0].Acks[0].Types
		keep = append(keep,
			kept{"ShareAcknowledge types (decoder memory)", func() bool {
				for _, v := range types {
					if v != poisonInt8 {
						return false
					}
				}
				return true
			}},
			kept{"ShareAcknowledge group id (decoder string)", func() bool { return *group == poisonString }},
			kept{"share scratch acknowledgement types", func() bool {
				for _, v := range scTypes {
					if v != -1 {
						return false
					}
				}
				return true
			}},
		)
		return req.ResponseKind(), nil
	})
	group, member := "share-g", "share-m"
	ack := func(tagged bool) *kmsg.ShareAcknowledgeRequest {
		a := kmsg.NewPtrShareAcknowledgeRequest()
		a.Version, a.GroupID, a.MemberID, a.ShareSessionEpoch = 1, &group, &member, 1
		at := kmsg.NewShareAcknowledgeRequestTopic()
		at.TopicID = [16]byte{1, 2, 3}
		ap := kmsg.NewShareAcknowledgeRequestTopicPartition()
		ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = 0, 2, []int8{1, 2, 3}
		ap.AcknowledgementBatches = append(ap.AcknowledgementBatches, ab)
		at.Partitions = append(at.Partitions, ap)
		a.Topics = append(a.Topics, at)
		if tagged {
			a.UnknownTags.Set(99, []byte("an unknown tag the handler keeps"))
		}
		return a
	}
	for _, tagged := range []bool{true, false} {
		// The reader handles it only when the processor is idle, which it
		// becomes just after writing the last answer: retry until then.
		for attempt := 0; ; attempt++ {
			p.send(ack(tagged))
			p.answer()
			if <-inline {
				break
			}
			if attempt == 1000 {
				t.Fatal("no ShareAcknowledge was handled inline in 1000 attempts")
			}
		}
	}
	p.send(probeReq)
	p.answer()
	drain()
}
