// ShareExtCheck: sharq's share group extensions seen by Kafka's own
// KafkaShareConsumer (explicit acknowledgement mode).
//
//   java -cp CLASSES:LIB/* ShareExtCheck BOOTSTRAP TOPIC GROUP
//
// The group is key-ordered (sharq.share.key.ordered.enable) with a
// redelivery backoff (sharq.share.redelivery.backoff.ms=300). KEYS x PER_KEY
// records (values "key:index") are produced lz4-compressed in multi-key
// batches; three consumers in threads take them, 1 ms per record, and
// release the record with index 3 of every key once. At each poll the
// program checks what a key-ordered group promises: no key is held by two
// consumers or twice in one poll, and each key's record is its lowest one
// not accepted yet. Output lines:
//
//   violation TEXT                       a broken promise
//   backoff KEY gap=MS                   release to redelivery of index 3
//   done accepted=N                      when every record was accepted
//   deadline accepted=N                  when time ran out
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ShareExtCheck {
    static final int KEYS = 8, PER_KEY = 12, CONSUMERS = 3;
    static final long DEADLINE_MS = 60000;

    static final Object mu = new Object();
    static final Map<String, Integer> next = new HashMap<>();     // per key: lowest index not accepted
    static final Map<String, String> busy = new HashMap<>();      // per key: the consumer holding it
    static final Map<String, Long> releasedAt = new HashMap<>();  // key -> time index 3 was released
    static int accepted = 0;

    static void out(String s) {
        synchronized (System.out) {
            System.out.println(s);
            System.out.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("sharq.share.key.ordered.enable", "true"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("sharq.share.redelivery.backoff.ms", "300"), AlterConfigOp.OpType.SET)))).all().get();
        }
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "50");
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
            for (int i = 0; i < PER_KEY; i++) {
                for (int k = 0; k < KEYS; k++) {
                    p.send(new ProducerRecord<>(topic, "key" + k, "key" + k + ":" + i));
                }
            }
            p.flush();
        }

        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        AtomicBoolean stop = new AtomicBoolean();
        Thread[] threads = new Thread[CONSUMERS];
        for (int c = 0; c < CONSUMERS; c++) {
            String name = "c" + c;
            threads[c] = new Thread(() -> consume(bootstrap, topic, group, name, deadline, stop));
            threads[c].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        synchronized (mu) {
            out((accepted == KEYS * PER_KEY ? "done" : "deadline") + " accepted=" + accepted);
        }
    }

    static void consume(String bootstrap, String topic, String group, String name, long deadline, AtomicBoolean stop) {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cp.put("share.acknowledgement.mode", "explicit");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(cp)) {
            consumer.subscribe(List.of(topic));
            while (!stop.get() && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> recs = consumer.poll(Duration.ofMillis(100));
                synchronized (mu) {
                    Map<String, Boolean> inPoll = new HashMap<>();
                    for (ConsumerRecord<String, String> r : recs) {
                        String key = r.key();
                        int idx = Integer.parseInt(r.value().substring(r.value().indexOf(':') + 1));
                        if (inPoll.containsKey(key)) {
                            out("violation " + name + " got two records of " + key + " in one poll");
                        }
                        inPoll.put(key, true);
                        String other = busy.get(key);
                        if (other != null) {
                            out("violation " + name + " got " + r.value() + " while " + other + " holds " + key);
                        }
                        int want = next.getOrDefault(key, 0);
                        if (idx != want) {
                            out("violation " + name + " got " + r.value() + ", want index " + want + " (per-key order)");
                        }
                        busy.put(key, name);
                        if (idx == 3 && releasedAt.containsKey(key) && r.deliveryCount().orElse((short) 0) == 2) {
                            out("backoff " + key + " gap=" + (System.currentTimeMillis() - releasedAt.get(key)));
                        }
                    }
                }
                for (ConsumerRecord<String, String> r : recs) {
                    try {
                        Thread.sleep(1); // processing
                    } catch (InterruptedException e) {
                        return;
                    }
                    String key = r.key();
                    int idx = Integer.parseInt(r.value().substring(r.value().indexOf(':') + 1));
                    AcknowledgeType type = AcknowledgeType.ACCEPT;
                    synchronized (mu) {
                        busy.remove(key);
                        if (idx == 3 && !releasedAt.containsKey(key)) {
                            releasedAt.put(key, System.currentTimeMillis());
                            type = AcknowledgeType.RELEASE;
                        } else {
                            next.put(key, idx + 1);
                            accepted++;
                            if (accepted == KEYS * PER_KEY) {
                                stop.set(true);
                            }
                        }
                    }
                    consumer.acknowledge(r, type);
                }
                if (!recs.isEmpty()) {
                    consumer.commitSync();
                }
            }
        }
    }
}
