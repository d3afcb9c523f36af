// Package security holds the pieces of sharq's listener security that need
// no socket: building a listener's tls.Config from Kafka's ssl.* settings
// (PEM and PKCS12 key and trust stores), the principal of a client
// certificate, and the SASL server mechanisms (PLAIN, SCRAM-SHA-256/512) as
// pure state machines. The broker drives them over the wire.
package security

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"software.sslmate.com/src/go-pkcs12"

	"sharq/config"
)

// ServerTLS builds the tls.Config of a listener from its resolved settings.
// Errors name the key at fault.
func ServerTLS(s config.ListenerSecurity) (*tls.Config, error) {
	cert, err := loadKeyStore(s)
	if err != nil {
		return nil, fmt.Errorf("listener %s: %w", s.Listener, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	cfg.MinVersion, cfg.MaxVersion, err = versions(s.EnabledProtocols)
	if err != nil {
		return nil, fmt.Errorf("listener %s: %w", s.Listener, err)
	}
	for _, name := range s.CipherSuites {
		id, ok := config.CipherSuiteID(name)
		if !ok {
			return nil, fmt.Errorf("listener %s: ssl.cipher.suites: unknown cipher suite %s", s.Listener, name)
		}
		cfg.CipherSuites = append(cfg.CipherSuites, id)
	}
	switch s.ClientAuth {
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		cfg.ClientAuth = tls.NoClientCert
	}
	if s.TruststoreLocation != "" || s.TruststoreCerts != "" {
		pool, err := loadTrustStore(s)
		if err != nil {
			return nil, fmt.Errorf("listener %s: %w", s.Listener, err)
		}
		cfg.ClientCAs = pool
	} else if cfg.ClientAuth != tls.NoClientCert {
		return nil, fmt.Errorf("listener %s: ssl.client.auth=%s needs a trust store", s.Listener, s.ClientAuth)
	}
	return cfg, nil
}

func versions(enabled []string) (uint16, uint16, error) {
	var lo, hi uint16
	for _, p := range enabled {
		var v uint16
		switch p {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		default:
			return 0, 0, fmt.Errorf("ssl.enabled.protocols: %s is not supported (TLSv1.2, TLSv1.3)", p)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	if lo == 0 {
		return 0, 0, errors.New("ssl.enabled.protocols is empty")
	}
	return lo, hi, nil
}

func loadKeyStore(s config.ListenerSecurity) (tls.Certificate, error) {
	if s.KeystoreCertChain != "" {
		if s.KeystoreType != "PEM" {
			return tls.Certificate{}, errors.New("ssl.keystore.certificate.chain needs ssl.keystore.type=PEM")
		}
		if s.KeystoreLocation != "" {
			return tls.Certificate{}, errors.New("ssl.keystore.location and ssl.keystore.certificate.chain are both set; give one")
		}
		return pemKeyPair([]byte(s.KeystoreCertChain), []byte(s.KeystoreKey), s.KeyPassword, "ssl.keystore.certificate.chain", "ssl.keystore.key")
	}
	data, err := os.ReadFile(s.KeystoreLocation)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location: %w", err)
	}
	switch storeType(s.KeystoreType, data) {
	case "PEM":
		if s.KeystorePassword != "" {
			return tls.Certificate{}, errors.New("ssl.keystore.password must not be set for a PEM key store file")
		}
		return pemKeyPair(data, data, s.KeyPassword, "ssl.keystore.location", "ssl.keystore.location")
	case "PKCS12":
		key, leaf, chain, err := pkcs12.DecodeChain(data, s.KeystorePassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s: read PKCS12 key store (ssl.keystore.password): %w", s.KeystoreLocation, err)
		}
		cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, c := range chain {
			cert.Certificate = append(cert.Certificate, c.Raw)
		}
		return cert, nil
	default:
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s: a JKS key store; sharq reads PKCS12 and PEM (convert with keytool -importkeystore -deststoretype PKCS12)", s.KeystoreLocation)
	}
}

// storeType resolves Kafka's store type against the file: like Java's
// keystore.type.compat, a PKCS12 file given as JKS (the default) is read.
func storeType(typ string, data []byte) string {
	if typ == "JKS" {
		if bytes.HasPrefix(data, []byte{0xFE, 0xED, 0xFE, 0xED}) {
			return "JKS"
		}
		if bytes.Contains(data, []byte("-----BEGIN")) {
			return "PEM"
		}
		return "PKCS12"
	}
	return typ
}

func pemKeyPair(chainPEM, keyPEM []byte, keyPassword, chainKey, keyKey string) (tls.Certificate, error) {
	var cert tls.Certificate
	for rest := chainPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			cert.Certificate = append(cert.Certificate, b.Bytes)
		}
	}
	if len(cert.Certificate) == 0 {
		return cert, fmt.Errorf("%s: no PEM certificate found", chainKey)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return cert, fmt.Errorf("%s: %w", chainKey, err)
	}
	cert.Leaf = leaf
	var keyBlock *pem.Block
	for rest := keyPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			keyBlock = b
			break
		}
	}
	if keyBlock == nil {
		return cert, fmt.Errorf("%s: no PEM private key found", keyKey)
	}
	if keyBlock.Headers["Proc-Type"] != "" {
		return cert, fmt.Errorf("%s: legacy OpenSSL-encrypted PEM keys (Proc-Type header) are not supported; convert with openssl pkcs8 -topk8 -v2 aes-256-cbc", keyKey)
	}
	der := keyBlock.Bytes
	if keyBlock.Type == "ENCRYPTED PRIVATE KEY" {
		if keyPassword == "" {
			return cert, fmt.Errorf("%s: the private key is encrypted; set ssl.key.password", keyKey)
		}
		var err error
		if der, err = decryptPKCS8(der, keyPassword); err != nil {
			return cert, fmt.Errorf("%s: %w", keyKey, err)
		}
	} else if keyPassword != "" {
		return cert, fmt.Errorf("ssl.key.password is set but the PEM key in %s is not encrypted; unset it", keyKey)
	}
	key, err := parseKey(der)
	if err != nil {
		return cert, fmt.Errorf("%s: %w", keyKey, err)
	}
	if !publicKeysMatch(leaf.PublicKey, key) {
		return cert, fmt.Errorf("%s: the private key does not match the certificate in %s", keyKey, chainKey)
	}
	cert.PrivateKey = key
	return cert, nil
}

