package config

import (
	"errors"
	"testing"
)

func TestValidateGroupConfig(t *testing.T) {
	c := New()
	for _, tc := range []struct {
		name, value string
		wantErr     error
	}{
		{"consumer.session.timeout.ms", "50000", nil},
		{"consumer.session.timeout.ms", "44999", ErrInvalidConfig}, // below group.consumer.min.session.timeout.ms
		{"consumer.session.timeout.ms", "60001", ErrInvalidConfig},
		{"consumer.heartbeat.interval.ms", "x", ErrInvalidConfig},
		{"share.auto.offset.reset", "earliest", nil},
		{"share.auto.offset.reset", "by_duration:PT1H", nil},
		{"share.auto.offset.reset", "sometime", ErrInvalidConfig},
		{"share.isolation.level", "read_committed", nil},
		{"errors.deadletterqueue.topic.name", "__dlq", ErrInvalidConfig},
		{"sharq.share.fair.acquisition.enable", "false", nil},
		{"sharq.share.fair.acquisition.enable", "TRUE", nil},
		{"sharq.share.fair.acquisition.enable", "sometimes", ErrInvalidConfig},
		{"no.such.key", "1", ErrUnknownConfig},
		{"streams.assignor.name", "sticky", nil},
		{"streams.assignor.name", "balanced", ErrInvalidConfig},
		{"streams.num.standby.replicas", "2", nil},
		{"streams.num.standby.replicas", "3", ErrInvalidConfig},        // above group.streams.max.standby.replicas
		{"streams.task.offset.interval.ms", "14999", ErrInvalidConfig}, // below group.streams.min.task.offset.interval.ms
		{"streams.task.offset.interval.ms", "900000", nil},             // no upper bound
		{"streams.assignment.interval.ms", "15001", ErrInvalidConfig},
		{"streams.rack.aware.assignment.tags", "zone,rack", nil},
		{"streams.rack.aware.assignment.tags", "zone,zone", ErrInvalidConfig},
	} {
		err := ValidateGroupConfig(c, tc.name, tc.value)
		if (tc.wantErr == nil) != (err == nil) || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
			t.Errorf("%s=%s: err %v, want %v", tc.name, tc.value, err, tc.wantErr)
		}
	}
	// Kafka 4.4's words for one-sided bounds and streams rules.
	for _, tc := range []struct{ name, value, reason string }{
		{"streams.num.standby.replicas", "3", "streams.num.standby.replicas must be less than or equal to 2"},
		{"streams.task.offset.interval.ms", "10", "streams.task.offset.interval.ms must be greater than or equal to 15000"},
		{"streams.assignor.name", "balanced", "streams.assignor.name 'balanced' is not a registered task assignor. Registered assignors are: [sticky]."},
		{"streams.rack.aware.assignment.tags", "a,a", "streams.rack.aware.assignment.tags must not contain duplicate tag keys."},
	} {
		var ce *Error
		if err := ValidateGroupConfig(c, tc.name, tc.value); !errors.As(err, &ce) || ce.Reason != tc.reason {
			t.Errorf("%s=%s: %v, want %q", tc.name, tc.value, err, tc.reason)
		}
	}
	err := ValidateGroupConfigs(c, map[string]string{"consumer.session.timeout.ms": "45000", "consumer.heartbeat.interval.ms": "15000"})
	if err != nil {
		t.Fatalf("valid pair: %v", err)
	}
	c.GroupConsumerMaxHeartbeatIntervalMs = 60000
	if err := ValidateGroupConfigs(c, map[string]string{"consumer.heartbeat.interval.ms": "50000"}); err == nil {
		t.Fatal("heartbeat above the session timeout accepted")
	}
}

func TestGroupEntries(t *testing.T) {
	entries := GroupEntries(New(), map[string]string{"share.auto.offset.reset": "earliest"})
	byName := map[string]Entry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	// Kafka 4.4 lists 21 group keys; its internal ones only when set.
	if len(byName) != 21 {
		t.Fatalf("%d entries, want 21", len(byName))
	}
	if _, ok := byName["share.assignor.offload.enable"]; ok {
		t.Error("an internal key is listed without being set")
	}
	if e := entryByName(GroupEntries(New(), map[string]string{"share.assignor.offload.enable": "false"}), "share.assignor.offload.enable"); e.Value != "false" || e.Source != SourceGroup {
		t.Errorf("a set internal key: %+v", e)
	}
	e := byName["share.auto.offset.reset"]
	if e.Value != "earliest" || e.Source != SourceGroup || len(e.Synonyms) != 2 || e.Synonyms[1].Value != "latest" || e.Synonyms[1].Source != SourceDefault {
		t.Fatalf("share.auto.offset.reset = %+v", e)
	}
	// Every streams key takes its default from a group.streams.* broker key,
	// as in Kafka 4.4 (streams.assignor.name from the assignors list).
	for name, want := range map[string][2]string{
		"streams.assignment.interval.ms":     {"group.streams.assignment.interval.ms", "1000"},
		"streams.assignor.name":              {"group.streams.assignors", "sticky"},
		"streams.rack.aware.assignment.tags": {"group.streams.rack.aware.assignment.tags", ""},
		"streams.session.timeout.ms":         {"group.streams.session.timeout.ms", "45000"},
	} {
		e := byName[name]
		if e.Value != want[1] || e.Source != SourceDefault || len(e.Synonyms) != 1 || e.Synonyms[0].Name != want[0] || e.Synonyms[0].Value != want[1] {
			t.Errorf("%s = %+v, want its default from %s=%s", name, e, want[0], want[1])
		}
	}
	c := New()
	c.GroupStreamsAcceptableRecoveryLag = 500
	if e := entryByName(GroupEntries(c, map[string]string{"streams.task.offset.interval.ms": "20000"}), "streams.task.offset.interval.ms"); e.Value != "20000" || len(e.Synonyms) != 2 || e.Synonyms[1].Name != "group.streams.task.offset.interval.ms" || e.Synonyms[1].Value != "60000" {
		t.Errorf("streams.task.offset.interval.ms set on the group: %+v", e)
	}
	if v := GroupValue(c, nil, "streams.acceptable.recovery.lag"); v != "500" {
		t.Errorf("streams.acceptable.recovery.lag = %s, want the broker's 500", v)
	}
	e = byName["consumer.session.timeout.ms"]
	if e.Value != "45000" || e.Source != SourceDefault || len(e.Synonyms) != 1 || e.Synonyms[0].Name != "group.consumer.session.timeout.ms" {
		t.Fatalf("consumer.session.timeout.ms = %+v", e)
	}
}

// TestGroupKeysNameBrokerKeys: every broker key a group key refers to
// exists (synonym and range bounds).
func TestGroupKeysNameBrokerKeys(t *testing.T) {
	for _, k := range groupKeys {
		for _, b := range []string{k.broker, k.minKey, k.maxKey} {
			if b != "" && brokerIndex[b] == nil {
				t.Errorf("group key %s names unknown broker key %s", k.name, b)
			}
		}
	}
}
