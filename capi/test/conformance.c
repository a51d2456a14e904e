/*
 * conformance.c — runs every Kafka-written vector through libkwire, as the native Go
 * runner does: decode (bytes -> kw_decode_message -> JSON, compared semantically with
 * the vector's json), encode (json -> kw_encode_message -> bytes) and round trip
 * (bytes -> JSON -> bytes, all through the library). Renamed fields and superseded
 * versions are handled from the library's own catalogue, as in the Go runner.
 *
 * Then the record tables of ABI 1.2: every Produce request and Fetch response vector in
 * a frame, and every record vector (records/) inside Fetch and Produce frames, through
 * kw_decode_*_frame_records with and without KW_RECORDS_INPUT_SPANS: the layout-3 table
 * against the layout-2 one, record by record, through kwire.h's KW_TABLE_*, KW_REC_*
 * and KW_HDR_* names (see check_spans); and kw_runtime_stats. Prints the coverage table,
 * the frame-records counts and "N passed, N failed".
 *
 * usage: conformance <dir of the vectors>
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>

#include "common.h"

static jval *catalogue;

static size_t first_diff(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    size_t i = 0;
    while (i < an && i < bn && a[i] == b[i]) i++;
    return i;
}

/* find_message resolves a vector's message: by name, else by api key and kind. */
static jval *find_message(const char *name, int api_key, const char *kind, int *alias) {
    jval *msgs = jget(catalogue, "messages");
    *alias = 0;
    for (size_t i = 0; i < msgs->n; i++) {
        jval *n = jget(msgs->items[i], "name");
        if (strcmp(n->s, name) == 0) return msgs->items[i];
    }
    const char *which = strcmp(kind, "request") == 0 ? "request" : strcmp(kind, "response") == 0 ? "response" : NULL;
    if (!which) return NULL;
    jval *apis = jget(catalogue, "apis");
    for (size_t i = 0; i < apis->n; i++) {
        if (jint(jget(apis->items[i], "apiKey"), -1) != api_key) continue;
        const char *target = jget(apis->items[i], which)->s;
        for (size_t j = 0; j < msgs->n; j++)
            if (strcmp(jget(msgs->items[j], "name")->s, target) == 0) {
                *alias = 1;
                return msgs->items[j];
            }
    }
    return NULL;
}

/* apply_rename renames key old to new in the objects at path ("a[].b"). */
static int apply_rename(jval *v, const char *path, const char *old, const char *nw) {
    if (!v || v->t != J_OBJ) return 0;
    if (*path == 0) {
        if (jget(v, nw)) return 0;
        for (size_t i = 0; i < v->n; i++)
            if (strcmp(v->keys[i], old) == 0) {
                free(v->keys[i]);
                v->keys[i] = dupn(nw, strlen(nw));
                v->klens[i] = strlen(nw);
                return 1;
            }
        return 0;
    }
    const char *dot = strchr(path, '.');
    size_t sl = dot ? (size_t)(dot - path) : strlen(path);
    const char *rest = dot ? dot + 1 : path + sl;
    char step[256];
    if (sl >= sizeof step) return 0;
    memcpy(step, path, sl);
    step[sl] = 0;
    int arr = sl > 2 && strcmp(step + sl - 2, "[]") == 0;
    if (arr) step[sl - 2] = 0;
    jval *c = jget(v, step);
    int n = 0;
    if (arr) {
        if (c && c->t == J_ARR)
            for (size_t i = 0; i < c->n; i++) n += apply_rename(c->items[i], rest, old, nw);
        return n;
    }
    return apply_rename(c, rest, old, nw);
}

static int apply_renames(jval *tree, jval *msg) {
    jval *rs = jget(msg, "renames");
    int n = 0;
    for (size_t i = 0; rs && i < rs->n; i++)
        n += apply_rename(tree, jget(rs->items[i], "path")->s, jget(rs->items[i], "old")->s, jget(rs->items[i], "new")->s);
    return n;
}

/* Per-kind tallies for the table. */
enum { K_REQ, K_RESP, K_HDR, K_DATA, K_N };
static const char *kind_names[K_N] = {"request", "response", "header", "data"};
static int kind_index(const char *k) {
    for (int i = 0; i < K_N; i++)
        if (strcmp(k, kind_names[i]) == 0) return i;
    return -1;
}

typedef struct {
    char *kind, *name;
    uint64_t versions; /* bit v set when some vector has version v */
} triple_set;

typedef struct {
    int messages, removed, triples, vectors, fail[3];
    unsigned char keys[1024];
} kind_tally;

