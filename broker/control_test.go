package broker_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"sharq/broker"
	"sharq/broker/brokertest"
	"sharq/config"
)

// TestControlStatus: the control API answers on the metrics listener to a
// loopback client without auth, and with auth configured only to a caller
// that gives it.
func TestControlStatus(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	if err := b.Server.AwaitCoordinators(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + b.Server.AdminAddr() + broker.ControlPrefix + "status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st broker.ControlStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if st.NodeID != b.Config.NodeID || !st.Ready || len(st.Listeners) != 1 || !strings.Contains(st.Listeners[0], b.Addr) {
		t.Fatalf("status %+v, broker at %s", st, b.Addr)
	}

	a := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }),
		brokertest.WithSetting("sharq.metrics.basic.auth.user", "ops"),
		brokertest.WithSetting("sharq.metrics.basic.auth.password", "secret"))
	url := "http://" + a.Server.AdminAddr() + broker.ControlPrefix + "status"
	for _, tc := range []struct {
		user, pass string
		want       int
	}{{"", "", 401}, {"ops", "wrong", 401}, {"ops", "secret", 200}} {
		req, _ := http.NewRequest("GET", url, nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("user %q: HTTP %d, want %d", tc.user, resp.StatusCode, tc.want)
		}
	}
}
