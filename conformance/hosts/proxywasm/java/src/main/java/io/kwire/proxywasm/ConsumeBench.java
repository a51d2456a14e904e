package io.kwire.proxywasm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A Java consumer reading one topic from the start to a known record count through a
 * bootstrap address, for the proxy benchmark. Arguments: bootstrap, topic, records
 * expected, rounds. Each round is a new consumer (assigned every partition, no group)
 * and prints one line:
 *
 * <pre>
 * round N records R bytes B ms T
 * </pre>
 */
public final class ConsumeBench {
    private ConsumeBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: ConsumeBench BOOTSTRAP TOPIC RECORDS ROUNDS");
            System.exit(2);
        }
        String bootstrap = args[0], topic = args[1];
        long want = Long.parseLong(args[2]);
        int rounds = Integer.parseInt(args[3]);
        for (int round = 0; round < rounds; round++) {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, String.valueOf(1 << 20));
            p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(256 << 10));
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                List<TopicPartition> tps = new ArrayList<>();
                for (PartitionInfo pi : c.partitionsFor(topic)) {
                    tps.add(new TopicPartition(topic, pi.partition()));
                }
                c.assign(tps);
                c.seekToBeginning(tps);
                long n = 0, bytes = 0;
                long start = System.nanoTime();
                long deadline = start + Duration.ofSeconds(120).toNanos();
                while (n < want) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("read " + n + " of " + want + " records in 120 s");
                    }
                    ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(500));
                    for (ConsumerRecord<byte[], byte[]> r : rs) {
                        n++;
                        bytes += r.serializedValueSize() + Math.max(0, r.serializedKeySize());
                    }
                }
                long ms = (System.nanoTime() - start) / 1_000_000;
                System.out.println("round " + round + " records " + n + " bytes " + bytes + " ms " + ms);
            }
        }
    }
}
