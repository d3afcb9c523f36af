// TxnGroupCheck: a transactional KafkaProducer commits offsets for a group
// that has a live member, naming only the group (the producer sends
// TxnOffsetCommit without member id and with generation -1), for
// interop/txncheck_test.go.
//
//   java -cp CLASSES:LIB/* TxnGroupCheck BOOTSTRAP TOPIC GROUP PROTOCOL
//
// PROTOCOL is the consumer's group.protocol (classic or consumer). Kafka 4.0
// removed sendOffsetsToTransaction(offsets, String groupId); what it did was
// sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(groupId)),
// which this program calls.
//
// Output lines (stdout):
//   members N              the group's members while the consumer runs
//   commit ok | commit failed: EXCEPTION
//   abort ok | abort failed: EXCEPTION
//   group-offset N         the group's committed offset for TOPIC-0
//   done
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnGroupCheck {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2], protocol = args[3];
        TopicPartition tp = new TopicPartition(topic, 0);
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();

            Properties cp = new Properties();
            cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            cp.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp);
            CountDownLatch assigned = new CountDownLatch(1);
            AtomicBoolean stop = new AtomicBoolean();
            Thread poller = new Thread(() -> {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> ps) {}
                    public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                        if (!ps.isEmpty()) {
                            assigned.countDown();
                        }
                    }
                });
                try {
                    while (!stop.get()) {
                        consumer.poll(Duration.ofMillis(100));
                    }
                } catch (WakeupException e) {
                    // stopping
                } finally {
                    consumer.close(Duration.ofSeconds(5));
                }
            });
            poller.start();
            if (!assigned.await(60, TimeUnit.SECONDS)) {
                System.out.println("consumer got no assignment");
                System.exit(1);
            }
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            System.out.println("members " + d.members().size());

            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic + "-txn");
            pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
                p.initTransactions();
                System.out.println(txn(p, topic, tp, group, 7, true));
                System.out.println(txn(p, topic, tp, group, 9, false));
            }
            OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp);
            System.out.println("group-offset " + (o == null ? "none" : Long.toString(o.offset())));
            stop.set(true);
            consumer.wakeup();
            poller.join(20000);
        }
        System.out.println("done");
    }

    static String txn(KafkaProducer<String, String> p, String topic, TopicPartition tp, String group, long offset, boolean commit) {
        String what = commit ? "commit" : "abort";
        try {
            p.beginTransaction();
            p.send(new ProducerRecord<>(topic, 0, null, what)).get();
            p.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(offset)), new ConsumerGroupMetadata(group));
            if (commit) {
                p.commitTransaction();
            } else {
                p.abortTransaction();
            }
            return what + " ok";
        } catch (Exception e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            try {
                p.abortTransaction();
            } catch (Exception ignored) {
                // the transaction may be fatal already
            }
            return what + " failed: " + c.getClass().getSimpleName() + ": " + c.getMessage();
        }
    }
}
