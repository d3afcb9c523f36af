package broker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker"
	"sharq/broker/brokertest"
	"sharq/broker/security/sectest"
	"sharq/config"
)

// tlsBroker starts a broker with one SSL listener and the given settings.
func tlsBroker(t *testing.T, settings map[string]string) *brokertest.Broker {
	t.Helper()
	opts := []brokertest.Option{brokertest.WithListener("SSL", "SSL")}
	for k, v := range settings {
		opts = append(opts, brokertest.WithSetting(k, v))
	}
	return brokertest.New(t, opts...)
}

func tlsClient(t *testing.T, b *brokertest.Broker, cfg *tls.Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, b, append([]kgo.Opt{kgo.DialTLSConfig(cfg)}, opts...)...)
}

// TestTLSKeyStores serves franz-go over TLS from every key store form
// Kafka accepts: inline PEM, a PEM file, PKCS12 (also as the default type
// JKS, which Java reads too), with per-listener keys.
func TestTLSKeyStores(t *testing.T) {
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	dir := t.TempDir()
	pemFile := srv.WritePEM(t, dir)
	p12 := srv.WritePKCS12(t, dir, "store-pw", ca)
	tests := []struct {
		name     string
		settings map[string]string
	}{
		{"inline PEM", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM, "ssl.keystore.key": srv.KeyPEM}},
		{"PEM file", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pemFile}},
		{"PKCS12", map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": p12, "ssl.keystore.password": "store-pw"}},
		{"PKCS12 as JKS", map[string]string{"ssl.keystore.location": p12, "ssl.keystore.password": "store-pw"}},
		{"per listener", map[string]string{"listener.name.ssl.ssl.keystore.location": p12, "listener.name.ssl.ssl.keystore.password": "store-pw",
			"ssl.keystore.location": "/nonexistent"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tlsBroker(t, tc.settings)
			cl := tlsClient(t, b, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
			mustCreateTopic(t, newAdminFrom(cl), "t", 1, nil)
			produceSync(t, cl, &kgo.Record{Topic: "t", Value: []byte("over tls")})
			recs := consumeN(t, b, "t", 1, 1, kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}))
			if string(recs[0].Value) != "over tls" {
				t.Fatalf("got %q", recs[0].Value)
			}
		})
	}
}

// TestTLSBadKeyStores: a broker with a broken key store refuses to start
// with an error naming the key.
func TestTLSBadKeyStores(t *testing.T) {
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	other := ca.Issue(t, pkix.Name{CommonName: "other"})
	dir := t.TempDir()
	p12 := srv.WritePKCS12(t, dir, "store-pw", ca)
	tests := []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": p12, "ssl.keystore.password": "wrong"}, "ssl.keystore.password"},
		{map[string]string{"ssl.keystore.location": dir + "/missing.p12"}, "ssl.keystore.location"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM, "ssl.keystore.key": other.KeyPEM}, "does not match"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM, "ssl.keystore.key": "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"}, "set ssl.key.password"},
	}
	for _, tc := range tests {
		cfg := brokertestConfig(t, tc.settings)
		_, err := newServer(cfg)
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.settings, err, tc.want)
		}
	}
}

