package io.kwire.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.types.RawTaggedField;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;

/**
 * Turns the output of Kafka's JSON converter into kwire's JSON form (codec/JSON.md):
 * <ul>
 * <li>every field of the version is present; the converter leaves out tagged fields that
 * hold their default, so those are taken from the message object's accessor;</li>
 * <li>int64 as a decimal string; float64 NaN and infinities as strings;</li>
 * <li>bytes as standard base64; records as base64 of the raw record bytes (the converter
 * writes an empty binary node for records, so they come from the message object);</li>
 * <li>unknown tagged fields (which the converter drops) under "_unknownTaggedFields".</li>
 * </ul>
 * Where both the converter and the accessor give a value, they must agree, or this throws.
 */
final class Adapt {
    private Adapt() {
    }

    static final String UNKNOWN_KEY = "_unknownTaggedFields";
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    static ObjectNode message(Spec.Message m, Message msg, short version) {
        return struct(m, m.fields, Kafka.toJson(msg, version), msg, version, "$");
    }

    private static ObjectNode struct(Spec.Message m, List<Spec.Field> fields, JsonNode conv, Message obj,
                                     short v, String path) {
        if (conv != null && !conv.isObject()) {
            throw new IllegalStateException(path + ": converter wrote " + conv.getNodeType() + " for a struct");
        }
        ObjectNode out = F.objectNode();
        for (Spec.Field f : fields) {
            if (!f.versions.contains(v)) {
                if (conv != null && conv.has(f.key())) {
                    throw new IllegalStateException(path + "." + f.key() + ": converter wrote a field absent from v" + v);
                }
                continue;
            }
            JsonNode c = conv == null ? null : conv.get(f.key());
            if (c == null && conv != null && !f.tagged(v)) {
                throw new IllegalStateException(path + "." + f.key() + ": converter left out a non-tagged field");
            }
            out.set(f.key(), value(m, f, c, Kafka.get(obj, f.key()), v, path + "." + f.key()));
        }
        if (conv != null) {
            Iterator<String> names = conv.fieldNames();
            while (names.hasNext()) {
                String n = names.next();
                if (!out.has(n)) {
                    throw new IllegalStateException(path + "." + n + ": converter wrote a field the descriptor lacks");
                }
            }
        }
        List<RawTaggedField> unknown = obj.unknownTaggedFields();
        if (unknown != null && !unknown.isEmpty()) {
            ArrayNode arr = out.putArray(UNKNOWN_KEY);
            for (RawTaggedField t : unknown) {
                ObjectNode o = arr.addObject();
                o.put("tag", Integer.toUnsignedLong(t.tag()));
                o.put("data", Base64.getEncoder().encodeToString(t.data()));
            }
        }
        return out;
    }

    private static JsonNode value(Spec.Message m, Spec.Field f, JsonNode conv, Object java, short v, String path) {
        if (java == null) {
            if (conv != null && !conv.isNull()) {
                throw new IllegalStateException(path + ": accessor null, converter " + conv);
            }
            if (!f.nullable(v)) {
                throw new IllegalStateException(path + ": null in a non-nullable field");
            }
            return NullNode.instance;
        }
        if (f.isArray()) {
            if (conv != null && !conv.isArray()) {
                throw new IllegalStateException(path + ": converter wrote " + conv + " for an array");
            }
            Collection<?> items = (Collection<?>) java;
            if (conv != null && conv.size() != items.size()) {
                throw new IllegalStateException(path + ": converter wrote " + conv.size() + " elements, accessor has "
                        + items.size());
            }
            ArrayNode out = F.arrayNode();
            int i = 0;
            String et = f.elementType();
            for (Object item : items) {
                JsonNode c = conv == null ? null : conv.get(i);
                String p = path + "[" + i + "]";
                if (Spec.isPrimitive(et)) {
                    out.add(scalar(et, c, item, p));
                } else {
                    out.add(struct(m, m.structFields(f), c, (Message) item, v, p));
                }
                i++;
            }
            return out;
        }
        if (!Spec.isPrimitive(f.type)) {
            return struct(m, m.structFields(f), conv, (Message) java, v, path);
        }
        return scalar(f.type, conv, java, path);
    }

    private static JsonNode scalar(String type, JsonNode conv, Object java, String path) {
        if (java == null) {
            throw new IllegalStateException(path + ": null element");
        }
        JsonNode fromJava = fromJava(type, java);
        if (conv == null || type.equals("records")) {
            return fromJava;
        }
        JsonNode fromConv = fromConverter(type, conv, path);
        if (!fromConv.equals(fromJava)) {
            throw new IllegalStateException(path + ": converter wrote " + fromConv + ", accessor holds " + fromJava);
        }
        return fromConv;
    }

    private static JsonNode fromJava(String type, Object java) {
        switch (type) {
            case "bool":
                return BooleanNode.valueOf((Boolean) java);
            case "int8":
            case "int16":
            case "uint16":
            case "int32":
            case "uint32":
                return LongNode.valueOf(((Number) java).longValue());
            case "int64":
                return TextNode.valueOf(Long.toString((Long) java));
            case "float64":
                return float64((Double) java);
            case "string":
                return TextNode.valueOf((String) java);
            case "bytes":
                return base64(java instanceof ByteBuffer ? bufferBytes((ByteBuffer) java) : (byte[]) java);
            case "records":
                return base64(Kafka.recordsBytes(java));
            case "uuid":
                return TextNode.valueOf(((Uuid) java).toString());
            default:
                throw new IllegalStateException("unknown type " + type);
        }
    }

    private static JsonNode fromConverter(String type, JsonNode conv, String path) {
        switch (type) {
            case "bool":
                if (!conv.isBoolean()) {
                    break;
                }
                return conv;
            case "int8":
            case "int16":
            case "uint16":
            case "int32":
            case "uint32":
                if (!conv.isIntegralNumber()) {
                    break;
                }
                return LongNode.valueOf(conv.longValue());
            case "int64":
                if (!conv.isIntegralNumber()) {
                    break;
                }
                return TextNode.valueOf(Long.toString(conv.longValue()));
            case "float64":
                if (!conv.isNumber()) {
                    break;
                }
                return float64(conv.doubleValue());
            case "string":
            case "uuid":
                if (!conv.isTextual()) {
                    break;
                }
                return conv;
            case "bytes":
                try {
                    return base64(conv.binaryValue());
                } catch (IOException e) {
                    throw new UncheckedIOException(path + ": bytes", e);
                }
            default:
                break;
        }
        throw new IllegalStateException(path + ": converter wrote " + conv.getNodeType() + " for " + type);
    }

    static JsonNode float64(double d) {
        if (Double.isNaN(d)) {
            return TextNode.valueOf("NaN");
        }
        if (Double.isInfinite(d)) {
            return TextNode.valueOf(d > 0 ? "Infinity" : "-Infinity");
        }
        return DoubleNode.valueOf(d);
    }

    static TextNode base64(byte[] b) {
        return TextNode.valueOf(Base64.getEncoder().encodeToString(b));
    }

    static byte[] bufferBytes(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }
}
