/*
 * conformance.c — runs every Kafka-written vector through libkwire, as the native Go
 * runner does: decode (bytes -> kw_decode_message -> JSON, compared semantically with
 * the vector's json), encode (json -> kw_encode_message -> bytes) and round trip
 * (bytes -> JSON -> bytes, all through the library). Renamed fields and superseded
 * versions are handled from the library's own catalogue, as in the Go runner. Prints the
 * coverage table and "N passed, N failed".
 *
 * usage: conformance <dir of the vectors>
 */
#define _POSIX_C_SOURCE 200809L
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
    jfree(catalogue);
    printf("%ld vectors through libkwire (%ld excused)\n", total, excused);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
