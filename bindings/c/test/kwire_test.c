/*
 * kwire_test.c — the C package's test suite: what a C program that links libkwire through
 * pkg-config does, checked against the public API and Kafka's conformance vectors.
 *
 *   usage: kwire_test <repository root> static|shared
 *
 * The second argument is the linkage the program was built with (kwire-static.pc or
 * kwire.pc); the suite checks the process really runs that way. Groups:
 *
 *   linkage     libkwire.so is mapped in the process exactly when linked dynamically
 *   version     kw_abi_version against the header's major/minor rule
 *   catalogue   the catalogue parses, lists Produce/Fetch/ApiVersions, messages sorted
 *   headers     kw_header_versions with Kafka's two special cases, and its errors
 *   frames      the sample frames of examples/data: decode, re-encode byte for byte,
 *               peek (whole and partial frame), records of each partition
 *   errors      statuses, kw_last_error and kw_last_error_json, kw_free/kw_alloc misuse
 *   interop     a request body followed by extra bytes (librdkafka's MetadataRequest v13)
 *               decodes, shows _trailingBytes, re-encodes; responses stay strict
 *   int64       int64 values at the edges of their range, through JSON, exactly
 *   records     kw_records_encode with every codec, read back through the table and JSON
 *   vectors     every Kafka-written vector of conformance/vectors/kafka-clients-*.jsonl:
 *               encode (json -> bytes), decode (bytes -> JSON, compared semantically with
 *               the vector's json, renames applied) and JSON round trip (bytes -> JSON ->
 *               bytes). A version that kwire's catalogue declares superseded for that
 *               release, and that the release's manifest marks unstable, is excused when it
 *               fails, and counted apart.
 *   framerecords every record vector inside Fetch and Produce frames through the ABI 1.1
 *               calls (kw_decode_*_frame_records, kw_encode_request_frame_records), against
 *               the record table of the same bytes, and every Produce/Fetch vector framed;
 *               both as layout 2 and as layout 3 (KW_RECORDS_INPUT_SPANS, ABI 1.2: spans
 *               of uncompressed records into the frame, resolved through KW_REC_SOURCE);
 *               their errors; and as layout 4 (KW_RECORDS_COLUMNS, ABI 1.4: columns and a
 *               batch table), read through kwire.h's offsets and held to layouts 2 and 3
 *   hostgzip    ABI 1.3, a host with its own zlib: every record vector in a Fetch frame,
 *               and the gzip ones with a byte flipped all through, decoded with
 *               KW_RECORDS_HOST_GZIP, the listed batches gunzipped here and handed to
 *               kw_decode_frame_records_inflated (all, or every other one), against the
 *               library alone: the same table bytes, or the same status and error text
 *   recvectors  every record vector of conformance/vectors/records/: the record table
 *               against the batches Kafka's reader saw, record by record
 *   newcomer    abi/testdata/frames.txt: a Produce v9 request whose partitions break
 *               Kafka's validateRecords (their records references carry "invalid" with
 *               the error code), a Fetch v12 response with a partial trailing batch, the
 *               same response decoded at v11 (kw_last_error_json's "hint" names v12), a
 *               misspelt message name ("did you mean"), kwire_constants.h
 *
 * Prints failures to stderr and, last, "N passed, N failed" on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kwire.h"
#include "kwire_constants.h"
#include "kwire_json.h"

static long passed, failed;
static long columns_compared; /* layout-4 tables held to layouts 2 and 3 (same_columns) */
static const char *root;

static void check(int ok, const char *group, const char *fmt, ...) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (failed > 200) return; /* keep stderr readable; the count stays exact */
    fprintf(stderr, "FAIL %s: ", group);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- helpers ---------------------------------------------------------------------- */

static char *read_file(const char *rel, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (n == cap) b = realloc(b, cap *= 2);
        size_t r = fread(b + n, 1, cap - n, f);
        if (r == 0) break;
        n += r;
    }
    fclose(f);
    *len = n;
    return b;
}

static const char *last_error(void) {
    static char buf[4096];
    const uint8_t *p;
    int32_t n;
    if (kw_last_error(&p, &n) != KW_OK) return "(kw_last_error failed)";
    if (n >= (int32_t)sizeof buf) n = sizeof buf - 1;
    memcpy(buf, p, (size_t)n);
    buf[n] = 0;
    return buf;
}

static kwj_value *last_error_json(void) {
    const uint8_t *p;
    int32_t n;
    if (kw_last_error_json(&p, &n) != KW_OK) return NULL;
    return kwj_parse((const char *)p, (size_t)n, NULL, 0);
}

/* A library output: bytes and length, freed with kw_free. */
typedef struct {
    uint8_t *p;
    int32_t n;
} out_buf;

static void out_free(out_buf *o) {
    if (o->p) kw_free(o->p);
    o->p = NULL;
    o->n = 0;
}

static kwj_value *parse_out(out_buf o) { return kwj_parse((const char *)o.p, (size_t)o.n, NULL, 0); }

static int32_t decode_message(const char *name, int version, const uint8_t *in, size_t n, out_buf *o) {
    return kw_decode_message(name, (int32_t)strlen(name), version, in, (int32_t)n, &o->p, &o->n);
}

static int32_t encode_message(const char *name, int version, const char *json, size_t n, out_buf *o) {
    return kw_encode_message(name, (int32_t)strlen(name), version, (const uint8_t *)json, (int32_t)n, &o->p, &o->n);
}

static int str_eq(const kwj_value *v, const char *s) {
    const char *t = kwj_str(v, NULL);
    return t && strcmp(t, s) == 0;
}

static int32_t num(const kwj_value *v) {
    int32_t x;
    return kwj_int32(v, &x) == 0 ? x : INT32_MIN;
}

static int64_t i64(const kwj_value *v) {
    int64_t x;
    return kwj_int64(v, &x) == 0 ? x : INT64_MIN;
}

static int64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return (int64_t)v;
}

static int32_t rd32(const uint8_t *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* ---- semantic JSON comparison ----------------------------------------------------- */

static int is_integer_text(const kwj_value *v) { return !strpbrk(v->str, ".eE"); }

static int numbers_equal(const kwj_value *a, const kwj_value *b) {
    if (is_integer_text(a) && is_integer_text(b)) {
        int64_t x, y;
        if (kwj_int64(a, &x) == 0 && kwj_int64(b, &y) == 0) return x == y;
        return strcmp(a->str, b->str) == 0; /* beyond int64: compare the digits */
    }
    double x = strtod(a->str, NULL), y = strtod(b->str, NULL);
    return memcmp(&x, &y, sizeof x) == 0;
}

/* json_diff returns 0 when want and got are equal (object member order ignored), else 1
 * with the JSON path of the first difference in path. */
static int json_diff(const kwj_value *w, const kwj_value *g, char *path, size_t cap) {
    size_t pl = strlen(path);
    if (w->type != g->type && !((w->type == KWJ_TRUE || w->type == KWJ_FALSE) && (g->type == KWJ_TRUE || g->type == KWJ_FALSE)))
        return 1;
    switch (w->type) {
    case KWJ_NULL:
        return 0;
    case KWJ_TRUE:
    case KWJ_FALSE:
        return w->type != g->type;
    case KWJ_NUMBER:
        return !numbers_equal(w, g);
    case KWJ_STRING:
        return w->len != g->len || memcmp(w->str, g->str, w->len) != 0;
    case KWJ_ARRAY:
        for (size_t i = 0; i < w->count && i < g->count; i++) {
            snprintf(path + pl, cap - pl, "[%zu]", i);
            if (json_diff(w->items[i], g->items[i], path, cap)) return 1;
        }
        path[pl] = 0;
        return w->count != g->count;
    case KWJ_OBJECT:
        for (size_t i = 0; i < w->count; i++) {
            snprintf(path + pl, cap - pl, ".%s", w->keys[i]);
            kwj_value *gv = kwj_get(g, w->keys[i]);
            if (!gv || json_diff(w->items[i], gv, path, cap)) return 1;
        }
        for (size_t i = 0; i < g->count; i++)
            if (!kwj_get(w, g->keys[i])) {
                snprintf(path + pl, cap - pl, ".%s (not in the vector)", g->keys[i]);
                return 1;
            }
        path[pl] = 0;
        return 0;
    }
    return 1;
}

/* apply_rename renames member `old` to `nw` in the objects at path ("topics[].partitions[]":
 * every element of the array under topics, then of the array under partitions). */
static void apply_rename(kwj_value *v, const char *path, const char *old, const char *nw) {
    if (!v || v->type != KWJ_OBJECT) return;
    if (*path == 0) {
        if (kwj_get(v, nw)) return;
        for (size_t i = 0; i < v->count; i++)
            if (strcmp(v->keys[i], old) == 0) {
                free(v->keys[i]);
                v->keys[i] = strdup(nw);
                v->key_lens[i] = strlen(nw);
            }
        return;
    }
    const char *dot = strchr(path, '.');
    size_t sl = dot ? (size_t)(dot - path) : strlen(path);
    const char *rest = dot ? dot + 1 : "";
    char step[256];
    if (sl >= sizeof step) return;
    memcpy(step, path, sl);
    step[sl] = 0;
    if (sl > 2 && strcmp(step + sl - 2, "[]") == 0) {
        step[sl - 2] = 0;
        kwj_value *arr = kwj_get(v, step);
        for (size_t i = 0; i < kwj_len(arr); i++) apply_rename(kwj_at(arr, i), rest, old, nw);
        return;
    }
    apply_rename(kwj_get(v, step), rest, old, nw);
}

/* ---- groups ------------------------------------------------------------------------ */

static void test_linkage(const char *linkage) {
    FILE *f = fopen("/proc/self/maps", "r");
    int mapped = 0;
    char line[4096];
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "/libkwire.so")) mapped = 1;
    if (f) fclose(f);
    int want_shared = strcmp(linkage, "shared") == 0;
    check(f != NULL, "linkage", "cannot read /proc/self/maps");
    check(mapped == want_shared, "linkage", "built %s, but libkwire.so is %smapped", linkage, mapped ? "" : "not ");
}

static void test_version(void) {
    int32_t v = kw_abi_version();
    check(v >> 16 == KW_ABI_MAJOR, "version", "library major %d, header major %d", v >> 16, KW_ABI_MAJOR);
    check((v & 0xffff) >= KW_ABI_MINOR, "version", "library minor %d below the header's %d", v & 0xffff, KW_ABI_MINOR);
    /* kw_abi_version does not touch the last error. */
    out_buf o = {0};
    check(decode_message("NoSuchMessage", 0, NULL, 0, &o) == KW_ERR_UNKNOWN_API, "version", "unknown message");
    kw_abi_version();
    check(strlen(last_error()) > 0, "version", "kw_abi_version cleared the last error");
}

static kwj_value *catalogue;

static void test_catalogue(void) {
    out_buf o = {0};
    int32_t st = kw_api_catalogue(&o.p, &o.n);
    check(st == KW_OK, "catalogue", "kw_api_catalogue: %d %s", st, last_error());
    catalogue = parse_out(o);
    out_free(&o);
    check(catalogue != NULL, "catalogue", "the catalogue is not JSON");
    if (!catalogue) return;
    char want[16];
    snprintf(want, sizeof want, "%d.%d", kw_abi_version() >> 16, kw_abi_version() & 0xffff);
    check(str_eq(kwj_get(catalogue, "abiVersion"), want), "catalogue", "abiVersion is not %s", want);
    check(kwj_len(kwj_get(catalogue, "specReleases")) >= 1, "catalogue", "no specReleases");
    kwj_value *apis = kwj_get(catalogue, "apis");
    int found = 0, ordered = 1;
    for (size_t i = 0; i < kwj_len(apis); i++) {
        kwj_value *a = kwj_at(apis, i);
        if (i > 0 && num(kwj_get(a, "apiKey")) <= num(kwj_get(kwj_at(apis, i - 1), "apiKey"))) ordered = 0;
        int k = num(kwj_get(a, "apiKey"));
        if (k == 0 && str_eq(kwj_get(a, "name"), "Produce") && str_eq(kwj_get(a, "request"), "ProduceRequest")) found |= 1;
        if (k == 1 && str_eq(kwj_get(a, "response"), "FetchResponse") && num(kwj_get(a, "maxVersion")) >= 12) found |= 2;
        if (k == 18 && str_eq(kwj_get(a, "name"), "ApiVersions")) found |= 4;
    }
    check(found == 7, "catalogue", "Produce, Fetch or ApiVersions missing (found mask %d)", found);
    check(ordered && kwj_len(apis) > 50, "catalogue", "apis not in api key order, or too few (%zu)", kwj_len(apis));
    kwj_value *msgs = kwj_get(catalogue, "messages");
    int sorted = 1, headers = 0;
    for (size_t i = 0; i < kwj_len(msgs); i++) {
        const char *n = kwj_str(kwj_get(kwj_at(msgs, i), "name"), NULL);
        if (!n) sorted = 0;
        else if (i > 0 && strcmp(kwj_str(kwj_get(kwj_at(msgs, i - 1), "name"), NULL), n) >= 0) sorted = 0;
        if (n && (strcmp(n, "RequestHeader") == 0 || strcmp(n, "ResponseHeader") == 0))
            headers += str_eq(kwj_get(kwj_at(msgs, i), "kind"), "header");
    }
    check(sorted && kwj_len(msgs) > 2 * kwj_len(apis), "catalogue", "messages not sorted by name or too few");
    check(headers == 2, "catalogue", "RequestHeader/ResponseHeader not listed as headers");
}

