/*
 * minijson.h — a small JSON reader for kwire's C tests: parse into a tree, compare two
 * trees semantically (object key order ignored, integers exactly, other numbers as
 * double bit patterns), look keys up, decode base64. Header-only; C11.
 */
#ifndef KWIRE_MINIJSON_H
#define KWIRE_MINIJSON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    int b;              /* J_BOOL */
    char *s;            /* J_STR: decoded UTF-8; J_NUM: the number's text */
    size_t slen;
    struct jval **items; /* J_ARR elements, J_OBJ values */
    char **keys;         /* J_OBJ keys */
    size_t *klens;
    size_t n;
    const char *raw;     /* the value's text in the parsed input */
    size_t rawlen;
} jval;

typedef struct {
    const char *p, *end, *start;
    const char *err;
    size_t erroff;
    int depth;
} jparser;

static inline void jfree(jval *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->klens);
    free(v->s);
    free(v);
}

static inline void jp_ws(jparser *p) {
    while (p->p < p->end && (*p->p == ' ' || *p->p == '\t' || *p->p == '\n' || *p->p == '\r')) p->p++;
}

static inline jval *jp_fail(jparser *p, const char *msg) {
    if (!p->err) {
        p->err = msg;
        p->erroff = (size_t)(p->p - p->start);
    }
    return NULL;
}

static inline void jp_utf8(char **buf, size_t *len, size_t *cap, uint32_t r) {
    char tmp[4];
    size_t n;
    if (r < 0x80) { tmp[0] = (char)r; n = 1; }
    else if (r < 0x800) { tmp[0] = (char)(0xC0 | (r >> 6)); tmp[1] = (char)(0x80 | (r & 0x3F)); n = 2; }
    else if (r < 0x10000) { tmp[0] = (char)(0xE0 | (r >> 12)); tmp[1] = (char)(0x80 | ((r >> 6) & 0x3F)); tmp[2] = (char)(0x80 | (r & 0x3F)); n = 3; }
    else { tmp[0] = (char)(0xF0 | (r >> 18)); tmp[1] = (char)(0x80 | ((r >> 12) & 0x3F)); tmp[2] = (char)(0x80 | ((r >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (r & 0x3F)); n = 4; }
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = (char *)realloc(*buf, *cap);
    }
    memcpy(*buf + *len, tmp, n);
    *len += n;
}

static inline int jp_hex4(jparser *p, uint32_t *out) {
    if (p->end - p->p < 4) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    p->p += 4;
    *out = v;
    return 1;
}

/* jp_string reads a string (at its opening quote) into a malloc'ed buffer. */
static inline char *jp_string(jparser *p, size_t *outlen) {
    p->p++;
    size_t cap = 16, len = 0;
    char *buf = (char *)malloc(cap);
    while (p->p < p->end) {
        unsigned char c = (unsigned char)*p->p;
        if (c == '"') {
            p->p++;
            buf[len] = 0;
            *outlen = len;
            return buf;
        }
        if (c < 0x20) break;
        if (c == '\\') {
            p->p++;
            if (p->p >= p->end) break;
            char e = *p->p++;
            uint32_t r;
            switch (e) {
            case '"': r = '"'; break;
            case '\\': r = '\\'; break;
            case '/': r = '/'; break;
            case 'b': r = '\b'; break;
            case 'f': r = '\f'; break;
            case 'n': r = '\n'; break;
            case 'r': r = '\r'; break;
            case 't': r = '\t'; break;
            case 'u':
                if (!jp_hex4(p, &r)) goto bad;
                if (r >= 0xD800 && r < 0xDC00 && p->end - p->p >= 6 && p->p[0] == '\\' && p->p[1] == 'u') {
                    const char *save = p->p;
                    uint32_t lo;
                    p->p += 2;
                    if (jp_hex4(p, &lo) && lo >= 0xDC00 && lo < 0xE000) r = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00);
                    else { p->p = save; r = 0xFFFD; }
                } else if (r >= 0xD800 && r < 0xE000) {
                    r = 0xFFFD;
                }
                break;
            default:
                goto bad;
            }
            jp_utf8(&buf, &len, &cap, r);
            continue;
        }
        if (len + 2 > cap) {
            cap *= 2;
            buf = (char *)realloc(buf, cap);
        }
        buf[len++] = (char)c;
        p->p++;
    }
bad:
    free(buf);
    jp_fail(p, "bad string");
    return NULL;
}

