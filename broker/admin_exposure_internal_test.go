package broker

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sharq/config"
	"sharq/raftmeta"
)

// TestAdminListenerNeverOpenToTheNetwork (issue 26 item 4): the admin
// listener's pages name topics, groups and offsets (/metrics, /ui,
// /ui/state) or change the broker (/api/v1/...). Without basic auth they
// answer loopback peers only; with it, every peer must authenticate. The
// probes stay open and say nothing.
func TestAdminListenerNeverOpenToTheNetwork(t *testing.T) {
	paths := []string{"/metrics", "/ui", "/ui/state", "/api/v1/status"}
	for _, tc := range []struct {
		name       string
		user, pass string // basic auth configured
	}{{"no basic auth", "", ""}, {"basic auth", "ops", "ops-pw"}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.New()
			cfg.LogDirs = t.TempDir()
			if tc.user != "" {
				cfg.SetExplicit("sharq.metrics.basic.auth.user", tc.user)
				cfg.SetExplicit("sharq.metrics.basic.auth.password", tc.pass)
			}
			s, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Shutdown(t.Context()) })
			if err := s.meta.RegisterBroker(t.Context(), raftmeta.Broker{NodeID: s.cfg.NodeID, Host: "127.0.0.1", Port: 9092}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.createTopic(t.Context(), secretTopic, 1, 1, nil, false); err != nil {
				t.Fatal(err)
			}
			h := s.adminHandler()
			get := func(path, remote, user, pass string) (int, string) {
				r := httptest.NewRequest("GET", path, nil)
				r.RemoteAddr = remote
				if user != "" {
					r.SetBasicAuth(user, pass)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w.Code, w.Body.String()
			}
			for _, p := range paths {
				for _, remote := range []string{"10.1.2.3:40000", "[2001:db8::7]:40000", "172.17.0.1:40000"} {
					code, body := get(p, remote, "", "")
					if code != http.StatusForbidden && code != http.StatusUnauthorized {
						t.Errorf("%s from %s without credentials: status %d", p, remote, code)
					}
					if strings.Contains(body, secretTopic) {
						t.Errorf("%s from %s without credentials names the topic", p, remote)
					}
					if tc.user != "" {
						if code, _ := get(p, remote, tc.user, "wrong"); code != http.StatusUnauthorized {
							t.Errorf("%s from %s with a wrong password: status %d", p, remote, code)
						}
						if code, _ := get(p, remote, tc.user, tc.pass); code != http.StatusOK {
							t.Errorf("%s from %s with credentials: status %d", p, remote, code)
						}
					}
				}
				code, _ := get(p, "127.0.0.1:40000", "", "")
				if want := http.StatusOK; tc.user != "" && code != http.StatusUnauthorized || tc.user == "" && code != want {
					t.Errorf("%s from loopback without credentials: status %d", p, code)
				}
			}
			// The walk above is meaningful: a permitted peer does see the topic.
			user, pass := tc.user, tc.pass
			if _, body := get("/ui/state", "127.0.0.1:1", user, pass); !strings.Contains(body, secretTopic) {
				t.Errorf("/ui/state from an allowed peer does not name the topic: %.200s", body)
			}
			for _, p := range []string{"/healthz", "/readyz"} {
				if code, body := get(p, "10.1.2.3:40000", "", ""); code == http.StatusUnauthorized || code == http.StatusForbidden || strings.Contains(body, secretTopic) {
					t.Errorf("%s from the network: status %d body %q", p, code, body)
				}
			}
		})
	}
}

// TestAdminListenerRemotePeer: the same over a real socket when this host
// has a non-loopback address, as a container's peer would arrive.
func TestAdminListenerRemotePeer(t *testing.T) {
	ip := nonLoopbackIP()
	if ip == nil {
		t.Skip("no non-loopback IPv4 address on this host")
	}
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	cfg.MetricsListener = net.JoinHostPort(ip.String(), "0")
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	if err := s.startAdmin(); err != nil {
		t.Fatal(err)
	}
	// Dial from the non-loopback address so the broker sees a remote peer.
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	for _, p := range []string{"/metrics", "/ui/state", "/api/v1/status"} {
		resp, err := client.Get("http://" + s.AdminAddr() + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s from %s: status %d, want 403", p, ip, resp.StatusCode)
		}
	}
}

func nonLoopbackIP() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	return nil
}
