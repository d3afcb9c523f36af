package security

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"sharq/broker/security/sectest"
	"sharq/config"
)

func TestCertPrincipal(t *testing.T) {
	ca := sectest.NewCA(t)
	cert := ca.Issue(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Org"}, Country: []string{"US"}})
	// Java prints the subject in RFC 2253 order: last RDN first.
	if got := SubjectDN(cert.Cert); got != "CN=alice,OU=eng,O=Org,C=US" {
		t.Fatalf("SubjectDN = %q", got)
	}
	// The certificate's own RDN order is kept, not Go's canonical one.
	ordered := &x509.Certificate{}
	seq := pkix.RDNSequence{
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "bob"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "Org"}},
	}
	ordered.RawSubject, _ = asn1.Marshal(seq)
	if got := SubjectDN(ordered); got != "O=Org,CN=bob" {
		t.Fatalf("SubjectDN of a CN-first subject = %q", got)
	}
	rules, err := config.ParsePrincipalRules("RULE:^CN=(.*?),OU=(.*?),O=(.*?),C=(.*?)$/$1@$3/L,DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	state := tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert.Cert}}
	if p, err := CertPrincipal(state, rules); err != nil || p != "User:alice@org" {
		t.Fatalf("CertPrincipal = %q, %v", p, err)
	}
	if p, _ := CertPrincipal(tls.ConnectionState{}, rules); p != "User:ANONYMOUS" {
		t.Fatalf("no certificate: %q", p)
	}
}
