/*
 * kwire_json.h — a small, header-only JSON reader for C programs that use libkwire.
 *
 * libkwire returns JSON (decoded messages and frames, the catalogue, errors, records) and
 * C has no JSON reader of its own. This header parses such a document into a tree you can
 * walk, and adds the two conversions kwire's JSON form needs: int64 values, which kwire
 * writes as decimal strings ("4611686018427387905"), and bytes, which it writes as
 * standard base64. It is a reader only (build JSON input for kw_encode_* as text).
 *
 *   char err[128];
 *   kwj_value *doc = kwj_parse((const char *)out, (size_t)out_len, err, sizeof err);
 *   int64_t pid;
 *   if (doc && kwj_int64(kwj_get(kwj_get(doc, "body"), "producerId"), &pid) == 0) ...
 *   kwj_free(doc);
 *
 * - Every function is `static inline`: include the header where you need it, no library
 *   to link. It needs only the C standard library (C99).
 * - Strings are unescaped into NUL-terminated copies; `len` gives their length in bytes
 *   (a string may hold "\u0000"). Numbers keep their text, so no precision is lost before
 *   you pick a conversion.
 * - Every node remembers where it came from (`raw_off`, `raw_len`: a byte range of the
 *   parsed text), so a sub-document can be handed back to kw_encode_message as is.
 * - Lookups accept NULL and return NULL (or an error), so chains like
 *   kwj_get(kwj_get(doc, "body"), "topicData") need no checks in between.
 * - Input is checked: malformed JSON, invalid UTF-8 escapes, nesting deeper than
 *   KWJ_MAX_DEPTH and trailing bytes are errors, with the byte offset in `err`.
 */
#ifndef KWIRE_JSON_H
#define KWIRE_JSON_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KWJ_MAX_DEPTH
#define KWJ_MAX_DEPTH 1000
#endif

typedef enum { KWJ_NULL, KWJ_FALSE, KWJ_TRUE, KWJ_NUMBER, KWJ_STRING, KWJ_ARRAY, KWJ_OBJECT } kwj_type;

typedef struct kwj_value kwj_value;
struct kwj_value {
    kwj_type type;
    char *str;          /* KWJ_STRING: the unescaped bytes; KWJ_NUMBER: the number's text (NUL-terminated) */
    size_t len;         /* length of str in bytes */
    size_t count;       /* KWJ_ARRAY, KWJ_OBJECT: number of elements / members */
    kwj_value **items;  /* elements, or member values */
    char **keys;        /* KWJ_OBJECT: member names (unescaped, NUL-terminated) */
    size_t *key_lens;   /* their lengths */
    size_t raw_off;     /* where the value starts in the parsed text */
    size_t raw_len;     /* and how many bytes it spans */
};

typedef struct {
    const char *s;
    size_t n, i;
    int depth;
    char *err;
    size_t errlen;
} kwj_parser_;

static inline void kwj_free(kwj_value *v);

/* kwj_clear frees what v holds and leaves it a null value in place. */
static inline void kwj_clear(kwj_value *v) {
    if (!v) return;
    for (size_t i = 0; i < v->count; i++) {
        kwj_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->key_lens);
    free(v->str);
    v->items = NULL, v->keys = NULL, v->key_lens = NULL, v->str = NULL;
    v->count = 0, v->len = 0;
    v->type = KWJ_NULL;
}

static inline void kwj_free(kwj_value *v) {
    if (!v) return;
    kwj_clear(v);
    free(v);
}

static inline int kwj_fail_(kwj_parser_ *p, const char *what) {
    if (p->err && p->errlen) snprintf(p->err, p->errlen, "json: %s at offset %zu", what, p->i);
    return -1;
}

static inline void kwj_ws_(kwj_parser_ *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static inline int kwj_hex4_(kwj_parser_ *p, unsigned *out) {
    unsigned v = 0;
    if (p->n - p->i < 4) return kwj_fail_(p, "truncated \\u escape");
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return kwj_fail_(p, "bad \\u escape");
    }
    *out = v;
    return 0;
}

