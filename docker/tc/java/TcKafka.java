// TcKafka starts sharq's image with Testcontainers' own Kafka module,
// unchanged, and puts it through the client check every module gets in
// docker/docker_test.go (which compiles and runs this program):
//
//   java -cp CLASSES:LIB/* TcKafka apache|confluent IMAGE
//
//   apache     org.testcontainers.kafka.KafkaContainer, the image named with
//              asCompatibleSubstituteFor("apache/kafka")
//   confluent  org.testcontainers.kafka.ConfluentKafkaContainer,
//              asCompatibleSubstituteFor("confluentinc/cp-kafka")
//
// Check (from the host, through the mapped port): a topic with N records
// produced, read back by a consumer group and by a share group
// (KafkaShareConsumer, explicit acknowledgement, every record accepted and
// every commit answered without error). Then the test runs the same check
// from a container on the module's network against its BROKER listener
// (port 9093), asked for with a SHARQTC line (see docker_test.go).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.kafka.ConfluentKafkaContainer;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

public class TcKafka {
    static final int N = 20;
    static final long DEADLINE_MS = 60_000;

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("apache") || args[0].equals("confluent"))) {
            System.err.println("usage: TcKafka apache|confluent IMAGE");
            System.exit(2);
        }
        String which = args[0];
        DockerImageName image = DockerImageName.parse(args[1]);
        try (Network net = Network.newNetwork()) {
            long t0 = System.nanoTime();
            GenericContainer<?> kafka;
            String bootstrap;
            if (which.equals("apache")) {
                KafkaContainer k = new KafkaContainer(image.asCompatibleSubstituteFor("apache/kafka"))
                    .withNetwork(net).withNetworkAliases("kafka");
                k.start();
                kafka = k;
                bootstrap = k.getBootstrapServers();
            } else {
                ConfluentKafkaContainer k = new ConfluentKafkaContainer(image.asCompatibleSubstituteFor("confluentinc/cp-kafka"))
                    .withNetwork(net).withNetworkAliases("kafka");
                k.start();
                kafka = k;
                bootstrap = k.getBootstrapServers();
            }
            long started = System.nanoTime();
            try {
                long first = check(bootstrap, "java-" + which + "-host", t0);
                System.out.println("SHARQTC timing start-ms=" + (started - t0) / 1_000_000 + " first-record-ms=" + first);
                // Both modules put the BROKER listener on port 9093.
                ask("check network " + net.getId() + " kafka:9093 java-" + which + "-network");
            } finally {
                kafka.stop();
            }
        }
        System.out.println("SHARQTC done");
    }

    // check runs the client check against bootstrap and returns the
    // milliseconds from t0 to the first record's acknowledgement.
    static long check(String bootstrap, String name, long t0) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        long first;
        try (Admin admin = Admin.create(ap); KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
            admin.createTopics(List.of(new NewTopic(name, 3, (short) 1))).all().get();
            p.send(new ProducerRecord<>(name, null, name + "-0")).get();
            first = (System.nanoTime() - t0) / 1_000_000;
            for (int i = 1; i < N; i++) {
                p.send(new ProducerRecord<>(name, Integer.toString(i % 7), name + "-" + i));
            }
            p.flush();
            // A share group starts at the end of the log unless told otherwise.
            ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, name + "-share");
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
        }

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, name + "-group");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        Set<String> seen = new HashSet<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
            c.subscribe(List.of(name));
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (seen.size() < N && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    seen.add(r.value());
                }
            }
            c.commitSync();
        }
        expectAll(seen, name, "consumer group");

        Properties sp = new Properties();
        sp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        sp.put(ConsumerConfig.GROUP_ID_CONFIG, name + "-share");
        sp.put("share.acknowledgement.mode", "explicit");
        sp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        sp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        seen.clear();
        try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(sp)) {
            c.subscribe(List.of(name));
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (seen.size() < N && System.currentTimeMillis() < deadline) {
                int n = 0;
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                    seen.add(r.value());
                    n++;
                }
                if (n == 0) {
                    continue;
                }
                Map<TopicIdPartition, Optional<KafkaException>> res = c.commitSync(Duration.ofSeconds(30));
                for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : res.entrySet()) {
                    if (e.getValue().isPresent()) {
                        throw new IllegalStateException("share group: acknowledgement of " + e.getKey() + " failed", e.getValue().get());
                    }
                }
            }
        }
        expectAll(seen, name, "share group");
        return first;
    }

    static void expectAll(Set<String> seen, String name, String what) {
        for (int i = 0; i < N; i++) {
            if (!seen.contains(name + "-" + i)) {
                throw new IllegalStateException(what + ": " + seen.size() + " of " + N + " records, " + name + "-" + i + " missing");
            }
        }
    }

    static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

    // ask prints a SHARQTC request and waits for the test's answer.
    static void ask(String req) throws Exception {
        System.out.println("SHARQTC " + req);
        System.out.flush();
        String line = STDIN.readLine();
        if (line == null || !line.trim().equals("ok")) {
            throw new IllegalStateException(req + ": " + line);
        }
    }
}
