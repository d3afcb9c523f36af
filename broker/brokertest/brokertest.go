// Package brokertest starts in-process sharq brokers for tests, the way
// net/http/httptest starts servers: on a free loopback port, with a fresh
// data directory, stopped by t.Cleanup.
package brokertest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sharq/broker"
	"sharq/config"
)

// Broker is a running in-process broker.
type Broker struct {
	t      testing.TB
	Dir    string // log.dirs
	Addr   string // host:port clients bootstrap from
	Config *config.Config
	Server *broker.Server
	// SchemaRegistryURL is the schema registry's base URL (WithSchemaRegistry).
	SchemaRegistryURL string

	port    int
	bopts   broker.Options
	logDone atomic.Bool
	serveCh chan error
}

// Option adjusts the config before the broker starts.
type Option func(*config.Config)

// WithConfig sets config fields directly.
func WithConfig(f func(*config.Config)) Option { return Option(f) }

// WithListener replaces the listener with one of the given name and
// security protocol (SSL, SASL_PLAINTEXT, SASL_SSL), on a free port.
func WithListener(name, protocol string) Option {
	return func(c *config.Config) {
		c.Listeners = []config.Listener{{Name: name, Host: "127.0.0.1", Port: 0, Protocol: protocol}}
		if c.ListenerSecurityProtocolMap == nil {
			c.ListenerSecurityProtocolMap = map[string]string{}
			for _, p := range []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"} {
				c.ListenerSecurityProtocolMap[p] = p
			}
		}
		c.ListenerSecurityProtocolMap[name] = protocol
	}
}

// WithSetting sets a key as a config file would (ssl.*, sasl.*,
// listener.name.*, authorizer keys).
func WithSetting(key, value string) Option {
	return func(c *config.Config) { c.SetExplicit(key, value) }
}

// WithSchemaRegistry serves the schema registry on a free loopback port
// (SchemaRegistryURL); a restart keeps the port.
func WithSchemaRegistry() Option {
	return WithSetting("schema.registry.listeners", "http://127.0.0.1:0")
}

// WithDir reuses a data directory (e.g. one a crashed subprocess wrote).
func WithDir(dir string) Option { return func(c *config.Config) { c.LogDirs = dir } }

// New starts a broker and registers its shutdown with t.Cleanup.
func New(t testing.TB, opts ...Option) *Broker {
	t.Helper()
	return NewWithOptions(t, broker.Options{}, opts...)
}

// NewWithOptions is New with broker options (e.g. the partition logs on a
// log.FaultFS), kept across restarts.
func NewWithOptions(t testing.TB, bopts broker.Options, opts ...Option) *Broker {
	t.Helper()
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	cfg.Listeners = []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0, Protocol: "PLAINTEXT"}}
	cfg.AdvertisedListeners = nil
	for _, o := range opts {
		o(cfg)
	}
	b := &Broker{t: t, Dir: cfg.LogDirs, Config: cfg, bopts: bopts}
	b.start()
	t.Cleanup(func() {
		b.Stop()
		b.logDone.Store(true)
	})
	return b
}

func (b *Broker) start() {
	b.t.Helper()
	cfg := *b.Config
	if b.port != 0 {
		// A restart keeps the address so connected clients find it again.
		l := b.Config.Listeners[0]
		cfg.Listeners = []config.Listener{{Name: l.Name, Host: "127.0.0.1", Port: b.port, Protocol: l.Protocol}}
	}
	logger := slog.New(slog.NewTextHandler(testWriter{b.t, &b.logDone}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if os.Getenv("SHARQ_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s, err := broker.NewWithOptions(&cfg, logger, b.bopts)
	if err != nil {
		b.t.Fatalf("start broker: %v", err)
	}
	if err := s.Listen(); err != nil {
		b.t.Fatalf("listen: %v", err)
	}
	adv := s.Advertised()[0]
	if sr := s.SchemaRegistryAddrs(); len(sr) > 0 {
		b.SchemaRegistryURL = sr[0]
		b.Config.SetExplicit("schema.registry.listeners", strings.Join(sr, ","))
	}
	b.Server = s
	b.port = adv.Port
	b.Addr = fmt.Sprintf("%s:%d", adv.Host, adv.Port)
	b.serveCh = make(chan error, 1)
	go func() { b.serveCh <- s.Serve() }()
}

// Stop shuts the broker down gracefully; it may be called more than once.
func (b *Broker) Stop() {
	if b.Server == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Server.Shutdown(ctx); err != nil {
		b.t.Errorf("shutdown broker: %v", err)
	}
	if err := <-b.serveCh; err != nil && err != broker.ErrServerClosed {
		b.t.Errorf("serve: %v", err)
	}
	// A panic in a handler closes only its connection, so a test would
	// pass over it; every one is a bug.
	if n := b.Server.RecoveredPanics(); n > 0 {
		b.t.Errorf("the broker recovered %d panics while serving (logged with their stacks)", n)
	}
	b.Server = nil
}

// Restart stops the broker and starts it again on the same data directory
// and port.
func (b *Broker) Restart() {
	b.t.Helper()
	b.Stop()
	b.start()
}

// testWriter sends broker logs to the test log, so they show only for
// failing tests.
// After the test ends, t.Log panics, so late lines go nowhere.
type testWriter struct {
	t    testing.TB
	done *atomic.Bool
}

func (w testWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
