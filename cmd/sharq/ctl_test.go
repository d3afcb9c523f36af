package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestCtlStatus: sharq ctl reaches the control API and prints its answer;
// a usage error exits 2, a refusal 1.
func TestCtlStatus(t *testing.T) {
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	var out, errb bytes.Buffer
	var st struct {
		NodeID    int32  `json:"node_id"`
		ClusterID string `json:"cluster_id"`
		Ready     bool   `json:"ready"`
	}
	// The coordinators load in the background after the listeners open:
	// status says not ready until they have, then ready.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out.Reset()
		if rc := run([]string{"ctl", "--addr", "http://" + b.Server.AdminAddr(), "status"}, []string{}, &out, &errb, nil); rc != 0 {
			t.Fatalf("rc %d: %s", rc, errb.String())
		}
		if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.NodeID != b.Config.NodeID || st.ClusterID == "" {
			t.Fatalf("%s: %v", out.String(), err)
		}
		if st.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not ordering events
	}
	errb.Reset()
	if rc := run([]string{"ctl", "--addr", "http://" + b.Server.AdminAddr(), "status", "extra"}, []string{}, &out, &errb, nil); rc != 2 {
		t.Fatalf("extra argument: rc %d", rc)
	}
	if rc := run([]string{"ctl", "--addr", "http://" + b.Server.AdminAddr(), "no-such-command"}, []string{}, &out, &errb, nil); rc != 2 || !strings.Contains(errb.String(), "status") {
		t.Fatalf("unknown command: rc %d, usage %q", rc, errb.String())
	}
}
