package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

// Every registered key has a handler, a version range kmsg knows, and an
// ApiVersions entry with that range, in key order.
func TestRegistryMatchesKmsg(t *testing.T) {
	apis := registeredAPIs()
	if len(apis) < 15 {
		t.Fatalf("only %d APIs registered", len(apis))
	}
	var av kmsg.ApiVersionsResponse
	fillAPIKeys(&av)
	if len(av.ApiKeys) != len(apis) {
		t.Fatalf("ApiVersions lists %d APIs, the registry %d", len(av.ApiKeys), len(apis))
	}
	for i, e := range apis {
		if e.handle == nil {
			t.Errorf("key %d has no handler", e.key)
		}
		req := kmsg.RequestForKey(e.key)
		if req == nil || e.maxVersion > req.MaxVersion() {
			t.Errorf("key %d: max version %d beyond kmsg", e.key, e.maxVersion)
		}
		if k := av.ApiKeys[i]; k.ApiKey != e.key || k.MinVersion != e.minVersion || k.MaxVersion != e.maxVersion {
			t.Errorf("ApiVersions entry %d is %+v, the registry's key %d v%d-%d", i, k, e.key, e.minVersion, e.maxVersion)
		}
	}
}

// An API's own decoder gives what kmsg decodes, at every version it is
// registered for, for a whole body and for every truncation of it (kmsg's
// error then), so registering a decoder cannot change what a request
// means.
func TestRegistryDecoders(t *testing.T) {
	s := newFuzzServer(t)
	c := newFuzzConn(t, s)
	n := 0
	for _, e := range registeredAPIs() {
		if e.decode == nil {
			continue
		}
		n++
		for v := e.minVersion; v <= e.maxVersion; v++ {
			req := kmsg.RequestForKey(e.key)
			req.SetVersion(v)
			body := req.AppendTo(nil)
			for cut := len(body); cut >= 0; cut-- {
				want := kmsg.RequestForKey(e.key)
				want.SetVersion(v)
				werr := want.ReadFrom(body[:cut])
				got, gerr := e.decode(c, v, body[:cut])
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s v%d, %d of %d bytes: kmsg error %v, decoder error %v", kmsg.NameForKey(e.key), v, cut, len(body), werr, gerr)
				}
				if werr == nil && !bytes.Equal(got.AppendTo(nil), want.AppendTo(nil)) {
					t.Fatalf("%s v%d: decoder gave %+v, kmsg %+v", kmsg.NameForKey(e.key), v, got, want)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no API registers its own decoder (ShareFetch and ShareAcknowledge do)")
	}
}

// The reader handles a frame itself exactly for the APIs registered
// servedInline, and never during a raw SASL exchange.
func TestRegistryInline(t *testing.T) {
	s := newFuzzServer(t)
	c := newFuzzConn(t, s)
	n := 0
	for key := int16(-1); key <= maxAPIKey+1; key++ {
		frame := binary.BigEndian.AppendUint16(nil, uint16(key))
		frame = append(frame, 0, 0)
		e := lookupAPI(key)
		want := e != nil && e.inline
		if got := c.handleInline(frame); got != want {
			t.Errorf("key %d: handleInline %v, registered inline %v", key, got, want)
		}
		if want {
			n++
			c.auth.raw = true
			if c.handleInline(frame) {
				t.Errorf("key %d handled inline during a raw SASL exchange", key)
			}
			c.auth.raw = false
		}
	}
	if n == 0 {
		t.Fatal("no API is served inline (ShareAcknowledge is)")
	}
}

// The request quota charges every API's handling time except of those
// registered waitsInHandler (long polls, rebalances), whose time is mostly
// waiting.
func TestRegistryWaitsInHandler(t *testing.T) {
	s := goldenServer(t)
	ctx := context.Background()
	if err := s.meta.AlterClientQuotas(ctx, []raftmeta.QuotaEntity{{Type: "user", Default: true}}, map[string]string{"request_percentage": "1"}, nil); err != nil {
		t.Fatal(err)
	}
	a, peer := net.Pipe()
	t.Cleanup(func() { a.Close(); peer.Close() })
	go io.Copy(io.Discard, peer)
	c := s.newConn(a, 0)
	waits := 0
	for _, e := range registeredAPIs() {
		req := kmsg.RequestForKey(e.key)
		req.SetVersion(e.maxVersion)
		resp := req.ResponseKind()
		r := &request{s: s, c: c, ctx: ctx, key: e.key, version: e.maxVersion, clientID: "quota-test"}
		// Ten seconds of handling against a 1% request quota.
		throttle := s.throttleFor(r, e, req, resp, 0, 10*time.Second)
		if e.waitsInHandler {
			waits++
		}
		if (throttle == 0) != e.waitsInHandler {
			t.Errorf("%s: throttled %v, registered waitsInHandler %v", kmsg.NameForKey(e.key), throttle, e.waitsInHandler)
		}
	}
	if waits == 0 {
		t.Fatal("no API is registered waitsInHandler (Fetch is)")
	}
}
