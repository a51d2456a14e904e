package io.kwire.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Iterator;
import java.util.TreeSet;

/**
 * Semantic comparison of two JSON trees: object key order does not matter; integral numbers
 * are compared exactly; other numbers as doubles (bit for bit, so -0.0 differs from 0.0,
 * except that a JSON "-0" read as an integer has lost its sign and matches either zero).
 */
final class JsonDiff {
    private JsonDiff() {
    }

    /** Null when equal, else the path of the first difference and what differs. */
    static String diff(String path, JsonNode want, JsonNode got) {
        if (want == null || want.isMissingNode()) {
            return path + ": unexpected " + abbreviate(got);
        }
        if (got == null || got.isMissingNode()) {
            return path + ": missing, want " + abbreviate(want);
        }
        if (want.isNumber() && got.isNumber()) {
            if (want.isIntegralNumber() && got.isIntegralNumber()) {
                return want.bigIntegerValue().equals(got.bigIntegerValue()) ? null
                        : path + ": want " + want + ", got " + got;
            }
            double a = want.doubleValue();
            double b = got.doubleValue();
            if (Double.compare(a, b) == 0 || (a == 0 && b == 0 && (want.isIntegralNumber() || got.isIntegralNumber()))) {
                return null;
            }
            return path + ": want " + want + ", got " + got;
        }
        if (want.getNodeType() != got.getNodeType()) {
            return path + ": want " + abbreviate(want) + ", got " + abbreviate(got);
        }
        if (want.isObject()) {
            TreeSet<String> keys = new TreeSet<>();
            want.fieldNames().forEachRemaining(keys::add);
            got.fieldNames().forEachRemaining(keys::add);
            for (String k : keys) {
                String d = diff(path + "." + k, want.get(k), got.get(k));
                if (d != null) {
                    return d;
                }
            }
            return null;
        }
        if (want.isArray()) {
            if (want.size() != got.size()) {
                return path + ": want " + want.size() + " elements, got " + got.size();
            }
            Iterator<JsonNode> a = want.elements();
            Iterator<JsonNode> b = got.elements();
            for (int i = 0; a.hasNext(); i++) {
                String d = diff(path + "[" + i + "]", a.next(), b.next());
                if (d != null) {
                    return d;
                }
            }
            return null;
        }
        return want.equals(got) ? null : path + ": want " + abbreviate(want) + ", got " + abbreviate(got);
    }

    /**
     * Renames key {@code old} to {@code neu} in the objects at {@code path} ("" for the root,
     * "topics[].partitions[]" through arrays), unless {@code neu} is already there.
     */
    static void rename(JsonNode node, String path, String old, String neu) {
        if (!(node instanceof ObjectNode)) {
            return;
        }
        ObjectNode obj = (ObjectNode) node;
        if (path.isEmpty()) {
            if (obj.has(old) && !obj.has(neu)) {
                obj.set(neu, obj.remove(old));
            }
            return;
        }
        int dot = path.indexOf('.');
        String step = dot < 0 ? path : path.substring(0, dot);
        String rest = dot < 0 ? "" : path.substring(dot + 1);
        if (step.endsWith("[]")) {
            JsonNode arr = obj.get(step.substring(0, step.length() - 2));
            if (arr != null && arr.isArray()) {
                for (JsonNode e : arr) {
                    rename(e, rest, old, neu);
                }
            }
            return;
        }
        rename(obj.get(step), rest, old, neu);
    }

    private static String abbreviate(JsonNode n) {
        if (n == null) {
            return "nothing";
        }
        String s = n.toString();
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }
}
