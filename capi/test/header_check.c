/*
 * header_check.c — compiled as C11 and as C++ with every warning an error: kwire.h must
 * be clean in both, and every function must have the signature written here.
 */
#include "kwire.h"
#include "kwire_constants.h"

/* The generated constants compile in both languages and carry Kafka's numbers. */
typedef char kw_check_api_fetch[(KW_API_FETCH == 1 && KW_API_PRODUCE == 0) ? 1 : -1];
typedef char kw_check_error_codes[(KW_ERROR_UNKNOWN_TOPIC_OR_PARTITION == 3 && KW_ERROR_UNKNOWN_SERVER_ERROR == -1 && KW_ERROR_INVALID_RECORD == 87) ? 1 : -1];

#ifdef __cplusplus
#define KW_NULL nullptr
#else
#define KW_NULL ((void *)0)
#endif

typedef struct {
    int32_t (*abi_version)(void);
    uint8_t *(*alloc)(int32_t);
    int32_t (*free_)(void *);
    int32_t (*last_error)(const uint8_t **, int32_t *);
    int32_t (*last_error_json)(const uint8_t **, int32_t *);
    int32_t (*api_catalogue)(uint8_t **, int32_t *);
    int32_t (*header_versions)(int32_t, int32_t, int32_t *, int32_t *);
    int32_t (*decode_message)(const char *, int32_t, int32_t, const uint8_t *, int32_t, uint8_t **, int32_t *);
    int32_t (*encode_message)(const char *, int32_t, int32_t, const uint8_t *, int32_t, uint8_t **, int32_t *);
    int32_t (*decode_request_frame)(const uint8_t *, int32_t, uint8_t **, int32_t *);
    int32_t (*encode_request_frame)(const uint8_t *, int32_t, uint8_t **, int32_t *);
    int32_t (*decode_response_frame)(const uint8_t *, int32_t, int32_t, int32_t, uint8_t **, int32_t *);
    int32_t (*encode_response_frame)(const uint8_t *, int32_t, int32_t, int32_t, uint8_t **, int32_t *);
    int32_t (*peek_request_header)(const uint8_t *, int32_t, kw_peek_header *);
    int32_t (*records_decode_json)(const uint8_t *, int32_t, int32_t, int32_t, uint8_t **, int32_t *);
    int32_t (*records_decode_table)(const uint8_t *, int32_t, int32_t, int32_t, uint8_t **, int32_t *);
    int32_t (*records_encode)(const uint8_t *, int32_t, int32_t, uint8_t **, int32_t *);
} kw_functions;

static const kw_functions fns = {
    kw_abi_version, kw_alloc, kw_free, kw_last_error, kw_last_error_json, kw_api_catalogue, kw_header_versions,
    kw_decode_message, kw_encode_message, kw_decode_request_frame, kw_encode_request_frame,
    kw_decode_response_frame, kw_encode_response_frame, kw_peek_request_header, kw_records_decode_json,
    kw_records_decode_table, kw_records_encode,
};

/* The peek struct is eight int32_t, 32 bytes, as in wasm linear memory. */
typedef char peek_is_32_bytes[sizeof(kw_peek_header) == 32 ? 1 : -1];

int kw_header_check(void);
int kw_header_check(void) {
    peek_is_32_bytes ok = {0};
    (void)ok;
    int s = KW_OK + KW_ERR_ARG + KW_ERR_DECODE + KW_ERR_ENCODE + KW_ERR_JSON + KW_ERR_UNKNOWN_API + KW_ERR_VERSION +
            KW_ERR_TOO_LARGE + KW_ERR_NOMEM + KW_ERR_UNSUPPORTED + KW_ERR_INTERNAL;
    s += KW_COMPRESSION_NONE + KW_COMPRESSION_GZIP + KW_COMPRESSION_SNAPPY + KW_COMPRESSION_LZ4 + KW_COMPRESSION_ZSTD;
    s += KW_RECORDS_SKIP_CRC + (KW_ABI_VERSION >> 16) + (KW_MAX_ALLOC > 0);
    return s + (fns.abi_version != KW_NULL);
}
