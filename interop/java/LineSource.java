// LineSource is a Kafka Connect source connector for interop/connect_test.go:
// it sends each line of a file as one record (string value), remembering the
// line number as its source offset, so a restarted task goes on where the
// last committed offset left it. It stands in for FileStreamSource: the
// connect-file jar of Kafka 4.4.0 is not in Maven Central and the 4.1 one
// calls a clients class that 4.4 no longer has.
//
// Config: file (path), topic.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

public class LineSource {
    static final String VERSION = "1.0";

    public static class Connector extends SourceConnector {
        private Map<String, String> props;

        @Override public String version() { return VERSION; }
        @Override public void start(Map<String, String> props) { this.props = props; }
        @Override public Class<? extends Task> taskClass() { return LineTask.class; }
        @Override public List<Map<String, String>> taskConfigs(int maxTasks) { return List.of(props); }
        @Override public void stop() {}
        @Override public ConfigDef config() {
            return new ConfigDef()
                .define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "The file to read, one record per line.")
                .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "The topic to write to.");
        }
    }

    public static class LineTask extends SourceTask {
        private Path file;
        private String topic;
        private Map<String, String> partition;
        private long next; // the next line to send

        @Override public String version() { return VERSION; }

        @Override public void start(Map<String, String> props) {
            file = Path.of(props.get("file"));
            topic = props.get("topic");
            partition = Collections.singletonMap("file", file.toString());
            Map<String, Object> off = context.offsetStorageReader().offset(partition);
            next = off == null ? 0 : (Long) off.get("line");
        }

        @Override public List<SourceRecord> poll() throws InterruptedException {
            List<String> lines;
            try {
                lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new org.apache.kafka.connect.errors.ConnectException(e);
            }
            if (next >= lines.size()) {
                Thread.sleep(200);
                return null;
            }
            List<SourceRecord> out = new ArrayList<>();
            for (; next < lines.size(); next++) {
                out.add(new SourceRecord(partition, Collections.singletonMap("line", next + 1), topic, null,
                    null, null, Schema.STRING_SCHEMA, lines.get((int) next)));
            }
            return out;
        }

        @Override public void stop() {}
    }
}
