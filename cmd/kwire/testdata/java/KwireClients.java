// A Java producer, consumer and admin client (kafka-clients, compiled by the capture
// test against the launcher's jars) that talk to one broker while tcpdump captures the
// traffic. It prints one line per client with the requests it sent and the responses it
// received, read from the clients' own metrics after close().
//
//   java KwireClients BOOTSTRAP TOPIC RECORDS
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;

import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.serialization.*;

public class KwireClients {
    // find keeps the client's total counter (the metric of the client, not of one node)
    // so that it can be read after close(), which sends requests of its own.
    static Metric find(Map<MetricName, ? extends Metric> m, String group, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : m.entrySet()) {
            if (e.getKey().group().equals(group) && e.getKey().name().equals(name)) {
                return e.getValue();
            }
        }
        throw new IllegalStateException("no metric " + group + "/" + name + " in " + m.keySet());
    }

    static double value(Metric m) {
        return ((Number) m.metricValue()).doubleValue();
    }

    static void print(String id, Map<MetricName, ? extends Metric> m, String group, Runnable close) {
        Metric req = find(m, group, "request-total"), resp = find(m, group, "response-total");
        close.run();
        System.out.printf("client %s requests %.0f responses %.0f%n", id, value(req), value(resp));
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1];
        int n = Integer.parseInt(args[2]);
        String[] codecs = {"none", "gzip", "snappy", "lz4", "zstd"};

        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        ap.put("client.id", "java-admin");
        Admin admin = Admin.create(ap);
        List<NewTopic> topics = new ArrayList<>();
        for (String c : codecs) topics.add(new NewTopic(topic + "-" + c, 2, (short) 1));
        admin.createTopics(topics).all().get();
        print("java-admin", admin.metrics(), "admin-client-metrics", admin::close);

        for (String c : codecs) {
            Properties pp = new Properties();
            pp.put("bootstrap.servers", bootstrap);
            pp.put("client.id", "java-producer-" + c);
            pp.put("compression.type", c);
            pp.put("linger.ms", "5");
            pp.put("key.serializer", ByteArraySerializer.class.getName());
            pp.put("value.serializer", ByteArraySerializer.class.getName());
            KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pp);
            for (int i = 0; i < n; i++) {
                byte[] value;
                if (i % 3 == 2) {
                    // Confluent wire format: magic 0, schema id 42, then a binary payload.
                    value = new byte[] {0, 0, 0, 0, 42, (byte) 0xff, (byte) 0xfe, (byte) i};
                } else {
                    value = ("value " + i + " of " + c).getBytes(StandardCharsets.UTF_8);
                }
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic + "-" + c, i % 2, ("key-" + i).getBytes(StandardCharsets.UTF_8), value);
                r.headers().add("trace", ("t" + i).getBytes(StandardCharsets.UTF_8));
                p.send(r);
            }
            p.flush();
            print("java-producer-" + c, p.metrics(), "producer-metrics", p::close);
        }

        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("client.id", "java-consumer");
        cp.put("group.id", "kwire-capture");
        cp.put("auto.offset.reset", "earliest");
        cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
        cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp);
        List<String> names = new ArrayList<>();
        for (String c : codecs) names.add(topic + "-" + c);
        consumer.subscribe(names);
        int got = 0;
        long deadline = System.currentTimeMillis() + 60000;
        while (got < n * codecs.length && System.currentTimeMillis() < deadline) {
            got += consumer.poll(Duration.ofMillis(500)).count();
        }
        // No fetch may be in flight at close: pause everything and let the last
        // long-poll fetch come back (its records are dropped).
        consumer.pause(consumer.assignment());
        consumer.poll(Duration.ofMillis(1500));
        consumer.commitSync();
        print("java-consumer", consumer.metrics(), "consumer-metrics", consumer::close);
        System.out.printf("consumed %d%n", got);
        if (got != n * codecs.length) System.exit(1);
    }
}