static inline jval *jp_value(jparser *p);

static inline jval *jnew(jtype t) {
    jval *v = (jval *)calloc(1, sizeof(jval));
    v->t = t;
    return v;
}

static inline void jpush(jval *v, char *key, size_t klen, jval *item) {
    if ((v->n & (v->n - 1)) == 0) {
        size_t cap = v->n ? v->n * 2 : 1;
        v->items = (jval **)realloc(v->items, cap * sizeof(jval *));
        if (v->t == J_OBJ) {
            v->keys = (char **)realloc(v->keys, cap * sizeof(char *));
            v->klens = (size_t *)realloc(v->klens, cap * sizeof(size_t));
        }
    }
    v->items[v->n] = item;
    if (v->t == J_OBJ) {
        v->keys[v->n] = key;
        v->klens[v->n] = klen;
    }
    v->n++;
}

static inline jval *jp_value(jparser *p) {
    jp_ws(p);
    if (p->p >= p->end) return jp_fail(p, "unexpected end");
    if (++p->depth > 512) return jp_fail(p, "too deep");
    char c = *p->p;
    const char *vstart = p->p;
    jval *v = NULL;
    if (c == '{') {
        v = jnew(J_OBJ);
        p->p++;
        jp_ws(p);
        if (p->p < p->end && *p->p == '}') { p->p++; goto done; }
        for (;;) {
            jp_ws(p);
            if (p->p >= p->end || *p->p != '"') { jfree(v); return jp_fail(p, "want a key"); }
            size_t klen;
            char *k = jp_string(p, &klen);
            if (!k) { jfree(v); return NULL; }
            jp_ws(p);
            if (p->p >= p->end || *p->p != ':') { free(k); jfree(v); return jp_fail(p, "want ':'"); }
            p->p++;
            jval *item = jp_value(p);
            if (!item) { free(k); jfree(v); return NULL; }
            jpush(v, k, klen, item);
            jp_ws(p);
            if (p->p < p->end && *p->p == ',') { p->p++; continue; }
            if (p->p < p->end && *p->p == '}') { p->p++; break; }
            jfree(v);
            return jp_fail(p, "want ',' or '}'");
        }
    } else if (c == '[') {
        v = jnew(J_ARR);
        p->p++;
        jp_ws(p);
        if (p->p < p->end && *p->p == ']') { p->p++; goto done; }
        for (;;) {
            jval *item = jp_value(p);
            if (!item) { jfree(v); return NULL; }
            jpush(v, NULL, 0, item);
            jp_ws(p);
            if (p->p < p->end && *p->p == ',') { p->p++; continue; }
            if (p->p < p->end && *p->p == ']') { p->p++; break; }
            jfree(v);
            return jp_fail(p, "want ',' or ']'");
        }
    } else if (c == '"') {
        v = jnew(J_STR);
        v->s = jp_string(p, &v->slen);
        if (!v->s) { free(v); return NULL; }
    } else if (c == 't' && p->end - p->p >= 4 && memcmp(p->p, "true", 4) == 0) {
        v = jnew(J_BOOL); v->b = 1; p->p += 4;
    } else if (c == 'f' && p->end - p->p >= 5 && memcmp(p->p, "false", 5) == 0) {
        v = jnew(J_BOOL); p->p += 5;
    } else if (c == 'n' && p->end - p->p >= 4 && memcmp(p->p, "null", 4) == 0) {
        v = jnew(J_NULL); p->p += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        const char *s = p->p;
        if (*p->p == '-') p->p++;
        while (p->p < p->end && ((*p->p >= '0' && *p->p <= '9') || *p->p == '.' || *p->p == 'e' || *p->p == 'E' || *p->p == '+' || *p->p == '-')) p->p++;
        v = jnew(J_NUM);
        v->slen = (size_t)(p->p - s);
        v->s = (char *)malloc(v->slen + 1);
        memcpy(v->s, s, v->slen);
        v->s[v->slen] = 0;
    } else {
        return jp_fail(p, "invalid character");
    }
done:
    p->depth--;
    v->raw = vstart;
    v->rawlen = (size_t)(p->p - vstart);
    return v;
}

