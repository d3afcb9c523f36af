package config

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, args []string, env []string) (*Config, string) {
	t.Helper()
	var stderr bytes.Buffer
	c, act, err := Load(args, env, &stderr)
	if err != nil {
		t.Fatalf("Load(%q, %q): %v", args, env, err)
	}
	if act != ActionServe {
		t.Fatalf("action = %v, want serve", act)
	}
	return c, stderr.String()
}

func TestDefaults(t *testing.T) {
	c, logs := mustLoad(t, nil, nil)
	if logs != "" {
		t.Errorf("defaults logged %q, want nothing", logs)
	}
	want := []Listener{{Name: "PLAINTEXT", Host: "localhost", Port: 9092, Protocol: "PLAINTEXT"}}
	if !reflect.DeepEqual(c.Listeners, want) || !reflect.DeepEqual(c.AdvertisedListeners, want) {
		t.Errorf("listeners = %+v advertised = %+v, want %+v", c.Listeners, c.AdvertisedListeners, want)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"log.dirs", c.LogDirs, "./sharq-data"},
		{"node.id", c.NodeID, int32(1)},
		{"auto.create.topics.enable", c.AutoCreateTopicsEnable, true},
		{"delete.topic.enable", c.DeleteTopicEnable, true},
		{"num.partitions", c.NumPartitions, int32(1)},
		{"default.replication.factor", c.DefaultReplicationFactor, int16(1)},
		{"log.segment.bytes", c.LogSegmentBytes, int64(1 << 30)},
		{"log.roll.ms", c.LogRollMs, int64(168 * 3600000)},
		{"log.retention.ms", c.LogRetentionMs, int64(168 * 3600000)},
		{"log.retention.bytes", c.LogRetentionBytes, int64(-1)},
		{"log.flush.interval.messages", c.LogFlushIntervalMessages, int64(math.MaxInt64)},
		{"log.flush.interval.ms", c.LogFlushIntervalMs, int64(math.MaxInt64)},
		{"log.message.timestamp.after.max.ms", c.LogMessageTimestampAfterMaxMs, int64(3600000)},
		{"message.max.bytes", c.MessageMaxBytes, int32(1048588)},
		{"socket.request.max.bytes", c.SocketRequestMaxBytes, int32(104857600)},
		{"log.cleanup.policy", c.LogCleanupPolicy, "delete"},
		{"compression.type", c.CompressionType, "producer"},
		{"offsets.retention.minutes", c.OffsetsRetentionMinutes, int64(10080)},
		{"group.share.record.lock.duration.ms", c.GroupShareRecordLockDurationMs, int32(30000)},
		{"group.share.delivery.count.limit", c.GroupShareDeliveryCountLimit, int32(5)},
		{"group.share.partition.max.record.locks", c.GroupSharePartitionMaxRecordLocks, int32(2000)},
		{"group.consumer.assignors", c.GroupConsumerAssignors, []string{"uniform", "range"}},
		{"group.share.assignors", c.GroupShareAssignors, []string{"simple"}},
		{"metrics.listener", c.MetricsListener, ""},
		{"sharq.log.level", c.LogLevel, "info"},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	if err := New().Validate(); err != nil {
		t.Fatalf("New().Validate: %v", err)
	}
	if len(c.Ignored()) != 0 {
		t.Errorf("Ignored = %v, want none", c.Ignored())
	}
}

// Every default in the table parses and passes its own validator.
func TestTableDefaultsValid(t *testing.T) {
	for _, k := range brokerKeys {
		if k.null {
			continue
		}
		if _, err := k.parse(k.def); err != nil {
			t.Errorf("broker key %s: default %q: %v", k.name, k.def, err)
		}
	}
	for _, k := range topicKeys {
		if _, err := k.parse(k.def); err != nil {
			t.Errorf("topic key %s: default %q: %v", k.name, k.def, err)
		}
		for _, s := range k.synonyms {
			if brokerIndex[s] == nil {
				t.Errorf("topic key %s: synonym %s is not a broker key", k.name, s)
			}
		}
	}
}

