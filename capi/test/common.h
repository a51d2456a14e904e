/* common.h — helpers shared by kwire's C test programs. */
#ifndef KWIRE_TEST_COMMON_H
#define KWIRE_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwire.h"
#include "minijson.h"

/* last_error returns the calling thread's kw_last_error as a NUL-terminated copy in buf. */
static inline const char *last_error(char *buf, size_t cap) {
    const uint8_t *p;
    int32_t n;
    if (kw_last_error(&p, &n) != KW_OK) return "(kw_last_error failed)";
    if (n < 0) n = 0;
    if ((size_t)n >= cap) n = (int32_t)cap - 1;
    if (n > 0) memcpy(buf, p, (size_t)n);
    buf[n] = 0;
    return buf;
}

/* A vector of conformance/vectors/kafka-clients-<release>.jsonl. */
typedef struct {
    char *id, *name, *kind;
    int api_key, version;
    char *json;     /* the vector's json, as text */
    size_t json_len;
    uint8_t *bytes; /* the encoded body */
    size_t bytes_len;
    jval *json_tree;
} vector;

static inline char *dupn(const char *s, size_t n) {
    char *d = (char *)malloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* read_vectors reads every line of path; it returns the count or -1. */
static inline long read_vectors(const char *path, vector **out, int keep_tree) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 0, n = 0;
    vector *vs = NULL;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) > 0) {
        if (len <= 1) continue;
        const char *err = NULL;
        jval *t = jparse(line, (size_t)len - (line[len - 1] == '\n'), &err);
        if (!t) {
            fprintf(stderr, "%s: line %zu: %s\n", path, n + 1, err);
            fclose(f);
            free(line);
            return -1;
        }
        jval *id = jget(t, "id"), *name = jget(t, "name"), *kind = jget(t, "kind"), *js = jget(t, "json"), *b = jget(t, "bytes");
        if (!id || !name || !kind || !js || !b || b->t != J_STR) {
            fprintf(stderr, "%s: line %zu lacks a field\n", path, n + 1);
            fclose(f);
            free(line);
            return -1;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            vs = (vector *)realloc(vs, cap * sizeof(vector));
        }
        vector *v = &vs[n++];
        v->id = dupn(id->s, id->slen);
        v->name = dupn(name->s, name->slen);
        v->kind = dupn(kind->s, kind->slen);
        v->api_key = (int)jint(jget(t, "apiKey"), -1);
        v->version = (int)jint(jget(t, "version"), -1);
        v->json = dupn(js->raw, js->rawlen);
        v->json_len = js->rawlen;
        v->bytes = (uint8_t *)malloc(b->slen + 1);
        long bl = b64decode(b->s, b->slen, v->bytes);
        if (bl < 0) {
            fprintf(stderr, "%s: %s: bad base64\n", path, v->id);
            fclose(f);
            free(line);
            return -1;
        }
        v->bytes_len = (size_t)bl;
        v->json_tree = NULL;
        if (keep_tree) v->json_tree = jparse(v->json, v->json_len, NULL);
        jfree(t);
    }
    free(line);
    fclose(f);
    *out = vs;
    return (long)n;
}

#endif
