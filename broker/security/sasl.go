package security

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// AuthError is an authentication failure; Message is what the client is
// told in the SaslAuthenticate response (Kafka's wording).
type AuthError struct{ Message string }

func (e *AuthError) Error() string { return e.Message }

// Server is one SASL exchange on the server side.
type Server interface {
	// Step consumes the client's next token and returns the server's
	// answer. done reports that the exchange completed successfully; an
	// error is an *AuthError and ends the exchange.
	Step(token []byte) (resp []byte, done bool, err error)
	// Principal is the authenticated principal ("User:alice") once done.
	Principal() string
}

// ---- PLAIN (RFC 4616), as Kafka's PlainSaslServer ----

// PlainServer checks a PLAIN token against the users of a JAAS config.
type PlainServer struct {
	Users map[string]string // user -> password (PlainLoginModule user_<name>)
	user  string
}

// Step implements Server: the single message authzid NUL authcid NUL passwd.
func (p *PlainServer) Step(token []byte) ([]byte, bool, error) {
	parts := strings.Split(string(token), "\x00")
	if len(parts) != 3 {
		return nil, false, &AuthError{fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))}
	}
	authzid, user, password := parts[0], parts[1], parts[2]
	if user == "" {
		return nil, false, &AuthError{"Authentication failed: username not specified"}
	}
	if password == "" {
		return nil, false, &AuthError{"Authentication failed: password not specified"}
	}
	want, ok := p.Users[user]
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(password)) != 1 {
		return nil, false, &AuthError{"Authentication failed: Invalid username or password"}
	}
	if authzid != "" && authzid != user {
		return nil, false, &AuthError{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	p.user = user
	return nil, true, nil
}

// Principal implements Server.
func (p *PlainServer) Principal() string { return "User:" + p.user }

// ParseJAAS reads the options of a JAAS login configuration such as
// `org.apache.kafka.common.security.plain.PlainLoginModule required
// user_alice="alice-secret";`. It returns the module class and its options.
func ParseJAAS(s string) (module string, opts map[string]string, err error) {
	s = strings.TrimSpace(s)
	fields := func() string {
		s = strings.TrimLeft(s, " \t\r\n")
		i := strings.IndexAny(s, " \t\r\n;")
		if i < 0 {
			i = len(s)
		}
		f := s[:i]
		s = s[i:]
		return f
	}
	module = fields()
	flag := fields()
	switch flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, fmt.Errorf("JAAS config: expected a control flag (required) after %s, got %q", module, flag)
	}
	opts = map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return "", nil, errors.New("JAAS config must end with ';'")
		}
		if s[0] == ';' {
			if strings.TrimSpace(s[1:]) != "" {
				return "", nil, errors.New("JAAS config: sharq reads one login module per mechanism")
			}
			return module, opts, nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return "", nil, fmt.Errorf("JAAS config: expected key=value at %q", s)
		}
		key := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val string
		if strings.HasPrefix(s, `"`) {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return "", nil, fmt.Errorf("JAAS config: unterminated value of %s", key)
			}
			val, s = s[1:end+1], s[end+2:]
		} else {
			i := strings.IndexAny(s, " \t\r\n;")
			if i < 0 {
				i = len(s)
			}
			val, s = s[:i], s[i:]
		}
		opts[key] = val
	}
}

// PlainUsers extracts the user_<name>="<password>" options of a
// PlainLoginModule configuration.
func PlainUsers(jaas string) (map[string]string, error) {
	module, opts, err := ParseJAAS(jaas)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(module, "PlainLoginModule") {
		return nil, fmt.Errorf("JAAS config for PLAIN names %s, not org.apache.kafka.common.security.plain.PlainLoginModule", module)
	}
	users := map[string]string{}
	for k, v := range opts {
		if name, ok := strings.CutPrefix(k, "user_"); ok {
			users[name] = v
		}
	}
	return users, nil
}

// ---- SCRAM (RFC 5802), as Kafka's ScramSaslServer ----

// ScramMechanism is SCRAM-SHA-256 or SCRAM-SHA-512.
type ScramMechanism struct {
	Name string
	Type int8 // Kafka's ScramMechanism type: 1 SHA-256, 2 SHA-512
	hash func() hash.Hash
}