// A stock Kafka 4.x KRaft server.properties loads; the keys sharq ignores
// are named in one warning each.
func TestLoadKafkaServerProperties(t *testing.T) {
	props := `############################# Server Basics #############################
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
############################# Socket Server Settings #############################
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kraft-combined-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`
	path := writeFile(t, "server.properties", props)
	c, logs := mustLoad(t, []string{"--config", path}, nil)
	if c.LogDirs != "/tmp/kraft-combined-logs" {
		t.Errorf("LogDirs = %q", c.LogDirs)
	}
	// The CONTROLLER listener is neither served nor advertised, and says so.
	if !reflect.DeepEqual(c.Listeners, []Listener{{Name: "PLAINTEXT", Port: 9092, Protocol: "PLAINTEXT"}}) ||
		!reflect.DeepEqual(c.AdvertisedListeners, []Listener{{Name: "PLAINTEXT", Host: "localhost", Port: 9092, Protocol: "PLAINTEXT"}}) {
		t.Errorf("Listeners = %+v advertised %+v", c.Listeners, c.AdvertisedListeners)
	}
	if !strings.Contains(logs, "controller listener not served") || !strings.Contains(logs, "CONTROLLER://:9093") {
		t.Errorf("no warning about the CONTROLLER listener in %q", logs)
	}
	wantIgnored := []string{"controller.quorum.bootstrap.servers", "inter.broker.listener.name",
		"num.io.threads", "num.network.threads", "num.recovery.threads.per.data.dir", "offsets.topic.replication.factor",
		"process.roles", "share.coordinator.state.topic.min.isr", "share.coordinator.state.topic.replication.factor",
		"socket.receive.buffer.bytes", "socket.send.buffer.bytes", "transaction.state.log.min.isr",
		"transaction.state.log.replication.factor"}
	if !reflect.DeepEqual(c.Ignored(), wantIgnored) {
		t.Errorf("Ignored = %v\nwant      %v", c.Ignored(), wantIgnored)
	}
	for _, k := range wantIgnored {
		if !strings.Contains(logs, "key="+k+" ") || !strings.Contains(logs, "has no effect in sharq") {
			t.Errorf("no warning naming %s in %q", k, logs)
		}
	}
	if strings.Contains(logs, "key=log.dirs") {
		t.Errorf("warned about an honoured key: %q", logs)
	}
	// The positional form of kafka-server-start.sh works too.
	c2, _ := mustLoad(t, []string{path, "--override", "node.id=7"}, nil)
	if c2.NodeID != 7 || c2.LogDirs != "/tmp/kraft-combined-logs" {
		t.Errorf("positional file: node.id=%d log.dirs=%q", c2.NodeID, c2.LogDirs)
	}
}

func TestLoadYAML(t *testing.T) {
	yaml := `# sharq.yaml
listeners: PLAINTEXT://127.0.0.1:0
log.dirs: /data/sharq
num.partitions: 3
auto.create.topics.enable: false
log.cleanup.policy: [delete, compact]
group.share.record.lock.duration.ms: 15000
group:
  share:
    delivery.count.limit: 7
`
	for _, name := range []string{"sharq.yaml", "sharq.conf"} { // by extension and by content
		path := writeFile(t, name, yaml)
		c, _ := mustLoad(t, []string{"--config=" + path}, nil)
		if c.LogDirs != "/data/sharq" || c.NumPartitions != 3 || c.AutoCreateTopicsEnable ||
			c.LogCleanupPolicy != "delete,compact" || c.GroupShareRecordLockDurationMs != 15000 ||
			c.GroupShareDeliveryCountLimit != 7 || c.Listeners[0].Port != 0 || c.Listeners[0].Host != "127.0.0.1" {
			t.Errorf("%s: loaded %+v", name, c)
		}
	}
	bad := writeFile(t, "bad.yaml", "log.dirs: [a, [b]]\n")
	if _, _, err := Load([]string{"--config", bad}, nil, nil); err == nil || !strings.Contains(err.Error(), "log.dirs") {
		t.Errorf("nested list: err = %v, want one naming log.dirs", err)
	}
	broken := writeFile(t, "broken.yaml", "a: [unclosed\n")
	if _, _, err := Load([]string{"--config", broken}, nil, nil); err == nil || !strings.Contains(err.Error(), "YAML") {
		t.Errorf("broken YAML: err = %v", err)
	}
}

