// Package sectest makes throw-away certificate authorities, certificates and
// key stores (PEM and PKCS12) for tests, in process with crypto/x509.
package sectest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  string
}

// Pair is a certificate with its key.
type Pair struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM string // the certificate then the CA's
	KeyPEM  string // PKCS#8
}

var serial int64 = 1

// NewCA makes a self-signed CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: "sharq test CA", Organization: []string{"sharq"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, Key: key, PEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// Issue makes a certificate for subject, valid for localhost and 127.0.0.1,
// usable by servers and clients.
func (ca *CA) Issue(t testing.TB, subject pkix.Name) *Pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &Pair{
		Cert:    cert,
		Key:     key,
		CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + ca.PEM,
		KeyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8})),
	}
}

// TLS is a tls.Certificate of the pair.
func (p *Pair) TLS() tls.Certificate {
	c, err := tls.X509KeyPair([]byte(p.CertPEM), []byte(p.KeyPEM))
	if err != nil {
		panic(err)
	}
	return c
}

// WritePEM writes key and chain into one PEM file (Kafka's
// ssl.keystore.type=PEM with ssl.keystore.location) and returns its path.
func (p *Pair) WritePEM(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "keystore.pem")
	if err := os.WriteFile(path, []byte(p.KeyPEM+p.CertPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WritePKCS12 writes a PKCS12 key store with the pair and the CA chain.
func (p *Pair) WritePKCS12(t testing.TB, dir, password string, ca *CA) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(p.Key, p.Cert, []*x509.Certificate{ca.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "keystore.p12")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteTrustPKCS12 writes a PKCS12 trust store holding the CA.
func (ca *CA) WriteTrustPKCS12(t testing.TB, dir, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "truststore.p12")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WritePEM writes the CA certificate as a PEM trust store.
func (ca *CA) WritePEM(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, []byte(ca.PEM), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Pool is a pool with the CA, for clients.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}
