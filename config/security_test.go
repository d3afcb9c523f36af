package config

import (
	"strings"
	"testing"
)

func TestSecurityValidation(t *testing.T) {
	tests := []struct {
		args []string
		err  string // "" = valid
	}{
		{[]string{"listeners=SSL://localhost:9093"}, "no key store is configured"},
		{[]string{"listeners=SSL://localhost:9093", "ssl.keystore.location=/k.p12"}, ""},
		{[]string{"listeners=SSL://localhost:9093", "ssl.keystore.certificate.chain=x"}, "needs ssl.keystore.type=PEM"},
		{[]string{"listeners=SSL://localhost:9093", "ssl.keystore.type=PEM", "ssl.keystore.certificate.chain=x"}, "ssl.keystore.key is not"},
		{[]string{"listeners=SSL://localhost:9093", "listener.name.ssl.ssl.keystore.location=/k.p12", "ssl.client.auth=required"}, "needs a trust store"},
		{[]string{"listeners=SASL_PLAINTEXT://localhost:9093"}, "SASL mechanism GSSAPI is not supported"},
		{[]string{"listeners=SASL_PLAINTEXT://localhost:9093", "sasl.enabled.mechanisms=PLAIN"}, "has no JAAS config"},
		{[]string{"listeners=SASL_PLAINTEXT://localhost:9093", "sasl.enabled.mechanisms=SCRAM-SHA-256"}, ""},
		{[]string{"listeners=SASL_PLAINTEXT://localhost:9093", "sasl.enabled.mechanisms=PLAIN",
			`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";`}, ""},
		{[]string{"listener.name.ssl.ssl.client.auth=maybe"}, "listener.name.ssl.ssl.client.auth"},
		{[]string{"ssl.principal.mapping.rules=RULE:^CN=(.*)$/$1"}, "expected RULE:pattern/replacement"},
		{[]string{"sharq.scram.bootstrap=SCRAM-SHA-1=[name=a,password=b]"}, "unknown SCRAM mechanism"},
		{[]string{`sharq.faults={"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","after":true}`}, "after answers REQUEST_TIMED_OUT"},
		{[]string{`sharq.faults=[{"api":"Prodce","error":6}]`}, `unknown API "Prodce"`},
		{[]string{"authorizer.class.name=kafka.security.authorizer.AclAuthorizer"}, "String must be one of"},
	}
	for _, tc := range tests {
		var args []string
		for _, a := range tc.args {
			args = append(args, "--override", a)
		}
		c, _, err := Load(args, nil, nil)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && len(c.Ignored()) > 0:
			t.Errorf("%v: ignored %v", tc.args, c.Ignored())
		}
	}
}

func TestListenerSecurityResolution(t *testing.T) {
	c, _, err := Load([]string{
		"--override", "listeners=SSL://:0,SASL_SSL://:0",
		"--override", "ssl.keystore.location=/global.p12",
		"--override", "listener.name.sasl_ssl.ssl.keystore.location=/sasl.p12",
		"--override", "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
		"--override", `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="pw";`,
		"--override", "connections.max.reauth.ms=60000",
		"--override", "listener.name.sasl_ssl.scram-sha-512.connections.max.reauth.ms=1000",
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ssl, sasl := c.Security(c.Listeners[0]), c.Security(c.Listeners[1])
	if ssl.KeystoreLocation != "/global.p12" || sasl.KeystoreLocation != "/sasl.p12" {
		t.Errorf("keystore locations %q %q", ssl.KeystoreLocation, sasl.KeystoreLocation)
	}
	if !ssl.TLS() || ssl.SASL() || !sasl.TLS() || !sasl.SASL() {
		t.Errorf("protocols %+v %+v", ssl, sasl)
	}
	if sasl.ReauthMs["PLAIN"] != 60000 || sasl.ReauthMs["SCRAM-SHA-512"] != 1000 {
		t.Errorf("reauth %v", sasl.ReauthMs)
	}
	if !strings.Contains(sasl.JAAS["PLAIN"], "user_alice") || ssl.JAAS["PLAIN"] != "" {
		t.Errorf("jaas %v %v", sasl.JAAS, ssl.JAAS)
	}
	if len(sasl.EnabledProtocols) != 2 || sasl.ClientAuth != "none" {
		t.Errorf("defaults %+v", sasl)
	}
}

func TestPrincipalRules(t *testing.T) {
	tests := []struct {
		rules, dn, want, err string
	}{
		{"DEFAULT", "CN=alice,O=Org", "CN=alice,O=Org", ""},
		{"", "CN=alice,O=Org", "CN=alice,O=Org", ""},
		{"RULE:^CN=(.*?),O=(.*)$/$1@$2/L,DEFAULT", "CN=Alice,O=Org", "alice@org", ""},
		{"RULE:^CN=(.*?),O=(.*)$/$1/U", "CN=alice,O=Org", "ALICE", ""},
		{"RULE:^CN=([a-z]+)$/$1/, DEFAULT", "CN=Bob2", "CN=Bob2", ""},
		{"RULE:^CN=([a-z]+)$/$1/", "CN=Bob2", "", "no rules apply"},
		{`RULE:^CN=(.*)\/x$/$1/`, "CN=a/x", "a", ""},
		{"RULE:^CN=(.*)$/$12/", "CN=a", "a2", ""},
		{"RULE:^CN=(.*)$/$1", "", "", "expected RULE"},
		{"BOGUS", "", "", "expected DEFAULT"},
	}
	for _, tc := range tests {
		rules, err := ParsePrincipalRules(tc.rules)
		if err != nil {
			if tc.err == "" || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v", tc.rules, err)
			}
			continue
		}
		got, err := MapPrincipal(rules, tc.dn)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q on %q: got %q, %v; want error %q", tc.rules, tc.dn, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q on %q: got %q, %v; want %q", tc.rules, tc.dn, got, err, tc.want)
		}
	}
}

func TestParseScramBootstrap(t *testing.T) {
	got, err := ParseScramBootstrap(`SCRAM-SHA-256=[name=alice,password=alice-secret] SCRAM-SHA-512=[name=bob,password="b,c",iterations=8192]`)
	if err == nil {
		t.Fatalf("a comma inside a password is ambiguous and must fail, got %+v", got)
	}
	got, err = ParseScramBootstrap(`SCRAM-SHA-256=[name=alice,password=alice-secret], SCRAM-SHA-512=[name=bob,password=b,iterations=8192]`)
	if err != nil || len(got) != 2 || got[0] != (ScramBootstrap{"SCRAM-SHA-256", "alice", "alice-secret", 0}) ||
		got[1] != (ScramBootstrap{"SCRAM-SHA-512", "bob", "b", 8192}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"SCRAM-SHA-256=[name=a]", "SCRAM-SHA-256=[name=a,password=b,iterations=10]", "x"} {
		if _, err := ParseScramBootstrap(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
