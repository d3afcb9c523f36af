package broker_test

import (
	"context"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/sr"

	"sharq/broker/brokertest"
	"sharq/broker/security/sectest"
)

// TestSchemaRegistryHTTPS: an https listener serves with the ssl.* key
// store; with ssl.client.auth=required a client without a certificate is
// refused.
func TestSchemaRegistryHTTPS(t *testing.T) {
	t.Parallel()
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	client := ca.Issue(t, pkix.Name{CommonName: "alice"})
	b := brokertest.New(t,
		brokertest.WithSetting("schema.registry.listeners", "https://127.0.0.1:0"),
		brokertest.WithSetting("ssl.keystore.type", "PEM"),
		brokertest.WithSetting("ssl.keystore.certificate.chain", srv.CertPEM),
		brokertest.WithSetting("ssl.keystore.key", srv.KeyPEM),
		brokertest.WithSetting("listener.name.schema_registry.ssl.client.auth", "required"),
		brokertest.WithSetting("ssl.truststore.type", "PEM"),
		brokertest.WithSetting("ssl.truststore.certificates", ca.PEM))
	if !strings.HasPrefix(b.SchemaRegistryURL, "https://") {
		t.Fatalf("url %s", b.SchemaRegistryURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := newSR(t, b, sr.DialTLSConfig(&tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{client.TLS()}}))
	if _, err := cl.CreateSchema(ctx, "s", sr.Schema{Schema: `"string"`}); err != nil {
		t.Fatal(err)
	}
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	if _, err := noCert.Get(b.SchemaRegistryURL + "/subjects"); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	plain := strings.Replace(b.SchemaRegistryURL, "https://", "http://", 1)
	if resp, err := http.Get(plain + "/subjects"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain http served on the https listener")
	}
}

// TestSchemaRegistryBasicAuthSCRAM: basic auth checks passwords against
// the SCRAM credentials (both mechanisms).
func TestSchemaRegistryBasicAuthSCRAM(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithSchemaRegistry(),
		brokertest.WithSetting("schema.registry.authentication.method", "BASIC"),
		brokertest.WithSetting("sharq.scram.bootstrap", "SCRAM-SHA-256=[name=alice,password=alice-secret] SCRAM-SHA-512=[name=bob,password=bob-secret,iterations=8192]"))
	c := http.DefaultClient
	url := b.SchemaRegistryURL + "/subjects"
	cases := []struct {
		auth   []string
		status int
	}{
		{nil, 401},
		{[]string{"alice", "wrong"}, 401},
		{[]string{"nobody", "x"}, 401},
		{[]string{"alice", "alice-secret"}, 200},
		{[]string{"alice", "alice-secret"}, 200}, // remembered
		{[]string{"bob", "bob-secret"}, 200},
		{[]string{"bob", "alice-secret"}, 401},
	}
	for _, cs := range cases {
		status, body := srDo(t, c, "GET", url, "", cs.auth...)
		if status != cs.status {
			t.Fatalf("%v: %d %s", cs.auth, status, body)
		}
		if status == 401 && !strings.Contains(body, `"error_code":401`) {
			t.Fatalf("401 body %s", body)
		}
	}
	cl := newSR(t, b, sr.BasicAuth("bob", "bob-secret"))
	if _, err := cl.CreateSchema(context.Background(), "s", sr.Schema{Schema: `"string"`}); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaRegistryBasicAuthFile: users from a Jetty-style password file,
// plain and MD5.
func TestSchemaRegistryBasicAuthFile(t *testing.T) {
	t.Parallel()
	sum := md5.Sum([]byte("md5-secret"))
	path := filepath.Join(t.TempDir(), "users")
	os.WriteFile(path, []byte("# users\nalice: alice-secret,admin\ncarol: MD5:"+hex.EncodeToString(sum[:])+"\n"), 0o600)
	b := brokertest.New(t, brokertest.WithSchemaRegistry(),
		brokertest.WithSetting("schema.registry.authentication.method", "BASIC"),
		brokertest.WithSetting("schema.registry.basic.auth.users.file", path))
	for _, cs := range []struct {
		user, pass string
		status     int
	}{{"alice", "alice-secret", 200}, {"alice", "admin", 401}, {"carol", "md5-secret", 200}, {"carol", "x", 401}} {
		if status, body := srDo(t, http.DefaultClient, "GET", b.SchemaRegistryURL+"/subjects", "", cs.user, cs.pass); status != cs.status {
			t.Fatalf("%s/%s: %d %s", cs.user, cs.pass, status, body)
		}
	}
}

// TestSchemaRegistryACLs: with an authorizer, subject permissions are TOPIC
// ACLs on the subject name and global ones CLUSTER ACLs.
func TestSchemaRegistryACLs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users")
	os.WriteFile(path, []byte("admin: admin-pw\nalice: alice-pw\nbob: bob-pw\n"), 0o600)
	b := aclBroker(t, brokertest.WithSchemaRegistry(),
		brokertest.WithSetting("schema.registry.authentication.method", "BASIC"),
		brokertest.WithSetting("schema.registry.basic.auth.users.file", path))
	adm := kadm.NewClient(newClient(t, b, as("admin")))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	acls := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead, kadm.OpWrite),
		kadm.NewACLs().Allow("User:bob").Topics("orders-value").Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:bob").Clusters().Operations(kadm.OpDescribeConfigs),
	}
	for _, a := range acls {
		res, err := adm.CreateACLs(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	u := b.SchemaRegistryURL
	c := http.DefaultClient
	alice, bob, admin := []string{"alice", "alice-pw"}, []string{"bob", "bob-pw"}, []string{"admin", "admin-pw"}
	steps := []struct {
		who                []string
		method, path, body string
		status             int
		want               string
	}{
		{alice, "POST", "/subjects/orders-value/versions", registerBody(`"string"`), 200, ""},
		{bob, "POST", "/subjects/orders-value/versions", registerBody(`"int"`), 403, `"error_code":40301`},
		{bob, "GET", "/subjects/orders-value/versions/1", "", 200, ""},
		{bob, "GET", "/schemas/ids/1", "", 200, ""},
		{alice, "POST", "/subjects/payments-value/versions", registerBody(`"string"`), 403, ""},
		{admin, "POST", "/subjects/payments-value/versions", registerBody(`"string"`), 200, ""},
		{bob, "GET", "/subjects", "", 200, `["orders-value"]`},
		{admin, "GET", "/subjects", "", 200, `["orders-value","payments-value"]`},
		{alice, "GET", "/config", "", 403, ""},
		{bob, "GET", "/config", "", 200, ""},
		{bob, "PUT", "/config", `{"compatibility":"NONE"}`, 403, ""},
		{admin, "PUT", "/config", `{"compatibility":"NONE"}`, 200, ""},
		{alice, "DELETE", "/subjects/orders-value", "", 403, ""},
		{alice, "GET", "/config/orders-value", "", 403, ""},
		{nil, "GET", "/subjects", "", 401, ""},
	}
	for i, s := range steps {
		status, body := srDo(t, c, s.method, u+s.path, s.body, s.who...)
		if status != s.status || !strings.Contains(body, s.want) {
			t.Fatalf("step %d %v %s %s: %d %s", i, s.who, s.method, s.path, status, body)
		}
	}
}
