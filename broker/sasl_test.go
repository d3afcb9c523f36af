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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"sharq/broker/brokertest"
	"sharq/broker/security/sectest"
)

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

func saslBroker(t *testing.T, protocol string, settings map[string]string) *brokertest.Broker {
	t.Helper()
	opts := []brokertest.Option{brokertest.WithListener(protocol, protocol)}
	for k, v := range settings {
		opts = append(opts, brokertest.WithSetting(k, v))
	}
	return brokertest.New(t, opts...)
}

// produceConsume proves a client can work: create, produce, fetch back.
func produceConsume(t *testing.T, b *brokertest.Broker, topic string, opts ...kgo.Opt) {
	t.Helper()
	cl := newClient(t, b, opts...)
	mustCreateTopic(t, kadm.NewClient(cl), topic, 1, nil)
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: []byte("v")})
	recs := consumeN(t, b, topic, 1, 1, opts...)
	if string(recs[0].Value) != "v" {
		t.Fatalf("got %q", recs[0].Value)
	}
}

// saslErr runs one metadata request with a mechanism and returns its error.
func saslErr(t *testing.T, b *brokertest.Broker, opts ...kgo.Opt) error {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	return err
}

func TestSASLPlain(t *testing.T) {
	for _, proto := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		t.Run(proto, func(t *testing.T) {
			settings := map[string]string{
				"sasl.enabled.mechanisms": "PLAIN",
				"listener.name." + strings.ToLower(proto) + ".plain.sasl.jaas.config": plainJAAS,
			}
			var tlsOpt []kgo.Opt
			if proto == "SASL_SSL" {
				ca := sectest.NewCA(t)
				srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
				settings["ssl.keystore.type"] = "PEM"
				settings["ssl.keystore.certificate.chain"] = srv.CertPEM
				settings["ssl.keystore.key"] = srv.KeyPEM
				tlsOpt = []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})}
			}
			b := saslBroker(t, proto, settings)
			good := append([]kgo.Opt{kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())}, tlsOpt...)
			produceConsume(t, b, "plain", good...)
			for _, bad := range []plain.Auth{{User: "alice", Pass: "wrong"}, {User: "nobody", Pass: "x"}, {Zid: "admin", User: "alice", Pass: "alice-secret"}} {
				err := saslErr(t, b, append([]kgo.Opt{kgo.SASL(bad.AsMechanism())}, tlsOpt...)...)
				if !errors.Is(err, kerr.SaslAuthenticationFailed) {
					t.Errorf("%+v: err = %v, want SASL_AUTHENTICATION_FAILED", bad, err)
				}
			}
			err := saslErr(t, b, append([]kgo.Opt{kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())}, tlsOpt...)...)
			if !errors.Is(err, kerr.UnsupportedSaslMechanism) {
				t.Errorf("SCRAM on a PLAIN-only listener: %v", err)
			}
		})
	}
}

