package io.kwire.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Reflection over kafka-clients' generated message classes, written against what both
 * pinned releases share (the records classes moved package between them, so they are only
 * reached by reflection).
 */
final class Kafka {
    private Kafka() {
    }

    static final String PKG = "org.apache.kafka.common.message.";

    private static final Map<String, Method> METHODS = new HashMap<>();

    static Class<?> dataClass(Spec.Message m) {
        try {
            return Class.forName(PKG + m.className());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("kafka-clients has no class for " + m.name, e);
        }
    }

    static Message newInstance(Spec.Message m) {
        try {
            return (Message) dataClass(m).getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(m.name + ": cannot instantiate", e);
        }
    }

    private static Method staticMethod(String cls, String name, Class<?>... params) {
        String key = cls + "#" + name + "#" + params.length;
        synchronized (METHODS) {
            Method mt = METHODS.get(key);
            if (mt == null) {
                try {
                    mt = Class.forName(cls).getMethod(name, params);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("no " + cls + "." + name, e);
                }
                METHODS.put(key, mt);
            }
            return mt;
        }
    }

    private static Object invoke(Method mt, Object target, Object... args) {
        try {
            return mt.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new IllegalStateException(c);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Kafka's JSON converter: JSON to message object at a version. */
    static Message fromJson(Spec.Message m, JsonNode node, short version) {
        Method read = staticMethod(PKG + m.className() + "JsonConverter", "read", JsonNode.class, short.class);
        return (Message) invoke(read, null, node, version);
    }

    /** Kafka's JSON converter: message object (top-level or nested struct) to JSON at a version. */
    static JsonNode toJson(Message msg, short version) {
        Class<?> c = msg.getClass();
        String conv;
        if (c.getEnclosingClass() != null) {
            conv = c.getEnclosingClass().getName() + "JsonConverter$" + c.getSimpleName() + "JsonConverter";
        } else {
            conv = c.getName() + "JsonConverter";
        }
        Method write = staticMethod(conv, "write", c, short.class, boolean.class);
        return (JsonNode) invoke(write, null, msg, version, true);
    }

    /** Kafka's own writer: the serialized body at a version. */
    static byte[] serialize(Message msg, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = msg.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        msg.write(new ByteBufferAccessor(buf), cache, version);
        if (buf.hasRemaining()) {
            throw new IllegalStateException(msg.getClass().getSimpleName() + ": size() said " + size
                    + " bytes but write() left " + buf.remaining() + " unwritten");
        }
        return buf.array();
    }

    /** Kafka's own reader: parses exactly one body at a version; trailing bytes are an error. */
    static Message parse(Spec.Message m, byte[] body, short version) {
        Message msg = newInstance(m);
        ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(body));
        msg.read(acc, version);
        if (acc.remaining() != 0) {
            throw new IllegalArgumentException(acc.remaining() + " of " + body.length + " bytes left unread");
        }
        return msg;
    }

    /** The generated accessor of a field: {@code obj.<key>()}. */
    static Object get(Object obj, String key) {
        Class<?> c = obj.getClass();
        String k = c.getName() + "#" + key;
        Method mt;
        synchronized (METHODS) {
            mt = METHODS.get(k);
            if (mt == null) {
                try {
                    mt = c.getMethod(key);
                } catch (NoSuchMethodException e) {
                    throw new IllegalStateException(c.getName() + " has no accessor " + key + "()", e);
                }
                METHODS.put(k, mt);
            }
        }
        return invoke(mt, obj);
    }

    /** The raw bytes of a records field (MemoryRecords in both releases, found by reflection). */
    static byte[] recordsBytes(Object records) {
        Method mt;
        try {
            mt = records.getClass().getMethod("buffer");
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(records.getClass().getName() + " has no buffer()", e);
        }
        ByteBuffer b = ((ByteBuffer) invoke(mt, records)).duplicate();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
