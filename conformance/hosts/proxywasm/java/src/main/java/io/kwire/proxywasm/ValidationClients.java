package io.kwire.proxywasm;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A Java producer's records through kwire's proxy filter, one record per request,
 * to test the record validation modes. Arguments: a spec file, then one or more
 * BOOTSTRAP,PREFIX pairs; the spec is sent through each bootstrap in turn, with
 * "{P}" in topic names replaced by the pair's prefix. A spec line is
 *
 * <pre>
 * NAME TOPIC KEY VALUE [HEADER-KEY HEADER-VALUE]
 * </pre>
 *
 * separated by tabs, where KEY, VALUE and HEADER-VALUE are hex bytes, "-" for
 * empty and "null" for null. Prints one line per record:
 *
 * <pre>
 * send PREFIX NAME ok TOPIC PARTITION OFFSET
 * send PREFIX NAME error EXCEPTION-CLASS MESSAGE
 * </pre>
 */
public final class ValidationClients {
    private ValidationClients() {}

    static byte[] bytes(String s) {
        if (s.equals("null")) {
            return null;
        }
        if (s.equals("-")) {
            return new byte[0];
        }
        return HexFormat.of().parseHex(s);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: ValidationClients SPEC BOOTSTRAP,PREFIX...");
            System.exit(2);
        }
        List<String> spec = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        for (int a = 1; a < args.length; a++) {
            String[] bp = args[a].split(",", 2);
            String prefix = bp[1];
            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bp[0]);
            pp.put(ProducerConfig.ACKS_CONFIG, "all");
            pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            pp.put(ProducerConfig.RETRIES_CONFIG, "0");
            pp.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
            pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
            pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
            pp.put(ProducerConfig.CLIENT_ID_CONFIG, "kwire-java-validation-" + prefix);
            pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
                for (String line : spec) {
                    if (line.isBlank()) {
                        continue;
                    }
                    String[] f = line.split("\t");
                    String name = f[0];
                    String topic = f[1].replace("{P}", prefix);
                    ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(topic, 0, bytes(f[2]), bytes(f[3]));
                    for (int h = 4; h + 1 < f.length; h += 2) {
                        rec.headers().add(f[h], bytes(f[h + 1]));
                    }
                    // The callback sees what the producer's user sees.
                    String[] outcome = new String[1];
                    try {
                        RecordMetadata md = producer.send(rec, (m, e) -> {
                            outcome[0] = e == null ? null : e.getClass().getSimpleName() + " " + e.getMessage();
                        }).get();
                        System.out.println("send " + prefix + " " + name + " ok " + md.topic() + " " + md.partition() + " " + md.offset());
                    } catch (ExecutionException e) {
                        System.out.println("send " + prefix + " " + name + " error " + (outcome[0] != null ? outcome[0] : e.getCause().toString()));
                    }
                }
            }
        }
    }
}
