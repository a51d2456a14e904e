package io.kwire.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;

/**
 * Command line of the reference side.
 *
 * <pre>
 * generate --release R --out FILE.jsonl --manifest FILE.json   Kafka writes, kwire reads
 * verify   --release R --in FILE.jsonl[.gz]                    kwire writes, Kafka reads
 * errors   --release R --in FILE.jsonl                         kwire's error responses beside Kafka's
 * </pre>
 */
public final class Main {
    private Main() {
    }

    static final ObjectMapper MAPPER = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            usage();
        }
        Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage();
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        String release = opts.get("release");
        if (release == null) {
            usage();
        }
        String actual = kafkaVersion();
        if (!release.equals(actual)) {
            System.err.println("kafka-clients on the class path is " + actual + ", not " + release);
            System.exit(2);
        }
        List<Spec.Message> specs = Spec.load(MessageUtil.class);
        checkAgainstApiMessageType(specs);
        long start = System.nanoTime();
        int rc;
        switch (args[0]) {
            case "generate":
                rc = generate(specs, release, need(opts, "out"), need(opts, "manifest"));
                break;
            case "verify":
                rc = verify(specs, release, need(opts, "in"));
                break;
            case "errors":
                rc = ErrorResponses.run(specs, release, need(opts, "in"));
                break;
            default:
                usage();
                return;
        }
        System.err.printf("%s %s: %.1f s%n", args[0], release, (System.nanoTime() - start) / 1e9);
        System.exit(rc);
    }

    /** The release of the kafka-clients jar on the class path, from the properties file it carries. */
    static String kafkaVersion() throws IOException {
        try (InputStream in = MessageUtil.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        }
    }

    private static String need(Map<String, String> opts, String k) {
        String v = opts.get(k);
        if (v == null) {
            usage();
        }
        return v;
    }

    private static void usage() {
        System.err.println("usage: generate --release R --out FILE.jsonl --manifest FILE.json\n"
                + "       verify --release R --in FILE.jsonl[.gz]\n"
                + "       errors --release R --in FILE.jsonl");
        System.exit(2);
    }

    // ---- the list of messages ---------------------------------------------------------------

    private static int kindOrder(String kind) {
        switch (kind) {
            case "header":
                return 0;
            case "request":
            case "response":
                return 1;
            default:
                return 2;
        }
    }

    /** headers, then requests and responses by api key (request first), then data types by name. */
    static final Comparator<Spec.Message> ORDER = Comparator
            .comparingInt((Spec.Message m) -> kindOrder(m.type))
            .thenComparingInt(m -> m.apiKey)
            .thenComparing(m -> m.type.equals("request") ? 0 : 1)
            .thenComparing(m -> m.name);

    /** Every api key Kafka's ApiMessageType lists has a request and a response descriptor with its versions. */
    private static void checkAgainstApiMessageType(List<Spec.Message> specs) {
        Map<String, Spec.Message> byKey = new HashMap<>();
        for (Spec.Message m : specs) {
            if (m.type.equals("request") || m.type.equals("response")) {
                byKey.put(m.type + m.apiKey, m);
            }
        }
        for (ApiMessageType t : ApiMessageType.values()) {
            for (String kind : List.of("request", "response")) {
                Spec.Message m = byKey.remove(kind + t.apiKey());
                if (m == null) {
                    throw new IllegalStateException("no " + kind + " descriptor for api key " + t.apiKey());
                }
                if (m.validVersions.isEmpty()) {
                    continue;
                }
                if (m.validVersions.lo() != t.lowestSupportedVersion()
                        || m.validVersions.hi() != t.highestSupportedVersion(true)) {
                    throw new IllegalStateException(m.name + ": descriptor versions " + m.validVersions
                            + " differ from ApiMessageType " + t.lowestSupportedVersion() + "-"
                            + t.highestSupportedVersion(true));
                }
            }
        }
        if (!byKey.isEmpty()) {
            throw new IllegalStateException("descriptors without ApiMessageType: " + byKey.keySet());
        }
        for (Spec.Message m : specs) {
            if (m.validVersions.isEmpty()) {
                continue;
            }
            Message msg = Kafka.newInstance(m);
            if (msg.lowestSupportedVersion() != m.validVersions.lo()
                    || msg.highestSupportedVersion() != m.validVersions.hi()) {
                throw new IllegalStateException(m.name + ": class supports " + msg.lowestSupportedVersion() + "-"
                        + msg.highestSupportedVersion() + ", descriptor says " + m.validVersions);
            }
        }
    }

    private static ObjectNode manifest(List<Spec.Message> specs, String release) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("release", release);
        root.put("source", "kafka-clients " + release);
        ArrayNode arr = root.putArray("messages");
        for (Spec.Message m : specs) {
            ObjectNode o = arr.addObject();
            o.put("name", m.name);
            o.put("apiKey", m.apiKey);
            o.put("kind", m.type);
            boolean none = m.validVersions.isEmpty();
            o.put("minVersion", none ? -1 : m.validVersions.lo());
            o.put("maxVersion", none ? -1 : m.validVersions.hi());
            o.put("flexibleMin", m.flexibleVersions.isEmpty() ? -1 : m.flexibleVersions.lo());
            int unstable = -1;
            if (!none && (m.type.equals("request") || m.type.equals("response"))) {
                ApiMessageType t = ApiMessageType.fromApiKey((short) m.apiKey);
                if (t.latestVersionUnstable()) {
                    unstable = t.highestSupportedVersion(true);
                }
            }
            // the newest version when this release marks it unstable (not final), else -1
            o.put("unstableVersion", unstable);
            if (!none && (m.type.equals("request") || m.type.equals("response"))) {
                ApiMessageType t = ApiMessageType.fromApiKey((short) m.apiKey);
                ArrayNode hv = o.putArray("headerVersions");
                for (int v = m.validVersions.lo(); v <= m.validVersions.hi(); v++) {
                    hv.add(m.type.equals("request") ? t.requestHeaderVersion((short) v)
                            : t.responseHeaderVersion((short) v));
                }
            }
        }
        return root;
    }

    // ---- generate: Kafka writes --------------------------------------------------------------

    /** Stable 64-bit FNV-1a of a label; seeds do not depend on the release. */
    static long seed(String label) {
        long h = 0xcbf29ce484222325L;
        for (byte b : label.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    private static int generate(List<Spec.Message> specs, String release, String out, String manifestOut)
            throws IOException {
        List<Spec.Message> sorted = new ArrayList<>(specs);
        sorted.sort(ORDER);
        String source = "kafka-clients " + release;
        int count = 0;
        int failures = 0;
        Path outPath = Path.of(out);
        Path tmp = outPath.resolveSibling(outPath.getFileName() + ".tmp");
        try (OutputStream os = Files.newOutputStream(tmp);
             Writer w = new BufferedWriter(new OutputStreamWriter(os, StandardCharsets.UTF_8), 1 << 16)) {
            for (Spec.Message m : sorted) {
                for (int vv = m.validVersions.lo(); vv <= m.validVersions.hi(); vv++) {
                    short v = (short) vv;
                    for (String inst : instances(m, v)) {
                        String id = release + "/" + m.name + "/v" + v + "/" + inst;
                        try {
                            Message data = build(m, v, inst);
                            byte[] bytes = Kafka.serialize(data, v);
                            Message parsed = Kafka.parse(m, bytes, v);
                            byte[] again = Kafka.serialize(parsed, v);
                            if (!Arrays.equals(bytes, again)) {
                                throw new IllegalStateException("Kafka's read then write changed the bytes");
                            }
                            ObjectNode json = Adapt.message(m, parsed, v);
                            ObjectNode direct = Adapt.message(m, data, v);
                            if (!json.equals(direct)) {
                                throw new IllegalStateException("JSON of the parsed message differs from the built one");
                            }
                            ObjectNode line = MAPPER.createObjectNode();
                            line.put("id", id);
                            line.put("name", m.name);
                            line.put("apiKey", m.apiKey);
                            line.put("kind", m.type);
                            line.put("version", v);
                            line.put("source", source);
                            line.set("json", json);
                            line.put("bytes", Base64.getEncoder().encodeToString(bytes));
                            w.write(MAPPER.writeValueAsString(line));
                            w.write('\n');
                            count++;
                        } catch (RuntimeException e) {
                            failures++;
                            System.err.println("FAIL " + id + ": " + e);
                            if (failures <= 3) {
                                e.printStackTrace();
                            }
                        }
                    }
                }
            }
        }
        if (failures > 0) {
            Files.delete(tmp);
            System.err.println(failures + " instances failed; " + out + " left unchanged");
            return 1;
        }
        Files.move(tmp, outPath, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.writeString(Path.of(manifestOut),
                MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(manifest(sorted, release)) + "\n");
        System.err.println("generate " + release + ": " + count + " vectors -> " + out);
        return 0;
    }

    static final int RANDOM_INSTANCES = 8;

    static List<String> instances(Spec.Message m, short v) {
        List<String> out = new ArrayList<>();
        out.add("default");
        for (int i = 0; i < RANDOM_INSTANCES; i++) {
            out.add("random-" + i);
        }
        if (m.flexible(v)) {
            out.add("unknown-tags-0");
            out.add("unknown-tags-1");
        }
        return out;
    }

    private static Message build(Spec.Message m, short v, String inst) {
        if (inst.equals("default")) {
            return Kafka.newInstance(m);
        }
        long seed = seed(m.name + "/" + v + "/" + inst);
        Gen.Profile p;
        double nested = 0;
        boolean unknown = inst.startsWith("unknown-tags-");
        if (unknown) {
            p = inst.endsWith("0") ? Gen.Profile.RANDOM : Gen.Profile.MIN;
            nested = inst.endsWith("0") ? 1.0 : 0.5;
        } else {
            int i = Integer.parseInt(inst.substring("random-".length()));
            Gen.Profile[] order = {Gen.Profile.MINIMAL, Gen.Profile.NULLS, Gen.Profile.MAX, Gen.Profile.MIN,
                Gen.Profile.RANDOM, Gen.Profile.RANDOM, Gen.Profile.RANDOM, Gen.Profile.WIDE};
            p = order[i];
            if (p == Gen.Profile.WIDE && !m.flexible(v)) {
                p = Gen.Profile.RANDOM;
            }
        }
        JsonNode node = new Gen(m, v, seed, p).message();
        Message data = Kafka.fromJson(m, node, v);
        if (unknown) {
            Gen.addUnknownTags(m, data, v, new Random(seed ^ 0x5DEECE66DL), nested);
        }
        return data;
    }

    // ---- verify: kwire writes, Kafka reads ---------------------------------------------------

    private static int verify(List<Spec.Message> specs, String release, String in) throws IOException {
        Map<String, Spec.Message> byName = new HashMap<>();
        for (Spec.Message m : specs) {
            byName.put(m.name, m);
        }
        TreeMap<String, int[]> perTriple = new TreeMap<>(); // "apiKey name version kind" -> {vectors, diffs}
        int vectors = 0;
        int diffs = 0;
        int excused = 0;
        int lineNo = 0;
        InputStream raw = Files.newInputStream(Path.of(in));
        if (in.endsWith(".gz")) {
            raw = new GZIPInputStream(raw, 1 << 16);
        }
        try (BufferedReader rd = new BufferedReader(new InputStreamReader(raw, StandardCharsets.UTF_8), 1 << 16)) {
            String lineText;
            while ((lineText = rd.readLine()) != null) {
                lineNo++;
                if (lineText.isBlank()) {
                    continue;
                }
                JsonNode line = MAPPER.readTree(lineText);
                String id = line.path("id").asText("line " + lineNo);
                String name = line.path("name").asText();
                short v = (short) line.path("version").asInt(-1);
                String kind = line.path("kind").asText();
                String key = String.format("%-40s v%-3d %s", name, v, kind);
                int[] c = perTriple.computeIfAbsent(key, k -> new int[2]);
                c[0]++;
                vectors++;
                String problem = check(byName.get(name), line, v, kind);
                if (problem != null && line.path("superseded").asBoolean(false) && unstable(byName.get(name), v)) {
                    // kwire implements a newer release's definition of a version this release
                    // marks unstable, and says so; listed, not counted as a difference
                    excused++;
                    System.out.println("EXCUSED " + id + " (v" + v + " is unstable in " + release + "): " + problem);
                } else if (problem != null) {
                    c[1]++;
                    diffs++;
                    System.out.println("DIFF " + id + ": " + problem);
                }
            }
        }
        int triplesWithDiffs = 0;
        for (int[] c : perTriple.values()) {
            if (c[1] > 0) {
                triplesWithDiffs++;
            }
        }
        // every valid version of every message must have been checked
        int uncovered = 0;
        for (Spec.Message m : specs) {
            for (int vv = m.validVersions.lo(); vv <= m.validVersions.hi(); vv++) {
                if (!perTriple.containsKey(String.format("%-40s v%-3d %s", m.name, vv, m.type))) {
                    uncovered++;
                    System.out.println("NOT COVERED " + m.name + " v" + vv + " " + m.type);
                }
            }
        }
        System.out.printf("verify %s: %d vectors, %d (message, version, kind) triples, %d differences in %d triples, "
                + "%d excused, %d triples not covered%n",
                release, vectors, perTriple.size(), diffs, triplesWithDiffs, excused, uncovered);
        diffs += uncovered;
        if (vectors == 0) {
            System.out.println("verify: no vectors in " + in);
            return 1;
        }
        return diffs == 0 ? 0 : 1;
    }

    /** Whether the release marks version v of the message's api unstable (not final). */
    static boolean unstable(Spec.Message m, short v) {
        if (m == null || m.apiKey < 0) {
            return false;
        }
        ApiMessageType t = ApiMessageType.fromApiKey((short) m.apiKey);
        return t.latestVersionUnstable() && t.highestSupportedVersion(true) == v;
    }

    /** Null when Kafka reads the vector's bytes back to the same bytes and the same JSON. */
    private static String check(Spec.Message m, JsonNode line, short v, String kind) {
        if (m == null) {
            return "Kafka has no message " + line.path("name");
        }
        if (!m.validVersions.contains(v)) {
            return "version " + v + " is not valid for " + m.name + " (" + m.validVersions + ")";
        }
        if (!m.type.equals(kind)) {
            return "kind " + kind + " but " + m.name + " is a " + m.type;
        }
        if (line.path("apiKey").asInt(-2) != m.apiKey) {
            return "apiKey " + line.path("apiKey") + " but " + m.name + " has " + m.apiKey;
        }
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(line.path("bytes").asText());
        } catch (IllegalArgumentException e) {
            return "bytes are not base64: " + e.getMessage();
        }
        Message parsed;
        try {
            parsed = Kafka.parse(m, bytes, v);
        } catch (RuntimeException e) {
            return "Kafka cannot parse the bytes: " + e;
        }
        byte[] again;
        ObjectNode json;
        try {
            again = Kafka.serialize(parsed, v);
            json = Adapt.message(m, parsed, v);
        } catch (RuntimeException e) {
            return "Kafka cannot write back what it parsed: " + e;
        }
        if (!Arrays.equals(bytes, again)) {
            int off = 0;
            while (off < bytes.length && off < again.length && bytes[off] == again[off]) {
                off++;
            }
            return "Kafka re-serializes to different bytes (" + again.length + " vs " + bytes.length
                    + "), first difference at offset " + off;
        }
        for (JsonNode r : line.path("renames")) {
            JsonDiff.rename(json, r.path("path").asText(), r.path("old").asText(), r.path("new").asText());
        }
        String d = JsonDiff.diff("$", json, line.path("json"));
        if (d != null) {
            return "JSON differs: " + d;
        }
        return null;
    }
}
