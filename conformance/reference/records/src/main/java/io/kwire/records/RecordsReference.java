package io.kwire.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/** Builds record batches with kafka-clients, and checks batches kwire built. */
public final class RecordsReference {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 = 1700000000000L;
    private static final String SOURCE = "kafka-clients " + System.getProperty("kafka.version", "4.4.0");

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("generate") || args[0].equals("verify"))) {
            System.err.println("usage: RecordsReference generate|verify FILE");
            System.exit(2);
        }
        if (args[0].equals("generate")) {
            generate(Path.of(args[1]));
        } else {
            System.exit(verify(Path.of(args[1])) ? 0 : 1);
        }
    }

    // ---- generate ----

    private static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** A deterministic, partly compressible payload bigger than one LZ4 block and one snappy chunk. */
    private static byte[] bigValue(int n) {
        byte[] b = new byte[n];
        long x = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < n; i++) {
            if (i % 64 < 40) {
                b[i] = (byte) ('a' + (i / 64) % 26);
            } else {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                b[i] = (byte) x;
            }
        }
        return b;
    }

    private static Header h(String k, byte[] v) {
        return new RecordHeader(k, v);
    }

    /** Records with every shape: null and empty keys and values, headers with duplicates and nulls. */
    private static SimpleRecord[] mixed() {
        return mixed(false);
    }

    /** With big, one value spans several LZ4 blocks and snappy chunks. */
    private static SimpleRecord[] mixed(boolean big) {
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) all[i] = (byte) i;
        return new SimpleRecord[] {
            new SimpleRecord(T0, bytes("key-0"), bytes("value-0"), new Header[] {
                h("h1", bytes("a")), h("h1", bytes("b")), h("empty", new byte[0]), h("null", null)}),
            new SimpleRecord(T0 + 1, null, bytes("no key")),
            new SimpleRecord(T0 + 2, new byte[0], null),
            new SimpleRecord(T0 + 3, bytes("k"), new byte[0]),
            new SimpleRecord(T0 - 1000, bytes("late"), bytes("timestamp before the base")),
            new SimpleRecord(T0 + 5, bytes("big"), bigValue(big ? 70_000 : 300)),
            new SimpleRecord(T0 + 6, bytes("ключ"), all, new Header[] {h("заголовок", all), h("", bytes("empty key"))}),
            new SimpleRecord(T0 + 7, bytes("schema"), new byte[] {0, 0, 0, 1, 44, 'p', 'a', 'y'},
                new Header[] {h("schema.version", bytes("3"))}),
        };
    }

    /** The same without headers, for magic 0 and 1, which have none. */
    private static SimpleRecord[] plain(boolean big) {
        SimpleRecord[] in = mixed(big);
        SimpleRecord[] out = new SimpleRecord[in.length];
        for (int i = 0; i < in.length; i++) {
            out[i] = new SimpleRecord(in[i].timestamp(), in[i].key(), in[i].value());
        }
        return out;
    }

    private static Compression codec(String name) {
        switch (name) {
            case "none": return Compression.NONE;
            case "gzip": return Compression.gzip().build();
            case "snappy": return Compression.snappy().build();
            case "lz4": return Compression.lz4().build();
            case "zstd": return Compression.zstd().build();
            default: throw new IllegalArgumentException(name);
        }
    }

    private static MemoryRecords build(byte magic, long baseOffset, Compression c, TimestampType tt, long logAppendTime,
                                       long pid, short epoch, int seq, boolean txn, boolean control, int leaderEpoch,
                                       long deleteHorizon, SimpleRecord... recs) {
        ByteBufferOutputStream out = new ByteBufferOutputStream(1024);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(out, magic, c, tt, baseOffset, logAppendTime, pid, epoch, seq,
            txn, control, leaderEpoch, Integer.MAX_VALUE, deleteHorizon);
        long off = baseOffset;
        for (SimpleRecord r : recs) {
            b.appendWithOffset(off++, r);
        }
        return b.build();
    }

    private static MemoryRecords simple(byte magic, long base, String c, SimpleRecord... recs) {
        return MemoryRecords.withRecords(magic, base, codec(c), TimestampType.CREATE_TIME, RecordBatch.NO_PRODUCER_ID,
            RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, 5, false, recs);
    }

    private static byte[] toBytes(MemoryRecords... parts) {
        int n = 0;
        for (MemoryRecords p : parts) n += p.sizeInBytes();
        ByteBuffer all = ByteBuffer.allocate(n);
        for (MemoryRecords p : parts) all.put(p.buffer().duplicate());
        return all.array();
    }

    private static void generate(Path out) throws IOException {
        String[] codecs = {"none", "gzip", "snappy", "lz4", "zstd"};
        Map<String, byte[]> cases = new java.util.LinkedHashMap<>();
        for (String c : codecs) {
            cases.put("v2-" + c, toBytes(simple((byte) 2, 100, c, mixed(true))));
        }
        for (String c : new String[] {"none", "zstd"}) {
            cases.put("v2-idempotent-" + c, toBytes(MemoryRecords.withIdempotentRecords((byte) 2, 1000, codec(c), 4242L,
                (short) 3, 17, 9, mixed())));
        }
        cases.put("v2-idempotent-sequence-wrap", toBytes(MemoryRecords.withIdempotentRecords((byte) 2, 0,
            Compression.NONE, 77L, (short) 0, Integer.MAX_VALUE - 2, 0, mixed())));
        for (String c : new String[] {"none", "gzip", "snappy"}) {
            cases.put("v2-transactional-" + c, toBytes(MemoryRecords.withTransactionalRecords((byte) 2, 2000, codec(c),
                9001L, (short) 2, 0, 11, mixed())));
        }
        for (String c : new String[] {"none", "lz4"}) {
            cases.put("v2-log-append-time-" + c, toBytes(build((byte) 2, 300, codec(c), TimestampType.LOG_APPEND_TIME,
                T0 + 99_999, -1L, (short) -1, -1, false, false, 7, RecordBatch.NO_TIMESTAMP, mixed())));
        }
        cases.put("v2-delete-horizon", toBytes(build((byte) 2, 400, Compression.NONE, TimestampType.CREATE_TIME,
            RecordBatch.NO_TIMESTAMP, 5L, (short) 1, 0, false, false, 2, T0 + 86_400_000L, mixed())));
        cases.put("v2-control-commit", toBytes(MemoryRecords.withEndTransactionMarker(2010, T0 + 50, 11, 9001L, (short) 2,
            new EndTransactionMarker(ControlRecordType.COMMIT, 6))));
        cases.put("v2-control-abort", toBytes(MemoryRecords.withEndTransactionMarker(2011, T0 + 51, 11, 9001L, (short) 2,
            new EndTransactionMarker(ControlRecordType.ABORT, 7))));
        cases.put("v2-control-leader-change", toBytes(MemoryRecords.withLeaderChangeMessage(500, T0 + 60, 4,
            ByteBuffer.allocate(256), new LeaderChangeMessage().setLeaderId(1)
                .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1), new LeaderChangeMessage.Voter().setVoterId(2)))
                .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1))))));
        for (byte magic : new byte[] {0, 1}) {
            for (String c : new String[] {"none", "gzip", "snappy", "lz4"}) {
                cases.put("v" + magic + "-" + c, toBytes(simple(magic, 200, c, plain(magic == 1))));
            }
        }
        for (String c : new String[] {"none", "gzip"}) {
            cases.put("v1-log-append-time-" + c, toBytes(build((byte) 1, 250, codec(c), TimestampType.LOG_APPEND_TIME,
                T0 + 12_345, -1L, (short) -1, -1, false, false, -1, RecordBatch.NO_TIMESTAMP, plain(false))));
        }
        cases.put("mixed-magic-fetch", toBytes(simple((byte) 1, 0, "gzip", plain(false)), simple((byte) 2, 8, "none", mixed()),
            simple((byte) 2, 16, "zstd", mixed()), simple((byte) 0, 24, "none", plain(false))));

        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (Map.Entry<String, byte[]> e : cases.entrySet()) {
                ObjectNode line = JSON.createObjectNode();
                line.put("name", e.getKey());
                line.put("source", SOURCE);
                line.put("bytes", Base64.getEncoder().encodeToString(e.getValue()));
                line.set("batches", describe(e.getValue()));
                w.write(JSON.writeValueAsString(line));
                w.write('\n');
            }
        }
        System.out.println("wrote " + cases.size() + " record vectors to " + out);
    }

    // ---- what Kafka's reader sees ----

    private static JsonNode b64(ByteBuffer b) {
        if (b == null) return JSON.nullNode();
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return JSON.getNodeFactory().textNode(Base64.getEncoder().encodeToString(a));
    }

    /** Reads every batch with Kafka's reader (validating each) and describes what it holds. */
    static ArrayNode describe(byte[] data) {
        ArrayNode batches = JSON.createArrayNode();
        MemoryRecords mr = MemoryRecords.readableRecords(ByteBuffer.wrap(data));
        for (RecordBatch b : mr.batches()) {
            b.ensureValid();
            ObjectNode o = batches.addObject();
            o.put("baseOffset", Long.toString(b.baseOffset()));
            o.put("lastOffset", Long.toString(b.lastOffset()));
            o.put("magic", (int) b.magic());
            o.put("compression", b.compressionType().name);
            o.put("timestampType", b.timestampType().toString());
            o.put("maxTimestamp", Long.toString(b.maxTimestamp()));
            o.put("producerId", Long.toString(b.producerId()));
            o.put("producerEpoch", (int) b.producerEpoch());
            o.put("baseSequence", b.baseSequence());
            o.put("partitionLeaderEpoch", b.partitionLeaderEpoch());
            o.put("transactional", b.isTransactional());
            o.put("control", b.isControlBatch());
            o.put("deleteHorizonMs", Long.toString(b.deleteHorizonMs().orElse(-1L)));
            ArrayNode recs = o.putArray("records");
            for (Record r : b) {
                r.ensureValid();
                ObjectNode ro = recs.addObject();
                ro.put("offset", Long.toString(r.offset()));
                ro.put("timestamp", Long.toString(r.timestamp()));
                ro.put("sequence", r.sequence());
                ro.set("key", b64(r.key()));
                ro.set("value", b64(r.value()));
                ArrayNode hs = ro.putArray("headers");
                for (Header hd : r.headers()) {
                    ObjectNode ho = hs.addObject();
                    ho.put("key", hd.key());
                    ho.set("value", hd.value() == null ? JSON.nullNode() : b64(ByteBuffer.wrap(hd.value())));
                }
                if (b.isControlBatch()) {
                    ObjectNode c = ro.putObject("control");
                    ControlRecordType t = ControlRecordType.parse(r.key());
                    c.put("type", t.name());
                    if (t == ControlRecordType.ABORT || t == ControlRecordType.COMMIT) {
                        c.put("coordinatorEpoch", EndTransactionMarker.deserialize(r).coordinatorEpoch());
                    }
                }
            }
        }
        return batches;
    }

    // ---- verify ----

    /** Names the first place where what Kafka read differs from what kwire meant. */
    static String firstDifference(String path, JsonNode got, JsonNode want) {
        if (got.isObject() && want.isObject()) {
            java.util.Iterator<String> it = want.fieldNames();
            while (it.hasNext()) {
                String k = it.next();
                if (!got.has(k)) return path + "." + k + ": Kafka reads nothing, kwire meant " + clip(want.get(k));
                String d = firstDifference(path + "." + k, got.get(k), want.get(k));
                if (d != null) return d;
            }
            java.util.Iterator<String> g = got.fieldNames();
            while (g.hasNext()) {
                String k = g.next();
                if (!want.has(k)) return path + "." + k + ": Kafka reads " + clip(got.get(k)) + ", kwire meant nothing";
            }
            return null;
        }
        if (got.isArray() && want.isArray()) {
            for (int i = 0; i < Math.min(got.size(), want.size()); i++) {
                String d = firstDifference(path + "[" + i + "]", got.get(i), want.get(i));
                if (d != null) return d;
            }
            if (got.size() != want.size()) return path + ": Kafka reads " + got.size() + " items, kwire meant " + want.size();
            return null;
        }
        if (got.equals(want)) return null;
        return path + ": Kafka reads " + clip(got) + ", kwire meant " + clip(want);
    }

    private static String clip(JsonNode n) {
        String s = n.toString();
        return s.length() > 120 ? s.substring(0, 120) + "..." : s;
    }

    private static boolean verify(Path in) throws IOException {
        int passed = 0, failed = 0;
        List<String> failures = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(in, StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isBlank()) continue;
                JsonNode v = JSON.readTree(line);
                String name = v.path("name").asText();
                try {
                    byte[] data = Base64.getDecoder().decode(v.path("bytes").asText());
                    JsonNode got = describe(data);
                    JsonNode want = v.path("batches");
                    if (got.equals(want)) {
                        passed++;
                    } else {
                        failed++;
                        failures.add(name + ": " + firstDifference("$", got, want));
                    }
                } catch (RuntimeException e) {
                    failed++;
                    failures.add(name + ": Kafka's reader failed: " + e);
                }
            }
        }
        for (String f : failures) System.out.println("FAIL " + f);
        System.out.println("records verify: " + passed + " passed, " + failed + " failed");
        return failed == 0 && passed > 0;
    }
}
