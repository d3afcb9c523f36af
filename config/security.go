package config

import (
	"crypto/tls"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Security keys: TLS (ssl.*), SASL (sasl.*, connections.max.reauth.ms) and
// the authorizer. Like Kafka, every listener-scoped key may be given per
// listener as listener.name.<listener>.<key> (the listener name in lower
// case), and the SASL keys also per mechanism:
// listener.name.<listener>.<mechanism>.<key>, e.g.
// listener.name.sasl_ssl.plain.sasl.jaas.config. The most specific wins.
// Broker reads them through Config.Security, never field by field.

// StandardAuthorizer is the one authorizer class sharq implements.
const StandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// listenerScoped lists the keys that may be prefixed with listener.name.<l>.
var listenerScoped = map[string]bool{}

// mechanismScoped lists the keys that may be prefixed with
// listener.name.<l>.<mechanism>.
var mechanismScoped = map[string]bool{"sasl.jaas.config": true, "connections.max.reauth.ms": true, "sasl.server.max.receive.size": true}

func securityKeyTable() []*keyDef {
	keys := []*keyDef{
		newKey("ssl.keystore.type", TypeString, "JKS",
			"The file format of the key store: PKCS12 or PEM (JKS files are not read; a PKCS12 file given with the default type JKS is read, as Java does).").
			check(inFold("JKS", "PKCS12", "PEM")),
		newKey("ssl.keystore.location", TypeString, "",
			"The location of the key store file (PKCS12, or with ssl.keystore.type=PEM a PEM file holding the private key and the certificate chain).").nullDef(),
		newKey("ssl.keystore.password", TypePassword, "", "The store password for the key store file (PKCS12).").nullDef(),
		newKey("ssl.key.password", TypePassword, "",
			"The password of the private key: for PEM key stores the key is then an encrypted PKCS#8 key (PBES2 with PBKDF2 and AES-CBC, as openssl pkcs8 -topk8 -v2 writes); for PKCS12 the store password is used.").nullDef(),
		newKey("ssl.keystore.certificate.chain", TypePassword, "",
			"Certificate chain in PEM format (with ssl.keystore.type=PEM): the broker's certificate first.").nullDef(),
		newKey("ssl.keystore.key", TypePassword, "",
			"Private key in PEM format, PKCS#8 or PKCS#1/SEC 1 (with ssl.keystore.type=PEM).").nullDef(),
		newKey("ssl.truststore.type", TypeString, "JKS",
			"The file format of the trust store: PKCS12 or PEM (a PKCS12 file given with the default type JKS is read).").
			check(inFold("JKS", "PKCS12", "PEM")),
		newKey("ssl.truststore.location", TypeString, "", "The location of the trust store file: the CAs client certificates are verified against.").nullDef(),
		newKey("ssl.truststore.password", TypePassword, "", "The password for the trust store file (PKCS12).").nullDef(),
		newKey("ssl.truststore.certificates", TypePassword, "", "Trusted certificates in PEM format (with ssl.truststore.type=PEM).").nullDef(),
		newKey("ssl.client.auth", TypeString, "none",
			"Client authentication: required (a client certificate trusted by the trust store is required), requested (verified when given) or none.").
			check(in("required", "requested", "none")),
		newKey("ssl.enabled.protocols", TypeList, "TLSv1.2,TLSv1.3", "The TLS protocols enabled: TLSv1.2 and/or TLSv1.3 (older versions are refused).").
			check(listIn(false, "TLSv1.2", "TLSv1.3")),
		newKey("ssl.protocol", TypeString, "TLSv1.3", "The TLS protocol of the SSLContext. sharq negotiates any of ssl.enabled.protocols.").ignored(),
		newKey("ssl.cipher.suites", TypeList, "",
			"TLS 1.2 cipher suites by IANA name (TLS 1.3 suites are not configurable). Empty: Go's secure defaults.").withCustom(checkCipherSuites),
		newKey("ssl.principal.mapping.rules", TypeString, "DEFAULT",
			"Rules mapping a client certificate's distinguished name to a principal name: DEFAULT or RULE:pattern/replacement/[LU], comma-separated, first match wins.").
			withCustom(func(v any) string {
				if err := checkPrincipalRules(v.(string)); err != "" {
					return err
				}
				return ""
			}),
		newKey("ssl.endpoint.identification.algorithm", TypeString, "https", "Host name verification of the peer. Brokers do not verify client host names.").ignored(),
		newKey("ssl.engine.factory.class", TypeClass, "", "A custom SslEngineFactory class.").nullDef().ignored(),
		newKey("sharq.ssl.handshake.timeout.ms", TypeInt, "10000",
			"How long a client may take to complete the TLS handshake before the connection is closed.").own().check(atLeast(1)),

		newKey("sasl.enabled.mechanisms", TypeList, "GSSAPI",
			"SASL mechanisms enabled on SASL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (GSSAPI and OAUTHBEARER are not implemented; a SASL listener must set this).").
			check(listIn(true, "GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")),
		newKey("sasl.mechanism.inter.broker.protocol", TypeString, "GSSAPI", "SASL mechanism for inter-broker communication.").ignored(),
		newKey("sasl.jaas.config", TypePassword, "",
			"JAAS login configuration. As in Kafka, a broker reads it only prefixed with the listener and the mechanism: listener.name.<listener>.plain.sasl.jaas.config with org.apache.kafka.common.security.plain.PlainLoginModule required user_<name>=\"<password>\" ...;").nullDef(),
		newKey("sasl.server.max.receive.size", TypeInt, "524288", "The maximum size of a SASL token before authentication.").check(atLeast(1)),
		newKey("connections.max.reauth.ms", TypeLong, "0",
			"When positive, SASL sessions last at most this long (the SaslAuthenticate response says so) and a client must re-authenticate before then; a request after expiry closes the connection. 0: sessions never expire.").
			check(atLeast(0)),
		newKey("sharq.scram.bootstrap", TypePassword, "",
			"SCRAM credentials created at start-up when the user has none for that mechanism yet, in kafka-storage format --add-scram syntax, several separated by spaces: SCRAM-SHA-256=[name=alice,password=alice-secret] SCRAM-SHA-512=[name=bob,password=b,iterations=8192].").
			own().nullDef().withCustom(func(v any) string {
			if _, err := ParseScramBootstrap(v.(string)); err != nil {
				return err.Error()
			}
			return ""
		}),

		newKey("sharq.metrics.basic.auth.user", TypeString, "",
			"When set, metrics.listener asks for HTTP basic authentication with this user on /metrics and /ui (/healthz and /readyz stay open).").own().nullDef(),
		newKey("sharq.metrics.basic.auth.password", TypePassword, "", "The password of sharq.metrics.basic.auth.user.").own().nullDef(),
		newKey("sharq.metrics.ssl.enabled", TypeBoolean, "false",
			"Serve metrics.listener over HTTPS with the ssl.* key store (per listener: listener.name.metrics.ssl.*; ssl.client.auth applies too).").own(),

		newKey("authorizer.class.name", TypeString, "",
			"The authorizer: empty (no authorization) or "+StandardAuthorizer+" (ACLs in the metadata log).").
			check(in("", StandardAuthorizer)),
		newKey("super.users", TypeString, "", "Principals allowed every operation, separated by semicolons: User:admin;User:CN=broker,O=Org.").nullDef().unlisted(),
		newKey("allow.everyone.if.no.acl.found", TypeBoolean, "false", "Whether a resource with no matching ACL is open to everyone.").own().deviates("Not a KafkaConfig key: StandardAuthorizer reads it from the broker config, as here.").unlisted(),
	}
	for _, k := range keys {
		if strings.HasPrefix(k.name, "ssl.") || strings.HasPrefix(k.name, "sasl.") || k.name == "connections.max.reauth.ms" || k.name == "sharq.ssl.handshake.timeout.ms" {
			listenerScoped[k.name] = true
		}
	}
	return keys
}

// listenerKeyHonoured reports whether a listener.name.* key names a key sharq
// reads per listener (otherwise it is accepted and ignored), and that key.
func listenerKeyHonoured(name string) (*keyDef, bool) {
	rest := strings.TrimPrefix(name, "listener.name.")
	for base := range listenerScoped {
		if !strings.HasSuffix(rest, "."+base) {
			continue
		}
		scope := strings.TrimSuffix(rest, "."+base)
		if scope == "" {
			continue
		}
		if !strings.Contains(scope, ".") || mechanismScoped[base] {
			return brokerIndex[base], brokerIndex[base].impl
		}
	}
	return nil, false
}

// ListenerSecurity is a listener's resolved security settings.
type ListenerSecurity struct {
	Listener string // listener name, upper case
	Protocol string // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL

	KeystoreType       string // PKCS12, PEM or JKS (as given, upper case)
	KeystoreLocation   string
	KeystorePassword   string
	KeyPassword        string
	KeystoreCertChain  string // inline PEM
	KeystoreKey        string // inline PEM
	TruststoreType     string
	TruststoreLocation string
	TruststorePassword string
	TruststoreCerts    string // inline PEM
	ClientAuth         string // required, requested, none
	EnabledProtocols   []string
	CipherSuites       []string
	PrincipalRules     string
	HandshakeTimeoutMs int64

	Mechanisms []string // sasl.enabled.mechanisms
	// JAAS is sasl.jaas.config per mechanism (upper case name).
	JAAS map[string]string
	// ReauthMs is connections.max.reauth.ms per mechanism.
	ReauthMs map[string]int64
	// MaxReceiveSize is sasl.server.max.receive.size.
	MaxReceiveSize int64
}

// TLS reports whether the listener speaks TLS.
func (s ListenerSecurity) TLS() bool { return s.Protocol == "SSL" || s.Protocol == "SASL_SSL" }

// SASL reports whether the listener requires SASL authentication.
func (s ListenerSecurity) SASL() bool {
	return s.Protocol == "SASL_PLAINTEXT" || s.Protocol == "SASL_SSL"
}

// Security resolves the security settings of one listener: the
// listener.name.<l>.[<mechanism>.]<key> forms first, then <key>, then the
// default.
func (c *Config) Security(l Listener) ListenerSecurity {
	prefix := "listener.name." + strings.ToLower(l.Name) + "."
	get := func(key string) string {
		if v, ok := c.merged(prefix + key); ok {
			return strings.TrimSpace(v)
		}
		if v, ok := c.merged(key); ok {
			return strings.TrimSpace(v)
		}
		return brokerIndex[key].def
	}
	list := func(key string) []string {
		var out []string
		for _, p := range strings.Split(get(key), ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	s := ListenerSecurity{
		Listener:           l.Name,
		Protocol:           l.Protocol,
		KeystoreType:       strings.ToUpper(get("ssl.keystore.type")),
		KeystoreLocation:   get("ssl.keystore.location"),
		KeystorePassword:   get("ssl.keystore.password"),
		KeyPassword:        get("ssl.key.password"),
		KeystoreCertChain:  get("ssl.keystore.certificate.chain"),
		KeystoreKey:        get("ssl.keystore.key"),
		TruststoreType:     strings.ToUpper(get("ssl.truststore.type")),
		TruststoreLocation: get("ssl.truststore.location"),
		TruststorePassword: get("ssl.truststore.password"),
		TruststoreCerts:    get("ssl.truststore.certificates"),
		ClientAuth:         get("ssl.client.auth"),
		EnabledProtocols:   list("ssl.enabled.protocols"),
		CipherSuites:       list("ssl.cipher.suites"),
		PrincipalRules:     get("ssl.principal.mapping.rules"),
		Mechanisms:         list("sasl.enabled.mechanisms"),
		JAAS:               map[string]string{},
		ReauthMs:           map[string]int64{},
	}
	s.HandshakeTimeoutMs, _ = strconv.ParseInt(get("sharq.ssl.handshake.timeout.ms"), 10, 64)
	s.MaxReceiveSize, _ = strconv.ParseInt(get("sasl.server.max.receive.size"), 10, 64)
	for _, m := range s.Mechanisms {
		mp := prefix + strings.ToLower(m) + "."
		if v, ok := c.merged(mp + "sasl.jaas.config"); ok {
			s.JAAS[m] = v
		}
		reauth := get("connections.max.reauth.ms")
		if v, ok := c.merged(mp + "connections.max.reauth.ms"); ok {
			reauth = strings.TrimSpace(v)
		}
		s.ReauthMs[m], _ = strconv.ParseInt(reauth, 10, 64)
	}
	return s
}

// Authorizer is the authorizer configuration.
type Authorizer struct {
	Enabled              bool     // authorizer.class.name is StandardAuthorizer
	SuperUsers           []string // super.users, e.g. User:admin
	AllowEveryoneIfNoACL bool     // allow.everyone.if.no.acl.found
}

// AuthorizerConfig resolves authorizer.class.name, super.users and
// allow.everyone.if.no.acl.found.
func (c *Config) AuthorizerConfig() Authorizer {
	var a Authorizer
	if v, _ := c.merged("authorizer.class.name"); strings.TrimSpace(v) == StandardAuthorizer {
		a.Enabled = true
	}
	if v, ok := c.merged("super.users"); ok {
		for _, p := range strings.Split(v, ";") {
			if p = strings.TrimSpace(p); p != "" {
				a.SuperUsers = append(a.SuperUsers, p)
			}
		}
	}
	if v, ok := c.merged("allow.everyone.if.no.acl.found"); ok {
		a.AllowEveryoneIfNoACL = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	return a
}

// SetExplicit sets a key as if it came from the config file. It is meant for
// tests and tools that build a Config by hand (brokertest); the value is not
// validated beyond what Validate checks.
func (c *Config) SetExplicit(name, value string) {
	if c.explicit == nil {
		c.explicit = map[string]string{}
	}
	c.explicit[name] = value
}

// ScramBootstrap is one credential of sharq.scram.bootstrap.
type ScramBootstrap struct {
	Mechanism  string // SCRAM-SHA-256 or SCRAM-SHA-512
	Name       string
	Password   string
	Iterations int32 // 0: the default, 4096
}

// ScramBootstrapUsers parses sharq.scram.bootstrap.
func (c *Config) ScramBootstrapUsers() []ScramBootstrap {
	v, _ := c.merged("sharq.scram.bootstrap")
	out, _ := ParseScramBootstrap(v)
	return out
}

// ParseScramBootstrap parses kafka-storage's --add-scram syntax,
// MECHANISM=[name=...,password=...(,iterations=N)(,salt=...)], several
// entries separated by spaces or commas outside the brackets. salt is
// accepted but a random one is always used.
func ParseScramBootstrap(v string) ([]ScramBootstrap, error) {
	var out []ScramBootstrap
	s := strings.TrimSpace(v)
	for s != "" {
		s = strings.TrimLeft(s, " ,\t\n")
		if s == "" {
			break
		}
		eq := strings.Index(s, "=[")
		end := strings.Index(s, "]")
		if eq <= 0 || end < eq {
			return nil, errorf("%q is not MECHANISM=[name=...,password=...]", s)
		}
		mech := strings.ToUpper(strings.TrimSpace(s[:eq]))
		if mech != "SCRAM-SHA-256" && mech != "SCRAM-SHA-512" {
			return nil, errorf("unknown SCRAM mechanism %q (SCRAM-SHA-256 or SCRAM-SHA-512)", mech)
		}
		b := ScramBootstrap{Mechanism: mech}
		for _, kv := range strings.Split(s[eq+2:end], ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
			val = strings.Trim(strings.TrimSpace(val), `"`)
			if !ok {
				return nil, errorf("%q in %s is not key=value", kv, mech)
			}
			switch strings.TrimSpace(k) {
			case "name":
				b.Name = val
			case "password":
				b.Password = val
			case "iterations":
				n, err := strconv.ParseInt(val, 10, 32)
				if err != nil || n < 4096 || n > 16384 {
					return nil, errorf("iterations %q must be an integer in 4096..16384", val)
				}
				b.Iterations = int32(n)
			case "salt", "saltedpassword":
			default:
				return nil, errorf("unknown SCRAM argument %q", k)
			}
		}
		if b.Name == "" || b.Password == "" {
			return nil, errorf("%s entry needs name and password", mech)
		}
		out = append(out, b)
		s = s[end+1:]
	}
	return out, nil
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func checkCipherSuites(v any) string {
	for _, name := range v.([]string) {
		if _, ok := CipherSuiteID(name); !ok {
			return "unknown or insecure cipher suite " + name
		}
	}
	return ""
}

// CipherSuiteID maps an IANA cipher suite name (as Java and Go spell it) to
// Go's id; only Go's secure suites are known.
func CipherSuiteID(name string) (uint16, bool) {
	for _, cs := range tls.CipherSuites() {
		if cs.Name == name {
			return cs.ID, true
		}
	}
	return 0, false
}

// PrincipalRule is one ssl.principal.mapping.rules entry.
type PrincipalRule struct {
	Default     bool
	Pattern     *regexp.Regexp
	Replacement string // in Go's Expand syntax (${1})
	Lower       bool
	Upper       bool
}

// ParsePrincipalRules parses ssl.principal.mapping.rules the way Kafka's
// SslPrincipalMapper does: DEFAULT or RULE:pattern/replacement/[LU], comma
// separated, where a slash or backslash in a pattern is escaped with a
// backslash. The pattern must match the whole distinguished name.
func ParsePrincipalRules(s string) ([]PrincipalRule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = "DEFAULT"
	}
	var out []PrincipalRule
	for s != "" {
		s = strings.TrimLeft(s, " \t")
		var r PrincipalRule
		switch {
		case strings.HasPrefix(s, "DEFAULT"):
			r.Default = true
			s = s[len("DEFAULT"):]
		case strings.HasPrefix(s, "RULE:"):
			s = s[len("RULE:"):]
			pat, rest, ok := cutUnescaped(s)
			if !ok {
				return nil, errorf("invalid rule RULE:%s: expected RULE:pattern/replacement/[LU]", s)
			}
			repl, rest, ok := cutUnescaped(rest)
			if !ok {
				return nil, errorf("invalid rule RULE:%s: expected RULE:pattern/replacement/[LU]", s)
			}
			re, err := regexp.Compile("^(?:" + pat + ")$")
			if err != nil {
				return nil, errorf("invalid rule pattern %q: %v", pat, err)
			}
			r.Pattern = re
			r.Replacement = javaReplacement(repl, re.NumSubexp())
			if strings.HasPrefix(rest, "L") {
				r.Lower, rest = true, rest[1:]
			} else if strings.HasPrefix(rest, "U") {
				r.Upper, rest = true, rest[1:]
			}
			s = rest
		default:
			return nil, errorf("invalid rule %q: expected DEFAULT or RULE:pattern/replacement/[LU]", s)
		}
		s = strings.TrimLeft(s, " \t")
		if s != "" {
			if s[0] != ',' {
				return nil, errorf("invalid rule: unmatched substring %q", s)
			}
			s = s[1:]
		}
		out = append(out, r)
	}
	return out, nil
}

// cutUnescaped splits at the first slash not escaped by a backslash; the
// escapes of slashes are removed.
func cutUnescaped(s string) (string, string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			if s[i+1] != '/' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i+1])
			i++
		case s[i] == '/':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", false
}

// javaReplacement turns Java's $N references into Go's ${N}; like Kafka, a
// reference beyond the group count is shortened or kept literally.
func javaReplacement(r string, groups int) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c == '\\' && i+1 < len(r) {
			if r[i+1] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i+1])
			}
			i++
			continue
		}
		if c != '$' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(r) && r[j] >= '0' && r[j] <= '9' {
			j++
		}
		digits := r[i+1 : j]
		for len(digits) > 1 {
			if n, _ := strconv.Atoi(digits); n <= groups {
				break
			}
			digits = digits[:len(digits)-1]
		}
		if n, err := strconv.Atoi(digits); err == nil && n <= groups {
			b.WriteString("${" + digits + "}")
			i += len(digits)
			continue
		}
		b.WriteString("$$")
	}
	return b.String()
}

