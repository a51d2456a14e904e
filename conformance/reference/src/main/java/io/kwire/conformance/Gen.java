package io.kwire.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BinaryNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.types.RawTaggedField;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

/**
 * Random instances of a message at one version, built as the JSON tree that Kafka's JSON
 * converters read, walking the descriptor's fields. Deterministic for a given seed
 * (java.util.Random's algorithm is fixed by its specification).
 */
final class Gen {
    /** What an instance stresses. */
    enum Profile {
        /** zeros, empty strings, bytes and arrays; nullable fields not null; tagged fields unset */
        MINIMAL,
        /** null wherever the version allows it; tagged fields set */
        NULLS,
        /** largest values; strings and bytes past 127 bytes; primitive arrays past 127 elements */
        MAX,
        /** smallest (most negative) values, one-element arrays, non-ASCII strings */
        MIN,
        /** a mix of all of the above, field by field */
        RANDOM,
        /** RANDOM, plus the first top-level array of structs past 127 elements (kept small inside) */
        WIDE
    }

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final Spec.Message m;
    private final short v;
    private final Random r;
    private final Profile profile;
    /** Struct elements still allowed in arrays, so nesting cannot blow up an instance. */
    private int budget = 40;
    /** Values past 127 bytes or elements still allowed (MAX profile), to bound the vector size. */
    private int longBudget = 6;
    private boolean wideDone;
    private int quiet; // > 0 inside a wide array: keep values small

    Gen(Spec.Message m, short version, long seed, Profile profile) {
        this.m = m;
        this.v = version;
        this.r = new Random(seed);
        this.profile = profile;
    }

    ObjectNode message() {
        return struct(m.fields, 0);
    }

    private ObjectNode struct(List<Spec.Field> fields, int depth) {
        ObjectNode o = F.objectNode();
        for (Spec.Field f : fields) {
            if (!f.versions.contains(v)) {
                continue;
            }
            if (f.tagged(v) && !setTagged()) {
                continue; // unset: the converter reads the default
            }
            o.set(f.key(), value(f, depth));
        }
        return o;
    }

    private boolean setTagged() {
        if (quiet > 0) {
            return r.nextInt(4) == 0;
        }
        switch (profile) {
            case MINIMAL:
                return false;
            case NULLS:
            case MAX:
            case MIN:
                return true;
            default:
                return r.nextBoolean();
        }
    }

    private boolean chooseNull() {
        if (quiet > 0) {
            return false;
        }
        switch (profile) {
            case NULLS:
                return true;
            case RANDOM:
            case WIDE:
                return r.nextInt(4) == 0;
            default:
                return false;
        }
    }

    private JsonNode value(Spec.Field f, int depth) {
        if (f.nullable(v) && chooseNull()) {
            return NullNode.instance;
        }
        if (f.isArray()) {
            String et = f.elementType();
            boolean structs = !Spec.isPrimitive(et);
            ArrayNode a = F.arrayNode();
            boolean wide = structs && profile == Profile.WIDE && !wideDone && depth == 0;
            int n = wide ? 128 + r.nextInt(4) : arrayLength(structs);
            if (wide) {
                wideDone = true;
                quiet++;
            }
            for (int i = 0; i < n; i++) {
                if (structs) {
                    if (!wide) {
                        budget--;
                    }
                    a.add(struct(m.structFields(f), depth + 1));
                } else {
                    a.add(scalar(et));
                }
            }
            if (wide) {
                quiet--;
            }
            return a;
        }
        if (!Spec.isPrimitive(f.type)) {
            return struct(m.structFields(f), depth + 1);
        }
        return scalar(f.type);
    }

    private boolean takeLong() {
        return longBudget-- > 0;
    }