func TestSASLScram(t *testing.T) {
	b := saslBroker(t, "SASL_PLAINTEXT", map[string]string{
		"sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
		"sharq.scram.bootstrap":   "SCRAM-SHA-256=[name=admin,password=admin-secret] SCRAM-SHA-512=[name=admin,password=admin-512,iterations=8192]",
	})
	admin256 := kgo.SASL(scram.Auth{User: "admin", Pass: "admin-secret"}.AsSha256Mechanism())
	admin512 := kgo.SASL(scram.Auth{User: "admin", Pass: "admin-512"}.AsSha512Mechanism())
	produceConsume(t, b, "s256", admin256)
	produceConsume(t, b, "s512", admin512)
	if err := saslErr(t, b, kgo.SASL(scram.Auth{User: "admin", Pass: "admin-512"}.AsSha256Mechanism())); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("wrong password: %v", err)
	}
	if err := saslErr(t, b, kgo.SASL(scram.Auth{User: "bob", Pass: "x"}.AsSha256Mechanism())); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("unknown user: %v", err)
	}

	// AlterUserScramCredentials / DescribeUserScramCredentials through kadm.
	adm := kadm.NewClient(newClient(t, b, admin256))
	ctx := testCtx(t)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-pw"}})
	if err != nil || res["bob"].Err != nil {
		t.Fatalf("alter: %v %+v", err, res)
	}
	bob := kgo.SASL(scram.Auth{User: "bob", Pass: "bob-pw"}.AsSha512Mechanism())
	produceConsume(t, b, "bob", bob)
	desc, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil || len(desc) != 2 || len(desc["admin"].CredInfos) != 2 || desc["bob"].CredInfos[0].Iterations != 4096 {
		t.Fatalf("describe: %v %+v", err, desc)
	}
	if d, _ := adm.DescribeUserSCRAMs(ctx, "nobody"); !errors.Is(d["nobody"].Err, kerr.ResourceNotFound) {
		t.Errorf("describe unknown user: %+v", d)
	}
	// Kafka's validation codes.
	raw := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	raw.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		{Name: "few", Mechanism: 1, Iterations: 10, Salt: []byte("s"), SaltedPassword: []byte("p")},
		{Name: "many", Mechanism: 1, Iterations: 20000, Salt: []byte("s"), SaltedPassword: []byte("p")},
		{Name: "mech", Mechanism: 9, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
		{Name: "", Mechanism: 1, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
		{Name: "twice", Mechanism: 1, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
		{Name: "twice", Mechanism: 2, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
	}
	raw.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "ghost", Mechanism: 1}}
	rresp, err := raw.RequestWith(ctx, newClient(t, b, admin256))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int16{"few": kerr.UnacceptableCredential.Code, "many": kerr.UnacceptableCredential.Code,
		"mech": kerr.UnsupportedSaslMechanism.Code, "": kerr.UnacceptableCredential.Code,
		"twice": kerr.DuplicateResource.Code, "ghost": kerr.ResourceNotFound.Code}
	for _, r := range rresp.Results {
		if want[r.User] != r.ErrorCode {
			t.Errorf("%q: code %d, want %d", r.User, r.ErrorCode, want[r.User])
		}
		delete(want, r.User)
	}
	if len(want) != 0 {
		t.Errorf("no result for %v", want)
	}
	// Deleting bob's credential locks bob out.
	if res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha512}}, nil); err != nil || res["bob"].Err != nil {
		t.Fatalf("delete: %v %+v", err, res)
	}
	if err := saslErr(t, b, bob); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("deleted user: %v", err)
	}
	// Credentials survive a restart (raft metadata).
	b.Restart()
	produceConsume(t, b, "after-restart", admin512)
}

// rawConn speaks the Kafka framing on a plain socket.
type rawConn struct {
	t    *testing.T
	c    net.Conn
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawConn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t: t, c: c}
}

func (r *rawConn) send(req kmsg.Request) error {
	r.corr++
	b := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(r.corr))
	b = binary.BigEndian.AppendUint16(b, 0)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	_, err := r.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	return err
}

// roundTrip sends req and decodes the answer into resp; it returns the
// read error (io.EOF: the broker closed the connection).
func (r *rawConn) roundTrip(req kmsg.Request) (kmsg.Response, error) {
	if err := r.send(req); err != nil {
		return nil, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(r.c, hdr[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(r.c, body); err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body = body[4:]
	if resp.IsFlexible() && req.Key() != 18 {
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		r.t.Fatalf("decode %T: %v", resp, err)
	}
	return resp, nil
}

func (r *rawConn) closed() bool {
	_, err := r.c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF)
}

func plainAuth(t *testing.T, r *rawConn, version int16, user, pass string) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	h := kmsg.NewPtrSASLHandshakeRequest()
	h.Version, h.Mechanism = 1, "PLAIN"
	hr, err := r.roundTrip(h)
	if err != nil || hr.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("handshake: %v %+v", err, hr)
	}
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.Version, a.SASLAuthBytes = version, []byte("\x00"+user+"\x00"+pass)
	ar, err := r.roundTrip(a)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return ar.(*kmsg.SASLAuthenticateResponse)
}

