package config

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestValidateTopicConfig(t *testing.T) {
	tests := []struct {
		name, value string
		err         error
		msg         string
	}{
		{"retention.ms", "86400000", nil, ""},
		{"retention.ms", "-1", nil, ""},
		{"retention.ms", "-2", ErrInvalidConfig, "Invalid value -2 for configuration retention.ms: Value must be at least -1"},
		{"retention.ms", "abc", ErrInvalidConfig, "Invalid value abc for configuration retention.ms: Not a number of type LONG"},
		{"retention.bytes", "-5", nil, ""},
		{"segment.bytes", "1048576", nil, ""},
		{"segment.bytes", "1024", ErrInvalidConfig, "Invalid value 1024 for configuration segment.bytes: Value must be at least 1048576"},
		{"segment.bytes", "9999999999", ErrInvalidConfig, "Not a number of type INT"},
		{"segment.ms", "0", ErrInvalidConfig, "Value must be at least 1"},
		{"cleanup.policy", "compact,delete", nil, ""},
		{"cleanup.policy", "", nil, ""},
		{"cleanup.policy", "delete,forever", ErrInvalidConfig, "String must be one of: compact, delete"},
		{"compression.type", "zstd", nil, ""},
		{"compression.type", "ZSTD", ErrInvalidConfig, "String must be one of"},
		{"message.timestamp.type", "LogAppendTime", nil, ""},
		{"message.timestamp.type", "logappendtime", ErrInvalidConfig, "String must be one of: CreateTime, LogAppendTime"},
		{"min.cleanable.dirty.ratio", "0.9", nil, ""},
		{"min.cleanable.dirty.ratio", "1.1", ErrInvalidConfig, "Value must be no more than 1"},
		{"min.insync.replicas", "0", ErrInvalidConfig, "Value must be at least 1"},
		{"preallocate", "TRUE", nil, ""},
		{"preallocate", "1", ErrInvalidConfig, "Expected value to be either true or false"},
		{"leader.replication.throttled.replicas", "*", nil, ""},
		{"leader.replication.throttled.replicas", "0:1,1:2", nil, ""},
		{"follower.replication.throttled.replicas", "0-1", ErrInvalidConfig, "[partitionId]:[brokerId]"},
		{"remote.storage.enable", "false", nil, ""},
		{"remote.storage.enable", "true", ErrInvalidConfig, "Tiered Storage functionality is disabled"},
		{"local.retention.ms", "-2", nil, ""},
		{"max.compaction.lag.ms", "0", ErrInvalidConfig, "Value must be at least 1"},
		{"errors.deadletterqueue.group.enable", "true", nil, ""},
		{"compression.zstd.level", "23", ErrInvalidConfig, "Value must be no more than 22"},
		{"message.downconversion.enable", "true", ErrUnknownConfig, "Unknown topic config name: message.downconversion.enable"},
		{"log.retention.ms", "1", ErrUnknownConfig, "Unknown topic config name: log.retention.ms"},
	}
	for _, tc := range tests {
		err := ValidateTopicConfig(tc.name, tc.value)
		if tc.err == nil {
			if err != nil {
				t.Errorf("%s=%s: %v", tc.name, tc.value, err)
			}
			continue
		}
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s=%s: err = %v, want %v containing %q", tc.name, tc.value, err, tc.err, tc.msg)
		}
	}
}

func TestValidateTopicConfigs(t *testing.T) {
	err := ValidateTopicConfigs(New(), map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "min.compaction.lag.ms (10) > max.compaction.lag.ms (5)") {
		t.Errorf("err = %v", err)
	}
	if err := ValidateTopicConfigs(New(), map[string]string{"retention.ms": "1", "cleanup.policy": "compact"}); err != nil {
		t.Errorf("valid set: %v", err)
	}
	if err := ValidateTopicConfigs(nil, map[string]string{"nope": "1"}); !errors.Is(err, ErrUnknownConfig) {
		t.Errorf("unknown: %v", err)
	}
}

func entryByName(es []Entry, name string) Entry {
	for _, e := range es {
		if e.Name == name {
			return e
		}
	}
	return Entry{}
}

