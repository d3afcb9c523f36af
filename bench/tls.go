package main

// TLS rows: connection set-up (TCP connect, a full TLS handshake and one
// ApiVersions round trip) and franz-go produce and fetch over an SSL
// listener. A session that runs them gives sharq and Kafka a second listener,
// SSL, with the same throw-away certificate: a CA and a server certificate
// (ECDSA P-256, valid for 127.0.0.1) made at run time and handed to both as
// one PEM key store (ssl.keystore.type=PEM, ssl.keystore.location), the way
// Kafka reads PEM key stores. kfake has no TLS listener: n/a.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/interop"
)

const secTLS = "TLS"

// errNoTLS: the broker cannot be given an SSL listener here.
var errNoTLS = errors.New("no TLS listener")

// tlsMaterial is one session's certificate: the key store the broker reads
// and the pool its clients verify against.
type tlsMaterial struct {
	keystore string // PEM: PKCS#8 key, then the server certificate and the CA's
	pool     *x509.CertPool
}

// newTLSMaterial makes a CA and a server certificate for 127.0.0.1 and writes
// the key store under dir.
func newTLSMaterial(dir string) (*tlsMaterial, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sharq bench CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	var ks []byte
	for _, b := range []*pem.Block{{Type: "PRIVATE KEY", Bytes: p8}, {Type: "CERTIFICATE", Bytes: der}, {Type: "CERTIFICATE", Bytes: caDER}} {
		ks = append(ks, pem.EncodeToMemory(b)...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, "keystore.pem")
	if err := os.WriteFile(path, ks, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tlsMaterial{keystore: path, pool: pool}, nil
}

// clientConfig verifies the server certificate and pins the protocol
// version (0: the client offers 1.2 and 1.3 and gets 1.3). No session cache:
// every connection pays a full handshake.
func (m *tlsMaterial) clientConfig(version uint16) *tls.Config {
	c := &tls.Config{RootCAs: m.pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if version != 0 {
		c.MinVersion, c.MaxVersion = version, version
	}
	return c
}

// tlsPreparer is a broker that can also serve an SSL listener.
type tlsPreparer interface {
	// prepareTLS is prepare with an SSL listener beside PLAINTEXT; it
	// returns the node and the SSL listener's address.
	prepareTLS(ctx context.Context, dir string, m *tlsMaterial) (node, string, error)
}

// prepareTLS gives sharq (and sharq-base) an SSL listener; kfake has none.
func (b *goBroker) prepareTLS(ctx context.Context, dir string, m *tlsMaterial) (node, string, error) {
	if !strings.HasPrefix(b.nm, "sharq") {
		return nil, "", errNoTLS
	}
	tport, err := interop.FreePort()
	if err != nil {
		return nil, "", err
	}
	nb := *b
	nb.args = func(port int, data string) []string {
		return []string{
			"--override", fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d", port, tport),
			"--override", "log.dirs=" + data,
			"--override", "ssl.keystore.type=PEM",
			"--override", "ssl.keystore.location=" + m.keystore,
		}
	}
	nd, err := nb.prepare(ctx, dir)
	return nd, fmt.Sprintf("127.0.0.1:%d", tport), err
}

// prepareTLS formats Kafka as prepare does, then adds an SSL listener to its
// server.properties (a later key wins in a Java properties file).
func (b *kafkaBroker) prepareTLS(ctx context.Context, dir string, m *tlsMaterial) (node, string, error) {
	n, err := interop.FormatKafka(ctx, b.j, dir)
	if err != nil {
		return nil, "", err
	}
	tport, err := interop.FreePort()
	if err != nil {
		return nil, "", err
	}
	listeners := fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d,SSL://127.0.0.1:%d", n.Port, n.ControllerPort, tport)
	extra := "listeners=" + listeners + "\nadvertised.listeners=" + listeners +
		"\nlistener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL" +
		"\nssl.keystore.type=PEM\nssl.keystore.location=" + m.keystore + "\n"
	props := filepath.Join(n.Dir, "server.properties")
	f, err := os.OpenFile(props, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, "", fmt.Errorf("open %s: %w", props, err)
	}
	_, werr := f.WriteString(extra)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, "", fmt.Errorf("write %s: %w", props, werr)
	}
	return kafkaNode{n}, fmt.Sprintf("127.0.0.1:%d", tport), nil
}

// wantsTLS: some workload of ws needs the SSL listener.
func wantsTLS(ws []workload) bool {
	return slices.ContainsFunc(ws, func(w workload) bool { return w.tls })
}

// tlsHandshakeConns is how many connections one handshake run opens, and
// tlsHandshakeConc how many clients open them at once.
func tlsHandshakeConns(cfg config) int {
	if cfg.Quick {
		return 300
	}
	return 3000
}

const tlsHandshakeConc = 4

// tlsWorkloads are the TLS rows; they run on the SSL listener a session adds
// when any of them is selected.
func tlsWorkloads(cfg config) []workload {
	var ws []workload
	for _, v := range []struct {
		label   string
		version uint16
	}{{"TLS 1.3", tls.VersionTLS13}, {"TLS 1.2", tls.VersionTLS12}} {
		n := tlsHandshakeConns(cfg)
		name := fmt.Sprintf("%s connection set-up (TCP + handshake + ApiVersions), %d clients", v.label, tlsHandshakeConc)
		ws = append(ws, workload{
			name: name, needs: nil, tls: true,
			metrics: []metricDef{
				{secTLS, name + ": rate", "connections/s", true},
				{secTLS, name + ": p50 latency", "ms", false},
				{secTLS, name + ": p99 latency", "ms", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				// The PLAINTEXT warm-up leaves the JVM's TLS code cold
				// (a first quick run: 34/s cold against 115/s warm), so a
				// third as many connections go first, unmeasured.
				conf := e.tlsMat.clientConfig(v.version)
				if _, err := tlsHandshakes(ctx, e.tlsAddr, conf, n/3, tlsHandshakeConc); err != nil {
					return nil, fmt.Errorf("warm-up: %w", err)
				}
				e.measureFromHere()
				r, err := tlsHandshakes(ctx, e.tlsAddr, conf, n, tlsHandshakeConc)
				if err != nil {
					return nil, err
				}
				return []float64{r.PerSec, r.P50, r.P99}, nil
			},
		})
	}
	for _, size := range cfg.ValueSizes {
		n := cfg.ProduceRecords[size]
		lbl := sizeLabel(size)
		topic := fmt.Sprintf("tls-go-%d", size)
		name := "franz-go producer over TLS " + lbl
		ws = append(ws, workload{
			name: name, needs: needsProduce, tls: true,
			metrics: []metricDef{
				{secTLS, name + ": throughput", "records/s", true},
				{secTLS, name + ": p50 latency", "ms", false},
				{secTLS, name + ": p99 latency", "ms", false},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if err := e.ensureTopic(ctx, topic, 3); err != nil {
					return nil, err
				}
				opts := append(cfg.producerCompression(), kgo.DialTLSConfig(e.tlsMat.clientConfig(0)))
				p, err := goProduce(ctx, e.tlsAddr, topic, n, size, opts...)
				if err != nil {
					return nil, err
				}
				e.filled[topic] = true
				return []float64{p.RecordsPerSec, p.P50, p.P99}, nil
			},
		})
		cname := "franz-go consumer over TLS " + lbl
		ws = append(ws, workload{
			name: cname, needs: needsFetch, tls: true,
			metrics: []metricDef{
				{secTLS, cname + ": throughput", "records/s", true},
				{secTLS, cname + ": bandwidth", "MB/s", true},
			},
			run: func(ctx context.Context, e *env) ([]float64, error) {
				if !e.filled[topic] {
					return nil, errNotFilled
				}
				r, mb, err := goConsume(ctx, e.tlsAddr, topic, n, kgo.DialTLSConfig(e.tlsMat.clientConfig(0)))
				if err != nil {
					return nil, err
				}
				return []float64{r, mb}, nil
			},
		})
	}
	return ws
}

type handshakeResult struct {
	PerSec   float64
	P50, P99 float64 // ms per connection set-up
}

// tlsHandshakes opens n connections to addr from conc clients at once; each
// connects, completes a full handshake with conf, gets an ApiVersions answer
// and closes. The rate is connections set up per second of wall time.
func tlsHandshakes(ctx context.Context, addr string, conf *tls.Config, n, conc int) (handshakeResult, error) {
	lat := make([]float64, n)
	var (
		next     atomic.Int64
		firstErr atomic.Pointer[error]
		wg       sync.WaitGroup
	)
	start := time.Now()
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for ctx.Err() == nil && firstErr.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				var err error
				buf, err = tlsAPIVersions(ctx, addr, conf, int32(i), buf)
				if err != nil {
					err = fmt.Errorf("connection %d: %w", i, err)
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				lat[i] = float64(time.Since(t0)) / float64(time.Millisecond)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if p := firstErr.Load(); p != nil {
		return handshakeResult{}, *p
	}
	if err := ctx.Err(); err != nil {
		return handshakeResult{}, err
	}
	slices.Sort(lat)
	return handshakeResult{PerSec: float64(n) / elapsed.Seconds(), P50: percentile(lat, 50), P99: percentile(lat, 99)}, nil
}

// tlsAPIVersions is one connection set-up: dial, handshake, ApiVersions v3,
// close. buf is reused for the request and the answer.
func tlsAPIVersions(ctx context.Context, addr string, conf *tls.Config, corr int32, buf []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: conf}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return buf, fmt.Errorf("TLS dial %s: %w", addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "sharq-bench"
	req.ClientSoftwareVersion = "1"
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("sharq-bench"))
	buf = f.AppendRequest(buf[:0], req, corr)
	if _, err := conn.Write(buf); err != nil {
		return buf, fmt.Errorf("write ApiVersions: %w", err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return buf, fmt.Errorf("read ApiVersions size: %w", err)
	}
	size := int(binary.BigEndian.Uint32(hdr[:]))
	if size < 4 || size > 1<<20 {
		return buf, fmt.Errorf("ApiVersions response size %d", size)
	}
	buf = slices.Grow(buf[:0], size)[:size]
	if _, err := io.ReadFull(conn, buf); err != nil {
		return buf, fmt.Errorf("read ApiVersions: %w", err)
	}
	if got := int32(binary.BigEndian.Uint32(buf)); got != corr {
		return buf, fmt.Errorf("ApiVersions correlation id %d, want %d", got, corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	if err := resp.ReadFrom(buf[4:]); err != nil { // the response header is v0
		return buf, fmt.Errorf("decode ApiVersions: %w", err)
	}
	if resp.ErrorCode != 0 {
		return buf, fmt.Errorf("ApiVersions error code %d", resp.ErrorCode)
	}
	return buf, nil
}

// tlsNote describes the TLS rows in the report.
func tlsNote(cfg config) string {
	return fmt.Sprintf("TLS: sessions that run the TLS rows give sharq and Kafka an SSL listener beside PLAINTEXT with one "+
		"throw-away ECDSA P-256 certificate (made at run time, a PEM key store: ssl.keystore.type=PEM); kfake has none. "+
		"Connection set-up: %d clients open %d connections in all, each a TCP connect, a full handshake (no session "+
		"resumption) at the pinned version, one ApiVersions v3 round trip and a close, after %d unmeasured ones. "+
		"Produce and fetch over TLS: the franz-go rows' clients with the SSL listener as seed (TLS 1.3).",
		tlsHandshakeConc, tlsHandshakeConns(cfg), tlsHandshakeConns(cfg)/3)
}
