/*
 * The C example: decodes the sample frames in examples/data with libkwire and prints every
 * record in the format all the language examples share (examples/README.md).
 *
 * Build (what run.sh does, from the repository root after `make c`):
 *   PKG_CONFIG_PATH=build/c/lib/pkgconfig \
 *     cc -o example examples/c/main.c $(pkg-config --cflags --libs kwire-static)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwire.h"
#include "kwire_json.h"

static void die(const char *what, int32_t status) {
    const uint8_t *text;
    int32_t n;
    kw_last_error(&text, &n);
    fprintf(stderr, "example: %s: status %d: %.*s\n", what, status, (int)n, (const char *)text);
    exit(1);
}

static uint8_t *read_file(const char *dir, const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    size_t cap = 4096, n = 0, r;
    uint8_t *b = malloc(cap);
    while ((r = fread(b + n, 1, cap - n, f)) > 0)
        if ((n += r) == cap) b = realloc(b, cap *= 2);
    fclose(f);
    *len = n;
    return b;
}

static int32_t rd32(const uint8_t *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static int64_t rd64(const uint8_t *p) {
    return (int64_t)((uint64_t)(uint32_t)rd32(p) | (uint64_t)(uint32_t)rd32(p + 4) << 32);
}

/* utf8_len: the length of the valid UTF-8 sequence at s[0:n), or 0 when invalid. */
static size_t utf8_len(const uint8_t *s, size_t n) {
    uint32_t c = s[0];
    size_t len;
    uint32_t min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) len = 2, c &= 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) len = 3, c &= 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) len = 4, c &= 0x07, min = 0x10000;
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    return len;
}

/* quote prints bytes as a JSON string the way Go's encoding/json writes one (HTML
 * characters and U+2028/U+2029 escaped, invalid UTF-8 as \ufffd), or null (len -1). */
static void quote(const uint8_t *s, int32_t len) {
    static const char hex[] = "0123456789abcdef";
    if (len < 0) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (size_t i = 0; i < (size_t)len;) {
        uint8_t c = s[i];
        if (c < 0x80) {
            if (c == '"' || c == '\\') printf("\\%c", c);
            else if (c == '\n') fputs("\\n", stdout);
            else if (c == '\r') fputs("\\r", stdout);
            else if (c == '\t') fputs("\\t", stdout);
            else if (c == '\b') fputs("\\b", stdout);
            else if (c == '\f') fputs("\\f", stdout);
            else if (c < 0x20 || c == '<' || c == '>' || c == '&') printf("\\u00%c%c", hex[c >> 4], hex[c & 15]);
            else putchar(c);
            i++;
            continue;
        }
        size_t n = utf8_len(s + i, (size_t)len - i);
        if (n == 0) {
            fputs("\\ufffd", stdout);
            i++;
        } else if (n == 3 && s[i] == 0xE2 && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
            printf("\\u202%c", s[i + 2] == 0xA8 ? '8' : '9');
            i += 3;
        } else {
            fwrite(s + i, 1, n, stdout);
            i += n;
        }
    }
    putchar('"');
}

/* print_records decodes a records field through the record table and prints one line per
 * record (control records included, as the Go example does). */
static void print_records(const char *topic, int32_t partition, const kwj_value *records) {
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    uint8_t *raw;
    size_t rawn;
    if (kwj_bytes(records, &raw, &rawn) != 0) return; /* null: no records */
    uint8_t *t;
    int32_t tn;
    int32_t st = kw_records_decode_table(raw, (int32_t)rawn, 0, 0, &t, &tn);
    if (st != KW_OK) die("kw_records_decode_table", st);
    int32_t count = rd32(t + 8), stride = rd32(t + 12), hstride = rd32(t + 24);
    for (int32_t i = 0; i < count; i++) {
        const uint8_t *e = t + rd32(t + 16) + (size_t)i * (size_t)stride;
        int32_t comp = rd32(e + 64);
        printf("  %s/%d offset %" PRId64 " timestamp %" PRId64 " %s key ", topic, partition, rd64(e), rd64(e + 8),
               comp >= 0 && comp <= 4 ? codecs[comp] : "?");
        quote(t + rd32(e + 24), rd32(e + 28));
        fputs(" value ", stdout);
        quote(t + rd32(e + 32), rd32(e + 36));
        fputs(" headers [", stdout);
        for (int32_t h = 0; h < rd32(e + 44); h++) {
            const uint8_t *he = t + rd32(t + 28) + (size_t)(rd32(e + 40) + h) * (size_t)hstride;
            if (h > 0) putchar(' ');
            fwrite(t + rd32(he), 1, (size_t)rd32(he + 4), stdout);
            putchar('=');
            quote(t + rd32(he + 8), rd32(he + 12));
        }
        puts("]");
    }
    kw_free(t);
    free(raw);
}