/* kwj_string_: parses a string at p->i (which holds '"') into a malloc'ed copy. */
static inline int kwj_string_(kwj_parser_ *p, char **out, size_t *out_len) {
    size_t start = ++p->i;
    /* First pass: find the end. The unescaped text is never longer than the escaped one,
     * so one allocation of that size fits it. */
    while (p->i < p->n && p->s[p->i] != '"') {
        if (p->s[p->i] == '\\') p->i++;
        p->i++;
    }
    if (p->i >= p->n) return kwj_fail_(p, "unterminated string");
    size_t end = p->i;
    char *d = (char *)malloc(end - start + 1);
    if (!d) return kwj_fail_(p, "out of memory");
    size_t o = 0;
    for (p->i = start; p->i < end;) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c < 0x20) {
            free(d);
            return kwj_fail_(p, "control character in string");
        }
        if (c != '\\') {
            d[o++] = (char)c;
            p->i++;
            continue;
        }
        p->i++;
        char e = p->s[p->i++];
        switch (e) {
        case '"': d[o++] = '"'; break;
        case '\\': d[o++] = '\\'; break;
        case '/': d[o++] = '/'; break;
        case 'b': d[o++] = '\b'; break;
        case 'f': d[o++] = '\f'; break;
        case 'n': d[o++] = '\n'; break;
        case 'r': d[o++] = '\r'; break;
        case 't': d[o++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (kwj_hex4_(p, &cp) < 0) {
                free(d);
                return -1;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (end - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') {
                    free(d);
                    return kwj_fail_(p, "lone surrogate");
                }
                p->i += 2;
                if (kwj_hex4_(p, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF) {
                    free(d);
                    return kwj_fail_(p, "bad surrogate pair");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(d);
                return kwj_fail_(p, "lone surrogate");
            }
            /* A \u escape takes 6 input bytes and yields at most 3 (a pair: 12 -> 4). */
            if (cp < 0x80) {
                d[o++] = (char)cp;
            } else if (cp < 0x800) {
                d[o++] = (char)(0xC0 | (cp >> 6));
                d[o++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                d[o++] = (char)(0xE0 | (cp >> 12));
                d[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                d[o++] = (char)(0x80 | (cp & 0x3F));
            } else {
                d[o++] = (char)(0xF0 | (cp >> 18));
                d[o++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                d[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                d[o++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default:
            free(d);
            return kwj_fail_(p, "bad escape");
        }
    }
    d[o] = 0;
    p->i = end + 1;
    *out = d;
    *out_len = o;
    return 0;
}

static inline kwj_value *kwj_new_(kwj_type t, size_t off) {
    kwj_value *v = (kwj_value *)calloc(1, sizeof *v);
    if (v) {
        v->type = t;
        v->raw_off = off;
    }
    return v;
}

static inline int kwj_push_(kwj_value *v, size_t *cap, kwj_value *item, char *key, size_t key_len) {
    if (v->count == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        kwj_value **ni = (kwj_value **)realloc(v->items, nc * sizeof *ni);
        if (!ni) return -1;
        v->items = ni;
        if (v->type == KWJ_OBJECT) {
            char **nk = (char **)realloc(v->keys, nc * sizeof *nk);
            if (!nk) return -1;
            v->keys = nk;
            size_t *nl = (size_t *)realloc(v->key_lens, nc * sizeof *nl);
            if (!nl) return -1;
            v->key_lens = nl;
        }
        *cap = nc;
    }
    v->items[v->count] = item;
    if (v->type == KWJ_OBJECT) {
        v->keys[v->count] = key;
        v->key_lens[v->count] = key_len;
    }
    v->count++;
    return 0;
}

static inline kwj_value *kwj_value_(kwj_parser_ *p) {
    kwj_ws_(p);
    if (p->i >= p->n) {
        kwj_fail_(p, "unexpected end of input");
        return NULL;
    }
    size_t start = p->i;
    char c = p->s[p->i];
    kwj_value *v = NULL;
    if (c == '{' || c == '[') {
        if (++p->depth > KWJ_MAX_DEPTH) {
            kwj_fail_(p, "nesting too deep");
            return NULL;
        }
        int obj = c == '{';
        char close = obj ? '}' : ']';
        v = kwj_new_(obj ? KWJ_OBJECT : KWJ_ARRAY, start);
        if (!v) {
            kwj_fail_(p, "out of memory");
            return NULL;
        }
        size_t cap = 0;
        p->i++;
        kwj_ws_(p);
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
        } else {
            for (;;) {
                char *key = NULL;
                size_t key_len = 0;
                if (obj) {
                    kwj_ws_(p);
                    if (p->i >= p->n || p->s[p->i] != '"') {
                        kwj_fail_(p, "expected a member name");
                        goto fail;
                    }
                    if (kwj_string_(p, &key, &key_len) < 0) goto fail;
                    kwj_ws_(p);
                    if (p->i >= p->n || p->s[p->i] != ':') {
                        free(key);
                        kwj_fail_(p, "expected ':'");
                        goto fail;
                    }
                    p->i++;
                }
                kwj_value *item = kwj_value_(p);
                if (!item) {
                    free(key);
                    goto fail;
                }
                if (kwj_push_(v, &cap, item, key, key_len) < 0) {
                    free(key);
                    kwj_free(item);
                    kwj_fail_(p, "out of memory");
                    goto fail;
                }
                kwj_ws_(p);
                if (p->i < p->n && p->s[p->i] == ',') {
                    p->i++;
                    continue;
                }
                if (p->i < p->n && p->s[p->i] == close) {
                    p->i++;
                    break;
                }
                kwj_fail_(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
                goto fail;
            }
        }
        p->depth--;
    } else if (c == '"') {
        v = kwj_new_(KWJ_STRING, start);
        if (!v || kwj_string_(p, &v->str, &v->len) < 0) {
            if (!v) kwj_fail_(p, "out of memory");
            goto fail;
        }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        size_t i = p->i;
        if (p->s[i] == '-') i++;
        if (i < p->n && p->s[i] == '0') {
            i++;
        } else if (i < p->n && p->s[i] >= '1' && p->s[i] <= '9') {
            while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
        } else {
            kwj_fail_(p, "bad number");
            return NULL;
        }
        if (i < p->n && p->s[i] == '.') {
            i++;
            if (i >= p->n || p->s[i] < '0' || p->s[i] > '9') {
                p->i = i;
                kwj_fail_(p, "bad number");
                return NULL;
            }
            while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
        }
        if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
            i++;
            if (i < p->n && (p->s[i] == '+' || p->s[i] == '-')) i++;
            if (i >= p->n || p->s[i] < '0' || p->s[i] > '9') {
                p->i = i;
                kwj_fail_(p, "bad number");
                return NULL;
            }
            while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
        }
        v = kwj_new_(KWJ_NUMBER, start);
        if (!v || !(v->str = (char *)malloc(i - start + 1))) {
            kwj_fail_(p, "out of memory");
            goto fail;
        }
        memcpy(v->str, p->s + start, i - start);
        v->str[i - start] = 0;
        v->len = i - start;
        p->i = i;
    } else {
        static const char *const words[] = {"null", "false", "true"};
        static const kwj_type types[] = {KWJ_NULL, KWJ_FALSE, KWJ_TRUE};
        for (int k = 0; k < 3; k++) {
            size_t wl = strlen(words[k]);
            if (p->n - p->i >= wl && memcmp(p->s + p->i, words[k], wl) == 0) {
                v = kwj_new_(types[k], start);
                if (!v) {
                    kwj_fail_(p, "out of memory");
                    return NULL;
                }
                p->i += wl;
                break;
            }
        }
        if (!v) {
            kwj_fail_(p, "unexpected character");
            return NULL;
        }
    }
    v->raw_len = p->i - start;
    return v;
fail:
    kwj_free(v);
    return NULL;
}

/* kwj_parse parses text[0:len) as one JSON document. On error it returns NULL and, when
 * err is not NULL, writes a message with the byte offset into err[0:errlen). Free the
 * result with kwj_free. */
static inline kwj_value *kwj_parse(const char *text, size_t len, char *err, size_t errlen) {
    kwj_parser_ p = {text, len, 0, 0, err, errlen};
    if (err && errlen) err[0] = 0;
    if (!text && len) {
        kwj_fail_(&p, "NULL text");
        return NULL;
    }
    kwj_value *v = kwj_value_(&p);
    if (!v) return NULL;
    kwj_ws_(&p);
    if (p.i != p.n) {
        kwj_fail_(&p, "trailing bytes after the JSON value");
        kwj_free(v);
        return NULL;
    }
    return v;
}

/* kwj_get returns the member `key` of an object, or NULL (not an object, no such key). */
static inline kwj_value *kwj_get(const kwj_value *obj, const char *key) {
    if (!obj || obj->type != KWJ_OBJECT || !key) return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < obj->count; i++)
        if (obj->key_lens[i] == kl && memcmp(obj->keys[i], key, kl) == 0) return obj->items[i];
    return NULL;
}

/* kwj_at returns element i of an array, or NULL. */
static inline kwj_value *kwj_at(const kwj_value *arr, size_t i) {
    if (!arr || arr->type != KWJ_ARRAY || i >= arr->count) return NULL;
    return arr->items[i];
}

/* kwj_len returns the number of elements of an array (or members of an object); 0 for
 * anything else, NULL included. */
static inline size_t kwj_len(const kwj_value *v) {
    return v && (v->type == KWJ_ARRAY || v->type == KWJ_OBJECT) ? v->count : 0;
}

/* kwj_is_null: the value is JSON null. A missing value (NULL) is not null. */
static inline int kwj_is_null(const kwj_value *v) { return v && v->type == KWJ_NULL; }

/* kwj_str returns the bytes of a string (NUL-terminated; *len, if not NULL, receives the
 * length), or NULL when v is not a string. */
static inline const char *kwj_str(const kwj_value *v, size_t *len) {
    if (!v || v->type != KWJ_STRING) return NULL;
    if (len) *len = v->len;
    return v->str;
}

/* kwj_parse_int64_ reads an optional '-' and decimal digits, all of s[0:n), exactly. */
static inline int kwj_parse_int64_(const char *s, size_t n, int64_t *out) {
    size_t i = 0;
    int neg = 0;
    if (n > 0 && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == n) return -1;
    if (s[i] == '0' && n - i > 1) return -1; /* no leading zeros */
    uint64_t mag = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (mag > (limit - d) / 10) return -1; /* out of range */
        mag = mag * 10 + d;
    }
    if (neg && mag == 0) return -1; /* "-0" is not an integer kwire writes */
    *out = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    return 0;
}

/* kwj_int64 reads an int64 exactly: kwire's decimal string form ("-9223372036854775808")
 * or an integral JSON number. Returns 0, or -1 when v is neither or out of range. */
static inline int kwj_int64(const kwj_value *v, int64_t *out) {
    if (!v || !out) return -1;
    if (v->type == KWJ_STRING || v->type == KWJ_NUMBER) return kwj_parse_int64_(v->str, v->len, out);
    return -1;
}

/* kwj_int32 reads an integral JSON number within int32 range. Returns 0 or -1. */
static inline int kwj_int32(const kwj_value *v, int32_t *out) {
    int64_t x;
    if (!v || v->type != KWJ_NUMBER || !out || kwj_parse_int64_(v->str, v->len, &x) < 0) return -1;
    if (x < INT32_MIN || x > INT32_MAX) return -1;
    *out = (int32_t)x;
    return 0;
}

/* kwj_bool: 1 for true, 0 for false, -1 for anything else. */
static inline int kwj_bool(const kwj_value *v) {
    return !v ? -1 : v->type == KWJ_TRUE ? 1 : v->type == KWJ_FALSE ? 0 : -1;
}

static inline int kwj_b64_digit_(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62; /* standard and URL-safe alphabets */
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* kwj_base64_decode decodes standard base64 (padding required when the length is not a
 * multiple of 4 — kwire's bytes form) or unpadded URL-safe base64 (kwire's uuid form) from
 * in[0:n) into out, which must hold at least n / 4 * 3 + 3 bytes. Returns the decoded
 * length, or -1 for invalid input. */
static inline long kwj_base64_decode(const char *in, size_t n, uint8_t *out) {
    size_t o = 0, i = 0;
    while (n > 0 && in[n - 1] == '=' && i < 2) {
        n--;
        i++;
    }
    size_t pad = i;
    if (pad && (n + pad) % 4 != 0) return -1;
    if (n % 4 == 1) return -1;
    uint32_t acc = 0;
    int bits = 0;
    for (i = 0; i < n; i++) {
        int d = kwj_b64_digit_((unsigned char)in[i]);
        if (d < 0) return -1;
        acc = (acc << 6) | (uint32_t)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc != 0) return -1; /* non-zero leftover bits: not canonical */
    return (long)o;
}

/* kwj_bytes decodes a base64 string value into a malloc'ed buffer (*out, *out_len; free
 * it with free()). A JSON null gives *out NULL and returns 1; a decoded string returns 0
 * (*out is then non-NULL even when empty); anything else returns -1. */
static inline int kwj_bytes(const kwj_value *v, uint8_t **out, size_t *out_len) {
    if (!v || !out || !out_len) return -1;
    *out = NULL;
    *out_len = 0;
    if (v->type == KWJ_NULL) return 1;
    if (v->type != KWJ_STRING) return -1;
    uint8_t *b = (uint8_t *)malloc(v->len / 4 * 3 + 4);
    if (!b) return -1;
    long n = kwj_base64_decode(v->str, v->len, b);
    if (n < 0) {
        free(b);
        return -1;
    }
    *out = b;
    *out_len = (size_t)n;
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* KWIRE_JSON_H */
