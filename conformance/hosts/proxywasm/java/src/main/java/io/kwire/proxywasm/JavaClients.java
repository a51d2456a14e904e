package io.kwire.proxywasm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import static io.kwire.proxywasm.FinalRequestCounts.FINAL;

/**
 * Real kafka-clients traffic through kwire's proxy filter. Arguments: the bootstrap
 * address (the proxy) and the topic prefix. Produces one record per request to
 * PREFIX.orders (enforce, ids 1 and 2), PREFIX.audit (warn) and PREFIX.free (no
 * check), then consumes the three topics from the start through the same bootstrap.
 * Prints one line per event:
 *
 * <pre>
 * send NAME ok TOPIC PARTITION OFFSET
 * send NAME error EXCEPTION-CLASS MESSAGE
 * consumed TOPIC PARTITION OFFSET VALUE
 * producer.requests N      (the producer's request-total as it closed: every request it sent)
 * consumer.requests N      (the same for the consumer)
 * producer.records TOPIC N (record-send-total of the topic)
 * </pre>
 */
public final class JavaClients {
    private JavaClients() {}

    /** A value with the Confluent prefix: byte 0, the 4-byte schema id, then text. */
    static byte[] prefixed(int id, String text) {
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + t.length).put((byte) 0).putInt(id).put(t).array();
    }

    static String text(byte[] value) {
        int from = value.length >= 5 && value[0] == 0 ? 5 : 0;
        return new String(value, from, value.length - from, StandardCharsets.UTF_8);
    }

    static double metric(Map<MetricName, ? extends Metric> metrics, String group, String name, String tagKey, String tagValue) {
        double sum = 0;
        boolean found = false;
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (n.group().equals(group) && n.name().equals(name) && (tagKey == null || tagValue.equals(n.tags().get(tagKey)))) {
                sum += ((Number) e.getValue().metricValue()).doubleValue();
                found = true;
            }
        }
        if (!found) {
            throw new IllegalStateException("no metric " + group + "/" + name);
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: JavaClients BOOTSTRAP PREFIX");
            System.exit(2);
        }
        String bootstrap = args[0];
        String orders = args[1] + ".orders", audit = args[1] + ".audit", free = args[1] + ".free";

        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        pp.put(ProducerConfig.RETRIES_CONFIG, "0");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        pp.put(ProducerConfig.CLIENT_ID_CONFIG, "kwire-java-producer");
        pp.put(ProducerConfig.METRIC_REPORTER_CLASSES_CONFIG, FinalRequestCounts.class.getName());
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

        List<Object[]> sends = new ArrayList<>();
        sends.add(new Object[] {"prefix-id-1", orders, prefixed(1, "j1"), null});
        sends.add(new Object[] {"header-id-2", orders, "j2".getBytes(StandardCharsets.UTF_8), "2"});
        sends.add(new Object[] {"no-schema", orders, "nos".getBytes(StandardCharsets.UTF_8), null});
        sends.add(new Object[] {"wrong-id", orders, prefixed(7, "wrong"), null});
        sends.add(new Object[] {"malformed-header", orders, prefixed(1, "malformed"), "one"});
        sends.add(new Object[] {"warned", audit, "warned".getBytes(StandardCharsets.UTF_8), null});
        sends.add(new Object[] {"free", free, "free".getBytes(StandardCharsets.UTF_8), null});

        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            for (Object[] s : sends) {
                String name = (String) s[0];
                ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>((String) s[1], 0, null, (byte[]) s[2]);
                if (s[3] != null) {
                    rec.headers().add("schema.id", ((String) s[3]).getBytes(StandardCharsets.UTF_8));
                }
                // The callback sees what the producer's user sees.
                String[] outcome = new String[1];
                try {
                    RecordMetadata md = producer.send(rec, (m, e) -> {
                        outcome[0] = e == null ? null : e.getClass().getSimpleName() + " " + e.getMessage();
                    }).get();
                    System.out.println("send " + name + " ok " + md.topic() + " " + md.partition() + " " + md.offset());
                } catch (ExecutionException e) {
                    System.out.println("send " + name + " error " + (outcome[0] != null ? outcome[0] : e.getCause().toString()));
                }
            }
            producer.flush();
            Map<MetricName, ? extends Metric> m = producer.metrics();
            for (String t : new String[] {orders, audit, free}) {
                System.out.println("producer.records " + t + " " + (long) metric(m, "producer-topic-metrics", "record-send-total", "topic", t));
            }
        }

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.CLIENT_ID_CONFIG, "kwire-java-consumer");
        cp.put(ConsumerConfig.METRIC_REPORTER_CLASSES_CONFIG, FinalRequestCounts.class.getName());
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
            List<TopicPartition> tps = List.of(new TopicPartition(orders, 0), new TopicPartition(audit, 0), new TopicPartition(free, 0));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long want = 0;
            for (long v : end.values()) {
                want += v;
            }
            long got = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (got < want && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println("consumed " + r.topic() + " " + r.partition() + " " + r.offset() + " " + text(r.value()));
                    got++;
                }
            }
        }
        // Request counts as the clients closed (FinalRequestCounts).
        System.out.println("producer.requests " + FINAL.get("kwire-java-producer").longValue());
        System.out.println("consumer.requests " + FINAL.get("kwire-java-consumer").longValue());
    }
}
