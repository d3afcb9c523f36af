package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestCtlFaults: fault add, list, wait, rm through sharq ctl.
func TestCtlFaults(t *testing.T) {
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	ctl := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		rc := run(append([]string{"ctl", "--addr", "http://" + b.Server.AdminAddr()}, args...), []string{}, &out, &errb, nil)
		return rc, out.String(), errb.String()
	}
	rc, out, errs := ctl("fault", "add", `{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","count":3}`)
	var rule struct {
		ID    int64  `json:"id"`
		API   string `json:"api"`
		Error string `json:"error"`
	}
	if rc != 0 || json.Unmarshal([]byte(out), &rule) != nil || rule.ID == 0 || rule.API != "Produce" || rule.Error != "NOT_LEADER_OR_FOLLOWER" {
		t.Fatalf("fault add: rc %d %s %s", rc, out, errs)
	}
	if rc, _, errs := ctl("fault", "add", `{"api":"Produce","error":"NOPE"}`); rc != 1 || !strings.Contains(errs, `unknown Kafka error "NOPE"`) {
		t.Errorf("bad rule: rc %d %s", rc, errs)
	}
	if rc, _, _ := ctl("fault", "add", `not json`); rc != 2 {
		t.Errorf("non-JSON rule: rc %d", rc)
	}
	rc, out, _ = ctl("fault", "list")
	if rc != 0 || !strings.Contains(out, `"hits": 0`) || !strings.Contains(out, `"count": 3`) {
		t.Errorf("fault list: rc %d %s", rc, out)
	}
	if rc, _, errs := ctl("fault", "wait", "1", "1", "10ms"); rc != 1 || !strings.Contains(errs, "0 of 1 hits") {
		t.Errorf("fault wait without hits: rc %d %s", rc, errs)
	}
	if rc, _, _ := ctl("fault", "wait", "1"); rc != 2 {
		t.Errorf("fault wait without HITS: rc %d", rc)
	}
	if rc, _, errs := ctl("fault", "rm", "1"); rc != 0 {
		t.Errorf("fault rm: rc %d %s", rc, errs)
	}
	if rc, _, errs := ctl("fault", "rm", "1"); rc != 1 || !strings.Contains(errs, "no fault rule 1") {
		t.Errorf("second fault rm: rc %d %s", rc, errs)
	}
}
