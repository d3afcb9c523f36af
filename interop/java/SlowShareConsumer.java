// SlowShareConsumer runs THREADS KafkaShareConsumers (KIP-932, implicit
// acknowledgement) of GROUP on TOPIC, each spending DELAY_MS on every record,
// until N records were processed in all; for the bench harness's "share,
// slow consumers" rows (sharq/bench).
//
//   java -cp CLASSES:LIB/* SlowShareConsumer BOOTSTRAP TOPIC GROUP THREADS N DELAY_MS
//
// Output (stdout):
//   subscribed THREADS           every consumer has polled once
//   done records=N elapsed_ms=E per_consumer=C1,C2,...
// E runs from the first record delivered to the N-th processed.
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class SlowShareConsumer {
    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: SlowShareConsumer BOOTSTRAP TOPIC GROUP THREADS N DELAY_MS");
            System.exit(2);
        }
        String bootstrap = args[0], topic = args[1], group = args[2];
        int threads = Integer.parseInt(args[3]);
        long n = Long.parseLong(args[4]);
        long delayMs = Long.parseLong(args[5]);

        AtomicLong total = new AtomicLong();
        AtomicLong firstAt = new AtomicLong();
        AtomicLong doneAt = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        long[] per = new long[threads];
        CountDownLatch polled = new CountDownLatch(threads);
        List<Thread> ts = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int id = i;
            Thread t = new Thread(() -> {
                Properties p = new Properties();
                p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
                p.put(ConsumerConfig.CLIENT_ID_CONFIG, "slow-" + id);
                p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
                    c.subscribe(List.of(topic));
                    boolean first = true;
                    // Paced: sleep to a deadline moved DELAY_MS per record, so
                    // an overshooting sleep is made up by the next records of
                    // the poll; the deadline restarts when a poll brings records
                    // after idle time.
                    long due = 0;
                    while (!stop.get()) {
                        ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(100));
                        if (first) {
                            polled.countDown();
                            first = false;
                        }
                        long start = System.nanoTime();
                        if (due < start) {
                            due = start; // idle until these records came
                        }
                        for (ConsumerRecord<byte[], byte[]> r : recs) {
                            firstAt.compareAndSet(0, System.nanoTime());
                            if (stop.get()) {
                                break;
                            }
                            due += delayMs * 1_000_000L;
                            long wait = due - System.nanoTime();
                            if (wait > 0) {
                                Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
                            }
                            per[id]++;
                            if (total.incrementAndGet() == n) {
                                doneAt.set(System.nanoTime());
                                stop.set(true);
                            }
                        }
                    }
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                    stop.set(true);
                    polled.countDown();
                }
            });
            ts.add(t);
            t.start();
        }
        polled.await();
        System.out.println("subscribed " + threads);
        System.out.flush();
        for (Thread t : ts) {
            t.join();
        }
        if (!errors.isEmpty()) {
            errors.get(0).printStackTrace();
            System.exit(1);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < threads; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(per[i]);
        }
        double elapsedMs = (doneAt.get() - firstAt.get()) / 1e6;
        System.out.printf("done records=%d elapsed_ms=%.3f per_consumer=%s%n", total.get(), elapsedMs, sb);
    }
}
