package config

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestKafkaEnvKey(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		ok        bool
	}{
		{"KAFKA_LOG_DIRS", "log.dirs", true},
		{"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "offsets.topic.replication.factor", true},
		{"KAFKA_A_B_C", "a.b.c", true}, // the image's regular expression would give a.b_c
		{"KAFKA_FOO__BAR", "foo_bar", true},
		{"KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___256_SASL_JAAS_CONFIG", "listener.name.client.scram-sha-256.sasl.jaas.config", true},
		{"KAFKA_LISTENER_NAME_SECURE_SCRAM-SHA-256_SASL_JAAS_CONFIG", "listener.name.secure.scram-sha-256.sasl.jaas.config", true},
		{"KAFKA_X____Y", "", false},
		{"KAFKA_", "", false},
		{"KAFKA", "", false},
		{"SHARQ_LOG_DIRS", "", false},
	} {
		key, ok := KafkaEnvKey(tc.name)
		if key != tc.key || ok != tc.ok {
			t.Errorf("KafkaEnvKey(%s) = %q, %v; want %q, %v", tc.name, key, ok, tc.key, tc.ok)
		}
	}
}

// The environments the stock Testcontainers modules and the apache/kafka
// compose example set (copied from their sources: KafkaHelper.envVars,
// testcontainers-go's kafka.Run, testcontainers-python's and -node's
// KafkaContainer), plus what their start scripts export.
var moduleEnvs = map[string][]string{
	"java": {
		"CLUSTER_ID=4L6g3nShT-eMCtK--X86sw",
		"KAFKA_LISTENERS=BROKER://0.0.0.0:9093,PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9094",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"KAFKA_INTER_BROKER_LISTENER_NAME=BROKER",
		"KAFKA_PROCESS_ROLES=broker,controller",
		"KAFKA_CONTROLLER_LISTENER_NAMES=CONTROLLER",
		"KAFKA_NODE_ID=1",
		"KAFKA_CONTROLLER_QUORUM_VOTERS=1@localhost:9094",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=1",
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS=1",
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR=1",
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR=1",
		"KAFKA_LOG_FLUSH_INTERVAL_MESSAGES=9223372036854775807",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0",
		"KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:32771,BROKER://3f2a9c1d0e4b:9093",
	},
	"go": {
		"KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092,CONTROLLER://0.0.0.0:9094",
		"KAFKA_REST_BOOTSTRAP_SERVERS=PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092,CONTROLLER://0.0.0.0:9094",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"KAFKA_INTER_BROKER_LISTENER_NAME=BROKER",
		"KAFKA_BROKER_ID=1",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=1",
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS=1",
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR=1",
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR=1",
		"KAFKA_LOG_FLUSH_INTERVAL_MESSAGES=9223372036854775807",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0",
		"KAFKA_NODE_ID=1",
		"KAFKA_PROCESS_ROLES=broker,controller",
		"KAFKA_CONTROLLER_LISTENER_NAMES=CONTROLLER",
		"KAFKA_CONTROLLER_QUORUM_VOTERS=1@localhost:9094",
		"KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:32771,BROKER://3f2a9c1d0e4b:9092",
	},
	"python-zookeeper": {
		"KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"KAFKA_INTER_BROKER_LISTENER_NAME=BROKER",
		"KAFKA_BROKER_ID=1",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=1",
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS=1",
		"KAFKA_LOG_FLUSH_INTERVAL_MESSAGES=10000000",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0",
		"KAFKA_ZOOKEEPER_CONNECT=localhost:2181",
		"KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:32771,BROKER://172.18.0.2:9092",
	},
	"node-zookeeper": {
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"KAFKA_INTER_BROKER_LISTENER_NAME=BROKER",
		"KAFKA_BROKER_ID=1",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=1",
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS=1",
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR=1",
		"KAFKA_LOG_FLUSH_INTERVAL_MESSAGES=9223372036854775807",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0",
		"KAFKA_CONFLUENT_SUPPORT_METRICS_ENABLE=false",
		"KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092",
		"KAFKA_ZOOKEEPER_CONNECT=localhost:2181",
		"KAFKA_ADVERTISED_LISTENERS=BROKER://3f2a9c1d0e4b:9092,PLAINTEXT://localhost:32771",
	},
	"compose": {
		"KAFKA_NODE_ID=1",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
		"KAFKA_ADVERTISED_LISTENERS=PLAINTEXT_HOST://localhost:9092,PLAINTEXT://broker:19092",
		"KAFKA_PROCESS_ROLES=broker,controller",
		"KAFKA_CONTROLLER_QUORUM_VOTERS=1@broker:29093",
		"KAFKA_LISTENERS=CONTROLLER://:29093,PLAINTEXT_HOST://:9092,PLAINTEXT://:19092",
		"KAFKA_INTER_BROKER_LISTENER_NAME=PLAINTEXT",
		"KAFKA_CONTROLLER_LISTENER_NAMES=CONTROLLER",
		"CLUSTER_ID=4L6g3nShT-eMCtK--X86sw",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=1",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0",
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR=1",
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR=1",
		"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR=1",
		"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR=1",
		"KAFKA_LOG_DIRS=/tmp/kraft-combined-logs",
	},
}

