package io.kwire.proxywasm;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A Java admin client and producers through kwire's proxy filter under request rules.
 * Arguments: BOOTSTRAP PREFIX. Creates PREFIX.wide (8 partitions) and PREFIX.narrow
 * (2 partitions), then sends one record to PREFIX.narrow with acks=1 and one with
 * acks=all. Prints one line per step:
 *
 * <pre>
 * NAME ok [TOPIC PARTITION OFFSET]
 * NAME error EXCEPTION-CLASS MESSAGE
 * </pre>
 */
public final class SafeguardClients {
    private SafeguardClients() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: SafeguardClients BOOTSTRAP PREFIX");
            System.exit(2);
        }
        String bootstrap = args[0], prefix = args[1];
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        ap.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        try (Admin admin = Admin.create(ap)) {
            create(admin, "create-wide", new NewTopic(prefix + ".wide", 8, (short) 1));
            create(admin, "create-narrow", new NewTopic(prefix + ".narrow", 2, (short) 1));
        }
        send(bootstrap, "send-acks-1", "1", prefix + ".narrow");
        send(bootstrap, "send-acks-all", "all", prefix + ".narrow");
    }

    static void create(Admin admin, String name, NewTopic topic) throws Exception {
        try {
            admin.createTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
            System.out.println(name + " ok");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            System.out.println(name + " error " + c.getClass().getSimpleName() + " " + c.getMessage());
        }
    }

    static void send(String bootstrap, String name, String acks, String topic) throws Exception {
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, acks);
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pp)) {
            RecordMetadata m = p.send(new ProducerRecord<>(topic, name.getBytes())).get();
            System.out.println(name + " ok " + m.topic() + " " + m.partition() + " " + m.offset());
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            System.out.println(name + " error " + c.getClass().getSimpleName() + " " + c.getMessage());
        }
    }
}