// MapPrincipal applies the rules to a distinguished name; the first rule that
// matches wins. No match is an error, as in Kafka.
func MapPrincipal(rules []PrincipalRule, dn string) (string, error) {
	for _, r := range rules {
		if r.Default {
			return dn, nil
		}
		m := r.Pattern.FindStringSubmatchIndex(dn)
		if m == nil {
			continue
		}
		out := string(r.Pattern.ExpandString(nil, r.Replacement, dn, m))
		if r.Lower {
			out = strings.ToLower(out)
		} else if r.Upper {
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", errorf("no rules apply to %s", dn)
}

func checkPrincipalRules(s string) string {
	if _, err := ParsePrincipalRules(s); err != nil {
		return err.Error()
	}
	return ""
}

// validateSecurity checks what each listener's protocol needs. The key
// stores themselves are read (and their errors reported) by the broker.
func (c *Config) validateSecurity() []error {
	var errs []error
	for _, l := range c.Listeners {
		s := c.Security(l)
		if s.TLS() {
			if s.KeystoreLocation == "" && s.KeystoreCertChain == "" {
				errs = append(errs, invalid("ssl.keystore.location", "", "listener "+l.Name+" uses "+l.Protocol+
					" but no key store is configured: set ssl.keystore.location, or ssl.keystore.type=PEM with ssl.keystore.certificate.chain and ssl.keystore.key (per listener: listener.name."+strings.ToLower(l.Name)+".<key>)"))
			}
			if s.KeystoreCertChain != "" && s.KeystoreType != "PEM" {
				errs = append(errs, invalid("ssl.keystore.type", s.KeystoreType, "ssl.keystore.certificate.chain needs ssl.keystore.type=PEM"))
			}
			if s.KeystoreCertChain != "" && s.KeystoreKey == "" {
				errs = append(errs, invalid("ssl.keystore.key", "", "ssl.keystore.certificate.chain is set but ssl.keystore.key is not"))
			}
			if s.ClientAuth != "none" && s.TruststoreLocation == "" && s.TruststoreCerts == "" {
				errs = append(errs, invalid("ssl.client.auth", s.ClientAuth, "listener "+l.Name+": verifying client certificates needs a trust store (ssl.truststore.location or ssl.truststore.certificates)"))
			}
		}
		if s.SASL() {
			if len(s.Mechanisms) == 0 {
				errs = append(errs, invalid("sasl.enabled.mechanisms", "", "listener "+l.Name+" uses "+l.Protocol+" but no SASL mechanism is enabled"))
			}
			for _, m := range s.Mechanisms {
				switch m {
				case "PLAIN":
					if s.JAAS[m] == "" {
						errs = append(errs, invalid("listener.name."+strings.ToLower(l.Name)+".plain.sasl.jaas.config", "",
							"listener "+l.Name+" enables PLAIN but has no JAAS config with its users (PlainLoginModule required user_<name>=\"<password>\";)"))
					}
				case "SCRAM-SHA-256", "SCRAM-SHA-512":
				default:
					errs = append(errs, invalid("sasl.enabled.mechanisms", strings.Join(s.Mechanisms, ","),
						"listener "+l.Name+": SASL mechanism "+m+" is not supported by sharq (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"))
				}
			}
		}
	}
	return errs
}

// MetricsBasicAuth is the user and password metrics.listener requires
// (sharq.metrics.basic.auth.user / .password); an empty user: none.
func (c *Config) MetricsBasicAuth() (user, password string) {
	u, _ := c.merged("sharq.metrics.basic.auth.user")
	p, _ := c.merged("sharq.metrics.basic.auth.password")
	return strings.TrimSpace(u), p
}

// MetricsSecurity is the TLS setup of metrics.listener when
// sharq.metrics.ssl.enabled is true: the ssl.* keys, overridable as
// listener.name.metrics.ssl.*, as for a Kafka listener named METRICS.
func (c *Config) MetricsSecurity() (ListenerSecurity, bool) {
	v, _ := c.merged("sharq.metrics.ssl.enabled")
	if !strings.EqualFold(strings.TrimSpace(v), "true") {
		return ListenerSecurity{}, false
	}
	return c.Security(Listener{Name: "METRICS", Protocol: "SSL"}), true
}