// Scram mechanisms, with Kafka's minimum iterations (4096).
var (
	ScramSHA256 = ScramMechanism{"SCRAM-SHA-256", 1, sha256.New}
	ScramSHA512 = ScramMechanism{"SCRAM-SHA-512", 2, sha512.New}
)

// MinScramIterations and MaxScramIterations are Kafka's bounds.
const (
	MinScramIterations = 4096
	MaxScramIterations = 16384
)

// ScramMechanismByName returns the mechanism named, e.g. SCRAM-SHA-256.
func ScramMechanismByName(name string) (ScramMechanism, bool) {
	switch name {
	case ScramSHA256.Name:
		return ScramSHA256, true
	case ScramSHA512.Name:
		return ScramSHA512, true
	}
	return ScramMechanism{}, false
}

// ScramMechanismByType returns the mechanism of Kafka's type number.
func ScramMechanismByType(t int8) (ScramMechanism, bool) {
	switch t {
	case 1:
		return ScramSHA256, true
	case 2:
		return ScramSHA512, true
	}
	return ScramMechanism{}, false
}

// ScramCredential is what the server stores for one user and mechanism.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

func (m ScramMechanism) hmac(key, msg []byte) []byte {
	h := hmac.New(m.hash, key)
	h.Write(msg)
	return h.Sum(nil)
}

// SaltedPassword is Hi(password, salt, iterations) of RFC 5802.
func (m ScramMechanism) SaltedPassword(password string, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(m.hash, password, salt, iterations, m.hash().Size())
}

// CredentialFromSalted derives the stored and server keys from a salted
// password, as Kafka does for AlterUserScramCredentials.
func (m ScramMechanism) CredentialFromSalted(salted, salt []byte, iterations int32) ScramCredential {
	clientKey := m.hmac(salted, []byte("Client Key"))
	h := m.hash()
	h.Write(clientKey)
	return ScramCredential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  h.Sum(nil),
		ServerKey:  m.hmac(salted, []byte("Server Key")),
		Iterations: iterations,
	}
}

// NewCredential salts a password with a random salt.
func (m ScramMechanism) NewCredential(password string, iterations int32) (ScramCredential, error) {
	if iterations == 0 {
		iterations = MinScramIterations
	}
	salt := make([]byte, 32)
	rand.Read(salt)
	salted, err := m.SaltedPassword(password, salt, int(iterations))
	if err != nil {
		return ScramCredential{}, err
	}
	return m.CredentialFromSalted(salted, salt, iterations), nil
}

// ScramServer runs one SCRAM exchange: client-first, server-first,
// client-final, server-final.
type ScramServer struct {
	Mech ScramMechanism
	// Lookup returns the user's credential for Mech.
	Lookup func(user string) (ScramCredential, bool)
	// nonce overrides the random server nonce (tests).
	nonce string

	state       int // 0 expect client-first, 1 expect client-final, 2 done
	user        string
	gs2         string
	clientBare  string
	serverFirst string
	fullNonce   string
	cred        ScramCredential
}

func (s *ScramServer) invalid() error {
	// Kafka hides the cause (unknown user, bad proof, bad syntax) behind one
	// message, so a client cannot probe which users exist.
	return &AuthError{"Authentication failed during authentication due to invalid credentials with SASL mechanism " + s.Mech.Name}
}

// Step implements Server.
func (s *ScramServer) Step(token []byte) ([]byte, bool, error) {
	switch s.state {
	case 0:
		return s.clientFirst(string(token))
	case 1:
		return s.clientFinal(string(token))
	}
	return nil, false, s.invalid()
}

// Principal implements Server.
func (s *ScramServer) Principal() string { return "User:" + s.user }

// ClientFirst is a parsed client-first-message.
type ClientFirst struct {
	GS2     string // "n,," or "n,a=<authzid>,"
	Authzid string
	User    string // decoded saslname
	Nonce   string
	Bare    string // client-first-message-bare
}