// TestKafkaEnvModules: each module's environment loads; every listener but
// the controller's is served and advertised as given; the defaults the
// modules set are honoured; the keys sharq has no use for, the ZooKeeper
// settings and the Confluent-only keys are warned about, not fatal.
func TestKafkaEnvModules(t *testing.T) {
	for _, tc := range []struct {
		module                string
		listeners, advertised string
		flushMessages         int64
		clusterID             string
		logDirs               string
		warns                 []string
	}{
		{"java", "BROKER://0.0.0.0:9093,PLAINTEXT://0.0.0.0:9092", "PLAINTEXT://localhost:32771,BROKER://3f2a9c1d0e4b:9093",
			math.MaxInt64, "4L6g3nShT-eMCtK--X86sw", "",
			[]string{"controller listener not served", "key=controller.quorum.voters", "the only voter is this node",
				"key=offsets.topic.replication.factor", "key=transaction.state.log.min.isr", "key=inter.broker.listener.name"}},
		{"go", "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092", "PLAINTEXT://localhost:32771,BROKER://3f2a9c1d0e4b:9092",
			math.MaxInt64, "", "",
			[]string{"variable=KAFKA_REST_BOOTSTRAP_SERVERS", "names no Kafka broker configuration", "key=broker.id"}},
		{"python-zookeeper", "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092", "PLAINTEXT://localhost:32771,BROKER://172.18.0.2:9092",
			10000000, "", "",
			[]string{"ZooKeeper settings ignored", "variables=KAFKA_ZOOKEEPER_CONNECT"}},
		{"node-zookeeper", "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092", "BROKER://3f2a9c1d0e4b:9092,PLAINTEXT://localhost:32771",
			math.MaxInt64, "", "",
			[]string{"ZooKeeper settings ignored", "variable=KAFKA_CONFLUENT_SUPPORT_METRICS_ENABLE"}},
		{"compose", "PLAINTEXT_HOST://:9092,PLAINTEXT://:19092", "PLAINTEXT_HOST://localhost:9092,PLAINTEXT://broker:19092",
			math.MaxInt64, "4L6g3nShT-eMCtK--X86sw", "/tmp/kraft-combined-logs",
			[]string{"key=share.coordinator.state.topic.replication.factor", "the only voter is this node"}},
	} {
		t.Run(tc.module, func(t *testing.T) {
			c, logs := mustLoad(t, nil, moduleEnvs[tc.module])
			if got := formatListeners(c.Listeners); got != tc.listeners {
				t.Errorf("listeners %s, want %s", got, tc.listeners)
			}
			if got := formatListeners(c.AdvertisedListeners); got != tc.advertised {
				t.Errorf("advertised %s, want %s", got, tc.advertised)
			}
			for _, l := range append(c.Listeners, c.AdvertisedListeners...) {
				if l.Protocol != "PLAINTEXT" {
					t.Errorf("listener %s: protocol %q", l, l.Protocol)
				}
			}
			if c.ControllerQuorumVoters != "" {
				t.Errorf("voters %q kept: sharq would try raft over TCP", c.ControllerQuorumVoters)
			}
			if c.NodeID != 1 || c.GroupInitialRebalanceDelayMs != 0 || c.LogFlushIntervalMessages != tc.flushMessages {
				t.Errorf("node.id %d, group.initial.rebalance.delay.ms %d, log.flush.interval.messages %d",
					c.NodeID, c.GroupInitialRebalanceDelayMs, c.LogFlushIntervalMessages)
			}
			if c.ClusterID != tc.clusterID {
				t.Errorf("cluster.id %q, want %q", c.ClusterID, tc.clusterID)
			}
			if tc.logDirs != "" && c.LogDirs != tc.logDirs {
				t.Errorf("log.dirs %q, want %q", c.LogDirs, tc.logDirs)
			}
			if !c.KafkaEnvironment() {
				t.Error("KafkaEnvironment() = false")
			}
			for _, w := range tc.warns {
				if !strings.Contains(logs, w) {
					t.Errorf("logs lack %q:\n%s", w, logs)
				}
			}
			if n := strings.Count(logs, "ZooKeeper settings ignored"); n > 1 {
				t.Errorf("ZooKeeper mentioned %d times, want at most once:\n%s", n, logs)
			}
			if strings.Contains(logs, "level=ERROR") {
				t.Errorf("errors logged:\n%s", logs)
			}
		})
	}
}

