// MoveProducer: Kafka's Java producer (idempotent, acks=all) through a
// leader move, a node stop and a node start on sharq's virtual brokers,
// which it asks for itself through the control API between sends so that
// every move happens while records are in flight.
//
//   java -cp CLASSES:LIB/* MoveProducer BOOTSTRAP TOPIC COUNT CONTROL_URL
//
// Records are the values 0..COUNT-1, keyless, spread round-robin over the
// partitions. Prints "move <route> <status>" for each control call and
// "done acked=N errors=E" at the end (exit 1 on any send error).

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RoundRobinPartitioner;
import org.apache.kafka.common.serialization.StringSerializer;

public class MoveProducer {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], control = args[3];
        int count = Integer.parseInt(args[2]);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "1");
        p.put(ProducerConfig.PARTITIONER_CLASS_CONFIG, RoundRobinPartitioner.class.getName());
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        HttpClient http = HttpClient.newHttpClient();
        AtomicInteger acked = new AtomicInteger(), errors = new AtomicInteger();
        String[][] moves = {
            {"leaders/move", "{\"topic\":\"" + topic + "\",\"partition\":0,\"node\":2}"},
            {"nodes/3/stop", null},
            {"nodes/3/start", null},
        };
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            int step = count / (moves.length + 1);
            for (int i = 0; i < count; i++) {
                if (i > 0 && i % step == 0 && i / step <= moves.length) {
                    // The 50 records sent since the last flush are in flight.
                    String[] m = moves[i / step - 1];
                    HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(control + "/api/v1/" + m[0]));
                    rb.POST(m[1] == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(m[1]));
                    HttpResponse<String> resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofString());
                    System.out.println("move " + m[0] + " " + resp.statusCode());
                }
                producer.send(new ProducerRecord<>(topic, Integer.toString(i)), (md, e) -> {
                    if (e != null) {
                        errors.incrementAndGet();
                        System.err.println("send failed: " + e);
                    } else {
                        acked.incrementAndGet();
                    }
                });
                if (i % 100 == 49) {
                    producer.flush(); // keep the moves between acknowledged sends
                }
            }
            producer.flush();
        }
        System.out.println("done acked=" + acked.get() + " errors=" + errors.get());
        System.exit(errors.get() == 0 ? 0 : 1);
    }
}