func TestTopicEntries(t *testing.T) {
	c, _ := mustLoad(t, []string{"--override", "log.retention.hours=24", "--override", "log.segment.bytes=2097152",
		"--override", "log.cleaner.delete.retention.ms=1000"}, nil)
	es := TopicEntries(c, map[string]string{"cleanup.policy": "compact, delete", "flush.messages": "1"})
	if len(es) != len(topicKeys) {
		t.Fatalf("%d entries, want %d", len(es), len(topicKeys))
	}
	for i := 1; i < len(es); i++ {
		if es[i-1].Name >= es[i].Name {
			t.Fatalf("entries not sorted: %s before %s", es[i-1].Name, es[i].Name)
		}
	}
	tests := []struct {
		name   string
		value  string
		source int8
		typ    Type
		syn    []Synonym
	}{
		{"cleanup.policy", "compact,delete", SourceDynamicTopic, TypeList, []Synonym{
			{Name: "cleanup.policy", Value: "compact,delete", Source: SourceDynamicTopic},
			{Name: "log.cleanup.policy", Value: "delete", Source: SourceDefault}}},
		{"flush.messages", "1", SourceDynamicTopic, TypeLong, nil},
		// Kafka lists only synonyms from the first broker key on, so a
		// default set through log.retention.hours shows as DEFAULT_CONFIG.
		{"retention.ms", "86400000", SourceDefault, TypeLong, []Synonym{}},
		{"segment.bytes", "2097152", SourceStaticBroker, TypeInt, nil},
		{"delete.retention.ms", "1000", SourceStaticBroker, TypeLong, nil},
		{"segment.ms", "604800000", SourceDefault, TypeLong, []Synonym{}},
		{"segment.bytes", "2097152", SourceStaticBroker, TypeInt, []Synonym{
			{Name: "log.segment.bytes", Value: "2097152", Source: SourceStaticBroker},
			{Name: "log.segment.bytes", Value: "1073741824", Source: SourceDefault}}},
		{"max.message.bytes", "1048588", SourceDefault, TypeInt, nil},
		{"message.timestamp.after.max.ms", "3600000", SourceDefault, TypeLong, nil},
		{"flush.ms", "9223372036854775807", SourceDefault, TypeLong, nil},
		{"min.cleanable.dirty.ratio", "0.5", SourceDefault, TypeDouble, nil},
		{"remote.storage.enable", "false", SourceDefault, TypeBoolean, []Synonym(nil)},
	}
	for _, tc := range tests {
		e := entryByName(es, tc.name)
		if e.Value != tc.value || e.Source != tc.source || e.Type != int8(tc.typ) || e.ReadOnly || e.Null || e.Doc == "" {
			t.Errorf("%s: %+v, want value %s source %d type %d", tc.name, e, tc.value, tc.source, tc.typ)
		}
		if tc.syn != nil && !(len(tc.syn) == 0 && len(e.Synonyms) == 0) && !reflect.DeepEqual(e.Synonyms, tc.syn) {
			t.Errorf("%s synonyms: %+v, want %+v", tc.name, e.Synonyms, tc.syn)
		}
	}
	// Values agree with TopicValue.
	ov := map[string]string{"retention.bytes": "100"}
	for _, e := range TopicEntries(c, ov) {
		if got := TopicValue(c, ov, e.Name); got != e.Value {
			t.Errorf("%s: TopicValue %s, entry %s", e.Name, got, e.Value)
		}
	}
	if TopicValue(c, nil, "nope") != "" {
		t.Error("TopicValue of an unknown key is not empty")
	}
}

func TestTopicEntriesHandBuilt(t *testing.T) {
	c := New()
	c.LogRetentionMs = 5000 // changed on the struct, not through Load
	e := entryByName(TopicEntries(c, nil), "retention.ms")
	if e.Value != "5000" || e.Source != SourceStaticBroker {
		t.Errorf("retention.ms = %+v", e)
	}
	b := entryByName(BrokerEntries(c), "log.retention.ms")
	if b.Value != "5000" || b.Null || b.Source != SourceStaticBroker {
		t.Errorf("log.retention.ms = %+v", b)
	}
}

func TestTopicSettings(t *testing.T) {
	c, _ := mustLoad(t, []string{"--override", "log.flush.interval.messages=1", "--override", "log.roll.hours=1"}, nil)
	s := TopicSettingsFor(c, map[string]string{
		"retention.ms": "1000", "message.timestamp.type": "LogAppendTime", "cleanup.policy": "compact",
		"segment.bytes": "not-a-number", // unvalidated garbage falls back to the broker value
	})
	want := TopicSettings{
		SegmentBytes: 1 << 30, SegmentMs: 3600000, SegmentJitterMs: 0, SegmentIndexBytes: 10485760,
		RetentionMs: 1000, RetentionBytes: -1, IndexIntervalBytes: 4096, MaxMessageBytes: 1048588,
		FlushMessages: 1, FlushMs: math.MaxInt64, TimestampType: "LogAppendTime", LogAppendTime: true,
		TimestampBeforeMaxMs: math.MaxInt64, TimestampAfterMaxMs: 3600000,
		CleanupPolicy: []string{"compact"}, Compact: true, CompressionType: "producer", MinInsyncReplicas: 1,
		FileDeleteDelayMs: 60000, DeleteRetentionMs: 86400000, MaxCompactionLagMs: math.MaxInt64, MinCleanableDirtyRatio: 0.5,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("TopicSettingsFor =\n%+v\nwant\n%+v", s, want)
	}
	d := TopicSettingsFor(nil, nil)
	if d.RetentionMs != 604800000 || !d.Delete || d.Compact || d.TimestampType != "CreateTime" {
		t.Errorf("defaults: %+v", d)
	}
}