static long run_release(const char *dir, const char *rel, long *passed, long *failed, long *excused) {
    char path[4096];
    snprintf(path, sizeof path, "%s/kafka-clients-%s.manifest.json", dir, rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long mlen = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *mtext = (char *)malloc((size_t)mlen);
    if (fread(mtext, 1, (size_t)mlen, f) != (size_t)mlen) {
        fclose(f);
        return -1;
    }
    fclose(f);
    jval *manifest = jparse(mtext, (size_t)mlen, NULL);
    if (!manifest) {
        fprintf(stderr, "%s: bad JSON\n", path);
        return -1;
    }
    jval *mmsgs = jget(manifest, "messages");

    snprintf(path, sizeof path, "%s/kafka-clients-%s.jsonl", dir, rel);
    vector *vs;
    long n = read_vectors(path, &vs, 0);
    if (n < 0) return -1;

    kind_tally tally[K_N];
    memset(tally, 0, sizeof tally);
    int all_keys_n = 0;
    unsigned char all_keys[1024] = {0};
    for (size_t i = 0; i < mmsgs->n; i++) {
        jval *m = mmsgs->items[i];
        int k = kind_index(jget(m, "kind")->s);
        if (k < 0) continue;
        if (jint(jget(m, "minVersion"), -1) < 0) {
            tally[k].removed++;
            continue;
        }
        tally[k].messages++;
        long long key = jint(jget(m, "apiKey"), -1);
        if (key >= 0 && key < 1024) {
            tally[k].keys[key] = 1;
            if (!all_keys[key]) all_keys_n++;
            all_keys[key] = 1;
        }
    }
    triple_set *ts = NULL;
    size_t nts = 0;
    long renamed = 0, shown = 0;
    long rel_excused = 0;

    for (long i = 0; i < n; i++) {
        vector *v = &vs[i];
        int k = kind_index(v->kind);
        if (k >= 0) tally[k].vectors++;
        size_t t;
        for (t = 0; t < nts; t++)
            if (strcmp(ts[t].kind, v->kind) == 0 && strcmp(ts[t].name, v->name) == 0) break;
        if (t == nts) {
            ts = (triple_set *)realloc(ts, (nts + 1) * sizeof *ts);
            ts[nts].kind = v->kind;
            ts[nts].name = v->name;
            ts[nts].versions = 0;
            nts++;
        }
        if (v->version >= 0 && v->version < 64) ts[t].versions |= 1ull << v->version;

        char why[3][600];
        int bad[3] = {0, 0, 0};
        char err[512];
        int alias;
        jval *m = find_message(v->name, v->api_key, v->kind, &alias);
        if (!m) {
            for (int c = 0; c < 3; c++) {
                bad[c] = 1;
                snprintf(why[c], sizeof why[c], "the catalogue has no message %s", v->name);
            }
        } else {
            const char *mname = jget(m, "name")->s;
            int32_t nl = (int32_t)strlen(mname);
            uint8_t *enc = NULL, *dec = NULL, *re = NULL;
            int32_t enc_len = 0, dec_len = 0, re_len = 0;
            int32_t est = kw_encode_message(mname, nl, v->version, (const uint8_t *)v->json, (int32_t)v->json_len, &enc, &enc_len);
            if (est != KW_OK) {
                bad[1] = 1;
                snprintf(why[1], sizeof why[1], "kw_encode_message: status %d: %s", est, last_error(err, sizeof err));
            } else if ((size_t)enc_len != v->bytes_len || memcmp(enc, v->bytes, v->bytes_len) != 0) {
                bad[1] = 1;
                snprintf(why[1], sizeof why[1], "encodes %d bytes, Kafka wrote %zu; first difference at byte %zu", enc_len, v->bytes_len,
                         first_diff(enc, (size_t)enc_len, v->bytes, v->bytes_len));
            }
            int32_t dst = kw_decode_message(mname, nl, v->version, v->bytes, (int32_t)v->bytes_len, &dec, &dec_len);
            if (dst != KW_OK) {
                bad[0] = bad[2] = 1;
                snprintf(why[0], sizeof why[0], "kw_decode_message: status %d: %s", dst, last_error(err, sizeof err));
                snprintf(why[2], sizeof why[2], "skipped: the bytes did not decode");
            } else {
                jval *want = jparse(v->json, v->json_len, NULL);
                jval *got = jparse((const char *)dec, (size_t)dec_len, NULL);
                if (apply_renames(want, m) > 0) renamed++;
                char p[1024] = "$";
                if (!want || !got) {
                    bad[0] = 1;
                    snprintf(why[0], sizeof why[0], "unparsable JSON");
                } else if (jdiff(want, got, p, sizeof p)) {
                    bad[0] = 1;
                    snprintf(why[0], sizeof why[0], "JSON differs at %s", p);
                }
                jfree(want);
                jfree(got);
                int32_t rst = kw_encode_message(mname, nl, v->version, dec, dec_len, &re, &re_len);
                if (rst != KW_OK) {
                    bad[2] = 1;
                    snprintf(why[2], sizeof why[2], "kw_encode_message of the library's JSON: status %d: %s", rst, last_error(err, sizeof err));
                } else if ((size_t)re_len != v->bytes_len || memcmp(re, v->bytes, v->bytes_len) != 0) {
                    bad[2] = 1;
                    snprintf(why[2], sizeof why[2], "re-encodes to %d bytes, input had %zu; first difference at byte %zu", re_len, v->bytes_len,
                             first_diff(re, (size_t)re_len, v->bytes, v->bytes_len));
                }
            }
            if (kw_free(enc) != KW_OK || kw_free(dec) != KW_OK || kw_free(re) != KW_OK) {
                bad[0] = 1;
                snprintf(why[0], sizeof why[0], "kw_free of an output failed");
            }
        }
        int any = bad[0] || bad[1] || bad[2];
        if (any && m) {
            /* Excused as in the Go runner: kwire declares the version superseded for this
             * release and the release's manifest marks it unstable. */
            int declared = 0;
            jval *sup = jget(m, "superseded");
            for (size_t s = 0; sup && s < sup->n; s++)
                if (strcmp(jget(sup->items[s], "release")->s, rel) == 0 && jint(jget(sup->items[s], "version"), -2) == v->version)
                    declared = 1;
            int unstable = 0;
            for (size_t j = 0; declared && j < mmsgs->n; j++)
                if (strcmp(jget(mmsgs->items[j], "name")->s, v->name) == 0 && strcmp(jget(mmsgs->items[j], "kind")->s, v->kind) == 0 &&
                    jint(jget(mmsgs->items[j], "unstableVersion"), -1) == v->version)
                    unstable = 1;
            if (declared && unstable) {
                rel_excused++;
                continue;
            }
        }
        if (any) {
            (*failed)++;
            for (int c = 0; c < 3; c++) {
                if (!bad[c]) continue;
                if (k >= 0) tally[k].fail[c]++;
                if (shown++ < 40) printf("vector %s: %s: %s\n", v->id, c == 0 ? "decode" : c == 1 ? "encode" : "round-trip", why[c]);
            }
        } else {
            (*passed)++;
        }
    }
    for (size_t t = 0; t < nts; t++) {
        int k = kind_index(ts[t].kind);
        if (k >= 0) tally[k].triples += __builtin_popcountll(ts[t].versions);
    }
    printf("kafka-clients %s vs kwire through the ABI (C library)\n", rel);
    printf("%8s  %8s  %15s  %18s  %7s  %11s  %11s  %15s\n", "kind", "messages", "api keys", "(api,version,kind)", "vectors",
           "decode fail", "encode fail", "round-trip fail");
    kind_tally all;
    memset(&all, 0, sizeof all);
    for (int k = 0; k < K_N; k++) {
        char ak[64] = "-";
        if (k == K_REQ || k == K_RESP) {
            int nk = 0;
            for (int i = 0; i < 1024; i++) nk += tally[k].keys[i];
            if (tally[k].removed) snprintf(ak, sizeof ak, "%d (+%d removed)", nk, tally[k].removed);
            else snprintf(ak, sizeof ak, "%d", nk);
        }
        printf("%8s  %8d  %15s  %18d  %7d  %11d  %11d  %15d\n", kind_names[k], tally[k].messages, ak, tally[k].triples,
               tally[k].vectors, tally[k].fail[0], tally[k].fail[1], tally[k].fail[2]);
        all.messages += tally[k].messages;
        all.triples += tally[k].triples;
        all.vectors += tally[k].vectors;
        for (int c = 0; c < 3; c++) all.fail[c] += tally[k].fail[c];
    }
    printf("%8s  %8d  %15d  %18d  %7d  %11d  %11d  %15d\n", "total", all.messages, all_keys_n, all.triples, all.vectors,
           all.fail[0], all.fail[1], all.fail[2]);
    if (renamed) printf("note: %ld vectors use field names that a newer release renamed; compared under the catalogue's declared renames\n", renamed);
    if (rel_excused)
        printf("excused: %ld vectors differ at versions Kafka %s marks unstable and kwire declares superseded (as the Go runner)\n",
               rel_excused, rel);
    *excused += rel_excused;
    for (long i = 0; i < n; i++) {
        free(vs[i].id);
        free(vs[i].name);
        free(vs[i].kind);
        free(vs[i].json);
        free(vs[i].bytes);
    }
    free(vs);
    free(ts);
    jfree(manifest);
    free(mtext);
    return n;
}

/* ---- record tables: layout 3 (KW_RECORDS_INPUT_SPANS) against layout 2 (ABI 1.2) -- */

static int32_t le32(const uint8_t *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static int64_t le64(const uint8_t *p) { return (int64_t)((uint64_t)(uint32_t)le32(p) | (uint64_t)(uint32_t)le32(p + 4) << 32); }

/* A frame-records table with its header read. */
typedef struct {
    const uint8_t *p;
    int32_t n;
    int32_t count, stride, recs, hcount, hstride, hdrs, json_off, json_len;
} rtable;

/* read_table reads the header of a table of layout `layout`; it returns "" or what is
 * wrong with it. */
static const char *read_table(rtable *t, const uint8_t *p, int32_t n, int32_t layout) {
    memset(t, 0, sizeof *t);
    t->p = p;
    t->n = n;
    if (n < KW_TABLE_HEADER_SIZE_2 || memcmp(p, KW_TABLE_MAGIC, 4) != 0) return "no KWRT table header";
    if (le32(p + KW_TABLE_LAYOUT) != layout) return "layout version";
    if (le32(p + KW_TABLE_TOTAL_SIZE) != n) return "total size";
    if (le32(p + KW_TABLE_SKIPPED_BYTES) != 0) return "skipped bytes (not 0)";
    t->count = le32(p + KW_TABLE_RECORD_COUNT);
    t->stride = le32(p + KW_TABLE_RECORD_STRIDE);
    t->recs = le32(p + KW_TABLE_RECORDS_OFFSET);
    t->hcount = le32(p + KW_TABLE_HEADER_COUNT);
    t->hstride = le32(p + KW_TABLE_HEADER_STRIDE);
    t->hdrs = le32(p + KW_TABLE_HEADERS_OFFSET);
    t->json_off = le32(p + KW_TABLE_JSON_OFFSET);
    t->json_len = le32(p + KW_TABLE_JSON_LENGTH);
    if (t->stride < KW_REC_STRIDE || t->hstride < KW_HDR_STRIDE) return "strides";
    if (t->count < 0 || t->hcount < 0 || t->recs < KW_TABLE_HEADER_SIZE_2 || t->recs % 8 != 0 || t->hdrs < KW_TABLE_HEADER_SIZE_2 ||
        (int64_t)t->recs + (int64_t)t->count * t->stride > n || (int64_t)t->hdrs + (int64_t)t->hcount * t->hstride > n)
        return "entries outside the table";
    if (t->json_off < KW_TABLE_HEADER_SIZE_2 || t->json_len < 0 || (int64_t)t->json_off + t->json_len > n) return "JSON span";
    return "";
}

/* resolve reads the (offset, length) pair at off/len of an entry: bytes of the table, or
 * of the input frame when source is KW_SOURCE_INPUT. It returns 0 when the pair is out of
 * its buffer's bounds (or null where it may not be, or null with an offset other than 0),
 * else 1 with *b NULL for a null span. A span into the input must also lie after the
 * frame's size prefix. */
static int resolve(const rtable *t, const uint8_t *in, int32_t in_len, int32_t source, const uint8_t *off, const uint8_t *len,
                   int nullable, const uint8_t **b, int32_t *n) {
    int32_t o = le32(off), l = le32(len);
    *b = NULL;
    *n = l;
    if (l == -1) return nullable && o == 0;
    if (source == KW_SOURCE_INPUT) {
        if (l < 0 || o < 4 || (int64_t)o + l > in_len) return 0;
        *b = in + o;
        return 1;
    }
    if (source != KW_SOURCE_TABLE || l < 0 || o < 0 || (int64_t)o + l > t->n) return 0;
    *b = t->p + o;
    return 1;
}

/* Counts of the layout-3 checks. */
typedef struct {
    long frames, refused, records, from_input, from_table, headers, encodes_refused;
    long passed, failed, shown;
} spans_tally;

static void spans_check(spans_tally *c, int ok, const char *what, const char *why) {
    if (ok) {
        c->passed++;
        return;
    }
    c->failed++;
    if (c->shown++ < 40) printf("frame records %s: %s\n", what, why);
}

#define REC_FIELD(f) {f, #f}
static const struct {
    int32_t at;
    const char *name;
} rec_i64[] = {REC_FIELD(KW_REC_OFFSET), REC_FIELD(KW_REC_TIMESTAMP), REC_FIELD(KW_REC_PRODUCER_ID)},
  rec_i32[] = {REC_FIELD(KW_REC_KEY_LENGTH),      REC_FIELD(KW_REC_VALUE_LENGTH),   REC_FIELD(KW_REC_FIRST_HEADER),
               REC_FIELD(KW_REC_HEADER_COUNT),    REC_FIELD(KW_REC_SEQUENCE),       REC_FIELD(KW_REC_LEADER_EPOCH),
               REC_FIELD(KW_REC_PRODUCER_EPOCH),  REC_FIELD(KW_REC_MAGIC),          REC_FIELD(KW_REC_COMPRESSION),
               REC_FIELD(KW_REC_TIMESTAMP_TYPE),  REC_FIELD(KW_REC_FLAGS),          REC_FIELD(KW_REC_CONTROL_TYPE),
               REC_FIELD(KW_REC_SCHEMA_SOURCE),   REC_FIELD(KW_REC_SCHEMA_ID),      REC_FIELD(KW_REC_SCHEMA_VERSION)};
#undef REC_FIELD

/* compare_tables compares a layout-3 table (t3, from the frame `in`) with the layout-2
 * table of the same frame: the same JSON and counts; per record every field equal but
 * the spans and KW_REC_SOURCE, which is KW_SOURCE_TABLE in layout 2 and says in layout 3
 * where key, value and headers are; those resolved through it are the same bytes.
 * Compressed records must come from the table, uncompressed magic 2 data records from
 * the input. It returns "" or what differs, in why. */
static void compare_tables(spans_tally *c, const rtable *t2, const rtable *t3, const uint8_t *in, int32_t in_len, char *why, size_t cap) {
    why[0] = 0;
    if (t2->count != t3->count || t2->hcount != t3->hcount) {
        snprintf(why, cap, "%d records and %d headers, layout 2 %d and %d", t3->count, t3->hcount, t2->count, t2->hcount);
        return;
    }
    if (t2->json_len != t3->json_len || memcmp(t2->p + t2->json_off, t3->p + t3->json_off, (size_t)t2->json_len) != 0) {
        snprintf(why, cap, "the frame JSON differs from layout 2's");
        return;
    }
    if (t3->n > t2->n) {
        snprintf(why, cap, "layout 3 is larger than layout 2 (%d > %d bytes)", t3->n, t2->n);
        return;
    }
    for (int32_t i = 0; i < t3->count; i++) {
        const uint8_t *e2 = t2->p + t2->recs + (size_t)i * t2->stride, *e3 = t3->p + t3->recs + (size_t)i * t3->stride;
        for (size_t f = 0; f < sizeof rec_i64 / sizeof rec_i64[0]; f++)
            if (le64(e2 + rec_i64[f].at) != le64(e3 + rec_i64[f].at)) {
                snprintf(why, cap, "record %d: %s differs", i, rec_i64[f].name);
                return;
            }
        for (size_t f = 0; f < sizeof rec_i32 / sizeof rec_i32[0]; f++)
            if (le32(e2 + rec_i32[f].at) != le32(e3 + rec_i32[f].at)) {
                snprintf(why, cap, "record %d: %s differs (%d, layout 2 %d)", i, rec_i32[f].name, le32(e3 + rec_i32[f].at),
                         le32(e2 + rec_i32[f].at));
                return;
            }
        if (t2->stride == t3->stride && memcmp(e2 + KW_REC_STRIDE, e3 + KW_REC_STRIDE, (size_t)(t3->stride - KW_REC_STRIDE)) != 0) {
            snprintf(why, cap, "record %d: bytes past KW_REC_STRIDE differ", i);
            return;
        }
        int32_t s2 = le32(e2 + KW_REC_SOURCE), s3 = le32(e3 + KW_REC_SOURCE);
        int32_t compression = le32(e3 + KW_REC_COMPRESSION), magic = le32(e3 + KW_REC_MAGIC), flags = le32(e3 + KW_REC_FLAGS);
        if (s2 != KW_SOURCE_TABLE || (s3 != KW_SOURCE_TABLE && s3 != KW_SOURCE_INPUT)) {
            snprintf(why, cap, "record %d: KW_REC_SOURCE %d (layout 2: %d)", i, s3, s2);
            return;
        }
        if (compression != KW_COMPRESSION_NONE && s3 != KW_SOURCE_TABLE) {
            snprintf(why, cap, "record %d: compressed (%d), but KW_SOURCE_INPUT", i, compression);
            return;
        }
        if (compression == KW_COMPRESSION_NONE && magic == 2 && (flags & 2) == 0 && s3 != KW_SOURCE_INPUT) {
            snprintf(why, cap, "record %d: an uncompressed magic 2 record copied into the table", i);
            return;
        }
        const uint8_t *b2, *b3;
        int32_t n2, n3;
        static const struct {
            int32_t off, len;
            const char *name;
        } rspans[] = {{KW_REC_KEY_OFFSET, KW_REC_KEY_LENGTH, "key"}, {KW_REC_VALUE_OFFSET, KW_REC_VALUE_LENGTH, "value"}};
        for (int k = 0; k < 2; k++) {
            if (!resolve(t2, in, in_len, s2, e2 + rspans[k].off, e2 + rspans[k].len, 1, &b2, &n2) ||
                !resolve(t3, in, in_len, s3, e3 + rspans[k].off, e3 + rspans[k].len, 1, &b3, &n3)) {
                snprintf(why, cap, "record %d: its %s lies outside its buffer (source %d)", i, rspans[k].name, s3);
                return;
            }
            if (n2 != n3 || (b2 == NULL) != (b3 == NULL) || (n2 > 0 && memcmp(b2, b3, (size_t)n2) != 0)) {
                snprintf(why, cap, "record %d: the %s differs from layout 2's", i, rspans[k].name);
                return;
            }
        }
        int32_t first = le32(e3 + KW_REC_FIRST_HEADER), hc = le32(e3 + KW_REC_HEADER_COUNT);
        if (first < 0 || hc < 0 || (int64_t)first + hc > t3->hcount) {
            snprintf(why, cap, "record %d: headers %d+%d of %d", i, first, hc, t3->hcount);
            return;
        }
        for (int32_t j = first; j < first + hc; j++) {
            const uint8_t *h2 = t2->p + t2->hdrs + (size_t)j * t2->hstride, *h3 = t3->p + t3->hdrs + (size_t)j * t3->hstride;
            static const struct {
                int32_t off, len;
                int nullable;
            } hspans[] = {{KW_HDR_KEY_OFFSET, KW_HDR_KEY_LENGTH, 0}, {KW_HDR_VALUE_OFFSET, KW_HDR_VALUE_LENGTH, 1}};
            for (int k = 0; k < 2; k++) {
                if (!resolve(t2, in, in_len, s2, h2 + hspans[k].off, h2 + hspans[k].len, hspans[k].nullable, &b2, &n2) ||
                    !resolve(t3, in, in_len, s3, h3 + hspans[k].off, h3 + hspans[k].len, hspans[k].nullable, &b3, &n3)) {
                    snprintf(why, cap, "record %d: header %d's %s lies outside its buffer", i, j - first, k ? "value" : "key");
                    return;
                }
                if (n2 != n3 || (b2 == NULL) != (b3 == NULL) || (n2 > 0 && memcmp(b2, b3, (size_t)n2) != 0)) {
                    snprintf(why, cap, "record %d: header %d's %s differs from layout 2's", i, j - first, k ? "value" : "key");
                    return;
                }
            }
        }
        c->records++;
        c->headers += hc;
        if (s3 == KW_SOURCE_INPUT) c->from_input++;
        else c->from_table++;
    }
}

/* check_frame decodes a request frame (request) or a response frame of (api_key,
 * version) with and without KW_RECORDS_INPUT_SPANS and compares the two tables; a
 * request's tables also go to kw_encode_request_frame_records, which refuses the layout-3
 * one when a record points into the input. */
static void check_frame(spans_tally *c, int request, int api_key, int version, const uint8_t *in, int32_t in_len, const char *what) {
    uint8_t *o2 = NULL, *o3 = NULL;
    int32_t n2 = 0, n3 = 0, st2, st3;
    char why[600], e2[512], e3[512];
    if (request) {
        st2 = kw_decode_request_frame_records(in, in_len, 0, 0, &o2, &n2);
        last_error(e2, sizeof e2);
        st3 = kw_decode_request_frame_records(in, in_len, KW_RECORDS_INPUT_SPANS, 0, &o3, &n3);
        last_error(e3, sizeof e3);
    } else {
        st2 = kw_decode_response_frame_records(in, in_len, api_key, version, 0, 0, &o2, &n2);
        last_error(e2, sizeof e2);
        st3 = kw_decode_response_frame_records(in, in_len, api_key, version, KW_RECORDS_INPUT_SPANS, 0, &o3, &n3);
        last_error(e3, sizeof e3);
    }
    c->frames++;
    if (st2 != KW_OK || st3 != KW_OK) {
        snprintf(why, sizeof why, "status %d (%.200s), layout 2 %d (%.200s)", st3, e3, st2, e2);
        spans_check(c, st2 == st3 && strcmp(e2, e3) == 0 && o3 == NULL, what, why);
        c->refused++;
        kw_free(o2);
        kw_free(o3);
        return;
    }
    rtable t2, t3;
    const char *bad2 = read_table(&t2, o2, n2, 2), *bad3 = read_table(&t3, o3, n3, 3);
    snprintf(why, sizeof why, "layout-2 table: %s; layout-3 table: %s", bad2, bad3);
    spans_check(c, !bad2[0] && !bad3[0], what, why);
    if (!bad2[0] && !bad3[0]) {
        compare_tables(c, &t2, &t3, in, in_len, why, sizeof why);
        spans_check(c, why[0] == 0, what, why);
    }
    if (request && !bad2[0] && !bad3[0] && why[0] == 0) {
        int input = 0;
        for (int32_t i = 0; i < t3.count; i++) input += le32(t3.p + t3.recs + (size_t)i * t3.stride + KW_REC_SOURCE) == KW_SOURCE_INPUT;
        uint8_t *f2 = NULL, *f3 = NULL;
        int32_t fn2 = 0, fn3 = 0;
        int32_t es2 = kw_encode_request_frame_records(o2 + t2.json_off, t2.json_len, o2, n2, &f2, &fn2);
        int32_t es3 = kw_encode_request_frame_records(o3 + t3.json_off, t3.json_len, o3, n3, &f3, &fn3);
        if (input) {
            const uint8_t *ej;
            int32_t ejn;
            jval *ejv = kw_last_error_json(&ej, &ejn) == KW_OK ? jparse((const char *)ej, (size_t)ejn, NULL) : NULL;
            jval *path = jget(ejv, "path");
            snprintf(why, sizeof why, "kw_encode_request_frame_records of a table pointing into its input: status %d, path %.200s", es3,
                     path && path->t == J_STR ? path->s : "(none)");
            spans_check(c, es3 == KW_ERR_JSON && f3 == NULL && path && path->t == J_STR && strstr(path->s, "records") != NULL, what, why);
            jfree(ejv);
            c->encodes_refused++;
        } else {
            snprintf(why, sizeof why, "kw_encode_request_frame_records: status %d, layout 2 %d", es3, es2);
            spans_check(c, es3 == es2 && fn3 == fn2 && (fn2 == 0 || memcmp(f2, f3, (size_t)fn2) == 0), what, why);
        }
        kw_free(f2);
        kw_free(f3);
    }
    kw_free(o2);
    kw_free(o3);
}

/* frame_around puts a size prefix and a header (correlation id 7, client id "c") around
 * the body of a request or response of (api_key, version); NULL when the header cannot
 * be written. The caller frees the frame with free(). */
static uint8_t *frame_around(int request, int api_key, int version, const uint8_t *body, size_t bn, int32_t *len) {
    int32_t rq = 0, rs = 0;
    if (kw_header_versions(api_key, version, &rq, &rs) != KW_OK) return NULL;
    char hj[160];
    if (request)
        snprintf(hj, sizeof hj, "{\"requestApiKey\":%d,\"requestApiVersion\":%d,\"correlationId\":7,\"clientId\":\"c\"}", api_key, version);
    else
        snprintf(hj, sizeof hj, "{\"correlationId\":7}");
    const char *hname = request ? "RequestHeader" : "ResponseHeader";
    uint8_t *h = NULL;
    int32_t hn = 0;
    if (kw_encode_message(hname, (int32_t)strlen(hname), request ? rq : rs, (const uint8_t *)hj, (int32_t)strlen(hj), &h, &hn) != KW_OK)
        return NULL;
    size_t total = (size_t)hn + bn;
    uint8_t *f = (uint8_t *)malloc(4 + total);
    f[0] = (uint8_t)(total >> 24), f[1] = (uint8_t)(total >> 16), f[2] = (uint8_t)(total >> 8), f[3] = (uint8_t)total;
    memcpy(f + 4, h, (size_t)hn);
    if (bn) memcpy(f + 4 + hn, body, bn);
    kw_free(h);
    *len = (int32_t)(4 + total);
    return f;
}

/* spans_release: every Produce request and Fetch response vector of a release, framed. */
static long spans_release(spans_tally *c, const char *dir, const char *rel) {
    char path[4096];
    snprintf(path, sizeof path, "%s/kafka-clients-%s.jsonl", dir, rel);
    vector *vs;
    long n = read_vectors(path, &vs, 0), used = 0;
    if (n < 0) return -1;
    for (long i = 0; i < n; i++) {
        vector *v = &vs[i];
        int request = strcmp(v->kind, "request") == 0;
        if ((v->api_key == 0 && request) || (v->api_key == 1 && strcmp(v->kind, "response") == 0)) {
            int32_t fl = 0;
            uint8_t *f = frame_around(request, v->api_key, v->version, v->bytes, v->bytes_len, &fl);
            spans_check(c, f != NULL, v->id, "cannot frame the vector");
            if (f) check_frame(c, request, v->api_key, v->version, f, fl, v->id);
            free(f);
            used++;
        }
        free(v->id);
        free(v->name);
        free(v->kind);
        free(v->json);
        free(v->bytes);
    }
    free(vs);
    return used;
}

/* spans_records: every record vector of the records folder (each .jsonl) inside Fetch v4, v12 and v16
 * responses and a Produce v9 request (the records in partitions 0 and 2, partition 1's
 * null). */
static long spans_records(spans_tally *c, const char *dir) {
    char rdir[4096];
    snprintf(rdir, sizeof rdir, "%s/records", dir);
    DIR *d = opendir(rdir);
    if (!d) {
        perror(rdir);
        return -1;
    }
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl < 6 || strcmp(de->d_name + nl - 6, ".jsonl") != 0) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", rdir, de->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) {
            perror(path);
            closedir(d);
            return -1;
        }
        char *line = NULL;
        size_t lcap = 0;
        ssize_t len;
        while ((len = getline(&line, &lcap, f)) > 0) {
            if (len <= 1) continue;
            jval *t = jparse(line, (size_t)len - (line[len - 1] == '\n'), NULL);
            jval *name = jget(t, "name"), *b = jget(t, "bytes");
            if (!t || !name || name->t != J_STR || !b || b->t != J_STR) {
                spans_check(c, 0, path, "a line without name and bytes");
                jfree(t);
                continue;
            }
            n++;
            size_t cap = 2 * b->slen + 1024;
            char *json = (char *)malloc(cap);
            for (int k = 0; k < 4; k++) {
                static const int fetch_versions[3] = {4, 12, 16};
                int request = k == 3, version = request ? 9 : fetch_versions[k];
                if (request)
                    snprintf(json, cap,
                             "{\"header\":{\"requestApiKey\":0,\"requestApiVersion\":9,\"correlationId\":6,\"clientId\":\"c\"},"
                             "\"body\":{\"acks\":-1,\"timeoutMs\":1000,\"topicData\":[{\"name\":\"t\",\"partitionData\":["
                             "{\"index\":0,\"records\":\"%s\"},{\"index\":1,\"records\":null},{\"index\":2,\"records\":\"%s\"}]}]}}",
                             b->s, b->s);
                else
                    snprintf(json, cap,
                             "{\"header\":{\"correlationId\":5},\"body\":{\"responses\":[{%s,\"partitions\":["
                             "{\"partitionIndex\":0,\"highWatermark\":\"10\",\"records\":\"%s\"},"
                             "{\"partitionIndex\":1,\"highWatermark\":\"10\",\"records\":null},"
                             "{\"partitionIndex\":2,\"highWatermark\":\"10\",\"records\":\"%s\"}]}]}}",
                             version >= 13 ? "\"topicId\":\"AAAAAAAAAAAAAAAAAAAAAQ\"" : "\"topic\":\"t\"", b->s, b->s);
                uint8_t *frame = NULL;
                int32_t fl = 0;
                int32_t st = request ? kw_encode_request_frame((const uint8_t *)json, (int32_t)strlen(json), &frame, &fl)
                                     : kw_encode_response_frame((const uint8_t *)json, (int32_t)strlen(json), 1, version, &frame, &fl);
                char what[512], err[256];
                snprintf(what, sizeof what, "%.200s in %s v%d", name->s, request ? "Produce" : "Fetch", version);
                spans_check(c, st == KW_OK, what, last_error(err, sizeof err));
                if (st == KW_OK) check_frame(c, request, request ? 0 : 1, version, frame, fl, what);
                kw_free(frame);
            }
            free(json);
            jfree(t);
        }
        free(line);
        fclose(f);
    }
    closedir(d);
    return n;
}