// ParseClientFirst parses "n,[a=authzid],n=user,r=nonce[,ext...]".
func ParseClientFirst(msg string) (ClientFirst, error) {
	var cf ClientFirst
	rest, ok := strings.CutPrefix(msg, "n,")
	if !ok {
		return cf, errors.New("channel binding is not supported: gs2 header must start with n,")
	}
	comma := strings.IndexByte(rest, ',')
	if comma < 0 {
		return cf, errors.New("truncated gs2 header")
	}
	if az := rest[:comma]; az != "" {
		v, ok := strings.CutPrefix(az, "a=")
		if !ok {
			return cf, errors.New("bad authzid")
		}
		u, err := decodeSaslName(v)
		if err != nil {
			return cf, err
		}
		cf.Authzid = u
	}
	cf.GS2 = msg[:2+comma+1]
	cf.Bare = rest[comma+1:]
	attrs := strings.Split(cf.Bare, ",")
	if len(attrs) > 0 && strings.HasPrefix(attrs[0], "m=") {
		return cf, errors.New("mandatory extension not supported")
	}
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return cf, errors.New("expected n=user,r=nonce")
	}
	u, err := decodeSaslName(attrs[0][2:])
	if err != nil {
		return cf, err
	}
	cf.User, cf.Nonce = u, attrs[1][2:]
	if cf.User == "" || !printable(cf.Nonce) || cf.Nonce == "" {
		return cf, errors.New("empty user or bad nonce")
	}
	for _, ext := range attrs[2:] {
		if k, _, ok := strings.Cut(ext, "="); !ok || k == "" {
			return cf, errors.New("bad extension")
		}
	}
	return cf, nil
}

// ClientFinal is a parsed client-final-message.
type ClientFinal struct {
	ChannelBinding []byte
	Nonce          string
	Proof          []byte
	WithoutProof   string
}

// ParseClientFinal parses "c=biws,r=nonce[,ext...],p=proof".
func ParseClientFinal(msg string) (ClientFinal, error) {
	var cf ClientFinal
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return cf, errors.New("no proof")
	}
	cf.WithoutProof = msg[:i]
	proof, err := base64.StdEncoding.DecodeString(msg[i+3:])
	if err != nil {
		return cf, errors.New("bad proof encoding")
	}
	cf.Proof = proof
	attrs := strings.Split(cf.WithoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return cf, errors.New("expected c=...,r=...")
	}
	if cf.ChannelBinding, err = base64.StdEncoding.DecodeString(attrs[0][2:]); err != nil {
		return cf, errors.New("bad channel binding encoding")
	}
	cf.Nonce = attrs[1][2:]
	return cf, nil
}

func (s *ScramServer) clientFirst(msg string) ([]byte, bool, error) {
	cf, err := ParseClientFirst(msg)
	if err != nil {
		return nil, false, s.invalid()
	}
	if cf.Authzid != "" && cf.Authzid != cf.User {
		return nil, false, &AuthError{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	cred, ok := s.Lookup(cf.User)
	if !ok || cred.Iterations < MinScramIterations {
		return nil, false, s.invalid()
	}
	nonce := s.nonce
	if nonce == "" {
		b := make([]byte, 24)
		rand.Read(b)
		nonce = base64.RawURLEncoding.EncodeToString(b)
	}
	s.user, s.gs2, s.clientBare, s.cred = cf.User, cf.GS2, cf.Bare, cred
	s.fullNonce = cf.Nonce + nonce
	s.serverFirst = "r=" + s.fullNonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(int(cred.Iterations))
	s.state = 1
	return []byte(s.serverFirst), false, nil
}

func (s *ScramServer) clientFinal(msg string) ([]byte, bool, error) {
	s.state = 2
	cf, err := ParseClientFinal(msg)
	if err != nil || string(cf.ChannelBinding) != s.gs2 || cf.Nonce != s.fullNonce {
		return nil, false, s.invalid()
	}
	authMsg := []byte(s.clientBare + "," + s.serverFirst + "," + cf.WithoutProof)
	sig := s.Mech.hmac(s.cred.StoredKey, authMsg)
	if len(cf.Proof) != len(sig) {
		return nil, false, s.invalid()
	}
	clientKey := make([]byte, len(sig))
	for i := range sig {
		clientKey[i] = cf.Proof[i] ^ sig[i]
	}
	h := s.Mech.hash()
	h.Write(clientKey)
	if !hmac.Equal(h.Sum(nil), s.cred.StoredKey) {
		return nil, false, s.invalid()
	}
	serverSig := s.Mech.hmac(s.cred.ServerKey, authMsg)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), true, nil
}

func decodeSaslName(s string) (string, error) {
	if !strings.Contains(s, "=") {
		return s, nil
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", errors.New("bad saslname escape")
		}
		i += 2
	}
	return b.String(), nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
			return false
		}
	}
	return true
}
