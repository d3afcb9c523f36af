package broker_test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"net/http"
	"testing"

	"sharq/broker/brokertest"
	"sharq/broker/security/sectest"
	"sharq/config"
)

// TestMetricsListenerSecurity: basic auth guards /metrics and /ui but not
// the probes; sharq.metrics.ssl.enabled serves HTTPS from the ssl.* keys.
func TestMetricsListenerSecurity(t *testing.T) {
	ca := sectest.NewCA(t)
	srv := ca.Issue(t, pkix.Name{CommonName: "localhost"})
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }),
		brokertest.WithSetting("sharq.metrics.basic.auth.user", "prom"),
		brokertest.WithSetting("sharq.metrics.basic.auth.password", "scrape-pw"),
		brokertest.WithSetting("sharq.metrics.ssl.enabled", "true"),
		brokertest.WithSetting("listener.name.metrics.ssl.keystore.type", "PEM"),
		brokertest.WithSetting("listener.name.metrics.ssl.keystore.certificate.chain", srv.CertPEM),
		brokertest.WithSetting("listener.name.metrics.ssl.keystore.key", srv.KeyPEM))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}}}
	base := "https://" + b.Server.AdminAddr()
	tests := []struct {
		path       string
		user, pass string
		want       int
	}{
		{"/metrics", "", "", http.StatusUnauthorized},
		{"/metrics", "prom", "wrong", http.StatusUnauthorized},
		{"/metrics", "prom", "scrape-pw", http.StatusOK},
		{"/ui", "", "", http.StatusUnauthorized},
		{"/healthz", "", "", http.StatusOK},
		{"/readyz", "", "", 0}, // 200 or 503 (coordinators loading), never 401
	}
	for _, tc := range tests {
		req, _ := http.NewRequest("GET", base+tc.path, nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		resp.Body.Close()
		if tc.want == 0 && resp.StatusCode == http.StatusUnauthorized || tc.want != 0 && resp.StatusCode != tc.want {
			t.Errorf("%s as %q: status %d, want %d", tc.path, tc.user, resp.StatusCode, tc.want)
		}
	}
	if resp, err := http.Get("http://" + b.Server.AdminAddr() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served on a TLS metrics listener")
		}
	}
}