func TestBrokerEntries(t *testing.T) {
	c, _ := mustLoad(t, []string{"--override", "num.partitions=3", "--override", "log.retention.minutes=10",
		"--override", "ssl.keystore.password=secret", "--override", "num.io.threads=4"}, nil)
	es := BrokerEntries(c)
	hidden := 0
	for _, k := range brokerKeys {
		if k.hideDefault {
			hidden++
		}
	}
	// Every key but the unlisted ones left at their defaults.
	if len(es) != len(brokerKeys)-hidden {
		t.Fatalf("%d entries, want %d", len(es), len(brokerKeys)-hidden)
	}
	tests := []struct {
		name     string
		value    string
		null     bool
		source   int8
		readOnly bool
	}{
		{"num.partitions", "3", false, SourceStaticBroker, true},
		{"log.retention.minutes", "10", false, SourceStaticBroker, false},
		{"log.retention.ms", "", true, SourceDefault, false},
		{"log.retention.hours", "168", false, SourceDefault, false},
		{"log.segment.bytes", "1073741824", false, SourceDefault, false},
		{"ssl.keystore.password", "", true, SourceStaticBroker, true},
		{"num.io.threads", "4", false, SourceStaticBroker, false},
		{"listeners", "PLAINTEXT://localhost:9092", false, SourceDefault, true},
		{"advertised.listeners", "", true, SourceDefault, true},
		{"log.dirs", "./sharq-data", false, SourceDefault, true},
		{"node.id", "1", false, SourceDefault, true},
		{"broker.rack", "", true, SourceDefault, true},
		{"controller.listener.names", "", true, SourceDefault, true},
		{"log.cleaner.min.cleanable.ratio", "0.5", false, SourceDefault, false},
		{"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", false, SourceDefault, true},
	}
	for _, tc := range tests {
		e := entryByName(es, tc.name)
		if e.Value != tc.value || e.Null != tc.null || e.Source != tc.source || e.ReadOnly != tc.readOnly {
			t.Errorf("%s: %+v, want value %q null %v source %d readOnly %v", tc.name, e, tc.value, tc.null, tc.source, tc.readOnly)
		}
	}
	pw := entryByName(es, "ssl.keystore.password")
	if !pw.Sensitive || pw.Type != int8(TypePassword) {
		t.Errorf("password entry %+v", pw)
	}
	for _, s := range pw.Synonyms {
		if !s.Null || s.Value != "" {
			t.Errorf("password synonym leaks %+v", s)
		}
	}
	// Kafka's synonym lists start at the key itself.
	if rm := entryByName(es, "log.retention.ms"); len(rm.Synonyms) != 0 {
		t.Errorf("log.retention.ms synonyms %+v, want none", rm.Synonyms)
	}
	wantSyn := []Synonym{{Name: "log.retention.minutes", Value: "10", Source: SourceStaticBroker},
		{Name: "log.retention.hours", Value: "168", Source: SourceDefault}}
	if rm := entryByName(es, "log.retention.minutes"); !reflect.DeepEqual(rm.Synonyms, wantSyn) {
		t.Errorf("log.retention.minutes synonyms %+v, want %+v", rm.Synonyms, wantSyn)
	}
	if rh := entryByName(es, "log.retention.hours"); !reflect.DeepEqual(rh.Synonyms, wantSyn[1:]) {
		t.Errorf("log.retention.hours synonyms %+v, want %+v", rh.Synonyms, wantSyn[1:])
	}
	for _, e := range BrokerEntries(nil) {
		if e.Source != SourceDefault {
			t.Errorf("default config: %s has source %d", e.Name, e.Source)
		}
	}
}

