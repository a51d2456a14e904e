package com.github.kwire.reference.errors;

import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Properties;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

/**
 * Writes every entry of kafka-clients' {@link Errors} enum, in code order, as one JSON
 * document: the release it came from and, per error, its code, enum name and whether its
 * exception is a {@link RetriableException}. The output is deterministic (one error per
 * line, LF line endings) so it can be committed and diffed.
 *
 * <p>Usage: {@code DumpErrors <output.json>}; with no argument the JSON goes to stdout.
 */
public final class DumpErrors {
    private DumpErrors() {}

    public static void main(String[] args) throws IOException {
        String expected = System.getProperty("kafka.version");
        String actual = kafkaClientsVersion();
        if (expected != null && !expected.equals(actual)) {
            throw new IllegalStateException(
                "kafka.version is " + expected + " but kafka-clients on the class path is " + actual);
        }

        Errors[] errors = Errors.values();
        Arrays.sort(errors, Comparator.comparingInt(Errors::code));

        StringBuilder out = new StringBuilder();
        out.append("{\n");
        out.append("  \"source\": \"kafka-clients ").append(actual).append("\",\n");
        out.append("  \"errors\": [\n");
        for (int i = 0; i < errors.length; i++) {
            Errors e = errors[i];
            if (i > 0 && errors[i - 1].code() == e.code()) {
                throw new IllegalStateException("duplicate code " + e.code());
            }
            ApiException ex = e.exception();
            boolean retriable = ex instanceof RetriableException;
            out.append("    {\"code\": ").append(e.code())
               .append(", \"name\": \"").append(e.name())
               .append("\", \"retriable\": ").append(retriable)
               .append('}');
            out.append(i + 1 < errors.length ? ",\n" : "\n");
        }
        out.append("  ]\n");
        out.append("}\n");

        if (args.length == 0) {
            System.out.print(out);
            return;
        }
        Path path = Path.of(args[0]);
        Path dir = path.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        try (Writer w = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
            w.write(out.toString());
        }
    }

    /** The release of the kafka-clients jar that holds {@link Errors}, from its version resource. */
    private static String kafkaClientsVersion() throws IOException {
        try (InputStream in = Errors.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            if (in == null) {
                throw new IllegalStateException("kafka/kafka-version.properties not found on the class path");
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version");
            if (v == null || v.isEmpty()) {
                throw new IllegalStateException("kafka/kafka-version.properties has no version");
            }
            return v;
        }
    }
}