func TestPropertiesDetectedByContent(t *testing.T) {
	path := writeFile(t, "server.conf", "! a properties comment\nnum.partitions = 4\nlog.dirs /srv/x\n")
	c, _ := mustLoad(t, []string{"--config", path}, nil)
	if c.NumPartitions != 4 || c.LogDirs != "/srv/x" {
		t.Fatalf("num.partitions=%d log.dirs=%q", c.NumPartitions, c.LogDirs)
	}
}

func TestPrecedence(t *testing.T) {
	path := writeFile(t, "s.properties", "num.partitions=2\nlog.segment.bytes=2097152\nmessage.max.bytes=1000\n")
	env := []string{"HOME=/root", "SHARQ_NUM_PARTITIONS=3", "SHARQ_LOG_SEGMENT_BYTES=3145728"}
	c, _ := mustLoad(t, []string{"--config", path, "--override", "num.partitions=4"}, env)
	if c.NumPartitions != 4 {
		t.Errorf("num.partitions = %d, want 4 (override beats env and file)", c.NumPartitions)
	}
	if c.LogSegmentBytes != 3145728 {
		t.Errorf("log.segment.bytes = %d, want 3145728 (env beats file)", c.LogSegmentBytes)
	}
	if c.MessageMaxBytes != 1000 {
		t.Errorf("message.max.bytes = %d, want 1000 (file beats default)", c.MessageMaxBytes)
	}
	// Repeated overrides: the last wins.
	c, _ = mustLoad(t, []string{"--override", "node.id=2", "--override=node.id=5"}, nil)
	if c.NodeID != 5 {
		t.Errorf("node.id = %d, want 5", c.NodeID)
	}
	// Environment names: dots to underscores, upper case.
	c, _ = mustLoad(t, nil, []string{"SHARQ_LOG_DIRS=/e", "SHARQ_ADVERTISED_LISTENERS=PLAINTEXT://broker.example:9092"})
	if c.LogDirs != "/e" || c.AdvertisedListeners[0].Host != "broker.example" {
		t.Errorf("env: log.dirs=%q advertised=%+v", c.LogDirs, c.AdvertisedListeners)
	}
	if EnvName("group.share.record.lock.duration.ms") != "SHARQ_GROUP_SHARE_RECORD_LOCK_DURATION_MS" {
		t.Errorf("EnvName = %s", EnvName("group.share.record.lock.duration.ms"))
	}
}

