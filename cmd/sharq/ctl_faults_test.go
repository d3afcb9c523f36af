package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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

	// Share faults: refusals name what is missing; an armed fault counts
	// once it fires, which the broker tests drive with real consumers.
	if rc, _, errs := ctl("share", "evict", "g", "m"); rc != 1 || !strings.Contains(errs, "no share session") {
		t.Errorf("share evict: rc %d %s", rc, errs)
	}
	if rc, _, errs := ctl("share", "expire-locks", "g", "nope", "0"); rc != 1 || !strings.Contains(errs, "no partition nope-0") {
		t.Errorf("share expire-locks: rc %d %s", rc, errs)
	}
	if rc, _, errs := ctl("share", "fail-dlq", "g", "2"); rc != 0 {
		t.Errorf("share fail-dlq: rc %d %s", rc, errs)
	}
	if rc, _, _ := ctl("share", "redeliver", "g", "t", "x"); rc != 2 {
		t.Errorf("share redeliver with a bad partition: rc %d", rc)
	}
	if rc, out, errs := ctl("share", "faults"); rc != 0 || !strings.Contains(out, `"dlq_writes_failed": 0`) {
		t.Errorf("share faults: rc %d %s %s", rc, out, errs)
	}
}

func TestParseOffsets(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"3", "[3]"}, {"3,7-9", "[3 7 8 9]"}, {"0-0", "[0]"},
		{"", "error"}, {"5-3", "error"}, {"-1", "error"}, {"a", "error"}, {"0-2000000", "error"},
	} {
		got, err := parseOffsets(tc.in)
		s := fmt.Sprint(got)
		if err != nil {
			s = "error"
		}
		if s != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, s, tc.want)
		}
	}
}
