package io.kwire.proxywasm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Java clients of one tenant (virtual cluster) through kwire's proxy filter with a
 * tenant prefix. Arguments: BOOTSTRAP OTHER_PREFIX. Every name the clients use is
 * the tenant's own, unprefixed: they create topic "orders", produce r1 r2 r3 with an
 * idempotent producer, consume them in group "g" and commit, write t1 in a
 * transaction with transactional id "tx", list topics, consumer groups, the group's
 * offsets and transactions, and describe OTHER_PREFIX + "orders", another tenant's
 * topic, which must be unknown. Prints one line per step:
 *
 * <pre>
 * create ok
 * produce ok TOPIC PARTITION OFFSET
 * consumed TOPIC PARTITION OFFSET VALUE
 * commit ok
 * txn ok TOPIC PARTITION OFFSET
 * topics NAME,NAME...
 * groups ID,ID...
 * offsets TOPIC-PARTITION=OFFSET,...
 * transactions ID,ID...
 * other-describe ok NAME...
 * NAME error EXCEPTION-CLASS MESSAGE
 * </pre>
 */
public final class TenantClients {
    private TenantClients() {}

    static final String TOPIC = "orders";
    static final long TIMEOUT_MS = 60_000;

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: TenantClients BOOTSTRAP OTHER_PREFIX");
            System.exit(2);
        }
        String bootstrap = args[0], other = args[1];
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        ap.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(TIMEOUT_MS));
        ap.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(ap)) {
            step("create", () -> {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                return "ok";
            });
            produce(bootstrap);
            consume(bootstrap);
            transaction(bootstrap);
            step("topics", () -> String.join(",", new TreeSet<>(admin.listTopics().names().get(TIMEOUT_MS, TimeUnit.MILLISECONDS))));
            step("groups", () -> {
                TreeSet<String> ids = new TreeSet<>();
                for (GroupListing g : admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                    ids.add(g.groupId());
                }
                return String.join(",", ids);
            });
            step("offsets", () -> {
                TreeSet<String> out = new TreeSet<>();
                Map<TopicPartition, OffsetAndMetadata> offsets =
                        admin.listConsumerGroupOffsets("g").partitionsToOffsetAndMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                    out.add(e.getKey() + "=" + (e.getValue() == null ? "none" : e.getValue().offset()));
                }
                return String.join(",", out);
            });
            step("transactions", () -> {
                TreeSet<String> ids = new TreeSet<>();
                for (TransactionListing l : admin.listTransactions().all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                    ids.add(l.transactionalId());
                }
                return String.join(",", ids);
            });
            step("other-describe", () -> "ok " + String.join(",",
                    new TreeSet<>(admin.describeTopics(List.of(other + TOPIC)).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).keySet())));
        }
        System.out.flush();
        System.exit(0);
    }

    interface Step {
        String run() throws Exception;
    }

    /** Runs one step and prints "NAME RESULT" or "NAME error EXCEPTION-CLASS MESSAGE". */
    static void step(String name, Step s) {
        try {
            System.out.println(name + " " + s.run());
        } catch (Exception e) {
            error(name, e);
        }
    }

    static void error(String name, Throwable e) {
        Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        System.out.println(name + " error " + c.getClass().getSimpleName() + " " + c.getMessage());
    }

    static Properties producerProps(String bootstrap) {
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(TIMEOUT_MS));
        pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(TIMEOUT_MS));
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return pp;
    }

    /** An idempotent producer (acks=all) sends r1, r2, r3 to orders, one at a time. */
    static void produce(String bootstrap) {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(producerProps(bootstrap))) {
            for (String v : List.of("r1", "r2", "r3")) {
                step("produce", () -> {
                    RecordMetadata m = p.send(new ProducerRecord<>(TOPIC, v.getBytes())).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    return "ok " + m.topic() + " " + m.partition() + " " + m.offset();
                });
            }
        } catch (Exception e) {
            error("produce", e);
        }
    }

    /** A consumer in group g reads orders from the start until it has three records, then commits. */
    static void consume(String bootstrap) {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, "g");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(TIMEOUT_MS));
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp)) {
            c.subscribe(List.of(TOPIC));
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
            while (got.size() < 3 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    got.add(r);
                    System.out.println("consumed " + r.topic() + " " + r.partition() + " " + r.offset() + " " + new String(r.value()));
                }
            }
            if (got.size() < 3) {
                System.out.println("consumed error TimeoutException " + got.size() + " records in " + TIMEOUT_MS + " ms");
            }
            step("commit", () -> {
                c.commitSync(Duration.ofMillis(TIMEOUT_MS));
                return "ok";
            });
        } catch (Exception e) {
            error("consumed", e);
        }
    }

    /** A transactional producer (transactional.id tx) writes t1 to orders and commits. */
    static void transaction(String bootstrap) {
        Properties pp = producerProps(bootstrap);
        pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx");
        pp.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, String.valueOf(TIMEOUT_MS));
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pp)) {
            step("txn", () -> {
                p.initTransactions();
                p.beginTransaction();
                RecordMetadata m = p.send(new ProducerRecord<>(TOPIC, "t1".getBytes())).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                p.commitTransaction();
                return "ok " + m.topic() + " " + m.partition() + " " + m.offset();
            });
        } catch (Exception e) {
            error("txn", e);
        }
    }
}