    private int arrayLength(boolean structs) {
        if (quiet > 0) {
            return 0;
        }
        if (structs && budget <= 0) {
            return 0;
        }
        switch (profile) {
            case MINIMAL:
                return 0;
            case MIN:
                return 1;
            case MAX:
                return structs ? 2 : takeLong() ? 128 + r.nextInt(8) : 2;
            default: {
                int x = r.nextInt(10);
                if (x < 2) {
                    return 0;
                }
                if (x < 5) {
                    return 1;
                }
                if (x < 8) {
                    return 2;
                }
                return structs ? 3 : 3 + r.nextInt(6);
            }
        }
    }

    /** Which end of a range to use: -1 low, 1 high, 0 zero, 2 random, 3 small. */
    private int pick() {
        if (quiet > 0) {
            return 3;
        }
        switch (profile) {
            case MINIMAL:
                return 0;
            case NULLS:
                return 2;
            case MAX:
                return 1;
            case MIN:
                return -1;
            default: {
                int x = r.nextInt(10);
                if (x == 0) {
                    return -1;
                }
                if (x == 1) {
                    return 1;
                }
                if (x == 2) {
                    return 0;
                }
                if (x < 5) {
                    return 3;
                }
                return 2;
            }
        }
    }

    private long integer(long lo, long hi) {
        switch (pick()) {
            case -1:
                return lo;
            case 1:
                return hi;
            case 0:
                return 0;
            case 3:
                return lo < 0 ? r.nextInt(5) - 2 : r.nextInt(4);
            default: {
                long span = hi - lo + 1;
                if (span <= 0) { // full int64 range
                    return r.nextLong();
                }
                return lo + Math.floorMod(r.nextLong(), span);
            }
        }
    }

    private JsonNode scalar(String type) {
        switch (type) {
            case "bool":
                return BooleanNode.valueOf(profile == Profile.MAX || (profile != Profile.MINIMAL && r.nextBoolean()));
            case "int8":
                return IntNode.valueOf((int) integer(Byte.MIN_VALUE, Byte.MAX_VALUE));
            case "int16":
                return IntNode.valueOf((int) integer(Short.MIN_VALUE, Short.MAX_VALUE));
            case "uint16":
                return IntNode.valueOf((int) integer(0, 65535));
            case "int32":
                return IntNode.valueOf((int) integer(Integer.MIN_VALUE, Integer.MAX_VALUE));
            case "uint32":
                return LongNode.valueOf(integer(0, 4294967295L));
            case "int64": {
                int p = pick();
                if (p == 2 && r.nextInt(3) == 0) {
                    // just past 2^53, where a double stops holding every integer
                    return LongNode.valueOf((r.nextBoolean() ? 1 : -1) * ((1L << 53) + 1 + r.nextInt(1000)));
                }
                return LongNode.valueOf(p == -1 ? Long.MIN_VALUE : p == 1 ? Long.MAX_VALUE : p == 0 ? 0
                        : p == 3 ? r.nextInt(5) - 2 : r.nextLong());
            }
            case "float64":
                return DoubleNode.valueOf(float64());
            case "string":
                return TextNode.valueOf(string());
            case "bytes":
                return BinaryNode.valueOf(bytes());
            case "records":
                return BinaryNode.valueOf(records());
            case "uuid":
                return TextNode.valueOf(uuid());
            default:
                throw new IllegalStateException("unknown type " + type);
        }
    }

    private double float64() {
        switch (pick()) {
            case -1:
                return r.nextBoolean() ? Double.NEGATIVE_INFINITY : -Double.MAX_VALUE;
            case 1:
                return r.nextBoolean() ? Double.POSITIVE_INFINITY : Double.MAX_VALUE;
            case 0:
                return 0.0;
            case 3:
                return r.nextInt(10) / 4.0;
            default: {
                double[] special = {Double.NaN, -0.0, Double.MIN_VALUE, Double.MIN_NORMAL, 0.1, 1e21, -1e-7,
                        9007199254740993.0};
                int x = r.nextInt(special.length + 4);
                return x < special.length ? special[x] : (r.nextDouble() - 0.5) * Math.pow(10, r.nextInt(40) - 20);
            }
        }
    }