static kwj_value *parse_output(uint8_t *out, int32_t n) {
    char err[128];
    kwj_value *v = kwj_parse((const char *)out, (size_t)n, err, sizeof err);
    if (!v) {
        fprintf(stderr, "example: %s\n", err);
        exit(1);
    }
    kw_free(out);
    return v;
}

/* api_name looks the api key up in the library's catalogue. */
static const char *api_name(int32_t key) {
    static char name[128];
    uint8_t *out;
    int32_t n;
    int32_t st = kw_api_catalogue(&out, &n);
    if (st != KW_OK) die("kw_api_catalogue", st);
    kwj_value *cat = parse_output(out, n);
    kwj_value *apis = kwj_get(cat, "apis");
    snprintf(name, sizeof name, "api %d", key);
    for (size_t i = 0; i < kwj_len(apis); i++) {
        int32_t k;
        if (kwj_int32(kwj_get(kwj_at(apis, i), "apiKey"), &k) == 0 && k == key)
            snprintf(name, sizeof name, "%s", kwj_str(kwj_get(kwj_at(apis, i), "name"), NULL));
    }
    kwj_free(cat);
    return name;
}

static int32_t int32_of(const kwj_value *v) {
    int32_t x = -1;
    kwj_int32(v, &x);
    return x;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "examples/data";
    size_t n;
    uint8_t *out;
    int32_t out_len, st;

    uint8_t *req = read_file(dir, "produce-request.bin", &n);
    if ((st = kw_decode_request_frame(req, (int32_t)n, &out, &out_len)) != KW_OK) die("kw_decode_request_frame", st);
    kwj_value *frame = parse_output(out, out_len);
    kwj_value *header = kwj_get(frame, "header");
    printf("request: %s v%d correlation %d client %s\n", api_name(int32_of(kwj_get(frame, "apiKey"))),
           int32_of(kwj_get(frame, "apiVersion")), int32_of(kwj_get(header, "correlationId")),
           kwj_str(kwj_get(header, "clientId"), NULL));
    kwj_value *topics = kwj_get(kwj_get(frame, "body"), "topicData");
    for (size_t t = 0; t < kwj_len(topics); t++) {
        kwj_value *parts = kwj_get(kwj_at(topics, t), "partitionData");
        for (size_t p = 0; p < kwj_len(parts); p++)
            print_records(kwj_str(kwj_get(kwj_at(topics, t), "name"), NULL), int32_of(kwj_get(kwj_at(parts, p), "index")),
                          kwj_get(kwj_at(parts, p), "records"));
    }
    kwj_free(frame);
    free(req);

    uint8_t *resp = read_file(dir, "fetch-response.bin", &n);
    if ((st = kw_decode_response_frame(resp, (int32_t)n, 1, 12, &out, &out_len)) != KW_OK) die("kw_decode_response_frame", st);
    frame = parse_output(out, out_len);
    printf("response: Fetch v12 correlation %d\n", int32_of(kwj_get(kwj_get(frame, "header"), "correlationId")));
    topics = kwj_get(kwj_get(frame, "body"), "responses");
    for (size_t t = 0; t < kwj_len(topics); t++) {
        kwj_value *parts = kwj_get(kwj_at(topics, t), "partitions");
        for (size_t p = 0; p < kwj_len(parts); p++)
            print_records(kwj_str(kwj_get(kwj_at(topics, t), "topic"), NULL), int32_of(kwj_get(kwj_at(parts, p), "partitionIndex")),
                          kwj_get(kwj_at(parts, p), "records"));
    }
    kwj_free(frame);
    free(resp);
    return 0;
}