// TestSASLGate: before authentication only ApiVersions and the SASL
// exchange are served; a wrong password is answered, then the connection
// closes; an unsupported mechanism likewise.
func TestSASLGate(t *testing.T) {
	b := saslBroker(t, "SASL_PLAINTEXT", map[string]string{"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS})

	r := dialRaw(t, b.Addr)
	if resp, err := r.roundTrip(kmsg.NewPtrApiVersionsRequest()); err != nil || resp.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
		t.Fatalf("ApiVersions before auth: %v", err)
	}
	md := kmsg.NewPtrMetadataRequest()
	if _, err := r.roundTrip(md); !errors.Is(err, io.EOF) {
		t.Fatalf("Metadata before auth: err = %v, want the connection closed", err)
	}

	r = dialRaw(t, b.Addr)
	ar := plainAuth(t, r, 1, "alice", "wrong")
	if ar.ErrorCode != kerr.SaslAuthenticationFailed.Code || ar.ErrorMessage == nil || *ar.ErrorMessage != "Authentication failed: Invalid username or password" {
		t.Fatalf("wrong password: %+v", ar)
	}
	if !r.closed() {
		t.Fatal("connection open after a failed authentication")
	}

	r = dialRaw(t, b.Addr)
	h := kmsg.NewPtrSASLHandshakeRequest()
	h.Version, h.Mechanism = 1, "GSSAPI"
	hr, err := r.roundTrip(h)
	if err != nil || hr.(*kmsg.SASLHandshakeResponse).ErrorCode != kerr.UnsupportedSaslMechanism.Code ||
		strings.Join(hr.(*kmsg.SASLHandshakeResponse).SupportedMechanisms, ",") != "PLAIN" {
		t.Fatalf("unsupported mechanism: %v %+v", err, hr)
	}
	if !r.closed() {
		t.Fatal("connection open after an unsupported mechanism")
	}

	// A good login serves everything; a second SaslAuthenticate gets
	// ILLEGAL_SASL_STATE without re-authentication enabled.
	r = dialRaw(t, b.Addr)
	if ar := plainAuth(t, r, 1, "alice", "alice-secret"); ar.ErrorCode != 0 || ar.SessionLifetimeMillis != 0 {
		t.Fatalf("login: %+v", ar)
	}
	if resp, err := r.roundTrip(kmsg.NewPtrMetadataRequest()); err != nil || len(resp.(*kmsg.MetadataResponse).Brokers) != 1 {
		t.Fatalf("Metadata after auth: %v", err)
	}
	h.Mechanism = "PLAIN"
	if hr, err := r.roundTrip(h); err != nil || hr.(*kmsg.SASLHandshakeResponse).ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("handshake after auth without reauth: %v %+v", err, hr)
	}

	// SaslHandshake v0: bare tokens.
	r = dialRaw(t, b.Addr)
	h0 := kmsg.NewPtrSASLHandshakeRequest()
	h0.Version, h0.Mechanism = 0, "PLAIN"
	if hr, err := r.roundTrip(h0); err != nil || hr.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("handshake v0: %v", err)
	}
	tok := []byte("\x00alice\x00alice-secret")
	if _, err := r.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...)); err != nil {
		t.Fatal(err)
	}
	if resp, err := r.roundTrip(kmsg.NewPtrMetadataRequest()); err != nil || len(resp.(*kmsg.MetadataResponse).Brokers) != 1 {
		t.Fatalf("Metadata after a v0 login: %v", err)
	}
}

// TestSASLReauthentication: with connections.max.reauth.ms the session
// lifetime is announced, a re-authentication as the same principal is
// accepted, another principal is refused, and an expired session is closed.
func TestSASLReauthentication(t *testing.T) {
	b := saslBroker(t, "SASL_PLAINTEXT", map[string]string{"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS, "connections.max.reauth.ms": "300"})
	r := dialRaw(t, b.Addr)
	if ar := plainAuth(t, r, 1, "alice", "alice-secret"); ar.ErrorCode != 0 || ar.SessionLifetimeMillis != 300 {
		t.Fatalf("login: %+v", ar)
	}
	if ar := plainAuth(t, r, 1, "alice", "alice-secret"); ar.ErrorCode != 0 || ar.SessionLifetimeMillis != 300 {
		t.Fatalf("re-authentication: %+v", ar)
	}
	if ar := plainAuth(t, r, 1, "admin", "admin-secret"); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code ||
		!strings.Contains(*ar.ErrorMessage, "Cannot change principals during re-authentication from User.alice: User.admin") {
		t.Fatalf("re-authentication as another principal: %+v", ar)
	}
	if !r.closed() {
		t.Fatal("connection open after a refused re-authentication")
	}

	// An expired session is closed at its next request.
	r = dialRaw(t, b.Addr)
	plainAuth(t, r, 1, "alice", "alice-secret")
	deadline := time.Now().Add(300 * time.Millisecond)
	time.Sleep(time.Until(deadline) + 50*time.Millisecond) // wait out the session, not a synchronisation
	if _, err := r.roundTrip(kmsg.NewPtrMetadataRequest()); !errors.Is(err, io.EOF) {
		t.Fatalf("request after expiry: %v, want the connection closed", err)
	}

	// franz-go re-authenticates by itself and keeps working.
	cl := newClient(t, b, kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	mustCreateTopic(t, kadm.NewClient(cl), "reauth", 1, nil)
	end := time.Now().Add(time.Second)
	for n := 0; time.Now().Before(end); n++ {
		produceSync(t, cl, &kgo.Record{Topic: "reauth", Value: []byte{byte(n)}})
	}
}

var _ sasl.Mechanism = plain.Auth{}.AsMechanism()
