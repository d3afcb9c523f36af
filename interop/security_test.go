package interop

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sharq/broker/security/sectest"
)

// TestInteropSecurity runs kafka-configs.sh (SCRAM users) and kafka-acls.sh
// over SASL_SSL with SCRAM against a broker with StandardAuthorizer, a
// console producer as the user the ACLs were made for, librdkafka with
// SCRAM, and the tools over an mTLS listener. Golden differences from
// Kafka 4.4: Kafka lists its __consumer_offsets topic, and it does not
// answer DescribeUserScramCredentials from an unauthorized user at all. Kafka and sharq get
// the same server.properties (sharq drops the CONTROLLER listener as usual);
// the first SCRAM user comes from kafka-storage format --add-scram on Kafka
// and from sharq.scram.bootstrap on sharq.
func TestInteropSecurity(t *testing.T) {
	for _, name := range targetNames(t) {
		t.Run(name, func(t *testing.T) { securityScenario(t, name) })
	}
}

// secureTarget is a broker with a SASL_SSL listener and the files its
// clients need.
type secureTarget struct {
	Target
	secure    string // host:port of the SASL_SSL listener
	adminConf string // client properties of the super user
	aliceConf string
}

func securityScenario(t *testing.T, name string) {
	j := needJava(t)
	dir := t.TempDir()
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	keystore := srv.WritePEM(t, dir)
	truststore := ca.WritePEM(t, dir)
	clientDir := filepath.Join(dir, "client")
	if err := os.MkdirAll(clientDir, 0o755); err != nil {
		t.Fatal(err)
	}
	clientKeystore := ca.Issue(t, pkix.Name{CommonName: "admin"}).WritePEM(t, clientDir)
	ports := make([]int, 4)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	plainPort, securePort, controllerPort, sslPort := ports[0], ports[1], ports[2], ports[3]
	data := filepath.Join(dir, "data")
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:%[3]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_SSL://127.0.0.1:%[2]d,CONTROLLER://127.0.0.1:%[3]d,SSL://127.0.0.1:%[6]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_SSL://127.0.0.1:%[2]d,CONTROLLER://127.0.0.1:%[3]d,SSL://127.0.0.1:%[6]d
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL
log.dirs=%[4]s
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PEM
ssl.keystore.location=%[5]s
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin;User:ANONYMOUS
listener.name.ssl.ssl.client.auth=required
listener.name.ssl.ssl.truststore.type=PEM
listener.name.ssl.ssl.truststore.location=%[7]s
listener.name.ssl.ssl.principal.mapping.rules=RULE:^CN=(.*?)$/$1/,DEFAULT
`, plainPort, securePort, controllerPort, data, keystore, sslPort, truststore)
	const adminScram = "SCRAM-SHA-256=[name=admin,password=admin-secret]"
	propsPath := filepath.Join(dir, "server.properties")
	if targetKind(name) == "sharq" {
		props += "sharq.scram.bootstrap=" + adminScram + "\n"
	}
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	client := func(file, user, mech, pass string) string {
		path := filepath.Join(dir, file)
		conf := fmt.Sprintf("security.protocol=SASL_SSL\nsasl.mechanism=%s\n"+
			"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"%s\" password=\"%s\";\n"+
			"ssl.truststore.type=PEM\nssl.truststore.location=%s\n", mech, user, pass, truststore)
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	st := secureTarget{
		secure:    fmt.Sprintf("127.0.0.1:%d", securePort),
		adminConf: client("admin.properties", "admin", "SCRAM-SHA-256", "admin-secret"),
		aliceConf: client("alice.properties", "alice", "SCRAM-SHA-512", "alice-secret"),
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := startWithProps(t, ctx, j, name, propsPath, data, plainPort, controllerPort,
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d,SSL://127.0.0.1:%d", plainPort, securePort, sslPort),
		"--add-scram", adminScram)
	t.Cleanup(func() {
		if _, err := p.Stop(30 * time.Second); err != nil {
			t.Errorf("stop %s: %v", name, err)
		}
		if t.Failed() {
			t.Logf("%s log tail:\n%s", name, p.LogTail(6000))
		}
	})
	st.Target = p.Target
	if r := recorder(t); r != nil {
		r.AddLiteral(name, dir, "<DIR>")
		r.AddLiteral(name, st.secure, "<SECURE>")
	}
	tg := st.Target
	sec := func(conf string, rest ...string) []string {
		return append([]string{"--bootstrap-server", st.secure, "--command-config", conf}, rest...)
	}

	// SCRAM users through kafka-configs.sh (AlterUserScramCredentials).
	mustTool(t, tg, "security/add-scram", "", ClassConfigs, sec(st.adminConf, "--alter", "--entity-type", "users",
		"--entity-name", "alice", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=alice-secret]")...)
	res := mustTool(t, tg, "security/describe-scram", "", ClassConfigs, sec(st.adminConf, "--describe", "--entity-type", "users", "--entity-name", "alice")...)
	if !strings.Contains(res.Stdout, "SCRAM-SHA-512=iterations=8192") {
		t.Errorf("describe alice: %q", res.Stdout)
	}
	mustTool(t, tg, "security/create-topic", "", ClassTopics, sec(st.adminConf, "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1")...)
	mustTool(t, tg, "security/create-topic-2", "", ClassTopics, sec(st.adminConf, "--create", "--topic", "secret", "--partitions", "1", "--replication-factor", "1")...)

	// ACLs through kafka-acls.sh.
	mustTool(t, tg, "security/acls-add", "", "org.apache.kafka.tools.AclCommand", append([]string{"--bootstrap-server", st.secure, "--command-config", st.adminConf},
		"--add", "--allow-principal", "User:alice", "--operation", "Write", "--operation", "Describe", "--topic", "orders")...)
	res = mustTool(t, tg, "security/acls-list", "", "org.apache.kafka.tools.AclCommand", append([]string{"--bootstrap-server", st.secure, "--command-config", st.adminConf},
		"--list", "--topic", "orders")...)
	if !strings.Contains(res.Stdout, "principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW") {
		t.Errorf("acls list: %q", res.Stdout)
	}

	// alice (SCRAM-SHA-512, created above) may write orders and sees only it.
	mustTool(t, tg, "security/alice-produce", "hello\n", ClassConsoleProducer, "--bootstrap-server", st.secure,
		"--command-config", st.aliceConf, "--topic", "orders")
	res = mustTool(t, tg, "security/alice-list-topics", "", ClassTopics, sec(st.aliceConf, "--list")...)
	if strings.TrimSpace(res.Stdout) != "orders" {
		t.Errorf("alice lists %q, want only orders", res.Stdout)
	}
	// A wrong password is refused.
	bad := client("bad.properties", "alice", "SCRAM-SHA-512", "wrong")
	res, _ = tool(t, tg, "security/bad-password", "", ClassTopics, sec(bad, "--list")...)
	if res.ExitCode == 0 || !strings.Contains(res.Stdout+res.Stderr, "Authentication failed") {
		t.Errorf("wrong password: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}

	// librdkafka over SASL_SSL with SCRAM-SHA-256 (the super user):
	// idempotent produce, then consume by assignment.
	rdConf := filepath.Join(dir, "rdkafka.properties")
	if err := os.WriteFile(rdConf, []byte("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n"+
		"sasl.username=admin\nsasl.password=admin-secret\nssl.ca.location="+truststore+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rdTarget := tg
	rdTarget.Bootstrap = st.secure
	rdkafkaProduceWith(t, rdTarget, "security/rdkafka-produce", "rd-secure", "none", "--client-config", rdConf)
	_, done := rdkafka(t, rdTarget, "security/rdkafka-consume", nil, "consume-assign", "--topic", "rd-secure",
		"--count", fmt.Sprint(rdkafkaRecords), "--client-config", rdConf)
	if done.num("count") != rdkafkaRecords {
		t.Errorf("librdkafka over SASL_SSL consumed %d records, want %d", done.num("count"), rdkafkaRecords)
	}

	// mTLS: the client certificate CN=admin maps to User:admin, a super user.
	mtlsConf := filepath.Join(dir, "mtls.properties")
	if err := os.WriteFile(mtlsConf, []byte("security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location="+clientKeystore+
		"\nssl.truststore.type=PEM\nssl.truststore.location="+truststore+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mtls := fmt.Sprintf("127.0.0.1:%d", sslPort)
	if r := recorder(t); r != nil {
		r.AddLiteral(name, mtls, "<MTLS>")
	}
	res = mustTool(t, tg, "security/mtls-list-topics", "", ClassTopics, "--bootstrap-server", mtls, "--command-config", mtlsConf, "--list")
	if !strings.Contains(res.Stdout, "orders") || !strings.Contains(res.Stdout, "secret") {
		t.Errorf("mTLS super user lists %q", res.Stdout)
	}
	res = mustTool(t, tg, "security/mtls-acls-list", "", "org.apache.kafka.tools.AclCommand", "--bootstrap-server", mtls, "--command-config", mtlsConf, "--list", "--topic", "orders")
	if !strings.Contains(res.Stdout, "User:alice") {
		t.Errorf("acls over mTLS: %q", res.Stdout)
	}
	// Without a client certificate the handshake fails.
	noCert := filepath.Join(dir, "nocert.properties")
	if err := os.WriteFile(noCert, []byte("security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location="+truststore+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, _ = tool(t, tg, "", "", ClassTopics, "--bootstrap-server", mtls, "--command-config", noCert, "--list")
	if res.ExitCode == 0 {
		t.Errorf("a client without a certificate listed topics over mTLS: %q", res.Stdout)
	}

	// Every API as bob, a user without ACLs: the codes are compared with
	// Kafka's in golden mode.
	codes := unauthorizedCodes(t, st.secure, truststore)
	t.Logf("unauthorized codes:\n%s", codes)
	if r := recorder(t); r != nil {
		if err := r.Record(name, "security/unauthorized-codes", codes); err != nil {
			t.Error(err)
		}
	}

	mustTool(t, tg, "security/acls-remove", "", "org.apache.kafka.tools.AclCommand", append([]string{"--bootstrap-server", st.secure, "--command-config", st.adminConf},
		"--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write", "--operation", "Describe", "--topic", "orders")...)
	res = mustTool(t, tg, "security/acls-list-after", "", "org.apache.kafka.tools.AclCommand", append([]string{"--bootstrap-server", st.secure, "--command-config", st.adminConf},
		"--list")...)
	if strings.Contains(res.Stdout, "User:alice") {
		t.Errorf("acls after remove: %q", res.Stdout)
	}
}
