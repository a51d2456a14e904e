/*
 * misuse.c — every kind of boundary misuse against libkwire: NULL and negative
 * lengths, NULL out-params, unknown names and api keys, bad versions, double and stray
 * frees, garbage input. Each must give its status and an error text, and the next valid
 * call must work. Prints "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "check.h"

static const char *name = "ApiVersionsRequest";
/* ApiVersionsRequest v3: client software name "kw" and version "1", no tags. */
static const uint8_t body[] = {3, 'k', 'w', 2, '1', 0};
static const char *body_json = "{\"clientSoftwareName\":\"kw\",\"clientSoftwareVersion\":\"1\"}";

static int contains(const uint8_t *b, int32_t n, const char *needle) {
    size_t k = strlen(needle);
    for (int32_t i = 0; b && i + (int32_t)k <= n; i++)
        if (memcmp(b + i, needle, k) == 0) return 1;
    return 0;
}


/* valid makes a valid call and checks its output and that the error was cleared. */
static void valid(const char *after) {
    uint8_t *out = NULL;
    int32_t len = 0;
    char err[512], what[256];
    int32_t st = kw_decode_message(name, (int32_t)strlen(name), 3, body, (int32_t)sizeof body, &out, &len);
    snprintf(what, sizeof what, "valid call after %s", after);
    check(st == KW_OK && out != NULL && (size_t)len == strlen(body_json) && memcmp(out, body_json, (size_t)len) == 0 &&
              last_error(err, sizeof err)[0] == 0,
          what);
    check(kw_free(out) == KW_OK, "kw_free of a valid output");
}

static void expect(int32_t got, int32_t want, const char *what) {
    char err[512], msg[768];
    const uint8_t *js;
    int32_t jl;
    last_error(err, sizeof err);
    snprintf(msg, sizeof msg, "%s: status %d, want %d (%s)", what, got, want, err);
    check(got == want, msg);
    check(err[0] != 0, "an error text is set");
    char ws[32];
    snprintf(ws, sizeof ws, "{\"status\":%d,", want);
    check(kw_last_error_json(&js, &jl) == KW_OK && jl > (int32_t)strlen(ws) && memcmp(js, ws, strlen(ws)) == 0,
          "kw_last_error_json starts with the status");
    printf("%-44s -> %d %s\n", what, got, err);
    valid(what);
}

