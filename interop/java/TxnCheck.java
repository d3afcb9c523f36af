// TxnCheck drives Kafka's transactional KafkaProducer and read_committed
// KafkaConsumer and prints what a consumer saw, for interop/txncheck_test.go.
//
//   java -cp CLASSES:LIB/* TxnCheck BOOTSTRAP TOPIC GROUP
//
// Steps (one partition, so offsets are fixed):
//   producer A: commit c-0 c-1; abort a-0 a-1; commit c-2 with
//               sendOffsetsToTransaction(GROUP, TOPIC-0 -> 5); abort a-2 with
//               sendOffsetsToTransaction(GROUP, TOPIC-0 -> 99)
//   producer B: same transactional.id: initTransactions fences A; A's next
//               transaction fails; B commits c-3
//
// Output lines (stdout):
//   committed V1,V2,..      read_committed values, in offset order
//   uncommitted N           how many data records read_uncommitted sees
//   group-offset N          the group's committed offset for TOPIC-0
//   zombie fenced           A could not send or commit after B's init
//   end-offsets committed=X uncommitted=Y
//   done
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnCheck {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        TopicPartition tp = new TopicPartition(topic, 0);
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }

        KafkaProducer<String, String> a = producer(bootstrap, topic + "-txn");
        a.initTransactions();
        txn(a, topic, List.of("c-0", "c-1"), null, 0, true);
        txn(a, topic, List.of("a-0", "a-1"), null, 0, false);
        txn(a, topic, List.of("c-2"), group, 5, true);
        txn(a, topic, List.of("a-2"), group, 99, false);

        KafkaProducer<String, String> b = producer(bootstrap, topic + "-txn");
        b.initTransactions();
        boolean fenced = false;
        try {
            a.beginTransaction();
            a.send(new ProducerRecord<>(topic, 0, null, "zombie")).get();
            a.commitTransaction();
        } catch (Exception e) {
            fenced = true;
        }
        a.close(Duration.ofSeconds(5));
        System.out.println(fenced ? "zombie fenced" : "zombie NOT fenced");
        txn(b, topic, List.of("c-3"), null, 0, true);
        b.close();

        List<String> committed = read(bootstrap, tp, "read_committed", 4);
        System.out.println("committed " + String.join(",", committed));
        List<String> all = read(bootstrap, tp, "read_uncommitted", 7);
        System.out.println("uncommitted " + all.size());

        try (Admin admin = Admin.create(ap)) {
            Map<TopicPartition, OffsetAndMetadata> offs =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            OffsetAndMetadata o = offs.get(tp);
            System.out.println("group-offset " + (o == null ? "none" : Long.toString(o.offset())));
        }
        System.out.println("end-offsets committed=" + endOffset(bootstrap, tp, "read_committed")
            + " uncommitted=" + endOffset(bootstrap, tp, "read_uncommitted"));
        System.out.println("done");
    }

    static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        return new KafkaProducer<>(p);
    }

    static void txn(KafkaProducer<String, String> p, String topic, List<String> values, String group, long offset, boolean commit) throws Exception {
        p.beginTransaction();
        for (String v : values) {
            p.send(new ProducerRecord<>(topic, 0, null, v)).get();
        }
        if (group != null) {
            p.sendOffsetsToTransaction(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(offset)),
                new ConsumerGroupMetadata(group));
        }
        if (commit) {
            p.commitTransaction();
        } else {
            p.abortTransaction();
        }
    }

    static Properties consumerProps(String bootstrap, String isolation) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return c;
    }

    static List<String> read(String bootstrap, TopicPartition tp, String isolation, int want) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(bootstrap, isolation))) {
            c.assign(Collections.singletonList(tp));
            c.seekToBeginning(Collections.singletonList(tp));
            long deadline = System.currentTimeMillis() + 20000;
            while (out.size() < want && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    out.add(r.value());
                }
            }
            // a little longer: nothing more may come
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(1000))) {
                out.add(r.value());
            }
        }
        return out;
    }

    static long endOffset(String bootstrap, TopicPartition tp, String isolation) {
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(bootstrap, isolation))) {
            return c.endOffsets(Collections.singletonList(tp)).get(tp);
        }
    }
}