// TestKafkaEnvPrecedence: defaults < file < KAFKA_* < SHARQ_* < --override,
// key by key.
func TestKafkaEnvPrecedence(t *testing.T) {
	path := writeFile(t, "s.properties", "num.partitions=2\nlog.segment.bytes=2097152\nmessage.max.bytes=1000\nlog.retention.bytes=10\n")
	env := []string{"KAFKA_NUM_PARTITIONS=3", "KAFKA_LOG_SEGMENT_BYTES=3145728", "KAFKA_MESSAGE_MAX_BYTES=2000",
		"SHARQ_NUM_PARTITIONS=5", "SHARQ_LOG_SEGMENT_BYTES=4194304"}
	c, _ := mustLoad(t, []string{"--config", path, "--override", "num.partitions=6"}, env)
	for _, tc := range []struct {
		key       string
		got, want int64
	}{
		{"num.partitions (override > SHARQ_* > KAFKA_* > file)", int64(c.NumPartitions), 6},
		{"log.segment.bytes (SHARQ_* > KAFKA_*)", int64(c.LogSegmentBytes), 4194304},
		{"message.max.bytes (KAFKA_* > file)", int64(c.MessageMaxBytes), 2000},
		{"log.retention.bytes (file > default)", c.LogRetentionBytes, 10},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.key, tc.got, tc.want)
		}
	}
	// Without any KAFKA_* key sharq is not standing in for Kafka's image.
	c, _ = mustLoad(t, nil, []string{"SHARQ_NUM_PARTITIONS=2", "KAFKA_HEAP_OPTS=-Xmx1G", "KAFKA_NO_SUCH_KEY=1"})
	if c.KafkaEnvironment() {
		t.Error("KafkaEnvironment() with no KAFKA_* key taken")
	}
	c, _ = mustLoad(t, nil, []string{"CLUSTER_ID=MkU3OEVBNTcwNTJENDM2Qk"})
	if !c.KafkaEnvironment() || c.ClusterID != "MkU3OEVBNTcwNTJENDM2Qk" {
		t.Errorf("CLUSTER_ID: KafkaEnvironment %v, cluster.id %q", c.KafkaEnvironment(), c.ClusterID)
	}
}

