package broker

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
)

func loadTestConfig(t *testing.T) *config.Config {
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	cfg.Listeners = []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0}}
	cfg.AdvertisedListeners = nil
	cfg.MetricsListener = "127.0.0.1:0"
	return cfg
}

// A node serves the requests that do not need the group and share state
// while its coordinators load; the others wait for them, and /readyz says
// "not ready" until then. Not parallel: it sets coordinatorLoadHook.
func TestCoordinatorsLoadWhileServing(t *testing.T) {
	hold := make(chan struct{})
	entered := make(chan struct{})
	coordinatorLoadHook = func() { close(entered); <-hold }
	defer func() { coordinatorLoadHook = nil }()

	s, err := New(loadTestConfig(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	defer func() {
		release()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.Serve() }()
	<-entered

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Advertised()[0].Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// Served without the coordinators.
	for _, req := range []kmsg.Request{kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrMetadataRequest()} {
		if _, err := cl.Request(ctx, req); err != nil {
			t.Fatalf("%s before the coordinators loaded: %v", kmsg.NameForKey(req.Key()), err)
		}
	}
	checkCoordinatorFreeServed(t, s)
	if code := httpStatus(t, "http://"+s.AdminAddr()+"/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while loading: %d, want 503", code)
	}
	if code := httpStatus(t, "http://"+s.AdminAddr()+"/metrics"); code != http.StatusOK {
		t.Fatalf("/metrics while loading: %d, want 200", code)
	}

	// ListGroups waits for them.
	answered := make(chan error, 1)
	go func() {
		_, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, cl)
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("ListGroups answered before the coordinators loaded (err %v)", err)
	case <-time.After(100 * time.Millisecond):
		// Not a synchronisation: the assertion is that nothing arrives
		// while the load is held; the wait bounds how long we look.
	}
	release()
	if err := <-answered; err != nil {
		t.Fatalf("ListGroups after the load: %v", err)
	}
	if err := s.awaitCoordinators(ctx); err != nil {
		t.Fatal(err)
	}
	if code := httpStatus(t, "http://"+s.AdminAddr()+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz after loading: %d, want 200", code)
	}
}

// A state store that cannot be opened stops the node: Serve returns the
// error, naming the store, instead of serving without groups.
func TestCoordinatorLoadFailureStopsServe(t *testing.T) {
	t.Parallel()
	cfg := loadTestConfig(t)
	// A file where the state store's directory belongs.
	if err := os.WriteFile(filepath.Join(cfg.LogDirs, "state"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.Serve() }()
	select {
	case err := <-serveErr:
		if err == nil || !strings.Contains(err.Error(), "state") {
			t.Fatalf("Serve returned %v, want the state store's error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve still running with an unopenable state store")
	}
	// The listeners are closed: a client gets a refused dial, not a
	// connection that never answers its group requests.
	if c, err := net.DialTimeout("tcp", s.Advertised()[0].Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("listener still accepting after the load failed")
	}
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// checkCoordinatorFreeServed sends every API registered coordinatorFree,
// at its highest version with kmsg's default body, to s while its
// coordinators are held back: each is answered (or, for a body the API
// refuses, ends the connection) without waiting for them, and without
// touching their state, which is not there yet (a handler reading it
// panics, and the panic fails this test).
func checkCoordinatorFreeServed(t *testing.T, s *Server) {
	t.Helper()
	n := 0
	for _, e := range registeredAPIs() {
		if !e.coordinatorFree {
			continue
		}
		n++
		req := kmsg.RequestForKey(e.key)
		req.SetVersion(e.maxVersion)
		if p, ok := req.(*kmsg.ProduceRequest); ok {
			p.Acks = -1 // acks=0 is not answered
		}
		a, peer := net.Pipe()
		go io.Copy(io.Discard, peer)
		c := s.newConn(a, 0)
		done := make(chan error, 1)
		go func() { done <- c.handleFrame(encodeFrame(req)) }()
		select {
		case err := <-done:
			if err != nil {
				t.Logf("%s v%d: %v", kmsg.NameForKey(e.key), e.maxVersion, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s v%d is registered coordinatorFree but waited for the coordinators", kmsg.NameForKey(e.key), e.maxVersion)
		}
		a.Close()
		peer.Close()
	}
	if n == 0 {
		t.Fatal("no API is registered coordinatorFree")
	}
}
