package security

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func credLookup(m ScramMechanism, users map[string]string) func(string) (ScramCredential, bool) {
	creds := map[string]ScramCredential{}
	for u, p := range users {
		c, err := m.NewCredential(p, 4096)
		if err != nil {
			panic(err)
		}
		creds[u] = c
	}
	return func(u string) (ScramCredential, bool) { c, ok := creds[u]; return c, ok }
}

// runScram drives franz-go's SCRAM client against ScramServer.
func runScram(t *testing.T, m ScramMechanism, srv *ScramServer, user, pass string) error {
	t.Helper()
	auth := scram.Auth{User: user, Pass: pass}
	var mech sasl.Mechanism = auth.AsSha256Mechanism()
	if m.Name == ScramSHA512.Name {
		mech = auth.AsSha512Mechanism()
	}
	sess, tok, err := mech.Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp, done, err := srv.Step(tok)
		if err != nil {
			return err
		}
		cdone, next, err := sess.Challenge(resp)
		if err != nil {
			t.Fatalf("client rejected the server: %v", err)
		}
		if done {
			if !cdone {
				t.Fatal("server done, client not")
			}
			return nil
		}
		tok = next
	}
}

func TestScramServer(t *testing.T) {
	for _, m := range []ScramMechanism{ScramSHA256, ScramSHA512} {
		lookup := credLookup(m, map[string]string{"alice": "pw", "we,ird=": "pw2"})
		tests := []struct {
			user, pass string
			ok         bool
		}{
			{"alice", "pw", true},
			{"we,ird=", "pw2", true},
			{"alice", "bad", false},
			{"bob", "pw", false},
		}
		for _, tc := range tests {
			srv := &ScramServer{Mech: m, Lookup: lookup}
			err := runScram(t, m, srv, tc.user, tc.pass)
			if (err == nil) != tc.ok {
				t.Errorf("%s %s/%s: err = %v", m.Name, tc.user, tc.pass, err)
			}
			if err != nil && !strings.Contains(err.Error(), "invalid credentials with SASL mechanism "+m.Name) {
				t.Errorf("%s: message %q", m.Name, err)
			}
			if err == nil && srv.Principal() != "User:"+tc.user {
				t.Errorf("principal %q", srv.Principal())
			}
		}
	}
	// Malformed and out-of-order messages fail, never panic.
	for _, msgs := range [][]string{
		{"y,,n=alice,r=abc"},
		{"n,a=bob,n=alice,r=abc"},
		{"n,,n=alice,r=abc", "c=biws,r=wrongnonce,p=AAAA"},
		{"n,,n=alice,r=abc", "c=eSws,r=abc,p=AAAA"},
		{"n,,n=alice,r=abc", "garbage"},
		{"n,,m=ext,n=alice,r=abc"},
	} {
		srv := &ScramServer{Mech: ScramSHA256, Lookup: credLookup(ScramSHA256, map[string]string{"alice": "pw"}), nonce: "srv"}
		var err error
		for _, msg := range msgs {
			if _, _, err = srv.Step([]byte(msg)); err != nil {
				break
			}
		}
		if err == nil {
			t.Errorf("%q accepted", msgs)
		}
	}
}

func TestPlainServer(t *testing.T) {
	users, err := PlainUsers(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" user_admin="admin-secret" user_alice="a;b c";`)
	if err != nil || users["alice"] != "a;b c" || users["admin"] != "admin-secret" || len(users) != 2 {
		t.Fatalf("users %v %v", users, err)
	}
	tests := []struct {
		token, err string
	}{
		{"\x00alice\x00a;b c", ""},
		{"alice\x00alice\x00a;b c", ""},
		{"bob\x00alice\x00a;b c", "authorization id that is different"},
		{"\x00alice\x00wrong", "Invalid username or password"},
		{"\x00\x00x", "username not specified"},
		{"\x00alice\x00", "password not specified"},
		{"alice", "expected 3 tokens, got 1"},
	}
	for _, tc := range tests {
		p := &PlainServer{Users: users}
		_, done, err := p.Step([]byte(tc.token))
		if tc.err == "" && (err != nil || !done || p.Principal() != "User:alice") {
			t.Errorf("%q: %v %v %s", tc.token, done, err, p.Principal())
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: err = %v, want %q", tc.token, err, tc.err)
		}
	}
	for _, bad := range []string{"", "Module", "Module maybe a=b;", "Module required a=\"b;", "Module required a=b"} {
		if _, _, err := ParseJAAS(bad); err == nil {
			t.Errorf("ParseJAAS(%q) accepted", bad)
		}
	}
	if _, err := PlainUsers(`org.apache.kafka.common.security.scram.ScramLoginModule required;`); err == nil {
		t.Error("a SCRAM login module accepted for PLAIN")
	}
}

// FuzzScramExchange feeds arbitrary client-first and client-final messages
// to the SCRAM server: it must fail or succeed, never panic, and succeed
// only with a proof made from the password.
func FuzzScramExchange(f *testing.F) {
	f.Add([]byte("n,,n=alice,r=abc"), []byte("c=biws,r=abcsrv,p=AAAA"))
	f.Add([]byte("n,a=alice,n=alice,r=x,ext=1"), []byte("c=bixhPWFsaWNlLA==,r=xsrv,e=1,p=AAAA"))
	f.Add([]byte("n,,n=a=2Cb=3D,r=\x7f"), []byte(",p="))
	lookup := credLookup(ScramSHA256, map[string]string{"alice": "pw", "a,b=": "pw"})
	f.Fuzz(func(t *testing.T, first, final []byte) {
		if cf, err := ParseClientFirst(string(first)); err == nil && !strings.HasPrefix(string(first), cf.GS2) {
			t.Fatalf("gs2 header %q not a prefix of %q", cf.GS2, first)
		}
		ParseClientFinal(string(final))
		srv := &ScramServer{Mech: ScramSHA256, Lookup: lookup, nonce: "srv"}
		if _, _, err := srv.Step(first); err != nil {
			return
		}
		if _, done, err := srv.Step(final); done || err == nil {
			t.Fatalf("a fuzzed proof authenticated: %q %q", first, final)
		}
	})
}

// FuzzPlainToken: arbitrary PLAIN tokens and JAAS texts never panic.
func FuzzPlainToken(f *testing.F) {
	f.Add([]byte("\x00alice\x00pw"), `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="pw";`)
	f.Fuzz(func(t *testing.T, token []byte, jaas string) {
		users, err := PlainUsers(jaas)
		if err != nil {
			users = map[string]string{"alice": "pw"}
		}
		p := &PlainServer{Users: users}
		if _, done, err := p.Step(token); done && err != nil {
			t.Fatal("done with an error")
		}
	})
}

// BenchmarkScramServer: the server side of one SCRAM-SHA-256 exchange
// (4096 iterations are the client's cost; the server only HMACs).
func BenchmarkScramServer(b *testing.B) {
	m := ScramSHA256
	lookup := credLookup(m, map[string]string{"alice": "pw"})
	auth := scram.Auth{User: "alice", Pass: "pw"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sess, first, _ := auth.AsSha256Mechanism().Authenticate(context.Background(), "")
		srv := &ScramServer{Mech: m, Lookup: lookup}
		b.StartTimer()
		sf, _, err := srv.Step(first)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_, final, err := sess.Challenge(sf) // the client's PBKDF2 is not measured
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, done, err := srv.Step(final); err != nil || !done {
			b.Fatal(err)
		}
	}
}