func TestKafkaEnvWarningsAndErrors(t *testing.T) {
	c, logs := mustLoad(t, nil, []string{"KAFKA_HEAP_OPTS=-Xmx1G", "KAFKA_OPTS=-Dx=y", "KAFKA_NUM_PARTITION=3",
		"KAFKA_PORT=tcp://10.0.0.1:9092", "KAFKA_X____Y=1", "KAFKA_ZOOKEEPER_CONNECT=zk:2181",
		"KAFKA_ZOOKEEPER_SESSION_TIMEOUT_MS=6000", "KAFKA_NUM_PARTITIONS=4"})
	if c.NumPartitions != 4 {
		t.Errorf("num.partitions %d", c.NumPartitions)
	}
	for _, want := range []string{
		"variables=KAFKA_HEAP_OPTS,KAFKA_OPTS", "not a JVM",
		"variable=KAFKA_NUM_PARTITION", "did you mean num.partitions?",
		"variable=KAFKA_PORT",
		"variable=KAFKA_X____Y", "four or more underscores",
		"variables=KAFKA_ZOOKEEPER_CONNECT,KAFKA_ZOOKEEPER_SESSION_TIMEOUT_MS",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if n := strings.Count(logs, "ZooKeeper settings ignored"); n != 1 {
		t.Errorf("ZooKeeper warning %d times, want once", n)
	}
	// A known key with a bad value is an error naming the variable.
	_, _, err := Load(nil, []string{"KAFKA_NUM_PARTITIONS=many"}, nil)
	if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "environment KAFKA_NUM_PARTITIONS") {
		t.Errorf("bad value: err = %v", err)
	}
	_, _, err = Load(nil, []string{"CLUSTER_ID=not-a-uuid"}, nil)
	if err == nil || !strings.Contains(err.Error(), "environment CLUSTER_ID") {
		t.Errorf("bad CLUSTER_ID: err = %v", err)
	}
	// Kafka's own rule: advertised listeners must be listeners. The image's
	// defaults are per variable, as the apache/kafka image's are, so
	// replacing KAFKA_LISTENERS alone leaves the default advertised
	// listeners naming what is gone.
	_, _, err = Load(nil, []string{"KAFKA_LISTENERS=CLIENT://:9092", "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=CLIENT:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:9092"}, nil)
	if err == nil || !strings.Contains(err.Error(), "not in listeners") {
		t.Errorf("advertised not among listeners: err = %v", err)
	}
}

// TestVotersSelfOnly: a voter list of this node alone is single-node
// metadata unless sharq.controller.listener asks for raft over TCP.
func TestVotersSelfOnly(t *testing.T) {
	c, logs := mustLoad(t, []string{"--override", "controller.quorum.voters=1@localhost:9094"}, nil)
	if c.ControllerQuorumVoters != "" || !strings.Contains(logs, "the only voter is this node") {
		t.Errorf("self-only voters: %q, logs %q", c.ControllerQuorumVoters, logs)
	}
	if v, ok := c.Explicit("controller.quorum.voters"); !ok || v != "1@localhost:9094" {
		t.Errorf("explicit value %q %v", v, ok)
	}
	c, _ = mustLoad(t, []string{"--override", "controller.quorum.voters=1@localhost:9094", "--override", "sharq.controller.listener=localhost:9094"}, nil)
	if c.ControllerQuorumVoters != "1@localhost:9094" {
		t.Errorf("with sharq.controller.listener: voters %q", c.ControllerQuorumVoters)
	}
	if _, _, err := Load([]string{"--override", "controller.quorum.voters=2@localhost:9094"}, nil, nil); err == nil {
		t.Error("a voter list without this node loaded")
	}
}
