package io.kwire.conformance;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The message descriptors (common/message/*.json) that the kafka-clients jar on the class
 * path carries as resources, read into a small model: enough to walk the fields present
 * at one version and to know their types, nullability and tags.
 */
final class Spec {
    private Spec() {
    }

    /** A version range; empty when lo &gt; hi ("none"). */
    record Versions(int lo, int hi) {
        static final Versions NONE = new Versions(1, 0);

        static Versions parse(String s) {
            if (s == null || s.equals("none")) {
                return NONE;
            }
            s = s.trim();
            if (s.endsWith("+")) {
                return new Versions(Integer.parseInt(s.substring(0, s.length() - 1)), Short.MAX_VALUE);
            }
            int dash = s.indexOf('-');
            if (dash > 0) {
                return new Versions(Integer.parseInt(s.substring(0, dash)), Integer.parseInt(s.substring(dash + 1)));
            }
            int v = Integer.parseInt(s);
            return new Versions(v, v);
        }

        boolean contains(int v) {
            return v >= lo && v <= hi;
        }

        boolean isEmpty() {
            return lo > hi;
        }
    }

    static final class Field {
        String name;
        String type;
        Versions versions;
        Versions nullableVersions;
        Versions taggedVersions;
        Integer tag;
        /** Inline struct fields when the type (or its element type) is a struct declared here. */
        List<Field> fields;

        String key() {
            return Character.toLowerCase(name.charAt(0)) + name.substring(1);
        }

        boolean isArray() {
            return type.startsWith("[]");
        }

        String elementType() {
            return isArray() ? type.substring(2) : type;
        }

        boolean nullable(int v) {
            return nullableVersions.contains(v);
        }

        boolean tagged(int v) {
            return tag != null && taggedVersions.contains(v);
        }
    }

    static final class Message {
        String name;
        String type; // request, response, header, data
        int apiKey = -1;
        Versions validVersions;
        Versions flexibleVersions;
        List<Field> fields;
        Map<String, List<Field>> commonStructs = new LinkedHashMap<>();
        Map<String, List<Field>> inlineStructs = new LinkedHashMap<>();

        boolean flexible(int v) {
            return flexibleVersions.contains(v);
        }

        /** Java class of the message in org.apache.kafka.common.message. */
        String className() {
            switch (type) {
                case "request":
                case "response":
                case "header":
                    return name + "Data";
                default:
                    return name;
            }
        }

        /** The fields of a struct type used by a field of this message. */
        List<Field> structFields(Field f) {
            if (f.fields != null) {
                return f.fields;
            }
            List<Field> common = commonStructs.get(f.elementType());
            if (common == null) {
                common = inlineStructs.get(f.elementType());
            }
            if (common == null) {
                throw new IllegalStateException(name + ": unknown struct type " + f.type + " of field " + f.name);
            }
            return common;
        }
    }

    static final List<String> PRIMITIVES = List.of("bool", "int8", "int16", "uint16", "int32", "uint32",
            "int64", "float64", "string", "bytes", "records", "uuid");

    static boolean isPrimitive(String type) {
        return PRIMITIVES.contains(type);
    }

    /** Reads every descriptor of the kafka-clients jar that holds {@code anchor}, sorted by name. */
    static List<Message> load(Class<?> anchor) throws IOException {
        Path jar;
        try {
            jar = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IOException(e);
        }
        ObjectMapper mapper = new ObjectMapper();
        mapper.enable(JsonParser.Feature.ALLOW_COMMENTS);
        List<Message> out = new ArrayList<>();
        try (JarFile jf = new JarFile(jar.toFile())) {
            Enumeration<JarEntry> en = jf.entries();
            List<JarEntry> entries = new ArrayList<>();
            while (en.hasMoreElements()) {
                JarEntry e = en.nextElement();
                String n = e.getName();
                if (n.startsWith("common/message/") && n.endsWith(".json") && n.indexOf('/', 15) < 0) {
                    entries.add(e);
                }
            }
            for (JarEntry e : entries) {
                try (InputStream in = jf.getInputStream(e)) {
                    out.add(parse(mapper.readTree(in)));
                }
            }
        }
        out.sort(Comparator.comparing(m -> m.name));
        if (out.isEmpty()) {
            throw new IOException("no message descriptors in " + jar);
        }
        return Collections.unmodifiableList(out);
    }

    private static Message parse(JsonNode n) {
        Message m = new Message();
        m.name = n.get("name").asText();
        m.type = n.get("type").asText();
        if (n.has("apiKey")) {
            m.apiKey = n.get("apiKey").asInt();
        }
        m.validVersions = Versions.parse(text(n, "validVersions"));
        m.flexibleVersions = Versions.parse(text(n, "flexibleVersions"));
        m.fields = fields(n.get("fields"), m.inlineStructs);
        JsonNode cs = n.get("commonStructs");
        if (cs != null) {
            for (JsonNode s : cs) {
                m.commonStructs.put(s.get("name").asText(), fields(s.get("fields"), m.inlineStructs));
            }
        }
        return m;
    }

    private static List<Field> fields(JsonNode arr, Map<String, List<Field>> inline) {
        List<Field> out = new ArrayList<>();
        if (arr == null) {
            return out;
        }
        for (JsonNode n : arr) {
            Field f = new Field();
            f.name = n.get("name").asText();
            f.type = n.get("type").asText().trim();
            f.versions = Versions.parse(text(n, "versions"));
            f.nullableVersions = Versions.parse(text(n, "nullableVersions"));
            f.taggedVersions = Versions.parse(text(n, "taggedVersions"));
            if (n.has("tag")) {
                f.tag = n.get("tag").asInt();
            }
            if (n.has("fields")) {
                f.fields = fields(n.get("fields"), inline);
                inline.put(f.elementType(), f.fields);
            }
            out.add(f);
        }
        return out;
    }

    private static String text(JsonNode n, String key) {
        JsonNode v = n.get(key);
        return v == null ? null : v.asText();
    }
}