/* runtime_stat reads one figure of kw_runtime_stats; -1 when it is not there. */
static long long runtime_stat(const char *key, spans_tally *c) {
    uint8_t *out = NULL;
    int32_t n = 0;
    char err[256];
    int32_t st = kw_runtime_stats(&out, &n);
    spans_check(c, st == KW_OK && out != NULL, "kw_runtime_stats", last_error(err, sizeof err));
    jval *v = st == KW_OK ? jparse((const char *)out, (size_t)n, NULL) : NULL;
    jval *x = jget(v, key);
    long long r = x && x->t == J_NUM && jnum_is_int(x) ? jint(x, -1) : -1;
    jfree(v);
    kw_free(out);
    return r;
}

/* check_runtime_stats: the JSON has the figures kwire.h names, and liveBuffers counts a
 * kw_alloc buffer until it is freed. */
static void check_runtime_stats(spans_tally *c) {
    static const char *keys[] = {"gcCycles", "heapAllocs", "heapAllocBytes", "heapLiveBytes", "runtimeBytes", "liveBuffers", "liveBufferBytes"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char why[128];
        snprintf(why, sizeof why, "no integer \"%s\" >= 0", keys[i]);
        spans_check(c, runtime_stat(keys[i], c) >= 0, "kw_runtime_stats", why);
    }
    long long before = runtime_stat("liveBuffers", c);
    uint8_t *p = kw_alloc(100);
    long long during = runtime_stat("liveBuffers", c);
    kw_free(p);
    long long after = runtime_stat("liveBuffers", c);
    char why[160];
    snprintf(why, sizeof why, "liveBuffers %lld, with one more kw_alloc buffer %lld, freed %lld", before, during, after);
    spans_check(c, p != NULL && during == before + 1 && after == before, "kw_runtime_stats", why);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <conformance/vectors>\n", argv[0]);
        return 2;
    }
    int32_t ver = kw_abi_version();
    if ((ver >> 16) != KW_ABI_MAJOR || (ver & 0xffff) < KW_ABI_MINOR) {
        fprintf(stderr, "library ABI %d.%d, header %d.%d\n", ver >> 16, ver & 0xffff, KW_ABI_MAJOR, KW_ABI_MINOR);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    uint8_t *cat;
    int32_t cat_len;
    char err[512];
    if (kw_api_catalogue(&cat, &cat_len) != KW_OK) {
        fprintf(stderr, "kw_api_catalogue: %s\n", last_error(err, sizeof err));
        printf("0 passed, 1 failed\n");
        return 1;
    }
    catalogue = jparse((const char *)cat, (size_t)cat_len, NULL);
    kw_free(cat);
    jval *rels = jget(catalogue, "specReleases");
    if (!rels || rels->n == 0) {
        fprintf(stderr, "catalogue without specReleases\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    long passed = 0, failed = 0, excused = 0, total = 0;
    for (size_t i = 0; i < rels->n; i++) {
        long n = run_release(argv[1], rels->items[i]->s, &passed, &failed, &excused);
        if (n <= 0) {
            fprintf(stderr, "release %s: no vectors\n", rels->items[i]->s);
            failed++;
            continue;
        }
        total += n;
    }
    printf("%ld vectors through libkwire (%ld excused)\n", total, excused);

    spans_tally c;
    memset(&c, 0, sizeof c);
    long framed = 0, recvecs = spans_records(&c, argv[1]);
    for (size_t i = 0; i < rels->n; i++) {
        long n = spans_release(&c, argv[1], rels->items[i]->s);
        if (n > 0) framed += n;
        char why[128];
        snprintf(why, sizeof why, "release %s: %ld Produce request / Fetch response vectors", rels->items[i]->s, n);
        spans_check(&c, n > 100, "vectors", why);
    }
    spans_check(&c, recvecs >= 20, "record vectors", "fewer than 20");
    spans_check(&c, c.from_input > 0 && c.from_table > 0 && c.encodes_refused > 0, "tables",
                "no record from the input, none from the table, or no refused encode");
    check_runtime_stats(&c);
    jfree(catalogue);
    printf("frame records, layout 3 (KW_RECORDS_INPUT_SPANS) against layout 2: %ld frames (%ld Produce/Fetch vectors, %ld record "
           "vectors in 4 frames each), %ld refused alike; %ld records (%ld from the input, %ld from the table), %ld headers; "
           "%ld layout-3 Produce tables refused by kw_encode_request_frame_records; %ld checks failed\n",
           c.frames, framed, recvecs, c.refused, c.records, c.from_input, c.from_table, c.headers, c.encodes_refused, c.failed);
    passed += c.passed;
    failed += c.failed;
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
