package config

import (
	"sort"
	"strings"
)

// The apache/kafka image's environment convention (its docker/ scripts turn
// the environment into server.properties before Kafka starts), read here so
// that a compose file or a Testcontainers module written for that image
// configures sharq unchanged:
//
//   - KAFKA_<NAME> sets the key <name>: the prefix dropped, lower case, and
//     in the rest a single underscore is a dot, two are an underscore and
//     three are a dash (KAFKA_LOG_DIRS -> log.dirs,
//     KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___256_SASL_JAAS_CONFIG ->
//     listener.name.client.scram-sha-256.sasl.jaas.config). Four or more
//     underscores in a row mean nothing there either; such a variable is
//     warned about and ignored. (The image does the single-underscore step
//     with a regular expression that skips every second underscore between
//     one-letter words, as in A_B_C; no Kafka key has such a word.)
//   - CLUSTER_ID is cluster.id (the image passes it to kafka-storage format).
//   - The JVM and launcher variables the image excludes (KAFKA_OPTS,
//     KAFKA_HEAP_OPTS, KAFKA_JMX_OPTS, KAFKA_LOG4J_OPTS, ...) name no key:
//     they are reported as having no effect.
//
// As with SHARQ_* variables, a KAFKA_* variable that names no key is a
// warning, not an error: Kafka ignores unknown configs with a warning, the
// stock Testcontainers modules set some that only Confluent's images know
// (KAFKA_CONFLUENT_SUPPORT_METRICS_ENABLE, KAFKA_REST_BOOTSTRAP_SERVERS), and
// Kubernetes injects KAFKA_PORT=tcp://... for a service named kafka. The
// ZooKeeper settings of the modules' ZooKeeper mode (KAFKA_ZOOKEEPER_CONNECT)
// are reported together, once. An invalid value of a known key is an error.

// KafkaEnvPrefix starts the variables of the apache/kafka image's convention.
const KafkaEnvPrefix = "KAFKA_"

// ClusterIDEnv is the apache/kafka image's variable for cluster.id.
const ClusterIDEnv = "CLUSTER_ID"

// kafkaLauncherEnv are the variables the apache/kafka image keeps out of
// server.properties (its kafka-propertiesSpec.json "excludes", which spells
// one of them KAFKA_HEAP_OPT) and the other variables kafka-run-class.sh
// reads: settings of the JVM and the scripts, none a broker key.
var kafkaLauncherEnv = map[string]bool{
	"KAFKA_VERSION": true, "KAFKA_HEAP_OPT": true, "KAFKA_HEAP_OPTS": true, "KAFKA_LOG4J_OPTS": true,
	"KAFKA_OPTS": true, "KAFKA_JMX_OPTS": true, "KAFKA_JVM_PERFORMANCE_OPTS": true, "KAFKA_GC_LOG_OPTS": true,
	"KAFKA_LOG4J_ROOT_LOGLEVEL": true, "KAFKA_LOG4J_LOGGERS": true, "KAFKA_TOOLS_LOG4J_LOGLEVEL": true,
	"KAFKA_DEBUG": true,
}

// KafkaEnvKey is the key a KAFKA_* variable names under the apache/kafka
// image's convention (see above), or false when the name is not of that form.
func KafkaEnvKey(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, KafkaEnvPrefix)
	if !ok || rest == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(rest); {
		c := rest[i]
		if c != '_' {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(rest) && rest[j] == '_' {
			j++
		}
		switch j - i {
		case 1:
			b.WriteByte('.')
		case 2:
			b.WriteByte('_')
		case 3:
			b.WriteByte('-')
		default:
			return "", false
		}
		i = j
	}
	return b.String(), true
}

// kafkaEnvResult is what the KAFKA_* layer of the environment holds.
type kafkaEnvResult struct {
	settings  []setting
	unknown   []setting // variables that name no key (key is the guess)
	launcher  []string  // JVM / launcher variables
	zookeeper []string  // ZooKeeper-mode variables
}

// kafkaEnvSettings picks the KAFKA_* variables (and CLUSTER_ID) that name a
// key; the rest is returned for warnings.
func kafkaEnvSettings(environ []string) kafkaEnvResult {
	var r kafkaEnvResult
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if name == ClusterIDEnv {
			r.settings = append(r.settings, setting{key: "cluster.id", value: value, origin: "environment " + name})
			continue
		}
		if !strings.HasPrefix(name, KafkaEnvPrefix) {
			continue
		}
		if kafkaLauncherEnv[name] {
			r.launcher = append(r.launcher, name)
			continue
		}
		key, ok := KafkaEnvKey(name)
		switch {
		case ok && strings.HasPrefix(key, "zookeeper."):
			r.zookeeper = append(r.zookeeper, name)
		case ok && (brokerIndex[key] != nil || hasIgnoredPrefix(key)):
			r.settings = append(r.settings, setting{key: key, value: value, origin: "environment " + name})
		default:
			r.unknown = append(r.unknown, setting{key: key, value: value, origin: name})
		}
	}
	sort.Slice(r.settings, func(i, j int) bool { return r.settings[i].key < r.settings[j].key })
	sort.Slice(r.unknown, func(i, j int) bool { return r.unknown[i].origin < r.unknown[j].origin })
	sort.Strings(r.launcher)
	sort.Strings(r.zookeeper)
	return r
}
