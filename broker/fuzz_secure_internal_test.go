package broker

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"sharq/broker/security/sectest"
	"sharq/config"
)

// FuzzSecureListeners (issue 26 item 3) drives a broker with an authorizer
// (allow.everyone.if.no.acl.found=false) over real sockets on three
// listeners, SASL_PLAINTEXT, SASL_SSL and SSL: random SASL handshakes (v0
// raw tokens and v1), PLAIN tokens and SCRAM exchanges, valid logins as a
// principal without ACLs, truncated TLS handshakes and records, then
// structured requests of every registered API and version. Per input it
// fails on
//   - a recovered panic (the broker survives them per connection, so a
//     crash would never show: Server.RecoveredPanics must stay 0),
//   - a hang: a request neither answered nor the connection closed within
//     hangAfter, or a broken TLS stream not closed within it,
//   - an undecodable answer, or one that leaks a seeded secret (leaks),
//   - heap growth: the live heap, checked every memEvery inputs, must stay
//     within memSlack of what it was after the first check.
//
// Run it for long with
//
//	nice -n 19 go test ./broker -run '^$' -fuzz FuzzSecureListeners -parallel 1 -fuzztime 1h
//
// Findings stay in testdata/fuzz/FuzzSecureListeners, replayed by go test.
func FuzzSecureListeners(f *testing.F) {
	env := newSecureEnv(f)
	for mode := range 64 {
		f.Add(uint8(mode*4+mode%3), "PLAIN", []byte("\x00alice\x00alice-pw"), []byte("c=biws,r=x,p=AAAA"), []byte{byte(mode), 3, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	f.Add(uint8(2<<5), "SCRAM-SHA-256", []byte("n,,n=alice,r=abc"), []byte("c=biws,r=abcsrv,p=AAAA"), []byte{0, 0})
	f.Add(uint8(3<<5|1), "SCRAM-SHA-512", []byte("n,a=bob,n=alice,r=x"), []byte(",p="), []byte{1, 1})
	f.Add(uint8(0x08|1), "", []byte{0x16, 0x03, 0x01, 0x00}, []byte{}, []byte{})
	f.Add(uint8(0x10|2), "", []byte{0x17, 0x03, 0x03, 0x40, 0x00}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, mode uint8, mech string, first, final, reqs []byte) {
		env.run(t, mode, mech, first, final, reqs)
		if n := env.s.RecoveredPanics(); n != 0 {
			t.Fatalf("%d panics recovered while serving (see the broker log above)", n)
		}
		env.checkMemory(t)
	})
}

const (
	hangAfter = 10 * time.Second
	memEvery  = 256
	memSlack  = 256 << 20
)

type secureEnv struct {
	*leakEnv
	addrs  map[string]string // listener name -> address
	tlsCfg *tls.Config
	hello  []byte // a real TLS ClientHello record, to truncate

	inputs   atomic.Int64
	baseHeap atomic.Uint64
}

func newSecureEnv(tb testing.TB) *secureEnv {
	ca := sectest.NewCA(tb)
	srv := ca.Issue(tb, pkix.Name{CommonName: "localhost"})
	const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw";`
	le := newLeakEnv(tb, func(c *config.Config) {
		c.Listeners = []config.Listener{
			{Name: "SASL_PLAINTEXT", Host: "127.0.0.1", Protocol: "SASL_PLAINTEXT"},
			{Name: "SASL_SSL", Host: "127.0.0.1", Protocol: "SASL_SSL"},
			{Name: "SSL", Host: "127.0.0.1", Protocol: "SSL"},
		}
		c.AdvertisedListeners = nil
		c.ListenerSecurityProtocolMap = map[string]string{"SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL", "SSL": "SSL"}
		for k, v := range map[string]string{
			"sasl.enabled.mechanisms":                             "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
			"listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS,
			"listener.name.sasl_ssl.plain.sasl.jaas.config":       plainJAAS,
			"sharq.scram.bootstrap":                               "SCRAM-SHA-256=[name=alice,password=alice-pw] SCRAM-SHA-512=[name=alice,password=alice-pw]",
			"ssl.keystore.type":                                   "PEM",
			"ssl.keystore.certificate.chain":                      srv.CertPEM,
			"ssl.keystore.key":                                    srv.KeyPEM,
		} {
			c.SetExplicit(k, v)
		}
	})
	if err := le.s.Listen(); err != nil {
		tb.Fatal(err)
	}
	go le.s.Serve()
	e := &secureEnv{leakEnv: le, addrs: map[string]string{}, tlsCfg: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}}
	for _, l := range le.s.Advertised() {
		e.addrs[l.Name] = net.JoinHostPort(l.Host, fmt.Sprint(l.Port))
	}
	e.hello = clientHello(tb, e.tlsCfg)
	return e
}

// clientHello captures the first record a TLS client sends.
func clientHello(tb testing.TB, cfg *tls.Config) []byte {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Client(a, cfg).Handshake()
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(b, hdr); err != nil {
		tb.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(b, body); err != nil {
		tb.Fatal(err)
	}
	return append(hdr, body...)
}

func (e *secureEnv) checkMemory(t *testing.T) {
	if e.inputs.Add(1)%memEvery != 0 {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if e.baseHeap.CompareAndSwap(0, ms.HeapAlloc) {
		return
	}
	if base := e.baseHeap.Load(); ms.HeapAlloc > base+memSlack {
		t.Fatalf("live heap %d MiB after %d inputs, %d MiB at the first check", ms.HeapAlloc>>20, e.inputs.Load(), base>>20)
	}
}

// secureConn is a client connection with the frame helpers the fuzz input
// drives.
type secureConn struct {
	t    *testing.T
	nc   net.Conn
	raw  net.Conn // under TLS
	r    *bufio.Reader
	corr int32
}

// errClosed: the broker closed the connection, a fine answer to bad input.
var errClosed = errors.New("closed by the broker")

func (c *secureConn) readFrame() ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(hangAfter))
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return nil, c.classify(err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 64<<20 {
		c.t.Fatalf("response frame of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return nil, c.classify(err)
	}
	return b, nil
}

func (c *secureConn) classify(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("no answer and no close within %v", hangAfter)
	}
	return errClosed
}

// request sends req and returns the decoded answer, or errClosed.
func (c *secureConn) request(req kmsg.Request) (kmsg.Response, error) {
	c.corr++
	frame := binary.BigEndian.AppendUint32(nil, 0)
	frame = binary.BigEndian.AppendUint16(frame, uint16(req.Key()))
	frame = binary.BigEndian.AppendUint16(frame, uint16(req.GetVersion()))
	frame = binary.BigEndian.AppendUint32(frame, uint32(c.corr))
	frame = binary.BigEndian.AppendUint16(frame, 1)
	frame = append(frame, 'z')
	if req.IsFlexible() {
		frame = append(frame, 0)
	}
	frame = req.AppendTo(frame)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	c.nc.SetWriteDeadline(time.Now().Add(hangAfter))
	if _, err := c.nc.Write(frame); err != nil {
		return nil, errClosed
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		return nil, nil
	}
	b, err := c.readFrame()
	if err != nil {
		return nil, err
	}
	if len(b) < 4 || int32(binary.BigEndian.Uint32(b)) != c.corr {
		c.t.Fatalf("%s v%d: bad correlation id in %x", kmsg.NameForKey(req.Key()), req.GetVersion(), b)
	}
	body := b[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != apiVersionsKey {
		if body, err = skipTags(body); err != nil {
			c.t.Fatalf("%s v%d: response header: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("%s v%d: undecodable answer: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}

// rawToken sends a SaslHandshake v0 token and reads the answer token. A
// PLAIN token has none when it succeeds (sharq sends nothing, so the next
// frame is a Kafka response), so for PLAIN nothing is read: a failure shows
// as the broker closing the connection on the next request.
func (c *secureConn) rawToken(mech string, tok []byte) ([]byte, error) {
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(tok)))
	c.nc.SetWriteDeadline(time.Now().Add(hangAfter))
	if _, err := c.nc.Write(append(frame, tok...)); err != nil {
		return nil, errClosed
	}
	if mech == "PLAIN" {
		return nil, nil
	}
	return c.readFrame()
}

// awaitClose requires the broker to close the connection within hangAfter.
func (c *secureConn) awaitClose(what string) {
	c.nc.SetReadDeadline(time.Now().Add(hangAfter))
	_, err := io.Copy(io.Discard, c.nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection still open %v after %s", hangAfter, what)
	}
}

var fuzzMechs = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER"}

func (e *secureEnv) run(t *testing.T, mode uint8, mech string, first, final, reqs []byte) {
	listener := []string{"SASL_PLAINTEXT", "SASL_SSL", "SSL"}[int(mode)%3]
	nc, err := net.DialTimeout("tcp", e.addrs[listener], hangAfter)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &secureConn{t: t, nc: nc, raw: nc}
	if listener != "SASL_PLAINTEXT" {
		if mode&0x08 != 0 { // a ClientHello cut short, then silence
			nc.Write(e.hello[:len(first)%len(e.hello)])
			nc.(*net.TCPConn).CloseWrite()
			c.awaitClose("a truncated ClientHello")
			return
		}
		tc := tls.Client(nc, e.tlsCfg)
		tc.SetDeadline(time.Now().Add(hangAfter))
		if err := tc.Handshake(); err != nil {
			t.Fatalf("TLS handshake: %v", err)
		}
		tc.SetDeadline(time.Time{})
		if mode&0x10 != 0 { // a truncated or garbled application record
			rec := append([]byte{0x17, 0x03, 0x03}, first...)
			nc.Write(rec)
			nc.(*net.TCPConn).CloseWrite()
			c.awaitClose("a broken TLS record")
			return
		}
		c.nc = tc
	}
	c.r = bufio.NewReader(c.nc)
	principal := "User:ANONYMOUS"
	if listener != "SSL" {
		var ok bool
		if principal, ok = e.authenticate(c, mode>>5, mech, first, final); !ok {
			return
		}
	}
	// Structured requests of any registered API and version.
	saved := fuzzNames
	fuzzNames = e.fuzzName
	defer func() { fuzzNames = saved }()
	src := &fuzzSource{b: reqs}
	apis := registeredAPIs()
	for range 4 {
		if len(src.b) == 0 {
			break
		}
		api := apis[int(src.byte())%len(apis)]
		v := api.minVersion + int16(int(src.byte())%int(api.maxVersion-api.minVersion+1))
		req := kmsg.RequestForKey(api.key)
		if d, ok := req.(interface{ Default() }); ok {
			d.Default()
		}
		src.fill(reflect.ValueOf(req).Elem(), 0)
		req.SetVersion(v)
		boundResources(req)
		clampWaits(reflect.ValueOf(req).Elem(), "")
		resp, err := c.request(req)
		if err != nil {
			return
		}
		if resp == nil {
			continue
		}
		if principal != "User:admin" {
			for _, l := range e.leaks(req, resp) {
				t.Fatalf("%s v%d as %s: leak %s", kmsg.NameForKey(api.key), v, principal, l)
			}
		}
	}
}

// authenticate runs one SASL exchange chosen by how: valid PLAIN or SCRAM
// as alice (no ACLs), or fuzzed handshakes and tokens. It returns the
// principal the connection has if the broker let it continue.
func (e *secureEnv) authenticate(c *secureConn, how uint8, mech string, first, final []byte) (string, bool) {
	pick := func(s string) string {
		if len(s) > 0 && s[0] < 0x20 {
			return fuzzMechs[int(s[0])%len(fuzzMechs)]
		}
		return s
	}
	handshake := func(version int16, m string) bool {
		req := kmsg.NewPtrSASLHandshakeRequest()
		req.Version, req.Mechanism = version, m
		resp, err := c.request(req)
		return err == nil && resp.(*kmsg.SASLHandshakeResponse).ErrorCode == 0
	}
	authenticate := func(tok []byte) ([]byte, bool) {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 2, tok
		resp, err := c.request(req)
		if err != nil {
			return nil, false
		}
		r := resp.(*kmsg.SASLAuthenticateResponse)
		return r.SASLAuthBytes, r.ErrorCode == 0
	}
	switch how {
	case 0: // valid PLAIN as alice
		if !handshake(1, "PLAIN") {
			c.t.Fatal("PLAIN handshake refused")
		}
		if _, ok := authenticate([]byte("\x00alice\x00alice-pw")); !ok {
			c.t.Fatal("alice's PLAIN login refused")
		}
		return "User:alice", true
	case 1: // valid SCRAM-SHA-256 as alice, franz-go's client
		if !handshake(1, "SCRAM-SHA-256") {
			c.t.Fatal("SCRAM handshake refused")
		}
		sess, tok, err := scram.Auth{User: "alice", Pass: "alice-pw"}.AsSha256Mechanism().Authenticate(context.Background(), "")
		if err != nil {
			c.t.Fatal(err)
		}
		for done := false; !done; {
			chal, ok := authenticate(tok)
			if !ok {
				c.t.Fatal("alice's SCRAM login refused")
			}
			if done, tok, err = sess.Challenge(chal); err != nil {
				c.t.Fatal(err)
			}
		}
		return "User:alice", true
	case 2, 5: // v1 handshake with any mechanism, fuzzed tokens
		if !handshake(1, pick(mech)) {
			return "", false
		}
		if _, ok := authenticate(first); !ok {
			return "", false
		}
		if _, ok := authenticate(final); !ok {
			return "", false
		}
	case 3: // v0: raw tokens after the handshake
		m := pick(mech)
		if !handshake(0, m) {
			return "", false
		}
		if _, err := c.rawToken(m, first); err != nil {
			return "", false
		}
		if m != "PLAIN" {
			if _, err := c.rawToken(m, final); err != nil {
				return "", false
			}
		}
	case 4: // no authentication at all: requests must be refused
		return "User:ANONYMOUS", true
	default: // a fuzzed PLAIN token
		if !handshake(int16(how%2), "PLAIN") {
			return "", false
		}
		if how%2 == 0 {
			if _, err := c.rawToken("PLAIN", first); err != nil {
				return "", false
			}
		} else if _, ok := authenticate(first); !ok {
			return "", false
		}
	}
	// A fuzzed exchange the broker accepted: the only identities that
	// can log in are the configured users, so find out which.
	return "User:" + fuzzedIdentity(first, final), true
}

// fuzzedIdentity guesses which configured user a fuzzed exchange that
// succeeded logged in as (only a correct password does that); "admin"
// turns off the leak check, anything else keeps it.
func fuzzedIdentity(first, final []byte) string {
	for _, b := range [][]byte{first, final} {
		if strings.Contains(string(b), "admin") {
			return "admin"
		}
	}
	return "someone"
}

// clampWaits keeps every timeout and wait a request asks for under a
// second, so a long-poll's wait is not taken for a hang.
func clampWaits(v reflect.Value, field string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if ft := v.Type().Field(i); ft.IsExported() {
				clampWaits(v.Field(i), ft.Name)
			}
		}
	case reflect.Int32, reflect.Int64:
		if f := strings.ToLower(field); (strings.Contains(f, "timeout") || strings.Contains(f, "wait") || strings.HasSuffix(f, "millis") || strings.HasSuffix(f, "ms")) && v.Int() > 500 {
			v.SetInt(500)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			clampWaits(v.Elem(), field)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := 0; i < v.Len(); i++ {
				clampWaits(v.Index(i), field)
			}
		}
	}
}
