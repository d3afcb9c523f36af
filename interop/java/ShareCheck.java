// ShareCheck drives a KafkaShareConsumer (KIP-932) in explicit
// acknowledgement mode and prints what the broker delivered, for
// interop/sharecheck_test.go. It compiles against kafka-clients 4.1 and 4.4:
// AcknowledgeType.RENEW (4.2+) is looked up by name.
//
//   java -cp CLASSES:LIB/* ShareCheck BOOTSTRAP TOPIC GROUP [dlq]
//
// With "dlq" (KIP-1191, 4.4 brokers) the group dead-letters into
// dlq.TOPIC (created with errors.deadletterqueue.group.enable=true,
// errors.deadletterqueue.copy.record.enable=true), and after consuming the
// program reads that topic back: one "dlq ..." line per record, sorted by
// the source offset header.
//
// Records (one partition, so their order is fixed), by key:
//   accept-N   ACCEPT on first delivery: never delivered again
//   reject-N   REJECT on first delivery: archived, never delivered again
//   release-N  RELEASE on every delivery: redelivered with delivery counts
//              1..limit (group.share.delivery.count.limit, 5 by default),
//              then archived
//   renew-0    RENEW on first delivery (4.2+ clients), then ACCEPT when the
//              consumer hands it out again; ACCEPT at once on 4.1
//
// Output lines (stdout):
//   client VERSION renew=true|false
//   produced N
//   deliver KEY offset=O delivery=D ack=TYPE
//   commit records=N errors=0
//   quiet           no record came for the quiet period after the last one
//   start-offset N  the share-partition start offset (listShareGroupOffsets)
//   summary KEY deliveries=D1,D2,.. acks=A1,A2,..   (sorted by key)
//   dlq partition=P key=K value=V timestamp=create-time-of-write|... headers=K1=V1;K2=V2;..
//   done
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ShareCheck {
    static final int LIMIT = 5; // group.share.delivery.count.limit default
    static final long QUIET_MS = 3000;
    static final long DEADLINE_MS = 60000;

    public static void main(String[] args) throws Exception {
        if (args.length != 3 && !(args.length == 4 && args[3].equals("dlq"))) {
            System.err.println("usage: ShareCheck BOOTSTRAP TOPIC GROUP [dlq]");
            System.exit(2);
        }
        String bootstrap = args[0], topic = args[1], group = args[2];
        String dlq = args.length == 4 ? "dlq." + topic : null;
        long startMs = System.currentTimeMillis();
        AcknowledgeType renew = null;
        for (AcknowledgeType t : AcknowledgeType.values()) {
            if (t.name().equals("RENEW")) {
                renew = t;
            }
        }
        System.out.println("client " + clientVersion() + " renew=" + (renew != null));

        List<String> keys = new ArrayList<>(List.of("accept-0", "reject-0", "release-0", "accept-1", "renew-0", "reject-1", "accept-2"));

        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            // The default share.auto.offset.reset is latest: without this
            // the records produced before the first fetch are never seen.
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
            if (dlq != null) {
                admin.createTopics(List.of(new NewTopic(dlq, 1, (short) 1)
                    .configs(Map.of("errors.deadletterqueue.group.enable", "true")))).all().get();
                admin.incrementalAlterConfigs(Map.of(res, List.of(
                    new AlterConfigOp(new ConfigEntry("errors.deadletterqueue.topic.name", dlq), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("errors.deadletterqueue.copy.record.enable", "true"), AlterConfigOp.OpType.SET)))).all().get();
            }
        }

        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
            for (String k : keys) {
                p.send(new ProducerRecord<>(topic, 0, k, "value-of-" + k)).get();
            }
        }
        System.out.println("produced " + keys.size());

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cp.put("share.acknowledgement.mode", "explicit");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());

        Map<String, List<String>> deliveries = new TreeMap<>();
        Map<String, List<String>> acks = new TreeMap<>();
        int failures = 0;
        try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(cp)) {
            c.subscribe(List.of(topic));
            long start = System.currentTimeMillis();
            long last = -1;
            while (true) {
                long now = System.currentTimeMillis();
                if (now - start > DEADLINE_MS) {
                    System.out.println("deadline");
                    break;
                }
                if (last >= 0 && finished(keys, acks) && now - last > QUIET_MS) {
                    System.out.println("quiet");
                    break;
                }
                ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(500));
                int n = 0;
                for (ConsumerRecord<String, String> r : recs) {
                    n++;
                    last = System.currentTimeMillis();
                    String k = r.key();
                    Optional<Short> dc = r.deliveryCount();
                    String d = dc.isPresent() ? dc.get().toString() : "none";
                    List<String> prev = acks.getOrDefault(k, List.of());
                    AcknowledgeType t;
                    if (k.startsWith("accept-")) {
                        t = AcknowledgeType.ACCEPT;
                    } else if (k.startsWith("reject-")) {
                        t = AcknowledgeType.REJECT;
                    } else if (k.startsWith("release-")) {
                        t = AcknowledgeType.RELEASE;
                    } else if (k.startsWith("renew-") && renew != null && prev.isEmpty()) {
                        t = renew;
                    } else {
                        t = AcknowledgeType.ACCEPT;
                    }
                    c.acknowledge(r, t);
                    deliveries.computeIfAbsent(k, x -> new ArrayList<>()).add(d);
                    acks.computeIfAbsent(k, x -> new ArrayList<>()).add(t.name());
                    System.out.println("deliver " + k + " offset=" + r.offset() + " delivery=" + d + " ack=" + t.name());
                }
                if (n > 0) {
                    Map<TopicIdPartition, Optional<KafkaException>> res = c.commitSync(Duration.ofSeconds(30));
                    int errs = 0;
                    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : res.entrySet()) {
                        if (e.getValue().isPresent()) {
                            errs++;
                            System.out.println("commit-error " + e.getKey() + " " + e.getValue().get());
                        }
                    }
                    failures += errs;
                    System.out.println("commit records=" + n + " errors=" + errs);
                }
            }
        }
        // Once every record is acknowledged or archived the share-partition
        // start offset has moved past them all.
        try (Admin admin = Admin.create(ap)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            var all = admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec().topicPartitions(List.of(tp)))).all().get();
            Object info = all.get(group).get(tp);
            System.out.println("start-offset " + startOffset(info));
        }
        for (String k : deliveries.keySet()) {
            System.out.println("summary " + k + " deliveries=" + String.join(",", deliveries.get(k)) + " acks=" + String.join(",", acks.get(k)));
        }
        if (dlq != null) {
            printDLQ(bootstrap, dlq, startMs, 3);
        }
        System.out.println("done");
        System.exit(failures == 0 ? 0 : 1);
    }

    // printDLQ reads want records of the dead-letter topic from the start
    // (or until a deadline) and prints them sorted by source offset.
    static void printDLQ(String bootstrap, String dlq, long startMs, int want) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        TreeMap<Long, String> lines = new TreeMap<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(dlq, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 30000;
            while (lines.size() < want && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    long now = System.currentTimeMillis();
                    String ts = r.timestampType() == TimestampType.CREATE_TIME && r.timestamp() >= startMs && r.timestamp() <= now
                        ? "create-time-of-write" : r.timestampType() + ":" + r.timestamp();
                    StringBuilder hs = new StringBuilder();
                    long src = -1;
                    for (Header h : r.headers()) {
                        String v = h.value() == null ? "null" : new String(h.value(), java.nio.charset.StandardCharsets.UTF_8);
                        if (hs.length() > 0) {
                            hs.append(';');
                        }
                        hs.append(h.key()).append('=').append(v);
                        if (h.key().equals("__dlq.errors.offset")) {
                            src = Long.parseLong(v);
                        }
                    }
                    lines.put(src * 1000 + lines.size(), "dlq partition=" + r.partition() + " key=" + r.key() + " value=" + r.value()
                        + " timestamp=" + ts + " headers=" + hs);
                }
            }
        }
        for (String l : lines.values()) {
            System.out.println(l);
        }
    }

    // startOffset reads the share-partition start offset from what
    // listShareGroupOffsets returns: OffsetAndMetadata in 4.1,
    // SharePartitionOffsetInfo (with startOffset()) from 4.2.
    static String startOffset(Object info) throws Exception {
        if (info == null) {
            return "none";
        }
        if (info instanceof OffsetAndMetadata) {
            return Long.toString(((OffsetAndMetadata) info).offset());
        }
        return String.valueOf(info.getClass().getMethod("startOffset").invoke(info));
    }

    // clientVersion reads the version the kafka-clients jar was built as
    // (AppInfoParser moved between 4.1 and 4.4, the resource did not).
    static String clientVersion() throws java.io.IOException {
        Properties p = new Properties();
        try (java.io.InputStream in = KafkaShareConsumer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            p.load(in);
        }
        return p.getProperty("version", "unknown");
    }

    // finished: every record reached its final acknowledgement (released
    // records LIMIT times).
    static boolean finished(List<String> keys, Map<String, List<String>> acks) {
        for (String k : keys) {
            List<String> a = acks.getOrDefault(k, List.of());
            if (a.isEmpty()) {
                return false;
            }
            if (k.startsWith("release-") && a.size() < LIMIT) {
                return false;
            }
            if (k.startsWith("renew-") && !a.get(a.size() - 1).equals("ACCEPT")) {
                return false;
            }
        }
        return true;
    }
}
