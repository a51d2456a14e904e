package io.kwire.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

import java.io.BufferedReader;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The errors mode: kwire's error response to a request (built from the descriptors) beside
 * the one Kafka's own request class builds by hand ({@code getErrorResponse}), both read with
 * Kafka's classes and compared as JSON.
 *
 * <p>Every field Kafka sets must hold the same value in kwire's response. Some differences
 * are allowed, and listed with the apis and versions they occur in (see compare): kwire
 * carries the refusal's message in every errorMessage, answers the request's entities in an
 * array Kafka leaves empty because the response's top-level error already says it, and keeps
 * the request's order where Kafka's follows a hash map.
 */
final class ErrorResponses {
    private ErrorResponses() {
    }

    /**
     * Apis whose error responses are not compared, and why: ZooKeeper-era controller
     * requests to brokers (gone from Kafka 4.0), whose answers Kafka builds as one flat
     * list of a request's nested partitions; no client sends them, and a proxy refuses
     * them whole.
     */
    private static final Map<Integer, String> NOT_COMPARED = Map.of(
            4, "LeaderAndIsr (a controller's request to brokers, ZooKeeper mode only)",
            5, "StopReplica (a controller's request to brokers, ZooKeeper mode only)");

    /** One comparison's findings. */
    private static final class Findings {
        final List<String> diffs = new ArrayList<>();
        final List<String> allowed = new ArrayList<>();
        final String message;   // the refusal's message
        final String errorText; // the error code's own text, which some of Kafka's answers carry instead

        Findings(String message, String errorText) {
            this.message = message;
            this.errorText = errorText;
        }

        /** Empty findings for one trial comparison under these: the same message. */
        Findings trial() {
            return new Findings(message, errorText);
        }
    }

    static int run(List<Spec.Message> specs, String release, String in) throws IOException {
        Map<Integer, Spec.Message> responses = new TreeMap<>();
        for (Spec.Message m : specs) {
            if ("response".equals(m.type)) {
                responses.put(m.apiKey, m);
            }
        }
        Method parse = parseRequestMethod();
        int lines = 0;
        int same = 0;
        int differ = 0;
        int kafkaFails = 0;
        TreeMap<String, TreeMap<String, List<Short>>> allowed = new TreeMap<>(); // what -> api -> versions
        TreeMap<String, List<Short>> compared = new TreeMap<>();
        TreeMap<String, Integer> notCompared = new TreeMap<>();
        java.util.TreeSet<String> seen = new java.util.TreeSet<>();
        TreeMap<String, String> fails = new TreeMap<>();         // api -> the first failure
        TreeMap<String, Integer> failCounts = new TreeMap<>();
        try (BufferedReader rd = Files.newBufferedReader(Path.of(in), StandardCharsets.UTF_8)) {
            String text;
            while ((text = rd.readLine()) != null) {
                if (text.isBlank()) {
                    continue;
                }
                lines++;
                JsonNode line = Main.MAPPER.readTree(text);
                String id = line.path("id").asText();
                short apiKey = (short) line.path("apiKey").asInt();
                short v = (short) line.path("version").asInt();
                Spec.Message rs = responses.get((int) apiKey);
                String known = NOT_COMPARED.get((int) apiKey);
                if (known != null) {
                    notCompared.merge(known, 1, Integer::sum);
                    continue;
                }
                if (rs != null && line.path("superseded").asBoolean(false) && Main.unstable(rs, v)) {
                    // kwire implements a newer release's definition of a version this
                    // release marks unstable (as in verify): not Kafka's layout here
                    notCompared.merge(rs.name.replaceFirst("Response$", "") + " v" + v
                            + " (unstable in " + release + "; kwire has a newer release's definition)", 1, Integer::sum);
                    continue;
                }
                if (rs == null) {
                    System.out.println("DIFF " + id + ": Kafka has no response message for api key " + apiKey);
                    differ++;
                    continue;
                }
                seen.add(rs.name.replaceFirst("Response$", ""));
                byte[] request = Base64.getDecoder().decode(line.path("request").asText());
                byte[] kwire = Base64.getDecoder().decode(line.path("response").asText());
                JsonNode want;
                try {
                    AbstractRequest req = parseRequest(parse, ApiKeys.forId(apiKey), v, request);
                    Throwable err = Errors.forCode((short) line.path("code").asInt()).exception(line.path("message").asText());
                    AbstractResponse resp = req.getErrorResponse(0, err);
                    want = Kafka.toJson((Message) resp.data(), v);
                } catch (RuntimeException e) {
                    // Kafka's hand-written answer fails on this random request (a null array
                    // it does not expect, say): nothing to compare it with
                    kafkaFails++;
                    fails.putIfAbsent(rs.name.replaceFirst("Response$", ""), id + ": " + e);
                    failCounts.merge(rs.name.replaceFirst("Response$", ""), 1, Integer::sum);
                    continue;
                }
                JsonNode got;
                try {
                    got = Kafka.toJson(Kafka.parse(rs, kwire, v), v);
                } catch (RuntimeException e) {
                    System.out.println("DIFF " + id + ": Kafka cannot read kwire's error response: " + e);
                    differ++;
                    continue;
                }
                Findings f = new Findings(line.path("message").asText(),
                        Errors.forCode((short) line.path("code").asInt()).message());
                compare("$", want, got, f);
                String api = rs.name.replaceFirst("Response$", "");
                addVersion(compared.computeIfAbsent(api, k -> new ArrayList<>()), v);
                if (!f.diffs.isEmpty()) {
                    differ++;
                    System.out.println("DIFF " + id + " (" + line.path("place").asText() + "): " + String.join("; ", f.diffs));
                    continue;
                }
                same++;
                for (String what : f.allowed) {
                    addVersion(allowed.computeIfAbsent(what, k -> new TreeMap<>())
                            .computeIfAbsent(api, k -> new ArrayList<>()), v);
                }
            }
        }
        for (Map.Entry<String, TreeMap<String, List<Short>>> e : allowed.entrySet()) {
            StringBuilder sb = new StringBuilder("ALLOWED " + e.getKey() + ":");
            for (Map.Entry<String, List<Short>> a : e.getValue().entrySet()) {
                sb.append(' ').append(a.getKey()).append(' ').append(versions(a.getValue())).append(';');
            }
            System.out.println(sb);
        }
        for (Map.Entry<String, String> e : fails.entrySet()) {
            String text = e.getValue();
            System.out.println("KAFKA FAILS on " + failCounts.get(e.getKey()) + " " + e.getKey() + " requests, first "
                    + (text.length() > 200 ? text.substring(0, 197) + "..." : text));
        }
        for (String api : seen) {
            if (!compared.containsKey(api)) {
                System.out.println("NOT COMPARED " + api + ": Kafka's own error response failed on every random request");
            }
        }
        for (Map.Entry<String, Integer> e : notCompared.entrySet()) {
            System.out.println("NOT COMPARED " + e.getKey() + ": " + e.getValue() + " requests");
        }
        System.out.printf("errors %s: %d error responses of %d apis, %d as Kafka's, %d differ, Kafka's own fails on %d%n",
                release, lines, compared.size(), same, differ, kafkaFails);
        if (lines == 0 || same == 0) {
            System.out.println("errors: nothing compared in " + in);
            return 1;
        }
        return differ == 0 ? 0 : 1;
    }