func TestDerivedRetentionAndRoll(t *testing.T) {
	tests := []struct {
		overrides       []string
		retention, roll int64
		flushMs, jitter int64
	}{
		{nil, 168 * 3600000, 168 * 3600000, math.MaxInt64, 0},
		{[]string{"log.retention.hours=1"}, 3600000, 168 * 3600000, math.MaxInt64, 0},
		{[]string{"log.retention.hours=1", "log.retention.minutes=5"}, 300000, 168 * 3600000, math.MaxInt64, 0},
		{[]string{"log.retention.hours=1", "log.retention.minutes=5", "log.retention.ms=1234"}, 1234, 168 * 3600000, math.MaxInt64, 0},
		{[]string{"log.retention.ms=-1"}, -1, 168 * 3600000, math.MaxInt64, 0},
		{[]string{"log.retention.hours=-5"}, -1, 168 * 3600000, math.MaxInt64, 0},
		{[]string{"log.roll.hours=2"}, 168 * 3600000, 7200000, math.MaxInt64, 0},
		{[]string{"log.roll.hours=2", "log.roll.ms=100"}, 168 * 3600000, 100, math.MaxInt64, 0},
		{[]string{"log.flush.scheduler.interval.ms=500"}, 168 * 3600000, 168 * 3600000, 500, 0},
		{[]string{"log.flush.scheduler.interval.ms=500", "log.flush.interval.ms=50"}, 168 * 3600000, 168 * 3600000, 50, 0},
		{[]string{"log.roll.jitter.hours=1"}, 168 * 3600000, 168 * 3600000, math.MaxInt64, 3600000},
	}
	for _, tc := range tests {
		var args []string
		for _, o := range tc.overrides {
			args = append(args, "--override", o)
		}
		c, _ := mustLoad(t, args, nil)
		if c.LogRetentionMs != tc.retention || c.LogRollMs != tc.roll || c.LogFlushIntervalMs != tc.flushMs || c.LogRollJitterMs != tc.jitter {
			t.Errorf("%v: retention=%d roll=%d flush=%d jitter=%d, want %d %d %d %d", tc.overrides,
				c.LogRetentionMs, c.LogRollMs, c.LogFlushIntervalMs, c.LogRollJitterMs, tc.retention, tc.roll, tc.flushMs, tc.jitter)
		}
	}
	// log.dir is used only when log.dirs is not given.
	c, _ := mustLoad(t, []string{"--override", "log.dir=/a"}, nil)
	if c.LogDirs != "/a" {
		t.Errorf("log.dir: LogDirs = %q", c.LogDirs)
	}
	c, _ = mustLoad(t, []string{"--override", "log.dir=/a", "--override", "log.dirs=/b"}, nil)
	if c.LogDirs != "/b" {
		t.Errorf("log.dirs beats log.dir: LogDirs = %q", c.LogDirs)
	}
}