// TestMutualTLS: ssl.client.auth=required refuses a client without a
// certificate and accepts one signed by the trust store's CA; requested
// accepts both. Trust stores in PEM and PKCS12.
func TestMutualTLS(t *testing.T) {
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	client := ca.Issue(t, pkix.Name{CommonName: "alice", Organization: []string{"Org"}})
	strangerCA := sectest.NewCA(t)
	stranger := strangerCA.Issue(t, pkix.Name{CommonName: "mallory"})
	dir := t.TempDir()
	base := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM, "ssl.keystore.key": srv.KeyPEM}
	for _, trust := range []map[string]string{
		{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.PEM},
		{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.WritePEM(t, dir)},
		{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": ca.WriteTrustPKCS12(t, dir, "tpw"), "ssl.truststore.password": "tpw"},
	} {
		for _, mode := range []string{"required", "requested"} {
			settings := map[string]string{"ssl.client.auth": mode}
			for k, v := range base {
				settings[k] = v
			}
			for k, v := range trust {
				settings[k] = v
			}
			b := tlsBroker(t, settings)
			dial := func(certs ...tls.Certificate) error {
				c, err := tls.Dial("tcp", b.Addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", Certificates: certs})
				if err != nil {
					return err
				}
				defer c.Close()
				// TLS 1.3 reports a refused client certificate on the first read.
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(apiVersionsFrame()); err != nil {
					return err
				}
				_, err = io.ReadFull(c, make([]byte, 4))
				return err
			}
			if err := dial(client.TLS()); err != nil {
				t.Errorf("%s %v: client with a trusted certificate: %v", mode, trust, err)
			}
			if err := dial(stranger.TLS()); err == nil {
				t.Errorf("%s %v: a certificate from another CA was accepted", mode, trust)
			}
			err := dial()
			if mode == "required" && err == nil {
				t.Errorf("required %v: a client without a certificate was accepted", trust)
			}
			if mode == "requested" && err != nil {
				t.Errorf("requested %v: a client without a certificate was refused: %v", trust, err)
			}
		}
	}
	// franz-go with a client certificate.
	b := tlsBroker(t, map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM, "ssl.keystore.key": srv.KeyPEM,
		"ssl.client.auth": "required", "ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.PEM})
	cl := tlsClient(t, b, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", Certificates: []tls.Certificate{client.TLS()}})
	mustCreateTopic(t, newAdminFrom(cl), "m", 1, nil)
	produceSync(t, cl, &kgo.Record{Topic: "m", Value: []byte("mtls")})
}

// TestTLSVersions: only TLS 1.2 and 1.3 are served, and
// ssl.enabled.protocols narrows that.
func TestTLSVersions(t *testing.T) {
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	base := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM, "ssl.keystore.key": srv.KeyPEM}
	b := tlsBroker(t, base)
	only12 := map[string]string{"ssl.enabled.protocols": "TLSv1.2"}
	for k, v := range base {
		only12[k] = v
	}
	b12 := tlsBroker(t, only12)
	tests := []struct {
		b        *brokertest.Broker
		min, max uint16
		ok       bool
	}{
		{b, tls.VersionTLS10, tls.VersionTLS11, false},
		{b, tls.VersionTLS12, tls.VersionTLS12, true},
		{b, tls.VersionTLS13, tls.VersionTLS13, true},
		{b12, tls.VersionTLS13, tls.VersionTLS13, false},
		{b12, tls.VersionTLS12, tls.VersionTLS13, true},
	}
	for _, tc := range tests {
		c, err := tls.Dial("tcp", tc.b.Addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", MinVersion: tc.min, MaxVersion: tc.max})
		if err == nil {
			c.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("client TLS %x-%x: err = %v, want ok=%v", tc.min, tc.max, err, tc.ok)
		}
	}
}

// TestTLSHandshakeTimeout: a peer that connects and sends nothing (or
// garbage) is closed after sharq.ssl.handshake.timeout.ms.
func TestTLSHandshakeTimeout(t *testing.T) {
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	b := tlsBroker(t, map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM, "ssl.keystore.key": srv.KeyPEM,
		"sharq.ssl.handshake.timeout.ms": "200"})
	for _, send := range [][]byte{nil, {0x16, 0x03, 0x01, 0x00}, apiVersionsFrame()} {
		c, err := net.Dial("tcp", b.Addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(send)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("sent %x: the broker kept the connection open past the handshake timeout", send)
		}
		c.Close()
	}
}

func newAdminFrom(cl *kgo.Client) *kadm.Client { return kadm.NewClient(cl) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// brokertestConfig is the config brokertest would start an SSL broker with.
func brokertestConfig(t *testing.T, settings map[string]string) *config.Config {
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	brokertest.WithListener("SSL", "SSL")(cfg)
	for k, v := range settings {
		cfg.SetExplicit(k, v)
	}
	return cfg
}

// newServer opens (and at once shuts down) a server, returning New's error.
func newServer(cfg *config.Config) (*broker.Server, error) {
	s, err := broker.New(cfg, nil)
	if err == nil {
		s.Shutdown(context.Background())
	}
	return s, err
}

// apiVersionsFrame is an ApiVersions v0 request frame.
func apiVersionsFrame() []byte {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(0)
	body := req.AppendTo(nil)
	b := binary.BigEndian.AppendUint32(nil, uint32(2+2+4+2+len(body)))
	b = binary.BigEndian.AppendUint16(b, 18)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, 0) // empty client id
	return append(b, body...)
}

// FuzzTLSHandshake sends arbitrary bytes to an SSL listener: the broker
// closes the connection (it never hangs on a peer that stopped sending) and
// keeps serving real clients.
func FuzzTLSHandshake(f *testing.F) {
	ca := sectest.NewCA(f)
	srv := ca.Issue(f, pkix.Name{CommonName: "localhost"})
	b := brokertest.New(f, brokertest.WithListener("SSL", "SSL"),
		brokertest.WithSetting("ssl.keystore.type", "PEM"),
		brokertest.WithSetting("ssl.keystore.certificate.chain", srv.CertPEM),
		brokertest.WithSetting("ssl.keystore.key", srv.KeyPEM))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00})
	f.Add(apiVersionsFrame())
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Cleanup(func() { // runs before the broker's own cleanup stops it
		c, err := tls.Dial("tcp", b.Addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
		if err != nil {
			f.Errorf("a real client after the fuzzing: %v", err)
			return
		}
		c.Close()
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", b.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(data)
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection still open 10s after %x", data)
		}
	})
}

// BenchmarkTLSHandshake: full TLS 1.3 handshakes (ECDSA P-256) against an
// SSL listener, one connection each, as a client reconnecting would.
func BenchmarkTLSHandshake(b *testing.B) {
	ca := sectest.NewCA(b)
	srv := ca.Issue(b, pkix.Name{CommonName: "localhost"})
	br := brokertest.New(b, brokertest.WithListener("SSL", "SSL"),
		brokertest.WithSetting("ssl.keystore.type", "PEM"),
		brokertest.WithSetting("ssl.keystore.certificate.chain", srv.CertPEM),
		brokertest.WithSetting("ssl.keystore.key", srv.KeyPEM))
	cfg := &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", ClientSessionCache: nil}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := tls.Dial("tcp", br.Addr, cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
}