static void test_header_versions(void) {
    struct {
        int key, ver, req, resp;
    } cases[] = {
        {0, 9, 2, 1},  /* Produce v9: flexible */
        {0, 8, 1, 0},  /* Produce v8 */
        {18, 3, 2, 0}, /* ApiVersions v3: flexible request, response header always v0 */
        {18, 0, 1, 0},
        {7, 0, 0, 0}, /* ControlledShutdown v0: request header v0 */
        {7, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t rq = -9, rs = -9;
        int32_t st = kw_header_versions(cases[i].key, cases[i].ver, &rq, &rs);
        check(st == KW_OK && rq == cases[i].req && rs == cases[i].resp, "headers",
              "api %d v%d: status %d, headers %d/%d, want %d/%d", cases[i].key, cases[i].ver, st, rq, rs, cases[i].req,
              cases[i].resp);
    }
    int32_t rq = -9;
    check(kw_header_versions(0, 9, &rq, NULL) == KW_OK && rq == 2, "headers", "NULL response out-param");
    check(kw_header_versions(9999, 0, &rq, NULL) == KW_ERR_UNKNOWN_API, "headers", "api 9999 is not unknown");
    check(kw_header_versions(0, 999, &rq, NULL) == KW_ERR_VERSION, "headers", "Produce v999 is not a version error");
}

/* records_of decodes a records field (base64 in a JSON frame) through the record table and
 * appends one line per record to out (the examples' format, without the topic). */
static int table_records(const uint8_t *in, size_t n, out_buf *table) {
    return kw_records_decode_table(in, (int32_t)n, 0, 0, &table->p, &table->n);
}

static void test_frames(void) {
    size_t rn = 0, fn = 0;
    uint8_t *req = (uint8_t *)read_file("examples/data/produce-request.bin", &rn);
    uint8_t *resp = (uint8_t *)read_file("examples/data/fetch-response.bin", &fn);
    check(req && resp, "frames", "cannot read examples/data");
    if (!req || !resp) return;

    /* Request frame: decode, check the header, re-encode byte for byte. */
    out_buf o = {0};
    int32_t st = kw_decode_request_frame(req, (int32_t)rn, &o.p, &o.n);
    check(st == KW_OK, "frames", "decode request frame: %d %s", st, last_error());
    kwj_value *fr = parse_out(o);
    check(fr && num(kwj_get(fr, "apiKey")) == 0 && num(kwj_get(fr, "apiVersion")) == 9 && num(kwj_get(fr, "headerVersion")) == 2,
          "frames", "request frame is not Produce v9 with header v2");
    kwj_value *hdr = kwj_get(fr, "header");
    check(num(kwj_get(hdr, "correlationId")) == 7 && str_eq(kwj_get(hdr, "clientId"), "kwire-example"), "frames",
          "request header: correlation id / client id");
    out_buf re = {0};
    st = kw_encode_request_frame(o.p, o.n, &re.p, &re.n);
    check(st == KW_OK && (size_t)re.n == rn && memcmp(re.p, req, rn) == 0, "frames",
          "request frame re-encoded differs (status %d, %d bytes, want %zu)", st, re.n, rn);
    out_free(&re);

    /* The records of the produce request: two, uncompressed, in the record table. */
    kwj_value *topics = kwj_get(kwj_get(fr, "body"), "topicData");
    size_t nrec = 0;
    for (size_t t = 0; t < kwj_len(topics); t++) {
        kwj_value *parts = kwj_get(kwj_at(topics, t), "partitionData");
        for (size_t p = 0; p < kwj_len(parts); p++) {
            uint8_t *raw;
            size_t rawn;
            if (kwj_bytes(kwj_get(kwj_at(parts, p), "records"), &raw, &rawn) != 0) continue;
            out_buf tb = {0};
            if (table_records(raw, rawn, &tb) == KW_OK) {
                nrec += (size_t)rd32(tb.p + 8);
                const uint8_t *e = tb.p + rd32(tb.p + 16);
                check(rd32(e + 28) == 5 && memcmp(tb.p + rd32(e + 24), "key-0", 5) == 0, "frames", "first key is not key-0");
            }
            out_free(&tb);
            free(raw);
        }
    }
    check(nrec == 2, "frames", "produce request holds %zu records, want 2", nrec);
    kwj_free(fr);
    out_free(&o);

    /* Peek: the whole frame, then only its first 30 bytes, then too few bytes. */
    kw_peek_header ph;
    memset(&ph, 0xff, sizeof ph);
    st = kw_peek_request_header(req, (int32_t)rn, &ph);
    check(st == KW_OK && ph.frame_size == (int32_t)rn - 4 && ph.api_key == 0 && ph.api_version == 9 && ph.correlation_id == 7 &&
              ph.header_version == 2 && ph.client_id_length == 13 && ph.reserved == 0 &&
              memcmp(req + ph.client_id_offset, "kwire-example", 13) == 0,
          "frames", "peek: status %d size %d api %d v%d corr %d hv %d client %d@%d", st, ph.frame_size, ph.api_key,
          ph.api_version, ph.correlation_id, ph.header_version, ph.client_id_length, ph.client_id_offset);
    kw_peek_header partial;
    st = kw_peek_request_header(req, 30, &partial);
    check(st == KW_OK && memcmp(&partial, &ph, sizeof ph) == 0, "frames", "peek of the first 30 bytes: %d %s", st, last_error());
    st = kw_peek_request_header(req, 11, &partial);
    check(st == KW_ERR_DECODE, "frames", "peek of 11 bytes: status %d, want KW_ERR_DECODE", st);

    /* Response frame: Fetch v12, four partitions, one codec each. */
    st = kw_decode_response_frame(resp, (int32_t)fn, 1, 12, &o.p, &o.n);
    check(st == KW_OK, "frames", "decode response frame: %d %s", st, last_error());
    fr = parse_out(o);
    check(num(kwj_get(kwj_get(fr, "header"), "correlationId")) == 8 && num(kwj_get(fr, "headerVersion")) == 1, "frames",
          "response header");
    st = kw_encode_response_frame(o.p, o.n, 1, 12, &re.p, &re.n);
    check(st == KW_OK && (size_t)re.n == fn && memcmp(re.p, resp, fn) == 0, "frames", "response frame re-encoded differs (%d)", st);
    out_free(&re);
    static const int codec_of[] = {KW_COMPRESSION_GZIP, KW_COMPRESSION_SNAPPY, KW_COMPRESSION_LZ4, KW_COMPRESSION_ZSTD};
    kwj_value *parts = kwj_get(kwj_at(kwj_get(kwj_get(fr, "body"), "responses"), 0), "partitions");
    check(kwj_len(parts) == 4, "frames", "fetch response has %zu partitions, want 4", kwj_len(parts));
    for (size_t p = 0; p < kwj_len(parts) && p < 4; p++) {
        uint8_t *raw;
        size_t rawn;
        int idx = num(kwj_get(kwj_at(parts, p), "partitionIndex"));
        check(kwj_bytes(kwj_get(kwj_at(parts, p), "records"), &raw, &rawn) == 0, "frames", "partition %d records", idx);
        out_buf tb = {0}, js = {0};
        st = table_records(raw, rawn, &tb);
        check(st == KW_OK && rd32(tb.p + 8) == 3, "frames", "partition %d: status %d %s", idx, st, last_error());
        if (st == KW_OK) {
            int ok = 1;
            for (int i = 0; i < rd32(tb.p + 8); i++) {
                const uint8_t *e = tb.p + rd32(tb.p + 16) + i * rd32(tb.p + 12);
                char want[64];
                int wl = snprintf(want, sizeof want, "events/%d message %d", idx, i);
                if (rd64(e) != idx * 10 + i || rd32(e + 64) != codec_of[p] || rd32(e + 36) != wl ||
                    memcmp(tb.p + rd32(e + 32), want, (size_t)wl) != 0 || rd32(e + 44) != 1)
                    ok = 0;
            }
            check(ok, "frames", "partition %d: records differ from the sample", idx);
        }
        /* The JSON form of the same records agrees with the table. */
        st = kw_records_decode_json(raw, (int32_t)rawn, 0, 0, &js.p, &js.n);
        kwj_value *rj = parse_out(js);
        kwj_value *recs = kwj_get(rj, "records");
        check(st == KW_OK && kwj_len(recs) == 3 && i64(kwj_get(kwj_at(recs, 2), "offset")) == idx * 10 + 2 &&
                  i64(kwj_get(rj, "skippedBytes")) == 0,
              "frames", "partition %d: records JSON", idx);
        kwj_free(rj);
        out_free(&js);
        out_free(&tb);
        free(raw);
    }
    kwj_free(fr);
    out_free(&o);

    /* A frame whose size prefix disagrees with its length is a decode error. */
    st = kw_decode_request_frame(req, (int32_t)rn - 1, &o.p, &o.n);
    check(st == KW_ERR_DECODE && o.p == NULL && o.n == 0, "frames", "short frame: status %d", st);
    free(req);
    free(resp);
}

static void test_errors(void) {
    out_buf o = {0};
    /* A truncated ProduceRequest: decode error naming the message, with JSON details. */
    const uint8_t trunc[] = {0xff, 0xff, 0x00};
    int32_t st = decode_message("ProduceRequest", 9, trunc, sizeof trunc, &o);
    check(st == KW_ERR_DECODE && o.p == NULL && o.n == 0, "errors", "truncated ProduceRequest: status %d", st);
    check(strstr(last_error(), "ProduceRequest") != NULL, "errors", "error text does not name the message: %s", last_error());
    kwj_value *ej = last_error_json();
    check(ej && num(kwj_get(ej, "status")) == KW_ERR_DECODE && str_eq(kwj_get(ej, "category"), "decode") &&
              str_eq(kwj_get(ej, "message"), "ProduceRequest") && num(kwj_get(ej, "version")) == 9 &&
              kwj_get(ej, "offset") != NULL,
          "errors", "kw_last_error_json of a decode error");
    kwj_free(ej);

    /* A success clears the last error. */
    const char *hb = "{\"requestApiKey\":18,\"requestApiVersion\":3,\"correlationId\":1,\"clientId\":\"c\"}";
    st = encode_message("RequestHeader", 2, hb, strlen(hb), &o);
    check(st == KW_OK && last_error()[0] == 0, "errors", "success did not clear the last error: %d", st);
    ej = last_error_json();
    check(ej && num(kwj_get(ej, "status")) == 0 && kwj_len(ej) == 1, "errors", "last error JSON after success");
    kwj_free(ej);
    out_free(&o);

    /* Strict JSON: an unknown key is KW_ERR_JSON with its path. */
    const char *bad = "{\"requestApiKey\":18,\"requestApiVersion\":3,\"correlationId\":1,\"clientId\":\"c\",\"nope\":1}";
    st = encode_message("RequestHeader", 2, bad, strlen(bad), &o);
    ej = last_error_json();
    check(st == KW_ERR_JSON && ej && str_eq(kwj_get(ej, "category"), "json") && kwj_str(kwj_get(ej, "path"), NULL) &&
              strstr(kwj_str(kwj_get(ej, "path"), NULL), "nope"),
          "errors", "unknown key: status %d, %s", st, last_error());
    kwj_free(ej);
    /* Malformed JSON, wrong type, number out of range. */
    const char *bads[] = {"{", "{\"correlationId\":\"x\"}", "{\"requestApiKey\":70000}", "[]"};
    for (size_t i = 0; i < 4; i++) {
        st = encode_message("RequestHeader", 2, bads[i], strlen(bads[i]), &o);
        check(st == KW_ERR_JSON && o.p == NULL, "errors", "bad JSON %s: status %d", bads[i], st);
    }
    /* Unknown names and versions. */
    check(encode_message("NoSuchMessage", 0, "{}", 2, &o) == KW_ERR_UNKNOWN_API, "errors", "unknown name");
    check(encode_message("ProduceRequest", 999, "{}", 2, &o) == KW_ERR_VERSION, "errors", "bad version");
    check(kw_decode_response_frame(NULL, 0, 9999, 0, &o.p, &o.n) != KW_OK, "errors", "empty frame of unknown api");
    /* Arguments: NULL with a length, negative length, NULL out-params. */
    check(kw_decode_message("ProduceRequest", 14, 9, NULL, 5, &o.p, &o.n) == KW_ERR_ARG, "errors", "NULL input with length");
    check(kw_decode_message("ProduceRequest", 14, 9, trunc, -1, &o.p, &o.n) == KW_ERR_ARG, "errors", "negative length");
    check(kw_decode_message("ProduceRequest", 14, 9, trunc, 3, NULL, &o.n) == KW_ERR_ARG, "errors", "NULL out");
    check(kw_records_encode((const uint8_t *)"{\"records\":[]}", 14, 99, &o.p, &o.n) == KW_ERR_ARG, "errors", "unknown codec");
    /* Memory: kw_alloc zeroes, kw_free checks its table. */
    uint8_t *a = kw_alloc(64);
    int zero = a != NULL;
    for (int i = 0; a && i < 64; i++) zero &= a[i] == 0;
    check(zero, "errors", "kw_alloc(64) is not 64 zero bytes");
    check(kw_free(a) == KW_OK, "errors", "kw_free of a kw_alloc buffer");
    check(kw_free(a) == KW_ERR_ARG, "errors", "double kw_free is not KW_ERR_ARG");
    uint8_t *z = kw_alloc(0);
    check(z != NULL && kw_free(z) == KW_OK, "errors", "kw_alloc(0)");
    check(kw_alloc(-1) == NULL && strlen(last_error()) > 0, "errors", "kw_alloc(-1)");
    check(kw_alloc(KW_MAX_ALLOC + 1) == NULL, "errors", "kw_alloc above KW_MAX_ALLOC");
    check(kw_free(NULL) == KW_OK, "errors", "kw_free(NULL)");
    int on_stack;
    check(kw_free(&on_stack) == KW_ERR_ARG, "errors", "kw_free of a pointer the library never gave");
}

/* out_has reports whether the output holds the text s (outputs are not NUL-terminated). */
static int out_has(out_buf o, const char *s) {
    size_t n = strlen(s);
    for (int32_t i = 0; o.p && (size_t)i + n <= (size_t)o.n; i++) {
        if (memcmp(o.p + i, s, n) == 0) return 1;
    }
    return 0;
}

/* An interop case: Kafka's broker accepts a request whose body is followed by extra bytes
 * and ignores them; librdkafka 2.16 sends an all-topics MetadataRequest v13 with 3 bytes
 * after the body. kwire accepts it, shows the bytes as "_trailingBytes" (base64) at the end
 * of the body and re-encodes the frame byte for byte. Responses stay strict. */
static void test_trailing_bytes(void) {
    /* size 25, api key 3, version 13, correlation id 9, client id "rdkafka", header tags;
     * body: topics null (all topics), allowAutoTopicCreation true,
     * includeTopicAuthorizedOperations false, tags; then 00 01 02. */
    static const uint8_t req[] = {0x00, 0x00, 0x00, 0x19, 0x00, 0x03, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x09, 0x00, 0x07, 'r',
                                  'd',  'k',  'a',  'f',  'k',  'a',  0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x02};
    /* A MetadataResponse v13 frame (empty) followed by one extra byte (size 20). */
    static const uint8_t resp[] = {0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 0x00};
    out_buf o = {0}, back = {0};
    int32_t st = kw_decode_request_frame(req, (int32_t)sizeof req, &o.p, &o.n);
    check(st == KW_OK, "interop", "MetadataRequest v13 with 3 bytes after the body: status %d (%s)", st, last_error());
    if (st == KW_OK) {
        const char *suffix = ",\"_trailingBytes\":\"AAEC\"}}";
        size_t sl = strlen(suffix);
        check((size_t)o.n > sl && memcmp(o.p + o.n - sl, suffix, sl) == 0, "interop",
              "the frame JSON does not end with %s: %.*s", suffix, (int)o.n, (const char *)o.p);
        kwj_value *f = parse_out(o);
        kwj_value *body = kwj_get(f, "body");
        check(f && num(kwj_get(f, "apiKey")) == 3 && num(kwj_get(f, "apiVersion")) == 13 &&
                  str_eq(kwj_get(kwj_get(f, "header"), "clientId"), "rdkafka") && kwj_get(body, "topics") &&
                  kwj_get(body, "topics")->type == KWJ_NULL && str_eq(kwj_get(body, "_trailingBytes"), "AAEC"),
              "interop", "decoded frame: %.*s", (int)o.n, (const char *)o.p);
        kwj_free(f);
        st = kw_encode_request_frame(o.p, o.n, &back.p, &back.n);
        check(st == KW_OK && back.n == (int32_t)sizeof req && memcmp(back.p, req, sizeof req) == 0, "interop",
              "re-encode: status %d, %d bytes (want the %d input bytes)", st, back.n, (int)sizeof req);
        out_free(&back);
    }
    out_free(&o);
    /* The body alone, through the message calls. */
    const uint8_t *body = req + 22;
    size_t bn = sizeof req - 22;
    st = decode_message("MetadataRequest", 13, body, bn, &o);
    check(st == KW_OK && out_has(o, "\"_trailingBytes\":\"AAEC\""), "interop",
          "MetadataRequest v13 body with 3 extra bytes: status %d", st);
    if (st == KW_OK) {
        st = kw_encode_message("MetadataRequest", 15, 13, o.p, o.n, &back.p, &back.n);
        check(st == KW_OK && back.n == (int32_t)bn && memcmp(back.p, body, bn) == 0, "interop", "body re-encode: %d", st);
        out_free(&back);
    }
    out_free(&o);
    /* A response frame with an extra byte is still refused, naming its offset. */
    st = kw_decode_response_frame(resp, (int32_t)sizeof resp, 3, 13, &o.p, &o.n);
    kwj_value *ej = last_error_json();
    check(st == KW_ERR_DECODE && o.p == NULL && strstr(last_error(), "trailing bytes") != NULL && ej &&
              num(kwj_get(ej, "offset")) == 23,
          "interop", "MetadataResponse v13 with an extra byte: status %d (%s)", st, last_error());
    kwj_free(ej);
    /* Without that byte the same response decodes. */
    uint8_t ok[sizeof resp - 1];
    memcpy(ok, resp, sizeof ok);
    ok[3] = 19;
    st = kw_decode_response_frame(ok, (int32_t)sizeof ok, 3, 13, &o.p, &o.n);
    check(st == KW_OK && o.p && !out_has(o, "_trailingBytes"), "interop",
          "MetadataResponse v13 without the extra byte: status %d (%s)", st, last_error());
    out_free(&o);
}

static void test_int64(void) {
    /* InitProducerIdResponse v4: producerId is an int64 kwire writes as a string. */
    static const char *const values[] = {"9223372036854775807", "-9223372036854775808", "4611686018427387905", "9007199254740993",
                                         "-1"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char js[256];
        int n = snprintf(js, sizeof js, "{\"throttleTimeMs\":0,\"errorCode\":0,\"producerId\":\"%s\",\"producerEpoch\":3}",
                         values[i]);
        out_buf enc = {0}, dec = {0};
        int32_t st = encode_message("InitProducerIdResponse", 4, js, (size_t)n, &enc);
        check(st == KW_OK, "int64", "encode producerId %s: %d %s", values[i], st, last_error());
        if (st != KW_OK) continue;
        /* The wire holds the int64 big-endian after throttle (4) and error code (2). */
        int64_t want = strtoll(values[i], NULL, 10), wire = 0;
        for (int k = 0; k < 8; k++) wire = (int64_t)((uint64_t)wire << 8 | enc.p[6 + k]);
        check(wire == want, "int64", "%s on the wire is %" PRId64, values[i], wire);
        st = decode_message("InitProducerIdResponse", 4, enc.p, (size_t)enc.n, &dec);
        kwj_value *d = parse_out(dec);
        kwj_value *pid = kwj_get(d, "producerId");
        check(st == KW_OK && pid && pid->type == KWJ_STRING && strcmp(pid->str, values[i]) == 0, "int64",
              "producerId %s decoded as %s", values[i], pid ? pid->str : "(absent)");
        kwj_free(d);
        out_free(&enc);
        out_free(&dec);
    }
    /* Input also accepts a JSON number; out of range is an error. */
    out_buf o = {0};
    const char *asnum = "{\"producerId\":9223372036854775807}";
    check(encode_message("InitProducerIdResponse", 4, asnum, strlen(asnum), &o) == KW_OK, "int64", "int64 as a number");
    out_free(&o);
    const char *over = "{\"producerId\":\"9223372036854775808\"}";
    check(encode_message("InitProducerIdResponse", 4, over, strlen(over), &o) == KW_ERR_JSON, "int64", "int64 overflow accepted");
}

static void test_records(void) {
    static const char *const names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    const char *in = "{\"baseOffset\":\"9223372036854775800\",\"producerId\":\"4611686018427387905\",\"producerEpoch\":7,"
                     "\"baseSequence\":2147483646,\"records\":["
                     "{\"key\":\"azA=\",\"value\":\"djA=\",\"timestamp\":\"1700000000000\",\"headers\":[{\"key\":\"h\",\"value\":\"eA==\"},"
                     "{\"key\":\"n\",\"value\":null}]},"
                     "{\"key\":null,\"value\":\"\",\"timestamp\":\"1699999999999\"},"
                     "{\"key\":\"\",\"value\":null,\"timestamp\":\"1700000000005\"}]}";
    for (int c = 0; c <= KW_COMPRESSION_ZSTD; c++) {
        out_buf batch = {0}, tb = {0}, js = {0};
        int32_t st = kw_records_encode((const uint8_t *)in, (int32_t)strlen(in), c, &batch.p, &batch.n);
        check(st == KW_OK, "records", "%s: encode: %d %s", names[c], st, last_error());
        if (st != KW_OK) continue;
        st = kw_records_decode_table(batch.p, batch.n, 0, 0, &tb.p, &tb.n);
        check(st == KW_OK && memcmp(tb.p, "KWRT", 4) == 0 && rd32(tb.p + 8) == 3 && rd32(tb.p + 36) == tb.n &&
                  rd32(tb.p + 20) == 2,
              "records", "%s: table header (status %d)", names[c], st);
        if (st == KW_OK && rd32(tb.p + 8) == 3) {
            const uint8_t *r0 = tb.p + rd32(tb.p + 16), *r1 = r0 + rd32(tb.p + 12), *r2 = r1 + rd32(tb.p + 12);
            check(rd64(r0) == INT64_C(9223372036854775800) && rd64(r2) == INT64_C(9223372036854775802), "records",
                  "%s: offsets", names[c]);
            check(rd64(r0 + 16) == INT64_C(4611686018427387905) && rd32(r0 + 56) == 7 && rd32(r0 + 48) == 2147483646 &&
                      rd32(r1 + 48) == INT32_MAX && rd32(r2 + 48) == 0,
                  "records", "%s: producer id, epoch, sequences (%d %d %d)", names[c], rd32(r0 + 48), rd32(r1 + 48),
                  rd32(r2 + 48));
            check(rd64(r0 + 8) == INT64_C(1700000000000) && rd64(r1 + 8) == INT64_C(1699999999999), "records", "%s: timestamps",
                  names[c]);
            check(rd32(r0 + 64) == c && rd32(r0 + 60) == 2 && rd32(r0 + 68) == 0, "records", "%s: compression/magic", names[c]);
            check(rd32(r0 + 28) == 2 && memcmp(tb.p + rd32(r0 + 24), "k0", 2) == 0 && rd32(r1 + 28) == -1 && rd32(r2 + 28) == 0 &&
                      rd32(r1 + 36) == 0 && rd32(r2 + 36) == -1,
                  "records", "%s: null and empty keys/values", names[c]);
            const uint8_t *h0 = tb.p + rd32(tb.p + 28), *h1 = h0 + rd32(tb.p + 24);
            check(rd32(r0 + 44) == 2 && rd32(h0 + 4) == 1 && tb.p[rd32(h0)] == 'h' && rd32(h0 + 12) == 1 &&
                      tb.p[rd32(h0 + 8)] == 'x' && rd32(h1 + 12) == -1 && rd32(r1 + 44) == 0,
                  "records", "%s: headers", names[c]);
        }
        st = kw_records_decode_json(batch.p, batch.n, 0, 0, &js.p, &js.n);
        kwj_value *d = parse_out(js);
        kwj_value *r0 = kwj_at(kwj_get(d, "records"), 0);
        check(st == KW_OK && str_eq(kwj_get(r0, "offset"), "9223372036854775800") &&
                  str_eq(kwj_get(r0, "producerId"), "4611686018427387905") && str_eq(kwj_get(r0, "compression"), names[c]) &&
                  kwj_is_null(kwj_get(kwj_at(kwj_get(d, "records"), 1), "key")),
              "records", "%s: records JSON", names[c]);
        kwj_free(d);
        /* A flipped byte in a value: CRC error, unless the check is skipped. */
        if (c == 0) {
            uint8_t *v0 = NULL;
            for (int32_t k = 0; k + 1 < batch.n && !v0; k++)
                if (batch.p[k] == 'v' && batch.p[k + 1] == '0') v0 = batch.p + k;
            check(v0 != NULL, "records", "value v0 not found in the uncompressed batch");
            if (v0) {
                v0[1] = '9';
                out_buf t1 = {0}, t2 = {0};
                st = kw_records_decode_table(batch.p, batch.n, 0, 0, &t1.p, &t1.n);
                check(st == KW_ERR_DECODE && strstr(last_error(), "checksum") != NULL, "records", "corrupt batch: status %d %s", st,
                      last_error());
                st = kw_records_decode_table(batch.p, batch.n, KW_RECORDS_SKIP_CRC, 0, &t2.p, &t2.n);
                const uint8_t *e = st == KW_OK ? t2.p + rd32(t2.p + 16) : NULL;
                check(e && memcmp(t2.p + rd32(e + 32), "v9", 2) == 0, "records", "corrupt batch with KW_RECORDS_SKIP_CRC: %d %s",
                      st, last_error());
                out_free(&t1);
                out_free(&t2);
            }
        }
        out_free(&batch);
        out_free(&tb);
        out_free(&js);
    }
    /* A partial batch at the end is skipped and reported. */
    out_buf batch = {0}, tb = {0};
    if (kw_records_encode((const uint8_t *)in, (int32_t)strlen(in), 0, &batch.p, &batch.n) == KW_OK) {
        uint8_t *two = malloc((size_t)batch.n * 2);
        memcpy(two, batch.p, (size_t)batch.n);
        memcpy(two + batch.n, batch.p, (size_t)batch.n);
        int32_t st = kw_records_decode_table(two, batch.n * 2 - 10, 0, 0, &tb.p, &tb.n);
        check(st == KW_OK && rd32(tb.p + 8) == 3 && rd32(tb.p + 32) == batch.n - 10, "records",
              "partial trailing batch: status %d", st);
        free(two);
    }
    out_free(&batch);
    out_free(&tb);
}

/* ---- conformance vectors ---------------------------------------------------------- */

static kwj_value *find_message(const char *name, int api_key, const char *kind) {
    kwj_value *msgs = kwj_get(catalogue, "messages");
    for (size_t i = 0; i < kwj_len(msgs); i++)
        if (str_eq(kwj_get(kwj_at(msgs, i), "name"), name)) return kwj_at(msgs, i);
    /* A request or response Kafka renamed between releases: by api key and kind. */
    if (strcmp(kind, "request") != 0 && strcmp(kind, "response") != 0) return NULL;
    kwj_value *apis = kwj_get(catalogue, "apis");
    for (size_t i = 0; i < kwj_len(apis); i++) {
        if (num(kwj_get(kwj_at(apis, i), "apiKey")) != api_key) continue;
        const char *target = kwj_str(kwj_get(kwj_at(apis, i), kind), NULL);
        for (size_t j = 0; target && j < kwj_len(msgs); j++)
            if (str_eq(kwj_get(kwj_at(msgs, j), "name"), target)) return kwj_at(msgs, j);
    }
    return NULL;
}

/* excused: kwire declares (release, version) superseded for this message and the release's
 * manifest marks that version unstable. */
static int excused(const kwj_value *msg, const kwj_value *manifest, const char *release, const char *vname,
                   const char *kind, int version) {
    int declared = 0;
    kwj_value *sup = kwj_get(msg, "superseded");
    for (size_t i = 0; i < kwj_len(sup); i++)
        if (str_eq(kwj_get(kwj_at(sup, i), "release"), release) && num(kwj_get(kwj_at(sup, i), "version")) == version)
            declared = 1;
    if (!declared) return 0;
    kwj_value *mm = kwj_get(manifest, "messages");
    for (size_t i = 0; i < kwj_len(mm); i++) {
        kwj_value *m = kwj_at(mm, i);
        if (str_eq(kwj_get(m, "name"), vname) && str_eq(kwj_get(m, "kind"), kind))
            return num(kwj_get(m, "unstableVersion")) == version;
    }
    return 0;
}

static void test_vectors(const char *release) {
    char rel[256];
    size_t n = 0, mn = 0;
    snprintf(rel, sizeof rel, "conformance/vectors/kafka-clients-%s.jsonl", release);
    char *text = read_file(rel, &n);
    check(text != NULL, "vectors", "cannot read %s", rel);
    snprintf(rel, sizeof rel, "conformance/vectors/kafka-clients-%s.manifest.json", release);
    char *mtext = read_file(rel, &mn);
    kwj_value *manifest = mtext ? kwj_parse(mtext, mn, NULL, 0) : NULL;
    check(manifest != NULL, "vectors", "cannot read %s", rel);
    if (!text || !manifest) {
        free(text);
        free(mtext);
        kwj_free(manifest);
        return;
    }
    char source[64];
    snprintf(source, sizeof source, "kafka-clients %s", release);
    long vectors = 0, checks_ok = 0, checks_bad = 0, excused_n = 0;
    size_t pos = 0;
    while (pos < n) {
        size_t end = pos;
        while (end < n && text[end] != '\n') end++;
        const char *line = text + pos;
        size_t ll = end - pos;
        pos = end + 1;
        if (ll == 0) continue;
        char err[128];
        kwj_value *v = kwj_parse(line, ll, err, sizeof err);
        if (!v) {
            check(0, "vectors", "%s line: %s", release, err);
            continue;
        }
        vectors++;
        const char *id = kwj_str(kwj_get(v, "id"), NULL), *name = kwj_str(kwj_get(v, "name"), NULL),
                   *kind = kwj_str(kwj_get(v, "kind"), NULL);
        int version = num(kwj_get(v, "version")), api_key = num(kwj_get(v, "apiKey"));
        kwj_value *want = kwj_get(v, "json");
        uint8_t *bytes = NULL;
        size_t bn = 0;
        if (!id || !name || !kind || !want || kwj_bytes(kwj_get(v, "bytes"), &bytes, &bn) != 0 ||
            !str_eq(kwj_get(v, "source"), source)) {
            check(0, "vectors", "%s: malformed vector", id ? id : "?");
            kwj_free(v);
            continue;
        }
        kwj_value *msg = find_message(name, api_key, kind);
        const char *kname = msg ? kwj_str(kwj_get(msg, "name"), NULL) : NULL;
        char fails[3][1200] = {"", "", ""};
        if (!kname) {
            snprintf(fails[0], sizeof fails[0], "kwire has no message %s (api key %d, %s)", name, api_key, kind);
        } else {
            /* encode: the vector's json -> bytes */
            out_buf enc = {0}, dec = {0}, re = {0};
            int32_t st = encode_message(kname, version, line + want->raw_off, want->raw_len, &enc);
            if (st != KW_OK)
                snprintf(fails[0], sizeof fails[0], "encode: status %d: %s", st, last_error());
            else if ((size_t)enc.n != bn || memcmp(enc.p, bytes, bn) != 0)
                snprintf(fails[0], sizeof fails[0], "encode: %d bytes differ from Kafka's %zu", enc.n, bn);
            /* decode: bytes -> JSON, compared with the vector's json (renames applied) */
            st = decode_message(kname, version, bytes, bn, &dec);
            if (st != KW_OK) {
                snprintf(fails[1], sizeof fails[1], "decode: status %d: %s", st, last_error());
                snprintf(fails[2], sizeof fails[2], "JSON round trip: the bytes did not decode");
            } else {
                kwj_value *got = parse_out(dec);
                kwj_value *ren = kwj_get(msg, "renames");
                for (size_t i = 0; i < kwj_len(ren); i++) {
                    kwj_value *r = kwj_at(ren, i);
                    apply_rename(want, kwj_str(kwj_get(r, "path"), NULL), kwj_str(kwj_get(r, "old"), NULL),
                                 kwj_str(kwj_get(r, "new"), NULL));
                }
                char path[1024] = "$";
                if (!got)
                    snprintf(fails[1], sizeof fails[1], "decode: kwire's output is not JSON");
                else if (json_diff(want, got, path, sizeof path))
                    snprintf(fails[1], sizeof fails[1], "decode: JSON differs at %s", path);
                kwj_free(got);
                /* JSON round trip: kwire's own JSON -> bytes */
                st = encode_message(kname, version, (const char *)dec.p, (size_t)dec.n, &re);
                if (st != KW_OK)
                    snprintf(fails[2], sizeof fails[2], "JSON round trip: status %d: %s", st, last_error());
                else if ((size_t)re.n != bn || memcmp(re.p, bytes, bn) != 0)
                    snprintf(fails[2], sizeof fails[2], "JSON round trip: %d bytes differ from %zu", re.n, bn);
            }
            out_free(&enc);
            out_free(&dec);
            out_free(&re);
        }
        int any = fails[0][0] || fails[1][0] || fails[2][0];
        if (any && msg && excused(msg, manifest, release, name, kind, version)) {
            excused_n++;
        } else {
            for (int c = 0; c < 3; c++) {
                check(fails[c][0] == 0, "vectors", "%s: %s", id, fails[c]);
                if (fails[c][0]) checks_bad++;
                else checks_ok++;
            }
        }
        free(bytes);
        kwj_free(v);
    }
    printf("vectors %s: %ld vectors, %ld checks passed, %ld failed, %ld vectors excused (superseded unstable versions)\n",
           release, vectors, checks_ok, checks_bad, excused_n);
    check(vectors > 1000, "vectors", "%s: only %ld vectors", release, vectors);
    free(text);
    free(mtext);
    kwj_free(manifest);
}

static int control_type(const char *s) {
    if (!s) return -1;
    if (strcmp(s, "ABORT") == 0) return 0;
    if (strcmp(s, "COMMIT") == 0) return 1;
    if (strcmp(s, "LEADER_CHANGE") == 0) return 2;
    if (strcmp(s, "SNAPSHOT_HEADER") == 0) return 3;
    if (strcmp(s, "SNAPSHOT_FOOTER") == 0) return 4;
    return -2;
}

static int compression_of(const char *s) {
    static const char *const names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    for (int i = 0; s && i < 5; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static int bytes_eq(const uint8_t *tab, int32_t off, int32_t len, const kwj_value *want) {
    uint8_t *w;
    size_t wn;
    int r = kwj_bytes(want, &w, &wn);
    if (r == 1) return len == -1;
    if (r != 0) return 0;
    int eq = len >= 0 && (size_t)len == wn && memcmp(tab + off, w, wn) == 0;
    free(w);
    return eq;
}

/* ---- frames with their records in a record table (ABI 1.1) ------------------------ */

/* span_base is what the spans of record entry e of table t index: the table, or — for a
 * KW_SOURCE_INPUT record of a layout-3 table — the input frame of the decode call. */
static const uint8_t *span_base(const uint8_t *t, const uint8_t *e, const uint8_t *input) {
    return rd32(t + KW_TABLE_LAYOUT) >= 3 && rd32(e + KW_REC_SOURCE) == KW_SOURCE_INPUT ? input : t;
}

/* same_entry compares record entry ia of table a with entry ib of table b: every field,
 * keys, values and headers by content (their offsets differ between tables; the spans of
 * a layout-3 table's input records index ain or bin, the frame it was decoded from).
 * With content_only, only what kw_encode_request_frame_records carries over: key, value,
 * headers and timestamp. Returns "" or what differs. */
static const char *same_entry(const uint8_t *a, const uint8_t *ain, int32_t ia, const uint8_t *b, const uint8_t *bin, int32_t ib,
                              int content_only) {
    const uint8_t *ea = a + rd32(a + 16) + (size_t)ia * rd32(a + 12), *eb = b + rd32(b + 16) + (size_t)ib * rd32(b + 12);
    const uint8_t *ba = span_base(a, ea, ain), *bb = span_base(b, eb, bin);
    if (!content_only && (rd64(ea) != rd64(eb) || rd64(ea + 16) != rd64(eb + 16))) return "offset or producer id";
    if (rd64(ea + 8) != rd64(eb + 8)) return "timestamp";
    for (int f = 24; f <= 32; f += 8) { /* key, value: (offset, length) */
        int32_t la = rd32(ea + f + 4), lb = rd32(eb + f + 4);
        if (la != lb || (la > 0 && memcmp(ba + rd32(ea + f), bb + rd32(eb + f), (size_t)la) != 0)) return f == 24 ? "key" : "value";
    }
    int32_t hc = rd32(ea + 44);
    if (hc != rd32(eb + 44)) return "header count";
    for (int32_t j = 0; j < hc; j++) {
        const uint8_t *ha = a + rd32(a + 28) + (size_t)(rd32(ea + 40) + j) * rd32(a + 24);
        const uint8_t *hb = b + rd32(b + 28) + (size_t)(rd32(eb + 40) + j) * rd32(b + 24);
        for (int f = 0; f <= 8; f += 8) {
            int32_t la = rd32(ha + f + 4), lb = rd32(hb + f + 4);
            if (la != lb || (la > 0 && memcmp(ba + rd32(ha + f), bb + rd32(hb + f), (size_t)la) != 0)) return "header";
        }
    }
    if (!content_only && memcmp(ea + 48, eb + 48, 44) != 0) return "sequence .. schema version";
    return "";
}

/* input_spans_ok checks the record entries of a layout-3 table decoded from an n-byte
 * frame: every KW_REC_SOURCE is KW_SOURCE_TABLE or KW_SOURCE_INPUT, compressed records
 * come from the table, and the key, value and header spans of KW_SOURCE_INPUT records lie
 * inside the frame. Returns the number of KW_SOURCE_INPUT records, or -1 (with a failed
 * check). */
static int32_t input_spans_ok(out_buf t, int32_t n, const char *what) {
    int32_t input = 0;
    for (int32_t i = 0; i < rd32(t.p + KW_TABLE_RECORD_COUNT); i++) {
        const uint8_t *e = t.p + rd32(t.p + KW_TABLE_RECORDS_OFFSET) + (size_t)i * rd32(t.p + KW_TABLE_RECORD_STRIDE);
        int32_t src = rd32(e + KW_REC_SOURCE);
        int ok = src == KW_SOURCE_TABLE || (src == KW_SOURCE_INPUT && rd32(e + KW_REC_COMPRESSION) == KW_COMPRESSION_NONE);
        const uint8_t *spans[2] = {e + KW_REC_KEY_OFFSET, e + KW_REC_VALUE_OFFSET}; /* each (offset, length) */
        for (int k = 0; ok && src == KW_SOURCE_INPUT && k < 2; k++)
            ok = rd32(spans[k] + 4) == -1 || (rd32(spans[k]) >= 0 && rd32(spans[k] + 4) >= 0 && (int64_t)rd32(spans[k]) + rd32(spans[k] + 4) <= n);
        for (int32_t j = 0; ok && src == KW_SOURCE_INPUT && j < rd32(e + KW_REC_HEADER_COUNT); j++) {
            const uint8_t *h = t.p + rd32(t.p + KW_TABLE_HEADERS_OFFSET) + (size_t)(rd32(e + KW_REC_FIRST_HEADER) + j) * rd32(t.p + KW_TABLE_HEADER_STRIDE);
            int32_t ko = rd32(h + KW_HDR_KEY_OFFSET), kl = rd32(h + KW_HDR_KEY_LENGTH);
            int32_t vo = rd32(h + KW_HDR_VALUE_OFFSET), vl = rd32(h + KW_HDR_VALUE_LENGTH);
            ok = ko >= 0 && kl >= 0 && (int64_t)ko + kl <= n && (vl == -1 || (vo >= 0 && vl >= 0 && (int64_t)vo + vl <= n));
        }
        check(ok, "framerecords", "%s: layout 3 record %d: source %d, spans outside the input or a compressed input record", what, i, src);
        if (!ok) return -1;
        input += src == KW_SOURCE_INPUT;
    }
    return input;
}

/* frame_table_json parses the frame JSON of a layout-2 or layout-3 table after checking
 * its header; NULL (with a failed check) when the table is malformed. */
static kwj_value *frame_table_json(out_buf t, int32_t layout, const char *what) {
    int ok = t.n >= KW_TABLE_HEADER_SIZE_2 && memcmp(t.p, KW_TABLE_MAGIC, 4) == 0 && rd32(t.p + KW_TABLE_LAYOUT) == layout &&
             rd32(t.p + KW_TABLE_TOTAL_SIZE) == t.n && rd32(t.p + KW_TABLE_RECORDS_OFFSET) % 8 == 0 &&
             rd32(t.p + KW_TABLE_RECORD_STRIDE) >= KW_REC_STRIDE && rd32(t.p + KW_TABLE_JSON_OFFSET) >= KW_TABLE_HEADER_SIZE_2 &&
             rd32(t.p + KW_TABLE_JSON_LENGTH) >= 0 && rd32(t.p + KW_TABLE_JSON_OFFSET) + rd32(t.p + KW_TABLE_JSON_LENGTH) == t.n &&
             rd32(t.p + KW_TABLE_RECORDS_OFFSET) + (int64_t)rd32(t.p + KW_TABLE_RECORD_COUNT) * rd32(t.p + KW_TABLE_RECORD_STRIDE) <=
                 rd32(t.p + KW_TABLE_HEADERS_OFFSET);
    check(ok, "framerecords", "%s: layout-%d table header", what, layout);
    return ok ? kwj_parse((const char *)t.p + rd32(t.p + KW_TABLE_JSON_OFFSET), (size_t)rd32(t.p + KW_TABLE_JSON_LENGTH), NULL, 0) : NULL;
}

/* same_columns compares a layout-4 table c (KW_RECORDS_COLUMNS, ABI 1.4) with the
 * layout-2 or layout-3 table r of the same frame (decoded with the same flags but for
 * KW_RECORDS_COLUMNS): its header and every array inside the table and 8-aligned, the
 * same JSON, and every record the same in every field, read from the columns and the
 * batch table as kwire.h describes them (the sequence from the batch's base sequence,
 * wrapping as Kafka's producer does), keys, values and headers by content. Returns "" or
 * what differs. in is the frame both were decoded from. */
static const char *same_columns(out_buf r, out_buf c, const uint8_t *in, int32_t in_len) {
    const uint8_t *t = c.p;
    if (c.n < KW_TABLE_HEADER_SIZE_4 || memcmp(t, KW_TABLE_MAGIC, 4) != 0 || rd32(t + KW_TABLE_LAYOUT) != 4 ||
        rd32(t + KW_TABLE_TOTAL_SIZE) != c.n || rd32(t + KW_TABLE_RECORD_STRIDE) != 0 ||
        rd32(t + KW_TABLE_RECORDS_OFFSET) != rd32(t + KW_TABLE_COL_OFFSETS) || rd32(t + KW_TABLE_BATCH_STRIDE) != KW_RB_STRIDE)
        return "layout-4 header";
    int32_t n = rd32(t + KW_TABLE_RECORD_COUNT), nb = rd32(t + KW_TABLE_BATCH_COUNT), hn = rd32(t + KW_TABLE_HEADER_COUNT);
    if (n != rd32(r.p + KW_TABLE_RECORD_COUNT) || hn != rd32(r.p + KW_TABLE_HEADER_COUNT)) return "record or header count";
    struct { int32_t field, size; } cols[] = {{KW_TABLE_BATCHES_OFFSET, nb * KW_RB_STRIDE}, {KW_TABLE_COL_OFFSETS, 8 * n},
        {KW_TABLE_COL_TIMESTAMPS, 8 * n}, {KW_TABLE_COL_KEYS, 8 * n}, {KW_TABLE_COL_VALUES, 8 * n}, {KW_TABLE_COL_HEADER_INDEX, 8 * n},
        {KW_TABLE_COL_BATCH_INDEX, 4 * n}, {KW_TABLE_COL_SOURCES, n}, {KW_TABLE_COL_CONTROL_TYPES, 4 * n}, {KW_TABLE_COL_SCHEMAS, 12 * n}};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
        int32_t at = rd32(t + cols[k].field);
        if (at < KW_TABLE_HEADER_SIZE_4 || at % 8 != 0 || (int64_t)at + cols[k].size > c.n) return "a column's place";
    }
    if (rd32(t + KW_TABLE_JSON_LENGTH) != rd32(r.p + KW_TABLE_JSON_LENGTH) ||
        memcmp(t + rd32(t + KW_TABLE_JSON_OFFSET), r.p + rd32(r.p + KW_TABLE_JSON_OFFSET), (size_t)rd32(t + KW_TABLE_JSON_LENGTH)) != 0)
        return "JSON";
    for (int32_t i = 0; i < n; i++) {
        const uint8_t *e = r.p + rd32(r.p + KW_TABLE_RECORDS_OFFSET) + (size_t)i * rd32(r.p + KW_TABLE_RECORD_STRIDE);
        int32_t b = rd32(t + rd32(t + KW_TABLE_COL_BATCH_INDEX) + 4 * i);
        if (b < 0 || b >= nb) return "batch index";
        const uint8_t *be = t + rd32(t + KW_TABLE_BATCHES_OFFSET) + (size_t)b * KW_RB_STRIDE;
        if (i < rd32(be + KW_RB_FIRST_RECORD) || i >= rd32(be + KW_RB_FIRST_RECORD) + rd32(be + KW_RB_RECORD_COUNT)) return "batch range";
        int32_t src = t[rd32(t + KW_TABLE_COL_SOURCES) + i];
        if (src != rd32(be + KW_RB_SOURCE) || src != (rd32(r.p + KW_TABLE_LAYOUT) >= 3 ? rd32(e + KW_REC_SOURCE) : KW_SOURCE_TABLE)) return "source";
        const uint8_t *cb = src == KW_SOURCE_INPUT ? in : t, *rb = span_base(r.p, e, in);
        int32_t cbn = src == KW_SOURCE_INPUT ? in_len : c.n;
        int64_t off = rd64(t + rd32(t + KW_TABLE_COL_OFFSETS) + 8 * (size_t)i);
        if (off != rd64(e + KW_REC_OFFSET)) return "offset";
        if (rd64(t + rd32(t + KW_TABLE_COL_TIMESTAMPS) + 8 * (size_t)i) != rd64(e + KW_REC_TIMESTAMP)) return "timestamp";
        if (rd64(be + KW_RB_PRODUCER_ID) != rd64(e + KW_REC_PRODUCER_ID)) return "producer id";
        int32_t spans[2] = {KW_TABLE_COL_KEYS, KW_TABLE_COL_VALUES}, rspans[2] = {KW_REC_KEY_OFFSET, KW_REC_VALUE_OFFSET};
        for (int k = 0; k < 2; k++) {
            const uint8_t *p = t + rd32(t + spans[k]) + 8 * (size_t)i;
            int32_t o = rd32(p), l = rd32(p + 4);
            if (l != rd32(e + rspans[k] + 4) || (l == -1 && o != 0) || (l >= 0 && (o < 0 || (int64_t)o + l > cbn)) ||
                (l > 0 && memcmp(cb + o, rb + rd32(e + rspans[k]), (size_t)l) != 0))
                return k == 0 ? "key" : "value";
        }
        const uint8_t *hi = t + rd32(t + KW_TABLE_COL_HEADER_INDEX) + 8 * (size_t)i;
        int32_t fh = rd32(hi), hc = rd32(hi + 4);
        if (hc != rd32(e + KW_REC_HEADER_COUNT) || fh < 0 || hc < 0 || fh + hc > hn) return "header index";
        for (int32_t j = 0; j < hc; j++) {
            const uint8_t *hc4 = t + rd32(t + KW_TABLE_HEADERS_OFFSET) + (size_t)(fh + j) * KW_HDR_STRIDE;
            const uint8_t *hr = r.p + rd32(r.p + KW_TABLE_HEADERS_OFFSET) + (size_t)(rd32(e + KW_REC_FIRST_HEADER) + j) * rd32(r.p + KW_TABLE_HEADER_STRIDE);
            for (int f = 0; f <= 8; f += 8) {
                int32_t o = rd32(hc4 + f), l = rd32(hc4 + f + 4);
                if (l != rd32(hr + f + 4) || (l >= 0 && (o < 0 || (int64_t)o + l > cbn)) || (l > 0 && memcmp(cb + o, rb + rd32(hr + f), (size_t)l) != 0))
                    return "header";
            }
        }
        int32_t base = rd32(be + KW_RB_BASE_SEQUENCE), delta = (int32_t)(off - rd64(be + KW_RB_BASE_OFFSET));
        /* Kafka's int arithmetic, which wraps (unsigned here: signed overflow is undefined in C). */
        uint32_t ud = (uint32_t)delta, ub = (uint32_t)base;
        int32_t seq = base < 0 ? -1 : base > (int32_t)((uint32_t)INT32_MAX - ud) ? (int32_t)(ud - ((uint32_t)INT32_MAX - ub) - 1u) : (int32_t)(ub + ud);
        const uint8_t *sch = t + rd32(t + KW_TABLE_COL_SCHEMAS) + 12 * (size_t)i;
        int32_t fields[][2] = {{seq, KW_REC_SEQUENCE}, {rd32(be + KW_RB_LEADER_EPOCH), KW_REC_LEADER_EPOCH},
            {rd32(be + KW_RB_PRODUCER_EPOCH), KW_REC_PRODUCER_EPOCH}, {rd32(be + KW_RB_MAGIC), KW_REC_MAGIC},
            {rd32(be + KW_RB_COMPRESSION), KW_REC_COMPRESSION}, {rd32(be + KW_RB_TIMESTAMP_TYPE), KW_REC_TIMESTAMP_TYPE},
            {rd32(be + KW_RB_FLAGS), KW_REC_FLAGS}, {rd32(t + rd32(t + KW_TABLE_COL_CONTROL_TYPES) + 4 * i), KW_REC_CONTROL_TYPE},
            {rd32(sch), KW_REC_SCHEMA_SOURCE}, {rd32(sch + 4), KW_REC_SCHEMA_ID}, {rd32(sch + 8), KW_REC_SCHEMA_VERSION}};
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
            if (fields[k][0] != rd32(e + fields[k][1])) return "sequence .. schema version";
    }
    return "";
}

/* columns_match decodes frame again with KW_RECORDS_COLUMNS added to flags and holds the
 * layout-4 table to r, the table of the same call without it (same_columns). */
static void columns_match(out_buf r, const uint8_t *frame, int32_t n, int32_t api_key, int32_t version, int32_t flags, const char *what) {
    out_buf c = {0};
    int32_t st = api_key < 0 ? kw_decode_request_frame_records(frame, n, flags | KW_RECORDS_COLUMNS, 0, &c.p, &c.n)
                             : kw_decode_response_frame_records(frame, n, api_key, version, flags | KW_RECORDS_COLUMNS, 0, &c.p, &c.n);
    const char *why = st == KW_OK ? same_columns(r, c, frame, n) : last_error();
    check(why[0] == 0, "framerecords", "%s: layout 4 (flags %d): %s", what, flags | KW_RECORDS_COLUMNS, why);
    out_free(&c);
    columns_compared++;
}

/* check_partitions compares every records reference of a decoded frame with the layout-1
 * table of the raw records (want), the same for every partition; in is the frame the
 * table was decoded from (for a layout-3 table's input records). */
static void check_partitions(out_buf t, const uint8_t *in, kwj_value *js, const char *topics, const char *parts, out_buf want,
                             int32_t raw_len, int nparts, const char *what) {
    int seen = 0;
    kwj_value *ts = kwj_get(kwj_get(js, "body"), topics);
    for (size_t i = 0; i < kwj_len(ts); i++) {
        kwj_value *ps = kwj_get(kwj_at(ts, i), parts);
        for (size_t j = 0; j < kwj_len(ps); j++) {
            kwj_value *ref = kwj_get(kwj_at(ps, j), "records");
            int32_t first = num(kwj_get(ref, "firstRecord")), count = num(kwj_get(ref, "recordCount"));
            check(count == rd32(want.p + 8) && first >= 0 && first + count <= rd32(t.p + 8) &&
                      num(kwj_get(ref, "skippedBytes")) == rd32(want.p + 32) && num(kwj_get(ref, "size")) == raw_len,
                  "framerecords", "%s: partition %zu: reference %d+%d of %d (want %d records, size %d)", what, j, first, count,
                  rd32(t.p + 8), rd32(want.p + 8), raw_len);
            for (int32_t r = 0; r < count && first + count <= rd32(t.p + 8) && count == rd32(want.p + 8); r++) {
                const char *why = same_entry(t.p, in, first + r, want.p, NULL, r, 0);
                check(why[0] == 0, "framerecords", "%s: partition %zu record %d: %s differs", what, j, r, why);
                if (why[0]) break;
            }
            seen++;
        }
    }
    check(seen == nparts, "framerecords", "%s: %d partitions with records, want %d", what, seen, nparts);
}

/* Every record-batch vector inside a Fetch v12 response and a Produce v9 request (two
 * partitions each) through kw_decode_*_frame_records, against kw_records_decode_table of
 * the same bytes; the Produce frames also through kw_encode_request_frame_records and back. */
/* next_jsonl: the next line of text[0:n) from *pos that parses as JSON (a vector), or
 * NULL at the end; the caller frees it. */
static kwj_value *next_jsonl(const char *text, size_t n, size_t *pos) {
    while (*pos < n) {
        size_t end = *pos;
        while (end < n && text[end] != '\n') end++;
        kwj_value *v = end > *pos ? kwj_parse(text + *pos, end - *pos, NULL, 0) : NULL;
        *pos = end + 1;
        if (v) return v;
    }
    return NULL;
}

/* fetch_frame_of: a Fetch v12 response frame of topic "t" whose partitions 0 and 1 both
 * hold the records b64 (base64). */
static int32_t fetch_frame_of(const char *b64, out_buf *frame) {
    size_t cap = 2 * strlen(b64) + 1024;
    char *json = malloc(cap);
    snprintf(json, cap,
             "{\"header\":{\"correlationId\":5},\"body\":{\"responses\":[{\"topic\":\"t\",\"partitions\":["
             "{\"partitionIndex\":0,\"highWatermark\":\"10\",\"records\":\"%s\"},"
             "{\"partitionIndex\":1,\"highWatermark\":\"10\",\"records\":\"%s\"}]}]}}",
             b64, b64);
    int32_t st = kw_encode_response_frame((const uint8_t *)json, (int32_t)strlen(json), 1, 12, &frame->p, &frame->n);
    free(json);
    return st;
}

/* gunzip: the gzip members of in[0:n) one after another, as Kafka's reader reads them,
 * into a malloc'd buffer of at most limit bytes; NULL when they are not exactly that (bad
 * data, cut short, bytes after the last member, past the limit). */
static uint8_t *gunzip(const uint8_t *in, size_t n, size_t limit, size_t *outn) {
    size_t cap = 4 * n + 64, len = 0;
    uint8_t *out = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!out || inflateInit2(&z, 31) != Z_OK) {
        free(out);
        return NULL;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    int ok = 0;
    for (;;) {
        if (len == cap) {
            if (cap > limit) break;
            cap *= 2;
            uint8_t *more = realloc(out, cap);
            if (!more) break;
            out = more;
        }
        z.next_out = out + len;
        z.avail_out = (uInt)(cap - len);
        int r = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
        if (len > limit) break;
        if (r == Z_STREAM_END) {
            if (z.avail_in == 0) {
                ok = 1;
                break;
            }
            if (inflateReset(&z) != Z_OK) break; /* another member follows */
            continue;
        }
        if (r != Z_OK && !(r == Z_BUF_ERROR && z.avail_out == 0)) break;
        if (r == Z_BUF_ERROR && z.avail_in == 0) break;
    }
    inflateEnd(&z);
    if (!ok) {
        free(out);
        return NULL;
    }
    *outn = len;
    return out;
}

/* host_table: the frame decoded as a host with its own gzip decodes it (ABI 1.3): the
 * frame-records call with KW_RECORDS_HOST_GZIP; when that lists batches, each gunzipped
 * here (every one, or every other one: the rest left to the library) and handed to
 * kw_decode_frame_records_inflated. Returns the status; *gz counts the batches gunzipped. */
static int32_t host_table(const uint8_t *frame, int32_t n, int32_t api_key, int32_t version, int32_t flags, int every_other,
                          out_buf *t, long *gz) {
    int32_t st = api_key < 0 ? kw_decode_request_frame_records(frame, n, flags | KW_RECORDS_HOST_GZIP, 0, &t->p, &t->n)
                             : kw_decode_response_frame_records(frame, n, api_key, version, flags | KW_RECORDS_HOST_GZIP, 0, &t->p, &t->n);
    if (st != KW_OK || memcmp(t->p, KW_BATCH_LIST_MAGIC, 4) != 0) return st;
    int32_t count = rd32(t->p + KW_BATCH_LIST_COUNT);
    size_t cap = 4, len = 4;
    uint8_t *in = malloc(4 + 8 * (size_t)count);
    uint8_t **parts = calloc((size_t)count + 1, sizeof *parts);
    size_t *sizes = calloc((size_t)count + 1, sizeof *sizes);
    int32_t *offs = calloc((size_t)count + 1, sizeof *offs);
    int32_t k = 0;
    for (int32_t i = 0; i < count; i++) {
        const uint8_t *e = t->p + KW_BATCH_LIST_HEADER_SIZE + (size_t)i * KW_BATCH_STRIDE;
        if (rd32(e + KW_BATCH_COMPRESSION) != KW_COMPRESSION_GZIP || (every_other && i % 2 == 0)) continue;
        size_t m = 0;
        uint8_t *d = gunzip(frame + rd32(e + KW_BATCH_DATA_OFFSET), (size_t)rd32(e + KW_BATCH_DATA_LENGTH), 100u << 20, &m);
        if (!d) continue;
        parts[k] = d;
        sizes[k] = m;
        offs[k] = rd32(e + KW_BATCH_DATA_OFFSET);
        k++;
        (*gz)++;
    }
    out_free(t);
    for (int32_t i = 0; i < k; i++) cap += 8 + sizes[i];
    uint8_t *buf = realloc(in, cap);
    in = buf;
    memcpy(in, &k, 4); /* little-endian hosts only, as the table itself */
    len = 4 + 8 * (size_t)k;
    for (int32_t i = 0; i < k; i++) {
        int32_t sz = (int32_t)sizes[i];
        memcpy(in + 4 + 8 * (size_t)i, &offs[i], 4);
        memcpy(in + 8 + 8 * (size_t)i, &sz, 4);
        memcpy(in + len, parts[i], sizes[i]);
        len += sizes[i];
        free(parts[i]);
    }
    st = kw_decode_frame_records_inflated(frame, n, api_key, version, flags, 0, in, (int32_t)len, &t->p, &t->n);
    free(in);
    free(parts);
    free(sizes);
    free(offs);
    return st;
}

/* Every record vector in a Fetch response and a Produce request, and every byte of each
 * flipped (checksums unchecked, so that the records are read): decoded with the host's
 * gzip (every batch, or every other one) and by the library alone, the tables or the
 * errors must be identical, in layouts 2, 3 and 4; and every layout fails alike. */
static void test_host_decompression(void) {
    size_t n = 0;
    char *text = read_file("conformance/vectors/records/kafka-clients-4.4.0.jsonl", &n);
    check(text != NULL, "hostgzip", "cannot read the record vectors");
    if (!text) return;
    long frames = 0, gz = 0, errors = 0;
    size_t pos = 0;
    for (kwj_value *v; (v = next_jsonl(text, n, &pos)) != NULL;) {
        const char *name = kwj_str(kwj_get(v, "name"), NULL);
        const char *b64 = kwj_str(kwj_get(v, "bytes"), NULL);
        out_buf frame = {0};
        int32_t st = fetch_frame_of(b64 ? b64 : "", &frame);
        check(st == KW_OK, "hostgzip", "%s: building the Fetch frame: %s", name, last_error());
        int gzip = b64 && strstr(name, "gzip") != NULL;
        /* The vector as it is, then (gzip vectors) with bytes flipped through its batches. */
        int32_t steps = gzip ? 1 + frame.n / 40 : 1;
        uint8_t *spoilt = malloc((size_t)frame.n);
        for (int32_t s = 0; st == KW_OK && s < steps + (gzip ? 1 : 0); s++) {
            memcpy(spoilt, frame.p, (size_t)frame.n);
            int32_t flags = 0;
            if (s > 0) {
                int32_t at = frame.n - 1 - (s - 1) * 40; /* from the end: the records fields */
                if (at < 40) break;
                spoilt[at] ^= 0x10;
                flags = KW_RECORDS_SKIP_CRC;
            }
            int32_t st2 = KW_OK;
            char err2[512] = "";
            for (int layout = 2; layout <= 4; layout++) {
                int32_t fl = flags | (layout == 3 ? KW_RECORDS_INPUT_SPANS : 0) | (layout == 4 ? KW_RECORDS_COLUMNS | KW_RECORDS_INPUT_SPANS : 0);
                out_buf want = {0};
                int32_t wst = kw_decode_response_frame_records(spoilt, frame.n, 1, 12, fl, 0, &want.p, &want.n);
                char werr[512];
                snprintf(werr, sizeof werr, "%s", wst == KW_OK ? "" : last_error());
                /* Every layout fails the same way. */
                if (layout == 2) {
                    st2 = wst;
                    snprintf(err2, sizeof err2, "%s", werr);
                }
                check(wst == st2 && strcmp(werr, err2) == 0, "hostgzip", "%s, step %d: layout %d gives %d (%s), layout 2 %d (%s)", name, s,
                      layout, wst, werr, st2, err2);
                for (int every_other = 0; every_other < 2; every_other++) {
                    out_buf got = {0};
                    int32_t gst = host_table(spoilt, frame.n, 1, 12, fl, every_other, &got, &gz);
                    const char *gerr = gst == KW_OK ? "" : last_error();
                    check(gst == wst && strcmp(gerr, werr) == 0 && got.n == want.n && (gst != KW_OK || memcmp(got.p, want.p, (size_t)want.n) == 0),
                          "hostgzip", "%s, step %d, flags %d, every other %d: host gzip status %d (%s), the library's %d (%s)", name, s, fl,
                          every_other, gst, gerr, wst, werr);
                    out_free(&got);
                }
                errors += wst != KW_OK;
                out_free(&want);
                frames++;
            }
        }
        free(spoilt);
        out_free(&frame);
        kwj_free(v);
    }
    free(text);
    check(gz >= 20, "hostgzip", "only %ld batches gunzipped by the host", gz);
    check(errors > 0, "hostgzip", "no flipped byte made a decode fail");
    printf("host gzip: %ld frames decoded both ways (%ld refused), %ld batches gunzipped with zlib\n", frames, errors, gz);
}

static void test_frame_records(void) {
    size_t n = 0;
    char *text = read_file("conformance/vectors/records/kafka-clients-4.4.0.jsonl", &n);
    check(text != NULL, "framerecords", "cannot read the record vectors");
    if (!text) return;
    long vectors = 0, frames3 = 0, input3 = 0, columns0 = columns_compared;
    size_t pos = 0;
    for (kwj_value *v; (v = next_jsonl(text, n, &pos)) != NULL;) {
        const char *name = kwj_str(kwj_get(v, "name"), NULL);
        const char *b64 = kwj_str(kwj_get(v, "bytes"), NULL);
        uint8_t *raw = NULL;
        size_t rawn = 0;
        out_buf want = {0};
        if (!b64 || kwj_bytes(kwj_get(v, "bytes"), &raw, &rawn) != 0 ||
            kw_records_decode_table(raw, (int32_t)rawn, 0, 0, &want.p, &want.n) != KW_OK) {
            check(0, "framerecords", "%s: the vector's records do not decode: %s", name, last_error());
            free(raw);
            kwj_free(v);
            continue;
        }
        vectors++;
        out_buf frame = {0}, t = {0};
        int32_t st = fetch_frame_of(b64, &frame);
        check(st == KW_OK, "framerecords", "%s: building the Fetch frame: %s", name, last_error());
        if (st == KW_OK) {
            st = kw_decode_response_frame_records(frame.p, frame.n, 1, 12, 0, 0, &t.p, &t.n);
            check(st == KW_OK, "framerecords", "%s: kw_decode_response_frame_records: %d %s", name, st, last_error());
            kwj_value *js = st == KW_OK ? frame_table_json(t, 2, name) : NULL;
            if (js) check_partitions(t, frame.p, js, "responses", "partitions", want, (int32_t)rawn, 2, name);
            if (js) columns_match(t, frame.p, frame.n, 1, 12, 0, name);
            kwj_free(js);
            out_free(&t);
            /* Layout 3: uncompressed records stay in the frame. */
            st = kw_decode_response_frame_records(frame.p, frame.n, 1, 12, KW_RECORDS_INPUT_SPANS, 0, &t.p, &t.n);
            check(st == KW_OK, "framerecords", "%s: kw_decode_response_frame_records, layout 3: %d %s", name, st, last_error());
            js = st == KW_OK ? frame_table_json(t, 3, name) : NULL;
            if (js) {
                check_partitions(t, frame.p, js, "responses", "partitions", want, (int32_t)rawn, 2, name);
                columns_match(t, frame.p, frame.n, 1, 12, KW_RECORDS_INPUT_SPANS, name);
                /* Exactly the uncompressed magic 2 data records stay in the frame (control
                 * records and legacy messages are copied), in both partitions. */
                int32_t input = input_spans_ok(t, frame.n, name), plain = 0;
                for (int32_t r = 0; r < rd32(want.p + KW_TABLE_RECORD_COUNT); r++) {
                    const uint8_t *e = want.p + rd32(want.p + KW_TABLE_RECORDS_OFFSET) + (size_t)r * rd32(want.p + KW_TABLE_RECORD_STRIDE);
                    plain += rd32(e + KW_REC_MAGIC) == 2 && rd32(e + KW_REC_COMPRESSION) == KW_COMPRESSION_NONE && (rd32(e + KW_REC_FLAGS) & 2) == 0;
                }
                check(input == 2 * plain, "framerecords", "%s: layout 3: %d records from the frame, want %d", name, input, 2 * plain);
                frames3 += input >= 0;
                input3 += input > 0 ? input : 0;
            }
            kwj_free(js);
            out_free(&t);
        }
        out_free(&frame);
        /* Produce v9 request, and back through kw_encode_request_frame_records */
        size_t cap = 2 * strlen(b64) + 1024;
        char *json = malloc(cap);
        snprintf(json, cap,
                 "{\"header\":{\"requestApiKey\":0,\"requestApiVersion\":9,\"correlationId\":6,\"clientId\":\"c\"},"
                 "\"body\":{\"acks\":-1,\"timeoutMs\":1000,\"topicData\":[{\"name\":\"t\",\"partitionData\":["
                 "{\"index\":0,\"records\":\"%s\"},{\"index\":1,\"records\":\"%s\"}]}]}}",
                 b64, b64);
        st = kw_encode_request_frame((const uint8_t *)json, (int32_t)strlen(json), &frame.p, &frame.n);
        check(st == KW_OK, "framerecords", "%s: building the Produce frame: %s", name, last_error());
        if (st == KW_OK) {
            st = kw_decode_request_frame_records(frame.p, frame.n, 0, 0, &t.p, &t.n);
            check(st == KW_OK, "framerecords", "%s: kw_decode_request_frame_records: %d %s", name, st, last_error());
            kwj_value *js = st == KW_OK ? frame_table_json(t, 2, name) : NULL;
            if (js) check_partitions(t, frame.p, js, "topicData", "partitionData", want, (int32_t)rawn, 2, name);
            if (js) columns_match(t, frame.p, frame.n, -1, 0, 0, name);
            kwj_free(js);
            /* Layout 3 reads the same; kw_encode_request_frame_records refuses it when a
             * record points into the frame. */
            out_buf t3 = {0}, o3 = {0};
            int32_t st3 = kw_decode_request_frame_records(frame.p, frame.n, KW_RECORDS_INPUT_SPANS, 0, &t3.p, &t3.n);
            check(st3 == KW_OK, "framerecords", "%s: kw_decode_request_frame_records, layout 3: %d %s", name, st3, last_error());
            kwj_value *js3 = st3 == KW_OK ? frame_table_json(t3, 3, name) : NULL;
            if (js3) {
                check_partitions(t3, frame.p, js3, "topicData", "partitionData", want, (int32_t)rawn, 2, name);
                columns_match(t3, frame.p, frame.n, -1, 0, KW_RECORDS_INPUT_SPANS, name);
                int32_t input = input_spans_ok(t3, frame.n, name);
                st3 = kw_encode_request_frame_records(t3.p + rd32(t3.p + KW_TABLE_JSON_OFFSET), rd32(t3.p + KW_TABLE_JSON_LENGTH), t3.p,
                                                      t3.n, &o3.p, &o3.n);
                if (input > 0)
                    check(st3 == KW_ERR_JSON && o3.p == NULL, "framerecords",
                          "%s: kw_encode_request_frame_records of a layout-3 table with input records: status %d", name, st3);
                out_free(&o3);
            }
            kwj_free(js3);
            out_free(&t3);
            /* The decoded JSON and table encode again; the records read back the same. Only
             * magic 2 batches carry headers, and a control batch is not rebuilt. */
            int magic2 = rd32(want.p + 8) > 0 && rd32(want.p + rd32(want.p + 16) + 60) == 2 &&
                         (rd32(want.p + rd32(want.p + 16) + 72) & 2) == 0;
            if (st == KW_OK && magic2) {
                out_buf again = {0}, t2 = {0};
                st = kw_encode_request_frame_records(t.p + rd32(t.p + 40), rd32(t.p + 44), t.p, t.n, &again.p, &again.n);
                check(st == KW_OK, "framerecords", "%s: kw_encode_request_frame_records: %d %s", name, st, last_error());
                if (st == KW_OK) st = kw_decode_request_frame_records(again.p, again.n, 0, 0, &t2.p, &t2.n);
                check(st == KW_OK && rd32(t2.p + 8) == rd32(t.p + 8), "framerecords", "%s: re-encoded frame: %d records of %d",
                      name, st == KW_OK ? rd32(t2.p + 8) : -1, rd32(t.p + 8));
                for (int32_t r = 0; st == KW_OK && r < rd32(t.p + 8) && rd32(t2.p + 8) == rd32(t.p + 8); r++) {
                    const char *why = same_entry(t.p, NULL, r, t2.p, NULL, r, 1);
                    check(why[0] == 0, "framerecords", "%s: re-encoded record %d: %s differs", name, r, why);
                    if (why[0]) break;
                }
                out_free(&again);
                out_free(&t2);
            }
            out_free(&t);
        }
        out_free(&frame);
        free(json);
        free(raw);
        out_free(&want);
        kwj_free(v);
    }
    free(text);
    printf("frame records: %ld record vectors inside Fetch v12 and Produce v9 frames; layout 3: %ld Fetch tables, %ld records "
           "read from the frame; %ld layout-4 tables held to layouts 2 and 3\n",
           vectors, frames3, input3, columns_compared - columns0);
    check(columns_compared - columns0 == 4 * vectors, "framerecords", "%ld layout-4 tables compared, want %ld", columns_compared - columns0,
          4 * vectors);
    check(vectors >= 20 && frames3 == vectors && input3 > 0, "framerecords", "only %ld record vectors, %ld layout-3 tables, %ld input records",
          vectors, frames3, input3);

    /* Errors: a cut frame; a reference outside the table; a table too short for its header. */
    out_buf o = {0};
    const uint8_t cut[] = {0, 0, 0, 40, 0, 0, 0, 5};
    check(kw_decode_response_frame_records(cut, 8, 1, 12, 0, 0, &o.p, &o.n) == KW_ERR_DECODE && o.p == NULL, "framerecords",
          "a cut Fetch frame is not KW_ERR_DECODE");
    const char *badref = "{\"header\":{\"requestApiKey\":0,\"requestApiVersion\":9,\"correlationId\":1,\"clientId\":\"c\"},"
                         "\"body\":{\"acks\":1,\"timeoutMs\":1,\"topicData\":[{\"name\":\"t\",\"partitionData\":[{\"index\":0,"
                         "\"records\":{\"firstRecord\":3,\"recordCount\":1}}]}]}}";
    int32_t st = kw_encode_request_frame_records((const uint8_t *)badref, (int32_t)strlen(badref), NULL, 0, &o.p, &o.n);
    kwj_value *ej = last_error_json();
    check(st != KW_OK && o.p == NULL && ej && kwj_str(kwj_get(ej, "path"), NULL) &&
              strstr(kwj_str(kwj_get(ej, "path"), NULL), "records") != NULL,
          "framerecords", "a reference outside the table: status %d (%s)", st, last_error());
    kwj_free(ej);
    const uint8_t shorttable[8] = {'K', 'W', 'R', 'T', 1, 0, 0, 0};
    st = kw_encode_request_frame_records((const uint8_t *)badref, (int32_t)strlen(badref), shorttable, 8, &o.p, &o.n);
    check(st == KW_ERR_ARG && o.p == NULL, "framerecords", "a table shorter than its header: status %d", st);
}

/* frame_around puts a size prefix and a header (correlation id 9, client id "c") around a
 * request or response body of (api_key, version). */
static int frame_around(int request, int api_key, int version, const uint8_t *body, size_t bn, out_buf *frame) {
    int32_t rq = 0, rs = 0;
    if (kw_header_versions(api_key, version, &rq, &rs) != KW_OK) return -1;
    char hj[160];
    out_buf h = {0};
    if (request)
        snprintf(hj, sizeof hj, "{\"requestApiKey\":%d,\"requestApiVersion\":%d,\"correlationId\":9,\"clientId\":\"c\"}", api_key, version);
    else
        snprintf(hj, sizeof hj, "{\"correlationId\":9}");
    const char *hname = request ? "RequestHeader" : "ResponseHeader";
    if (kw_encode_message(hname, (int32_t)strlen(hname), request ? rq : rs, (const uint8_t *)hj, (int32_t)strlen(hj), &h.p, &h.n) != KW_OK)
        return -1;
    size_t total = (size_t)h.n + bn;
    frame->p = kw_alloc((int32_t)(4 + total));
    frame->n = (int32_t)(4 + total);
    frame->p[0] = (uint8_t)(total >> 24), frame->p[1] = (uint8_t)(total >> 16), frame->p[2] = (uint8_t)(total >> 8), frame->p[3] = (uint8_t)total;
    memcpy(frame->p + 4, h.p, (size_t)h.n);
    if (bn) memcpy(frame->p + 4 + h.n, body, bn);
    out_free(&h);
    return 0;
}

/* Every Produce request and Fetch response conformance vector of a release, in a frame,
 * through kw_decode_*_frame_records: each records field's reference against
 * kw_records_decode_table of the bytes kw_decode_*_frame shows for it (same accept or
 * refuse), and the rest of the frame JSON equal. */
static void test_frame_records_vectors(const char *release) {
    char rel[256];
    snprintf(rel, sizeof rel, "conformance/vectors/kafka-clients-%s.jsonl", release);
    size_t n = 0;
    char *text = read_file(rel, &n);
    check(text != NULL, "framerecords", "cannot read %s", rel);
    if (!text) return;
    long vectors = 0, fields = 0;
    for (size_t pos = 0; pos < n;) {
        size_t end = pos;
        while (end < n && text[end] != '\n') end++;
        kwj_value *v = end > pos ? kwj_parse(text + pos, end - pos, NULL, 0) : NULL;
        pos = end + 1;
        if (!v) continue;
        const char *id = kwj_str(kwj_get(v, "id"), NULL), *kind = kwj_str(kwj_get(v, "kind"), NULL);
        int api_key = num(kwj_get(v, "apiKey")), version = num(kwj_get(v, "version"));
        int request = kind && strcmp(kind, "request") == 0;
        uint8_t *body = NULL;
        size_t bn = 0;
        out_buf frame = {0};
        if (!id || !((api_key == 0 && request) || (api_key == 1 && kind && strcmp(kind, "response") == 0)) ||
            kwj_bytes(kwj_get(v, "bytes"), &body, &bn) != 0) {
            kwj_free(v);
            continue;
        }
        vectors++;
        if (frame_around(request, api_key, version, body, bn, &frame) != 0) {
            check(0, "framerecords", "%s: cannot frame the vector: %s", id, last_error());
            free(body);
            kwj_free(v);
            continue;
        }
        out_buf plain = {0}, t = {0};
        int32_t st1 = request ? kw_decode_request_frame(frame.p, frame.n, &plain.p, &plain.n)
                              : kw_decode_response_frame(frame.p, frame.n, api_key, version, &plain.p, &plain.n);
        int32_t st2 = request ? kw_decode_request_frame_records(frame.p, frame.n, 0, 0, &t.p, &t.n)
                              : kw_decode_response_frame_records(frame.p, frame.n, api_key, version, 0, 0, &t.p, &t.n);
        kwj_value *pj = st1 == KW_OK ? parse_out(plain) : NULL;
        kwj_value *tj = st2 == KW_OK ? frame_table_json(t, 2, id) : NULL;
        /* Walk both frames' records fields; a field whose records the table call refuses
         * makes the whole frame call fail. */
        int refused = 0;
        char bad[1024] = "";
        kwj_value *pts = kwj_get(kwj_get(pj, "body"), request ? "topicData" : "responses");
        kwj_value *tts = kwj_get(kwj_get(tj, "body"), request ? "topicData" : "responses");
        for (size_t i = 0; pj && i < kwj_len(pts) && !bad[0]; i++) {
            kwj_value *pps = kwj_get(kwj_at(pts, i), request ? "partitionData" : "partitions");
            kwj_value *tps = kwj_get(kwj_at(tts, i), request ? "partitionData" : "partitions");
            for (size_t j = 0; j < kwj_len(pps) && !bad[0]; j++) {
                kwj_value *pr = kwj_get(kwj_at(pps, j), "records"), *tr = kwj_get(kwj_at(tps, j), "records");
                if (!pr || pr->type == KWJ_NULL) {
                    if (tj && (!tr || tr->type != KWJ_NULL)) snprintf(bad, sizeof bad, "[%zu][%zu]: null records not null", i, j);
                    continue;
                }
                uint8_t *raw = NULL;
                size_t rn = 0;
                out_buf want = {0};
                if (kwj_bytes(pr, &raw, &rn) != 0 || kw_records_decode_table(raw, (int32_t)rn, 0, 0, &want.p, &want.n) != KW_OK) {
                    refused = 1;
                    free(raw);
                    continue;
                }
                fields++;
                if (tj) {
                    int32_t first = num(kwj_get(tr, "firstRecord")), count = num(kwj_get(tr, "recordCount"));
                    if (count != rd32(want.p + 8) || first < 0 || first + count > rd32(t.p + 8) ||
                        num(kwj_get(tr, "size")) != (int32_t)rn || num(kwj_get(tr, "skippedBytes")) != rd32(want.p + 32))
                        snprintf(bad, sizeof bad, "[%zu][%zu]: reference %d+%d, want %d records of %zu bytes", i, j, first, count,
                                 rd32(want.p + 8), rn);
                    for (int32_t r = 0; !bad[0] && r < count; r++) {
                        const char *why = same_entry(t.p, NULL, first + r, want.p, NULL, r, 0);
                        if (why[0]) snprintf(bad, sizeof bad, "[%zu][%zu] record %d: %s", i, j, r, why);
                    }
                    /* The field compared, the frames must otherwise agree: make both null. */
                    kwj_clear(pr);
                    kwj_clear(tr);
                }
                free(raw);
                out_free(&want);
            }
        }
        if (!bad[0] && st1 == KW_OK && (st2 == KW_OK) == refused) {
            snprintf(bad, sizeof bad, "frame call status %d, but the records fields %s", st2, refused ? "do not all decode" : "decode");
        }
        if (!bad[0] && st1 != KW_OK && st2 == KW_OK) snprintf(bad, sizeof bad, "the frame is refused, the frame-records call accepts it");
        char path[512] = "$";
        if (!bad[0] && pj && tj && json_diff(pj, tj, path, sizeof path)) snprintf(bad, sizeof bad, "frame JSON differs at %.500s", path);
        /* Layout 3 (KW_RECORDS_INPUT_SPANS): the same status, JSON and records. */
        out_buf t3 = {0};
        int32_t st3 = request ? kw_decode_request_frame_records(frame.p, frame.n, KW_RECORDS_INPUT_SPANS, 0, &t3.p, &t3.n)
                              : kw_decode_response_frame_records(frame.p, frame.n, api_key, version, KW_RECORDS_INPUT_SPANS, 0, &t3.p, &t3.n);
        if (!bad[0] && st3 != st2) snprintf(bad, sizeof bad, "layout 3: status %d, layout 2 %d", st3, st2);
        if (!bad[0] && st3 == KW_OK) {
            kwj_value *j3 = frame_table_json(t3, 3, id);
            if (!j3 || rd32(t3.p + KW_TABLE_JSON_LENGTH) != rd32(t.p + KW_TABLE_JSON_LENGTH) ||
                memcmp(t3.p + rd32(t3.p + KW_TABLE_JSON_OFFSET), t.p + rd32(t.p + KW_TABLE_JSON_OFFSET), (size_t)rd32(t.p + KW_TABLE_JSON_LENGTH)) != 0 ||
                rd32(t3.p + KW_TABLE_RECORD_COUNT) != rd32(t.p + KW_TABLE_RECORD_COUNT) || input_spans_ok(t3, frame.n, id) < 0)
                snprintf(bad, sizeof bad, "layout 3: another JSON or record count, or spans outside the frame");
            for (int32_t r = 0; !bad[0] && r < rd32(t.p + KW_TABLE_RECORD_COUNT); r++) {
                const char *why = same_entry(t3.p, frame.p, r, t.p, NULL, r, 0);
                if (why[0]) snprintf(bad, sizeof bad, "layout 3 record %d: %s differs from layout 2", r, why);
            }
            kwj_free(j3);
            if (!bad[0]) columns_match(t3, frame.p, frame.n, request ? -1 : api_key, version, KW_RECORDS_INPUT_SPANS, id);
        } else if (!bad[0]) {
            /* Layout 4 (KW_RECORDS_COLUMNS) fails as layout 3 does. */
            out_buf t4 = {0};
            int32_t fl4 = KW_RECORDS_INPUT_SPANS | KW_RECORDS_COLUMNS;
            int32_t st4 = request ? kw_decode_request_frame_records(frame.p, frame.n, fl4, 0, &t4.p, &t4.n)
                                  : kw_decode_response_frame_records(frame.p, frame.n, api_key, version, fl4, 0, &t4.p, &t4.n);
            if (st4 != st3) snprintf(bad, sizeof bad, "layout 4: status %d, layout 3 %d", st4, st3);
            out_free(&t4);
        }
        out_free(&t3);
        check(bad[0] == 0, "framerecords", "%s: %s", id, bad);
        kwj_free(pj);
        kwj_free(tj);
        out_free(&plain);
        out_free(&t);
        out_free(&frame);
        free(body);
        kwj_free(v);
    }
    free(text);
    printf("frame records %s: %ld Produce request / Fetch response vectors, %ld records fields compared (layouts 2, 3 and 4)\n", release,
           vectors, fields);
    check(vectors > 100 && fields > 50, "framerecords", "%s: only %ld vectors, %ld records fields", release, vectors, fields);
}

static void test_record_vectors(void) {
    size_t n = 0;
    char *text = read_file("conformance/vectors/records/kafka-clients-4.4.0.jsonl", &n);
    check(text != NULL, "recvectors", "cannot read the record vectors");
    if (!text) return;
    size_t pos = 0;
    long count = 0;
    for (kwj_value *v; (v = next_jsonl(text, n, &pos)) != NULL;) {
        count++;
        const char *name = kwj_str(kwj_get(v, "name"), NULL);
        uint8_t *bytes;
        size_t bn;
        out_buf tb = {0};
        int32_t st = -100;
        if (kwj_bytes(kwj_get(v, "bytes"), &bytes, &bn) == 0) {
            st = kw_records_decode_table(bytes, (int32_t)bn, 0, 0, &tb.p, &tb.n);
            free(bytes);
        }
        check(st == KW_OK, "recvectors", "%s: status %d %s", name, st, last_error());
        if (st != KW_OK) {
            kwj_free(v);
            continue;
        }
        int32_t nrec = rd32(tb.p + 8), stride = rd32(tb.p + 12), hstride = rd32(tb.p + 24);
        const uint8_t *recs = tb.p + rd32(tb.p + 16), *hdrs = tb.p + rd32(tb.p + 28);
        kwj_value *batches = kwj_get(v, "batches");
        int32_t i = 0;
        char bad[256] = "";
        for (size_t b = 0; b < kwj_len(batches); b++) {
            kwj_value *bt = kwj_at(batches, b), *rs = kwj_get(bt, "records");
            int magic = num(kwj_get(bt, "magic"));
            for (size_t r = 0; r < kwj_len(rs) && !bad[0]; r++, i++) {
                kwj_value *rec = kwj_at(rs, r);
                if (i >= nrec) {
                    snprintf(bad, sizeof bad, "table has %d records, Kafka more", nrec);
                    break;
                }
                const uint8_t *e = recs + (size_t)i * stride;
                int ts_type = str_eq(kwj_get(bt, "timestampType"), "CreateTime")      ? 0
                              : str_eq(kwj_get(bt, "timestampType"), "LogAppendTime") ? 1
                                                                                      : -1;
                int want_epoch = magic == 2 ? num(kwj_get(bt, "partitionLeaderEpoch")) : -1;
                int ctl = kwj_get(rec, "control") ? control_type(kwj_str(kwj_get(kwj_get(rec, "control"), "type"), NULL)) : -1;
                int flags = (kwj_bool(kwj_get(bt, "transactional")) == 1) | (kwj_bool(kwj_get(bt, "control")) == 1) << 1;
                if (rd64(e) != i64(kwj_get(rec, "offset"))) snprintf(bad, sizeof bad, "record %d: offset", i);
                else if (rd64(e + 8) != i64(kwj_get(rec, "timestamp"))) snprintf(bad, sizeof bad, "record %d: timestamp", i);
                else if (rd64(e + 16) != i64(kwj_get(bt, "producerId"))) snprintf(bad, sizeof bad, "record %d: producer id", i);
                else if (!bytes_eq(tb.p, rd32(e + 24), rd32(e + 28), kwj_get(rec, "key"))) snprintf(bad, sizeof bad, "record %d: key", i);
                else if (!bytes_eq(tb.p, rd32(e + 32), rd32(e + 36), kwj_get(rec, "value")))
                    snprintf(bad, sizeof bad, "record %d: value", i);
                else if (rd32(e + 48) != num(kwj_get(rec, "sequence"))) snprintf(bad, sizeof bad, "record %d: sequence", i);
                else if (rd32(e + 52) != want_epoch) snprintf(bad, sizeof bad, "record %d: leader epoch", i);
                else if (rd32(e + 56) != num(kwj_get(bt, "producerEpoch"))) snprintf(bad, sizeof bad, "record %d: producer epoch", i);
                else if (rd32(e + 60) != magic) snprintf(bad, sizeof bad, "record %d: magic", i);
                else if (rd32(e + 64) != compression_of(kwj_str(kwj_get(bt, "compression"), NULL)))
                    snprintf(bad, sizeof bad, "record %d: compression", i);
                else if (rd32(e + 68) != ts_type) snprintf(bad, sizeof bad, "record %d: timestamp type %d", i, rd32(e + 68));
                else if (rd32(e + 72) != flags) snprintf(bad, sizeof bad, "record %d: flags", i);
                else if (rd32(e + 76) != ctl) snprintf(bad, sizeof bad, "record %d: control type %d", i, rd32(e + 76));
                kwj_value *hs = kwj_get(rec, "headers");
                if (!bad[0] && rd32(e + 44) != (int32_t)kwj_len(hs)) snprintf(bad, sizeof bad, "record %d: header count", i);
                for (size_t h = 0; !bad[0] && h < kwj_len(hs); h++) {
                    const uint8_t *he = hdrs + (size_t)(rd32(e + 40) + (int32_t)h) * hstride;
                    size_t kl;
                    const char *k = kwj_str(kwj_get(kwj_at(hs, h), "key"), &kl);
                    if (!k || rd32(he + 4) != (int32_t)kl || memcmp(tb.p + rd32(he), k, kl) != 0 ||
                        !bytes_eq(tb.p, rd32(he + 8), rd32(he + 12), kwj_get(kwj_at(hs, h), "value")))
                        snprintf(bad, sizeof bad, "record %d: header %zu", i, h);
                }
            }
        }
        if (!bad[0] && i != nrec) snprintf(bad, sizeof bad, "table has %d records, Kafka %d", nrec, i);
        check(!bad[0], "recvectors", "%s: %s", name, bad);
        out_free(&tb);
        kwj_free(v);
    }
    check(count >= 20, "recvectors", "only %ld record vectors", count);
}

/* ---- the reader itself -------------------------------------------------------------- */

static void test_json_reader(void) {
    const char *bad[] = {"", "{", "[1,]", "{\"a\"1}", "\"\\x\"", "01", "1.", "-", "\"\\ud800\"", "tru", "[1] x", "\"a\x01\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[128];
        kwj_value *v = kwj_parse(bad[i], strlen(bad[i]), err, sizeof err);
        check(v == NULL && strstr(err, "offset") != NULL, "json", "malformed %s accepted", bad[i]);
        kwj_free(v);
    }
    const char *ok = "{\"s\":\"a\\u00e9\\ud83d\\ude00\\n\",\"n\":-12.5e3,\"i\":\"-9223372036854775808\",\"b\":\"AAEC/w==\","
                     "\"u\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"a\":[true,false,null]}";
    kwj_value *v = kwj_parse(ok, strlen(ok), NULL, 0);
    size_t sl = 0;
    const char *s = kwj_str(kwj_get(v, "s"), &sl);
    check(s && sl == 8 && memcmp(s, "a\xc3\xa9\xf0\x9f\x98\x80\n", 8) == 0, "json", "string escapes");
    int64_t x = 0;
    check(kwj_int64(kwj_get(v, "i"), &x) == 0 && x == INT64_MIN, "json", "int64 string");
    check(kwj_int64(kwj_get(v, "n"), &x) == -1, "json", "a float read as an int64");
    uint8_t *b = NULL;
    size_t bn = 0;
    check(kwj_bytes(kwj_get(v, "b"), &b, &bn) == 0 && bn == 4 && b[3] == 0xff, "json", "base64");
    free(b);
    check(kwj_bytes(kwj_get(v, "u"), &b, &bn) == 0 && bn == 16, "json", "uuid base64url");
    free(b);
    kwj_value *a = kwj_get(v, "a");
    check(kwj_len(a) == 3 && kwj_bool(kwj_at(a, 0)) == 1 && kwj_is_null(kwj_at(a, 2)) && !kwj_at(a, 3), "json", "array");
    check(a && memcmp(ok + a->raw_off, "[true,false,null]", a->raw_len) == 0, "json", "raw span");
    kwj_free(v);
    char deep[3000];
    memset(deep, '[', sizeof deep);
    check(kwj_parse(deep, sizeof deep, NULL, 0) == NULL, "json", "nesting limit");
}

/* The frame called name in abi/testdata/frames.txt (the frames every binding's tests
 * share), hex-decoded into a malloc'd buffer; NULL when missing. */
static uint8_t *fixture_frame(const char *name, size_t *len) {
    size_t n;
    char *text = read_file("abi/testdata/frames.txt", &n);
    if (!text) return NULL;
    uint8_t *out = NULL;
    size_t nl = strlen(name);
    for (char *line = text; line < text + n;) {
        char *end = memchr(line, '\n', (size_t)(text + n - line));
        if (!end) end = text + n;
        if (line[0] != '#' && (size_t)(end - line) > nl + 1 && memcmp(line, name, nl) == 0 && line[nl] == ' ') {
            const char *h = line + nl + 1;
            size_t hl = (size_t)(end - h) / 2;
            out = malloc(hl);
            for (size_t i = 0; i < hl; i++) {
                unsigned v;
                sscanf(h + 2 * i, "%2x", &v);
                out[i] = (uint8_t)v;
            }
            *len = hl;
            break;
        }
        line = end + 1;
    }
    free(text);
    return out;
}

static void test_newcomer(void) {
    const char *g = "newcomer";
    size_t pn = 0, fn = 0;
    uint8_t *produce = fixture_frame("produce-v9-invalid-partitions", &pn);
    uint8_t *fetch = fixture_frame("fetch-v12-partial-batch", &fn);
    check(produce != NULL && fetch != NULL, g, "abi/testdata/frames.txt has both frames");
    if (!produce || !fetch) {
        free(produce);
        free(fetch);
        return;
    }
    /* Kafka's verdict per Produce partition, in the records references of the frame JSON. */
    out_buf o = {0};
    int32_t st = kw_decode_request_frame_records(produce, (int32_t)pn, 0, 0, &o.p, &o.n);
    check(st == KW_OK, g, "decode the Produce frame with its records: %s", st == KW_OK ? "" : last_error());
    if (st == KW_OK) {
        int32_t jo = rd32(o.p + KW_TABLE_JSON_OFFSET), jl = rd32(o.p + KW_TABLE_JSON_LENGTH);
        kwj_value *doc = kwj_parse((const char *)o.p + jo, (size_t)jl, NULL, 0);
        kwj_value *t = kwj_at(kwj_get(kwj_get(doc, "body"), "topicData"), 0);
        kwj_value *parts = kwj_get(t, "partitionData");
        check(str_eq(kwj_get(t, "name"), "events") && kwj_len(parts) == 5, g, "topic events with 5 partitions");
        const int32_t want[5] = {KW_ERROR_NONE, KW_ERROR_INVALID_RECORD, KW_ERROR_INVALID_RECORD, KW_ERROR_INVALID_RECORD,
                                 KW_ERROR_INVALID_RECORD};
        for (size_t i = 0; i < 5 && i < kwj_len(parts); i++) {
            kwj_value *p = kwj_at(parts, i);
            kwj_value *inv = kwj_get(kwj_get(p, "records"), "invalid");
            int32_t code = inv ? num(kwj_get(inv, "errorCode")) : KW_ERROR_NONE;
            check(code == want[i] && num(kwj_get(p, "index")) == (int32_t)i, g, "partition %zu: error code %d, want %d", i, code,
                  want[i]);
            if (inv) check(str_eq(kwj_get(inv, "error"), "INVALID_RECORD") && kwj_get(inv, "reason"), g, "partition %zu: verdict", i);
        }
        kwj_free(doc);
        out_free(&o);
    }
    /* A Fetch response ending in a partial batch decodes; the partial batch is skipped. */
    st = kw_decode_response_frame_records(fetch, (int32_t)fn, KW_API_FETCH, 12, 0, 0, &o.p, &o.n);
    check(st == KW_OK, g, "decode the Fetch v12 frame: %s", st == KW_OK ? "" : last_error());
    if (st == KW_OK) {
        int32_t jo = rd32(o.p + KW_TABLE_JSON_OFFSET), jl = rd32(o.p + KW_TABLE_JSON_LENGTH);
        kwj_value *doc = kwj_parse((const char *)o.p + jo, (size_t)jl, NULL, 0);
        kwj_value *r = kwj_get(kwj_at(kwj_get(kwj_at(kwj_get(kwj_get(doc, "body"), "responses"), 0), "partitions"), 0), "records");
        check(num(kwj_get(r, "recordCount")) == 2 && num(kwj_get(r, "skippedBytes")) > 0, g, "2 records, a partial batch skipped");
        kwj_free(doc);
        out_free(&o);
    }
    /* At the wrong version: the error names the version that decodes the frame. */
    st = kw_decode_response_frame(fetch, (int32_t)fn, KW_API_FETCH, 11, &o.p, &o.n);
    check(st == KW_ERR_DECODE, g, "Fetch v12 bytes at v11: status %d", st);
    kwj_value *e = last_error_json();
    kwj_value *h = kwj_get(e, "hint");
    check(num(kwj_get(h, "version")) == 12 && str_eq(kwj_get(h, "message"), "FetchResponse") &&
              str_eq(kwj_get(h, "text"), "the bytes decode as FetchResponse v12: was the request v12?"),
          g, "kw_last_error_json has the hint");
    check(strstr(last_error(), "; the bytes decode as FetchResponse v12: was the request v12?") != NULL, g,
          "kw_last_error says it: %s", last_error());
    kwj_free(e);
    /* A misspelt message name. */
    st = decode_message("FetchRespons", 4, (const uint8_t *)"", 0, &o);
    check(st == KW_ERR_UNKNOWN_API && strstr(last_error(), "did you mean FetchResponse?") != NULL, g, "did you mean: %s",
          last_error());
    check(KW_API_PRODUCE == 0 && KW_API_API_VERSIONS == 18 && KW_ERROR_UNKNOWN_TOPIC_OR_PARTITION == 3, g,
          "kwire_constants.h");
    free(produce);
    free(fetch);
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "static") != 0 && strcmp(argv[2], "shared") != 0)) {
        fprintf(stderr, "usage: %s <repository root> static|shared\n", argv[0]);
        return 2;
    }
    root = argv[1];
    test_linkage(argv[2]);
    test_version();
    test_json_reader();
    test_catalogue();
    if (catalogue) {
        test_header_versions();
        test_frames();
        test_errors();
        test_trailing_bytes();
        test_int64();
        test_records();
        kwj_value *rels = kwj_get(catalogue, "specReleases");
        for (size_t i = 0; i < kwj_len(rels); i++) test_vectors(kwj_str(kwj_at(rels, i), NULL));
        test_record_vectors();
        test_frame_records();
        test_host_decompression();
        for (size_t i = 0; i < kwj_len(rels); i++) test_frame_records_vectors(kwj_str(kwj_at(rels, i), NULL));
        test_newcomer();
    }
    kwj_free(catalogue);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}