int main(void) {
    uint8_t *out = (uint8_t *)1;
    int32_t len = 7;
    int32_t nl = (int32_t)strlen(name);
    valid("nothing");

    expect(kw_decode_message(name, nl, 3, NULL, 10, &out, &len), KW_ERR_ARG, "NULL input with a length");
    check(out == NULL && len == 0, "out-params cleared on failure");
    expect(kw_decode_message(name, nl, 3, body, -1, &out, &len), KW_ERR_ARG, "negative input length");
    expect(kw_decode_message(NULL, 5, 3, body, 6, &out, &len), KW_ERR_ARG, "NULL name with a length");
    expect(kw_decode_message(name, nl, 3, body, 6, NULL, &len), KW_ERR_ARG, "NULL out-param");
    expect(kw_decode_message(name, nl, 3, body, 6, &out, NULL), KW_ERR_ARG, "NULL out_len-param");
    expect(kw_decode_message("NoSuchRequest", 13, 0, body, 6, &out, &len), KW_ERR_UNKNOWN_API, "unknown message name");
    expect(kw_decode_message(name, nl, 99, body, 6, &out, &len), KW_ERR_VERSION, "bad version");
    expect(kw_decode_message(name, nl, -1, body, 6, &out, &len), KW_ERR_VERSION, "negative version");
    expect(kw_decode_message(name, nl, 3, body, 3, &out, &len), KW_ERR_DECODE, "truncated body");
    expect(kw_decode_message(name, nl, 3, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff", 7, &out, &len), KW_ERR_DECODE, "garbage body");
    expect(kw_encode_message(name, nl, 3, (const uint8_t *)"{\"nope\":1}", 10, &out, &len), KW_ERR_JSON, "unknown JSON key");
    expect(kw_encode_message(name, nl, 3, (const uint8_t *)"{\"clientSoftwareName\":", 22, &out, &len), KW_ERR_JSON, "truncated JSON");
    expect(kw_decode_response_frame(body, 6, 12345, 0, &out, &len), KW_ERR_UNKNOWN_API, "bad api key");
    expect(kw_decode_response_frame(body, 6, 18, 999, &out, &len), KW_ERR_VERSION, "bad api version");
    expect(kw_header_versions(-7, 0, NULL, NULL), KW_ERR_UNKNOWN_API, "bad api key (header versions)");
    {
        const uint8_t big[] = {0x7f, 0xff, 0xff, 0xff, 0, 18, 0, 3, 0, 0, 0, 1};
        kw_peek_header ph;
        expect(kw_decode_request_frame(big, (int32_t)sizeof big, &out, &len), KW_ERR_TOO_LARGE, "frame above 100 MiB");
        expect(kw_peek_request_header(big, (int32_t)sizeof big, &ph), KW_ERR_TOO_LARGE, "peek of a frame above 100 MiB");
        expect(kw_peek_request_header(big, 5, &ph), KW_ERR_DECODE, "peek of 5 bytes");
        expect(kw_peek_request_header(big, (int32_t)sizeof big, NULL), KW_ERR_ARG, "peek into NULL");
    }
    {
        /* A whole magic 2 batch header with a zero CRC. */
        uint8_t batch[61] = {0};
        batch[11] = 49;
        batch[16] = 2;
        expect(kw_records_decode_json(batch, (int32_t)sizeof batch, 0, 0, &out, &len), KW_ERR_DECODE, "record batch with a bad CRC");
        /* A partial batch at the end is skipped, as Kafka's readers do. */
        check(kw_records_decode_json(batch, 30, 0, 0, &out, &len) == KW_OK && len > 0 && contains(out, len, "\"skippedBytes\":30"),
              "a partial batch is skipped");
        kw_free(out);
    }
    expect(kw_records_decode_table(body, 6, 0x40, 0, &out, &len), KW_ERR_ARG, "unknown record flags");
    expect(kw_records_encode((const uint8_t *)"{\"records\":[]}", 14, 7, &out, &len), KW_ERR_ARG, "unknown compression");
    expect(kw_records_encode((const uint8_t *)"{\"records\":[{\"key\":\"!!\"}]}", 25, 0, &out, &len), KW_ERR_JSON, "bad base64 in records");

    /* Memory misuse. */
    uint8_t *p = kw_alloc(16);
    check(p != NULL, "kw_alloc(16)");
    check(kw_free(p) == KW_OK, "first free");
    expect(kw_free(p), KW_ERR_ARG, "double free");
    uint8_t *foreign = (uint8_t *)malloc(8);
    expect(kw_free(foreign), KW_ERR_ARG, "free of a malloc'ed pointer");
    free(foreign);
    p = kw_alloc(16);
    expect(kw_free(p + 1), KW_ERR_ARG, "free of an interior pointer");
    check(kw_free(p) == KW_OK, "free of the real pointer");
    check(kw_free(NULL) == KW_OK, "kw_free(NULL)");
    check(kw_alloc(-1) == NULL, "kw_alloc(-1) is NULL");
    expect(KW_ERR_ARG, KW_ERR_ARG, "kw_alloc(-1)");
    check(kw_alloc(0x7fffffff) == NULL, "kw_alloc(2^31-1) is NULL");
    expect(KW_ERR_TOO_LARGE, KW_ERR_TOO_LARGE, "kw_alloc(2^31-1)");
    p = kw_alloc(0);
    check(p != NULL && kw_free(p) == KW_OK, "kw_alloc(0) gives a freeable pointer");

    /* Outputs of every function are freeable exactly once. */
    check(kw_api_catalogue(&out, &len) == KW_OK && len > 1000, "kw_api_catalogue");
    check(kw_free(out) == KW_OK, "free the catalogue");
    expect(kw_free(out), KW_ERR_ARG, "double free of an output");

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
