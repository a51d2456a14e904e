/*
 * policy.c — kw_policy_check from C: records built with kw_records_encode, checked
 * against a policy (accepted, rejected with the failing records named, warned, not
 * checked), and its errors (a bad policy names the JSON path and byte offset; bad
 * arguments). Prints "N passed, N failed" and exits non-zero on a failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "check.h"



/* records encodes one batch of values (base64, comma-separated JSON strings). */
static uint8_t *records(const char *values_b64, int32_t compression, int32_t *len) {
    char json[1024];
    snprintf(json, sizeof json, "{\"records\":[%s]}", values_b64);
    uint8_t *out = NULL;
    int32_t st = kw_records_encode((const uint8_t *)json, (int32_t)strlen(json), compression, &out, len);
    check(st == KW_OK && out != NULL, "kw_records_encode");
    return out;
}

/* verdict runs kw_policy_check and parses its JSON; NULL on failure. */
static jval *verdict(const char *policy, const char *topic, const uint8_t *recs, int32_t recs_len) {
    uint8_t *out = NULL;
    int32_t n = 0;
    char err[512];
    int32_t st = kw_policy_check((const uint8_t *)policy, (int32_t)strlen(policy), (const uint8_t *)topic,
                                 (int32_t)strlen(topic), 7, recs, recs_len, &out, &n);
    if (st != KW_OK) {
        printf("kw_policy_check: status %d: %s\n", st, last_error(err, sizeof err));
        return NULL;
    }
    const char *perr = NULL;
    jval *v = jparse((const char *)out, (size_t)n, &perr);
    if (!v) printf("verdict is not JSON (%s): %.*s\n", perr, (int)n, out);
    kw_free(out);
    return v;
}

static int is_str(const jval *v, const char *s) { return v && v->t == J_STR && strcmp(v->s, s) == 0; }
static int is_bool(const jval *v, int b) { return v && v->t == J_BOOL && v->b == b; }

static const char *policy =
    "{\"default\":\"none\",\"rules\":[{\"topic\":\"orders\",\"policy\":\"enforce\",\"schema_ids\":[1]},"
    "{\"prefix\":\"audit.\",\"policy\":\"warn\"}]}";

int main(void) {
    /* "AAAAAAF4": byte 0, schema id 1, "x"; "AAAAAAJ4": id 2; "cGxhaW4=": "plain". */
    int32_t good_len = 0, mixed_len = 0;
    uint8_t *good = records("{\"value\":\"AAAAAAF4\"},{\"value\":\"AAAAAAF4\"}", KW_COMPRESSION_LZ4, &good_len);
    uint8_t *mixed = records("{\"value\":\"AAAAAAF4\"},{\"value\":\"cGxhaW4=\"},{\"value\":\"AAAAAAJ4\"}",
                             KW_COMPRESSION_GZIP, &mixed_len);

    jval *v = verdict(policy, "orders", good, good_len);
    check(v && is_bool(jget(v, "accept"), 1) && jint(jget(v, "records"), -1) == 2 && jint(jget(v, "errorCode"), -1) == 0 &&
              jint(jget(v, "partition"), -1) == 7 && is_str(jget(v, "rule"), "topic:orders") && !jget(v, "failures"),
          "allowed ids are accepted");
    jfree(v);

    v = verdict(policy, "orders", mixed, mixed_len);
    jval *f = v ? jget(v, "failures") : NULL;
    check(v && is_bool(jget(v, "accept"), 0) && jint(jget(v, "errorCode"), -1) == 87 && jint(jget(v, "failed"), -1) == 2 &&
              f && f->t == J_ARR && f->n == 2 && is_str(jget(f->items[0], "reason"), "no-schema") &&
              jint(jget(f->items[0], "index"), -1) == 1 && is_str(jget(f->items[0], "offset"), "1") &&
              is_str(jget(f->items[1], "reason"), "id-not-allowed") &&
              jint(jget(jget(f->items[1], "schema"), "id"), -1) == 2,
          "a record without a schema id and one with a wrong id reject the partition (INVALID_RECORD)");
    jfree(v);

    v = verdict(policy, "audit.eu", mixed, mixed_len);
    check(v && is_bool(jget(v, "accept"), 1) && jint(jget(v, "failed"), -1) == 1 && is_str(jget(v, "policy"), "warn"),
          "warn accepts and reports");
    jfree(v);

    v = verdict(policy, "free", mixed, mixed_len);
    check(v && is_bool(jget(v, "accept"), 1) && is_bool(jget(v, "checked"), 0), "none does not check");
    jfree(v);

    v = verdict(policy, "orders", good, good_len - 3);
    check(v && is_bool(jget(v, "accept"), 0) && jint(jget(v, "errorCode"), -1) == 2 && jget(v, "error"),
          "damaged records are rejected with CORRUPT_MESSAGE");
    jfree(v);

    /* A bad policy: KW_ERR_JSON naming the path and offset of the value. */
    const char *bad = "{\"rules\":[{\"topic\":\"a\",\"policy\":\"block\"}]}";
    uint8_t *out = (uint8_t *)1;
    int32_t n = 1;
    int32_t st = kw_policy_check((const uint8_t *)bad, (int32_t)strlen(bad), (const uint8_t *)"a", 1, 0, good, good_len,
                                 &out, &n);
    const uint8_t *ej = NULL;
    int32_t ejn = 0;
    kw_last_error_json(&ej, &ejn);
    const char *perr = NULL;
    jval *e = ejn > 0 ? jparse((const char *)ej, (size_t)ejn, &perr) : NULL;
    check(st == KW_ERR_JSON && out == NULL && n == 0 && e && is_str(jget(e, "path"), "$.rules[0].policy") &&
              jint(jget(e, "offset"), -1) == 32 && is_str(jget(e, "category"), "json"),
          "a bad policy is KW_ERR_JSON with its JSON path and offset");
    jfree(e);

    st = kw_policy_check((const uint8_t *)policy, (int32_t)strlen(policy), (const uint8_t *)"orders", 6, -1, good,
                         good_len, &out, &n);
    check(st == KW_ERR_ARG, "a negative partition is KW_ERR_ARG");
    st = kw_policy_check((const uint8_t *)policy, (int32_t)strlen(policy), NULL, 0, 0, good, good_len, &out, &n);
    check(st == KW_ERR_ARG, "an empty topic is KW_ERR_ARG");
    st = kw_policy_check((const uint8_t *)policy, -1, (const uint8_t *)"orders", 6, 0, good, good_len, &out, &n);
    check(st == KW_ERR_ARG, "a negative length is KW_ERR_ARG");
    st = kw_policy_check((const uint8_t *)policy, (int32_t)strlen(policy), (const uint8_t *)"orders", 6, 0, good,
                         good_len, NULL, &n);
    check(st == KW_ERR_ARG, "a NULL out-param is KW_ERR_ARG");

    v = verdict(policy, "orders", good, good_len);
    check(v != NULL, "a valid call after the errors");
    jfree(v);
    char err[64];
    check(last_error(err, sizeof err)[0] == 0, "the error is cleared by a success");

    kw_free(good);
    kw_free(mixed);
    printf("policy: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
