// WordCountEOS runs a Kafka Streams 4.4 word count with
// processing.guarantee=exactly_once_v2 and prints the counts a
// read_committed consumer sees on the output topic, for
// interop/streams_test.go.
//
//   java -cp CLASSES:LIB/* WordCountEOS BOOTSTRAP APP_ID STATE_DIR
//
// Input: 60 lines over 2 partitions, words "alpha" x60, "beta" x40,
// "gamma" x20. The stores are in memory (no RocksDB).
//
// Output lines (stdout):
//   counts alpha=N beta=N gamma=N   the last committed count of each word
//   max alpha=N beta=N gamma=N      the largest count ever seen (an
//                                   exactly-once run never exceeds the truth)
//   state S                         the Streams state at the end
//   done
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

public class WordCountEOS {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], app = args[1], stateDir = args[2];
        String in = app + "-in", out = app + "-out";
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(in, 2, (short) 1), new NewTopic(out, 2, (short) 1))).all().get();
        }
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
            for (int i = 0; i < 60; i++) {
                String line = i % 3 == 0 ? "alpha beta gamma" : (i % 3 == 1 ? "alpha beta" : "alpha");
                p.send(new ProducerRecord<>(in, i % 2, null, line));
            }
            p.flush();
        }

        Properties sp = new Properties();
        sp.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        sp.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        sp.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        sp.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        sp.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        sp.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        sp.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        StreamsBuilder b = new StreamsBuilder();
        b.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(v -> Arrays.asList(v.split(" ")))
            .groupBy((k, w) -> w, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("wc-store")))
            .toStream()
            .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams streams = new KafkaStreams(b.build(), sp);
        streams.start();

        TreeMap<String, Long> last = new TreeMap<>(), max = new TreeMap<>();
        TreeMap<String, Long> want = new TreeMap<>();
        want.put("alpha", 60L);
        want.put("beta", 40L);
        want.put("gamma", 20L);
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, app + "-reader");
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(cp)) {
            c.subscribe(Collections.singletonList(out));
            long deadline = System.currentTimeMillis() + 90000;
            while (!last.equals(want) && System.currentTimeMillis() < deadline
                    && streams.state() != KafkaStreams.State.ERROR) {
                for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) {
                    last.put(r.key(), r.value());
                    max.merge(r.key(), r.value(), Math::max);
                }
            }
            // nothing more may come once the counts are complete
            for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(2000))) {
                last.put(r.key(), r.value());
                max.merge(r.key(), r.value(), Math::max);
            }
        }
        System.out.println("counts " + fmt(last));
        System.out.println("max " + fmt(max));
        System.out.println("state " + streams.state());
        streams.close(Duration.ofSeconds(20));
        System.out.println("done");
    }

    static String fmt(TreeMap<String, Long> m) {
        StringBuilder sb = new StringBuilder();
        m.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