    /**
     * Compares Kafka's JSON (want) with kwire's (got): every field Kafka has must match,
     * with the allowances listed in the class comment and these: kwire's errorMessage holds
     * the refusal's message where Kafka's holds the error code's own text; kwire answers
     * entities in the request's order where Kafka's answer follows a hash map's (and merges
     * entities a random request names twice).
     */
    private static void compare(String path, JsonNode want, JsonNode got, Findings f) {
        if (got == null || got.isMissingNode()) {
            f.diffs.add(path + ": Kafka " + abbrev(want) + ", kwire has none");
            return;
        }
        if (want.isObject() && got.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = want.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                String p = path + "." + e.getKey();
                JsonNode g = got.get(e.getKey());
                if (e.getKey().equals("errorMessage") && g != null && g.isTextual() && g.asText().equals(f.message)
                        && (e.getValue().isNull() || e.getValue().asText().isEmpty() || e.getValue().asText().equals(f.errorText))) {
                    f.allowed.add(e.getValue().isNull() || e.getValue().asText().isEmpty()
                            ? "kwire carries the refusal's message in an errorMessage Kafka leaves empty"
                            : "kwire carries the refusal's message where Kafka writes the error code's own text");
                    continue;
                }
                if (e.getKey().equals("records") && g != null && (e.getValue().isNull() && "".equals(g.asText(null))
                        || g.isNull() && "".equals(e.getValue().asText(null)))) {
                    f.allowed.add("records: empty where Kafka writes null, or null where it writes empty (no records either way)");
                    continue;
                }
                compare(p, e.getValue(), g, f);
            }
            return;
        }
        if (want.isArray() && got.isArray()) {
            String shape = path.replaceAll("\\[\\d+\\]", "[]");
            if (want.size() == 0 && got.size() > 0) {
                f.allowed.add("kwire answers the request's entities in " + shape + " (Kafka: [], its top-level error says it)");
                return;
            }
            Findings ordered = f.trial();
            if (want.size() == got.size()) {
                for (int i = 0; i < want.size(); i++) {
                    compare(path + "[" + i + "]", want.get(i), got.get(i), ordered);
                }
                if (ordered.diffs.isEmpty()) {
                    f.allowed.addAll(ordered.allowed);
                    return;
                }
            }
            // Kafka builds some answers from hash maps: the same elements in another
            // order, and an entity a request names twice answered once.
            boolean[] used = new boolean[got.size()];
            List<String> inner = new ArrayList<>();
            for (int i = 0; i < want.size(); i++) {
                int match = -1;
                for (int j = 0; j < got.size() && match < 0; j++) {
                    Findings one = f.trial();
                    compare(path + "[" + j + "]", want.get(i), got.get(j), one);
                    if (one.diffs.isEmpty() && !used[j]) {
                        match = j;
                        inner.addAll(one.allowed);
                    }
                }
                if (match < 0) {
                    if (want.size() == got.size()) {
                        f.diffs.addAll(ordered.diffs);
                    } else {
                        f.diffs.add(path + ": Kafka " + want.size() + " elements, kwire " + got.size()
                                + "; Kafka's " + abbrev(want.get(i)) + " is not among kwire's");
                    }
                    return;
                }
                used[match] = true;
            }
            boolean emptyEntity = false;
            for (int j = 0; j < got.size(); j++) {
                if (!used[j] && want.size() < got.size() && hasEmptyArray(got.get(j))) {
                    emptyEntity = true;
                    continue;
                }
                if (!used[j] && !hasEqual(want, got.get(j), f) && !sameEntity(want, got.get(j))) {
                    f.diffs.add(path + "[" + j + "]: kwire " + abbrev(got.get(j)) + ", which Kafka's answer lacks");
                    return;
                }
            }
            f.allowed.addAll(inner);
            if (emptyEntity) {
                f.allowed.add("kwire answers an entity the request names with nothing under it in " + shape
                        + " (Kafka's answer, built from topic-partition pairs, has none)");
            }
            f.allowed.add(want.size() == got.size()
                    ? "the elements of " + shape + " in another order (Kafka's follow a hash map)"
                    : "kwire answers each of an entity named twice in " + shape + " (Kafka's map keeps one)");
            return;
        }
        if (!want.equals(got)) {
            f.diffs.add(path + ": Kafka " + abbrev(want) + ", kwire " + abbrev(got));
        }
    }

    /** Whether an element answers an entity with an empty list under it (a topic with no partitions). */
    private static boolean hasEmptyArray(JsonNode g) {
        Iterator<JsonNode> it = g.elements();
        while (it.hasNext()) {
            JsonNode c = it.next();
            if (c.isArray() && c.size() == 0) {
                return true;
            }
        }
        return false;
    }

    /** Whether some element of Kafka's array names the same entity as g (equal scalar fields). */
    private static boolean sameEntity(JsonNode want, JsonNode g) {
        for (JsonNode w : want) {
            boolean same = w.isObject();
            Iterator<Map.Entry<String, JsonNode>> it = w.fields();
            while (same && it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                if (e.getValue().isValueNode() && !e.getValue().equals(g.get(e.getKey()))) {
                    same = false;
                }
            }
            if (same) {
                return true;
            }
        }
        return false;
    }

    /** Whether some element of Kafka's array equals kwire's element g (as compare judges). */
    private static boolean hasEqual(JsonNode want, JsonNode g, Findings f) {
        for (JsonNode w : want) {
            Findings one = f.trial();
            compare("", w, g, one);
            if (one.diffs.isEmpty()) {
                return true;
            }
        }
        return false;
    }

    private static String abbrev(JsonNode n) {
        String s = n.toString();
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }

    private static void addVersion(List<Short> vs, short v) {
        if (!vs.contains(v)) {
            vs.add(v);
        }
    }

    /** "v0-3,7" from a list of versions. */
    private static String versions(List<Short> vs) {
        vs.sort(null);
        StringBuilder sb = new StringBuilder("v");
        for (int i = 0; i < vs.size(); i++) {
            int j = i;
            while (j + 1 < vs.size() && vs.get(j + 1) == vs.get(j) + 1) {
                j++;
            }
            if (sb.length() > 1) {
                sb.append(',');
            }
            sb.append(vs.get(i));
            if (j > i) {
                sb.append('-').append(vs.get(j));
            }
            i = j;
        }
        return sb.toString();
    }

    /** AbstractRequest.parseRequest: over a ByteBuffer in 3.x, over a Readable in 4.x. */
    private static Method parseRequestMethod() {
        for (Method m : AbstractRequest.class.getMethods()) {
            if (m.getName().equals("parseRequest") && m.getParameterCount() == 3) {
                return m;
            }
        }
        throw new IllegalStateException("kafka-clients has no AbstractRequest.parseRequest");
    }

    private static AbstractRequest parseRequest(Method parse, ApiKeys key, short v, byte[] body) {
        ByteBuffer buf = ByteBuffer.wrap(body);
        Object arg = parse.getParameterTypes()[2] == ByteBuffer.class ? buf : new ByteBufferAccessor(buf);
        try {
            Object rs = parse.invoke(null, key, v, arg);
            return (AbstractRequest) rs.getClass().getField("request").get(rs);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            throw c instanceof RuntimeException ? (RuntimeException) c : new IllegalStateException(c);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