/* jparse parses a whole document; on failure it returns NULL and sets *err. */
static inline jval *jparse(const char *s, size_t len, const char **err) {
    jparser p = {s, s + len, s, NULL, 0, 0};
    jval *v = jp_value(&p);
    if (v) {
        jp_ws(&p);
        if (p.p != p.end) { jfree(v); v = jp_fail(&p, "trailing data"); }
    }
    if (!v && err) *err = p.err;
    return v;
}

static inline jval *jget(const jval *o, const char *key) {
    if (!o || o->t != J_OBJ) return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < o->n; i++)
        if (o->klens[i] == kl && memcmp(o->keys[i], key, kl) == 0) return o->items[i];
    return NULL;
}

static inline long long jint(const jval *v, long long def) {
    if (!v) return def;
    if (v->t == J_NUM || v->t == J_STR) return strtoll(v->s, NULL, 10);
    return def;
}

static inline int jnum_is_int(const jval *v) { return strpbrk(v->s, ".eE") == NULL; }

static inline int jnum_equal(const jval *a, const jval *b) {
    if (jnum_is_int(a) && jnum_is_int(b)) return a->slen == b->slen && memcmp(a->s, b->s, a->slen) == 0;
    double x = strtod(a->s, NULL), y = strtod(b->s, NULL);
    return memcmp(&x, &y, sizeof x) == 0;
}

/* jdiff compares want and got; it returns 1 when they differ and writes the JSON path
 * of the first difference ("$.a.b[2]") into path. */
static inline int jdiff(const jval *w, const jval *g, char *path, size_t cap) {
    if (w->t != g->t) return 1;
    switch (w->t) {
    case J_NULL: return 0;
    case J_BOOL: return w->b != g->b;
    case J_NUM: return !jnum_equal(w, g);
    case J_STR: return w->slen != g->slen || memcmp(w->s, g->s, w->slen) != 0;
    case J_ARR: {
        size_t n = w->n < g->n ? w->n : g->n, pl = strlen(path);
        for (size_t i = 0; i < n; i++) {
            snprintf(path + pl, cap - pl, "[%zu]", i);
            if (jdiff(w->items[i], g->items[i], path, cap)) return 1;
            path[pl] = 0;
        }
        return w->n != g->n;
    }
    case J_OBJ: {
        size_t pl = strlen(path);
        for (size_t i = 0; i < w->n; i++) {
            snprintf(path + pl, cap - pl, ".%s", w->keys[i]);
            const jval *gv = NULL;
            for (size_t j = 0; j < g->n; j++)
                if (g->klens[j] == w->klens[i] && memcmp(g->keys[j], w->keys[i], w->klens[i]) == 0) gv = g->items[j];
            if (!gv || jdiff(w->items[i], gv, path, cap)) return 1;
            path[pl] = 0;
        }
        for (size_t j = 0; j < g->n; j++) {
            int found = 0;
            for (size_t i = 0; i < w->n && !found; i++)
                found = g->klens[j] == w->klens[i] && memcmp(g->keys[j], w->keys[i], w->klens[i]) == 0;
            if (!found) {
                snprintf(path + pl, cap - pl, ".%s", g->keys[j]);
                return 1;
            }
        }
        return 0;
    }
    }
    return 1;
}

/* b64decode decodes standard base64 (padding required); returns the length or -1. */
static inline long b64decode(const char *s, size_t n, uint8_t *out) {
    static const char *A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n % 4) return -1;
    long o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int j = 0; j < 4; j++) {
            char c = s[i + j];
            if (c == '=') { v[j] = -1; continue; }
            const char *q = c ? strchr(A, c) : NULL;
            if (!q) return -1;
            v[j] = (int)(q - A);
        }
        if (v[0] < 0 || v[1] < 0) return -1;
        out[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
        if (v[2] >= 0) out[o++] = (uint8_t)((v[1] & 15) << 4 | v[2] >> 2);
        if (v[3] >= 0) out[o++] = (uint8_t)((v[2] & 3) << 6 | v[3]);
        if ((v[2] < 0 || v[3] < 0) && i + 4 != n) return -1;
    }
    return o;
}

#endif