// Every invalid value is an error naming the key, the origin and the reason.
func TestValidationErrors(t *testing.T) {
	tests := []struct {
		override string
		reason   string
	}{
		{"num.partitions=0", "Value must be at least 1"},
		{"num.partitions=abc", "Not a number of type INT"},
		{"num.partitions=3000000000", "Not a number of type INT"},
		{"node.id=-3", "Value must be at least 0"},
		{"default.replication.factor=40000", "Value must be no more than 32767"},
		{"auto.create.topics.enable=yes", "Expected value to be either true or false"},
		{"log.segment.bytes=1000", "Value must be at least 1048576"},
		{"log.retention.bytes=1.5", "Not a number of type LONG"},
		{"log.message.timestamp.type=Now", "String must be one of: CreateTime, LogAppendTime"},
		{"log.cleanup.policy=delete,purge", "String must be one of: compact, delete"},
		{"compression.type=brotli", "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"},
		{"compression.gzip.level=12", "between 1 and 9"},
		{"offsets.topic.replication.factor=0", "Value must be at least 1"},
		{"log.cleaner.min.cleanable.ratio=1.5", "Value must be no more than 1"},
		{"log.flush.interval.messages=0", "Value must be at least 1"},
		{"socket.request.max.bytes=0", "Value must be at least 1"},
		{"group.share.max.size=1001", "Value must be no more than 1000"},
		{"group.share.record.lock.duration.ms=999", "Value must be at least 1000"},
		{"group.share.delivery.count.limit=11", "Value must be no more than 10"},
		{"group.share.record.lock.duration.ms=70000", "must be less than or equal to group.share.max.record.lock.duration.ms"},
		{"group.share.heartbeat.interval.ms=4000", "must be greater than or equal to group.share.min.heartbeat.interval.ms"},
		{"group.consumer.session.timeout.ms=90000", "must be less than or equal to group.consumer.max.session.timeout.ms"},
		{"group.share.assignors=simple,other", "exactly one assignor"},
		{"group.streams.heartbeat.interval.ms=4000", "group.streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"},
		{"group.streams.session.timeout.ms=90000", "group.streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms"},
		{"group.streams.assignment.interval.ms=20000", "group.streams.assignment.interval.ms must be less than or equal to group.streams.max.assignment.interval.ms"},
		{"group.streams.num.standby.replicas=3", "group.streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
		{"group.streams.task.offset.interval.ms=1000", "group.streams.task.offset.interval.ms must be greater than or equal to group.streams.min.task.offset.interval.ms"},
		{"group.streams.num.warmup.replicas=21", "group.streams.num.warmup.replicas must be less than or equal to group.streams.max.warmup.replicas"},
		{"group.streams.assignors=sticky,sticky", "Duplicate entry sticky"},
		{"group.streams.assignors=org.example.MyAssignor", "only the built-in sticky"},
		{"group.streams.rack.aware.assignment.tags=zone,zone", "Duplicate entry zone"},
		{"group.consumer.migration.policy=sideways", "String must be one of"},
		{"sharq.log.level=loud", "String must be one of: debug, info, warn, error"},
		{"listeners=PLAINTEXT//localhost:9092", "NAME://host:port"},
		{"listeners=PLAINTEXT://localhost:99999", "not in 0..65535"},
		{"listeners=PLAINTEXT://localhost:1,PLAINTEXT://localhost:2", "different name"},
		{"listeners=PLAINTEXT://::1:9092", "IPv6 host must be in brackets"},
		{"listeners=INTERNAL://localhost:9093", "No security protocol defined for listener INTERNAL"},
		{"advertised.listeners=PLAINTEXT://0.0.0.0:9092", "nonroutable meta-address"},
		{"advertised.listeners=OTHER://h:1", "No security protocol defined for listener OTHER"},
		{"listener.security.protocol.map=PLAINTEXT:TLS", "unknown security protocol"},
		{"log.dirs=/a,/b", "exactly one data directory"},
		{"log.dirs=", "Empty list not allowed"},
		{"controller.quorum.voters=1@localhost", "id@host:port"},
		{"controller.quorum.voters=2@localhost:9093", "node.id 1 is not among the voters"},
		{"cluster.id=not-a-uuid", "must be a Kafka Uuid"},
		{"metrics.listener=nohostport", "not host:port"},
		{"ssl.client.auth=maybe", "String must be one of: required, requested, none"},
	}
	for _, tc := range tests {
		key, _, _ := strings.Cut(tc.override, "=")
		_, _, err := Load([]string{"--override", tc.override}, nil, nil)
		if err == nil {
			t.Errorf("%s: no error", tc.override)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v does not wrap ErrInvalidConfig", tc.override, err)
		}
		if !strings.Contains(msg, tc.reason) {
			t.Errorf("%s: error %q lacks reason %q", tc.override, msg, tc.reason)
		}
		if !strings.Contains(msg, "configuration "+key) && !strings.Contains(msg, key+" must") {
			t.Errorf("%s: error %q does not name key %s", tc.override, msg, key)
		}
	}
	// The origin is named: file line, environment variable.
	path := writeFile(t, "s.properties", "\nnum.partitions=-1\n")
	_, _, err := Load([]string{"--config", path}, []string{"SHARQ_NODE_ID=x"}, nil)
	if err == nil || !strings.Contains(err.Error(), path+":2") || !strings.Contains(err.Error(), "environment SHARQ_NODE_ID") {
		t.Errorf("origins: err = %v", err)
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--override", "log.dirz=/x"}, nil, "unknown configuration log.dirz"},
		{[]string{"--override", "log.dirz=/x"}, nil, "did you mean log.dir?"},
		{[]string{"--override", "LOG.DIRS=/x"}, nil, "unknown configuration LOG.DIRS"},
	}
	for _, tc := range tests {
		_, _, err := Load(tc.args, tc.env, nil)
		if err == nil || !errors.Is(err, ErrUnknownConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: err = %v, want ErrUnknownConfig containing %q", tc.args, tc.env, err, tc.want)
		}
	}
	// Several problems are reported together.
	_, _, err := Load([]string{"--override", "nope=1", "--override", "num.partitions=0"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "num.partitions") {
		t.Errorf("joined: err = %v", err)
	}
	// A SHARQ_* variable that names no key is a warning (with a guess), not
	// an error: the environment is shared with other software.
	var warn strings.Builder
	c, _, err := Load(nil, []string{"SHARQ_NUM_PARTITION=3", "SHARQ_PORT=tcp://10.0.0.1:9092"}, &warn)
	if err != nil || c == nil {
		t.Fatalf("unknown SHARQ_* variables: err = %v", err)
	}
	for _, want := range []string{"SHARQ_NUM_PARTITION", "did you mean num.partitions?", "SHARQ_PORT"} {
		if !strings.Contains(warn.String(), want) {
			t.Errorf("warning %q lacks %q", warn.String(), want)
		}
	}
	// Unrelated environment variables are not ours.
	mustLoad(t, nil, []string{"PATH=/bin", "SHARQX=1", "NOEQUALS"})
	// listener.name.* families are accepted and warned about.
	c, logs := mustLoad(t, []string{"--override", "listener.name.plaintext.max.connections=10"}, nil)
	if !reflect.DeepEqual(c.Ignored(), []string{"listener.name.plaintext.max.connections"}) || !strings.Contains(logs, "has no effect") {
		t.Errorf("listener.name.*: ignored=%v logs=%q", c.Ignored(), logs)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--override", "novalue"}, {"--bogus"}, {"a.properties", "b.properties"}} {
		_, _, err := Load(args, nil, nil)
		if !errors.Is(err, ErrUsage) {
			t.Errorf("%v: err = %v, want ErrUsage", args, err)
		}
	}
	if _, _, err := Load([]string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, nil, nil); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestActions(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--override", "x=y", "--help"}} {
		c, act, err := Load(args, nil, nil)
		if err != nil || act != ActionHelp || c != nil {
			t.Errorf("%v: %v %v %v, want help", args, c, act, err)
		}
	}
	c, act, err := Load([]string{"--check-config", "--override", "num.partitions=5"}, nil, nil)
	if err != nil || act != ActionCheck || c.NumPartitions != 5 {
		t.Errorf("--check-config: %v %v", act, err)
	}
	if _, _, err := Load([]string{"--check-config", "--override", "num.partitions=0"}, nil, nil); err == nil {
		t.Error("--check-config accepted an invalid value")
	}
}

func TestListeners(t *testing.T) {
	tests := []struct {
		in   string
		want []Listener
		err  string
	}{
		{"PLAINTEXT://localhost:9092", []Listener{{"PLAINTEXT", "localhost", 9092, "PLAINTEXT"}}, ""},
		{"PLAINTEXT://:9092", []Listener{{"PLAINTEXT", "", 9092, "PLAINTEXT"}}, ""},
		{"plaintext://127.0.0.1:0", []Listener{{"PLAINTEXT", "127.0.0.1", 0, "PLAINTEXT"}}, ""},
		{"PLAINTEXT://[::1]:9092", []Listener{{"PLAINTEXT", "::1", 9092, "PLAINTEXT"}}, ""},
		{"PLAINTEXT://[fe80::1%eth0]:1", []Listener{{"PLAINTEXT", "fe80::1%eth0", 1, "PLAINTEXT"}}, ""},
		{" PLAINTEXT://a:1 , INTERNAL://b:2 ", []Listener{{"PLAINTEXT", "a", 1, "PLAINTEXT"}, {"INTERNAL", "b", 2, "PLAINTEXT"}}, ""},
		{"PLAINTEXT://a:0,INTERNAL://a:0", []Listener{{"PLAINTEXT", "a", 0, "PLAINTEXT"}, {"INTERNAL", "a", 0, "PLAINTEXT"}}, ""},
		{"PLAINTEXT://a:1,INTERNAL://a:1", nil, "different port"},
		{"PLAINTEXT://a:1,plaintext://b:2", nil, "different name"},
		{"PLAINTEXT://a", nil, "no port"},
		{"PLAINTEXT://a:-1", nil, "not in 0..65535"},
		{"://a:1", nil, "NAME://host:port"},
		{"PLAIN TEXT://a:1", nil, "invalid character"},
		{"PLAINTEXT://[::1:1", nil, "bracketed"},
		{"SASL_SSL://a:1", []Listener{{Name: "SASL_SSL", Host: "a", Port: 1, Protocol: "SASL_SSL"}}, ""},
	}
	m := map[string]string{"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT", "SASL_SSL": "SASL_SSL"}
	for _, tc := range tests {
		got, err := ParseListeners("listeners", tc.in, m)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "listeners") {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	l := Listener{Name: "PLAINTEXT", Host: "::1", Port: 9092}
	if l.String() != "PLAINTEXT://[::1]:9092" || l.Addr() != "[::1]:9092" {
		t.Errorf("String=%s Addr=%s", l.String(), l.Addr())
	}
}

func TestAdvertisedListenersDefault(t *testing.T) {
	tests := []struct{ listeners, want string }{
		{"PLAINTEXT://:9092", "PLAINTEXT://localhost:9092"},
		{"PLAINTEXT://0.0.0.0:0", "PLAINTEXT://localhost:0"},
		{"PLAINTEXT://[::]:9092", "PLAINTEXT://localhost:9092"},
		{"PLAINTEXT://10.1.2.3:9092", "PLAINTEXT://10.1.2.3:9092"},
	}
	for _, tc := range tests {
		c, _ := mustLoad(t, []string{"--override", "listeners=" + tc.listeners}, nil)
		if got := formatListeners(c.AdvertisedListeners); got != tc.want {
			t.Errorf("listeners=%s: advertised %s, want %s", tc.listeners, got, tc.want)
		}
	}
	// A custom listener name works once it is mapped.
	c, _ := mustLoad(t, []string{"--override", "listener.security.protocol.map=CLIENT:PLAINTEXT", "--override", "listeners=CLIENT://:9094"}, nil)
	if c.Listeners[0].Name != "CLIENT" || c.Listeners[0].Protocol != "PLAINTEXT" || c.AdvertisedListeners[0].Name != "CLIENT" {
		t.Errorf("custom name: %+v / %+v", c.Listeners, c.AdvertisedListeners)
	}
	// Advertised names must be listeners.
	_, _, err := Load([]string{"--override", "advertised.listeners=SSL://h:1",
		"--override", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:PLAINTEXT"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "advertised.listeners") || !strings.Contains(err.Error(), "not in listeners") {
		t.Errorf("advertised subset: err = %v", err)
	}
}

func TestVoters(t *testing.T) {
	c, _ := mustLoad(t, []string{"--override", "controller.quorum.voters=1@a:9093,2@[::1]:9094", "--override", "sharq.controller.listener=a:9093"}, nil)
	vs, err := c.Voters()
	want := []Voter{{1, "a", 9093}, {2, "::1", 9094}}
	if err != nil || !reflect.DeepEqual(vs, want) {
		t.Errorf("Voters = %+v, %v", vs, err)
	}
	if _, _, err := Load([]string{"--override", "controller.quorum.voters=1@a:1,1@b:2"}, nil, nil); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("duplicate voter: %v", err)
	}
}

// Validate on a hand-built Config names the key of each bad field.
func TestValidateHandBuilt(t *testing.T) {
	c := New()
	c.NumPartitions = 0
	c.GroupShareMinRecordLockDurationMs = 40000 // above its own range
	c.Listeners = nil
	c.LogDirs = ""
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"num.partitions", "group.share.min.record.lock.duration.ms", "listeners", "log.dirs"} {
		if !strings.Contains(err.Error(), "configuration "+want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("%v does not wrap ErrInvalidConfig", err)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Key == "" {
		t.Errorf("errors.As(*Error) failed on %v", err)
	}
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	c := New()
	c.LogFormat, c.LogLevel = "json", "warn"
	log := c.NewLogger(&buf)
	log.Info("hidden")
	log.Warn("shown", "k", 1)
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), `"msg":"shown"`) {
		t.Errorf("logger output %q", buf.String())
	}
}

func TestYAMLNullLeavesDefault(t *testing.T) {
	path := writeFile(t, "n.yaml", "log.retention.ms: ~\nnum.partitions: 2\n")
	c, _ := mustLoad(t, []string{"--config", path}, nil)
	if c.LogRetentionMs != 168*3600000 || c.NumPartitions != 2 {
		t.Errorf("retention=%d partitions=%d", c.LogRetentionMs, c.NumPartitions)
	}
}

// TestJavaDouble: doubles print as Java's Double.toString, which
// DescribeConfigs carries (log.cleaner.io.max.bytes.per.second defaults to
// Double.MAX_VALUE).
func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		0.5: "0.5", 1: "1.0", 2: "2.0", 1e6: "1000000.0", 1e7: "1.0E7", 1.5e7: "1.5E7",
		math.MaxFloat64: "1.7976931348623157E308", 0.001: "0.001", 0.0001: "1.0E-4", 0: "0.0", -2.5e9: "-2.5E9",
	} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestSchemaRegistryListeners(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"", "", true},
		{"http://0.0.0.0:8081", "http://0.0.0.0:8081", true},
		{"http://127.0.0.1:0, https://[::1]:8443", "http://127.0.0.1:0 https://[::1]:8443", true},
		{"HTTP://h:1/", "http://h:1", true},
		{"ftp://h:1", "", false},
		{"h:8081", "", false},
		{"http://h", "", false},
		{"http://h:99999", "", false},
	}
	for _, c := range cases {
		cfg, _, err := Load([]string{"--override", "schema.registry.listeners=" + c.in}, nil, io.Discard)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if err != nil {
			continue
		}
		var got []string
		for _, l := range cfg.SchemaRegistry().Listeners {
			got = append(got, l.String())
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%q: %v, want %s", c.in, got, c.want)
		}
	}
	cfg, _, err := Load([]string{"--override", "schema.registry.listeners=https://h:1", "--override", "listener.name.schema_registry.ssl.client.auth=required",
		"--override", "schema.registry.authentication.method=basic", "--override", "schema.registry.compatibility.level=full_transitive"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.SchemaRegistry()
	if sc.Security.ClientAuth != "required" || !sc.BasicAuth || sc.Compatibility != "FULL_TRANSITIVE" || sc.Topic != "_schemas" || sc.ReplicationFactor != 3 {
		t.Fatalf("%+v", sc)
	}
	// The Docker image's way: the environment.
	cfg, _, err = Load(nil, []string{"SHARQ_SCHEMA_REGISTRY_LISTENERS=http://0.0.0.0:8081"}, io.Discard)
	if err != nil || len(cfg.SchemaRegistry().Listeners) != 1 || cfg.SchemaRegistry().Listeners[0].Port != 8081 {
		t.Fatalf("from the environment: %+v %v", cfg.SchemaRegistry(), err)
	}
	for _, bad := range []string{"schema.registry.compatibility.level=sideways", "schema.registry.authentication.method=DIGEST", "schema.registry.topic=bad name"} {
		if _, _, err := Load([]string{"--override", bad}, nil, io.Discard); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