func TestValidateBrokerDynamic(t *testing.T) {
	tests := []struct {
		name, value string
		err         error
		msg         string
	}{
		{"log.retention.ms", "1000", nil, ""},
		{"log.segment.bytes", "2097152", nil, ""},
		{"message.max.bytes", "2000000", nil, ""},
		{"group.share.assignment.interval.ms", "500", nil, ""},
		{"errors.deadletterqueue.topic.name.prefix", "dead.", nil, ""},
		{"log.segment.bytes", "10", ErrInvalidConfig, "Value must be at least 1048576"},
		{"log.dirs", "/x", ErrInvalidConfig, "Cannot update these configs dynamically: [log.dirs]"},
		{"node.id", "2", ErrInvalidConfig, "Cannot update these configs dynamically: [node.id]"},
		{"listeners", "PLAINTEXT://:1", ErrInvalidConfig, "Cannot update these configs dynamically"},
		{"num.partitions", "2", ErrInvalidConfig, "Cannot update these configs dynamically"},
		{"no.such.key", "1", ErrUnknownConfig, "no.such.key"},
	}
	for _, tc := range tests {
		err := ValidateBrokerDynamic(tc.name, tc.value)
		if tc.err == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s=%s: err = %v, want %v containing %q", tc.name, tc.value, err, tc.err, tc.msg)
		}
	}
	names := DynamicBrokerConfigNames()
	for _, want := range []string{"log.retention.ms", "log.retention.hours", "log.flush.interval.messages", "min.insync.replicas", "compression.type"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("%s is not dynamic", want)
		}
	}
	// Every topic config's first broker synonym is dynamic, as in Kafka's DynamicLogConfig.
	for _, k := range topicKeys {
		for _, s := range k.synonyms {
			if !brokerIndex[s].dynamic {
				t.Errorf("broker synonym %s of %s is not dynamic", s, k.name)
			}
		}
	}
}

