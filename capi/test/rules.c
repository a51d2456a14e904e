/*
 * rules.c — kw_rules_check from C: a CreateTopics frame built with
 * kw_encode_request_frame is allowed or refused by a rule on its replication factor; a
 * refusal carries the rule, the path, the value and the response frame to send, which
 * kw_decode_response_frame reads back with the error on the topic. Errors: a bad rule
 * set names the JSON path; a cut frame, error code 0. Prints "N passed, N failed" and
 * exits non-zero on a failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "check.h"

static const char *rules = "[{\"api\":\"CreateTopics\",\"field\":\"topics[].replicationFactor\",\"min\":3}]";

/* frame encodes a CreateTopics v7 request of topic "orders" with replication rf. */
static uint8_t *frame(int rf, int32_t *len) {
    char json[512];
    snprintf(json, sizeof json,
             "{\"header\":{\"requestApiKey\":19,\"requestApiVersion\":7,\"correlationId\":5,\"clientId\":\"app\"},"
             "\"body\":{\"topics\":[{\"name\":\"orders\",\"numPartitions\":3,\"replicationFactor\":%d,\"assignments\":[],"
             "\"configs\":[]}],\"timeoutMs\":1000,\"validateOnly\":false}}",
             rf);
    uint8_t *out = NULL;
    int32_t st = kw_encode_request_frame((const uint8_t *)json, (int32_t)strlen(json), &out, len);
    check(st == KW_OK && out != NULL, "kw_encode_request_frame");
    return out;
}

/* verdict runs kw_rules_check and parses its JSON; NULL on failure. */
static jval *verdict(const uint8_t *f, int32_t n) {
    uint8_t *out = NULL;
    int32_t outn = 0;
    char err[512];
    int32_t st = kw_rules_check((const uint8_t *)rules, (int32_t)strlen(rules), f, n, 44, &out, &outn);
    if (st != KW_OK) {
        printf("kw_rules_check: status %d: %s\n", st, last_error(err, sizeof err));
        return NULL;
    }
    jval *v = jparse((const char *)out, (size_t)outn, NULL);
    if (!v) printf("verdict is not JSON: %.*s\n", (int)outn, out);
    kw_free(out);
    return v;
}

static int is_str(const jval *v, const char *s) { return v && v->t == J_STR && strcmp(v->s, s) == 0; }

/* unbase64 decodes standard base64 into out (cap bytes); -1 on a bad character. */
static int32_t unbase64(const char *s, uint8_t *out, int32_t cap) {
    static const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t acc = 0;
    int bits = 0;
    int32_t n = 0;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(alphabet, *s);
        if (!p) return -1;
        acc = acc << 6 | (uint32_t)(p - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n == cap) return -1;
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return n;
}

int main(void) {
    int32_t good_len = 0, bad_len = 0;
    uint8_t *good = frame(3, &good_len), *bad = frame(1, &bad_len);

    jval *v = verdict(good, good_len);
    check(v && jget(v, "allowed") && jget(v, "allowed")->t == J_BOOL && jget(v, "allowed")->b, "a frame that follows the rules is allowed");
    jfree(v);

    v = verdict(bad, bad_len);
    jval *allowed = jget(v, "allowed");
    check(v && allowed && allowed->t == J_BOOL && !allowed->b && jint(jget(v, "rule"), -9) == 0 &&
              is_str(jget(v, "path"), "topics[0].replicationFactor") && is_str(jget(v, "value"), "1") &&
              is_str(jget(v, "place"), "perEntity"),
          "a frame that breaks the rule names the rule, the path and the value");
    jval *resp = jget(v, "response"), *msg = jget(v, "message");
    uint8_t answer[1024];
    int32_t an = resp && resp->t == J_STR ? unbase64(resp->s, answer, sizeof answer) : -1;
    check(an > 8, "the refusal carries a response frame");
    if (an > 8) {
        uint8_t *out = NULL;
        int32_t n = 0;
        int32_t st = kw_decode_response_frame(answer, an, 19, 7, &out, &n);
        jval *r = st == KW_OK ? jparse((const char *)out, (size_t)n, NULL) : NULL;
        jval *topics = jget(jget(r, "body"), "topics");
        jval *t0 = topics && topics->t == J_ARR && topics->n == 1 ? topics->items[0] : NULL;
        check(jint(jget(jget(r, "header"), "correlationId"), -1) == 5 && is_str(jget(t0, "name"), "orders") &&
                  jint(jget(t0, "errorCode"), -1) == 44 && msg && msg->t == J_STR && is_str(jget(t0, "errorMessage"), msg->s),
              "the response frame answers the topic with POLICY_VIOLATION and the message");
        jfree(r);
        kw_free(out);
    }
    jfree(v);

    uint8_t *out = NULL;
    int32_t n = 0;
    const char *typo = "[{\"api\":\"CreateTopics\",\"field\":\"topics[].replicationFactr\",\"min\":3}]";
    int32_t st = kw_rules_check((const uint8_t *)typo, (int32_t)strlen(typo), bad, bad_len, 44, &out, &n);
    const uint8_t *ej = NULL;
    int32_t ejn = 0;
    jval *e = st == KW_ERR_JSON && kw_last_error_json(&ej, &ejn) == KW_OK ? jparse((const char *)ej, (size_t)ejn, NULL) : NULL;
    jval *path = jget(e, "path");
    check(st == KW_ERR_JSON && out == NULL && path && path->t == J_STR && strcmp(path->s, "$[0].field") == 0,
          "a misspelt field is KW_ERR_JSON naming $[0].field");
    jfree(e);
    st = kw_rules_check((const uint8_t *)rules, (int32_t)strlen(rules), bad, bad_len - 3, 44, &out, &n);
    check(st == KW_ERR_DECODE && out == NULL, "a frame shorter than its size prefix is KW_ERR_DECODE");
    st = kw_rules_check((const uint8_t *)rules, (int32_t)strlen(rules), bad, bad_len, 0, &out, &n);
    check(st == KW_ERR_ARG && out == NULL, "error code 0 is KW_ERR_ARG");
    st = kw_rules_check((const uint8_t *)rules, -1, bad, bad_len, 44, &out, &n);
    check(st == KW_ERR_ARG && out == NULL, "a negative length is KW_ERR_ARG");

    kw_free(good);
    kw_free(bad);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
