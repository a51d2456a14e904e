/*
 * threads.c — 8 threads decode and encode the vectors through libkwire at the same time.
 * Each thread checks every result against the one computed single-threaded first, makes
 * its own failing calls and checks that kw_last_error reports its own error (the last
 * error is per thread), and that a success clears it. Prints "N passed, N failed".
 *
 * usage: threads <vectors .jsonl file> [rounds]
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>

#include "common.h"

#define THREADS 8

static vector *vs;
static long nvs;
static uint8_t **want_json;
static int32_t *want_json_len;
static int rounds = 3;
static atomic_long passed, failed;

static void fail(int t, const char *what, const char *id) {
    atomic_fetch_add(&failed, 1);
    if (atomic_load(&failed) < 20) fprintf(stderr, "thread %d: %s (%s)\n", t, what, id);
}

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    char err[512], want[64];
    for (int r = 0; r < rounds; r++) {
        for (long i = 0; i < nvs; i++) {
            long j = (i * 7 + t * 131 + r * 17) % nvs; /* each thread walks its own order */
            vector *v = &vs[j];
            if (!want_json[j]) continue;
            int32_t nl = (int32_t)strlen(v->name);
            uint8_t *out;
            int32_t len;
            if (kw_decode_message(v->name, nl, v->version, v->bytes, (int32_t)v->bytes_len, &out, &len) != KW_OK) {
                fail(t, "decode failed", v->id);
                continue;
            }
            int ok = len == want_json_len[j] && memcmp(out, want_json[j], (size_t)len) == 0;
            kw_free(out);
            if (!ok) {
                fail(t, "decode differs from the single-threaded result", v->id);
                continue;
            }
            if (kw_encode_message(v->name, nl, v->version, want_json[j], want_json_len[j], &out, &len) != KW_OK) {
                fail(t, "encode failed", v->id);
                continue;
            }
            ok = (size_t)len == v->bytes_len && memcmp(out, v->bytes, v->bytes_len) == 0;
            if (kw_free(out) != KW_OK || !ok) {
                fail(t, "encode differs from the vector", v->id);
                continue;
            }
            if (i % 50 == 0) {
                /* A failure of this thread's own: a version only this thread uses. */
                int bad = 20000 + t * 100 + r;
                if (kw_decode_message(v->name, nl, bad, v->bytes, (int32_t)v->bytes_len, &out, &len) != KW_ERR_VERSION || out != NULL) {
                    fail(t, "bad version did not give KW_ERR_VERSION", v->id);
                    continue;
                }
                snprintf(want, sizeof want, "version %d", bad);
                if (!strstr(last_error(err, sizeof err), want)) {
                    fail(t, "kw_last_error is not this thread's error", err);
                    continue;
                }
                int32_t hv_req, hv_resp;
                if (kw_header_versions(0, 9, &hv_req, &hv_resp) != KW_OK || hv_req != 2 || hv_resp != 1 ||
                    last_error(err, sizeof err)[0] != 0) {
                    fail(t, "a success did not clear the last error", err);
                    continue;
                }
            }
            atomic_fetch_add(&passed, 1);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <vectors.jsonl> [rounds]\n", argv[0]);
        return 2;
    }
    if (argc > 2) rounds = atoi(argv[2]);
    nvs = read_vectors(argv[1], &vs, 0);
    if (nvs <= 0) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    want_json = (uint8_t **)calloc((size_t)nvs, sizeof *want_json);
    want_json_len = (int32_t *)calloc((size_t)nvs, sizeof *want_json_len);
    long usable = 0;
    for (long i = 0; i < nvs; i++) {
        uint8_t *js, *enc;
        int32_t jl, el;
        if (kw_decode_message(vs[i].name, (int32_t)strlen(vs[i].name), vs[i].version, vs[i].bytes, (int32_t)vs[i].bytes_len, &js, &jl) != KW_OK)
            continue;
        /* Use the vectors that round-trip single-threaded; the conformance run covers the rest. */
        if (kw_encode_message(vs[i].name, (int32_t)strlen(vs[i].name), vs[i].version, js, jl, &enc, &el) == KW_OK) {
            if ((size_t)el == vs[i].bytes_len && memcmp(enc, vs[i].bytes, (size_t)el) == 0) {
                want_json[i] = (uint8_t *)malloc((size_t)jl);
                memcpy(want_json[i], js, (size_t)jl);
                want_json_len[i] = jl;
                usable++;
            }
            kw_free(enc);
        }
        kw_free(js);
    }
    if (usable < nvs / 2) {
        fprintf(stderr, "only %ld of %ld vectors round-trip single-threaded\n", usable, nvs);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0) {
            perror("pthread_create");
            return 1;
        }
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    printf("%d threads x %d rounds over %ld vectors: decode, encode and per-thread errors\n", THREADS, rounds, usable);
    printf("%ld passed, %ld failed\n", atomic_load(&passed), atomic_load(&failed));
    return atomic_load(&failed) ? 1 : 0;
}
