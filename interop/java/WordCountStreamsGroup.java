// WordCountStreamsGroup runs a Kafka Streams 4.4 word count with
// group.protocol=streams (KIP-1071: the broker assigns the tasks and
// creates the internal topics) or classic, stops it, produces more input and starts
// it again with an empty state directory, so that its in-memory store is
// restored from the changelog topic. For interop/streams_test.go.
//
//   java -cp CLASSES:LIB/* WordCountStreamsGroup BOOTSTRAP APP_ID STATE_DIR READY_FILE GO_ON_FILE [PROTOCOL]
//
// PROTOCOL is the group.protocol, streams (default) or classic.
//
// Between the runs it creates READY_FILE and waits (up to two minutes)
// for GO_ON_FILE, so that the test can run kafka-streams-groups.sh while
// the first instance is running.
//
// Input: 60 lines over 2 partitions ("alpha" x60, "beta" x40, "gamma"
// x20), then 30 more (x30, x20, x10).
//
// Output lines (stdout):
//   counts1 alpha=60 beta=40 gamma=20   the counts of the first run
//   state1 RUNNING
//   counts2 alpha=90 beta=60 gamma=30   after the restart: only right if the
//                                       store came back from the changelog
//   restored yes                        the store was restored from it
//   state2 RUNNING
//   done
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
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
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.Stores;

public class WordCountStreamsGroup {
    static String bootstrap, app, in, out, protocol;

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        app = args[1];
        String stateDir = args[2];
        Path ready = Path.of(args[3]), goOn = Path.of(args[4]);
        protocol = args.length > 5 ? args[5] : "streams";
        in = app + "-in";
        out = app + "-out";
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(in, 2, (short) 1), new NewTopic(out, 2, (short) 1))).all().get();
        }
        produce(0, 60);

        TreeMap<String, Long> counts = new TreeMap<>();
        try (KafkaConsumer<String, Long> reader = reader()) {
            KafkaStreams s1 = start(stateDir + "/1", null);
            waitFor(reader, counts, s1, 60, 40, 20);
            System.out.println("counts1 " + fmt(counts));
            System.out.println("state1 " + settled(s1));
            System.out.flush();
            Files.createFile(ready);
            long deadline = System.currentTimeMillis() + 120000;
            while (!Files.exists(goOn) && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            s1.close(Duration.ofSeconds(30));

            produce(60, 90);
            AtomicLong restored = new AtomicLong();
            KafkaStreams s2 = start(stateDir + "/2", restored);
            waitFor(reader, counts, s2, 90, 60, 30);
            System.out.println("counts2 " + fmt(counts));
            System.out.println("restored " + (restored.get() > 0 ? "yes" : "no"));
            System.out.println("state2 " + settled(s2));
            s2.close(Duration.ofSeconds(30));
        }
        System.out.println("done");
    }

    static void produce(int from, int to) {
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
            for (int i = from; i < to; i++) {
                String line = i % 3 == 0 ? "alpha beta gamma" : (i % 3 == 1 ? "alpha beta" : "alpha");
                p.send(new ProducerRecord<>(in, i % 2, null, line));
            }
            p.flush();
        }
    }

    static KafkaStreams start(String stateDir, AtomicLong restored) {
        Properties sp = new Properties();
        sp.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        sp.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        sp.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        sp.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        sp.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        sp.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        sp.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        StreamsBuilder b = new StreamsBuilder();
        b.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(v -> Arrays.asList(v.split(" ")))
            .groupBy((k, w) -> w, Grouped.with(Serdes.String(), Serdes.String()).withName("words"))
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("wc-store")))
            .toStream()
            .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams streams = new KafkaStreams(b.build(), sp);
        // State changes go to stderr: they show when a run rebalanced.
        streams.setStateListener((now, before) ->
            System.err.println("streams state " + before + " -> " + now + " at " + System.currentTimeMillis()));
        if (restored != null) {
            streams.setGlobalStateRestoreListener(new StateRestoreListener() {
                public void onRestoreStart(TopicPartition tp, String store, long start, long end) {}
                public void onBatchRestored(TopicPartition tp, String store, long end, long n) { restored.addAndGet(n); }
                public void onRestoreEnd(TopicPartition tp, String store, long total) {}
            });
        }
        streams.start();
        return streams;
    }

    static KafkaConsumer<String, Long> reader() {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, app + "-reader");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        KafkaConsumer<String, Long> c = new KafkaConsumer<>(cp);
        c.subscribe(Collections.singletonList(out));
        return c;
    }

    static void waitFor(KafkaConsumer<String, Long> c, TreeMap<String, Long> last, KafkaStreams s, long a, long b, long g) {
        TreeMap<String, Long> want = new TreeMap<>();
        want.put("alpha", a);
        want.put("beta", b);
        want.put("gamma", g);
        long deadline = System.currentTimeMillis() + 120000;
        while (!last.equals(want) && System.currentTimeMillis() < deadline && s.state() != KafkaStreams.State.ERROR) {
            for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) {
                last.put(r.key(), r.value());
            }
        }
    }

    // settled is the state once a rebalance in progress (a member's epoch
    // moving on after the counts were reached) has ended, 10 s at most.
    static KafkaStreams.State settled(KafkaStreams s) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 10000;
        while (s.state() == KafkaStreams.State.REBALANCING && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        return s.state();
    }

    static String fmt(TreeMap<String, Long> m) {
        StringBuilder sb = new StringBuilder();
        m.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