func TestHelpAndReference(t *testing.T) {
	var help bytes.Buffer
	if err := WriteHelp(&help); err != nil {
		t.Fatal(err)
	}
	var text, md bytes.Buffer
	if err := WriteReference(&text, "text"); err != nil {
		t.Fatal(err)
	}
	if err := WriteReference(&md, "markdown"); err != nil {
		t.Fatal(err)
	}
	if err := WriteReference(&md, "html"); err == nil {
		t.Error("html format accepted")
	}
	for _, k := range brokerKeys {
		line := "  " + k.name + " (" + k.typ.String() + ") [" + displayDefault(k.def, k.null) + "]"
		if !strings.Contains(help.String(), line) {
			t.Errorf("--help lacks %q", line)
		}
		if !strings.Contains(md.String(), "| `"+k.name+"` |") {
			t.Errorf("markdown lacks %s", k.name)
		}
	}
	for _, k := range topicKeys {
		if !strings.Contains(text.String(), "  "+k.name+" (") || !strings.Contains(md.String(), "| `"+k.name+"` |") {
			t.Errorf("reference lacks topic key %s", k.name)
		}
	}
	for _, want := range []string{"--config FILE", "--override key=value", "--check-config", "SHARQ_LOG_DIRS",
		"listeners (string) [PLAINTEXT://localhost:9092]", "log.dirs (list) [./sharq-data]", "accepted, no effect in sharq"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	// Markdown rows have the header's column count.
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| `") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 8 {
				t.Errorf("markdown row has %d bars: %s", n, line)
			}
		}
	}
}

func TestKeyInfo(t *testing.T) {
	bk, tk := BrokerKeys(), TopicKeys()
	if len(bk) != len(brokerKeys) || len(tk) != len(topicKeys) {
		t.Fatalf("BrokerKeys %d TopicKeys %d", len(bk), len(tk))
	}
	got := map[string]KeyInfo{}
	for _, k := range append(bk, tk...) {
		got[k.Name] = k
	}
	if k := got["num.io.threads"]; k.Implemented || !k.Dynamic || k.Type != TypeInt || k.Default != "8" {
		t.Errorf("num.io.threads %+v", k)
	}
	if k := got["listeners"]; !k.Implemented || k.Deviation == "" || k.Default != "PLAINTEXT://localhost:9092" {
		t.Errorf("listeners %+v", k)
	}
	if k := got["retention.ms"]; !reflect.DeepEqual(k.Synonyms, []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}) {
		t.Errorf("retention.ms %+v", k)
	}
	if k := got["metrics.listener"]; !k.SharqOnly || k.Default != "" {
		t.Errorf("metrics.listener %+v", k)
	}
}

func TestCompressionTypeWarnsUnlessProducer(t *testing.T) {
	c, logs := mustLoad(t, []string{"--override", "compression.type=zstd"}, nil)
	if c.CompressionType != "zstd" || !strings.Contains(logs, "key=compression.type") {
		t.Errorf("zstd: %q %q", c.CompressionType, logs)
	}
	_, logs = mustLoad(t, []string{"--override", "compression.type=producer"}, nil)
	if logs != "" {
		t.Errorf("producer warned: %q", logs)
	}
}

func TestWithDynamic(t *testing.T) {
	static, _ := mustLoad(t, []string{"--override", "log.retention.ms=1000", "--override", "message.max.bytes=2000"}, nil)
	c, err := static.WithDynamic(
		map[string]string{"log.retention.ms": "5000", "log.segment.bytes": "2097152", "log.retention.hours": "1"},
		map[string]string{"log.retention.ms": "7000"})
	if err != nil {
		t.Fatal(err)
	}
	if c.LogRetentionMs != 7000 || c.LogSegmentBytes != 2097152 || c.MessageMaxBytes != 2000 {
		t.Errorf("fields: retention=%d segment=%d maxbytes=%d", c.LogRetentionMs, c.LogSegmentBytes, c.MessageMaxBytes)
	}
	if static.LogRetentionMs != 1000 || static.LogSegmentBytes != 1<<30 {
		t.Errorf("static config modified: %d %d", static.LogRetentionMs, static.LogSegmentBytes)
	}
	rm := entryByName(BrokerEntries(c), "log.retention.ms")
	want := []Synonym{
		{Name: "log.retention.ms", Value: "7000", Source: SourceDynamicBroker},
		{Name: "log.retention.ms", Value: "5000", Source: SourceDynamicDefaultBroker},
		{Name: "log.retention.hours", Value: "1", Source: SourceDynamicDefaultBroker},
		{Name: "log.retention.ms", Value: "1000", Source: SourceStaticBroker},
		{Name: "log.retention.hours", Value: "168", Source: SourceDefault},
	}
	if rm.Value != "7000" || rm.Source != SourceDynamicBroker || !reflect.DeepEqual(rm.Synonyms, want) {
		t.Errorf("log.retention.ms = %+v\nwant synonyms %+v", rm, want)
	}
	seg := entryByName(TopicEntries(c, nil), "segment.bytes")
	if seg.Value != "2097152" || seg.Source != SourceDynamicDefaultBroker {
		t.Errorf("segment.bytes = %+v", seg)
	}
	if s := TopicSettingsFor(c, nil); s.RetentionMs != 7000 || s.SegmentBytes != 2097152 {
		t.Errorf("TopicSettingsFor: %+v", s)
	}
	if Value(c, "log.retention.ms") != "7000" || Value(c, "log.retention.minutes") != "" || Value(c, "nope") != "" {
		t.Errorf("Value: %q %q", Value(c, "log.retention.ms"), Value(c, "log.retention.minutes"))
	}
	// Non-dynamic keys and bad values are refused, each named.
	// Unknown keys are stored by AlterConfigs and ignored here, as Kafka does.
	_, err = static.WithDynamic(map[string]string{"log.dirs": "/x", "plugin.key": "1"}, map[string]string{"log.segment.bytes": "1"})
	if err == nil || !strings.Contains(err.Error(), "[log.dirs]") || strings.Contains(err.Error(), "plugin.key") || !strings.Contains(err.Error(), "configuration log.segment.bytes") {
		t.Errorf("err = %v", err)
	}
}

func TestWithOverrides(t *testing.T) {
	static := New()
	c, err := WithOverrides(static, map[string]string{"log.retention.hours": "2", "message.max.bytes": "100"})
	if err != nil {
		t.Fatal(err)
	}
	if c.LogRetentionMs != 7200000 || c.MessageMaxBytes != 100 || static.MessageMaxBytes != 1048588 {
		t.Errorf("retention=%d maxbytes=%d static=%d", c.LogRetentionMs, c.MessageMaxBytes, static.MessageMaxBytes)
	}
	// Unlabelled dynamic values take effect but are not reported as static.
	e := entryByName(BrokerEntries(c), "message.max.bytes")
	if e.Value != "100" || e.Source != SourceDefault {
		t.Errorf("message.max.bytes = %+v", e)
	}
	if _, err := WithOverrides(static, map[string]string{"nope": "1"}); !errors.Is(err, ErrUnknownConfig) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := WithOverrides(static, map[string]string{"num.partitions": "0"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("invalid: %v", err)
	}
	if !IsTopicConfig("retention.ms") || IsTopicConfig("log.retention.ms") {
		t.Error("IsTopicConfig")
	}
	if d, ok := DefaultValue("num.partitions"); !ok || d != "1" {
		t.Errorf("DefaultValue = %q %v", d, ok)
	}
}