func parseKey(der []byte) (crypto.Signer, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("unsupported private key type")
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("not a PKCS#8, PKCS#1 or SEC 1 private key")
}

func publicKeysMatch(pub crypto.PublicKey, key crypto.Signer) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch k := key.Public().(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return k.(equaler).Equal(pub)
	}
	return false
}

func loadTrustStore(s config.ListenerSecurity) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	var data []byte
	typ := s.TruststoreType
	if s.TruststoreCerts != "" {
		if typ != "PEM" {
			return nil, errors.New("ssl.truststore.certificates needs ssl.truststore.type=PEM")
		}
		data = []byte(s.TruststoreCerts)
	} else {
		var err error
		if data, err = os.ReadFile(s.TruststoreLocation); err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		typ = storeType(typ, data)
	}
	switch typ {
	case "PEM":
		if !pool.AppendCertsFromPEM(data) {
			return nil, errors.New("trust store: no PEM certificate found")
		}
	case "PKCS12":
		certs, err := pkcs12.DecodeTrustStore(data, s.TruststorePassword)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location %s: read PKCS12 trust store (ssl.truststore.password): %w", s.TruststoreLocation, err)
		}
		for _, c := range certs {
			pool.AddCert(c)
		}
	default:
		return nil, fmt.Errorf("ssl.truststore.location %s: a JKS trust store; sharq reads PKCS12 and PEM", s.TruststoreLocation)
	}
	return pool, nil
}

// CertPrincipal is the principal of a TLS client: "User:" plus the client
// certificate's subject (RFC 2253, in the order of the certificate, as Java's
// X500Principal.getName prints it) mapped by ssl.principal.mapping.rules,
// or User:ANONYMOUS without a certificate.
func CertPrincipal(state tls.ConnectionState, rules []config.PrincipalRule) (string, error) {
	if len(state.PeerCertificates) == 0 {
		return "User:ANONYMOUS", nil
	}
	dn := SubjectDN(state.PeerCertificates[0])
	name, err := config.MapPrincipal(rules, dn)
	if err != nil {
		return "", err
	}
	return "User:" + name, nil
}

// SubjectDN formats a certificate's subject as RFC 2253.
func SubjectDN(c *x509.Certificate) string {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(c.RawSubject, &seq); err != nil || len(rest) > 0 {
		return c.Subject.String()
	}
	return seq.String()
}