    private static final String[] WORDS = {
        "topic", "kafka", "a", "é", "日本語", "Ünïcödé", "emoji 😀", "ß", "кафка", "\"quoted\"", "back\\slash",
        "tab\there", "line\nbreak", "nul\u0000byte", "\u2028", "<>&", "ǅ", "🇫🇷", " ", "𝄞"
    };

    private String string() {
        int p = pick();
        if (p == 0) {
            return "";
        }
        if (p == 3) {
            return "s" + r.nextInt(100);
        }
        StringBuilder b = new StringBuilder();
        if (p == 1 && takeLong()) {
            // past 127 UTF-8 bytes: a two-byte varint length in flexible versions
            while (b.toString().getBytes(StandardCharsets.UTF_8).length < 128 + r.nextInt(40)) {
                b.append(WORDS[r.nextInt(WORDS.length)]).append('-');
            }
            return b.toString();
        }
        if (p == -1 || p == 1) {
            return WORDS[3 + r.nextInt(WORDS.length - 3)];
        }
        int n = 1 + r.nextInt(3);
        for (int i = 0; i < n; i++) {
            if (r.nextBoolean()) {
                b.append(WORDS[r.nextInt(WORDS.length)]);
            } else {
                for (int j = 0, k = 1 + r.nextInt(12); j < k; j++) {
                    b.append((char) ('a' + r.nextInt(26)));
                }
            }
        }
        return b.toString();
    }

    private byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    private byte[] bytes() {
        switch (pick()) {
            case 0:
                return new byte[0];
            case 1:
                return randomBytes(takeLong() ? 128 + r.nextInt(16) : 2);
            case -1:
                return randomBytes(1);
            case 3:
                return randomBytes(r.nextInt(3));
            default:
                return randomBytes(r.nextInt(17));
        }
    }

    private byte[] records() {
        switch (pick()) {
            case 0:
                return new byte[0];
            case 3:
                return randomBytes(1 + r.nextInt(4));
            case 1:
                return Batch.random(r, 3 + r.nextInt(3));
            default:
                return r.nextBoolean() ? Batch.random(r, 1 + r.nextInt(2)) : randomBytes(1 + r.nextInt(40));
        }
    }

