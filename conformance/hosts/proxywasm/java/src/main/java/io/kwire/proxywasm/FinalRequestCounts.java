package io.kwire.proxywasm;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;

/**
 * Keeps a client's final request count: the value of its request-total metric when
 * the client closes, which includes what it sends while closing (a consumer closes
 * its fetch sessions with one more Fetch request).
 */
public final class FinalRequestCounts implements MetricsReporter {
    /** client id to the final request-total. */
    static final Map<String, Double> FINAL = new ConcurrentHashMap<>();

    private final Map<String, KafkaMetric> live = new ConcurrentHashMap<>();

    private static boolean wanted(KafkaMetric m) {
        return m.metricName().name().equals("request-total")
            && (m.metricName().group().equals("producer-metrics") || m.metricName().group().equals("consumer-metrics"));
    }

    private static String client(KafkaMetric m) {
        return m.metricName().tags().getOrDefault("client-id", "");
    }

    private static double value(KafkaMetric m) {
        return ((Number) m.metricValue()).doubleValue();
    }

    @Override
    public void configure(Map<String, ?> configs) {}

    @Override
    public void init(List<KafkaMetric> metrics) {
        for (KafkaMetric m : metrics) {
            metricChange(m);
        }
    }

    @Override
    public void metricChange(KafkaMetric m) {
        if (wanted(m)) {
            live.put(client(m), m);
        }
    }

    @Override
    public void metricRemoval(KafkaMetric m) {
        if (wanted(m)) {
            FINAL.put(client(m), value(m));
            live.remove(client(m));
        }
    }

    @Override
    public void close() {
        for (Map.Entry<String, KafkaMetric> e : live.entrySet()) {
            FINAL.put(e.getKey(), value(e.getValue()));
        }
    }
}