    private String uuid() {
        byte[] b = new byte[16];
        switch (pick()) {
            case 0:
                break;
            case 1:
                java.util.Arrays.fill(b, (byte) 0xff);
                break;
            default:
                r.nextBytes(b);
        }
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    // ---- unknown tagged fields -------------------------------------------------------------

    /**
     * Adds raw tagged fields whose tags the struct does not define, in ascending order, to the
     * message and (with probability {@code nestedChance}) to each nested struct.
     * Only for flexible versions.
     */
    static void addUnknownTags(Spec.Message m, Message msg, short v, Random r, double nestedChance) {
        walk(m, m.fields, msg, v, r, 1.0, nestedChance);
    }

    private static final int[] TAG_CANDIDATES = {
        0, 1, 2, 3, 5, 7, 9, 15, 31, 63, 100, 126, 127, 128, 129, 255, 1000, 16383, 16384, 65535, 1 << 21,
        // Kafka's writer passes Integer.MAX_VALUE as the end sentinel, so that tag cannot be written
        Integer.MAX_VALUE - 1
    };

    private static void walk(Spec.Message m, List<Spec.Field> fields, Message obj, short v, Random r,
                             double chance, double nestedChance) {
        if (r.nextDouble() < chance) {
            TreeSet<Integer> defined = new TreeSet<>();
            for (Spec.Field f : fields) {
                if (f.tag != null) {
                    defined.add(f.tag);
                }
            }
            TreeSet<Integer> tags = new TreeSet<>();
            int want = 1 + r.nextInt(3);
            for (int tries = 0; tags.size() < want && tries < 50; tries++) {
                int t = TAG_CANDIDATES[r.nextInt(TAG_CANDIDATES.length)];
                if (!defined.contains(t)) {
                    tags.add(t);
                }
            }
            List<RawTaggedField> raw = new ArrayList<>();
            for (int t : tags) {
                int len = r.nextInt(8) == 0 ? 128 + r.nextInt(8) : r.nextInt(6);
                byte[] data = new byte[len];
                r.nextBytes(data);
                raw.add(new RawTaggedField(t, data));
            }
            obj.unknownTaggedFields().addAll(raw);
        }
        for (Spec.Field f : fields) {
            if (!f.versions.contains(v) || Spec.isPrimitive(f.elementType())) {
                continue;
            }
            Object val = Kafka.get(obj, f.key());
            if (val == null) {
                continue;
            }
            if (f.isArray()) {
                for (Object item : (Collection<?>) val) {
                    walk(m, m.structFields(f), (Message) item, v, r, nestedChance, nestedChance);
                }
            } else {
                walk(m, m.structFields(f), (Message) val, v, r, nestedChance, nestedChance);
            }
        }
    }

    /** A real v2 record batch (uncompressed), so records fields also carry realistic bytes. */
    static final class Batch {
        private Batch() {
        }

        static byte[] random(Random r, int count) {
            ByteBuffer recs = ByteBuffer.allocate(64 * 1024);
            long baseTs = 1_700_000_000_000L + r.nextInt(1_000_000);
            for (int i = 0; i < count; i++) {
                ByteBuffer rec = ByteBuffer.allocate(4096);
                rec.put((byte) 0); // attributes
                varlong(rec, r.nextInt(1000)); // timestamp delta
                varlong(rec, i); // offset delta
                byte[] key = r.nextInt(3) == 0 ? null : ("key-" + r.nextInt(100)).getBytes(StandardCharsets.UTF_8);
                bytesField(rec, key);
                byte[] value = new byte[r.nextInt(30)];
                r.nextBytes(value);
                bytesField(rec, r.nextInt(5) == 0 ? null : value);
                int headers = r.nextInt(3);
                varlong(rec, headers);
                for (int h = 0; h < headers; h++) {
                    byte[] hk = ("h" + h).getBytes(StandardCharsets.UTF_8);
                    varlong(rec, hk.length);
                    rec.put(hk);
                    bytesField(rec, r.nextBoolean() ? null : new byte[] {(byte) r.nextInt(256)});
                }
                rec.flip();
                varlong(recs, rec.remaining());
                recs.put(rec);
            }
            recs.flip();
            int afterCrcLen = 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4 + recs.remaining();
            ByteBuffer b = ByteBuffer.allocate(8 + 4 + 4 + 1 + 4 + afterCrcLen);
            b.putLong(r.nextInt(1_000_000)); // base offset
            b.putInt(4 + 1 + 4 + afterCrcLen); // batch length
            b.putInt(r.nextInt(100)); // partition leader epoch
            b.put((byte) 2); // magic
            int crcPos = b.position();
            b.putInt(0);
            int start = b.position();
            b.putShort((short) 0); // attributes: no compression, create time
            b.putInt(count - 1); // last offset delta
            b.putLong(baseTs);
            b.putLong(baseTs + 999);
            b.putLong(-1L); // producer id
            b.putShort((short) -1); // producer epoch
            b.putInt(-1); // base sequence
            b.putInt(count);
            b.put(recs);
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(b.array(), start, b.position() - start);
            b.putInt(crcPos, (int) crc.getValue());
            return b.array();
        }

        private static void bytesField(ByteBuffer b, byte[] v) {
            if (v == null) {
                varlong(b, -1);
            } else {
                varlong(b, v.length);
                b.put(v);
            }
        }

        private static void varlong(ByteBuffer b, long v) {
            long z = (v << 1) ^ (v >> 63);
            while ((z & ~0x7FL) != 0) {
                b.put((byte) ((z & 0x7F) | 0x80));
                z >>>= 7;
            }
            b.put((byte) z);
        }
    }
}
